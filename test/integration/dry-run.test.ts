/**
 * Dry runs (issue 28) on the real stack: `POST …/plan`, `homeostat diff` and the test environment's
 * `plan` (the same `planObjectWorkflow`) give one answer, list exactly what a pass would change, and
 * write nothing — the API server's audit log shows the worker's requests in the dry run's window as
 * reads and `dryRun=All` writes only, and PostgreSQL's statement log shows no DDL. The worker runs as
 * its ServiceAccount (deploy/rbac as it ships), so its requests are told apart in the audit log.
 */
import { execFile, execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { Client as PgClient } from 'pg';
import pino from 'pino';
import { apiKindsOf, buildApiServer, KubernetesAuth } from '../../api';
import { builtinOperator } from '../../builtin';
import { stateQuery, workflowIdFor } from '../../core/definitions';
import type { DryRunResult } from '../../core/dry-run';
import { planThrough } from '../../testing/plan';
import { randomSuffix, useStack } from '../support/harness';
import { installBuiltinCrds, startInProcessHomeostat } from '../support/homeostat';
import { createPostgresServer, systemNamespace } from '../support/postgres';
import { sleep, waitFor } from '../support/bridge';

const root = join(__dirname, '../..');
const group = 'homeostat.dev';
const version = 'v1alpha1';
const workerUser = `system:serviceaccount:${systemNamespace}:homeostat-worker`;

interface AuditEvent {
  user: { username: string };
  verb: string;
  requestURI: string;
  requestReceivedTimestamp: string;
  objectRef?: { resource?: string; namespace?: string; name?: string };
}

describe('dry runs', () => {
  const t = useStack();
  const suffix = randomSuffix();
  const taskQueue = `dry-run-${suffix}`;
  const log = pino({ level: 'warn' });
  const kubectl = (...args: string[]): string =>
    execFileSync(t.stack.kubectl, ['--kubeconfig', t.endpoints.kubeconfig, ...args], { encoding: 'utf8' });
  let api: Awaited<ReturnType<typeof buildApiServer>>;
  let url = '';
  const tokens: Record<'planner' | 'viewer' | 'outsider', string> = { planner: '', viewer: '', outsider: '' };
  const adminRole = `plan_admin_${suffix}`;
  let serverName = '';

  /** A kubeconfig that is `namespace`'s ServiceAccount `name`. */
  const kubeconfigOf = async (namespace: string, name: string): Promise<k8s.KubeConfig> => {
    const { status } = await t.core.createNamespacedServiceAccountToken({
      namespace,
      name,
      body: { spec: { audiences: [], expirationSeconds: 3600 } },
    });
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ ...t.kc.getCurrentCluster()!, name: 'stack' }],
      users: [{ name, token: status!.token }],
      contexts: [{ name, cluster: 'stack', user: name }],
      currentContext: name,
    });
    return kc;
  };

  /** A caller of the API: a ServiceAccount of the test's namespace with `verbs` on apps and databases. */
  const callerToken = async (name: string, verbs: string[]): Promise<string> => {
    const ns = t.namespace;
    await t.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name } } });
    if (verbs.length > 0) {
      const rbac = t.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
      await rbac.createNamespacedRole({
        namespace: ns,
        body: { metadata: { name }, rules: [{ apiGroups: [group], resources: ['apps', 'postgresdatabases'], verbs }] },
      });
      await rbac.createNamespacedRoleBinding({
        namespace: ns,
        body: {
          metadata: { name },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
          subjects: [{ kind: 'ServiceAccount', name, namespace: ns }],
        },
      });
    }
    return (
      await t.core.createNamespacedServiceAccountToken({
        namespace: ns,
        name,
        body: { spec: { audiences: ['homeostat'] } },
      })
    ).status!.token;
  };

  const pg = async <T>(fn: (db: PgClient) => Promise<T>): Promise<T> => {
    const db = new PgClient({ connectionString: t.endpoints.postgresUrl });
    await db.connect();
    try {
      return await fn(db);
    } finally {
      await db.end();
    }
  };

  const plan = async (
    kind: string,
    name: string,
    body?: unknown,
    token = tokens.planner,
    namespace = t.namespace,
  ): Promise<{ status: number; json: DryRunResult & { code?: string } }> => {
    const res = await api.inject({
      method: 'POST',
      url: `/v1/objects/${group}/${version}/${kind}/${namespace}/${name}/plan`,
      headers: { authorization: `Bearer ${token}` },
      ...(body !== undefined ? { payload: body as object } : {}),
    });
    return { status: res.statusCode, json: JSON.parse(res.body) as DryRunResult & { code?: string } };
  };

  const tokenFile = () => {
    const file = join(t.stack.dir, `dry-run-${suffix}.token`);
    writeFileSync(file, tokens.planner, { mode: 0o600 });
    return file;
  };
  /**
   * `homeostat diff …` from the sources in a child process (as test/support/cli.ts runs the CLI, but
   * without blocking: the API answering it runs in this process).
   */
  const diff = (...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', join(root, 'cli/homeostat.ts'), 'diff', ...args, '--api', url, '--token-file', tokenFile()],
        { env: { PATH: process.env.PATH ?? '', HOME: tmpdir() }, encoding: 'utf8', timeout: 120_000 },
        (err, stdout, stderr) =>
          resolve({ status: err ? ((err as { code?: unknown }).code as number | null) : 0, stdout, stderr }),
      );
    });
  /** `homeostat diff …`'s exit status, with its error output when it is not `status` (a failure then shows it). */
  const diffStatus = async (status: number, ...args: string[]) => {
    const r = await diff(...args);
    return r.status === status ? { status } : { status: r.status, stderr: r.stderr.slice(-2000) };
  };

  const app = (image: string) => ({
    apiVersion: `${group}/${version}`,
    kind: 'App',
    metadata: { name: 'web', namespace: t.namespace },
    spec: { image, replicas: 1, env: [{ name: 'MODE', value: 'strict' }], config: { mode: 'strict' } },
  });

  beforeAll(async () => {
    installBuiltinCrds(t);
    kubectl('apply', '--server-side', '-f', join(root, 'deploy/base/namespace.yaml'));
    kubectl('apply', '--server-side', '-k', join(root, 'deploy/rbac'));
    // A PostgreSQL admin of this test's own, whose sessions log every DDL statement.
    const admin = new URL(t.endpoints.postgresUrl);
    await pg(async (db) => {
      await db.query(`CREATE ROLE ${adminRole} SUPERUSER LOGIN PASSWORD '${suffix}'`);
      await db.query(`ALTER ROLE ${adminRole} SET log_statement = 'ddl'`);
    });
    admin.username = adminRole;
    admin.password = suffix;
    serverName = await createPostgresServer(t, `plan-${suffix}`, { url: admin.toString() });
    await startInProcessHomeostat(t, {
      taskQueue,
      logger: log,
      kc: { worker: await kubeconfigOf(systemNamespace, 'homeostat-worker') },
      bridge: { watchTimeoutSeconds: 30 },
    });
    api = await buildApiServer({
      temporal: t.temporal,
      kc: t.kc,
      objects: k8s.KubernetesObjectApi.makeApiClient(t.kc),
      ...apiKindsOf(builtinOperator),
      auth: new KubernetesAuth({ kc: t.kc }),
      log,
      taskQueue,
    });
    url = await api.listen({ port: 0, host: '127.0.0.1' });
    t.defer(() => api.close());
    tokens.planner = await callerToken('planner', ['get', 'plan', 'create', 'patch']);
    tokens.viewer = await callerToken('viewer', ['get', 'plan']);
    tokens.outsider = await callerToken('outsider', []);
  });

  it('given a changed App manifest, it lists exactly the Deployment fields that would change, writes only dry-run requests, and the API, the CLI and env.plan agree; diff exits 1, then 0 once applied', async () => {
    const ns = t.namespace;
    await t.custom.createNamespacedCustomObject({ group, version, namespace: ns, plural: 'apps', body: app('web:1') });
    const phase = async () =>
      (
        (await t.custom.getNamespacedCustomObject({ group, version, namespace: ns, plural: 'apps', name: 'web' })) as {
          status?: { phase?: string; observedGeneration?: number };
          metadata: { generation: number };
        }
      ).status;
    await waitFor(async () => (await phase())?.phase === 'Ready', 90_000, 500, 'the App Ready');
    expect(await diffStatus(0, 'App', `${ns}/web`)).toEqual({ status: 0 }); // converged: nothing would change

    // The dry run of the change, in a window where the object's own workflow runs no pass.
    const passes = async () =>
      (
        await t.temporal.workflow
          .getHandle(workflowIdFor({ group, kind: 'App', namespace: ns, name: 'web' }))
          .query(stateQuery)
      ).passes;
    let answer: Awaited<ReturnType<typeof plan>> | undefined;
    let window: [number, number] = [0, 0];
    for (let attempt = 0; attempt < 3 && answer === undefined; attempt++) {
      const before = await passes();
      const from = Date.now();
      const res = await plan('App', 'web', app('web:2'));
      window = [from - 1_000, Date.now() + 1_000];
      if ((await passes()) === before) answer = res;
    }
    expect(answer?.status).toBe(200);
    const result = answer!.json;
    expect(result).toMatchObject({ version: 1, source: 'manifest', exists: true, pass: 'reconcile', changed: true });
    const children = result.steps.flatMap((s) => s.children.map((c) => ({ step: s.name, ...c })));
    expect(children.map((c) => [c.step, c.kind, c.action])).toEqual([
      ['config', 'ConfigMap', 'unchanged'],
      ['service', 'Service', 'unchanged'],
      ['deployment', 'Deployment', 'update'], // in dependency order: the Deployment mounts the ConfigMap
    ]);
    expect(children[2]!.fields).toEqual([
      { path: 'spec.template.spec.containers[0].image', old: 'web:1', new: 'web:2' },
    ]);

    // What the worker sent in that window: reads, and writes carrying dryRun=All only.
    await sleep(1_500); // the audit log is written in batches
    const events = readFileSync(t.stack.auditLog, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AuditEvent)
      .filter((e) => e.user.username === workerUser && e.objectRef?.namespace === ns)
      .filter((e) => {
        const at = Date.parse(e.requestReceivedTimestamp);
        return at >= window[0] && at <= window[1];
      });
    const writes = events.filter((e) => !['get', 'list', 'watch'].includes(e.verb));
    expect(writes.length).toBeGreaterThanOrEqual(3); // the three children's dry-run applies
    expect(
      writes.filter((e) => !/[?&]dryRun=All(&|$)/.test(e.requestURI)).map((e) => `${e.verb} ${e.requestURI}`),
    ).toEqual([]);
    const deployment = await t.kc.makeApiClient(k8s.AppsV1Api).readNamespacedDeployment({ namespace: ns, name: 'web' });
    expect(deployment.spec?.template.spec?.containers[0]?.image).toBe('web:1');

    // The CLI and env.plan give the same answer.
    const file = join(t.stack.dir, `dry-run-${suffix}.yaml`);
    writeFileSync(file, k8s.dumpYaml(app('web:2')));
    const cli = await diff('-f', file);
    expect(cli.status).toBe(1);
    expect(cli.stdout).toContain('spec.template.spec.containers[0].image: "web:1" → "web:2"');
    expect(JSON.parse((await diff('-f', file, '--json')).stdout)).toEqual(result);
    expect(await planThrough(t.temporal, taskQueue, builtinOperator, app('web:2'))).toEqual(result);

    // Applied: nothing more would change.
    await t.custom.patchNamespacedCustomObject(
      { group, version, namespace: ns, plural: 'apps', name: 'web', body: { spec: { image: 'web:2' } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await waitFor(
      async () => {
        const s = await phase();
        return s?.phase === 'Ready' && (s.observedGeneration ?? 0) >= 2;
      },
      90_000,
      500,
      'the change applied',
    );
    expect(await diffStatus(0, 'App', `${ns}/web`)).toEqual({ status: 0 });
    expect(await diffStatus(0, '-f', file)).toEqual({ status: 0 });
  });

  it('given a new PostgresDatabase manifest, it lists the statements its steps would run and runs no DDL', async () => {
    const ns = t.namespace;
    const name = `plan_${suffix}`;
    const manifest = {
      apiVersion: `${group}/${version}`,
      kind: 'PostgresDatabase',
      metadata: { name: 'ledger', namespace: ns },
      spec: { serverRef: { name: serverName }, databaseName: name, ownerRole: name },
    };
    const logPath = join(t.stack.dir, 'logs', 'postgres.log');
    const ddlAbout = (text: string): string[] =>
      text
        .split('\n')
        .filter((l) => /statement: (CREATE|ALTER|DROP|GRANT|REVOKE|COMMENT)\b/.test(l) && l.includes(name));
    const logStart = readFileSync(logPath, 'utf8').length;

    const { status, json } = await plan('PostgresDatabase', 'ledger', manifest);
    expect(status).toBe(200);
    expect(json).toMatchObject({ source: 'manifest', exists: false, changed: true });
    // Nothing happened: no role, no database, no DDL about them in the statement log, no Secret.
    const catalog = () =>
      pg(async (db) => ({
        roles: (await db.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [name])).rowCount,
        databases: (await db.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount,
      }));
    expect(await catalog()).toEqual({ roles: 0, databases: 0 });
    expect(ddlAbout(readFileSync(logPath, 'utf8').slice(logStart))).toEqual([]);
    const secrets = await t.core.listNamespacedSecret({ namespace: ns });
    expect(secrets.items.filter((s) => s.metadata?.name === 'ledger-connection')).toEqual([]);

    const byStep = Object.fromEntries(json.steps.map((s) => [s.name, s]));
    expect(json.steps.map((s) => [s.name, s.outcome])).toEqual([
      ['credentials', 'previewed'],
      ['role', 'previewed'],
      ['database', 'previewed'],
      ['extensions', 'previewed'],
      ['connection-secret', 'previewed'],
    ]);
    expect(byStep.role!.changes.map((c) => c.detail)).toEqual([
      expect.stringMatching(new RegExp(`^CREATE ROLE "${name}" LOGIN PASSWORD '…' .* CONNECTION LIMIT \\d+$`)),
      `COMMENT ON ROLE "${name}" IS 'homeostat: <this object's UID>'`,
    ]);
    expect(byStep.database!.changes.map((c) => c.detail)).toEqual([
      expect.stringMatching(
        new RegExp(`^CREATE DATABASE "${name}" OWNER "${name}" TEMPLATE template0 CONNECTION LIMIT \\d+$`),
      ),
      `COMMENT ON DATABASE "${name}" IS 'homeostat: <this object's UID>'`,
      `REVOKE ALL ON DATABASE "${name}" FROM PUBLIC`,
      `GRANT CONNECT, TEMPORARY ON DATABASE "${name}" TO "${name}"`,
    ]);
    // The Secret would be created, its data redacted; the password never appears.
    const secret = byStep.credentials!.children[0]!;
    expect(secret).toMatchObject({ kind: 'Secret', action: 'create' });
    expect(secret.fields.find((f) => f.path === 'data.password')).toEqual({ path: 'data.password', new: '(redacted)' });

    // Applied for real, the same log shows the DDL (the check above can fail), and then nothing would change.
    await t.custom.createNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural: 'postgresdatabases',
      body: manifest,
    });
    await waitFor(
      async () =>
        (
          (await t.custom.getNamespacedCustomObject({
            group,
            version,
            namespace: ns,
            plural: 'postgresdatabases',
            name: 'ledger',
          })) as { status?: { phase?: string } }
        ).status?.phase === 'Ready',
      90_000,
      500,
      'the database Ready',
    );
    await sleep(500);
    expect(ddlAbout(readFileSync(logPath, 'utf8').slice(logStart)).length).toBeGreaterThan(0);
    expect(await catalog()).toEqual({ roles: 1, databases: 1 });
    const after = await plan('PostgresDatabase', 'ledger');
    expect(after.json.steps.map((s) => [s.name, s.outcome, s.changes.length])).toEqual([
      ['credentials', 'previewed', 0],
      ['role', 'previewed', 0],
      ['database', 'previewed', 0],
      ['extensions', 'previewed', 0],
      ['connection-secret', 'previewed', 0],
    ]);
    expect(after.json.changed).toBe(false);
  });

  it('given hostile requests, it answers each with a documented 4xx, never a 5xx', async () => {
    const ns = t.namespace;
    const other = { ...app('web:3'), metadata: { name: 'web', namespace: 'kube-system' } };
    const answers = {
      otherNamespace: await plan('App', 'web', other),
      otherName: await plan('App', 'web', { ...app('web:3'), metadata: { name: 'not-web', namespace: ns } }),
      invalidSpec: await plan('App', 'web', { ...app('web:3'), spec: { image: 'web:3', replicas: -5 } }),
      noReconciler: await plan('Unicorn', 'web', undefined),
      unknownObject: await plan('App', 'nobody', undefined),
      outsider: await plan('App', 'web', undefined, tokens.outsider),
      viewerNewManifest: await plan(
        'App',
        'fresh',
        { ...app('web:3'), metadata: { name: 'fresh', namespace: ns } },
        tokens.viewer,
      ),
      otherNamespaceUrl: await plan('App', 'web', undefined, tokens.planner, 'kube-system'),
    };
    const huge = await api.inject({
      method: 'POST',
      url: `/v1/objects/${group}/${version}/App/${ns}/web/plan`,
      headers: { authorization: `Bearer ${tokens.planner}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ ...app('web:3'), spec: { image: 'x'.repeat(2 * 1024 * 1024) } }),
    });
    expect({
      ...Object.fromEntries(Object.entries(answers).map(([k, v]) => [k, `${v.status} ${v.json.code ?? ''}`])),
      huge: huge.statusCode,
    }).toEqual({
      otherNamespace: '422 ERR_INVALID_MANIFEST',
      otherName: '422 ERR_INVALID_MANIFEST',
      invalidSpec: '422 ERR_INVALID_MANIFEST',
      noReconciler: '404 ERR_UNKNOWN_KIND',
      unknownObject: '404 ERR_OBJECT_NOT_FOUND',
      outsider: '403 ERR_FORBIDDEN',
      viewerNewManifest: '403 ERR_FORBIDDEN',
      otherNamespaceUrl: '403 ERR_FORBIDDEN',
      huge: 413,
    });
  });
});
