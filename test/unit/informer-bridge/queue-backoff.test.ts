/**
 * The bridge's delivery queue and backoff, option by option and at their boundaries: defaults, the
 * reset boundary, the drain timeout, pausing mid-stream, callbacks and per-key retry settings. Written
 * for mutants of informer-bridge/queue.ts and backoff.ts that survived (issue 17).
 */
import { Backoff } from '../../../informer-bridge/backoff';
import { CoalescingQueue } from '../../../informer-bridge/queue';
import { FakeClock, flush } from '../../support/fake-clock';

/** A queue of strings (merge keeps both, so merges are visible) whose deliveries the test settles. */
function queue(options: Partial<ConstructorParameters<typeof CoalescingQueue<string>>[0]> = {}) {
  const clock = new FakeClock();
  const calls: { key: string; item: string; resolve: () => void; reject: (e: Error) => void }[] = [];
  const q = new CoalescingQueue<string>({
    deliver: (key, item) => new Promise<void>((resolve, reject) => calls.push({ key, item, resolve, reject })),
    merge: (older, newer) => `${older}+${newer}`,
    clock,
    random: () => 0,
    ...options,
  });
  return { q, clock, calls };
}

describe('Backoff options', () => {
  it('given its own initial delay, factor, maximum and no jitter, it follows them', () => {
    const b = new Backoff({
      clock: new FakeClock(),
      random: () => 0.5,
      initialMs: 100,
      factor: 3,
      maxMs: 1000,
      jitter: 0,
    });
    expect([1, 2, 3, 4, 5].map(() => b.next())).toEqual([100, 300, 900, 1000, 1000]);
    expect(b.attempts).toBe(5);
  });

  it('given jitter, the extra is jitter · delay · random, rounded', () => {
    const b = new Backoff({ clock: new FakeClock(), random: () => 1, initialMs: 100, jitter: 0.5 });
    expect(b.next()).toBe(150);
    expect(new Backoff({ clock: new FakeClock(), random: () => 0.5, initialMs: 3, jitter: 0.5 }).next()).toBe(4);
    expect(new Backoff({ clock: new FakeClock(), random: () => 1 }).next()).toBe(960); // default jitter 0.2
  });

  it('given exactly the reset period since the last failure, it starts over; a moment less, it does not', async () => {
    const clock = new FakeClock();
    const b = new Backoff({ clock, random: () => 0, resetAfterMs: 1000 });
    b.next();
    b.next();
    await clock.advance(999);
    expect(b.next()).toBe(3200);
    await clock.advance(1000);
    expect(b.next()).toBe(800);
    expect(b.attempts).toBe(1);
    const d = new Backoff({ clock, random: () => 0 }); // default reset period: 2 minutes
    d.next();
    await clock.advance(119_999);
    expect(d.next()).toBe(1600);
    await clock.advance(120_000);
    expect(d.next()).toBe(800);
  });

  it('given reset(), the failures are forgotten', () => {
    const b = new Backoff({ clock: new FakeClock(), random: () => 0 });
    b.next();
    b.next();
    expect(b.attempts).toBe(2);
    b.reset();
    expect(b.attempts).toBe(0);
  });

  it('given no clock or random source, it uses the real ones and stays within its jitter', () => {
    const b = new Backoff();
    const d = b.next();
    expect(d).toBeGreaterThanOrEqual(800);
    expect(d).toBeLessThanOrEqual(960);
  });
});

describe('CoalescingQueue options and edges', () => {
  it('given nothing else, it delivers 16 keys at once and waits 500 ms between deliveries of one key', async () => {
    const { q, clock, calls } = queue();
    for (let i = 0; i < 17; i++) q.add(`k${i}`, 'a');
    await flush();
    expect(calls).toHaveLength(16);
    calls[0]!.resolve();
    await flush();
    expect(calls.map((c) => c.key).at(-1)).toBe('k16'); // a slot freed: the 17th key starts
    for (const c of calls.slice(1)) c.resolve();
    q.add('k0', 'b');
    await clock.advance(499);
    expect(calls.filter((c) => c.key === 'k0')).toHaveLength(1);
    await clock.advance(1);
    expect(calls.filter((c) => c.key === 'k0').map((c) => c.item)).toEqual(['a', 'b']);
  });

  it('given a delivery, onDelivered gets its key and item; a failure goes to onFailed with the delay, then merges with newer items', async () => {
    const delivered: string[] = [];
    const failed: string[] = [];
    const { q, clock, calls } = queue({
      minIntervalMs: 0,
      onDelivered: (key, item) => delivered.push(`${key}:${item}`),
      onFailed: (key, err, ms) => failed.push(`${key}:${(err as Error).message}:${ms}`),
      retryBackoff: { initialMs: 40, maxMs: 50 },
    });
    q.add('k', 'a');
    await flush();
    calls[0]!.reject(new Error('down'));
    await flush();
    expect(failed).toEqual(['k:down:40']);
    q.add('k', 'b');
    expect(q.peek('k')).toBe('a+b'); // the failed item, then the newer one
    await clock.advance(39);
    expect(calls).toHaveLength(1);
    await clock.advance(1);
    expect(calls[1]!.item).toBe('a+b');
    calls[1]!.reject(new Error('again'));
    await flush();
    expect(failed).toEqual(['k:down:40', 'k:again:50']);
    await clock.advance(50);
    calls[2]!.resolve();
    await flush();
    expect(delivered).toEqual(['k:a+b']);
    expect(q.dirtyKeys).toBe(0);
    expect(q.peek('k')).toBeUndefined();
  });

  it('given a failure that can never succeed, the item is dropped (reported, not retried) and what arrived meanwhile is still delivered', async () => {
    const dropped: string[] = [];
    const failed: string[] = [];
    const { q, clock, calls } = queue({
      minIntervalMs: 10,
      permanent: (err) => ((err as Error).message === 'refused' ? 'invalid_argument' : undefined),
      onDropped: (key, item, _err, reason) => dropped.push(`${key}:${item}:${reason}`),
      onFailed: (key) => failed.push(key),
    });
    q.add('k', 'a');
    await flush();
    q.add('k', 'b'); // arrives while `a` is in flight
    calls[0]!.reject(new Error('refused'));
    await flush();
    expect(dropped).toEqual(['k:a:invalid_argument']);
    expect(failed).toEqual([]);
    expect(q.peek('k')).toBe('b'); // not merged with the dropped item
    await clock.advance(10);
    expect(calls[1]!.item).toBe('b');
    calls[1]!.reject(new Error('refused'));
    await flush();
    await clock.advance(60_000);
    expect(calls).toHaveLength(2); // never retried
    expect(q.dirtyKeys).toBe(0);
  });

  it('given a success after failures, the next failure starts the backoff over', async () => {
    const delays: number[] = [];
    const { q, clock, calls } = queue({ minIntervalMs: 0, onFailed: (_k, _e, ms) => delays.push(ms) });
    q.add('k', 'a');
    await flush();
    calls[0]!.reject(new Error('x'));
    await clock.advance(500);
    calls[1]!.reject(new Error('x'));
    await clock.advance(1000);
    calls[2]!.resolve();
    await flush();
    q.add('k', 'b');
    await flush();
    calls[3]!.reject(new Error('x'));
    await flush();
    expect(delays).toEqual([500, 1000, 500]);
  });

  it('given pause() while items wait, nothing new starts; in-flight deliveries finish; resume() goes on', async () => {
    const { q, calls } = queue({ minIntervalMs: 0, concurrency: 1 });
    expect(q.paused).toBe(false);
    q.add('a', '1');
    q.add('b', '1');
    await flush();
    expect(calls).toHaveLength(1);
    q.pause();
    expect(q.paused).toBe(true);
    calls[0]!.resolve();
    await flush();
    expect(calls).toHaveLength(1);
    expect(q.dirtyKeys).toBe(1);
    expect(q.inFlight).toBe(0);
    q.resume();
    expect(q.paused).toBe(false);
    await flush();
    expect(calls.map((c) => c.key)).toEqual(['a', 'b']);
  });

  it('given a delivery that does not finish, drain() gives up after its timeout and says so', async () => {
    const { q, clock } = queue({ minIntervalMs: 0 });
    q.add('k', 'a');
    await flush();
    let result: boolean | undefined;
    void q.drain(1000).then((r) => (result = r));
    await clock.advance(999);
    expect(result).toBeUndefined();
    await clock.advance(1);
    expect(result).toBe(false);
  });

  it('given an empty queue, drain() is done at once; given keys only waiting out their interval, it forgets them', async () => {
    const { q, calls } = queue();
    expect(await q.drain(0)).toBe(true);
    q.add('k', 'a');
    await flush();
    calls[0]!.resolve();
    await flush();
    expect(q.dirtyKeys).toBe(0); // delivered, waiting out the 500 ms interval
    expect(await q.drain(0)).toBe(true);
    q.add('k', 'b'); // the interval was cancelled by the drain: delivered at once
    await flush();
    expect(calls.map((c) => c.item)).toEqual(['a', 'b']);
  });

  it('given a drain while a retry waits and another key is in flight, the retry starts at once and drain() resolves when both are done', async () => {
    const { q, calls } = queue({ minIntervalMs: 0 });
    q.add('a', '1');
    q.add('b', '1');
    await flush();
    calls[0]!.reject(new Error('down')); // a waits 500 ms for its retry
    await flush();
    let result: boolean | undefined;
    void q.drain(10_000).then((r) => (result = r));
    await flush();
    expect(calls.map((c) => c.key)).toEqual(['a', 'b', 'a']);
    calls[2]!.resolve();
    await flush();
    expect(result).toBeUndefined(); // b is still in flight
    calls[1]!.resolve();
    await flush();
    expect(result).toBe(true);
  });
});
