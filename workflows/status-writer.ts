/**
 * Writes an object's status only when it changed, one write at a time, with an Event when the phase
 * changes. The write itself (the `writeStatus` activity, local or regular) is passed in, so the rule
 * is unit-tested without a workflow.
 */
import type { WriteStatusInput } from '../core/activity-contract';
import type { ObjectStatus } from '../core/definitions';
import type { ObjectEntity } from './object-entity';
import { phaseChangeEvent, retiredSteps } from '../core/status';
import { sameStatus, type desiredStatus } from './object-state';

/** The status a pass wants written (what {@link desiredStatus} returns). */
export type WantedStatus = ReturnType<typeof desiredStatus>;

/** The Event to record with a write that changes the phase. */
export interface StatusEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly note: string;
  /**
   * The Event's own dedup key, for an Event that is not the phase's (an approval decision): without it
   * the key is the generation, phase and pass, which a later write of the same phase in the pass shares.
   */
  readonly dedupKey?: string;
}

/** Serialized, change-only status writes of one object. */
export class StatusWriter {
  /** The status as last read (by observe) or written. */
  known: ObjectStatus = {};
  /** The resourceVersion at which {@link known} was read; unknown once homeostat has written. */
  private knownVersion: string | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  /** Writes asked for and not yet settled (each settles in its own callback: no promise of its own). */
  private pending = 0;

  /**
   * @param entity the run's state: its phase and conditions follow every wanted status.
   * @param write writes status through the `writeStatus` activity; `summary` names it in the UI.
   */
  constructor(
    private readonly entity: ObjectEntity,
    private readonly write: (input: WriteStatusInput, summary: string) => Promise<unknown>,
  ) {}

  /** Records the status an observation read, at the object's `resourceVersion`. */
  observed(status: ObjectStatus, resourceVersion: string): void {
    this.known = status;
    this.knownVersion = resourceVersion || undefined;
  }

  /**
   * Makes `wanted` the object's status: the run's phase and conditions follow at once; the write
   * happens only when `wanted` differs from what is known, after any write already under way.
   */
  async writeIfChanged(objUid: string, wanted: WantedStatus, eventFor?: StatusEvent): Promise<void> {
    const entity = this.entity;
    this.pending++;
    const next = this.chain.then(async () => {
      const retired = this.follow(wanted);
      const forgetRetired = (): void => {
        for (const step of retired) delete entity.previous[step];
      };
      if (sameStatus(this.known, wanted)) {
        this.pending--;
        forgetRetired();
        return;
      }
      const { dedupKey, ...shown } = eventFor ?? { type: 'Normal', reason: '', note: '' };
      const phaseEvent = phaseChangeEvent(this.known.phase, wanted, eventFor && shown, entity.passes + 1);
      const event = phaseEvent && dedupKey !== undefined ? { ...phaseEvent, dedupKey } : phaseEvent;
      // Observed with no status at all: the write needs no read first (see WriteStatusInput).
      const expectedVersion = this.knownVersion && Object.keys(this.known).length === 0 ? this.knownVersion : undefined;
      try {
        await this.write(
          {
            ref: entity.ref,
            uid: objUid,
            status: wanted,
            ...(event ? { event } : {}),
            ...(expectedVersion ? { expectedVersion } : {}),
            ...(retired.length > 0 ? { retiredSteps: retired } : {}),
          },
          `status ${wanted.phase} gen ${wanted.observedGeneration} · ${entity.ref.kind} ${entity.where}`,
        );
      } finally {
        this.pending--;
      }
      // Fields a pass did not report stay as they were written.
      const fields = { ...this.known.fields, ...wanted.fields };
      this.known = Object.keys(fields).length > 0 ? { ...wanted, fields } : wanted;
      this.knownVersion = undefined;
      entity.statusWritten = true;
      forgetRetired();
    });
    this.chain = next.catch(() => undefined);
    await next;
  }

  /**
   * {@link writeIfChanged} in the same turn when it would write nothing: when no write is under way
   * and `wanted` is the known status, the run's phase and conditions follow it at once and this returns
   * true, with no promise made; otherwise it does nothing and returns false (call `writeIfChanged`).
   * Each promise of workflow code costs the SDK a stack trace (its promise hook); a drift check that
   * finds nothing to do asked for such a write every time (workflow-code version 6 and up).
   */
  unchangedAtOnce(wanted: WantedStatus): boolean {
    if (this.pending > 0 || !sameStatus(this.known, wanted)) return false;
    for (const step of this.follow(wanted)) delete this.entity.previous[step];
    return true;
  }

  /**
   * The run's phase and conditions follow `wanted`. Returns the steps of an earlier operator version's
   * plan: `wanted` removes their conditions, and they are forgotten once the status is known to be
   * without them (written, or found so).
   */
  private follow(wanted: WantedStatus): string[] {
    const entity = this.entity;
    entity.phase = wanted.phase;
    entity.conditions = wanted.conditions;
    return entity.plan ? retiredSteps(entity.plan, Object.keys(entity.previous)) : [];
  }
}
