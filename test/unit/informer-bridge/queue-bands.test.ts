/**
 * The bridge's delivery queue puts real changes before resyncs (issue 27, "priority"): a resync of
 * thousands of objects that are behind does not queue one object's real change behind it, as
 * controller-runtime's priority queue puts events before its resyncs. Items here are `resync` or
 * `change`; the test settles each delivery itself (no timing).
 */
import { CoalescingQueue } from '../../../informer-bridge/queue';
import { FakeClock, flush } from '../../support/fake-clock';

type Call = { key: string; item: string; resolve: () => void };

function queue(concurrency = 2) {
  const calls: Call[] = [];
  const q = new CoalescingQueue<string>({
    deliver: (key, item) => new Promise<void>((resolve) => calls.push({ key, item, resolve })),
    // The strongest reason wins, as the bridge's merge does (a change outranks a resync).
    merge: (older, newer) => (older === 'change' || newer === 'change' ? 'change' : 'resync'),
    groupOf: (key) => key.split('/')[0]!,
    bandOf: (item) => (item === 'resync' ? 1 : 0),
    clock: new FakeClock(),
    random: () => 0,
    concurrency,
  });
  return { q, calls };
}

/** Settles deliveries in the order they started until `n` have started; returns `key=item` of each. */
async function deliveries(calls: Call[], n: number): Promise<string[]> {
  await flush();
  for (let i = 0; i < n && i < calls.length; i++) {
    calls[i]!.resolve();
    await flush();
  }
  return calls.slice(0, n).map((c) => `${c.key}=${c.item}`);
}

describe('the delivery queue’s bands', () => {
  it('given 500 resyncs queued and then one real change, it delivers the change as soon as a slot frees', async () => {
    const { q, calls } = queue(2);
    for (let i = 0; i < 500; i++) q.add(`team-a/o${i}`, 'resync');
    q.add('team-a/x', 'change'); // the same namespace: fairness alone would put it last
    const order = await deliveries(calls, 501);
    // Two resyncs were in flight already; the change takes the next slot.
    expect(order.indexOf('team-a/x=change')).toBe(2);
    expect(new Set(order).size).toBe(501);
  });

  it('given a resync waiting and a real change of the same object merged into it, the object moves up and is delivered once', async () => {
    const { q, calls } = queue(1);
    for (let i = 0; i < 100; i++) q.add(`team-a/o${i}`, 'resync');
    q.add('team-a/o99', 'change'); // merged: the pending item is now a change
    const order = await deliveries(calls, 100);
    expect(order[1]).toBe('team-a/o99=change');
    expect(order.filter((o) => o.startsWith('team-a/o99='))).toEqual(['team-a/o99=change']);
    expect(new Set(order.map((o) => o.split('=')[0])).size).toBe(100);
  });

  it('given only resyncs, they are fair across namespaces within their band', async () => {
    const { q, calls } = queue(1);
    for (let i = 0; i < 50; i++) q.add(`team-a/o${i}`, 'resync');
    q.add('team-b/o0', 'resync');
    const order = await deliveries(calls, 51);
    expect(order.indexOf('team-b/o0=resync')).toBeLessThanOrEqual(2);
  });

  it('given no band option, every item is in one band: first-in, first-out within a namespace', async () => {
    const calls: Call[] = [];
    const q = new CoalescingQueue<string>({
      deliver: (key, item) => new Promise<void>((resolve) => calls.push({ key, item, resolve })),
      merge: (_o, n) => n,
      clock: new FakeClock(),
      concurrency: 1,
    });
    for (let i = 0; i < 10; i++) q.add(`a/o${i}`, 'resync');
    q.add('a/x', 'change');
    const order = await deliveries(calls, 11);
    expect(order[10]).toBe('a/x=change');
  });
});
