/**
 * The run's one pending requeue or drift timer, on durable workflow timers. Arming it again for a
 * later time starts no second timer: the running one re-arms itself for the remainder when it fires.
 * That costs at most one timer (one billable action) per stale firing however many passes came in
 * between, where cancelling and starting a timer at every pass would cost one per pass.
 *
 * A drift check may also be given a window (the range its jitter draws from): a timer already running
 * that fires inside it is as good a time as the one drawn, so it is kept as it is — no second timer
 * now, no remainder later. The passes right after a create (the object's own children and what it
 * references changing) then share the first pass's timer.
 *
 * The sleep and the clock are passed in, so the rules are unit-tested with a fake clock.
 */
import type { ObjectEntity, TimerKind } from './object-entity';

/** Arms the next pass's timer (`entity.nextTimer`) and sets `entity.timerDue` when it is due. */
export class PassTimer {
  /** When the timers already started fire (epoch milliseconds). */
  private readonly fireTimes = new Set<number>();

  /**
   * @param entity the run's state: `nextTimer` says what is wanted, `timerDue` is set when it is due.
   * @param sleep a durable timer (the workflow's `sleep`).
   * @param now the workflow clock.
   */
  constructor(
    private readonly entity: ObjectEntity,
    private readonly sleep: (ms: number) => Promise<void>,
    private readonly now: () => number,
  ) {}

  /**
   * Wants the next pass `delay` ms from now; or, given `window` (milliseconds from now), at the time a
   * running timer fires inside it.
   */
  arm(kind: TimerKind, delay: number, window?: { readonly min: number; readonly max: number }): void {
    const now = this.now();
    if (window) {
      const running = [...this.fireTimes].find((t) => t >= now + window.min && t <= now + window.max);
      if (running !== undefined) {
        this.entity.nextTimer = { kind, at: running };
        return;
      }
    }
    const at = now + delay;
    this.entity.nextTimer = { kind, at };
    // A running timer that fires no later re-arms itself for the remainder when it fires.
    if ([...this.fireTimes].some((t) => t <= at)) return;
    this.start(at);
  }

  private start(at: number): void {
    this.fireTimes.add(at);
    void this.sleep(Math.max(1, at - this.now())).then(() => {
      this.fireTimes.delete(at);
      const next = this.entity.nextTimer;
      if (!next || next.kind === 'retry') return;
      if (this.now() >= next.at) {
        this.entity.timerDue = true;
        this.entity.wake();
      } else if (![...this.fireTimes].some((t) => t <= next.at)) this.start(next.at);
    });
  }
}
