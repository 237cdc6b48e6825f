/**
 * The informer bridge against the real kube-apiserver and Temporal dev server: the signals that arrive
 * at each object's (recording) workflow for a lifecycle, owned children, an update storm, a restart
 * over converged objects, and two replicas behind a Lease.
 */
import * as k8s from '@kubernetes/client-node';
import { Client } from '@temporalio/client';
import pino from 'pino';
import { Bridge, type WatchedResource } from '../../informer-bridge';
import {
  objectWorkflowStartOptions,
  type ReconcileRequest,
  staticSummaryFor,
  workflowIdFor,
} from '../../core/definitions';
import { createTestNamespace, randomSuffix, useStack } from '../support/harness';
import {
  createWidgetCrd,
  ownedConfigMaps,
  received,
  spawnBridge,
  startRecorder,
  staysFalse,
  waitFor,
  Widgets,
  type BridgeProcess,
} from '../support/bridge';

jest.setTimeout(180_000);

const log = pino({ level: process.env.BRIDGE_TEST_LOG ?? 'warn' });

describe('informer bridge: watch events become Temporal signals', () => {
  const t = useStack();
  const group = `ib${randomSuffix(3)}.homeostat.dev`;
  const taskQueue = `bridge-${randomSuffix()}`;
  let widget: WatchedResource;
  let recorder: { stop(): Promise<void> };

  beforeAll(async () => {
    widget = await createWidgetCrd(t.apiext, group);
    recorder = await startRecorder(t.endpoints.temporalAddress, t.endpoints.temporalNamespace, taskQueue);
  });
  afterAll(async () => {
    await recorder?.stop();
  });

  const newNamespace = (): Promise<string> => createTestNamespace(t.core);

  function inProcessBridge(namespace: string, resources: WatchedResource[], watchTimeoutSeconds = 30): Bridge {
    return new Bridge({
      kc: t.kc,
      resources,
      namespace,
      client: t.temporal,
      taskQueue,
      log,
      leaderElection: false,
      watchTimeoutSeconds,
      // The signal path alone: these objects have no workflow of their own, which the audit would start
      // (it has its own test, workflow-audit.test.ts).
      auditWorkflows: false,
    });
  }

  function bridgeEnv(namespace: string, extra: Record<string, string> = {}): Record<string, string> {
    return {
      KUBECONFIG: t.endpoints.kubeconfig,
      TEMPORAL_ADDRESS: t.endpoints.temporalAddress,
      TEMPORAL_NAMESPACE: t.endpoints.temporalNamespace,
      HOMEOSTAT_TASK_QUEUE: taskQueue,
      HOMEOSTAT_BRIDGE_RESOURCES: JSON.stringify([widget]),
      HOMEOSTAT_BRIDGE_NAMESPACE: namespace,
      HOMEOSTAT_BRIDGE_LEASE_NAMESPACE: namespace,
      ...extra,
    };
  }

  it('given create, spec update, status-only update, label changes, finalizers added and removed and delete, it sends exactly the expected signals with the right reasons', async () => {
    const ns = await newNamespace();
    const widgets = new Widgets(t.custom, group, ns);
    // Server-side watch timeouts of 1–2 s: the watch ends and resumes from its resourceVersion many
    // times during the test, which must neither relist nor duplicate or lose a signal.
    const bridge = inProcessBridge(ns, [widget], 1);
    bridge.start();
    try {
      await waitFor(() => bridge.ready, 20_000);
      const ref = widgets.ref('w1');
      let last: ReconcileRequest[] = [];
      const reasons = (n: number) =>
        waitFor(
          async () => {
            last = await received(t.temporal, ref);
            return last.length >= n ? last : undefined;
          },
          20_000,
          200,
          () => `${n} signals (got ${JSON.stringify(last.map((r) => r.reason))})`,
        );
      // The bridge has processed the change at `rv` and has nothing left to deliver (throws when it has
      // not within 10 s), and then no further signal arrives for a second: the change sent none.
      const noSignalFor = async (rv: string | undefined, expected: number) => {
        await waitFor(
          () =>
            bridge.cacheOf(group, 'Widget')?.get(`${ns}/w1`)?.metadata.resourceVersion === rv && bridge.dirtyKeys === 0,
          10_000,
          50,
          `the bridge to process resourceVersion ${rv}`,
        );
        await staysFalse(
          async () => (await received(t.temporal, ref)).length !== expected,
          1000,
          `a signal beyond the ${expected} expected`,
        );
      };

      const created = await widgets.create('w1', 1);
      const uid = created.metadata!.uid!;
      expect((await reasons(1)).map((r) => r.reason)).toEqual(['added']);

      await widgets.patch('w1', { spec: { size: 2 } });
      expect((await reasons(2)).map((r) => [r.reason, r.generation])).toEqual([
        ['added', 1],
        ['updated', 2],
      ]);

      // Status only (what homeostat's own status write looks like): no signal.
      const statusWritten = await widgets.patchStatus('w1', { observedGeneration: 2, phase: 'Ready' });
      await noSignalFor(statusWritten.metadata.resourceVersion, 2);
      // An undeclared label: no signal. A declared one (homeostat.dev/tier): a signal.
      const labelled = await widgets.patch('w1', { metadata: { labels: { unrelated: 'x' } } });
      await noSignalFor(labelled.metadata.resourceVersion, 2);

      await widgets.patch('w1', { metadata: { labels: { 'homeostat.dev/tier': 'gold' } } });
      expect(await reasons(3)).toHaveLength(3);

      // Finalizers added to a live object (homeostat's first pass adds its own): no signal.
      const finalized = await widgets.patch('w1', {
        metadata: { finalizers: ['homeostat.dev/finalizer', 'other.dev/hold'] },
      });
      await noSignalFor(finalized.metadata.resourceVersion, 3);
      // A finalizer removed from a live object: a signal.
      await widgets.patch('w1', { metadata: { finalizers: ['homeostat.dev/finalizer'] } });
      expect(await reasons(4)).toHaveLength(4);

      await widgets.delete('w1'); // the finalizer holds it: deletionTimestamp is set
      expect(await reasons(5)).toHaveLength(5);

      await widgets.patch('w1', { metadata: { finalizers: null } }); // finalizer removed: the object goes
      const all = await reasons(6);
      await staysFalse(async () => (await received(t.temporal, ref)).length !== 6, 1000, 'a seventh signal');
      expect(all.map((r) => [r.reason, r.generation])).toEqual([
        ['added', 1],
        ['updated', 2],
        ['updated', 2], // declared label
        ['updated', 2], // a finalizer removed
        ['updated', 3], // deletionTimestamp (setting it bumps a custom resource's generation)
        ['deleted', 3],
      ]);
      expect(all.every((r) => r.uid === uid)).toBe(true);
      expect(all.every((r) => r.ref.name === 'w1' && r.ref.namespace === ns && r.ref.kind === 'Widget')).toBe(true);
      expect(new Set(all.map((r) => r.resourceVersion)).size).toBe(6);
      const restarts = (await bridge.metrics.watchRestarts.get()).values.filter((v) => v.labels.reason === 'timeout');
      expect(restarts.reduce((n, v) => n + v.value, 0)).toBeGreaterThanOrEqual(2);
      const lists = (await bridge.metrics.relists.get()).values;
      expect(lists.map((v) => [v.labels.reason, v.value])).toEqual([['initial', 1]]);
      const described = await t.temporal.workflow.getHandle(workflowIdFor(ref)).describe();
      expect(described.searchAttributes.HomeostatKind).toEqual(['Widget']); // set at start, no upsert needed
      expect(described.searchAttributes.HomeostatName).toEqual(['w1']);
      expect(await described.staticSummary()).toBe(staticSummaryFor(ref));
    } finally {
      await bridge.stop();
    }
  });

  it('given a ConfigMap owned by a Widget, its changes signal the owner with child-changed, and metadata-only churn does not', async () => {
    const ns = await newNamespace();
    const widgets = new Widgets(t.custom, group, ns);
    const owner = await widgets.create('parent', 1);
    await widgets.patchStatus('parent', { observedGeneration: 1 }); // converged: the safety net stays quiet
    const bridge = inProcessBridge(ns, [widget, ownedConfigMaps(group)]);
    bridge.start();
    try {
      await waitFor(() => bridge.ready, 20_000);
      const ref = widgets.ref('parent');
      const count = (n: number) =>
        waitFor(async () => (await received(t.temporal, ref)).length >= n, 20_000, 200, `${n} child-changed signals`);
      const ownerReferences = [
        { apiVersion: `${group}/v1`, kind: 'Widget', name: 'parent', uid: owner.metadata!.uid!, controller: true },
      ];
      await t.core.createNamespacedConfigMap({
        namespace: ns,
        body: { metadata: { name: 'parent-config', ownerReferences }, data: { a: '1' } },
      });
      expect(await count(1)).toBe(true);
      const annotated = await t.core.patchNamespacedConfigMap(
        { name: 'parent-config', namespace: ns, body: { metadata: { annotations: { note: 'x' } } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      await waitFor(
        () =>
          bridge.cacheOf('', 'ConfigMap')?.get(`${ns}/parent-config`)?.metadata.resourceVersion ===
            annotated.metadata?.resourceVersion && bridge.dirtyKeys === 0,
        10_000,
        50,
        'the bridge to process the annotation',
      );
      await staysFalse(
        async () => (await received(t.temporal, ref)).length !== 1,
        1000,
        'a signal for an annotation-only change',
      );
      await t.core.patchNamespacedConfigMap(
        { name: 'parent-config', namespace: ns, body: { data: { a: '2' } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      expect(await count(2)).toBe(true);
      await t.core.deleteNamespacedConfigMap({ name: 'parent-config', namespace: ns });
      expect(await count(3)).toBe(true);
      const all = await received(t.temporal, ref);
      expect(all.map((r) => r.reason)).toEqual(['child-changed', 'child-changed', 'child-changed']);
      expect(all.every((r) => r.uid === owner.metadata!.uid && r.generation === 1)).toBe(true);
    } finally {
      await bridge.stop();
    }
  });

  it('given 1,000 spec updates to one object in a few seconds, it sends far fewer signals and the last carries the final generation', async () => {
    const ns = await newNamespace();
    const widgets = new Widgets(t.custom, group, ns);
    const bridge = inProcessBridge(ns, [widget]);
    bridge.start();
    try {
      await waitFor(() => bridge.ready, 20_000);
      await widgets.create('storm', 0);
      const ref = widgets.ref('storm');
      await waitFor(async () => (await received(t.temporal, ref)).length === 1, 20_000);
      const started = Date.now();
      let next = 1;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next <= 1000) {
            const size = next++;
            await widgets.patch('storm', { spec: { size } });
          }
        }),
      );
      const updateSeconds = (Date.now() - started) / 1000;
      const final = await widgets.get('storm');
      expect(final.metadata.generation).toBe(1001);
      const got = await waitFor(async () => {
        const r = await received(t.temporal, ref);
        return r.at(-1)?.generation === 1001 && bridge.dirtyKeys === 0 ? r : undefined;
      }, 30_000);
      const updates = got.length - 1; // the first signal was the create
      process.stderr.write(
        `[figures] storm: 1000 spec updates in ${updateSeconds.toFixed(1)}s -> ${updates} signals ` +
          `(${(updates / 1000).toFixed(3)} signals per update), merged ${(await bridge.metrics.signalsMerged.get()).values[0]?.value}\n`,
      );
      expect(updates).toBeLessThan(100);
      expect(got.at(-1)!.reason).toBe('updated');
      const generations = got.map((r) => r.generation);
      expect([...generations].sort((a, b) => a - b)).toEqual(generations); // never goes back
    } finally {
      await bridge.stop();
    }
  });

  it('given a label selector (a shard), it lists, watches and signals only matching objects', async () => {
    const ns = await newNamespace();
    const widgets = new Widgets(t.custom, group, ns);
    await widgets.create('old-a', 1, { shard: 'a' }); // listed before start, behind (no status): resync
    await widgets.create('old-b', 1, { shard: 'b' });
    const bridge = new Bridge({
      kc: t.kc,
      resources: [widget],
      namespace: ns,
      labelSelector: 'shard=a',
      client: t.temporal,
      taskQueue,
      log,
      leaderElection: false,
    });
    bridge.start();
    try {
      await waitFor(() => bridge.ready, 20_000);
      expect(bridge.cacheOf(group, 'Widget')?.keys()).toEqual([`${ns}/old-a`]);
      await widgets.create('new-b', 1, { shard: 'b' });
      await widgets.create('new-a', 1, { shard: 'a' });
      const seen = async (name: string) => (await received(t.temporal, widgets.ref(name))).map((r) => r.reason);
      expect(await waitFor(async () => (await seen('new-a')).length === 1, 20_000)).toBe(true);
      expect(await waitFor(async () => (await seen('old-a')).length === 1, 20_000)).toBe(true);
      await staysFalse(
        async () =>
          (await seen('old-b')).length + (await seen('new-b')).length > 0 ||
          (await seen('old-a')).length + (await seen('new-a')).length !== 2,
        1000,
        'a signal for an object outside the shard, or a second one inside it',
      );
      expect(await seen('old-a')).toEqual(['resync']);
      expect(await seen('new-a')).toEqual(['added']);
      expect(await seen('old-b')).toEqual([]);
      expect(await seen('new-b')).toEqual([]);
    } finally {
      await bridge.stop();
    }
  });

  it('given a stop while its audit lists the object workflows, stop returns only after the audit, so no Temporal call outlives it', async () => {
    // The last CI run's bench crashed with "Channel has been shut down" from the client's retry timer:
    // a bridge's background audit was still listing when the connection it used was closed.
    const ns = await newNamespace();
    const events: string[] = [];
    const client = new Client({ connection: t.connection, namespace: t.endpoints.temporalNamespace });
    const list = client.workflow.list.bind(client.workflow);
    // The real listing, held 1.5 s before its first page so that the stop lands while it runs.
    (client.workflow as unknown as { list: (o: unknown) => AsyncIterable<unknown> }).list = (options) => {
      events.push('list started');
      const inner = list(options as Parameters<typeof list>[0]);
      return (async function* () {
        try {
          await new Promise((r) => setTimeout(r, 1500));
          for await (const wf of inner) yield wf;
        } finally {
          events.push('list finished');
        }
      })();
    };
    const bridge = new Bridge({
      kc: t.kc,
      resources: [widget],
      namespace: ns,
      client,
      taskQueue,
      log,
      leaderElection: false,
    });
    bridge.start();
    await waitFor(() => events.includes('list started'), 20_000, 50, 'the audit listing');
    await bridge.stop(5_000);
    events.push('stopped');
    expect(events).toEqual(['list started', 'list finished', 'stopped']);
  });

  it('given a graceful stop with a signal still waiting, it flushes it before stopping', async () => {
    const ns = await newNamespace();
    const widgets = new Widgets(t.custom, group, ns);
    const bridge = new Bridge({
      kc: t.kc,
      resources: [widget],
      namespace: ns,
      client: t.temporal,
      taskQueue,
      log,
      leaderElection: false,
      minSignalIntervalMs: 600_000, // a second signal to the same object would wait ten minutes
    });
    bridge.start();
    let stopped = false;
    try {
      await waitFor(() => bridge.ready, 20_000);
      await widgets.create('flush', 1);
      const ref = widgets.ref('flush');
      expect(await waitFor(async () => (await received(t.temporal, ref)).length === 1, 20_000)).toBe(true);
      const patched = await widgets.patch('flush', { spec: { size: 2 } });
      await waitFor(
        () =>
          bridge.cacheOf(group, 'Widget')?.get(`${ns}/flush`)?.metadata.resourceVersion ===
          patched.metadata.resourceVersion,
        10_000,
        50,
      );
      expect(bridge.dirtyKeys).toBe(1); // waiting out the interval
      expect(await bridge.stop(10_000)).toBe(true);
      stopped = true;
      expect((await received(t.temporal, ref)).map((r) => [r.reason, r.generation])).toEqual([
        ['added', 1],
        ['updated', 2],
      ]);
    } finally {
      if (!stopped) await bridge.stop();
    }
  });

  describe('replicas as processes', () => {
    const children: BridgeProcess[] = [];
    afterEach(async () => {
      for (const c of children.splice(0)) {
        c.kill('SIGKILL');
        c.child.kill('SIGKILL');
        await c.exited;
      }
    });

    it('given a bridge restarted over 1,000 converged objects, it sends zero signals and its audit starts nothing', async () => {
      const ns = await newNamespace();
      const widgets = new Widgets(t.custom, group, ns);
      const n = 1000;
      const names = Array.from({ length: n }, (_, i) => `c${i}`);
      let i = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (i < n) {
            const name = names[i++]!;
            await widgets.create(name, 1);
            await widgets.patchStatus(name, { observedGeneration: 1, phase: 'Ready' });
            // Converged objects have their workflow running (the audit starts one for any that has none).
            await t.temporal.workflow.start('objectWorkflow', objectWorkflowStartOptions(widgets.ref(name), taskQueue));
          }
        }),
      );
      const env = bridgeEnv(ns, { HOMEOSTAT_BRIDGE_LEADER_ELECTION: 'false' });
      const times: number[] = [];
      for (let run = 0; run < 2; run++) {
        const started = Date.now();
        const bridge = await spawnBridge(env);
        children.push(bridge);
        expect(await waitFor(() => bridge.ready(), 60_000, 100)).toBe(true);
        times.push(Date.now() - started);
        expect(await bridge.metric('homeostat_bridge_cache_objects')).toBe(n);
        expect(bridge.lines.find((l) => l.includes('"msg":"listed"'))).toContain('"pages":2'); // 500 per page
        expect((await fetch(`http://127.0.0.1:${bridge.port}/healthz`)).status).toBe(200);
        await staysFalse(
          async () => (await bridge.metric('homeostat_bridge_signals_sent_total')) > 0,
          1500,
          'a signal for a converged object',
        );
        expect(await bridge.metric('homeostat_bridge_dirty_keys')).toBe(0);
        expect(bridge.lines.filter((l) => l.includes('audit: workflows started'))).toEqual([]);
        if (run === 0) {
          const bytes = await bridge.metric('homeostat_bridge_cache_bytes');
          process.stderr.write(`[figures] cache estimate: ${(bytes / n).toFixed(0)} bytes per object (trimmed JSON)\n`);
        }
        bridge.kill('SIGTERM');
        expect(await bridge.exited).toBe(0);
      }
      for (const name of ['c0', `c${n - 1}`]) expect(await received(t.temporal, widgets.ref(name))).toEqual([]);
      process.stderr.write(
        `[figures] restart over ${n} converged objects: ready in ${times.map((x) => `${x} ms`).join(', ')}; 0 signals\n`,
      );
    });

    it('given two replicas, one leads; SIGKILL it and the other delivers within the lease time', async () => {
      const ns = await newNamespace();
      const widgets = new Widgets(t.custom, group, ns);
      const a = await spawnBridge(bridgeEnv(ns, { HOMEOSTAT_BRIDGE_IDENTITY: 'replica-a' }));
      children.push(a);
      expect(await waitFor(async () => (await a.metric('homeostat_bridge_is_leader')) === 1, 20_000)).toBe(true);
      const b = await spawnBridge(bridgeEnv(ns, { HOMEOSTAT_BRIDGE_IDENTITY: 'replica-b' }));
      children.push(b);
      expect(await waitFor(() => b.ready(), 20_000)).toBe(true);
      // A few retry periods: b must stay a standby all along.
      await staysFalse(async () => (await b.metric('homeostat_bridge_is_leader')) !== 0, 3000, 'b leading', 250);
      expect(await a.metric('homeostat_bridge_is_leader')).toBe(1);

      await widgets.create('before', 1);
      await waitFor(async () => (await received(t.temporal, widgets.ref('before'))).length === 1, 20_000);
      expect(await a.metric('homeostat_bridge_signals_sent_total')).toBe(1);
      expect(await b.metric('homeostat_bridge_signals_sent_total')).toBe(0);

      a.kill('SIGKILL');
      const killedAt = Date.now();
      await a.exited;
      await widgets.create('after', 1);
      const got = await waitFor(
        async () => (await received(t.temporal, widgets.ref('after'))).length >= 1,
        30_000,
        100,
      );
      const takeoverMs = Date.now() - killedAt;
      expect(got).toBe(true);
      expect(await b.metric('homeostat_bridge_is_leader')).toBe(1);
      process.stderr.write(`[figures] leader SIGKILLed: standby delivered after ${takeoverMs} ms (lease 15 s)\n`);
      expect(takeoverMs).toBeLessThan(15_000 + 2_000 * 1.2 + 3_000);
      const lease = await t.kc
        .makeApiClient(k8s.CoordinationV1Api)
        .readNamespacedLease({ name: 'homeostat-informer-bridge', namespace: ns });
      expect(lease.spec?.holderIdentity).toBe('replica-b');
      expect(lease.spec?.leaseTransitions).toBe(1);

      // A graceful stop (SIGTERM) releases the Lease: a new standby takes over within a retry period or two.
      const c = await spawnBridge(bridgeEnv(ns, { HOMEOSTAT_BRIDGE_IDENTITY: 'replica-c' }));
      children.push(c);
      expect(await waitFor(() => c.ready(), 20_000)).toBe(true);
      b.kill('SIGTERM');
      const termAt = Date.now();
      expect(await b.exited).toBe(0);
      expect(await waitFor(async () => (await c.metric('homeostat_bridge_is_leader')) === 1, 15_000, 100)).toBe(true);
      const handoffMs = Date.now() - termAt;
      process.stderr.write(
        `[figures] leader stopped gracefully: standby leads after ${handoffMs} ms (Lease released)\n`,
      );
      expect(handoffMs).toBeLessThan(8_000);
    });
  });
});
