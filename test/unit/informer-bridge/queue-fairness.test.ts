/**
 * The bridge's delivery queue is fair across namespaces (issue 27): one namespace's mass change puts
 * thousands of keys in the queue, and another namespace's key is delivered within the next turn, not
 * after all of them; weights give namespaces proportional shares; every per-key guarantee still holds.
 * Keys here are `<namespace>/<name>`; the test settles each delivery itself (no timing).
 */
import { FairReadySet } from '../../../informer-bridge/fair-ready';
import { CoalescingQueue } from '../../../informer-bridge/queue';
import { FakeClock, flush } from '../../support/fake-clock';

type Call = { key: string; item: string; resolve: () => void; reject: (e: Error) => void };

/** A queue grouped by the key's namespace, whose deliveries the test settles one at a time. */
function queue(options: Partial<ConstructorParameters<typeof CoalescingQueue<string>>[0]> = {}) {
  const clock = new FakeClock();
  const calls: Call[] = [];
  const q = new CoalescingQueue<string>({
    deliver: (key, item) => new Promise<void>((resolve, reject) => calls.push({ key, item, resolve, reject })),
    merge: (older, newer) => `${older}+${newer}`,
    groupOf: (key) => key.split('/')[0]!,
    clock,
    random: () => 0,
    ...options,
  });
  return { q, clock, calls };
}

/** Settles the deliveries in the order they started until `n` have started; returns their keys. */
async function deliveries(calls: Call[], n: number): Promise<string[]> {
  await flush();
  for (let i = 0; i < n && i < calls.length; i++) {
    calls[i]!.resolve();
    await flush();
  }
  return calls.slice(0, n).map((c) => c.key);
}

const namespaceOf = (key: string): string => key.split('/')[0]!;

describe('the delivery queue across namespaces', () => {
  it('given 1,000 keys of namespace A and then 1 of namespace B, it delivers B within the first concurrency + 1 deliveries', async () => {
    const concurrency = 4;
    const { q, calls } = queue({ concurrency });
    for (let i = 0; i < 1000; i++) q.add(`team-a/o${i}`, 'x');
    q.add('team-b/o0', 'x');
    const order = await deliveries(calls, 1001);
    expect(order).toHaveLength(1001);
    expect(order.indexOf('team-b/o0') + 1).toBeLessThanOrEqual(concurrency + 1);
    expect(new Set(order).size).toBe(1001); // each once
  });

  it('given no groups (the option unset), it delivers first-in, first-out: B after all of A', async () => {
    const { q, calls } = queue({ concurrency: 4, groupOf: undefined });
    for (let i = 0; i < 1000; i++) q.add(`team-a/o${i}`, 'x');
    q.add('team-b/o0', 'x');
    const order = await deliveries(calls, 1001);
    expect(order.indexOf('team-b/o0') + 1).toBe(1001);
  });

  it('given a paused queue (a standby) that filled with A then B, resuming delivers B within the first concurrency + 1', async () => {
    const { q, calls } = queue({ concurrency: 2, paused: true });
    for (let i = 0; i < 500; i++) q.add(`team-a/o${i}`, 'x');
    q.add('team-b/o0', 'x');
    await flush();
    expect(calls).toHaveLength(0);
    q.resume();
    const order = await deliveries(calls, 501);
    expect(order.indexOf('team-b/o0') + 1).toBeLessThanOrEqual(3);
  });

  it('given weights 3 and 1 with 100 keys each, the heavier gets 3 of every 4 deliveries while both wait', async () => {
    const { q, calls } = queue({ concurrency: 1, weightOf: (ns) => (ns === 'heavy' ? 3 : 1) });
    for (let i = 0; i < 100; i++) q.add(`light/o${i}`, 'x'); // the lighter first: FIFO would serve it first
    for (let i = 0; i < 100; i++) q.add(`heavy/o${i}`, 'x');
    const order = await deliveries(calls, 200);
    const heavyIn40 = order.slice(0, 40).filter((k) => namespaceOf(k) === 'heavy').length;
    expect(heavyIn40).toBeGreaterThanOrEqual(28);
    expect(heavyIn40).toBeLessThanOrEqual(32);
    expect(order).toHaveLength(200); // the lighter is not starved: all delivered
  });

  it('given three namespaces with backlogs, each gets a turn in every round', async () => {
    const { q, calls } = queue({ concurrency: 1 });
    for (const ns of ['a', 'b', 'c']) for (let i = 0; i < 50; i++) q.add(`${ns}/o${i}`, 'x');
    const order = await deliveries(calls, 30);
    for (let round = 0; round < 10; round++) {
      expect(new Set(order.slice(round * 3, round * 3 + 3).map(namespaceOf))).toEqual(new Set(['a', 'b', 'c']));
    }
  });

  it('given namespaces, one delivery per key stays in flight, what arrives meanwhile merges, and the key waits its interval', async () => {
    const { q, clock, calls } = queue({ concurrency: 8, minIntervalMs: 100 });
    q.add('a/o', '1');
    q.add('b/o', '1');
    await flush();
    q.add('a/o', '2');
    q.add('a/o', '3');
    await flush();
    expect(calls.map((c) => c.key)).toEqual(['a/o', 'b/o']); // no second delivery of a/o while in flight
    calls[0]!.resolve();
    await clock.advance(99);
    expect(calls).toHaveLength(2);
    await clock.advance(1);
    expect(calls[2]).toMatchObject({ key: 'a/o', item: '2+3' });
  });

  it('given a failed delivery in one namespace, it is retried after its backoff while the other namespace goes on', async () => {
    const { q, clock, calls } = queue({ concurrency: 1, minIntervalMs: 0, retryBackoff: { initialMs: 50, jitter: 0 } });
    q.add('a/o', '1');
    q.add('b/o0', '1');
    q.add('b/o1', '1');
    await flush();
    calls[0]!.reject(new Error('down'));
    await flush();
    calls[1]!.resolve();
    await flush();
    calls[2]!.resolve();
    await flush();
    expect(calls.map((c) => c.key)).toEqual(['a/o', 'b/o0', 'b/o1']);
    await clock.advance(50);
    expect(calls[3]).toMatchObject({ key: 'a/o', item: '1' });
    calls[3]!.resolve();
    await flush();
    expect(q.dirtyKeys).toBe(0);
  });

  it('given keys waiting, readyByGroup reports them by namespace and leaves out namespaces with none', async () => {
    const { q } = queue({ paused: true });
    for (let i = 0; i < 3; i++) q.add(`a/o${i}`, 'x');
    q.add('b/o0', 'x');
    q.add('a/o0', 'y'); // merges: still 3
    expect(new Map(q.readyByGroup())).toEqual(
      new Map([
        ['a', 3],
        ['b', 1],
      ]),
    );
  });
});

describe('FairReadySet', () => {
  it('given weights 3 and 1, it takes three of the heavier for each of the lighter', () => {
    const s = new FairReadySet((g) => (g === 'h' ? 3 : 1));
    for (let i = 0; i < 8; i++) s.add(`l${i}`, 'l');
    for (let i = 0; i < 8; i++) s.add(`h${i}`, 'h');
    const taken = Array.from({ length: 8 }, () => s.take()![0]).join('');
    expect(taken.split('').filter((c) => c === 'h')).toHaveLength(6);
    expect(taken).toMatch(/^l/); // equal passes at the start: the group that came first
  });

  it('given a key added twice, it is taken once and keeps its place', () => {
    const s = new FairReadySet();
    s.add('x', 'g');
    s.add('y', 'g');
    s.add('x', 'g');
    expect(s.size).toBe(2);
    expect([s.take(), s.take(), s.take()]).toEqual(['x', 'y', undefined]);
  });

  it('given a namespace that empties and refills before every take, it does not starve a backlogged one', () => {
    const s = new FairReadySet();
    for (let i = 0; i < 100; i++) s.add(`a${i}`, 'a');
    let fromA = 0;
    for (let i = 0; i < 40; i++) {
      // A hostile namespace keeps exactly one key ready: it empties at each of its turns and refills.
      if (!new Map(s.depths()).has('x')) s.add(`x${i}`, 'x');
      if (s.take()!.startsWith('a')) fromA++;
    }
    expect(fromA).toBeGreaterThanOrEqual(19);
  });

  it('given a namespace that returns after a long idle time, it starts at the current turn, not with saved-up credit', () => {
    const s = new FairReadySet();
    for (let i = 0; i < 100; i++) s.add(`a${i}`, 'a');
    s.add('b0', 'b');
    const first = [s.take(), s.take()];
    expect(first).toContain('b0');
    for (let i = 0; i < 50; i++) s.take(); // only a is served meanwhile: b saves nothing up
    for (let i = 0; i < 5; i++) s.add(`b${i + 1}`, 'b');
    const next = Array.from({ length: 6 }, () => s.take()![0]).join('');
    expect(next).toMatch(/^(ab){3}$|^(ba){3}$/);
  });
});
