import { Registry } from 'prom-client';
import { registerPhaseMetrics } from '../../../informer-bridge/phase-metrics';
import type { KubeObject } from '../../../informer-bridge/types';

const now = Date.parse('2026-01-01T01:00:00Z');

function app(name: string, phase: string | undefined, readySince?: string): KubeObject {
  return {
    metadata: { name, namespace: 'ns' },
    ...(phase
      ? {
          status: {
            phase,
            conditions: [
              readySince
                ? { type: 'Ready', status: 'False', reason: phase, lastTransitionTime: readySince }
                : { type: 'Ready', status: 'True', reason: 'Reconciled', lastTransitionTime: '2026-01-01T00:00:00Z' },
            ],
          },
        }
      : {}),
  };
}

describe('the phase metrics of the bridge’s cache', () => {
  it('given cached objects in several phases, it counts them per phase and reports the longest time not Ready', async () => {
    const registry = new Registry();
    const objects = [
      app('a', 'Ready'),
      app('b', 'Degraded', '2026-01-01T00:50:00Z'),
      app('c', 'Degraded', '2026-01-01T00:58:00Z'),
      app('d', 'Reconciling', '2026-01-01T00:59:30Z'),
      app('e', undefined),
    ];
    registerPhaseMetrics(registry, [{ group: 'homeostat.dev', kind: 'App', objects: () => objects }], () => now);
    const text = await registry.metrics();
    const value = (name: string, phase: string) =>
      Number(
        text
          .split('\n')
          .find((l) => l.startsWith(`${name}{group="homeostat.dev",kind="App",phase="${phase}"}`))
          ?.split(' ')[1],
      );
    expect(value('homeostat_objects', 'Ready')).toBe(1);
    expect(value('homeostat_objects', 'Degraded')).toBe(2);
    expect(value('homeostat_objects', 'Pending')).toBe(1);
    expect(value('homeostat_objects_not_ready_seconds', 'Degraded')).toBe(600);
    expect(value('homeostat_objects_not_ready_seconds', 'Reconciling')).toBe(30);
    expect(value('homeostat_objects_not_ready_seconds', 'Ready')).toBe(0);
    // An object that leaves the cache leaves the counts.
    objects.splice(1, 2);
    expect(await registry.metrics()).not.toContain('phase="Degraded"');
  });
});
