/**
 * Scaling out on one machine with the production processes: two workers and two informer bridges
 * (`homeostat worker`, `homeostat bridge`, leader election on) reconcile the Sparkle Pony Ranch;
 * SIGKILL one worker and the leading bridge, and the examples keep reconciling — spec changes reach
 * Ready at their new generation and a deleted child comes back — with no manual step.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { bundleObjectWorkflows } from '../../workers/create-worker';
import { randomSuffix, useStack } from '../support/harness';
import { createPostgresServer } from '../support/postgres';
import { installBuiltinCrds } from '../support/homeostat';

const cli = join(__dirname, '../../cli/homeostat.ts');
const group = 'homeostat.dev';
const version = 'v1alpha1';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Obj {
  metadata: { generation?: number };
  status?: { phase?: string; observedGeneration?: number };
}

describe('two workers and two bridges on one machine', () => {
  const t = useStack();
  const taskQueue = `scale-${randomSuffix()}`;
  const server = `scale-${randomSuffix()}`;
  const leaseName = `homeostat-bridge-${randomSuffix()}`;
  const children = new Map<string, ChildProcess>();
  const logs = new Map<string, string>();
  let env: Record<string, string>;

  function start(name: string, command: 'worker' | 'bridge', extra: Record<string, string>): void {
    const child = spawn(process.execPath, ['--import', 'tsx', cli, command], {
      env: { ...env, ...extra },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    logs.set(name, '');
    const append = (c: Buffer): void => {
      logs.set(name, (logs.get(name) ?? '') + c.toString());
    };
    child.stdout.on('data', append);
    child.stderr.on('data', append);
    children.set(name, child);
  }

  async function get(plural: string, name: string): Promise<Obj> {
    return (await t.custom.getNamespacedCustomObject({ group, version, namespace: t.namespace, plural, name })) as Obj;
  }

  async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe().catch(() => undefined);
      if (value !== undefined) return value;
      if (Date.now() > deadline) {
        const tails = [...logs].map(([n, l]) => `--- ${n}\n${l.split('\n').slice(-15).join('\n')}`).join('\n');
        throw new Error(`${what}: not within ${timeoutMs} ms\n${tails}`);
      }
      await sleep(300);
    }
  }

  const readyAt = async (plural: string, name: string, generation?: number): Promise<Obj | undefined> => {
    const o = await get(plural, name);
    const want = generation ?? o.metadata.generation;
    return o.status?.phase === 'Ready' && o.status.observedGeneration === want ? o : undefined;
  };

  const example = (file: string): Record<string, unknown> =>
    k8s.loadYaml<Record<string, unknown>>(readFileSync(join(__dirname, '../../examples', file), 'utf8'));

  beforeAll(async () => {
    installBuiltinCrds(t);
    const dir = mkdtempSync(join(tmpdir(), 'homeostat-scale-'));
    const bundlePath = join(dir, 'workflow-bundle.js');
    writeFileSync(bundlePath, (await bundleObjectWorkflows()).code);
    env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? tmpdir(),
      KUBECONFIG: t.endpoints.kubeconfig,
      TEMPORAL_ADDRESS: t.endpoints.temporalAddress,
      TEMPORAL_NAMESPACE: t.endpoints.temporalNamespace,
      HOMEOSTAT_TASK_QUEUE: taskQueue,
      HOMEOSTAT_WORKFLOW_BUNDLE: bundlePath,
      HOMEOSTAT_WORKER_PORT: '0',
      HOMEOSTAT_BRIDGE_PORT: '0',
      HOMEOSTAT_BRIDGE_NAMESPACE: t.namespace,
      HOMEOSTAT_BRIDGE_LEASE_NAMESPACE: t.namespace,
      HOMEOSTAT_BRIDGE_LEASE_NAME: leaseName,
      HOMEOSTAT_BRIDGE_LEASE_SECONDS: '6',
      HOMEOSTAT_BRIDGE_RENEW_DEADLINE_SECONDS: '4',
      HOMEOSTAT_BRIDGE_RETRY_PERIOD_SECONDS: '1',
      LOG_LEVEL: 'warn',
    };
    await createPostgresServer(t, server);
    start('worker-1', 'worker', { HOMEOSTAT_WORKER_IDENTITY: 'worker-1' });
    start('worker-2', 'worker', { HOMEOSTAT_WORKER_IDENTITY: 'worker-2' });
    start('bridge-1', 'bridge', { HOMEOSTAT_BRIDGE_IDENTITY: 'bridge-1' });
    start('bridge-2', 'bridge', { HOMEOSTAT_BRIDGE_IDENTITY: 'bridge-2' });
  });

  afterAll(async () => {
    await Promise.all(
      [...children.values()].map(async (c) => {
        if (c.exitCode !== null || c.signalCode !== null) return;
        const exited = new Promise((r) => c.once('exit', r));
        c.kill('SIGTERM');
        await exited;
      }),
    );
  });

  it('given the examples Ready, SIGKILL of one worker and of the leading bridge leaves the rest reconciling every change', async () => {
    const suffix = randomSuffix(3);
    const db = example('20-pony-spawner-db.yaml') as { spec: Record<string, unknown> };
    await t.custom.createNamespacedCustomObject({
      group,
      version,
      namespace: t.namespace,
      plural: 'postgresdatabases',
      body: {
        ...db,
        metadata: { name: 'pony-spawner-db', namespace: t.namespace },
        spec: {
          ...db.spec,
          serverRef: { name: server },
          databaseName: `pony_scale_${suffix}`,
          ownerRole: `pony_scale_${suffix}`,
        },
      },
    });
    const app = example('30-pony-spawner-app.yaml');
    await t.custom.createNamespacedCustomObject({
      group,
      version,
      namespace: t.namespace,
      plural: 'apps',
      body: { ...app, metadata: { name: 'pony-spawner', namespace: t.namespace } },
    });
    await waitFor('PostgresDatabase Ready', () => readyAt('postgresdatabases', 'pony-spawner-db'), 180_000);
    await waitFor('App Ready', () => readyAt('apps', 'pony-spawner'), 180_000);

    const coordination = t.kc.makeApiClient(k8s.CoordinationV1Api);
    const leader = await waitFor('a bridge leads', async () => {
      const lease = await coordination.readNamespacedLease({ name: leaseName, namespace: t.namespace });
      return lease.spec?.holderIdentity ?? undefined;
    });
    expect(['bridge-1', 'bridge-2']).toContain(leader);
    const standby = leader === 'bridge-1' ? 'bridge-2' : 'bridge-1';

    for (const victim of ['worker-1', leader]) {
      const child = children.get(victim)!;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    }

    // Spec changes to both objects and a deleted child, all after the kills.
    const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
    const patched = (await t.custom.patchNamespacedCustomObject(
      { group, version, namespace: t.namespace, plural: 'apps', name: 'pony-spawner', body: { spec: { replicas: 2 } } },
      merge,
    )) as Obj;
    const patchedDb = (await t.custom.patchNamespacedCustomObject(
      {
        group,
        version,
        namespace: t.namespace,
        plural: 'postgresdatabases',
        name: 'pony-spawner-db',
        body: { spec: { connectionLimit: 15 } },
      },
      merge,
    )) as Obj;
    const apps = t.kc.makeApiClient(k8s.AppsV1Api);
    await apps.deleteNamespacedDeployment({ name: 'pony-spawner', namespace: t.namespace });

    await waitFor(
      'App Ready at its new generation',
      () => readyAt('apps', 'pony-spawner', patched.metadata.generation),
      180_000,
    );
    await waitFor(
      'PostgresDatabase Ready at its new generation',
      () => readyAt('postgresdatabases', 'pony-spawner-db', patchedDb.metadata.generation),
      180_000,
    );
    const deployment = await waitFor('the deleted Deployment comes back with 2 replicas', async () => {
      const d = await apps.readNamespacedDeployment({ name: 'pony-spawner', namespace: t.namespace });
      return d.spec?.replicas === 2 ? d : undefined;
    });
    expect(deployment.metadata?.ownerReferences?.[0]?.kind).toBe('App');
    const lease = await coordination.readNamespacedLease({ name: leaseName, namespace: t.namespace });
    expect(lease.spec?.holderIdentity).toBe(standby);
    // The survivors are still running: nothing needed a restart.
    expect(children.get('worker-2')!.exitCode).toBeNull();
    expect(children.get(standby)!.exitCode).toBeNull();
  });
});
