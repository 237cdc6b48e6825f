/**
 * An App naming a PostgresDatabase (issue 14, item 2): the container gets `DATABASE_URL` as a
 * `secretKeyRef` to the database's connection Secret, never as a string in the spec; the API server
 * refuses a spec that would set it twice. Worker and bridge run in process on the run's stack.
 */
import * as k8s from '@kubernetes/client-node';
import pino from 'pino';
import { randomSuffix, useStack } from '../support/harness';
import { installBuiltinCrds, type InProcessHomeostat, startInProcessHomeostat } from '../support/homeostat';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const group = 'homeostat.dev';
const version = 'v1alpha1';

interface Obj {
  metadata: { name: string; generation?: number };
  status?: { phase?: string; observedGeneration?: number; conditions?: { type: string; message: string }[] };
}

describe('App with a databaseRef', () => {
  const t = useStack();
  const taskQueue = `app-db-${randomSuffix()}`;
  let homeostat: InProcessHomeostat | undefined;
  let apps: k8s.AppsV1Api;

  beforeAll(async () => {
    installBuiltinCrds(t);
    apps = t.kc.makeApiClient(k8s.AppsV1Api);
    homeostat = await startInProcessHomeostat(t, {
      taskQueue,
      logger: pino({ level: 'warn' }),
      bridge: { watchTimeoutSeconds: 30 },
    });
  });
  afterAll(async () => {
    await homeostat?.stop();
  });

  const create = async (plural: string, body: Record<string, unknown>): Promise<Obj> =>
    (await t.custom.createNamespacedCustomObject({ group, version, namespace: t.namespace, plural, body })) as Obj;

  const database = (name: string, spec: Record<string, unknown> = {}): Record<string, unknown> => ({
    apiVersion: `${group}/${version}`,
    kind: 'PostgresDatabase',
    metadata: { name },
    // No such server: the database never gets Ready, but the App needs only the object.
    spec: { serverRef: { name: 'no-such-server' }, databaseName: 'app_db', ownerRole: 'app_db', ...spec },
  });

  const app = (name: string, spec: Record<string, unknown>): Record<string, unknown> => ({
    apiVersion: `${group}/${version}`,
    kind: 'App',
    metadata: { name },
    spec: { image: 'registry.spr.com/pony-spawner:v2.1.0', ...spec },
  });

  async function deploymentEnv(name: string, timeoutMs = 60_000): Promise<k8s.V1EnvVar[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const d = await apps.readNamespacedDeployment({ name, namespace: t.namespace });
        return d.spec?.template.spec?.containers[0]?.env ?? [];
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await sleep(250);
      }
    }
  }

  it('given an App naming a PostgresDatabase, its container gets DATABASE_URL from the connection Secret url key', async () => {
    await create('postgresdatabases', database('orders-db', { connectionSecretName: 'orders-conn' }));
    await create('apps', app('orders', { databaseRef: { name: 'orders-db' }, env: [{ name: 'MODE', value: 'x' }] }));
    const env = await deploymentEnv('orders');
    expect(env).toEqual([
      { name: 'MODE', value: 'x' },
      { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'orders-conn', key: 'url' } } },
    ]);
  });

  it('given an App naming a database that does not exist yet, its Deployment waits for it and gets DATABASE_URL once it is created', async () => {
    await create('apps', app('late', { databaseRef: { name: 'late-db' } }));
    // The deployment step fails (and is retried) while the database is missing.
    await sleep(3000);
    await expect(apps.readNamespacedDeployment({ name: 'late', namespace: t.namespace })).rejects.toMatchObject({
      code: 404,
    });
    await create('postgresdatabases', database('late-db'));
    const env = await deploymentEnv('late', 90_000);
    expect(env).toEqual([
      { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'late-db-connection', key: 'url' } } },
    ]);
  });

  it('given an App that sets DATABASE_URL itself and names a database, the API server refuses it', async () => {
    await expect(
      create(
        'apps',
        app('twice', { databaseRef: { name: 'orders-db' }, env: [{ name: 'DATABASE_URL', value: 'postgres://x' }] }),
      ),
    ).rejects.toMatchObject({ code: 422, body: expect.stringContaining('env must not set DATABASE_URL') });
  });

  it('given a databaseRef name that is not an object name (huge, or with a slash), the API server refuses it', async () => {
    for (const name of ['x'.repeat(254), '../secret', 'UPPER']) {
      await expect(create('apps', app(`bad-${randomSuffix(2)}`, { databaseRef: { name } }))).rejects.toMatchObject({
        code: 422,
      });
    }
  });
});
