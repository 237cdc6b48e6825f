/**
 * The built-in approval rules (issue 28): a `PostgresServer` with `approvals.dropDatabases` makes the
 * deletion of a `PostgresDatabase` (deletionPolicy Delete) wait — the database still exists while it
 * waits, phase `AwaitingApproval` names the DROP — and an approval drops it; with
 * `approvals.lowerConnectionLimits` a lowered connection limit waits, a raised one does not. An `App`
 * with `approvals.imageRepository` waits on another image repository, not on another tag. Decisions go
 * through the API, whose callers are ServiceAccounts: `reconcile` alone never approves (403).
 */
import * as k8s from '@kubernetes/client-node';
import { Client as PgClient } from 'pg';
import pino from 'pino';
import { apiKindsOf, buildApiServer, KubernetesAuth } from '../../api';
import { builtinOperator } from '../../builtin';
import { approvalRefusalTypes } from '../../core/approval';
import { decideApprovalUpdate, stateQuery, workflowIdFor, type ObjectState } from '../../core/definitions';
import { waitFor } from '../support/bridge';
import { randomSuffix, useStack } from '../support/harness';
import { installBuiltinCrds, startInProcessHomeostat, type InProcessHomeostat } from '../support/homeostat';
import { createPostgresServer } from '../support/postgres';

const group = 'homeostat.dev';
const version = 'v1alpha1';

describe('built-in approval: dropping a database', () => {
  let homeostat: InProcessHomeostat | undefined;
  afterAll(async () => {
    await homeostat?.stop();
  });
  const t = useStack();

  const databaseExists = async (name: string): Promise<boolean> => {
    const db = new PgClient({ connectionString: t.endpoints.postgresUrl });
    await db.connect();
    try {
      return (await db.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
    } finally {
      await db.end();
    }
  };

  let api: Awaited<ReturnType<typeof buildApiServer>>;
  const tokens = { approver: '', operator: '' };
  /** A ServiceAccount of the test's namespace with `verbs` on apps and postgresdatabases, and its API token. */
  const callerToken = async (name: string, verbs: string[]): Promise<string> => {
    const ns = t.namespace;
    const rbac = t.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await t.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name } } });
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
    const token = await t.core.createNamespacedServiceAccountToken({
      namespace: ns,
      name,
      body: { spec: { audiences: ['homeostat'] } },
    });
    return token.status!.token;
  };
  /** `POST …/approve` on `kind` `name` as `token`: the status code. */
  const approve = async (kind: string, name: string, token: string): Promise<number> =>
    (
      await api.inject({
        method: 'POST',
        url: `/v1/objects/${group}/${version}/${kind}/${t.namespace}/${name}/approve`,
        headers: { authorization: `Bearer ${token}` },
        payload: { comment: 'checked' },
      })
    ).statusCode;
  const stateOf = (kind: string, name: string): Promise<ObjectState> =>
    t.temporal.workflow.getHandle(workflowIdFor({ group, kind, namespace: t.namespace, name })).query(stateQuery);
  const patch = (plural: string, name: string, body: object, namespaced = true) =>
    namespaced
      ? t.custom.patchNamespacedCustomObject(
          { group, version, namespace: t.namespace, plural, name, body },
          k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
        )
      : t.custom.patchClusterCustomObject(
          { group, version, plural, name, body },
          k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
        );

  beforeAll(async () => {
    installBuiltinCrds(t);
    const taskQueue = `approval-builtin-${randomSuffix()}`;
    const log = pino({ level: 'warn' });
    homeostat = await startInProcessHomeostat(t, { taskQueue, logger: log, bridge: {} });
    api = await buildApiServer({
      temporal: t.temporal,
      kc: t.kc,
      objects: k8s.KubernetesObjectApi.makeApiClient(t.kc),
      ...apiKindsOf(builtinOperator),
      auth: new KubernetesAuth({ kc: t.kc }),
      log,
      taskQueue,
    });
    t.defer(() => api.close());
    tokens.approver = await callerToken('approver', ['get', 'list', 'approve']);
    tokens.operator = await callerToken('operator', ['get', 'reconcile', 'plan']);
  }, 120_000);

  it('given an App with approvals.imageRepository, a tag-only change rolls at once, another repository waits with the Deployment unchanged until an approver (not a reconcile-only caller) approves', async () => {
    const name = `repo-${randomSuffix()}`;
    const apps = t.kc.makeApiClient(k8s.AppsV1Api);
    const image = async (): Promise<string | undefined> =>
      (await apps.readNamespacedDeployment({ namespace: t.namespace, name }).catch(() => undefined))?.spec?.template
        ?.spec?.containers[0]?.image;
    await t.custom.createNamespacedCustomObject({
      group,
      version,
      namespace: t.namespace,
      plural: 'apps',
      body: {
        apiVersion: `${group}/${version}`,
        kind: 'App',
        metadata: { name },
        spec: { image: 'registry.test:5000/team/web:v1', replicas: 0, approvals: { imageRepository: true } },
      },
    });
    await waitFor(async () => (await image()) === 'registry.test:5000/team/web:v1', 60_000, 250, 'v1');
    // Another tag, then a digest, of the same repository (a registry port is not a tag): no wait.
    await patch('apps', name, { spec: { image: 'registry.test:5000/team/web:v2' } });
    await waitFor(async () => (await image()) === 'registry.test:5000/team/web:v2', 60_000, 250, 'v2');
    const digest = `registry.test:5000/team/web@sha256:${'a'.repeat(64)}`;
    await patch('apps', name, { spec: { image: digest } });
    await waitFor(async () => (await image()) === digest, 60_000, 250, 'the digest');
    expect((await stateOf('App', name)).awaitingApproval).toBeUndefined();

    await patch('apps', name, { spec: { image: 'evil.example/team/web:v2' } });
    const waiting = await waitFor(async () => (await stateOf('App', name)).awaitingApproval, 60_000, 250, 'the wait');
    expect(waiting.step).toBe('deployment');
    expect(waiting.reason).toContain('from registry.test:5000/team/web to evil.example/team/web');
    expect(await image()).toBe(digest);
    expect(await approve('App', name, tokens.operator)).toBe(403);
    expect(await image()).toBe(digest);
    expect(await approve('App', name, tokens.approver)).toBe(200);
    await waitFor(async () => (await image()) === 'evil.example/team/web:v2', 60_000, 250, 'the new repository');
  });

  it('given a PostgresServer with approvals.lowerConnectionLimits, raising a limit (or asking more than the ceiling) runs at once, lowering it (or -1 for a lower default) waits with the limit unchanged until approved', async () => {
    const server = await createPostgresServer(t, `limits-${randomSuffix()}`);
    await patch(
      'postgresservers',
      server,
      { spec: { connectionLimits: { default: 3, ceiling: 20 }, approvals: { lowerConnectionLimits: true } } },
      false,
    );
    const name = `limits-${randomSuffix()}`;
    const database = `limits_${randomSuffix()}`;
    await t.custom.createNamespacedCustomObject({
      group,
      version,
      namespace: t.namespace,
      plural: 'postgresdatabases',
      body: {
        apiVersion: `${group}/${version}`,
        kind: 'PostgresDatabase',
        metadata: { name },
        spec: { serverRef: { name: server }, databaseName: database, ownerRole: database, connectionLimit: 5 },
      },
    });
    const limits = async (): Promise<[number, number]> => {
      const db = new PgClient({ connectionString: t.endpoints.postgresUrl });
      await db.connect();
      try {
        const d = await db.query<{ l: number }>('SELECT datconnlimit AS l FROM pg_database WHERE datname = $1', [
          database,
        ]);
        const r = await db.query<{ l: number }>('SELECT rolconnlimit AS l FROM pg_roles WHERE rolname = $1', [
          database,
        ]);
        return [r.rows[0]?.l ?? NaN, d.rows[0]?.l ?? NaN];
      } finally {
        await db.end();
      }
    };
    const settled = (want: number) =>
      waitFor(async () => (await limits()).every((l) => l === want), 120_000, 250, `limit ${want}`);
    await settled(5); // created with 5: a create is not a lowering
    await patch('postgresdatabases', name, { spec: { connectionLimit: 8 } });
    await settled(8);
    // A huge value is refused by the API server; the largest allowed is lowered to the ceiling (20): a raise.
    await expect(patch('postgresdatabases', name, { spec: { connectionLimit: 100000 } })).rejects.toMatchObject({
      code: 422,
    });
    await patch('postgresdatabases', name, { spec: { connectionLimit: 10000 } });
    await settled(20);
    expect((await stateOf('PostgresDatabase', name)).awaitingApproval).toBeUndefined();

    await patch('postgresdatabases', name, { spec: { connectionLimit: -1 } }); // the server's default: 3
    const waiting = await waitFor(
      async () => (await stateOf('PostgresDatabase', name)).awaitingApproval,
      60_000,
      250,
      'the wait',
    );
    expect(waiting.step).toBe('role');
    expect(waiting.reason).toContain(`PostgresServer ${server} requires approval to lower connection limits`);
    expect(waiting.preview).toContain('CONNECTION LIMIT 3 (from 20)');
    expect(await limits()).toEqual([20, 20]);
    expect(await approve('PostgresDatabase', name, tokens.operator)).toBe(403);
    expect(await limits()).toEqual([20, 20]);
    expect(await approve('PostgresDatabase', name, tokens.approver)).toBe(200);
    await settled(3);
  });

  it('given a PostgresServer that requires approval to drop databases, deleting a PostgresDatabase waits with the database still there, and the approval drops it', async () => {
    const server = await createPostgresServer(t, `gated-${randomSuffix()}`);
    await t.custom.patchClusterCustomObject(
      {
        group,
        version,
        plural: 'postgresservers',
        name: server,
        body: { spec: { approvals: { dropDatabases: true } } },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    const name = `gated-${randomSuffix()}`;
    const database = `gated_${randomSuffix()}`;
    await t.custom.createNamespacedCustomObject({
      group,
      version,
      namespace: t.namespace,
      plural: 'postgresdatabases',
      body: {
        apiVersion: `${group}/${version}`,
        kind: 'PostgresDatabase',
        metadata: { name },
        spec: { serverRef: { name: server }, databaseName: database, ownerRole: database, deletionPolicy: 'Delete' },
      },
    });
    const get = async () =>
      (await t.custom
        .getNamespacedCustomObject({ group, version, namespace: t.namespace, plural: 'postgresdatabases', name })
        .catch(() => undefined)) as { status?: { phase?: string } } | undefined;
    await waitFor(async () => (await get())?.status?.phase === 'Ready', 120_000, 250, 'Ready');
    expect(await databaseExists(database)).toBe(true);

    await t.custom.deleteNamespacedCustomObject({
      group,
      version,
      namespace: t.namespace,
      plural: 'postgresdatabases',
      name,
    });
    const ref = { group, version, kind: 'PostgresDatabase', namespace: t.namespace, name };
    const handle = t.temporal.workflow.getHandle(workflowIdFor(ref));
    const waiting = await waitFor(
      async () => (await handle.query(stateQuery)).awaitingApproval,
      60_000,
      250,
      'the wait',
    );
    expect(waiting.step).toBe('drop');
    expect(waiting.reason).toContain(`PostgresServer ${server} requires approval to drop databases`);
    expect(waiting.preview).toContain('DROP DATABASE');
    expect((await get())?.status?.phase).toBe('AwaitingApproval');
    expect(await databaseExists(database)).toBe(true);

    // The decision is for the wait that is current when it arrives: a refusal as not waiting or stale (a
    // pass that ended and the next one asking again) is read, and the current wait decided.
    let refused: unknown;
    await waitFor(
      async () => {
        const current = (await handle.query(stateQuery)).awaitingApproval;
        if (!current) return false;
        try {
          await handle.executeUpdate(decideApprovalUpdate, {
            args: [
              {
                ref,
                decision: 'approve',
                approver: 'dba',
                generation: current.generation,
                previewHash: current.previewHash,
              },
            ],
          });
          return true;
        } catch (err) {
          const type = (err as { cause?: { type?: string } }).cause?.type;
          if (!Object.values(approvalRefusalTypes).some((t) => t === type)) throw err;
          refused = err;
          return false;
        }
      },
      60_000,
      250,
      () => `the approval accepted (last refusal: ${String(refused)})`,
    );
    await waitFor(async () => (await get()) === undefined, 60_000, 250, 'the PostgresDatabase gone');
    expect(await databaseExists(database)).toBe(false);
  });
});
