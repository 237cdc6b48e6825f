import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { NativeConnection, Worker } from '@temporalio/worker';
import { Client as PgClient } from 'pg';
import { cleanupStaleStacks, readState, stacksRoot } from '../../devstack';
import { isListening, isRunning, pidExists, sleep } from '../../devstack/processes';
import { useStack, randomSuffix } from '../support/harness';
import * as smokeActivities from '../fixtures/smoke-activities';
import { smokeWorkflow } from '../fixtures/smoke-workflow';

describe('devstack: the real local control plane', () => {
  const t = useStack();
  const group = `smoke${randomSuffix(3)}.homeostat.dev`;
  const plural = 'widgets';

  it('given a CRD, kube-apiserver establishes it, and create/update/delete of an object arrive as watch events', async () => {
    await t.apiext.createCustomResourceDefinition({
      body: {
        metadata: { name: `${plural}.${group}` },
        spec: {
          group,
          scope: 'Namespaced',
          names: { plural, singular: 'widget', kind: 'Widget' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
                },
              },
            },
          ],
        },
      },
    });
    for (;;) {
      const crd = await t.apiext.readCustomResourceDefinition({ name: `${plural}.${group}` });
      if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      await sleep(100);
    }

    // Established can precede the moment the new resource is served: list until it answers, then
    // watch from the list's resourceVersion so no event is missed.
    const ref = { group, version: 'v1', namespace: t.namespace, plural };
    let resourceVersion = '';
    for (let i = 0; !resourceVersion; i++) {
      try {
        const list = (await t.custom.listNamespacedCustomObject(ref)) as { metadata?: { resourceVersion?: string } };
        resourceVersion = list.metadata?.resourceVersion ?? '';
      } catch (err) {
        if (i > 100) throw err;
        await sleep(100);
      }
    }
    const events: { type: string; size: number | undefined }[] = [];
    let watchError: unknown;
    let stopped = false;
    const watch = new k8s.Watch(t.kc);
    const controller = await watch.watch(
      `/apis/${group}/v1/namespaces/${t.namespace}/${plural}`,
      { resourceVersion },
      (type, obj: { spec?: { size?: number } }) => events.push({ type, size: obj.spec?.size }),
      (err: unknown) => (watchError ??= stopped ? undefined : err),
    );
    try {
      await t.custom.createNamespacedCustomObject({
        ...ref,
        body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 1 } },
      });
      await t.custom.patchNamespacedCustomObject(
        { ...ref, name: 'w1', body: { spec: { size: 2 } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      await t.custom.deleteNamespacedCustomObject({ ...ref, name: 'w1' });
      for (let i = 0; i < 300 && events.length < 3 && !watchError; i++) await sleep(100);
    } finally {
      stopped = true;
      controller.abort();
    }
    expect(watchError).toBeUndefined();
    expect(events).toEqual([
      { type: 'ADDED', size: 1 },
      { type: 'MODIFIED', size: 2 },
      { type: 'DELETED', size: 2 },
    ]);
  });

  it('given the Temporal dev server, a workflow runs an activity and its search attribute is found through visibility', async () => {
    const taskQueue = `smoke-${randomSuffix()}`;
    const connection = await NativeConnection.connect({ address: t.endpoints.temporalAddress });
    const worker = await Worker.create({
      connection,
      namespace: t.endpoints.temporalNamespace,
      taskQueue,
      workflowsPath: require.resolve('../fixtures/smoke-workflow'),
      activities: smokeActivities,
    });
    const workflowId = `smoke/${randomSuffix()}`;
    const result = await worker.runUntil(
      t.temporal.workflow.execute(smokeWorkflow, { taskQueue, workflowId, args: ['pony'] }),
    );
    await connection.close();
    expect(result).toBe('PONY!');
    let found: string[] = [];
    for (let i = 0; i < 100 && found.length === 0; i++) {
      found = [];
      for await (const wf of t.temporal.workflow.list({
        query: `HomeostatKind = 'Smoke' AND WorkflowId = '${workflowId}'`,
      })) {
        found.push(wf.workflowId);
      }
      if (found.length === 0) await sleep(200);
    }
    expect(found).toEqual([workflowId]);
    const described = await t.temporal.workflow.getHandle(workflowId).describe();
    expect(described.searchAttributes.HomeostatKind).toEqual(['Smoke']);
  });

  it('given PostgreSQL, a client connects and runs a query', async () => {
    const client = new PgClient({ connectionString: t.endpoints.postgresUrl });
    await client.connect();
    try {
      const res = await client.query<{ version: string }>('SELECT version() AS version');
      expect(res.rows[0]?.version).toMatch(/^PostgreSQL \d+/);
    } finally {
      await client.end();
    }
  });

  it('given the printed kubeconfig, kubectl lists namespaces; the Temporal UI URL serves the UI', async () => {
    const out = execFileSync(
      t.stack.kubectl,
      ['--kubeconfig', t.endpoints.kubeconfig, 'get', 'namespaces', '-o', 'name'],
      { encoding: 'utf8' },
    );
    expect(out.split('\n')).toEqual(
      expect.arrayContaining(['namespace/default', 'namespace/kube-system', `namespace/${t.namespace}`]),
    );
    const page = await fetch(t.endpoints.temporalUiUrl);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('/_app/immutable/entry/start'); // the Web UI's SvelteKit shell
    // The UI server reaches the frontend: it lists homeostat's namespace.
    const namespaces = (await (await fetch(`${t.endpoints.temporalUiUrl}/api/v1/namespaces`)).json()) as {
      namespaces: { namespaceInfo: { name: string } }[];
    };
    expect(namespaces.namespaces.map((n) => n.namespaceInfo.name)).toContain(t.endpoints.temporalNamespace);
  });

  it('given a test run killed mid-way, the next cleanup stops its servers and frees their ports', async () => {
    // A child process starts its own stack (side by side with this run's) and is then SIGKILLed.
    const name = `killed-${randomSuffix()}`;
    // `node --import tsx` runs the script in this one process (the tsx CLI would fork a grandchild
    // that a SIGKILL of its parent leaves running).
    const script = join(__dirname, '../fixtures/start-stack-and-hang.ts');
    const child = spawn(process.execPath, ['--import', 'tsx', script, name], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolveReady, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('READY')) resolveReady();
      });
      child.on('exit', (code) => reject(new Error(`stack child exited early with ${code}`)));
    });
    const state = readState(name)!;
    const procs = Object.values(state.processes);
    // The whole cluster by default: the four servers of every stack and the cluster's three.
    expect(procs.map((p) => p.name).sort()).toEqual([
      'etcd',
      'kube-apiserver',
      'kube-controller-manager',
      'kube-scheduler',
      'kwok',
      'postgres',
      'temporal',
    ]);
    expect(procs.every((p) => isRunning(p))).toBe(true);
    child.kill('SIGKILL');
    for (let i = 0; i < 50 && pidExists(child.pid!); i++) await sleep(100);
    expect(procs.every((p) => isRunning(p))).toBe(true); // orphans until someone cleans up

    const cleaned = await cleanupStaleStacks();
    // A concurrent test run's global setup may have cleaned it first; either way it must be gone.
    expect(cleaned.includes(name) || !existsSync(join(stacksRoot(), name))).toBe(true);
    expect(procs.some((p) => isRunning(p))).toBe(false);
    for (const port of [state.ports.temporal, state.ports.kube, state.ports.etcdClient, state.ports.postgres]) {
      expect(await isListening(port)).toBe(false);
    }
    expect(existsSync(join(stacksRoot(), name))).toBe(false);
    // This run's own stack is not stale and still answers.
    expect(await isListening(readState(t.stack.name)!.ports.kube)).toBe(true);
  });
});
