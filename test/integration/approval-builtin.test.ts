/**
 * The built-in approval rule (issue 28): a `PostgresServer` with `approvals.dropDatabases` makes the
 * deletion of a `PostgresDatabase` (deletionPolicy Delete) wait — the database still exists while it
 * waits, phase `AwaitingApproval` names the DROP — and an approval drops it.
 */
import * as k8s from '@kubernetes/client-node';
import { Client as PgClient } from 'pg';
import pino from 'pino';
import { decideApprovalUpdate, stateQuery, workflowIdFor } from '../../core/definitions';
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

  beforeAll(async () => {
    installBuiltinCrds(t);
    homeostat = await startInProcessHomeostat(t, {
      taskQueue: `approval-builtin-${randomSuffix()}`,
      logger: pino({ level: 'warn' }),
      bridge: {},
    });
  }, 120_000);

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

    await handle.executeUpdate(decideApprovalUpdate, {
      args: [
        { ref, decision: 'approve', approver: 'dba', generation: waiting.generation, previewHash: waiting.previewHash },
      ],
    });
    await waitFor(async () => (await get()) === undefined, 60_000, 250, 'the PostgresDatabase gone');
    expect(await databaseExists(database)).toBe(false);
  });
});
