/**
 * A {@link PassTimer} on a fake clock for unit tests: its timers are recorded in `sleeps` and fire when
 * the test says (`sleeps[i].fire()`), at the time the test sets on `clock.now`.
 */
import type { ObjectRef } from '../../core/definitions';
import { ObjectEntity } from '../../workflows/object-entity';
import { PassTimer } from '../../workflows/pass-timer';

/** Builds the entity, its timer, the recorded timers and the clock. */
export function passTimerOnFakeClock(ref: ObjectRef) {
  const entity = new ObjectEntity({ ref });
  const clock = { now: 0 };
  const sleeps: { ms: number; fire: () => void }[] = [];
  const timer = new PassTimer(
    entity,
    (ms) => new Promise<void>((fire) => sleeps.push({ ms, fire })),
    () => clock.now,
  );
  return { entity, timer, sleeps, clock };
}
