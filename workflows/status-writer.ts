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
    const next = this.chain.then(async () => {
      entity.phase = wanted.phase;
      entity.conditions = wanted.conditions;
      // Steps of an earlier operator version's plan: their conditions are removed by this write, and
      // forgotten once the status is known to be without them (written, or found so).
      const retired = entity.plan ? retiredSteps(entity.plan, Object.keys(entity.previous)) : [];
      const forgetRetired = (): void => {
        for (const step of retired) delete entity.previous[step];
      };
      if (sameStatus(this.known, wanted)) {
        forgetRetired();
        return;
      }
      const { dedupKey, ...shown } = eventFor ?? { type: 'Normal', reason: '', note: '' };
      const phaseEvent = phaseChangeEvent(this.known.phase, wanted, eventFor && shown, entity.passes + 1);
      const event = phaseEvent && dedupKey !== undefined ? { ...phaseEvent, dedupKey } : phaseEvent;
      // Observed with no status at all: the write needs no read first (see WriteStatusInput).
      const expectedVersion = this.knownVersion && Object.keys(this.known).length === 0 ? this.knownVersion : undefined;
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
}
