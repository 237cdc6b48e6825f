import { Backoff } from '../../../informer-bridge';
import { FakeClock } from '../../support/fake-clock';

describe('Backoff', () => {
  it('given repeated failures without jitter, it waits 0.8 s doubling up to 30 s', () => {
    const clock = new FakeClock();
    const b = new Backoff({ clock, random: () => 0 });
    const delays = Array.from({ length: 8 }, () => b.next());
    expect(delays).toEqual([800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
  });

  it('given jitter, each delay lies in [d, d·1.2) of the un-jittered delay', () => {
    const clock = new FakeClock();
    expect(new Backoff({ clock, random: () => 0.999 }).next()).toBe(Math.round(800 + 800 * 0.2 * 0.999));
    const b = new Backoff({ clock, random: () => 0.5 });
    b.next();
    expect(b.next()).toBe(1600 + 160);
  });

  it('given a stable period since the last failure, it starts again from 0.8 s', async () => {
    const clock = new FakeClock();
    const b = new Backoff({ clock, random: () => 0, resetAfterMs: 120_000 });
    for (let i = 0; i < 5; i++) b.next();
    await clock.advance(119_000);
    expect(b.next()).toBe(25600); // not stable long enough: keeps growing
    await clock.advance(120_000);
    expect(b.next()).toBe(800);
    expect(b.attempts).toBe(1);
  });

  it('given reset(), the next delay is the initial one', () => {
    const b = new Backoff({ clock: new FakeClock(), random: () => 0 });
    b.next();
    b.next();
    b.reset();
    expect(b.next()).toBe(800);
  });
});
