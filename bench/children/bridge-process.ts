/**
 * The benchmark's side of `bridge-process-child.ts`: starts a scenario's informer bridge in a process
 * of its own and asks it for its counters.
 */
import type { BridgeProcessMetrics, BridgeProcessOptions } from './bridge-process-child';
import { type Child, spawnChild } from './spawn';

export type { BridgeProcessMetrics, BridgeProcessOptions };

/** Forks a bridge process child; `await child.next('ready')` waits until its caches are listed. */
export function spawnBridgeProcess(options: BridgeProcessOptions): Child {
  return spawnChild('bridge-process-child.ts', options);
}

/** The counters of a bridge process child (its audits, queue, signals, pass slots and memory). */
export async function bridgeMetrics(bridge: Child): Promise<BridgeProcessMetrics> {
  bridge.proc.send({ type: 'metrics' });
  return (await bridge.next('metrics', 60_000)) as unknown as BridgeProcessMetrics;
}
