/**
 * The bridge's delivery queue is fair across namespaces on the real stack (issue 27): a standby bridge
 * (another replica holds the Lease) queues the creation of 100 objects of one namespace and then of 1 of
 * another in its paused queue; when it takes over, it delivers the other namespace's signal among the
 * first two, one delivery at a time. The order is read from Temporal (each object's
 * workflow is started by its first signal), not from time.
 */
import * as k8s from '@kubernetes/client-node';
import pino from 'pino';
import { Bridge, type WatchedResource } from '../../informer-bridge';
import { workflowIdFor } from '../../core/definitions';
import { createTestNamespace, randomSuffix, useStack } from '../support/harness';
import { createWidgetCrd, startRecorder, waitFor, Widgets } from '../support/bridge';

jest.setTimeout(240_000);

describe('informer bridge: fair delivery across namespaces', () => {
  const t = useStack();
  const group = `fair${randomSuffix(3)}.homeostat.dev`;
  const taskQueue = `bridge-fair-${randomSuffix()}`;
  let widget: WatchedResource;

  beforeAll(async () => {
    const [crd, recorder] = await Promise.all([
      createWidgetCrd(t.apiext, group),
      // The objects' workflows: they record the signals (started by the first one).
      startRecorder(t.endpoints.temporalAddress, t.endpoints.temporalNamespace, taskQueue),
    ]);
    widget = crd;
    t.defer(() => recorder.stop());
  });

  const newNamespace = (prefix: string): Promise<string> => createTestNamespace(t.core, prefix);

  /** When an object's workflow started (its first signal's delivery), in nanoseconds. */
  async function startedAt(workflowId: string): Promise<bigint> {
    const history = await t.temporal.workflow.getHandle(workflowId).fetchHistory();
    const time = history.events?.[0]?.eventTime;
    return BigInt(String(time?.seconds ?? 0)) * 1_000_000_000n + BigInt(time?.nanos ?? 0);
  }

  it('given a standby whose queue filled with 100 changes of one namespace and then one of another, it delivers that one among the first two when it takes over', async () => {
    const teamA = new Widgets(t.custom, group, await newNamespace('fa'));
    const teamB = new Widgets(t.custom, group, await newNamespace('fb'));
    const shard = { 'homeostat.dev/fairness-test': randomSuffix() };
    const n = 100;
    const ids = [...Array.from({ length: n }, (_, i) => teamA.ref(`a${i}`)), teamB.ref('b0')].map(workflowIdFor);

    // Another replica holds the Lease: this bridge stands by, watching, its queue paused.
    const leases = t.kc.makeApiClient(k8s.CoordinationV1Api);
    const leaseName = `fair-${randomSuffix()}`;
    await leases.createNamespacedLease({
      namespace: teamA.namespace,
      body: { metadata: { name: leaseName }, spec: { holderIdentity: 'another-replica', leaseDurationSeconds: 3600 } },
    });
    const bridge = new Bridge({
      kc: t.kc,
      resources: [widget],
      labelSelector: Object.entries(shard).map(([k, v]) => `${k}=${v}`)[0],
      client: t.temporal,
      taskQueue,
      log: pino({ level: 'warn' }),
      leaderElection: { namespace: teamA.namespace, name: leaseName, identity: 'fair-test', retryPeriodMs: 500 },
      auditWorkflows: false,
      concurrency: 1, // one delivery at a time: the order of the workflows' starts is the delivery order
      // The recording workflows write no status, so every pass would hold its admission slot for the hold
      // time: this test is about the queue's order alone (bridge-admission.test.ts covers admission).
      maxPassesInFlight: 0,
    });
    bridge.start();
    try {
      await waitFor(() => bridge.ready, 30_000);
      // Team A's mass change, then team B's one change: first-in, first-out would deliver B's last.
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < n) await teamA.create(`a${next++}`, 1, shard);
        }),
      );
      await waitFor(() => bridge.dirtyKeys === n, 30_000, 100, `${n} changes of team A queued`);
      await teamB.create('b0', 1, shard);
      await waitFor(() => bridge.dirtyKeys === n + 1, 30_000, 100, "team B's change queued");
      expect(bridge.isLeader).toBe(false);
      const depth = (await bridge.metrics.queueDepth.get()).values.map((v) => [v.labels.namespace, v.value] as const);
      expect(new Map(depth)).toEqual(
        new Map([
          [teamA.namespace, n],
          [teamB.namespace, 1],
        ]),
      );
      await leases.deleteNamespacedLease({ namespace: teamA.namespace, name: leaseName });
      await waitFor(() => bridge.dirtyKeys === 0, 180_000, 200, 'every signal delivered');
      const times = await Promise.all(ids.map(startedAt));
      const order = ids
        .map((id, i) => ({ id, at: times[i]! }))
        .sort((x, y) => (x.at < y.at ? -1 : x.at > y.at ? 1 : 0));
      const rankOfB = order.findIndex((x) => x.id === ids.at(-1)) + 1;
      process.stdout.write(`bridge fairness: team B's signal delivered ${rankOfB}. of ${ids.length}\n`);
      expect(rankOfB).toBeLessThanOrEqual(2);
    } finally {
      await bridge.stop();
    }
  });
});
