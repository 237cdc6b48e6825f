/**
 * Scenario 1, latency: objects created one at a time; for each, the time from just before the create
 * request to the watch event that shows it `Ready` at generation 1. A few warm-up objects per system
 * are not counted.
 */
import { performance } from 'node:perf_hooks';
import { createNamespace, createObject, ReadyWatch } from '../objects';
import { summarize, type Summary } from '../stats';
import { type BenchContext, type SystemName, startSystem, systemNames } from '../systems';

/** The result of {@link latencyScenario}. */
export interface LatencyResult {
  /** Objects measured per system. */
  readonly objects: number;
  /** Warm-up objects per system, not measured. */
  readonly warmup: number;
  /** Create → Ready observed through a watch, per system. */
  readonly systems: Record<SystemName, Summary>;
}

/** Short namespace suffixes of the systems. */
export const shortName: Record<SystemName, string> = {
  homeostat: 'hs',
  homeostatRegular: 'hsr',
  rawTemporal: 'raw',
  controller: 'ctl',
};

/** Runs the latency scenario with `objects` objects per system. */
export async function latencyScenario(ctx: BenchContext, objects: number, warmup = 3): Promise<LatencyResult> {
  const systems = {} as Record<SystemName, Summary>;
  for (const name of systemNames) {
    const namespace = `${ctx.runId}-lat-${shortName[name]}`;
    await createNamespace(ctx.kube, namespace);
    const watch = new ReadyWatch(ctx.kube, namespace);
    await watch.start();
    const system = await startSystem(ctx, name, namespace);
    const samples: number[] = [];
    try {
      for (let i = 0; i < warmup + objects; i++) {
        const objName = `obj-${i}`;
        const started = performance.now();
        const ready = watch.waitReady(objName, 1);
        ready.catch(() => {});
        const obj = await createObject(ctx.kube, namespace, objName);
        await system.notify(obj);
        const at = await ready;
        if (i >= warmup) samples.push(at - started);
      }
    } finally {
      await system.stop();
      watch.stop();
    }
    systems[name] = summarize(samples);
    ctx.progress(`latency ${name}: median ${systems[name].medianMs} ms, p99 ${systems[name].p99Ms} ms`);
  }
  return { objects, warmup, systems };
}
