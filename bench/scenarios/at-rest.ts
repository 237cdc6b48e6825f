/**
 * Scenario 6, at rest: what a built-in object that never changes costs on Temporal Cloud, counted
 * from its real history. One object of each built-in kind (PostgresServer, PostgresDatabase, App) runs
 * at its plan's default drift interval, and a PostgresDatabase and an App at a short interval set by
 * the `homeostat.dev/drift-check-interval` annotation. Each is created at the start of the run, left
 * alone while the other scenarios run, and measured over whole idle cycles: the actions after its last
 * pass before it settled (found while the other scenarios run) up to the timer armed after its last
 * measured check (following continue-as-new), over the time from the start of the drift timer running
 * when it settled to that last timer. The run waits after the other scenarios only for the cycles
 * they did not already cover. Actions are counted with Temporal Cloud's rule ({@link historyCost}) and the
 * measured rate is scaled to a 30-day month: nothing is assumed about what a check costs.
 */
import { randomBytes } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { NativeConnection } from '@temporalio/worker';
import { builtinOperator } from '../../builtin';
import { defaultSystemNamespace } from '../../builtin/postgres-database';
import { installOperatorCrds } from '../../cli/install-crds';
import { stateQuery, workflowIdFor, type ObjectRef } from '../../core/definitions';
import { driftCheckAnnotation, durationMs } from '../../core/plan';
import { Bridge } from '../../informer-bridge';
import { watchedResourcesFor } from '../../informer-bridge/operator-resources';
import { bundleObjectWorkflows, createHomeostatWorker } from '../../workers/create-worker';
import { historyCost } from '../history-cost';
import { createNamespace } from '../objects';
import { round } from '../stats';
import type { BenchContext } from '../systems';
import { usdPerMillionActions } from './cost';

const EventType = temporal.api.enums.v1.EventType;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** A 30-day month, in milliseconds. */
const monthMs = 30 * 24 * 3600 * 1000;

/** What the scenario measures, by size. */
export interface AtRestSize {
  /** The short interval (annotation) of the second PostgresDatabase and App. */
  readonly shortInterval: string;
  /** Idle drift checks measured at the short interval. */
  readonly shortCycles: number;
  /**
   * An annotation for the "default" objects too, so a small run need not wait half an hour; the full
   * size leaves it unset and measures the plans' own defaults.
   */
  readonly defaultOverride?: string;
}

/** One measured object. */
export interface AtRestFigures {
  readonly kind: string;
  /** The interval it ran at, as configured (the plan's default or the annotation). */
  readonly interval: string;
  readonly isDefault: boolean;
  /** Drift checks in the measured window (each one a timer firing and a pass). */
  readonly checks: number;
  /** Length of the measured window (whole idle cycles), in seconds. */
  readonly idleSeconds: number;
  readonly events: number;
  readonly actions: number;
  readonly actionsPerCheck: number;
  /** Runs that continued as new inside the window. */
  readonly continuedAsNew: number;
  /** `actions` over `idleSeconds`, scaled to 30 days, at the price assumption. */
  readonly usdPerObjectMonth: number;
}

/** The result of the scenario. */
export interface AtRestResult {
  readonly objects: readonly AtRestFigures[];
}

/** A running at-rest measurement: started before the other scenarios, finished after them. */
export interface AtRestRun {
  /** Waits for every object's cycles, measures, and stops the worker and bridge. */
  finish(): Promise<AtRestResult>;
  /** Stops the worker and bridge without measuring (a run that failed elsewhere); idempotent. */
  stop(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const isTimerStarted = (e: HistoryEvent): boolean => e.eventType === EventType.EVENT_TYPE_TIMER_STARTED;

const eventMs = (e: HistoryEvent): number =>
  Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);

interface Subject {
  readonly ref: ObjectRef;
  readonly kind: string;
  readonly interval: string;
  readonly isDefault: boolean;
  readonly cycles: number;
}

/**
 * Starts the at-rest objects on a worker and bridge of their own (the built-in operator), in a
 * namespace of their own, with a `PostgresServer` whose admin Secret lives in homeostat's system
 * namespace. {@link AtRestRun.finish} waits until every object has completed its cycles, measures,
 * and stops what it started.
 */
export async function startAtRest(ctx: BenchContext, size: AtRestSize): Promise<AtRestRun> {
  const namespace = `${ctx.runId}-rest`;
  const suffix = randomBytes(3).toString('hex');
  const taskQueue = `${ctx.homeostatQueue}-rest`;
  await createNamespace(ctx.kube, namespace);
  // homeostat's own namespace (shared with whatever else runs on the stack): created if absent, kept.
  await ctx.kube.core
    .createNamespace({ body: { metadata: { name: defaultSystemNamespace } } })
    .catch((err: { code?: number }) => {
      if (err.code !== 409) throw err;
    });
  await installOperatorCrds(ctx.kube.kc, builtinOperator);

  const connection = await NativeConnection.connect({ address: ctx.temporalAddress });
  const worker = await createHomeostatWorker({
    connection,
    namespace: ctx.temporalNamespace,
    taskQueue,
    workflowBundle: await bundleObjectWorkflows(undefined, ctx.log),
    operator: builtinOperator,
    kc: ctx.kube.kc,
    logger: ctx.log,
    identity: `bench-rest-${process.pid}`,
  });
  const running = worker.run();
  const bridge = new Bridge({
    kc: ctx.kube.kc,
    resources: await watchedResourcesFor(builtinOperator, ctx.kube.kc),
    operator: builtinOperator,
    namespace,
    client: ctx.temporal,
    taskQueue,
    log: ctx.log,
    leaderElection: false,
  });
  bridge.start();
  let halted = false;
  const stopNow = async (): Promise<void> => {
    halted = true;
    await bridge.stop(5_000).catch(() => {});
    worker.shutdown();
    await running.catch(() => {});
    await connection.close().catch(() => {});
  };
  let stopped: Promise<void> | undefined;
  const stopAll = (): Promise<void> => (stopped ??= stopNow());

  try {
    const server = `${ctx.runId}-rest-${suffix}`;
    await ctx.kube.core.createNamespacedSecret({
      namespace: defaultSystemNamespace,
      body: { metadata: { name: `${server}-admin` }, stringData: { url: ctx.postgresUrl } },
    });
    const annotations = (interval: string | undefined): Record<string, string> | undefined =>
      interval ? { [driftCheckAnnotation]: interval } : undefined;
    const create = async (plural: string, kind: string, name: string, spec: unknown, interval?: string) => {
      const metadata = { name, ...(annotations(interval) ? { annotations: annotations(interval) } : {}) };
      const body = { apiVersion: 'homeostat.dev/v1alpha1', kind, metadata, spec };
      if (kind === 'PostgresServer') {
        await ctx.kube.custom.createClusterCustomObject({ group: 'homeostat.dev', version: 'v1alpha1', plural, body });
      } else {
        await ctx.kube.custom.createNamespacedCustomObject({
          group: 'homeostat.dev',
          version: 'v1alpha1',
          namespace,
          plural,
          body,
        });
      }
    };
    await create(
      'postgresservers',
      'PostgresServer',
      server,
      {
        adminSecretRef: { name: `${server}-admin` },
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
        extensions: [],
      },
      size.defaultOverride,
    );
    const database = (name: string) => ({
      serverRef: { name: server },
      databaseName: `rest_${suffix}_${name}`,
      ownerRole: `rest_${suffix}_${name}`,
    });
    const app = { image: 'registry.example/at-rest:1', replicas: 1, port: 8080 };
    const subjects: Subject[] = [];
    const ref = (kind: string, name: string, ns = namespace): ObjectRef => ({
      group: 'homeostat.dev',
      version: 'v1alpha1',
      kind,
      namespace: ns,
      name,
    });
    const defaultOf = (kind: 'PostgresServer' | 'PostgresDatabase' | 'App'): string =>
      size.defaultOverride ??
      String(builtinOperator.reconcilers.find((r) => r.plan.kind === kind)?.plan.driftCheckInterval ?? 'none');
    subjects.push({
      ref: ref('PostgresServer', server, ''),
      kind: 'PostgresServer',
      interval: defaultOf('PostgresServer'),
      isDefault: size.defaultOverride === undefined,
      cycles: 1,
    });
    for (const [kind, plural] of [
      ['PostgresDatabase', 'postgresdatabases'],
      ['App', 'apps'],
    ] as const) {
      const spec = (name: string) => (kind === 'App' ? app : database(name));
      await create(plural, kind, 'default', spec('default'), size.defaultOverride);
      subjects.push({
        ref: ref(kind, 'default'),
        kind,
        interval: defaultOf(kind),
        isDefault: size.defaultOverride === undefined,
        cycles: 1,
      });
      await create(plural, kind, 'short', spec('short'), size.shortInterval);
      subjects.push({
        ref: ref(kind, 'short'),
        kind,
        interval: size.shortInterval,
        isDefault: false,
        cycles: size.shortCycles,
      });
    }
    ctx.progress(`at rest: ${subjects.length} built-in objects created, measured after the other scenarios`);
    // Each object's settle point is found now, while the other scenarios run, so its idle cycles count
    // from there and the run waits after them only for what the cycles still lack.
    const settledAt = subjects.map((subject) => settle(ctx, subject, () => halted));
    // A failure is reported by finish(); until then it must not be an unhandled rejection.
    for (const p of settledAt) p.catch(() => {});

    return {
      stop: stopAll,
      async finish(): Promise<AtRestResult> {
        try {
          const objects: AtRestFigures[] = [];
          for (const [i, subject] of subjects.entries()) {
            const figures = await measure(ctx, subject, await settledAt[i]!);
            ctx.progress(
              `at rest: ${subject.kind} every ${subject.interval}: ${figures.actions} actions in ${figures.checks} checks ` +
                `over ${figures.idleSeconds} s → $${figures.usdPerObjectMonth} per object-month`,
            );
            objects.push(figures);
          }
          return { objects };
        } finally {
          await stopAll();
        }
      },
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** The events of a workflow from run `runId` on, following continue-as-new. */
export async function historyFrom(ctx: BenchContext, workflowId: string, runId: string): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  let next: string | undefined = runId;
  while (next) {
    const history: temporal.api.history.v1.IHistory = await ctx.temporal.workflow
      .getHandle(workflowId, next)
      .fetchHistory();
    const runEvents: HistoryEvent[] = history.events ?? [];
    events.push(...runEvents);
    next =
      runEvents[runEvents.length - 1]?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return events;
}

/**
 * Where an object settled: the run it was in, the index of its settle pass's last event (the actions
 * after it are idle ones), and when the drift timer running then was started (the idle time counts
 * from there, so the first cycle is a whole one).
 */
interface SettlePoint {
  readonly runId: string;
  readonly first: number;
  readonly cycleStartMs: number;
}

/**
 * Waits until the object settled (Ready, nothing pending, a drift timer armed) and returns the last
 * event of its last pass then, with the start of the timer that was running. The passes right after
 * a create (its children and what it references changing) share the first pass's timer: they come
 * after that timer started and are not idle, so their actions are left out, while the idle time runs
 * from the timer's start (a window from the settle point would miss the part of the first cycle before
 * it, and overstate the rate).
 */
async function settle(ctx: BenchContext, subject: Subject, halted: () => boolean): Promise<SettlePoint> {
  const workflowId = workflowIdFor(subject.ref);
  const handle: WorkflowHandle = ctx.temporal.workflow.getHandle(workflowId);
  for (let i = 0; ; i++) {
    const state = await handle.query(stateQuery).catch(() => undefined);
    if (state && !state.reconciling && !state.pending && state.lastOutcome?.result === 'ready') break;
    if (i > 1200 || halted()) throw new Error(`at rest: ${workflowId} never became Ready: ${JSON.stringify(state)}`);
    await sleep(500);
  }
  const { runId } = await handle.describe();
  const started = await historyFrom(ctx, workflowId, runId);
  const timer = started.findLast(isTimerStarted);
  if (!timer) throw new Error(`at rest: ${workflowId} armed no drift timer`);
  return { runId, first: started.length - 1, cycleStartMs: eventMs(timer) };
}

/** Waits until the object completed its cycles after its settle point, and counts the window. */
async function measure(
  ctx: BenchContext,
  subject: Subject,
  { runId, first, cycleStartMs }: SettlePoint,
): Promise<AtRestFigures> {
  const workflowId = workflowIdFor(subject.ref);
  // Wait for `cycles` timers armed after that: each one follows a completed drift check (at most the
  // interval plus its 10% jitter each, and time for the pass).
  const deadline = Date.now() + subject.cycles * (durationMs(subject.interval, 0) * 1.1 + 60_000) + 60_000;
  for (let waited = 0; ; waited++) {
    const events = await historyFrom(ctx, workflowId, runId);
    const window = events.slice(first + 1);
    const armed: number[] = [];
    window.forEach((e, i) => {
      if (isTimerStarted(e)) armed.push(i);
    });
    if (armed.length >= subject.cycles) {
      const last = armed[subject.cycles - 1]!;
      const counted = window.slice(0, last + 1);
      const cost = historyCost(counted);
      const checks = counted.filter((e) => e.eventType === EventType.EVENT_TYPE_TIMER_FIRED).length;
      const idleMs = eventMs(counted[counted.length - 1]!) - cycleStartMs;
      return {
        kind: subject.kind,
        interval: subject.interval,
        isDefault: subject.isDefault,
        checks,
        idleSeconds: round(idleMs / 1000, 1),
        events: cost.events,
        actions: cost.actions,
        actionsPerCheck: round(cost.actions / Math.max(1, checks), 2),
        continuedAsNew: counted.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW)
          .length,
        usdPerObjectMonth: round(((cost.actions / idleMs) * monthMs * usdPerMillionActions) / 1e6, 4),
      };
    }
    if (Date.now() > deadline) {
      throw new Error(`at rest: ${workflowId} made ${armed.length} of ${subject.cycles} drift checks in time`);
    }
    if (waited % 60 === 0 && waited > 0) {
      ctx.progress(`at rest: waiting for ${workflowId}'s drift checks (${armed.length}/${subject.cycles})`);
    }
    await sleep(5_000);
  }
}
