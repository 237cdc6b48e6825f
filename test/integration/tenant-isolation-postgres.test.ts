/**
 * Tenant isolation on PostgreSQL (issue 13): a team that may create `PostgresDatabase` objects in its
 * namespace gains nothing beyond its own database and role. Each attack runs against the stack's real
 * PostgreSQL and kube-apiserver, with homeostat's worker and bridge in process; each would succeed on
 * the code before issue 13 (`serverSecretRef`, `ALTER ROLE … PASSWORD` on every pass, adoption of any
 * existing role or database, any extension, created in `public`).
 *
 * Issue 31 adds the attacks of a tenant that denies the shared server to other teams: a session held
 * on `template1`, connections up to `max_connections`, connecting to another tenant's database, and a
 * renamed database or role left behind outside any object.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { Client as PgClient } from 'pg';
import pino from 'pino';
import { reconcileNowUpdate, workflowIdFor } from '../../core/definitions';
import { eventually } from '../support/eventually';
import { randomSuffix, useStack } from '../support/harness';
import { installBuiltinCrds, type InProcessHomeostat, startInProcessHomeostat } from '../support/homeostat';
import { createPostgresServer, systemNamespace } from '../support/postgres';

interface PgError {
  code?: string;
  message?: string;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const group = 'homeostat.dev';
const version = 'v1alpha1';
const plural = 'postgresdatabases';

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}
interface Obj {
  metadata: { name: string; generation?: number; uid?: string };
  spec: Record<string, unknown>;
  status?: { observedGeneration?: number; phase?: string; conditions?: Condition[] };
}

describe('PostgresDatabase tenant isolation on real PostgreSQL', () => {
  const t = useStack();
  const log = pino({ level: 'warn' });
  const taskQueue = `tenant-pg-${randomSuffix()}`;
  const server = `tenant-pg-${randomSuffix()}`;
  let homeostat: InProcessHomeostat | undefined;

  async function pg<T>(fn: (c: PgClient) => Promise<T>, url = t.endpoints.postgresUrl): Promise<T> {
    const c = new PgClient({ connectionString: url });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  }
  const rows = <R extends Record<string, unknown>>(sql: string, params: unknown[] = [], url?: string) =>
    pg(async (c) => (await c.query<R>(sql, params)).rows, url);

  async function get(name: string): Promise<Obj> {
    return (await t.custom.getNamespacedCustomObject({ group, version, namespace: t.namespace, plural, name })) as Obj;
  }

  async function waitFor(name: string, ok: (o: Obj) => boolean, timeoutMs = 90_000): Promise<Obj> {
    const deadline = Date.now() + timeoutMs;
    let last: Obj | undefined;
    while (Date.now() < deadline) {
      last = await get(name);
      if (ok(last)) return last;
      await sleep(250);
    }
    throw new Error(`${name} did not get there in ${timeoutMs} ms; last status ${JSON.stringify(last?.status)}`);
  }

  const ready = (o: Obj): boolean =>
    o.status?.phase === 'Ready' && o.status.observedGeneration === o.metadata.generation;
  const readyCondition = (o: Obj): Condition | undefined => o.status?.conditions?.find((c) => c.type === 'Ready');
  const refused = (o: Obj): boolean =>
    readyCondition(o)?.status === 'False' && readyCondition(o)?.reason === 'AdoptionRefused';

  async function create(name: string, spec: Record<string, unknown>): Promise<Obj> {
    return (await t.custom.createNamespacedCustomObject({
      group,
      version,
      namespace: t.namespace,
      plural,
      body: {
        apiVersion: `${group}/${version}`,
        kind: 'PostgresDatabase',
        metadata: { name },
        spec: { serverRef: { name: server }, ...spec },
      },
    })) as Obj;
  }

  async function remove(name: string): Promise<void> {
    await t.custom.deleteNamespacedCustomObject({ group, version, namespace: t.namespace, plural, name });
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      if (
        await get(name).then(
          () => false,
          () => true,
        )
      )
        return;
      await sleep(250);
    }
    throw new Error(`${name} was not deleted in 90 s`);
  }

  async function connectionUrl(name: string): Promise<string> {
    const secret = await t.core.readNamespacedSecret({ namespace: t.namespace, name: `${name}-connection` });
    return Buffer.from(secret.data?.url ?? '', 'base64').toString();
  }

  const rolpassword = async (role: string): Promise<string | null | undefined> =>
    (await rows<{ p: string | null }>('SELECT rolpassword AS p FROM pg_authid WHERE rolname = $1', [role]))[0]?.p;

  beforeAll(async () => {
    installBuiltinCrds(t);
    await createPostgresServer(t, server, { extensions: ['pgcrypto', 'citext'] });
    homeostat = await startInProcessHomeostat(t, { taskQueue, logger: log, bridge: { watchTimeoutSeconds: 30 } });
  });

  /** Tenant sessions the denial tests hold open: every one is closed, whatever a test did. */
  const held: PgClient[] = [];
  async function hold(url: string, database?: string): Promise<PgClient> {
    const target = new URL(url);
    if (database) target.pathname = `/${database}`;
    const c = new PgClient({ connectionString: target.toString(), connectionTimeoutMillis: 10_000 });
    c.on('error', () => {});
    try {
      await c.connect();
    } catch (err) {
      await c.end().catch(() => {});
      throw err;
    }
    held.push(c);
    return c;
  }
  async function release(): Promise<void> {
    await Promise.all(held.splice(0).map((c) => c.end().catch(() => {})));
  }

  afterAll(async () => {
    await release();
    await homeostat?.stop();
  });

  it('given ownerRole naming an existing superuser, or a role with CREATEROLE, REPLICATION or BYPASSRLS, each is AdoptionRefused and the role (password, attributes) is unchanged', async () => {
    const attributes = ['SUPERUSER', 'CREATEROLE', 'REPLICATION', 'BYPASSRLS'] as const;
    const roles = attributes.map((a) => `${a.toLowerCase()}_${randomSuffix()}`);
    await pg(async (c) => {
      for (const [i, role] of roles.entries()) {
        await c.query(`CREATE ROLE ${role} LOGIN ${attributes[i]} PASSWORD 'their-own-secret'`);
      }
    });
    const before = await Promise.all(roles.map(rolpassword));
    for (const role of roles) await create(role.replace(/_/g, '-'), { databaseName: role, ownerRole: role });
    for (const [i, role] of roles.entries()) {
      const obj = await waitFor(role.replace(/_/g, '-'), refused);
      expect(readyCondition(obj)?.message).toContain(`PostgreSQL role ${role}`);
      expect(readyCondition(obj)?.message).toContain(attributes[i]);
    }
    expect(await Promise.all(roles.map(rolpassword))).toEqual(before);
    const after = await rows<{ rolname: string; rolsuper: boolean; rolcreaterole: boolean; rolcanlogin: boolean }>(
      'SELECT rolname, rolsuper, rolcreaterole, rolcanlogin FROM pg_roles WHERE rolname = ANY($1) ORDER BY rolname',
      [roles],
    );
    expect(after.find((r) => r.rolname === roles[0])).toMatchObject({ rolsuper: true });
    expect(after.find((r) => r.rolname === roles[1])).toMatchObject({ rolcreaterole: true });
    // Nothing was created for them: the database step never ran.
    expect(await rows('SELECT 1 FROM pg_database WHERE datname = ANY($1)', [roles])).toHaveLength(0);
    // The connection Secret holds no usable URL: the step that writes it depends on the refused one.
    const secret = await t.core.readNamespacedSecret({
      namespace: t.namespace,
      name: `${roles[0]!.replace(/_/g, '-')}-connection`,
    });
    expect(secret.data?.url).toBeUndefined();
  });

  it('given ownerRole naming an existing unprivileged role homeostat did not create, it is AdoptionRefused and the role keeps its password', async () => {
    const role = `legacy_role_${randomSuffix()}`;
    await pg((c) => c.query(`CREATE ROLE ${role} LOGIN PASSWORD 'legacy-secret'`));
    const before = await rolpassword(role);
    await create('legacy-role', { databaseName: role, ownerRole: role });
    const obj = await waitFor('legacy-role', refused);
    expect(readyCondition(obj)?.message).toContain(
      `PostgreSQL role ${role}: it exists and was not created by homeostat for this object`,
    );
    expect(await rolpassword(role)).toBe(before);
    // Its own password still logs in.
    const legacyUrl = t.endpoints.postgresUrl.replace(/\/\/[^@]*@/, `//${role}:legacy-secret@`);
    expect(await rows<{ u: string }>('SELECT current_user AS u', [], legacyUrl)).toEqual([{ u: role }]);
  });

  it('given ownerRole naming another object’s role, it is AdoptionRefused and the first object’s password still works', async () => {
    const role = `first_${randomSuffix()}`;
    await create('first', { databaseName: role, ownerRole: role });
    await waitFor('first', ready);
    const firstUrl = await connectionUrl('first');
    const before = await rolpassword(role);
    await create('second', { databaseName: `second_${randomSuffix()}`, ownerRole: role });
    const obj = await waitFor('second', refused);
    expect(readyCondition(obj)?.message).toContain(`PostgreSQL role ${role}: it belongs to another homeostat object`);
    expect(await rolpassword(role)).toBe(before);
    expect(await rows<{ u: string }>('SELECT current_user AS u', [], firstUrl)).toEqual([{ u: role }]);
    // The role carries the first object's UID, written by homeostat.
    const first = await get('first');
    expect(
      await rows<{ c: string }>("SELECT shobj_description(oid, 'pg_authid') AS c FROM pg_roles WHERE rolname = $1", [
        role,
      ]),
    ).toEqual([{ c: `homeostat.dev/owner-uid=${first.metadata.uid}` }]);
  });

  it('given databaseName naming a pre-existing database, it is AdoptionRefused, the database keeps its owner, and deleting the object (Delete) leaves it', async () => {
    const database = `legacy_db_${randomSuffix()}`;
    const role = `newcomer_${randomSuffix()}`;
    await pg((c) => c.query(`CREATE DATABASE ${database}`));
    await create('legacy-db', { databaseName: database, ownerRole: role, deletionPolicy: 'Delete' });
    const obj = await waitFor('legacy-db', refused);
    expect(readyCondition(obj)?.message).toContain(
      `PostgreSQL database ${database}: it exists and was not created by homeostat for this object`,
    );
    const owner = () =>
      rows<{ o: string }>(
        'SELECT r.rolname AS o FROM pg_database d JOIN pg_roles r ON r.oid = d.datdba WHERE d.datname = $1',
        [database],
      );
    expect(await owner()).toEqual([{ o: 'postgres' }]);
    await remove('legacy-db');
    expect(await owner()).toEqual([{ o: 'postgres' }]);
    // The role homeostat did create for the object is dropped with it.
    expect(await rows('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).toHaveLength(0);
  });

  it('given another object’s database, it is AdoptionRefused; deleting that object (Delete) drops only its own role', async () => {
    const database = `owned_${randomSuffix()}`;
    await create('owner-db', { databaseName: database, ownerRole: database });
    await waitFor('owner-db', ready);
    const thief = `thief_${randomSuffix()}`;
    await create('thief-db', { databaseName: database, ownerRole: thief, deletionPolicy: 'Delete' });
    const obj = await waitFor('thief-db', refused);
    expect(readyCondition(obj)?.message).toContain(
      `PostgreSQL database ${database}: it belongs to another homeostat object`,
    );
    await remove('thief-db');
    expect(await rows('SELECT 1 FROM pg_database WHERE datname = $1', [database])).toHaveLength(1);
    expect(await rows('SELECT 1 FROM pg_roles WHERE rolname = $1', [database])).toHaveLength(1);
    expect(await rows('SELECT 1 FROM pg_roles WHERE rolname = $1', [thief])).toHaveLength(0);
    expect(await rows<{ u: string }>('SELECT current_user AS u', [], await connectionUrl('owner-db'))).toEqual([
      { u: database },
    ]);
  });

  it('given a namespace the server does not select, the object is AdoptionRefused naming the server, nothing is created, and it clears once the server selects the namespace', async () => {
    const closed = `closed-${randomSuffix()}`;
    await createPostgresServer(t, closed, { namespaceSelector: { matchLabels: { 'team.example/allowed': 'yes' } } });
    const name = `outsider_${randomSuffix()}`;
    await create('outsider', { serverRef: { name: closed }, databaseName: name, ownerRole: name });
    const obj = await waitFor('outsider', refused);
    expect(readyCondition(obj)?.message).toContain(
      `PostgresServer ${closed}: namespace ${t.namespace} is not selected by its namespaceSelector (ServerNotAllowed)`,
    );
    expect(await rows('SELECT 1 FROM pg_roles WHERE rolname = $1', [name])).toHaveLength(0);
    // The admin URL lives only in the system namespace: no Secret in the tenant's namespace holds it.
    const adminPassword = decodeURIComponent(new URL(t.endpoints.postgresUrl).password);
    const secrets = await t.core.listNamespacedSecret({ namespace: t.namespace });
    for (const s of secrets.items) {
      for (const value of Object.values(s.data ?? {})) {
        expect(Buffer.from(value, 'base64').toString()).not.toContain(adminPassword);
      }
    }
    await t.core.readNamespacedSecret({ namespace: systemNamespace, name: `${closed}-admin` });
    // The server's selector changes (a referenced object): the refusal clears without a spec change.
    await t.custom.patchClusterCustomObject(
      {
        group,
        version,
        plural: 'postgresservers',
        name: closed,
        body: {
          spec: {
            namespaceSelector: {
              matchLabels: { 'team.example/allowed': null, 'kubernetes.io/metadata.name': t.namespace },
            },
          },
        },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await waitFor('outsider', ready, 150_000);
    expect(await rows('SELECT 1 FROM pg_roles WHERE rolname = $1', [name])).toHaveLength(1);
  });

  it('given an extension not on the server’s allow-list, the object is Degraded naming it and no extension is created', async () => {
    const name = `hstore_${randomSuffix()}`;
    await create('wants-hstore', { databaseName: name, ownerRole: name, extensions: ['citext', 'hstore'] });
    const obj = await waitFor('wants-hstore', (o) => o.status?.phase === 'Degraded');
    expect(obj.status?.conditions?.find((c) => c.type === 'Degraded')?.message).toMatch(
      new RegExp(`extensions hstore are not allowed by PostgresServer ${server}`),
    );
    const extensions = await rows<{ extname: string }>(
      'SELECT extname FROM pg_extension',
      [],
      t.endpoints.postgresUrl.replace(/\/postgres$/, `/${name}`),
    );
    expect(extensions.map((e) => e.extname)).not.toContain('hstore');
    expect(extensions.map((e) => e.extname)).not.toContain('citext');
  });

  it('given the tenant’s own database, extensions go to a schema the tenant cannot create in; a schema it planted under that name is refused', async () => {
    const name = `ext_${randomSuffix()}`;
    await create('ext', { databaseName: name, ownerRole: name, extensions: ['citext'] });
    await waitFor('ext', ready);
    const url = await connectionUrl('ext');
    const placed = await rows<{ extname: string; schema: string; owner: string; tenantMayCreate: boolean }>(
      `SELECT e.extname, n.nspname AS schema, pg_get_userbyid(n.nspowner) AS owner,
              has_schema_privilege($1, n.oid, 'CREATE') AS "tenantMayCreate"
         FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'citext'`,
      [name],
      t.endpoints.postgresUrl.replace(/\/postgres$/, `/${name}`),
    );
    expect(placed).toEqual([{ extname: 'citext', schema: 'extensions', owner: 'postgres', tenantMayCreate: false }]);
    // The tenant uses the extension's type unqualified.
    expect(await rows<{ v: boolean }>("SELECT 'Pony'::citext = 'pony'::citext AS v", [], url)).toEqual([{ v: true }]);
    // Other tenants' roles may not connect to the database.
    expect(await rows<{ ok: boolean }>("SELECT has_database_privilege('public', $1, 'CONNECT') AS ok", [name])).toEqual(
      [{ ok: false }],
    );

    // A second database whose owner plants its own `extensions` schema (with a trap in it) before
    // asking for an extension: homeostat refuses and creates nothing in it.
    const trap = `trap_${randomSuffix()}`;
    await create('trap', { databaseName: trap, ownerRole: trap });
    await waitFor('trap', ready);
    await pg(
      async (c) => {
        await c.query('CREATE SCHEMA extensions');
        await c.query(
          'CREATE FUNCTION extensions.lower(text) RETURNS text LANGUAGE sql AS $$ SELECT pg_catalog.lower($1) $$',
        );
      },
      await connectionUrl('trap'),
    );
    const changed = (await t.custom.patchNamespacedCustomObject(
      { group, version, namespace: t.namespace, plural, name: 'trap', body: { spec: { extensions: ['citext'] } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    )) as Obj;
    const obj = await waitFor(
      'trap',
      (o) => refused(o) && o.status?.observedGeneration === changed.metadata.generation,
    );
    expect(readyCondition(obj)?.message).toContain(
      `schema extensions in database ${trap}: it is owned by ${trap}, not by the admin: extensions are only created in a schema the tenant cannot write to`,
    );
    expect(
      await rows('SELECT 1 FROM pg_extension WHERE extname = $1', ['citext'], await connectionUrl('trap')),
    ).toEqual([]);
  });

  it.each([
    ['a 64-byte database name', { databaseName: `d${'x'.repeat(63)}` }, /at most 63 bytes/],
    ['the reserved role postgres', { ownerRole: 'postgres' }, /reserved word or a system name/],
    ['a pg_ role (pg_monitor)', { ownerRole: 'pg_monitor' }, /must not start with 'pg_'/],
    ['the template1 database', { databaseName: 'template1' }, /reserved word or a system name/],
    ['a pg_ database', { databaseName: 'pg_global' }, /must not start with 'pg_'/],
  ])('given %s, the object is Invalid and nothing is touched', async (_what, spec, message) => {
    const name = `hostile-${randomSuffix()}`;
    const base = `hostile_${randomSuffix()}`;
    await create(name, { databaseName: base, ownerRole: base, ...spec });
    const obj = await waitFor(name, (o) => o.status?.phase === 'Invalid');
    expect(readyCondition(obj)?.message).toMatch(message);
    expect(await rows('SELECT 1 FROM pg_roles WHERE rolname = $1', [base])).toHaveLength(0);
  });

  it('given a name longer than the CRD allows, kube-apiserver rejects the object', async () => {
    const err = await create(`huge-${randomSuffix()}`, { databaseName: 'x'.repeat(100_000), ownerRole: 'huge' }).then(
      () => undefined,
      (e: unknown) => e as { code?: number; body?: string },
    );
    expect(err?.code).toBe(422);
    expect(err?.body).toMatch(/spec.databaseName/);
  });

  it('given a CREATEROLE (not superuser) admin and log_statement=all for it, over 10 passes the statement log holds no PASSWORD clause and never the password; a password changed by hand is put back as a verifier', async () => {
    // A dedicated admin whose sessions log every statement (set for that role only, by the superuser).
    const admin = `admin_${randomSuffix()}`;
    const adminPassword = randomSuffix(12);
    await pg(async (c) => {
      await c.query(`CREATE ROLE ${admin} LOGIN CREATEROLE CREATEDB PASSWORD '${adminPassword}'`);
      await c.query(`ALTER ROLE ${admin} SET log_statement = 'all'`);
    });
    const logged = `logged-${randomSuffix()}`;
    const adminUrl = t.endpoints.postgresUrl.replace(/\/\/[^@]*@/, `//${admin}:${adminPassword}@`);
    await createPostgresServer(t, logged, { url: adminUrl, extensions: ['pgcrypto'] });
    const logFile = join(t.stack.dir, 'logs', 'postgres.log');
    const start = statSync(logFile).size;
    const name = `quiet_${randomSuffix()}`;
    await t.custom.createNamespacedCustomObject({
      group,
      version,
      namespace: t.namespace,
      plural,
      body: {
        apiVersion: `${group}/${version}`,
        kind: 'PostgresDatabase',
        metadata: { name: 'quiet' },
        spec: {
          serverRef: { name: logged },
          databaseName: name,
          ownerRole: name,
          extensions: ['pgcrypto'],
          connectionLimit: 5,
        },
      },
    });
    const obj = await waitFor('quiet', ready);
    const url = await connectionUrl('quiet');
    const password = decodeURIComponent(new URL(url).password);
    expect(await rows<{ u: string }>('SELECT current_user AS u', [], url)).toEqual([{ u: name }]);
    // The admin did everything (it is no superuser): role, database, extension.
    expect(
      await rows<{ owner: string }>(
        "SELECT pg_get_userbyid(n.nspowner) AS owner FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE extname = 'pgcrypto'",
        [],
        t.endpoints.postgresUrl.replace(/\/postgres$/, `/${name}`),
      ),
    ).toEqual([{ owner: admin }]);
    const read = (from: number): string => readFileSync(logFile).subarray(from).toString('utf8');
    const creation = read(start);
    expect(creation).toMatch(/statement: CREATE ROLE .* PASSWORD 'SCRAM-SHA-256\$4096:/);
    expect(creation).not.toContain(password);

    // 10 passes, each one a full drift check of every step.
    const afterReady = statSync(logFile).size;
    const ref = { group, version, kind: 'PostgresDatabase', namespace: t.namespace, name: 'quiet' };
    const handle = t.temporal.workflow.getHandle(workflowIdFor(ref));
    for (let i = 0; i < 10; i++) {
      const outcome = await handle.executeUpdate(reconcileNowUpdate, { args: [{ ref, uid: obj.metadata.uid! }] });
      expect(outcome.result).toBe('ready');
    }
    const drift = read(afterReady);
    // The log does record the admin's statements (simple and extended protocol) …
    expect(drift).toMatch(/(statement|execute <unnamed>): SELECT r\.rolsuper/);
    expect(drift).toMatch(/(statement|execute <unnamed>): SELECT o\.rolname AS owner/);
    // … and none of them sets a password (server messages are lowercase: only a clause is uppercase).
    expect(drift).not.toMatch(/PASSWORD/);
    expect(drift).not.toContain(password);

    // Changed by hand: the next pass's login fails, and the password goes back as a verifier.
    await pg((c) => c.query(`ALTER ROLE ${name} PASSWORD 'changed-by-hand'`));
    const beforeReset = statSync(logFile).size;
    await handle.executeUpdate(reconcileNowUpdate, { args: [{ ref, uid: obj.metadata.uid! }] });
    expect(await rows<{ u: string }>('SELECT current_user AS u', [], url)).toEqual([{ u: name }]);
    const reset = read(beforeReset);
    expect(reset).toMatch(/statement: ALTER ROLE .* WITH PASSWORD 'SCRAM-SHA-256\$4096:/);
    expect(reset).not.toContain(password);
    expect((await rolpassword(name))?.startsWith('SCRAM-SHA-256$4096:')).toBe(true);

    // Deletion with a CREATEROLE admin drops what it created.
    await t.custom.patchNamespacedCustomObject(
      { group, version, namespace: t.namespace, plural, name: 'quiet', body: { spec: { deletionPolicy: 'Delete' } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await waitFor('quiet', (o) => ready(o) && o.spec.deletionPolicy === 'Delete');
    await remove('quiet');
    expect(await rows('SELECT 1 FROM pg_database WHERE datname = $1', [name])).toHaveLength(0);
    expect(await rows('SELECT 1 FROM pg_roles WHERE rolname = $1', [name])).toHaveLength(0);
  });

  it('given ownerRole naming the server’s own admin role, it is AdoptionRefused and the admin keeps its password', async () => {
    const admin = `admin_${randomSuffix()}`;
    await pg((c) => c.query(`CREATE ROLE ${admin} LOGIN CREATEROLE CREATEDB PASSWORD 'admin-secret'`));
    const own = `own-${randomSuffix()}`;
    await createPostgresServer(t, own, {
      url: t.endpoints.postgresUrl.replace(/\/\/[^@]*@/, `//${admin}:admin-secret@`),
    });
    const before = await rolpassword(admin);
    await t.custom.createNamespacedCustomObject({
      group,
      version,
      namespace: t.namespace,
      plural,
      body: {
        apiVersion: `${group}/${version}`,
        kind: 'PostgresDatabase',
        metadata: { name: 'admin-grab' },
        spec: { serverRef: { name: own }, databaseName: `grab_${randomSuffix()}`, ownerRole: admin },
      },
    });
    const obj = await waitFor('admin-grab', refused);
    expect(readyCondition(obj)?.message).toContain(`PostgreSQL role ${admin}: it has CREATEROLE`);
    expect(await rolpassword(admin)).toBe(before);
  });

  describe('a shared server that one tenant cannot deny (issue 31)', () => {
    afterEach(release);

    const stepMessage = (o: Obj, step: string): string | undefined =>
      o.status?.conditions?.find((c) => c.type === `${step}Ready`)?.message;
    const limits = async (name: string) =>
      (
        await rows<{ role: number; database: number }>(
          `SELECT (SELECT rolconnlimit FROM pg_roles WHERE rolname = $1) AS role,
                  (SELECT datconnlimit FROM pg_database WHERE datname = $1) AS database`,
          [name],
        )
      )[0];
    async function passNow(name: string) {
      const obj = await get(name);
      const ref = { group, version, kind: 'PostgresDatabase', namespace: t.namespace, name };
      const handle = t.temporal.workflow.getHandle(workflowIdFor(ref));
      return handle.executeUpdate(reconcileNowUpdate, { args: [{ ref, uid: obj.metadata.uid! }] });
    }

    it('given a tenant session held open on template1, another team’s new database still becomes Ready (cloned from template0)', async () => {
      const holder = `tplholder_${randomSuffix()}`;
      await create('tpl-holder', { databaseName: holder, ownerRole: holder });
      await waitFor('tpl-holder', ready);
      // The tenant's own role, its own credentials: template1 lets every role connect.
      const session = await hold(await connectionUrl('tpl-holder'), 'template1');
      expect((await session.query<{ d: string }>('SELECT current_database() AS d')).rows).toEqual([{ d: 'template1' }]);

      const victim = `tplvictim_${randomSuffix()}`;
      await create('tpl-victim', { databaseName: victim, ownerRole: victim });
      await waitFor('tpl-victim', ready);
      // The session was there the whole time, and the new database works for its owner.
      expect((await session.query<{ n: number }>('SELECT 1 AS n')).rows).toEqual([{ n: 1 }]);
      expect(
        await rows<{ d: string }>('SELECT current_database() AS d', [], await connectionUrl('tpl-victim')),
      ).toEqual([{ d: victim }]);
    });

    it('given a tenant opening connections up to the server’s max_connections, it is refused at its role’s limit (even after lifting its database’s own) and another team’s role still connects', async () => {
      const greedy = `greedy_${randomSuffix()}`;
      const other = `patient_${randomSuffix()}`;
      await create('greedy', { databaseName: greedy, ownerRole: greedy });
      await create('patient', { databaseName: other, ownerRole: other });
      const obj = await waitFor('greedy', ready);
      await waitFor('patient', ready);
      const max = Number((await rows<{ m: string }>("SELECT current_setting('max_connections') AS m"))[0]!.m);
      const reserved = Number(
        (await rows<{ r: string }>("SELECT current_setting('superuser_reserved_connections') AS r"))[0]!.r,
      );
      const url = await connectionUrl('greedy');
      // The owner lifts its database's limit (an owner may); the role's limit is not the tenant's to change.
      const first = await hold(url);
      await first.query(`ALTER DATABASE ${greedy} CONNECTION LIMIT -1`);
      await expect(first.query(`ALTER ROLE ${greedy} CONNECTION LIMIT -1`)).rejects.toMatchObject({ code: '42501' });
      let refusal: PgError | undefined;
      for (let i = 1; i < max && !refusal; i++) {
        // Half on its own database, half on postgres (open to PUBLIC): the role's limit counts both.
        await hold(url, i % 2 ? 'postgres' : undefined).catch((err: PgError) => (refusal = err));
      }
      // Another team's role connects, to its database and to postgres.
      const otherUrl = await connectionUrl('patient');
      expect(await rows<{ u: string }>('SELECT current_user AS u', [], otherUrl)).toEqual([{ u: other }]);
      const otherOnPostgres = new URL(otherUrl);
      otherOnPostgres.pathname = '/postgres';
      expect(await rows<{ u: string }>('SELECT current_user AS u', [], otherOnPostgres.toString())).toEqual([
        { u: other },
      ]);
      // The tenant was refused by its role's limit, the server's default: a tenth of the connections
      // open to ordinary roles (its spec sets none).
      const expected = Math.floor((max - reserved) / 10);
      expect(refusal).toMatchObject({ code: '53300', message: `too many connections for role "${greedy}"` });
      expect(held.length).toBeLessThanOrEqual(expected);
      expect(obj.status).toMatchObject({ connectionLimit: expected });
      expect(stepMessage(obj, 'Database')).toContain(
        `connection limit ${expected} (PostgresServer ${server}'s default)`,
      );
      await release();
      // The next pass puts the database's limit back.
      await passNow('greedy');
      expect(await limits(greedy)).toEqual({ role: expected, database: expected });
    });

    it('given connectionLimit -1 or above the server’s ceiling, the object gets the server’s default or its ceiling, shown in status; a lowered ceiling lowers them', async () => {
      const capped = `capped-${randomSuffix()}`;
      await createPostgresServer(t, capped);
      const setLimits = (connectionLimits: Record<string, number>) =>
        t.custom.patchClusterCustomObject(
          { group, version, plural: 'postgresservers', name: capped, body: { spec: { connectionLimits } } },
          k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
        );
      // A default above the ceiling is refused by the API server (a CEL rule of the CRD).
      await expect(setLimits({ default: 6, ceiling: 5 })).rejects.toMatchObject({ code: 422 });
      await setLimits({ default: 3, ceiling: 5 });
      const [unlimited, huge, small] = ['unlimited', 'huge', 'small'].map((n) => `${n}_${randomSuffix()}`) as [
        string,
        string,
        string,
      ];
      const spec = (name: string, connectionLimit: number) => ({
        serverRef: { name: capped },
        databaseName: name,
        ownerRole: name,
        connectionLimit,
      });
      await create('cap-unlimited', spec(unlimited, -1));
      await create('cap-huge', spec(huge, 10000));
      await create('cap-small', spec(small, 2));
      const got = await Promise.all(['cap-unlimited', 'cap-huge', 'cap-small'].map((n) => waitFor(n, ready)));
      expect(got.map((o) => o.status)).toMatchObject([
        { connectionLimit: 3 },
        { connectionLimit: 5 },
        { connectionLimit: 2 },
      ]);
      expect(stepMessage(got[0]!, 'Database')).toContain(`connection limit 3 (PostgresServer ${capped}'s default)`);
      expect(stepMessage(got[1]!, 'Database')).toContain(
        `connection limit 5 (asked 10000; PostgresServer ${capped}'s ceiling)`,
      );
      expect(await limits(unlimited)).toEqual({ role: 3, database: 3 });
      expect(await limits(huge)).toEqual({ role: 5, database: 5 });
      expect(await limits(small)).toEqual({ role: 2, database: 2 });
      const serverStatus = (await t.custom.getClusterCustomObject({
        group,
        version,
        plural: 'postgresservers',
        name: capped,
      })) as {
        status?: Record<string, unknown>;
      };
      expect(serverStatus.status).toMatchObject({ defaultConnectionLimit: 3, connectionLimitCeiling: 5 });

      // The ceiling comes down: the server is referenced, so its objects converge without a spec change.
      await setLimits({ default: 3, ceiling: 4 });
      await eventually(
        'the lowered ceiling on the role and the database',
        () => limits(huge),
        (l) => l?.role === 4 && l.database === 4,
        150_000,
      );
      await waitFor('cap-huge', (o) => ready(o) && (o.status as { connectionLimit?: number }).connectionLimit === 4);
      expect(await limits(unlimited)).toEqual({ role: 3, database: 3 });
    });

    it('given another tenant’s database, a tenant’s role cannot connect to it; CONNECT granted to PUBLIC by hand (as on a database of an older homeostat) is revoked at the next pass', async () => {
      const mine = `mine_${randomSuffix()}`;
      const theirs = `theirs_${randomSuffix()}`;
      await create('conn-mine', { databaseName: mine, ownerRole: mine });
      await create('conn-theirs', { databaseName: theirs, ownerRole: theirs });
      await waitFor('conn-mine', ready);
      await waitFor('conn-theirs', ready);
      const myUrl = await connectionUrl('conn-mine');
      const intrude = () => hold(myUrl, theirs);
      await expect(intrude()).rejects.toMatchObject({ code: '42501' });
      expect(
        await rows<{ ok: boolean }>("SELECT has_database_privilege($1, $2, 'CONNECT') AS ok", [theirs, theirs]),
      ).toEqual([{ ok: true }]);

      await pg((c) => c.query(`GRANT CONNECT ON DATABASE ${theirs} TO PUBLIC`));
      const intruder = await intrude(); // the attack, while the database is open to PUBLIC
      await intruder.end();
      held.splice(held.indexOf(intruder), 1);
      // The next pass (which may be one already running: either closes it) revokes it again.
      await passNow('conn-theirs');
      await expect(intrude()).rejects.toMatchObject({ code: '42501' });
      expect(await rows<{ u: string }>('SELECT current_user AS u', [], await connectionUrl('conn-theirs'))).toEqual([
        { u: theirs },
      ]);
    });

    it('given a changed databaseName or ownerRole, the change is refused and deleting the object (Delete) leaves nothing behind in pg_database or pg_roles', async () => {
      const base = `renamed_${randomSuffix()}`;
      const [newDb, newRole] = [`${base}_db2`, `${base}_role2`];
      await create('renamed', { databaseName: base, ownerRole: base, deletionPolicy: 'Delete' });
      await waitFor('renamed', ready);
      const patch = async (spec: Record<string, unknown>) =>
        (await t.custom.patchNamespacedCustomObject(
          { group, version, namespace: t.namespace, plural, name: 'renamed', body: { spec } },
          k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
        )) as Obj;
      const refusedAt = (generation?: number) => (o: Obj) =>
        o.status?.phase === 'Degraded' && o.status.observedGeneration === generation;

      let changed = await patch({ databaseName: newDb });
      let obj = await waitFor('renamed', refusedAt(changed.metadata.generation));
      expect(readyCondition(obj)?.message).toContain(
        `databaseName changed to ${newDb}, but this object already has database ${base}`,
      );
      changed = await patch({ databaseName: base, ownerRole: newRole });
      obj = await waitFor('renamed', refusedAt(changed.metadata.generation));
      expect(readyCondition(obj)?.message).toContain(
        `ownerRole changed to ${newRole}, but this object already has role ${base}`,
      );
      const names = [base, newDb, newRole];
      expect(await rows('SELECT datname FROM pg_database WHERE datname = ANY($1)', [names])).toEqual([
        { datname: base },
      ]);
      expect(await rows('SELECT rolname FROM pg_roles WHERE rolname = ANY($1)', [names])).toEqual([{ rolname: base }]);

      // Deleted while its spec names a role it never had: what it did create goes.
      await remove('renamed');
      expect(await rows('SELECT datname FROM pg_database WHERE datname = ANY($1)', [names])).toEqual([]);
      expect(await rows('SELECT rolname FROM pg_roles WHERE rolname = ANY($1)', [names])).toEqual([]);
    });
  });
});
