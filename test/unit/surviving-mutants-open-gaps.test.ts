/**
 * The surviving mutants the report had marked as open gaps (real behaviour no test pinned), one test
 * each: an IPv6 Temporal address with junk after its port, a step's own Error kept as the failure's
 * cause, durations with two decimals, a status without conditions against one with none, an owner list
 * of several kinds, an owner of a watched group but another kind, and an item added while a failing
 * delivery is in flight.
 */
import type { ObjectStatus } from '../../core/definitions';
import { toApplicationFailure } from '../../core/errors';
import { durationMs } from '../../core/plan';
import { sameStatus } from '../../core/status';
import { resolveTemporal } from '../../config/temporal';
import { ownersOf } from '../../informer-bridge/predicates';
import { CoalescingQueue } from '../../informer-bridge/queue';
import type { KubeObject, WatchedResource } from '../../informer-bridge/types';
import { FakeClock, flush } from '../support/fake-clock';

describe('surviving mutants of the open gaps', () => {
  it('given an IPv6 Temporal address, [::1]:7233 is taken and [::1]:7233x is refused', () => {
    expect('problems' in resolveTemporal({ TEMPORAL_ADDRESS: '[::1]:7233' })).toBe(false);
    expect(resolveTemporal({ TEMPORAL_ADDRESS: '[::1]:7233x' })).toEqual({
      problems: ['TEMPORAL_ADDRESS: expected host:port, got "[::1]:7233x"'],
    });
  });

  it('given a plain Error thrown by a step, the ApplicationFailure keeps it as its cause', () => {
    const thrown = new Error('connection reset');
    const failure = toApplicationFailure(thrown);
    expect(failure.type).toBe('StepFailed');
    expect(failure.cause).toBe(thrown);
  });

  it('given a duration with two decimals, every decimal counts', () => {
    expect(durationMs('1.25 s', 0)).toBe(1250);
    expect(durationMs('0.125m', 0)).toBe(7500);
  });

  it('given one status without conditions and one with none, they are the same, in either order', () => {
    const without: ObjectStatus = { observedGeneration: 1, phase: 'Pending' };
    const empty: ObjectStatus = { observedGeneration: 1, phase: 'Pending', conditions: [] };
    expect(sameStatus(without, empty)).toBe(true);
    expect(sameStatus(empty, without)).toBe(true);
    expect(sameStatus(without, without)).toBe(true);
  });

  describe('owners of a child', () => {
    const resource = {
      group: '',
      version: 'v1',
      plural: 'configmaps',
      kind: 'ConfigMap',
      namespaced: true,
      owners: [
        { group: 'apps', kind: 'Deployment' },
        { group: 'example.com', kind: 'Gadget' },
      ],
    } as WatchedResource;
    const child = (owners: { apiVersion: string; kind: string; name: string }[]): KubeObject => ({
      metadata: {
        name: 'c',
        namespace: 'ns',
        ownerReferences: owners.map((o, i) => ({ ...o, uid: `u${i}` })),
      },
    });

    it('given an owner list of several kinds, a child owned by any one of them maps to it', () => {
      expect(ownersOf(resource, child([{ apiVersion: 'example.com/v1', kind: 'Gadget', name: 'g' }]))).toEqual([
        { ref: { group: 'example.com', version: 'v1', kind: 'Gadget', namespace: 'ns', name: 'g' }, uid: 'u0' },
      ]);
    });

    it('given an owner of a watched group but another kind, it is not an owner homeostat maps', () => {
      expect(ownersOf(resource, child([{ apiVersion: 'example.com/v1', kind: 'Widget', name: 'w' }]))).toEqual([]);
    });
  });

  it('given an item added while a delivery is in flight and that delivery fails, the retry carries both, merged', async () => {
    const clock = new FakeClock();
    const delivered: string[] = [];
    let failNext = true;
    let release: (() => void) | undefined;
    const q = new CoalescingQueue<string>({
      deliver: async (_key, item) => {
        await new Promise<void>((resolve) => (release = resolve));
        if (failNext) {
          failNext = false;
          throw new Error('Temporal unavailable');
        }
        delivered.push(item);
      },
      merge: (older, newer) => `${older}+${newer}`,
      clock,
      minIntervalMs: 0,
      random: () => 0.5,
    });
    q.add('k', 'a');
    await flush();
    q.add('k', 'b'); // while 'a' is in flight
    release!(); // 'a' fails
    await flush();
    await clock.advance(5_000); // its retry backoff
    await flush();
    release!();
    await flush();
    expect(delivered).toEqual(['a+b']);
  });
});
