/**
 * Scenario 5, cost: history events and Temporal actions per steady-state pass (a reconcile request
 * for an object that is already Ready: nothing to write), computed from the fetched histories of a
 * homeostat object workflow and of a raw-baseline workflow, against the minimum for N steps, and the
 * price per million reconciles at a stated Temporal Cloud list price. Also the cost of the first
 * passes (create → Ready and settled).
 */
import type { temporal } from '@temporalio/proto';
import { historyCost } from '../history-cost';
import { reconcileRequestedSignal, stateQuery, workflowIdFor } from '../../core/definitions';
import { createNamespace, createObject, ReadyWatch } from '../objects';
import { rawPassesQuery, rawReconcileSignal } from '../raw/definitions';
import { benchPlan, benchSteps } from '../reconciler';
import { round } from '../stats';
import { type BenchContext, rawWorkflowId, startSystem } from '../systems';

/** The price assumption: USD per million Temporal Cloud actions. */
export const usdPerMillionActions = 50;

/** The price assumption, as printed under the table. */
export const priceAssumption =
  `$${usdPerMillionActions} per million actions: Temporal Cloud's list price at the lowest volume tier ` +
  '(higher volumes cost less per action; storage and plan fees not included)';

/** One system's cost figures. */
export interface CostFigures {
  readonly eventsPerPass: number;
  readonly actionsPerPass: number;
  /** `actionsPerPass` × the price assumption. */
  readonly usdPerMillionReconciles: number;
  /** Events by type in the measured steady passes (all of them, not per pass). */
  readonly byType: Record<string, number>;
  /** The workflow's history from its start until it settled after the object became Ready. */
  readonly firstPasses: { readonly events: number; readonly actions: number };
}

/** The result of {@link costScenario}. */
export interface CostResult {
  readonly steps: number;
  /** Steady-state passes measured per system. */
  readonly passes: number;
  /** About 4 + 6N events and 1 + N actions for N steps run as regular activities (docs/architecture.md, "Cost"). */
  readonly minimum: {
    readonly eventsPerPass: number;
    readonly actionsPerPass: number;
    readonly usdPerMillionReconciles: number;
  };
  readonly price: { readonly usdPerMillionActions: number; readonly assumption: string };
  /** homeostat with the steps as local activities. */
  readonly homeostat: CostFigures;
  /** homeostat with the steps as regular activities. */
  readonly homeostatRegular: CostFigures;
  readonly rawTemporal: CostFigures;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('cost scenario: timed out waiting for a pass');
    await sleep(20);
  }
}

/** Runs `passes` steady-state passes on a homeostat workflow and a raw workflow and counts their cost. */
export async function costScenario(ctx: BenchContext, passes: number): Promise<CostResult> {
  const namespace = `${ctx.runId}-cost`;
  await createNamespace(ctx.kube, namespace);
  const watch = new ReadyWatch(ctx.kube, namespace);
  await watch.start();
  const figures = async (
    fetch: () => Promise<temporal.api.history.v1.IHistoryEvent[]>,
    onePass: (i: number) => Promise<void>,
  ): Promise<CostFigures> => {
    const before = await fetch();
    for (let i = 1; i <= passes; i++) await onePass(i);
    await sleep(500); // the last workflow task's completion
    const after = await fetch();
    const steady = historyCost(after.slice(before.length));
    const first = historyCost(before);
    const actionsPerPass = round(steady.actions / passes, 2);
    return {
      eventsPerPass: round(steady.events / passes, 2),
      actionsPerPass,
      usdPerMillionReconciles: round(actionsPerPass * usdPerMillionActions, 2),
      byType: steady.byType,
      firstPasses: { events: first.events, actions: first.actions },
    };
  };

  // homeostat: created through the bridge; then the bridge stops and the requests come from here.
  const homeostatCost = async (system: 'homeostat' | 'homeostatRegular'): Promise<CostFigures> => {
    const hsName = system === 'homeostat' ? 'cost-homeostat' : 'cost-homeostat-regular';
    const ref = { group: benchPlan.group, version: benchPlan.version, kind: benchPlan.kind, namespace, name: hsName };
    const hs = await startSystem(ctx, system, namespace);
    const hsReady = watch.waitReady(hsName, 1);
    const hsObj = await createObject(ctx.kube, namespace, hsName);
    await hsReady;
    const handle = ctx.temporal.workflow.getHandle(workflowIdFor(ref));
    const idle = async (): Promise<number | undefined> => {
      const s = await handle.query(stateQuery);
      return s.reconciling || s.pending ? undefined : s.passes;
    };
    // A change of the first pass that the bridge reports (a finalizer, on plans with cleanup) would run
    // a second pass: let it finish too.
    await sleep(1500);
    await until(async () => (await idle()) !== undefined);
    await hs.stop();
    return figures(
      async () => (await handle.fetchHistory()).events ?? [],
      async () => {
        const done = (await idle()) ?? 0;
        await handle.signal(reconcileRequestedSignal, {
          ref,
          uid: hsObj.metadata.uid!,
          generation: hsObj.metadata.generation ?? 1,
          resourceVersion: hsObj.metadata.resourceVersion ?? '',
          reason: 'resync',
        });
        await until(async () => ((await idle()) ?? -1) > done);
      },
    );
  };
  const homeostat = await homeostatCost('homeostat');
  const homeostatRegular = await homeostatCost('homeostatRegular');

  // raw baseline: signal-with-start from here.
  const rawName = 'cost-raw';
  const raw = await startSystem(ctx, 'rawTemporal', namespace);
  const rawReady = watch.waitReady(rawName, 1);
  const rawObj = await createObject(ctx.kube, namespace, rawName);
  await raw.notify(rawObj);
  await rawReady;
  const rawHandle = ctx.temporal.workflow.getHandle(rawWorkflowId(namespace, rawName));
  await until(async () => (await rawHandle.query(rawPassesQuery)) >= 1);
  const rawTemporal = await figures(
    async () => (await rawHandle.fetchHistory()).events ?? [],
    async (i) => {
      await rawHandle.signal(rawReconcileSignal, { namespace, name: rawName, generation: 1 });
      await until(async () => (await rawHandle.query(rawPassesQuery)) >= i + 1);
    },
  );
  watch.stop();

  const minActions = 1 + benchSteps;
  const result: CostResult = {
    steps: benchSteps,
    passes,
    minimum: {
      eventsPerPass: 4 + 6 * benchSteps,
      actionsPerPass: minActions,
      usdPerMillionReconciles: minActions * usdPerMillionActions,
    },
    price: { usdPerMillionActions, assumption: priceAssumption },
    homeostat,
    homeostatRegular,
    rawTemporal,
  };
  ctx.progress(
    `cost: homeostat ${homeostat.eventsPerPass} events / ${homeostat.actionsPerPass} actions per pass; ` +
      `with regular steps ${homeostatRegular.eventsPerPass} / ${homeostatRegular.actionsPerPass}; ` +
      `raw ${rawTemporal.eventsPerPass} / ${rawTemporal.actionsPerPass}`,
  );
  return result;
}
