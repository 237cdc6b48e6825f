/**
 * Scenario 7, noisy neighbour (issue 27): team A creates many objects at once while team B changes one
 * object every second; B's change → Ready during A's flood against B's without it, with fairness on
 * (the bridge's default: every workflow carries its namespace as fairness key, the bridge's queue is
 * fair across namespaces) and off (`HOMEOSTAT_FAIRNESS=off`: one first-in, first-out backlog). One
 * bridge serves both teams (selected by a label of the scenario), in a process of its own as deployed,
 * so A's creates and the Ready watches in the benchmark's process do not delay its signals. Each mode
 * runs twice: on homeostat's regular-steps worker (each step an activity task, each pass several workflow tasks, so a flood backs
 * up both workflow and activity tasks on its task queue, and the worker's sticky queue, which Temporal
 * does not make fair) and on its local-steps worker (the steps run as local activities inside observe:
 * one workflow task per pass).
 */
import { performance } from 'node:perf_hooks';
import { bridgeMetrics, spawnBridgeProcess } from '../children/bridge-process';
import { type BenchObjectBody, createNamespace, forEachLimited, type Kube, patchSpec, ReadyWatch } from '../objects';
import { benchPlan } from '../reconciler';
import { workflowIdFor } from '../../core/definitions';
import { changeStages, type ChangeStages, stageNames, type TimedChange } from '../pass-stages';
import { round, summarize, type Summary } from '../stats';
import type { BenchContext } from '../systems';
import { historyFrom } from './at-rest';

/** B's object as a reference without its namespace and name. */
const benchRef = { group: benchPlan.group, version: benchPlan.version, kind: benchPlan.kind };

/** B's figures in one fairness mode. */
export interface NoisyNeighbourFigures {
  /** B's change → Ready with A quiet. */
  readonly quiet: Summary;
  /** B's change → Ready while A's objects were being created and reconciled. */
  readonly flood: Summary;
  /** A's first create → A's last object Ready. */
  readonly floodSeconds: number;
  /** A's first create → its last create answered (the floor: paced to the local-steps run's). */
  readonly createSeconds?: number;
  /** flood p99 ÷ quiet p99. */
  readonly p99Ratio: number;
  /**
   * Where B's changes during the flood waited, stage by stage, from B's workflow history
   * ({@link changeStages}): median and p99 of each stage over the changes found in history.
   */
  readonly floodStages?: Record<keyof ChangeStages, Summary>;
  /**
   * The bridge's pass slots freed over the mode, by reason (`done`, `timeout`, `failed`: see the bridge's
   * `maxPassesInFlight`); many timeouts mean passes outlasted the hold time and more ran than the limit.
   */
  readonly slotReleases?: Readonly<Record<string, number>>;
}

/** The result of {@link noisyNeighbourScenario}. */
export interface NoisyNeighbourResult {
  /** Objects team A creates at once. */
  readonly floodObjects: number;
  /** B's changes measured with A quiet (as many again during the flood, at least). */
  readonly quietChanges: number;
  /** On the regular-steps worker (each step an activity task); absent when the run asked for local steps only. */
  readonly modes?: { readonly on: NoisyNeighbourFigures; readonly off: NoisyNeighbourFigures };
  /** On the local-steps worker (the steps run as local activities: one workflow task per pass). */
  readonly localSteps?: { readonly on: NoisyNeighbourFigures; readonly off: NoisyNeighbourFigures };
  /**
   * The floor: A's objects created at the pace of the local-steps run with fairness on, but outside the
   * bridge's selector, so nothing reconciles them (B on the local-steps worker, fairness on). What A's
   * creation alone costs B on this machine (the API server, etcd, the benchmark's process);
   * `floodSeconds` is then A's creation time.
   */
  readonly floor?: NoisyNeighbourFigures;
}

/** Which worker runs the objects' passes: regular steps (activity tasks) or local steps. */
export type NoisySteps = 'regular' | 'local';

/** Waits `ms` (none when it is negative: a pace already behind). */
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** Creates a labelled `BenchObject` (the scenario's bridge selects its objects by that label). */
async function createLabelled(kube: Kube, namespace: string, name: string, label: string): Promise<BenchObjectBody> {
  return (await kube.custom.createNamespacedCustomObject({
    group: benchPlan.group,
    version: benchPlan.version,
    plural: benchPlan.plural,
    namespace,
    body: {
      apiVersion: `${benchPlan.group}/${benchPlan.version}`,
      kind: benchPlan.kind,
      metadata: { name, labels: { 'bench.homeostat.dev/noisy': label } },
      spec: {},
    },
  })) as BenchObjectBody;
}

/** One of B's changes: its change → Ready (ms), and its generation and times (epoch ms) for the stages. */
type Change = TimedChange & { readonly ms: number };

const epochOf = (now: number): number => performance.timeOrigin + now;

/**
 * Changes B's object once a second until `until()` holds (and at least `min` times); resolves with
 * each change's change → Ready.
 */
async function changeEverySecond(
  kube: Kube,
  watch: ReadyWatch,
  namespace: string,
  name: string,
  min: number,
  until: () => boolean,
  round0: { n: number },
): Promise<Change[]> {
  const waits: Promise<Change>[] = [];
  for (let i = 0; i < min || !until(); i++) {
    const started = performance.now();
    const obj = await patchSpec(kube, namespace, name, { round: ++round0.n });
    const generation = obj.metadata.generation ?? 0;
    const ready = watch.waitReady(name, generation, 900_000).then((at) => ({
      ms: at - started,
      generation,
      changedAt: epochOf(started),
      readyAt: epochOf(at),
    }));
    ready.catch(() => {});
    waits.push(ready);
    await sleep(Math.max(0, 1000 - (performance.now() - started)));
  }
  return Promise.all(waits);
}

async function runMode(
  ctx: BenchContext,
  mode: 'on' | 'off' | 'floor',
  floodObjects: number,
  quietChanges: number,
  steps: NoisySteps,
  /** Spread A's creates over this long (the floor, paced like a reconciled run); none: as fast as they go. */
  paceSeconds?: number,
): Promise<NoisyNeighbourFigures> {
  const tag = steps === 'regular' ? mode : `${mode}-local`;
  /** A's objects: the bridge's selector, or (the floor) a label it does not select. */
  const labelA = mode === 'floor' ? `${ctx.runId}-${tag}-unreconciled` : `${ctx.runId}-${tag}`;
  const label = `${ctx.runId}-${tag}`;
  const [nsA, nsB] = [`${ctx.runId}-nn-${tag}-a`, `${ctx.runId}-nn-${tag}-b`];
  await createNamespace(ctx.kube, nsA);
  await createNamespace(ctx.kube, nsB);
  const [watchA, watchB] = [new ReadyWatch(ctx.kube, nsA), new ReadyWatch(ctx.kube, nsB)];
  await Promise.all([watchA.start(), watchB.start()]);
  // The bridge in a process of its own, as deployed: A's creates and the Ready watches of this process
  // do not share its event loop.
  const bridge = spawnBridgeProcess({
    kubeconfig: ctx.kubeconfig,
    temporalAddress: ctx.temporalAddress,
    temporalNamespace: ctx.temporalNamespace,
    taskQueue: steps === 'regular' ? ctx.homeostatRegularQueue : ctx.homeostatQueue,
    labelSelector: `bench.homeostat.dev/noisy=${label}`,
    plan: 'bench',
    ...(mode === 'off' ? { fairness: false as const } : {}),
    ...(ctx.maxPassesInFlight !== undefined ? { maxPassesInFlight: ctx.maxPassesInFlight } : {}),
    ...(ctx.maxPassesInFlightPerNamespace !== undefined
      ? { maxPassesInFlightPerNamespace: ctx.maxPassesInFlightPerNamespace }
      : {}),
  });
  try {
    await bridge.next('ready', 120_000);
    const b = 'b-0';
    const bReady = watchB.waitReady(b, 1, 300_000);
    await createLabelled(ctx.kube, nsB, b, label);
    await bReady;
    const bWorkflowId = workflowIdFor({ ...benchRef, namespace: nsB, name: b });
    const bFirstRun = (await ctx.temporal.workflow.getHandle(bWorkflowId).describe()).runId;
    const rounds = { n: 0 };
    const quiet = await changeEverySecond(ctx.kube, watchB, nsB, b, quietChanges, () => true, rounds);

    // A's flood, with B changing once a second until every one of A's objects is Ready.
    let floodDone = false;
    const t0 = performance.now();
    const aReady: Promise<number>[] = [];
    let created = t0;
    const flood = (async () => {
      await forEachLimited(floodObjects, 64, async (i) => {
        const name = `a-${i}`;
        if (paceSeconds !== undefined) await sleep(t0 + (i * paceSeconds * 1000) / floodObjects - performance.now());
        if (mode !== 'floor') {
          const ready = watchA.waitReady(name, 1, 1_800_000);
          ready.catch(() => {});
          aReady.push(ready);
        }
        await createLabelled(ctx.kube, nsA, name, labelA);
      });
      created = performance.now();
      if (mode === 'floor') aReady.push(Promise.resolve(performance.now()));
      const last = Math.max(...(await Promise.all(aReady)));
      floodDone = true;
      return last;
    })();
    flood.catch(() => {
      floodDone = true;
    });
    const during = await changeEverySecond(ctx.kube, watchB, nsB, b, quietChanges, () => floodDone, rounds);
    const lastA = await flood;
    const stages = await changeStages(
      ctx.temporal.options.loadedDataConverter,
      await historyFrom(ctx, bWorkflowId, bFirstRun),
      during,
    );
    const figures = {
      quiet: summarize(quiet.map((c) => c.ms)),
      flood: summarize(during.map((c) => c.ms)),
      floodSeconds: round((lastA - t0) / 1000, 1),
      createSeconds: round((created - t0) / 1000, 1),
    };
    const floodStages = Object.fromEntries(stageNames.map((k) => [k, summarize(stages.map((st) => st[k]))])) as Record<
      keyof ChangeStages,
      Summary
    >;
    const { slotReleases } = await bridgeMetrics(bridge);
    const result = {
      ...figures,
      p99Ratio: round(figures.flood.p99Ms / Math.max(1, figures.quiet.p99Ms), 2),
      ...(stages.length > 0 ? { floodStages } : {}),
      slotReleases,
    };
    ctx.progress(
      `noisy neighbour, ${steps} steps, fairness ${mode}: B p99 ${result.quiet.p99Ms} ms quiet, ${result.flood.p99Ms} ms during A's ` +
        `${floodObjects} (${result.p99Ratio}×); A all Ready in ${result.floodSeconds} s; B's stages during the flood ` +
        `(median ms): ${stageNames.map((k) => `${k} ${floodStages[k].medianMs}`).join(', ')} (${stages.length} of ${during.length} changes in history); pass slots freed: ${JSON.stringify(slotReleases)}`,
    );
    return result;
  } finally {
    await bridge.stop();
    watchA.stop();
    watchB.stop();
  }
}

/**
 * Runs the scenario with fairness on, then off: on the regular-steps worker (unless `steps` leaves it
 * out), then on the local-steps one; then the floor (A created, not reconciled).
 */
export async function noisyNeighbourScenario(
  ctx: BenchContext,
  floodObjects: number,
  quietChanges: number,
  steps: readonly NoisySteps[] = ['regular', 'local'],
): Promise<NoisyNeighbourResult> {
  const modes = steps.includes('regular')
    ? {
        on: await runMode(ctx, 'on', floodObjects, quietChanges, 'regular'),
        off: await runMode(ctx, 'off', floodObjects, quietChanges, 'regular'),
      }
    : undefined;
  if (!steps.includes('local')) return { floodObjects, quietChanges, ...(modes ? { modes } : {}) };
  const localOn = await runMode(ctx, 'on', floodObjects, quietChanges, 'local');
  const localOff = await runMode(ctx, 'off', floodObjects, quietChanges, 'local');
  // A's creates at the pace they went in the local-steps run with fairness on (the API server shared
  // with reconciling A made them slower there): the load of creating alone, at the same rate.
  const floor = await runMode(ctx, 'floor', floodObjects, quietChanges, 'local', localOn.createSeconds);
  return {
    floodObjects,
    quietChanges,
    ...(modes ? { modes } : {}),
    localSteps: { on: localOn, off: localOff },
    floor,
  };
}
