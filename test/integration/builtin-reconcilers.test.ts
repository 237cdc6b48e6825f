/**
 * The built-in reconcilers on real systems: PostgresDatabase against the stack's PostgreSQL and App
 * against kube-apiserver, with the worker and the informer bridge running (in process), reconciling
 * the Sparkle Pony Ranch examples in a fresh namespace.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { Client as PgClient } from 'pg';
import pino from 'pino';
import { Bridge } from '../../informer-bridge';
import { builtinOperator } from '../../builtin';
import { watchedResourcesFor } from '../../informer-bridge/operator-resources';
import { stateQuery, workflowIdFor } from '../../core/definitions';
import { randomSuffix, useStack } from '../support/harness';
import { activityTypes, recordHistory } from '../support/histories';
import { installBuiltinCrds, type InProcessHomeostat, startInProcessHomeostat } from '../support/homeostat';
import { createPostgresServer } from '../support/postgres';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const group = 'homeostat.dev';
const version = 'v1alpha1';

interface Status {
  observedGeneration?: number;
  phase?: string;
  conditions?: { type: string; status: string; reason: string; message: string }[];
}
interface Obj {
  metadata: { name: string; generation?: number; uid?: string; finalizers?: string[] };
  spec: Record<string, unknown>;
  status?: Status;
}

describe('built-in reconcilers on real PostgreSQL and kube-apiserver', () => {
  const t = useStack();
  const log = pino({ level: 'warn' });
  const taskQueue = `builtin-${randomSuffix()}`;
  const server = `ranch-${randomSuffix()}`;
  let homeostat: InProcessHomeostat | undefined;
  let apps: k8s.AppsV1Api;

  const yaml = (file: string): Record<string, unknown> =>
    k8s.loadYaml<Record<string, unknown>>(readFileSync(join(__dirname, '../../examples', file), 'utf8'));

  async function get(plural: string, name: string): Promise<Obj> {
    return (await t.custom.getNamespacedCustomObject({ group, version, namespace: t.namespace, plural, name })) as Obj;
  }

  async function waitFor(plural: string, name: string, ok: (o: Obj) => boolean, timeoutMs = 90_000): Promise<Obj> {
    const deadline = Date.now() + timeoutMs;
    let last: Obj | undefined;
    while (Date.now() < deadline) {
      last = await get(plural, name);
      if (ok(last)) return last;
      await sleep(250);
    }
    throw new Error(
      `${plural}/${name} did not get there in ${timeoutMs} ms; last status ${JSON.stringify(last?.status)}`,
    );
  }

  const readyAt = (generation?: number) => (o: Obj) =>
    o.status?.phase === 'Ready' && o.status.observedGeneration === (generation ?? o.metadata.generation);

  async function create(plural: string, body: Record<string, unknown>): Promise<Obj> {
    return (await t.custom.createNamespacedCustomObject({
      group,
      version,
      namespace: t.namespace,
      plural,
      body,
    })) as Obj;
  }

  async function patchSpec(plural: string, name: string, spec: Record<string, unknown>): Promise<Obj> {
    return (await t.custom.patchNamespacedCustomObject(
      { group, version, namespace: t.namespace, plural, name, body: { spec } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    )) as Obj;
  }

  async function pg<T>(fn: (c: PgClient) => Promise<T>, url = t.endpoints.postgresUrl): Promise<T> {
    const c = new PgClient({ connectionString: url });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  }

  function dbExample(name: string, spec: Record<string, unknown>): Record<string, unknown> {
    const example = yaml('20-pony-spawner-db.yaml') as { spec: Record<string, unknown> };
    return {
      ...example,
      metadata: { name, namespace: t.namespace },
      spec: { ...example.spec, serverRef: { name: server }, ...spec },
    };
  }

  beforeAll(async () => {
    installBuiltinCrds(t);
    apps = t.kc.makeApiClient(k8s.AppsV1Api);
    // The ranch's PostgresServer, pointing at the stack's real server.
    await createPostgresServer(t, server);
    homeostat = await startInProcessHomeostat(t, { taskQueue, logger: log, bridge: { watchTimeoutSeconds: 30 } });
  });

  afterAll(async () => {
    await homeostat?.stop();
  });

  it('given the Sparkle Pony Ranch examples, both reach Ready; the database and role exist and the Secret URL connects', async () => {
    await create('postgresdatabases', dbExample('pony-spawner-db', {}));
    await create('apps', {
      ...yaml('30-pony-spawner-app.yaml'),
      metadata: { name: 'pony-spawner', namespace: t.namespace },
    });
    const db = await waitFor('postgresdatabases', 'pony-spawner-db', readyAt());
    expect(db.metadata.finalizers).toContain('homeostat.dev/finalizer');
    expect(db.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    const app = await waitFor('apps', 'pony-spawner', readyAt());
    expect(app.status?.observedGeneration).toBe(1);
    // An App has no cleanup steps (its children go with it by garbage collection): no finalizer.
    expect(app.metadata.finalizers ?? []).not.toContain('homeostat.dev/finalizer');
    // Status reports each child, one condition per step.
    const child = (type: string) => app.status?.conditions?.find((c) => c.type === type);
    expect(child('ConfigReady')).toMatchObject({ status: 'True', message: 'ConfigMap pony-spawner-config: 1 keys' });
    expect(child('DeploymentReady')).toMatchObject({
      status: 'True',
      message: expect.stringMatching(/^Deployment pony-spawner: 3 replicas of registry.spr.com\/pony-spawner:v2.1.0/),
    });
    expect(child('ServiceReady')).toMatchObject({ status: 'True', message: 'Service pony-spawner: port 8080' });
    expect(db.status?.conditions?.find((c) => c.type === 'ConnectionSecretReady')?.message).toBe(
      'Secret pony-spawner-db-connection written',
    );

    const found = await pg(async (c) => {
      const role = await c.query('SELECT rolname FROM pg_roles WHERE rolname = $1', ['pony_spawner']);
      const database = await c.query<{ owner: string; limit: number }>(
        'SELECT r.rolname AS owner, d.datconnlimit AS limit FROM pg_database d JOIN pg_roles r ON r.oid = d.datdba WHERE datname = $1',
        ['pony_spawner'],
      );
      return { roles: role.rowCount, database: database.rows[0] };
    });
    expect(found).toEqual({ roles: 1, database: { owner: 'pony_spawner', limit: 20 } });

    const secret = await t.core.readNamespacedSecret({ namespace: t.namespace, name: 'pony-spawner-db-connection' });
    expect(secret.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'PostgresDatabase',
      name: 'pony-spawner-db',
      controller: true,
    });
    const url = Buffer.from(secret.data?.url ?? '', 'base64').toString();
    const extensions = await pg(
      async (c) =>
        (await c.query<{ extname: string }>('SELECT extname FROM pg_extension ORDER BY 1')).rows.map((r) => r.extname),
      url,
    );
    expect(extensions).toEqual(expect.arrayContaining(['citext', 'pgcrypto']));
    const who = await pg(
      async (c) =>
        (await c.query<{ u: string; d: string }>('SELECT current_user AS u, current_database() AS d')).rows[0],
      url,
    );
    expect(who).toEqual({ u: 'pony_spawner', d: 'pony_spawner' });

    const deployment = await apps.readNamespacedDeployment({ namespace: t.namespace, name: 'pony-spawner' });
    expect(deployment.spec?.replicas).toBe(3);
    expect(deployment.spec?.template.spec?.containers[0]?.image).toBe('registry.spr.com/pony-spawner:v2.1.0');
    await t.core.readNamespacedService({ namespace: t.namespace, name: 'pony-spawner' });
    const cm = await t.core.readNamespacedConfigMap({ namespace: t.namespace, name: 'pony-spawner-config' });
    expect(cm.data?.['ponies.yaml']).toContain('sparkle: high');
  });

  it('given an App carrying the finalizer an older homeostat added to every object, it is removed, and deleting the App is not held', async () => {
    const name = 'legacy-pony';
    await create('apps', {
      ...yaml('30-pony-spawner-app.yaml'),
      metadata: { name, namespace: t.namespace, finalizers: ['homeostat.dev/finalizer', 'example.com/keep'] },
    });
    const app = await waitFor(
      'apps',
      name,
      (o) => readyAt()(o) && !o.metadata.finalizers?.includes('homeostat.dev/finalizer'),
    );
    // Only homeostat's own finalizer goes; another controller's stays.
    expect(app.metadata.finalizers).toEqual(['example.com/keep']);
    await t.custom.patchNamespacedCustomObject(
      { group, version, namespace: t.namespace, plural: 'apps', name, body: { metadata: { finalizers: null } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await t.custom.deleteNamespacedCustomObject({ group, version, namespace: t.namespace, plural: 'apps', name });
    await expect(
      t.custom.getNamespacedCustomObject({ group, version, namespace: t.namespace, plural: 'apps', name }),
    ).rejects.toMatchObject({ code: 404 });
  });

  it('given an object that breaks the generated CRD schema, kube-apiserver rejects it with the field at fault', async () => {
    const err = await create('apps', {
      apiVersion: `${group}/${version}`,
      kind: 'App',
      metadata: { name: 'broken' },
      spec: { image: 'registry.spr.com/pony-spawner:v2.1.0', replicas: -3, port: 70000 },
    }).then(
      () => undefined,
      (e: unknown) => e as { code?: number; body?: string },
    );
    expect(err?.code).toBe(422);
    expect(err?.body).toMatch(/spec.replicas.*greater than or equal to 0/);
    expect(err?.body).toMatch(/spec.port.*less than or equal to 65535/);
  });

  it('given a connection limit changed in the spec, and then by hand in PostgreSQL, both end with the spec value', async () => {
    // Drift checks every 30 s for this database (its own interval; the plan's is 30 minutes), from the
    // pass the spec change starts.
    await t.custom.patchNamespacedCustomObject(
      {
        group,
        version,
        namespace: t.namespace,
        plural: 'postgresdatabases',
        name: 'pony-spawner-db',
        body: { metadata: { annotations: { 'homeostat.dev/drift-check-interval': '30s' } } },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    const changed = await patchSpec('postgresdatabases', 'pony-spawner-db', { connectionLimit: 7 });
    await waitFor('postgresdatabases', 'pony-spawner-db', readyAt(changed.metadata.generation));
    const limit = (): Promise<number | undefined> =>
      pg(
        async (c) =>
          (
            await c.query<{ l: number }>('SELECT datconnlimit AS l FROM pg_database WHERE datname = $1', [
              'pony_spawner',
            ])
          ).rows[0]?.l,
      );
    expect(await limit()).toBe(7);
    // By hand: the drift check (every 30 s here) puts it back without any Kubernetes event.
    await pg((c) => c.query('ALTER DATABASE pony_spawner CONNECTION LIMIT 99'));
    expect(await limit()).toBe(99);
    const deadline = Date.now() + 150_000;
    while ((await limit()) !== 7 && Date.now() < deadline) await sleep(1000);
    expect(await limit()).toBe(7);
  });

  it('given App children deleted or edited by hand, they are put back; an image change rolls the Deployment', async () => {
    await apps.deleteNamespacedDeployment({ namespace: t.namespace, name: 'pony-spawner' });
    let deployment: k8s.V1Deployment | undefined;
    for (let i = 0; i < 120 && !deployment; i++) {
      deployment = await apps
        .readNamespacedDeployment({ namespace: t.namespace, name: 'pony-spawner' })
        .catch(() => undefined);
      if (!deployment) await sleep(250);
    }
    expect(deployment?.spec?.replicas).toBe(3);

    await apps.patchNamespacedDeploymentScale(
      { namespace: t.namespace, name: 'pony-spawner', body: { spec: { replicas: 1 } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    let replicas = 1;
    for (let i = 0; i < 120 && replicas !== 3; i++) {
      await sleep(250);
      replicas =
        (await apps.readNamespacedDeployment({ namespace: t.namespace, name: 'pony-spawner' })).spec?.replicas ?? 0;
    }
    expect(replicas).toBe(3);

    const changed = await patchSpec('apps', 'pony-spawner', { image: 'registry.spr.com/pony-spawner:v2.2.0' });
    await waitFor('apps', 'pony-spawner', readyAt(changed.metadata.generation));
    const rolled = await apps.readNamespacedDeployment({ namespace: t.namespace, name: 'pony-spawner' });
    expect(rolled.spec?.template.spec?.containers[0]?.image).toBe('registry.spr.com/pony-spawner:v2.2.0');
    // Histories of the built-in plans for the replay test (plans travel in the observations).
    for (const [kind, name, file] of [
      ['App', 'pony-spawner', 'builtin-app-self-healing'],
      ['PostgresDatabase', 'pony-spawner-db', 'builtin-postgres-database-drift'],
    ] as const) {
      const handle = t.temporal.workflow.getHandle(workflowIdFor({ group, kind, namespace: t.namespace, name }));
      await recordHistory(file, () => handle.fetchHistory());
    }
  });

  it('given an extension name PostgreSQL cannot have, the object is Invalid with a clear message and no step runs', async () => {
    // Passes the CRD schema (pattern ^[a-zA-Z0-9_-]+$) but not the zod refinement (lowercase).
    await create(
      'postgresdatabases',
      dbExample('bad-ext', { databaseName: 'bad_ext', ownerRole: 'bad_ext', extensions: ['PgCrypto'] }),
    );
    const obj = await waitFor('postgresdatabases', 'bad-ext', (o) => o.status?.phase === 'Invalid');
    const ready = obj.status?.conditions?.find((c) => c.type === 'Ready');
    expect(ready).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
    expect(ready?.message).toMatch(/extension names are lowercase/);
    await sleep(3000);
    const handle = t.temporal.workflow.getHandle(
      workflowIdFor({ group, kind: 'PostgresDatabase', namespace: t.namespace, name: 'bad-ext' }),
    );
    const state = await handle.query(stateQuery);
    expect(state.lastOutcome).toMatchObject({ result: 'invalid', phase: 'Invalid', steps: {} });
    // No step activity (`postgresdatabases.homeostat.dev/<step>`) ever ran, regular or local. The
    // history does hold the observe activity, so an unreadable or empty history cannot pass this check.
    const scheduled = activityTypes(await handle.fetchHistory());
    expect(scheduled).toContain('observeObject');
    expect(scheduled.filter((name) => name.startsWith('postgresdatabases.'))).toEqual([]);
    const roles = await pg(
      async (c) => (await c.query('SELECT 1 FROM pg_roles WHERE rolname = $1', ['bad_ext'])).rowCount,
    );
    expect(roles).toBe(0);
  });

  it('given PostgreSQL stopped for 30 s during a reconcile, the object is Degraded with a reason, then Ready with no manual step', async () => {
    await t.stack.stopComponent('postgres');
    try {
      const changed = await patchSpec('postgresdatabases', 'pony-spawner-db', { connectionLimit: 11 });
      const degraded = await waitFor(
        'postgresdatabases',
        'pony-spawner-db',
        (o) => o.status?.phase === 'Degraded',
        60_000,
      );
      const cond = degraded.status?.conditions?.find((c) => c.type === 'Degraded');
      expect(cond?.status).toBe('True');
      expect(cond?.message).toMatch(/PostgreSQL unreachable/);
      await sleep(30_000);
      await t.stack.startComponent('postgres');
      await waitFor('postgresdatabases', 'pony-spawner-db', readyAt(changed.metadata.generation), 120_000);
    } finally {
      await t.stack.startComponent('postgres');
    }
  });

  it('given deletionPolicy Delete, deletion drops database and role and removes the finalizer; Retain keeps them', async () => {
    await create(
      'postgresdatabases',
      dbExample('doomed', { databaseName: 'doomed', ownerRole: 'doomed', deletionPolicy: 'Delete', extensions: [] }),
    );
    await create(
      'postgresdatabases',
      dbExample('kept', { databaseName: 'kept', ownerRole: 'kept', deletionPolicy: 'Retain', extensions: [] }),
    );
    await waitFor('postgresdatabases', 'doomed', readyAt());
    await waitFor('postgresdatabases', 'kept', readyAt());
    for (const name of ['doomed', 'kept']) {
      await t.custom.deleteNamespacedCustomObject({
        group,
        version,
        namespace: t.namespace,
        plural: 'postgresdatabases',
        name,
      });
    }
    for (const name of ['doomed', 'kept']) {
      let gone = false;
      for (let i = 0; i < 240 && !gone; i++) {
        gone = await get('postgresdatabases', name).then(
          () => false,
          () => true,
        );
        if (!gone) await sleep(250);
      }
      expect(gone).toBe(true);
    }
    const exists = (sql: string, name: string): Promise<number | null> =>
      pg(async (c) => (await c.query(sql, [name])).rowCount);
    expect(await exists('SELECT 1 FROM pg_database WHERE datname = $1', 'doomed')).toBe(0);
    expect(await exists('SELECT 1 FROM pg_roles WHERE rolname = $1', 'doomed')).toBe(0);
    expect(await exists('SELECT 1 FROM pg_database WHERE datname = $1', 'kept')).toBe(1);
    expect(await exists('SELECT 1 FROM pg_roles WHERE rolname = $1', 'kept')).toBe(1);
  });
  it('given a namespace holding an App and two PostgresDatabases (Delete, Retain), deleting the namespace finishes: finalizers run, databases dropped or kept, children collected', async () => {
    const ns = `gone-${randomSuffix()}`;
    const nsServer = `gone-${randomSuffix()}`;
    await t.core.createNamespace({ body: { metadata: { name: ns } } });
    await createPostgresServer(t, nsServer, {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
    });
    // This file's bridge watches its own namespace: one more homeostat for the namespace to delete.
    const more = await startInProcessHomeostat(t, {
      taskQueue: `${taskQueue}-gone`,
      logger: log,
      bridge: { namespace: ns, watchTimeoutSeconds: 30 },
    });
    try {
      const db = (name: string, deletionPolicy: string): Record<string, unknown> => {
        const base = dbExample(name, {
          serverRef: { name: nsServer },
          databaseName: `${name.replace(/-/g, '_')}`,
          ownerRole: `${name.replace(/-/g, '_')}`,
          deletionPolicy,
          extensions: [],
        }) as { metadata: Record<string, unknown> };
        return { ...base, metadata: { ...base.metadata, namespace: ns } };
      };
      const dropped = `ns_drop_${randomSuffix()}`.replace(/-/g, '_');
      const kept = `ns_keep_${randomSuffix()}`.replace(/-/g, '_');
      const inNs = (plural: string, body: Record<string, unknown>) =>
        t.custom.createNamespacedCustomObject({ group, version, namespace: ns, plural, body });
      await inNs('postgresdatabases', db(dropped.replace(/_/g, '-'), 'Delete'));
      await inNs('postgresdatabases', db(kept.replace(/_/g, '-'), 'Retain'));
      await inNs('apps', {
        apiVersion: `${group}/${version}`,
        kind: 'App',
        metadata: { name: 'web', namespace: ns },
        spec: { image: 'registry.spr.com/web:1', replicas: 2, databaseRef: { name: dropped.replace(/_/g, '-') } },
      });
      const getIn = async (plural: string, name: string): Promise<Obj> =>
        (await t.custom.getNamespacedCustomObject({ group, version, namespace: ns, plural, name })) as Obj;
      for (const [plural, name] of [
        ['postgresdatabases', dropped.replace(/_/g, '-')],
        ['postgresdatabases', kept.replace(/_/g, '-')],
        ['apps', 'web'],
      ] as const) {
        for (let i = 0; ; i++) {
          const o = await getIn(plural, name);
          if (o.status?.phase === 'Ready') break;
          if (i > 480) throw new Error(`${plural}/${name} not Ready: ${JSON.stringify(o.status)}`);
          await sleep(250);
        }
      }
      const deployment = await apps.readNamespacedDeployment({ name: 'web', namespace: ns });
      expect(deployment.status?.readyReplicas).toBe(2);

      await t.core.deleteNamespace({ name: ns });
      let gone = false;
      for (let i = 0; i < 480 && !gone; i++) {
        gone = await t.core.readNamespace({ name: ns }).then(
          () => false,
          () => true,
        );
        if (!gone) await sleep(250);
      }
      if (!gone) {
        const left = await t.core.readNamespace({ name: ns });
        throw new Error(`namespace ${ns} still there after 120 s: ${JSON.stringify(left.status)}`);
      }
      const exists = (sql: string, name: string): Promise<number | null> =>
        pg(async (c) => (await c.query(sql, [name])).rowCount);
      expect(await exists('SELECT 1 FROM pg_database WHERE datname = $1', dropped)).toBe(0);
      expect(await exists('SELECT 1 FROM pg_roles WHERE rolname = $1', dropped)).toBe(0);
      expect(await exists('SELECT 1 FROM pg_database WHERE datname = $1', kept)).toBe(1);
      expect(await exists('SELECT 1 FROM pg_roles WHERE rolname = $1', kept)).toBe(1);
    } finally {
      await more.stop();
    }
  });
});

describe('PostgresDatabase: a worker killed during role creation', () => {
  const t = useStack();
  const log = pino({ level: 'warn' });
  const taskQueue = `builtin-kill-${randomSuffix()}`;
  const children: ChildProcess[] = [];

  function startWorker(): ChildProcess {
    const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '../../cli/homeostat.ts'), 'worker'], {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: t.endpoints.temporalAddress,
        TEMPORAL_NAMESPACE: t.endpoints.temporalNamespace,
        HOMEOSTAT_TASK_QUEUE: taskQueue,
        HOMEOSTAT_WORKER_PORT: '0',
        KUBECONFIG: t.endpoints.kubeconfig,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    children.push(child);
    return child;
  }

  afterAll(() => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  });

  it('given SIGKILL while CREATE ROLE runs, after a new worker starts there is exactly one role and the Secret password works', async () => {
    installBuiltinCrds(t);
    const server = await createPostgresServer(t, `killed-${randomSuffix()}`);
    const role = `killed_${randomSuffix()}`;
    // Hold the role's name in an open transaction: the worker's CREATE ROLE then waits on it, so
    // the kill lands inside the step, deterministically.
    const blocker = new PgClient({ connectionString: t.endpoints.postgresUrl });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query(`CREATE ROLE ${role}`);
    const watcher = new PgClient({ connectionString: t.endpoints.postgresUrl });
    await watcher.connect();
    const bridge = new Bridge({
      kc: t.kc,
      resources: await watchedResourcesFor(builtinOperator, t.kc),
      operator: builtinOperator,
      namespace: t.namespace,
      client: t.temporal,
      taskQueue,
      log,
      leaderElection: false,
    });
    bridge.start();
    try {
      const first = startWorker();
      await t.custom.createNamespacedCustomObject({
        group,
        version,
        namespace: t.namespace,
        plural: 'postgresdatabases',
        body: {
          apiVersion: `${group}/${version}`,
          kind: 'PostgresDatabase',
          metadata: { name: 'killed' },
          spec: { serverRef: { name: server }, databaseName: role, ownerRole: role },
        },
      });
      let waiting = 0;
      for (let i = 0; i < 240 && waiting === 0; i++) {
        await sleep(250);
        // A separate connection: inside the blocker's transaction pg_stat_activity is a frozen snapshot.
        const res = await watcher.query(
          "SELECT 1 FROM pg_stat_activity WHERE query LIKE 'CREATE ROLE%' AND wait_event_type = 'Lock'",
        );
        waiting = res.rowCount ?? 0;
      }
      expect(waiting).toBe(1);
      first.kill('SIGKILL');
      await new Promise((r) => first.once('exit', r));
      await blocker.query('ROLLBACK');
      startWorker();
      // The step's start-to-close timeout (30 s) notices the dead worker; the retry finishes the pass.
      let obj: Obj | undefined;
      for (let i = 0; i < 480 && obj?.status?.phase !== 'Ready'; i++) {
        await sleep(250);
        obj = (await t.custom.getNamespacedCustomObject({
          group,
          version,
          namespace: t.namespace,
          plural: 'postgresdatabases',
          name: 'killed',
        })) as Obj;
      }
      expect(obj?.status?.phase).toBe('Ready');
      const roles = await blocker.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role]);
      expect(roles.rowCount).toBe(1);
      const secret = await t.core.readNamespacedSecret({ namespace: t.namespace, name: 'killed-connection' });
      const url = Buffer.from(secret.data?.url ?? '', 'base64').toString();
      const owner = new PgClient({ connectionString: url });
      await owner.connect();
      const who = await owner.query<{ u: string }>('SELECT current_user AS u');
      await owner.end();
      expect(who.rows[0]?.u).toBe(role);
    } finally {
      await blocker.end().catch(() => {});
      await watcher.end().catch(() => {});
      await bridge.stop();
    }
  });
});
