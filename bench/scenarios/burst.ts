/**
 * Scenario 2, burst: all objects created at once (64 create requests in flight); the time from the
 * first create to the last object observed `Ready`, objects per second, and each object's own
 * create → Ready latency.
 */
import { performance } from 'node:perf_hooks';
import { createNamespace, createObject, forEachLimited, ReadyWatch } from '../objects';
import { round, summarize, type Summary } from '../stats';
import { type BenchContext, type SystemName, startSystem, systemNames } from '../systems';
import { shortName } from './latency';

/** One system's burst figures. */
export interface BurstFigures {
  /** First create → last Ready. */
  readonly totalMs: number;
  readonly objectsPerSecond: number;
  /** First create → last create answered. */
  readonly createMs: number;
  /** Each object's create → Ready. */
  readonly latency: Summary;
}

/** The result of {@link burstScenario}. */
export interface BurstResult {
  readonly objects: number;
  /** Create requests in flight at most. */
  readonly createConcurrency: number;
  readonly systems: Record<SystemName, BurstFigures>;
}

/** Runs the burst scenario with `objects` objects per system. */
export async function burstScenario(ctx: BenchContext, objects: number, createConcurrency = 64): Promise<BurstResult> {
  const systems = {} as Record<SystemName, BurstFigures>;
  for (const name of systemNames) {
    const namespace = `${ctx.runId}-burst-${shortName[name]}`;
    await createNamespace(ctx.kube, namespace);
    const watch = new ReadyWatch(ctx.kube, namespace);
    await watch.start();
    const system = await startSystem(ctx, name, namespace);
    const latencies: number[] = [];
    const readies: Promise<void>[] = [];
    let last = 0;
    const started = performance.now();
    let created = 0;
    try {
      await forEachLimited(objects, createConcurrency, async (i) => {
        const objName = `obj-${i}`;
        const t0 = performance.now();
        const ready = watch.waitReady(objName, 1, 900_000);
        ready.catch(() => {});
        const obj = await createObject(ctx.kube, namespace, objName);
        await system.notify(obj);
        readies.push(
          ready.then((at) => {
            latencies.push(at - t0);
            last = Math.max(last, at);
          }),
        );
      });
      created = performance.now();
      await Promise.all(readies);
    } finally {
      await system.stop();
      watch.stop();
    }
    const totalMs = last - started;
    systems[name] = {
      totalMs: round(totalMs),
      objectsPerSecond: round(objects / (totalMs / 1000)),
      createMs: round(created - started),
      latency: summarize(latencies),
    };
    ctx.progress(
      `burst ${name}: ${objects} Ready in ${round(totalMs / 1000, 2)} s (${systems[name].objectsPerSecond}/s)`,
    );
  }
  return { objects, createConcurrency, systems };
}
