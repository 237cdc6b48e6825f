/**
 * Scenario 9, scale (issue 27): many objects in many namespaces on one machine. homeostat — its worker
 * and its bridge each in a process of its own, as deployed, the objects on a plan with the built-ins'
 * 30-minute drift check — and the in-process controller beside it, each through the same steps:
 *
 * 1. every object created at once → the time until all are Ready;
 * 2. a rest window: CPU seconds per minute of each process (`/proc`), normalised per 1,000 objects,
 *    the RSS of the worker and the bridge, and the Temporal actions of the objects' histories per
 *    second (no drift check falls in a window shorter than the interval: this is the floor);
 * 3. the worker and the bridge SIGKILLed at once and started again → the time until the new bridge
 *    has listed every object and finished its first audit of their workflows with nothing left to
 *    deliver (every object confirmed in line), and the passes and actions that cost;
 * 4. 1% of the objects changed at once → change → Ready, median and p99;
 * 5. (homeostat) a share of the objects annotated, one after the other, to a short drift-check
 *    interval, so that checks arrive at the rate the 30-minute default gives all of them (at 10,000
 *    objects and 5 minutes: 1,667 objects, 5.6 checks/s), then a second rest window: the drift checks
 *    it ran, actions and CPU per check, and from them the figures at the default interval (floor +
 *    checks per second × cost per check). Checked at the default's rate, not faster: a check's cost
 *    is measured under the load the default puts on the machine.
 *
 * The controller has no drift check (controller-runtime's resync period defaults to 10 hours); its
 * processes are the benchmark's own (its informers, work queues and the Ready watches).
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { temporal } from '@temporalio/proto';
import { workflowIdFor } from '../../core/definitions';
import { driftCheckAnnotation, durationMs } from '../../core/plan';
import { type Child, spawnChild } from '../children/spawn';
import { bridgeMetrics, spawnBridgeProcess } from '../children/bridge-process';
import type { WorkerChildOptions } from '../children/worker-child';
import { InProcessController } from '../controller';
import { historyCost } from '../history-cost';
import { createNamespace, createObject, forEachLimited, patchObject, patchSpec, ReadyWatch } from '../objects';
import { cpuSeconds, rssBytes, type ThreadCpu, threadCpuSeconds } from '../proc-stats';
import { benchDriftPlan } from '../reconciler';
import { round, summarize, type Summary } from '../stats';
import type { BenchContext } from '../systems';
import { historyFrom } from './at-rest';

const EventType = temporal.api.enums.v1.EventType;

/** What the scenario does, by size. */
export interface ScaleSize {
  /** Objects created at once, spread evenly over the namespaces. */
  readonly objects: number;
  readonly namespaces: number;
  /** Length of each rest window. */
  readonly restSeconds: number;
  /** The short drift-check interval of the second rest window (annotation). */
  readonly driftInterval: string;
}

/** CPU of one process over a window. */
export interface ProcessCpu {
  readonly cpuSecondsPerMinute: number;
  readonly cpuSecondsPerMinutePer1000: number;
}

/** What the objects' histories gained over a window. */
export interface HistorySpend {
  readonly events: number;
  readonly actions: number;
  /** Workflow tasks that ran local activities (each one a pass of the bench plan). */
  readonly passes: number;
  /** Drift timers fired. */
  readonly checks: number;
  readonly signals: number;
}

/** One rest window. */
export interface RestWindow {
  readonly seconds: number;
  /** By process: `worker`, `bridge`, `temporal`, `kube-apiserver`, `etcd` (homeostat); `bench` (the controller). */
  readonly cpu: Record<string, ProcessCpu>;
  /** The system's own processes together (worker and bridge; the controller's process), in % of one core per 1,000 objects. */
  readonly percentCorePer1000: number;
  readonly history: HistorySpend;
  readonly actionsPerSecond: number;
  readonly actionsPerSecondPer10000: number;
  /** homeostat's worker: CPU seconds per minute by {@link WorkerThreadGroup}. */
  readonly workerThreads?: Partial<Record<WorkerThreadGroup, number>>;
}

/**
 * What runs on a thread of homeostat's worker process: `main` (activities, the SDK's worker loop),
 * `workflow` (the workflow sandbox's thread), `rustCore` (the SDK's Core: its workflow state machines
 * and gRPC), `v8Helpers` (V8's background threads: concurrent GC and compilers), `libuv` (Node's
 * thread pool), `shortLived` (threads that ended in the window: Node starts a watchdog thread for
 * every sandbox call with a timeout), `other`.
 */
export type WorkerThreadGroup = 'main' | 'workflow' | 'rustCore' | 'v8Helpers' | 'libuv' | 'shortLived' | 'other';

/** The {@link WorkerThreadGroup} of a worker thread, by its name. */
export function workerThreadGroup(name: string): WorkerThreadGroup {
  if (name === 'MainThread') return 'main';
  if (name === 'WorkerThread') return 'workflow';
  if (/^(tokio-runtime|workflow-proces|temporal-)/.test(name)) return 'rustCore';
  if (name === 'V8Worker' || name === 'DelayedTaskSche') return 'v8Helpers';
  if (name === 'libuv-worker') return 'libuv';
  return 'other';
}

/**
 * CPU seconds per minute of each thread group between two readings of a process's threads: the
 * threads alive at the end (from 0 for one started in the window), and the process's CPU they do not
 * account for as `shortLived`.
 */
export function threadCpuByGroup(
  before: ReadonlyMap<number, ThreadCpu>,
  after: ReadonlyMap<number, ThreadCpu>,
  processSeconds: number,
  elapsedSeconds: number,
): Partial<Record<WorkerThreadGroup, number>> {
  const seconds: Partial<Record<WorkerThreadGroup, number>> = {};
  let onLive = 0;
  for (const [tid, t] of after) {
    const spent = t.seconds - (before.get(tid)?.seconds ?? 0);
    const group = workerThreadGroup(t.name);
    seconds[group] = (seconds[group] ?? 0) + spent;
    onLive += spent;
  }
  seconds.shortLived = Math.max(0, processSeconds - onLive);
  return Object.fromEntries(Object.entries(seconds).map(([g, v]) => [g, round((v / elapsedSeconds) * 60, 3)]));
}

/** Steps 1, 3 and 4, as both systems report them. */
export interface ScaleSteps {
  readonly create: { readonly allReadySeconds: number; readonly objectsPerSecond: number; readonly latency: Summary };
  readonly rest: RestWindow;
  readonly restart: {
    /** Kill → every object confirmed in line. */
    readonly confirmedSeconds: number;
    /** Passes and actions of the unchanged objects from the kill until 5 s after confirmation. */
    readonly history: HistorySpend;
    readonly actionsPerObject: number;
    /** Signals the new bridge sent, workflows its audit started (homeostat); 0 for the controller. */
    readonly signalsSent: number;
    readonly auditStarts: number;
  };
  readonly change: { readonly objects: number; readonly latency: Summary };
}

/** homeostat's figures. */
export interface ScaleHomeostat extends ScaleSteps {
  readonly memory: {
    readonly workerRssMiB: number;
    readonly bridgeRssMiB: number;
    /** Workflows in the worker's cache when its RSS was read. */
    readonly workerCached: number;
    readonly bridgeCached: number;
  };
  /** Step 5: the rest window at the short interval, and the costs per check derived from it. */
  readonly drift: RestWindow & {
    readonly interval: string;
    /** Objects put on the short interval (the rest keep the default). */
    readonly objectsChecked: number;
    /** Drift timers fired per second in the window. */
    readonly checksPerSecond: number;
    /** Actions per drift pass (the window's passes: its checks, and any pass of the annotation left over). */
    readonly actionsPerCheck: number;
    /** CPU ms per drift pass by process, above the floor window. */
    readonly cpuMsPerCheck: Record<string, number>;
    /** The worker's CPU ms per drift pass by thread group, above the floor window. */
    readonly workerMsPerCheckByThread: Partial<Record<WorkerThreadGroup, number>>;
    /** At the plan's 30-minute default: floor + checks/s × cost per check. */
    readonly atDefault: { readonly actionsPerSecondPer10000: number; readonly percentCorePer1000: number };
  };
}

/** The controller's figures (its RSS is the benchmark process's, watches included). */
export interface ScaleController extends ScaleSteps {
  readonly benchRssMiB: number;
}

/** The result of {@link scaleScenario}. */
export interface ScaleResult {
  readonly objects: number;
  readonly namespaces: number;
  readonly homeostat: ScaleHomeostat;
  readonly controller: ScaleController;
}

const MiB = 1024 * 1024;
const defaultIntervalMs = durationMs(benchDriftPlan.driftCheckInterval, 0);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** How long the restart's confirmation (and the annotations' delivery) may take before the run fails. */
const confirmTimeoutMs = 20 * 60_000;

/** The objects of one system: names, namespaces, and a Ready watch per namespace. */
class Fleet {
  readonly namespaces: string[];
  readonly watches = new Map<string, ReadyWatch>();
  constructor(
    private readonly ctx: BenchContext,
    prefix: string,
    private readonly size: ScaleSize,
  ) {
    this.namespaces = Array.from({ length: size.namespaces }, (_, i) => `${prefix}-${i}`);
  }
  at(i: number): { namespace: string; name: string } {
    return { namespace: this.namespaces[i % this.namespaces.length]!, name: `obj-${i}` };
  }
  workflowIds(): string[] {
    return Array.from({ length: this.size.objects }, (_, i) =>
      workflowIdFor({ group: benchDriftPlan.group, kind: benchDriftPlan.kind, ...this.at(i) }),
    );
  }
  async start(): Promise<void> {
    for (const ns of this.namespaces) {
      await createNamespace(this.ctx.kube, ns);
      const watch = new ReadyWatch(this.ctx.kube, ns);
      await watch.start();
      this.watches.set(ns, watch);
    }
  }
  /** Step 1: everything created at once (64 requests in flight). */
  async create(labels: Record<string, string>): Promise<ScaleSteps['create']> {
    const latencies: number[] = [];
    let last = 0;
    const readies: Promise<void>[] = [];
    const t0 = performance.now();
    await forEachLimited(this.size.objects, 64, async (i) => {
      const { namespace, name } = this.at(i);
      const started = performance.now();
      const ready = this.watches.get(namespace)!.waitReady(name, 1, 3_600_000);
      ready.catch(() => {});
      await createObject(this.ctx.kube, namespace, name, {}, { labels });
      readies.push(
        ready.then((at) => {
          latencies.push(at - started);
          last = Math.max(last, at);
        }),
      );
    });
    await Promise.all(readies);
    const seconds = (last - t0) / 1000;
    return {
      allReadySeconds: round(seconds, 1),
      objectsPerSecond: round(this.size.objects / seconds),
      latency: summarize(latencies),
    };
  }
  /** Step 4: 1% of the objects (at least one) changed at once. */
  async change(): Promise<ScaleSteps['change']> {
    const n = Math.max(1, Math.round(this.size.objects / 100));
    const stride = Math.floor(this.size.objects / n);
    const latencies = await Promise.all(
      Array.from({ length: n }, async (_, j) => {
        const { namespace, name } = this.at(j * stride);
        const started = performance.now();
        const obj = await patchSpec(this.ctx.kube, namespace, name, { round: 1 });
        const at = await this.watches.get(namespace)!.waitReady(name, obj.metadata.generation ?? 2, 900_000);
        return at - started;
      }),
    );
    return { objects: n, latency: summarize(latencies) };
  }
  stop(): void {
    for (const w of this.watches.values()) w.stop();
  }
}

/** Each workflow's run and history length. */
type HistoryMark = Map<string, { runId: string; length: number }>;

async function markHistories(ctx: BenchContext, ids: readonly string[]): Promise<HistoryMark> {
  const mark: HistoryMark = new Map();
  await forEachLimited(ids.length, 16, async (i) => {
    const d = await ctx.temporal.workflow.getHandle(ids[i]!).describe();
    mark.set(ids[i]!, { runId: d.runId, length: d.historyLength });
  });
  return mark;
}

/** What the histories gained since `mark` (only workflows whose run or length changed are fetched). */
async function spentSince(ctx: BenchContext, mark: HistoryMark): Promise<HistorySpend> {
  const total = { events: 0, actions: 0, passes: 0, checks: 0, signals: 0 };
  const ids = [...mark.keys()];
  await forEachLimited(ids.length, 16, async (i) => {
    const id = ids[i]!;
    const before = mark.get(id)!;
    const d = await ctx.temporal.workflow.getHandle(id).describe();
    if (d.runId === before.runId && d.historyLength === before.length) return;
    const events = (await historyFrom(ctx, id, before.runId)).slice(before.length);
    const cost = historyCost(events);
    total.events += cost.events;
    total.actions += cost.actions;
    total.checks += cost.byType.TIMER_FIRED ?? 0;
    total.signals += cost.byType.WORKFLOW_EXECUTION_SIGNALED ?? 0;
    let counted = false;
    for (const e of events) {
      if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) counted = false;
      else if (e.eventType === EventType.EVENT_TYPE_MARKER_RECORDED && !counted) {
        total.passes++;
        counted = true;
      }
    }
  });
  return total;
}

/** CPU seconds of each process (pid, or `self` for the benchmark's own). */
function cpuNow(pids: Record<string, number | 'self'>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(pids).map(([name, pid]) => {
      if (pid !== 'self') return [name, cpuSeconds(pid)];
      const u = process.cpuUsage();
      return [name, (u.user + u.system) / 1e6];
    }),
  );
}

/**
 * How many objects step 5 puts on the short drift interval: as many as make their checks arrive at the
 * rate the default interval gives all of them (`objects × short / default`), and at least 10 (or all)
 * so a small run still sees checks.
 */
export function driftCheckedObjects(objects: number, shortMs: number): number {
  return Math.min(objects, Math.max(10, Math.round((objects * shortMs) / defaultIntervalMs)));
}

/** A rest window: CPU of `pids` and the histories' gain over `seconds`. */
async function restWindow(
  ctx: BenchContext,
  objects: number,
  seconds: number,
  pids: Record<string, number | 'self'>,
  own: readonly string[],
  ids: readonly string[],
): Promise<RestWindow> {
  const mark = ids.length ? await markHistories(ctx, ids) : undefined;
  const workerPid = typeof pids.worker === 'number' ? pids.worker : undefined;
  const threadsBefore = workerPid ? threadCpuSeconds(workerPid) : undefined;
  const before = cpuNow(pids);
  const t0 = performance.now();
  const fromUs = process.hrtime.bigint() / 1000n;
  await sleep(seconds * 1000);
  const after = cpuNow(pids);
  const threadsAfter = workerPid ? threadCpuSeconds(workerPid) : undefined;
  const elapsed = (performance.now() - t0) / 1000;
  if (process.env.HOMEOSTAT_BENCH_CPU_PROFILE_DIR) {
    // The window on the clock of V8's CPU profiles (CLOCK_MONOTONIC, µs), to cut it out of a profile.
    ctx.progress(`scale: CPU window ${fromUs}..${process.hrtime.bigint() / 1000n} µs monotonic`);
  }
  const history = mark ? await spentSince(ctx, mark) : { events: 0, actions: 0, passes: 0, checks: 0, signals: 0 };
  const cpu: Record<string, ProcessCpu> = {};
  for (const name of Object.keys(pids)) {
    const perMinute = ((after[name]! - before[name]!) / elapsed) * 60;
    cpu[name] = {
      cpuSecondsPerMinute: round(perMinute, 3),
      cpuSecondsPerMinutePer1000: round((perMinute * 1000) / objects, 4),
    };
  }
  const ownPerMinutePer1000 = own.reduce((s, n) => s + (cpu[n]?.cpuSecondsPerMinutePer1000 ?? 0), 0);
  return {
    seconds: round(elapsed, 1),
    cpu,
    percentCorePer1000: round((ownPerMinutePer1000 / 60) * 100, 3),
    history,
    actionsPerSecond: round(history.actions / elapsed, 3),
    actionsPerSecondPer10000: round(((history.actions / elapsed) * 10_000) / objects, 3),
    ...(threadsBefore && threadsAfter
      ? {
          workerThreads: threadCpuByGroup(threadsBefore, threadsAfter, after.worker! - before.worker!, elapsed),
        }
      : {}),
  };
}

/**
 * homeostat's worker and bridge, each in a process of its own; the worker's cache holds every object's
 * workflow, as the README's sizing guide says to set it (the SDK's default, about 2,400 here, made most
 * drift checks of the first 10,000-object run replay their histories).
 */
function startHomeostat(
  ctx: BenchContext,
  taskQueue: string,
  labelSelector: string,
  objects: number,
): { worker: Child; bridge: Child } {
  const temporalOptions = { temporalAddress: ctx.temporalAddress, temporalNamespace: ctx.temporalNamespace };
  const worker = spawnChild('worker-child.ts', {
    kubeconfig: ctx.kubeconfig,
    ...temporalOptions,
    taskQueue,
    bundlePath: ctx.homeostatBundlePath,
    system: 'homeostatDrift',
    maxCachedWorkflows: objects,
    identity: `bench-scale-worker-${randomBytes(2).toString('hex')}`,
  } satisfies WorkerChildOptions);
  const bridge = spawnBridgeProcess({
    kubeconfig: ctx.kubeconfig,
    ...temporalOptions,
    taskQueue,
    labelSelector,
  });
  return { worker, bridge };
}

async function killed(child: Child): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) return;
  const exited = new Promise((r) => child.proc.once('exit', r));
  child.proc.kill('SIGKILL');
  await exited;
}

async function runHomeostat(ctx: BenchContext, size: ScaleSize): Promise<ScaleHomeostat> {
  const label = `${ctx.runId}-scale`;
  const fleet = new Fleet(ctx, `${ctx.runId}-scale-h`, size);
  const taskQueue = `${ctx.homeostatQueue}-scale`;
  const labelSelector = `bench.homeostat.dev/scale=${label}`;
  await fleet.start();
  let running = startHomeostat(ctx, taskQueue, labelSelector, size.objects);
  try {
    await Promise.all([running.worker.next('ready', 120_000), running.bridge.next('ready', 120_000)]);
    const create = await fleet.create({ 'bench.homeostat.dev/scale': label });
    ctx.progress(`scale homeostat: ${size.objects} Ready in ${create.allReadySeconds} s`);
    const servers = ctx.serverPids ?? {};
    const pids = () => ({ worker: running.worker.proc.pid!, bridge: running.bridge.proc.pid!, ...servers });
    const ids = fleet.workflowIds();
    await sleep(5_000); // the last workflow tasks complete
    const rest = await restWindow(ctx, size.objects, size.restSeconds, pids(), ['worker', 'bridge'], ids);
    ctx.progress(`scale homeostat: at rest ${rest.percentCorePer1000}% of a core per 1,000 objects`);
    running.worker.proc.send({ type: 'measure' });
    const measured = await running.worker.next('measured', 120_000);
    const bridgeNow = await bridgeMetrics(running.bridge);
    const memory = {
      workerRssMiB: round((measured.memory as { rss: number }).rss / MiB),
      bridgeRssMiB: round(rssBytes(running.bridge.proc.pid!) / MiB),
      workerCached: Number(measured.cached),
      bridgeCached: bridgeNow.cached,
    };

    // Step 3: every homeostat process killed at once, started again.
    const mark = await markHistories(ctx, ids);
    const killedAt = performance.now();
    await Promise.all([killed(running.worker), killed(running.bridge)]);
    running = startHomeostat(ctx, taskQueue, labelSelector, size.objects);
    await Promise.all([running.worker.next('ready', 300_000), running.bridge.next('ready', 300_000)]);
    let after = await bridgeMetrics(running.bridge);
    while (after.auditsOk < 1 || after.dirty > 0) {
      // An audit whose listing of the running workflows outlasts its deadline fails and is retried at
      // the next resync: a bound, so a run that cannot confirm says so instead of waiting forever.
      if (performance.now() - killedAt > confirmTimeoutMs) {
        throw new Error(
          `scale: not confirmed in line ${confirmTimeoutMs / 1000} s after the restart: ${JSON.stringify(after)}`,
        );
      }
      await sleep(250);
      after = await bridgeMetrics(running.bridge);
    }
    const confirmedSeconds = round((performance.now() - killedAt) / 1000, 1);
    await sleep(5_000);
    const restartSpend = await spentSince(ctx, mark);
    const restart = {
      confirmedSeconds,
      history: restartSpend,
      actionsPerObject: round(restartSpend.actions / size.objects, 4),
      signalsSent: after.signalsSent,
      auditStarts: after.auditStarts,
    };
    ctx.progress(`scale homeostat: restart confirmed in ${confirmedSeconds} s, ${restartSpend.actions} actions`);

    const change = await fleet.change();
    ctx.progress(`scale homeostat: 1% changed, p99 ${change.latency.p99Ms} ms`);

    // Step 5: drift checks at the rate the default interval gives this many objects. A share of the
    // objects (N × short / default) is annotated to the short interval, one after the other over one
    // short interval, so their timers fire as evenly as the default's would (not all in one burst).
    const shortMs = durationMs(size.driftInterval, 0);
    const checked = driftCheckedObjects(size.objects, shortMs);
    const t5 = performance.now();
    for (let k = 0; k < checked; k++) {
      const { namespace, name } = fleet.at(Math.floor((k * size.objects) / checked));
      await sleep(Math.max(0, t5 + (k * shortMs) / checked - performance.now()));
      await patchObject(ctx.kube, namespace, name, {
        metadata: { annotations: { [driftCheckAnnotation]: size.driftInterval } },
      });
    }
    for (const t0 = performance.now(); (await bridgeMetrics(running.bridge)).dirty > 0; await sleep(500)) {
      if (performance.now() - t0 > confirmTimeoutMs) throw new Error('scale: the annotations were never all delivered');
    }
    // The last annotation's pass ends and the first timers (jittered ±10%) have started to fire.
    await sleep(Math.max(0, t5 + 1.1 * shortMs - performance.now()));
    const drift = await restWindow(ctx, size.objects, size.restSeconds, pids(), ['worker', 'bridge'], ids);
    // Per pass, not per timer fired: a pass of the annotation still running in the window costs what a
    // check does (a workflow task of local activities and the timer it arms), and is counted as one.
    const passes = Math.max(1, drift.history.passes);
    /** CPU ms per pass of what used `perMinute` CPU s/min in the drift window and `floor` at rest. */
    const msPerPass = (perMinute: number, floor = 0): number =>
      round((((perMinute - floor) / 60) * drift.seconds * 1000) / passes, 2);
    const cpuMsPerCheck: Record<string, number> = {};
    for (const [name, c] of Object.entries(drift.cpu)) {
      cpuMsPerCheck[name] = msPerPass(c.cpuSecondsPerMinute, rest.cpu[name]?.cpuSecondsPerMinute);
    }
    const workerMsPerCheckByThread: Partial<Record<WorkerThreadGroup, number>> = {};
    for (const [group, perMinute] of Object.entries(drift.workerThreads ?? {})) {
      const g = group as WorkerThreadGroup;
      workerMsPerCheckByThread[g] = msPerPass(perMinute, rest.workerThreads?.[g]);
    }
    const actionsPerCheck = round(drift.history.actions / passes, 2);
    const defaultChecksPer1000PerSecond = 1000 / (defaultIntervalMs / 1000);
    const ownMsPerCheck = (cpuMsPerCheck.worker ?? 0) + (cpuMsPerCheck.bridge ?? 0);
    const atDefault = {
      actionsPerSecondPer10000: round(
        rest.actionsPerSecondPer10000 + actionsPerCheck * defaultChecksPer1000PerSecond * 10,
        3,
      ),
      percentCorePer1000: round(rest.percentCorePer1000 + (defaultChecksPer1000PerSecond * ownMsPerCheck) / 10, 3),
    };
    ctx.progress(
      `scale homeostat: ${drift.history.checks} drift checks of ${checked} objects at ${size.driftInterval}, ${actionsPerCheck} actions each; ` +
        `at the default: ${atDefault.actionsPerSecondPer10000} actions/s per 10,000, ${atDefault.percentCorePer1000}% core per 1,000`,
    );
    return {
      create,
      rest,
      memory,
      restart,
      change,
      drift: {
        ...drift,
        interval: size.driftInterval,
        objectsChecked: checked,
        checksPerSecond: round(drift.history.checks / drift.seconds, 2),
        actionsPerCheck,
        cpuMsPerCheck,
        workerMsPerCheckByThread,
        atDefault,
      },
    };
  } finally {
    await Promise.allSettled([running.worker.stop(), running.bridge.stop()]);
    fleet.stop();
  }
}

async function runController(ctx: BenchContext, size: ScaleSize): Promise<ScaleController> {
  const fleet = new Fleet(ctx, `${ctx.runId}-scale-c`, size);
  await fleet.start();
  const startAll = async (): Promise<InProcessController[]> =>
    Promise.all(
      fleet.namespaces.map(async (namespace) => {
        const c = new InProcessController({ kc: ctx.kube.kc, namespace });
        await c.start();
        return c;
      }),
    );
  let controllers = await startAll();
  try {
    const create = await fleet.create({});
    ctx.progress(`scale controller: ${size.objects} Ready in ${create.allReadySeconds} s`);
    await sleep(5_000);
    const pids = { bench: 'self' as const, ...(ctx.serverPids ?? {}) };
    const rest = await restWindow(ctx, size.objects, size.restSeconds, pids, ['bench'], []);
    const benchRssMiB = round(process.memoryUsage().rss / MiB);
    const stoppedAt = performance.now();
    await Promise.all(controllers.map((c) => c.stop()));
    controllers = await startAll(); // each lists its namespace and compares every object before it resolves
    const confirmedSeconds = round((performance.now() - stoppedAt) / 1000, 1);
    await sleep(5_000);
    const passes = controllers.reduce((n, c) => n + c.passes, 0);
    const restart = {
      confirmedSeconds,
      history: { events: 0, actions: 0, passes, checks: 0, signals: 0 },
      actionsPerObject: 0,
      signalsSent: 0,
      auditStarts: 0,
    };
    const change = await fleet.change();
    ctx.progress(`scale controller: restart ${confirmedSeconds} s, 1% changed p99 ${change.latency.p99Ms} ms`);
    return { create, rest, benchRssMiB, restart, change };
  } finally {
    await Promise.allSettled(controllers.map((c) => c.stop()));
    fleet.stop();
  }
}

/** Runs the scenario for homeostat, then for the in-process controller. */
export async function scaleScenario(ctx: BenchContext, size: ScaleSize): Promise<ScaleResult> {
  const homeostat = await runHomeostat(ctx, size);
  const controller = await runController(ctx, size);
  return { objects: size.objects, namespaces: size.namespaces, homeostat, controller };
}
