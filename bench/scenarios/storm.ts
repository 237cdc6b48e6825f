/**
 * Scenario 3, storm: one object, its spec updated again and again, each update sent as soon as the
 * API server answered the previous one. Reports the signals homeostat's bridge sent (from its
 * metrics), the passes each system ran, and the time from the last update's answer to the watch
 * event showing `observedGeneration` at the last generation.
 */
import { performance } from 'node:perf_hooks';
import { stateQuery, workflowIdFor } from '../../core/definitions';
import { createNamespace, createObject, patchSpec, ReadyWatch } from '../objects';
import { benchPlan } from '../reconciler';
import { round } from '../stats';
import { type BenchContext, type RunningSystem, type SystemName, startSystem } from '../systems';
import { shortName } from './latency';

/** One system's storm figures. */
export interface StormFigures {
  /** Signals delivered to Temporal during the storm (homeostat only). */
  readonly signalsSent?: number;
  /** Reconcile passes run for the storm's updates. */
  readonly passes: number;
  /** Last update answered → Ready at the last generation. */
  readonly convergeMs: number;
  /** Updates per second the API server took. */
  readonly updatesPerSecond: number;
}

/** The result of {@link stormScenario}. */
export interface StormResult {
  readonly updates: number;
  readonly systems: Partial<Record<SystemName, StormFigures>>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Waits until `read` returns the same value twice, `quietMs` apart; returns it. */
async function settled<T>(read: () => Promise<T>, quietMs = 1000, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let before = JSON.stringify(await read());
  for (;;) {
    await sleep(quietMs);
    const value = await read();
    const now = JSON.stringify(value);
    if (now === before || Date.now() > deadline) return value;
    before = now;
  }
}

/** Runs the storm for homeostat and the in-process controller. */
export async function stormScenario(ctx: BenchContext, updates: number): Promise<StormResult> {
  const systems: Partial<Record<SystemName, StormFigures>> = {};
  for (const name of ['homeostat', 'controller'] as const) {
    const namespace = `${ctx.runId}-storm-${shortName[name]}`;
    await createNamespace(ctx.kube, namespace);
    const watch = new ReadyWatch(ctx.kube, namespace);
    await watch.start();
    const system: RunningSystem = await startSystem(ctx, name, namespace);
    const objName = 'storm';
    const ref = {
      group: benchPlan.group,
      version: benchPlan.version,
      kind: benchPlan.kind,
      namespace,
      name: objName,
    };
    const passes = async (): Promise<number> => {
      if (name === 'controller') return system.controllerPasses();
      const state = await ctx.temporal.workflow.getHandle(workflowIdFor(ref)).query(stateQuery);
      return state.reconciling || state.pending ? -state.passes : state.passes;
    };
    try {
      const ready = watch.waitReady(objName, 1);
      await createObject(ctx.kube, namespace, objName, { round: 0 });
      await ready;
      const passesBefore = Math.abs(await settled(passes));
      const signalsBefore = await system.signalsSent();
      const started = performance.now();
      let generation = 1;
      for (let i = 1; i <= updates; i++) {
        const obj = await patchSpec(ctx.kube, namespace, objName, { round: i });
        generation = obj.metadata.generation ?? generation;
      }
      const lastAnswered = performance.now();
      const at = await watch.waitReady(objName, generation, 600_000);
      const passesAfter = Math.abs(await settled(passes));
      const signalsAfter = await system.signalsSent();
      systems[name] = {
        ...(name === 'homeostat' ? { signalsSent: signalsAfter - signalsBefore } : {}),
        passes: passesAfter - passesBefore,
        convergeMs: round(at - lastAnswered),
        updatesPerSecond: round(updates / ((lastAnswered - started) / 1000)),
      };
      ctx.progress(`storm ${name}: ${JSON.stringify(systems[name])}`);
    } finally {
      await system.stop();
      watch.stop();
    }
  }
  return { updates, systems };
}
