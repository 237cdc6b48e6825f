/**
 * The bridge's admission on the real stack (issue 27): a delivery that starts a pass (the object is
 * behind: a generation its status has not observed) holds one of `maxPassesInFlight` slots until the
 * object's status shows that generation observed; at the limit nothing more is delivered, so a flood
 * waits in the bridge's fair queue instead of in the workers' task queues, and another namespace's
 * change is the next delivered when a slot frees. The objects' workflows record signals (the recording
 * fixture); the test plays the pass's end by writing status through the API server, as a worker would,
 * so every step is a state read from the bridge or Temporal, never a wait on time.
 */
import pino from 'pino';
import { Bridge, type WatchedResource } from '../../informer-bridge';
import { createTestNamespace, randomSuffix, useStack } from '../support/harness';
import { createWidgetCrd, startRecorder, waitFor, Widgets, workflowExists } from '../support/bridge';

jest.setTimeout(240_000);

describe('informer bridge: passes in flight at most', () => {
  const t = useStack();
  const group = `adm${randomSuffix(3)}.homeostat.dev`;
  const taskQueue = `bridge-admission-${randomSuffix()}`;
  let widget: WatchedResource;

  beforeAll(async () => {
    const [crd, recorder] = await Promise.all([
      createWidgetCrd(t.apiext, group),
      startRecorder(t.endpoints.temporalAddress, t.endpoints.temporalNamespace, taskQueue),
    ]);
    widget = crd;
    t.defer(() => recorder.stop());
  });

  const newNamespace = (prefix: string): Promise<string> => createTestNamespace(t.core, prefix);

  function startBridge(shard: string, limit: number, passHoldMs: number, perNamespace?: number): Bridge {
    const bridge = new Bridge({
      kc: t.kc,
      resources: [widget],
      labelSelector: `homeostat.dev/admission-test=${shard}`,
      client: t.temporal,
      taskQueue,
      log: pino({ level: 'warn' }),
      leaderElection: false,
      auditWorkflows: false,
      maxPassesInFlight: limit,
      ...(perNamespace !== undefined ? { maxPassesInFlightPerNamespace: perNamespace } : {}),
      passHoldMs,
    });
    bridge.start();
    return bridge;
  }

  const releases = async (bridge: Bridge, reason: string): Promise<number> =>
    (await bridge.metrics.passSlotReleases.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;
  const inFlight = async (bridge: Bridge): Promise<number> =>
    (await bridge.metrics.passesInFlight.get()).values[0]?.value ?? 0;

  it("given team A's 40 new objects and 4 slots, it starts 4 passes, then team B's change first when one is seen done, and all of them as their status comes back", async () => {
    const teamA = new Widgets(t.custom, group, await newNamespace('aa'));
    const teamB = new Widgets(t.custom, group, await newNamespace('ab'));
    const shard = randomSuffix();
    const labels = { 'homeostat.dev/admission-test': shard };
    const limit = 4;
    const n = 40;
    const bridge = startBridge(shard, limit, 600_000); // a hold time far beyond the test: only status frees a slot
    try {
      await waitFor(() => bridge.ready, 30_000);
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < n) await teamA.create(`a${next++}`, 1, labels);
        }),
      );
      // Every creation seen; 4 delivered and holding their slots, 36 waiting in the bridge.
      await waitFor(
        async () => bridge.dirtyKeys === n - limit && (await inFlight(bridge)) === limit,
        60_000,
        100,
        () => `${limit} passes in flight and ${n - limit} waiting (dirty ${bridge.dirtyKeys})`,
      );
      const started = async (): Promise<string[]> => {
        const exists = await Promise.all(
          Array.from({ length: n }, (_, i) => workflowExists(t.temporal, teamA.ref(`a${i}`))),
        );
        return exists.flatMap((e, i) => (e ? [`a${i}`] : []));
      };
      const first = await started();
      expect(first).toHaveLength(limit); // without admission all 40 workflows are started at once

      await teamB.create('b0', 1, labels);
      await waitFor(() => bridge.dirtyKeys === n - limit + 1, 30_000, 100, "team B's change queued");
      expect(await workflowExists(t.temporal, teamB.ref('b0'))).toBe(false);

      // One of A's passes ends (its status shows generation 1): the freed slot goes to B, not to A's backlog.
      await teamA.patchStatus(first[0]!, { observedGeneration: 1, phase: 'Ready' });
      await waitFor(() => workflowExists(t.temporal, teamB.ref('b0')), 30_000, 100, "B's workflow started");
      expect(await started()).toEqual(first);
      expect(await inFlight(bridge)).toBe(limit);

      // A stale status (an older generation) does not end a pass.
      await teamA.patch(first[1]!, { spec: { size: 2 } }); // generation 2, merged into its slot
      await teamA.patchStatus(first[1]!, { observedGeneration: 1, phase: 'Ready' });
      await teamB.patchStatus('b0', { observedGeneration: 1, phase: 'Ready' }); // B's ends: one more of A
      await waitFor(async () => (await started()).length === limit + 1, 30_000, 100, "one more of A's started");
      expect(await releases(bridge, 'done')).toBe(2);

      // Every pass comes back as the test writes status: nothing is lost, every slot is freed.
      const done = new Set<string>([first[0]!]);
      await waitFor(
        async () => {
          for (const name of await started()) {
            if (done.has(name)) continue;
            const obj = await teamA.get(name);
            await teamA.patchStatus(name, { observedGeneration: obj.metadata.generation, phase: 'Ready' });
            done.add(name);
          }
          return done.size === n && bridge.dirtyKeys === 0 && (await inFlight(bridge)) === 0;
        },
        120_000,
        200,
        () => `every pass done (${done.size} of ${n}, dirty ${bridge.dirtyKeys})`,
      );
      expect(await releases(bridge, 'timeout')).toBe(0);
      expect(await releases(bridge, 'done')).toBe(n + 1);
    } finally {
      await bridge.stop();
    }
  });

  it("given team A's 30 new objects at its per-namespace share of 3, team B's new object is delivered at once, with A's backlog still waiting", async () => {
    const teamA = new Widgets(t.custom, group, await newNamespace('na'));
    const teamB = new Widgets(t.custom, group, await newNamespace('nb'));
    const shard = randomSuffix();
    const labels = { 'homeostat.dev/admission-test': shard };
    const n = 30;
    const bridge = startBridge(shard, 16, 600_000, 3);
    try {
      await waitFor(() => bridge.ready, 30_000);
      for (let i = 0; i < n; i++) await teamA.create(`a${i}`, 1, labels);
      await waitFor(
        async () => bridge.dirtyKeys === n - 3 && (await inFlight(bridge)) === 3,
        60_000,
        100,
        () => `A's 3 passes in flight and ${n - 3} waiting (dirty ${bridge.dirtyKeys})`,
      );
      await teamB.create('b0', 1, labels);
      // No pass of A ends: B is delivered into one of the 13 free slots, not after A's 27.
      await waitFor(() => workflowExists(t.temporal, teamB.ref('b0')), 30_000, 100, "B's workflow started");
      // B's delivery counts as dirty until its signal call returns, which may be after the workflow is
      // visible: wait for that state rather than read it at once. A's 27 cannot move meanwhile (no pass
      // of A ends within the 600 s hold), so this still proves B went first.
      await waitFor(
        async () => bridge.dirtyKeys === n - 3 && (await inFlight(bridge)) === 4,
        30_000,
        100,
        () => `B's delivery returned and A's ${n - 3} still waiting (dirty ${bridge.dirtyKeys})`,
      );
      const depth = (await bridge.metrics.queueDepth.get()).values.find((v) => v.labels.namespace === teamA.namespace);
      expect(depth?.value).toBe(n - 3); // A's waiting objects are shown while A is held back
    } finally {
      await bridge.stop();
    }
  });

  it('given passes never seen done (no worker writes status), each slot frees after the hold time and every object is still delivered', async () => {
    const team = new Widgets(t.custom, group, await newNamespace('ah'));
    const shard = randomSuffix();
    const n = 10;
    const bridge = startBridge(shard, 2, 500);
    try {
      await waitFor(() => bridge.ready, 30_000);
      for (let i = 0; i < n; i++) await team.create(`h${i}`, 1, { 'homeostat.dev/admission-test': shard });
      await waitFor(
        async () =>
          (await Promise.all(Array.from({ length: n }, (_, i) => workflowExists(t.temporal, team.ref(`h${i}`))))).every(
            Boolean,
          ),
        120_000,
        200,
        'every object delivered',
      );
      expect(await releases(bridge, 'timeout')).toBeGreaterThanOrEqual(n - 2);
      expect(await releases(bridge, 'done')).toBe(0);
    } finally {
      await bridge.stop();
    }
  });
});
