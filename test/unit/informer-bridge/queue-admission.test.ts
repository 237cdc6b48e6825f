/**
 * The delivery queue's admission (issue 27): a delivery that starts a pass holds one of `limit` slots
 * until the pass is seen done (`release`) or its hold time passes; while every slot is held nothing is
 * delivered, so a flood's backlog waits in the queue (fair across namespaces) and another namespace's
 * change is delivered as soon as one slot frees. Keys are `<namespace>/<name>`; the test settles each
 * delivery and moves the fake clock itself (no timing).
 */
import { CoalescingQueue, type SlotRelease } from '../../../informer-bridge/queue';
import { FakeClock, flush } from '../../support/fake-clock';

type Call = { key: string; item: string; resolve: () => void; reject: (e: Error) => void };

function queue(
  limit: number,
  holds: (key: string, item: string) => boolean = () => true,
  holdMs = 10_000,
  perGroupLimit?: number,
) {
  const clock = new FakeClock();
  const calls: Call[] = [];
  const released: [string, SlotRelease][] = [];
  const q = new CoalescingQueue<string>({
    deliver: (key, item) => new Promise<void>((resolve, reject) => calls.push({ key, item, resolve, reject })),
    merge: (older, newer) => `${older}+${newer}`,
    groupOf: (key) => key.split('/')[0]!,
    concurrency: 16,
    minIntervalMs: 0,
    admission: { limit, holdMs, holds, ...(perGroupLimit !== undefined ? { perGroupLimit } : {}) },
    onReleased: (key, why) => released.push([key, why]),
    clock,
    random: () => 0,
  });
  return { q, clock, calls, released };
}

/** Resolves every delivery started so far. */
async function settleAll(calls: Call[]): Promise<void> {
  await flush();
  for (const c of calls) c.resolve();
  await flush();
}

describe('admission: passes in flight at most', () => {
  it('given 100 keys and 4 slots, it delivers 4 and then one more for each pass seen done', async () => {
    const { q, calls } = queue(4);
    for (let i = 0; i < 100; i++) q.add(`team-a/o${i}`, 'x');
    await settleAll(calls);
    expect(calls).toHaveLength(4); // delivered, but their passes are not done: the rest wait
    expect(q.slotsHeld).toBe(4);
    expect(q.release('team-a/o0')).toBe(true);
    await flush();
    expect(calls).toHaveLength(5);
    expect(q.release('team-a/o0')).toBe(false); // freed once
    expect(q.slotsHeld).toBe(4);
  });

  it("given A's flood holding every slot, B's change is the next delivered when a slot frees", async () => {
    const { q, calls } = queue(8);
    for (let i = 0; i < 1000; i++) q.add(`team-a/o${i}`, 'x');
    await settleAll(calls);
    q.add('team-b/o0', 'x');
    await flush();
    expect(calls.map((c) => c.key)).not.toContain('team-b/o0'); // every slot held
    q.release(calls[0]!.key);
    await flush();
    expect(calls.at(-1)!.key).toBe('team-b/o0');
  });

  it('given a pass never seen done, its slot frees after the hold time', async () => {
    const { q, clock, calls, released } = queue(1, () => true, 5_000);
    q.add('team-a/o0', 'x');
    q.add('team-a/o1', 'x');
    await settleAll(calls);
    expect(calls).toHaveLength(1);
    await clock.advance(4_999);
    await flush();
    expect(calls).toHaveLength(1);
    await clock.advance(1);
    await flush();
    expect(calls.map((c) => c.key)).toEqual(['team-a/o0', 'team-a/o1']);
    expect(released).toEqual([['team-a/o0', 'timeout']]);
  });

  it('given a failed delivery, it frees the slot at once (nothing started) and retries later', async () => {
    const { q, calls, released } = queue(1);
    q.add('team-a/o0', 'x');
    q.add('team-b/o0', 'x');
    await flush();
    calls[0]!.reject(new Error('unavailable'));
    await flush();
    expect(released).toEqual([['team-a/o0', 'failed']]);
    expect(calls.map((c) => c.key)).toEqual(['team-a/o0', 'team-b/o0']);
  });

  it('given deliveries that start no pass (holds false), they take no slot but wait while every slot is held', async () => {
    const { q, calls } = queue(2, (key) => !key.endsWith('-child'));
    q.add('team-a/o0-child', 'x');
    q.add('team-a/o1-child', 'x');
    q.add('team-a/o2-child', 'x');
    await settleAll(calls);
    expect(calls).toHaveLength(3);
    expect(q.slotsHeld).toBe(0);
    q.add('team-a/p0', 'x');
    q.add('team-a/p1', 'x');
    q.add('team-a/o3-child', 'x');
    await settleAll(calls);
    expect(calls).toHaveLength(5);
    expect(q.slotsHeld).toBe(2);
    q.release('team-a/p0');
    await flush();
    expect(calls.at(-1)!.key).toBe('team-a/o3-child');
    expect(q.slotsHeld).toBe(1);
  });

  it('given a key holding a slot that changes again, its next delivery keeps the one slot', async () => {
    const { q, calls } = queue(2);
    q.add('team-b/o0', 'g1');
    await settleAll(calls);
    q.add('team-b/o0', 'g2');
    await settleAll(calls);
    expect(calls.map((c) => c.item)).toEqual(['g1', 'g2']);
    expect(q.slotsHeld).toBe(1);
    expect(q.holding('team-b/o0')).toBe(true);
    q.release('team-b/o0');
    expect(q.slotsHeld).toBe(0);
    expect(q.holding('team-b/o0')).toBe(false);
  });

  it('given a pass seen done before its delivery call returned, the slot is freed and not held again', async () => {
    const { q, clock, calls, released } = queue(1);
    q.add('team-a/o0', 'x');
    q.add('team-a/o1', 'x');
    await flush();
    q.release('team-a/o0'); // the status write came back first
    await flush();
    expect(calls.map((c) => c.key)).toEqual(['team-a/o0', 'team-a/o1']);
    calls[0]!.resolve();
    await flush();
    await clock.advance(20_000);
    await flush();
    expect(released).toEqual([['team-a/o0', 'done']]); // no second release: the timer never started
  });

  it("given a namespace at its own limit, its keys wait while other namespaces' are delivered into the free slots", async () => {
    const { q, calls } = queue(8, () => true, 10_000, 2);
    for (let i = 0; i < 100; i++) q.add(`team-a/o${i}`, 'x');
    await settleAll(calls);
    expect(calls.map((c) => c.key)).toEqual(['team-a/o0', 'team-a/o1']); // A's share, 6 slots still free
    q.add('team-b/o0', 'x');
    q.add('team-b/o1', 'x');
    q.add('team-b/o2', 'x');
    q.add('team-c/o0', 'x');
    await settleAll(calls);
    expect(calls.slice(2).map((c) => c.key)).toEqual(['team-b/o0', 'team-b/o1', 'team-c/o0']); // B at its share too
    expect(q.slotsHeld).toBe(5);
    q.release('team-a/o0');
    await flush();
    expect(calls.at(-1)!.key).toBe('team-a/o2'); // A's next, once A holds fewer than its share
    q.release('team-b/o1');
    await flush();
    expect(calls.at(-1)!.key).toBe('team-b/o2');
    expect(q.readyByGroup().get('team-a')).toBe(97); // still waiting, in order, none lost
  });

  it('given a namespace at its limit whose keys also wait for resyncs (band 1), they wait too, and other bands go on', async () => {
    const clock = new FakeClock();
    const calls: Call[] = [];
    const q = new CoalescingQueue<string>({
      deliver: (key, item) => new Promise<void>((resolve, reject) => calls.push({ key, item, resolve, reject })),
      merge: (_older, newer) => newer,
      groupOf: (key) => key.split('/')[0]!,
      bandOf: (item) => (item === 'resync' ? 1 : 0),
      minIntervalMs: 0,
      admission: { limit: 10, perGroupLimit: 1, holdMs: 60_000, holds: () => true },
      clock,
    });
    q.add('team-a/o0', 'change');
    q.add('team-a/o1', 'change');
    q.add('team-a/o2', 'resync');
    q.add('team-b/o0', 'resync');
    await settleAll(calls);
    expect(calls.map((c) => c.key)).toEqual(['team-a/o0', 'team-b/o0']);
    q.release('team-a/o0');
    await settleAll(calls);
    expect(calls.map((c) => c.key)).toEqual(['team-a/o0', 'team-b/o0', 'team-a/o1']); // the change before the resync
  });

  it('given a stopping bridge, dropSlots frees every slot and cancels their hold timers, reporting none', async () => {
    const { q, clock, calls, released } = queue(4, () => true, 5_000, 2);
    for (let i = 0; i < 3; i++) q.add(`team-a/o${i}`, 'x');
    q.add('team-b/o0', 'x');
    await settleAll(calls);
    expect(q.slotsHeld).toBe(3);
    q.pause();
    expect(q.dropSlots()).toBe(3);
    expect(q.slotsHeld).toBe(0);
    await clock.advance(10_000);
    expect(released).toEqual([]); // no timer fired
    expect(q.holding('team-a/o0')).toBe(false);
  });

  it('given a drain (graceful stop), held slots do not keep it waiting', async () => {
    const { q, calls } = queue(2);
    q.add('team-a/o0', 'x');
    await settleAll(calls);
    expect(q.slotsHeld).toBe(1);
    await expect(q.drain(1_000)).resolves.toBe(true);
  });
});
