/**
 * The informer bridge under faults, on a stack of its own (stopping servers must not disturb other
 * test files): kube-apiserver restarted mid-watch, etcd compaction past the watch (410 → relist with a
 * delete that happened in the gap), a silent connection (inactivity watchdog), and the Temporal dev
 * server stopped for 20 s while objects change.
 */
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import type { WorkflowBundle } from '@temporalio/worker';
import pino from 'pino';
import { readState, type Stack, startStack } from '../../devstack';
import { Bridge, type BridgeOptions, type WatchedResource } from '../../informer-bridge';
import { randomSuffix } from '../support/harness';
import { bundleRecorder, createWidgetCrd, received, sleep, startRecorder, waitFor, Widgets } from '../support/bridge';

jest.setTimeout(240_000);

const log = pino({ level: process.env.BRIDGE_TEST_LOG ?? 'error' });

async function counter(
  bridge: Bridge,
  name: 'relists' | 'watchRestarts' | 'signalsFailed',
  labels: Record<string, string> = {},
) {
  const metric = await bridge.metrics[name].get();
  return metric.values
    .filter((v) => Object.entries(labels).every(([k, x]) => (v.labels as Record<string, unknown>)[k] === x))
    .reduce((sum, v) => sum + v.value, 0);
}

async function etcd<T>(url: string, path: string, body: object): Promise<T> {
  const res = await fetch(`${url}${path}`, { method: 'POST', body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`etcd ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('informer bridge under faults (own stack)', () => {
  let stack: Stack;
  let kc: k8s.KubeConfig;
  let custom: k8s.CustomObjectsApi;
  let core: k8s.CoreV1Api;
  let connection: Connection;
  let temporal: Client;
  let bundle: WorkflowBundle;
  let recorder: { stop(): Promise<void> } | undefined;
  let widget: WatchedResource;
  const group = `ibf${randomSuffix(3)}.homeostat.dev`;
  const taskQueue = `bridge-faults-${randomSuffix()}`;

  beforeAll(async () => {
    [stack, bundle] = await Promise.all([
      startStack({ name: `ibfaults-${randomSuffix()}`, cluster: false }),
      bundleRecorder(),
    ]);
    kc = new k8s.KubeConfig();
    kc.loadFromFile(stack.endpoints.kubeconfig);
    custom = kc.makeApiClient(k8s.CustomObjectsApi);
    core = kc.makeApiClient(k8s.CoreV1Api);
    widget = await createWidgetCrd(kc.makeApiClient(k8s.ApiextensionsV1Api), group);
    connection = await Connection.connect({ address: stack.endpoints.temporalAddress });
    temporal = new Client({ connection, namespace: stack.endpoints.temporalNamespace });
    recorder = await startRecorder(
      stack.endpoints.temporalAddress,
      stack.endpoints.temporalNamespace,
      taskQueue,
      bundle,
    );
  });
  afterAll(async () => {
    await recorder?.stop();
    await connection?.close();
    await stack?.stop();
  });

  async function newNamespace(): Promise<string> {
    const name = `t-${randomSuffix()}`;
    await core.createNamespace({ body: { metadata: { name } } });
    return name;
  }

  function newBridge(namespace: string, extra: Partial<BridgeOptions> = {}): Bridge {
    return new Bridge({
      kc,
      resources: [widget],
      namespace,
      client: temporal,
      taskQueue,
      log,
      leaderElection: false,
      // The signal path alone: these objects have no workflow of their own, which the audit would start
      // (it has its own test, workflow-audit.test.ts).
      auditWorkflows: false,
      ...extra,
    });
  }

  /** Creates `n` converged widgets (status.observedGeneration = generation). */
  async function converged(widgets: Widgets, prefix: string, n: number): Promise<string[]> {
    const names = Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    for (const name of names) {
      await widgets.create(name, 1);
      await widgets.patchStatus(name, { observedGeneration: 1 });
    }
    return names;
  }

  it('given kube-apiserver restarted mid-watch, the bridge resumes without a relist storm and delivers the changes made meanwhile', async () => {
    const ns = await newNamespace();
    const widgets = new Widgets(custom, group, ns);
    const quiet = await converged(widgets, 'quiet', 20);
    const bridge = newBridge(ns);
    bridge.start();
    try {
      await waitFor(() => bridge.ready, 20_000);
      await widgets.create('live', 1);
      await waitFor(async () => (await received(temporal, widgets.ref('live'))).length === 1, 20_000);

      const stoppedAt = Date.now();
      await stack.stopComponent('kube-apiserver');
      // A change made while it is down, written to etcd underneath it (custom resources are stored as
      // JSON): a spec edit, so the generation moves too.
      const key = b64(`/registry/${group}/widgets/${ns}/live`);
      const { kvs } = await etcd<{ kvs: { value: string }[] }>(stack.endpoints.etcdUrl, '/v3/kv/range', { key });
      const stored = JSON.parse(Buffer.from(kvs[0]!.value, 'base64').toString()) as {
        metadata: { generation: number };
        spec: { size: number };
      };
      stored.spec.size = 2;
      stored.metadata.generation = 2;
      await etcd(stack.endpoints.etcdUrl, '/v3/kv/put', { key, value: b64(JSON.stringify(stored)) });
      await stack.startComponent('kube-apiserver');
      const upAt = Date.now();
      expect((await widgets.get('live')).metadata.generation).toBe(2);
      // A change made right after the restart, while the bridge is still reconnecting (backoff).
      await widgets.create('born-in-gap', 1);
      const live = await waitFor(async () => {
        const r = await received(temporal, widgets.ref('live'));
        return r.at(-1)?.generation === 2 ? r : undefined;
      }, 60_000);
      const resumedMs = Date.now() - upAt;
      expect(live?.map((r) => r.reason)).toEqual(['added', 'updated']);
      expect(
        await waitFor(async () => (await received(temporal, widgets.ref('born-in-gap'))).length === 1, 30_000),
      ).toBe(true);
      await sleep(1000);
      const gone = await counter(bridge, 'relists', { reason: 'gone' });
      const expired = await counter(bridge, 'relists', { reason: 'expired' });
      const restarts = await counter(bridge, 'watchRestarts');
      process.stderr.write(
        `[figures] kube-apiserver restart: down ${upAt - stoppedAt} ms; changes delivered ${resumedMs} ms after it was up; ` +
          `watch restarts ${restarts}, 410 relists ${gone}\n`,
      );
      expect(gone + expired).toBeLessThanOrEqual(1); // at most one relist, never a storm
      for (const name of quiet) expect(await received(temporal, widgets.ref(name))).toEqual([]); // no signal storm
    } finally {
      await bridge.stop();
    }
  });

  it('given etcd compacted past the watch resourceVersion, the bridge relists on 410 and an object deleted in the gap yields a deleted signal', async () => {
    const ns = await newNamespace();
    const widgets = new Widgets(custom, group, ns);
    const quiet = await converged(widgets, 'keep', 5);
    const doomed = await widgets.create('doomed', 1);
    await widgets.patchStatus('doomed', { observedGeneration: 1 });
    const bridge = newBridge(ns);
    bridge.start();
    try {
      await waitFor(() => bridge.ready, 20_000);
      const watchedAt = bridge.cacheOf(group, 'Widget')!.get(`${ns}/doomed`)!.metadata.resourceVersion;
      expect(watchedAt).toBeDefined();
      // The gap: the API server is down; the object is deleted underneath it and history is compacted.
      await stack.stopComponent('kube-apiserver');
      const url = stack.endpoints.etcdUrl;
      await etcd(url, '/v3/kv/deleterange', { key: b64(`/registry/${group}/widgets/${ns}/doomed`) });
      await etcd(url, '/v3/kv/put', { key: b64(`/homeostat-test/${randomSuffix()}`), value: b64('x') });
      const { header } = await etcd<{ header: { revision: string } }>(url, '/v3/kv/range', { key: b64('/') });
      await etcd(url, '/v3/kv/compaction', { revision: header.revision, physical: true });
      await stack.startComponent('kube-apiserver');

      const got = await waitFor(async () => {
        const r = await received(temporal, widgets.ref('doomed'));
        return r.length ? r : undefined;
      }, 60_000);
      expect(got?.map((r) => [r.reason, r.uid])).toEqual([['deleted', doomed.metadata!.uid]]);
      expect(await counter(bridge, 'relists', { reason: 'gone' })).toBe(1);
      expect(bridge.cacheOf(group, 'Widget')!.get(`${ns}/doomed`)).toBeUndefined();
      for (const name of quiet) expect(await received(temporal, widgets.ref(name))).toEqual([]);
    } finally {
      await bridge.stop();
    }
  });

  it('given a silent watch connection (kube-apiserver frozen with SIGSTOP), the inactivity watchdog restarts the watch', async () => {
    const ns = await newNamespace();
    const widgets = new Widgets(custom, group, ns);
    const bridge = newBridge(ns, { inactivityTimeoutMs: 4000, watchBackoff: { initialMs: 200, maxMs: 1000 } });
    bridge.start();
    try {
      await waitFor(() => bridge.ready, 20_000);
      await sleep(2000);
      expect(await counter(bridge, 'watchRestarts', { reason: 'watchdog' })).toBe(0);
      const pid = readState(stack.name)!.processes['kube-apiserver']!.pid;
      process.kill(pid, 'SIGSTOP');
      try {
        await sleep(6000);
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      expect(await counter(bridge, 'watchRestarts', { reason: 'watchdog' })).toBeGreaterThanOrEqual(1);
      await widgets.create('after-freeze', 1);
      expect(
        await waitFor(async () => (await received(temporal, widgets.ref('after-freeze'))).length === 1, 30_000),
      ).toBe(true);
    } finally {
      await bridge.stop();
    }
  });

  it('given the Temporal dev server stopped for 20 s while objects change, every change is delivered after it returns, each with its last generation', async () => {
    const ns = await newNamespace();
    const widgets = new Widgets(custom, group, ns);
    const bridge = newBridge(ns);
    bridge.start();
    const names = ['a', 'b', 'c', 'd', 'e'];
    try {
      await waitFor(() => bridge.ready, 20_000);
      for (const name of names) await widgets.create(name, 1);
      for (const name of names) {
        expect(await waitFor(async () => (await received(temporal, widgets.ref(name))).length === 1, 20_000)).toBe(
          true,
        );
      }
      await recorder?.stop();
      recorder = undefined;
      await stack.stopComponent('temporal');
      const stoppedAt = Date.now();
      let maxDirty = 0;
      const final: Record<string, number> = {};
      for (let round = 0; round < 4; round++) {
        for (const name of ['a', 'b', 'c']) {
          const patched = await widgets.patch(name, { spec: { size: 10 + round } });
          final[name] = patched.metadata.generation!;
        }
        maxDirty = Math.max(maxDirty, bridge.dirtyKeys);
        await sleep(3000);
      }
      await widgets.delete('d');
      const born = await widgets.create('f', 1);
      while (Date.now() - stoppedAt < 20_000) {
        maxDirty = Math.max(maxDirty, bridge.dirtyKeys);
        await sleep(500);
      }
      const failed = await counter(bridge, 'signalsFailed');
      expect(failed).toBeGreaterThan(0);
      expect(bridge.dirtyKeys).toBe(5); // a, b, c, d, f: one entry per object, not per event
      await stack.startComponent('temporal');
      const upAt = Date.now();
      recorder = await startRecorder(
        stack.endpoints.temporalAddress,
        stack.endpoints.temporalNamespace,
        taskQueue,
        bundle,
      );
      const done = await waitFor(async () => {
        for (const name of ['a', 'b', 'c']) {
          if ((await received(temporal, widgets.ref(name))).at(-1)?.generation !== final[name]) return false;
        }
        if ((await received(temporal, widgets.ref('d'))).at(-1)?.reason !== 'deleted') return false;
        return (await received(temporal, widgets.ref('f'))).length === 1 && bridge.dirtyKeys === 0;
      }, 90_000);
      const deliveredMs = Date.now() - upAt;
      expect(done).toBe(true);
      for (const name of ['a', 'b', 'c']) {
        const r = await received(temporal, widgets.ref(name));
        // Four updates merged into one signal (two if an attempt reached the server just as it came back).
        expect(r[0]!.reason).toBe('added');
        expect(r.slice(1).every((x) => x.reason === 'updated')).toBe(true);
        expect(r.length).toBeLessThanOrEqual(3);
        expect(r.at(-1)!.generation).toBe(5);
      }
      expect((await received(temporal, widgets.ref('e'))).map((r) => r.reason)).toEqual(['added']);
      expect((await received(temporal, widgets.ref('f')))[0]).toMatchObject({
        reason: 'added',
        uid: born.metadata!.uid,
      });
      expect(maxDirty).toBeLessThanOrEqual(5);
      process.stderr.write(
        `[figures] Temporal down ${((upAt - stoppedAt) / 1000).toFixed(1)} s: ${failed} failed attempts, ` +
          `at most ${maxDirty} dirty keys; all delivered ${deliveredMs} ms after it was up\n`,
      );
    } finally {
      await bridge.stop(2000);
    }
  });
});
