/**
 * Writing an object's status: merged by condition type (other controllers' conditions kept), with a
 * resourceVersion precondition and a re-read on 409, to the status subresource or to annotations
 * (`statusLocationOf`), the Event after the write; and the status observe writes for a pass whose
 * leading steps all succeeded.
 */
import type {
  LeadingStepOutcome,
  ObjectSnapshot,
  StepActivityResult,
  WriteStatusInput,
} from '../core/activity-contract';
import type { ObjectRef, StatusFields } from '../core/definitions';
import type { ReconcilerPlan } from '../core/plan';
import { phaseChangeEvent, sameStatus, succeededPassStatus, statusAnnotations } from '../core/status';
import { isConflict, isNotFound } from '../core/errors';
import { identityOf, statusLocationOf, type CustomObject } from './kubernetes';
import { recordEvent } from './events';
import { annotatedStatus, onlyOwned, ownedConditionTypes, ownedStatus } from './owned-status';
import type { ActivityContext } from './activity-context';

/** What a status write did: the object as written, or why nothing was written. */
export type StatusWriteOutcome =
  { written: true; object: CustomObject } | { written: false; reason: 'unchanged' | 'gone' };

/** The status writes of one worker's activities. */
export interface StatusWriter {
  /**
   * Writes status as the `writeStatus` activity does. `start`: the object as just read, so the first
   * attempt needs no read of its own.
   */
  writeOwnStatus(input: WriteStatusInput, start?: CustomObject): Promise<StatusWriteOutcome>;
  /** Observe's status write for a pass whose leading steps all succeeded (`retired`: steps of an earlier plan whose conditions go): the object as written, if it was. */
  writePassStatus(
    plan: ReconcilerPlan,
    ref: ObjectRef,
    obj: CustomObject,
    snapshot: ObjectSnapshot,
    leading: readonly LeadingStepOutcome[],
    pass: number,
    retired?: readonly string[],
  ): Promise<CustomObject | undefined>;
}

/** Builds the status writes on the shared clients of `c`. */
export function statusWriter(c: ActivityContext): StatusWriter {
  const { kc, primary, conflictRetries, reporting, log, reconcilerFor } = c;

  /**
   * Writes status as the `writeStatus` activity does (merge by condition type, resourceVersion
   * precondition, re-read on 409, the Event after the write). `start`: the object as just read, so
   * the first attempt needs no read of its own. Returns the object as written.
   */
  const writeOwnStatus = async (input: WriteStatusInput, start?: CustomObject): Promise<StatusWriteOutcome> => {
    const reconciler = reconcilerFor(input.ref);
    const { plan } = reconciler;
    const location = statusLocationOf(reconciler);
    const owned = ownedConditionTypes(plan, input.status, input.retiredSteps);
    // Observed with no status at all (a new object): nothing to merge, so the first write needs no
    // read. The resourceVersion precondition keeps it safe; a 409 (changed meanwhile, or another
    // object of that name) falls back to read, merge, write.
    let unread = input.expectedVersion || undefined;
    let read = start;
    for (let i = 0; ; i++) {
      const obj = unread ? undefined : (read ?? (await primary.get(plan, input.ref)));
      read = undefined;
      if (!unread) {
        if (!obj || obj.metadata.uid !== input.uid) return { written: false, reason: 'gone' };
        if (sameStatus(onlyOwned(ownedStatus(obj, location), owned), input.status)) {
          return { written: false, reason: 'unchanged' };
        }
      }
      const resourceVersion = unread ?? obj?.metadata.resourceVersion;
      const before = !obj ? {} : location === 'annotations' ? annotatedStatus(obj) : (obj.status ?? {});
      const existing = Array.isArray(before.conditions)
        ? (before.conditions as { type?: string; status?: string; lastTransitionTime?: string }[])
        : [];
      const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
      // Merged by type: homeostat's conditions replaced, every other controller's kept as read
      // (after homeostat's, in their order). The resourceVersion precondition below makes the merge safe: a
      // condition written meanwhile is a 409, and the merge is redone on what is there then.
      const ours = input.status.conditions.map((c) => {
        const previous = existing.find((e) => e.type === c.type);
        return {
          ...c,
          lastTransitionTime:
            previous?.status === c.status && previous.lastTransitionTime ? previous.lastTransitionTime : now,
        };
      });
      const foreign = existing.filter((e) => typeof e.type === 'string' && !owned.has(e.type));
      const conditions = [...ours, ...foreign];
      const { observedGeneration, phase, fields } = input.status;
      let written: CustomObject;
      try {
        if (location === 'annotations') {
          written = await primary.patch(plan, input.ref, {
            metadata: {
              resourceVersion,
              annotations: {
                [statusAnnotations.phase]: phase,
                [statusAnnotations.observedGeneration]: String(observedGeneration),
                [statusAnnotations.conditions]: JSON.stringify(conditions),
              },
            },
          });
        } else {
          written = await primary.patch(
            plan,
            input.ref,
            {
              metadata: { resourceVersion },
              status: { observedGeneration, phase, conditions, ...fields },
            },
            'status',
          );
        }
      } catch (err) {
        if (unread && (isConflict(err) || isNotFound(err))) {
          log.debug({ ref: input.ref }, 'status changed since observed, re-reading');
          unread = undefined;
          i--; // the unread attempt is not one of the conflict retries
          continue;
        }
        if (isConflict(err) && i < conflictRetries) {
          log.debug({ ref: input.ref, attempt: i }, 'status conflict, re-reading');
          continue;
        }
        throw err;
      }
      if (input.event) await recordEvent(kc, identityOf(written), input.event, reporting);
      return { written: true, object: written };
    }
  };

  /**
   * Observe's status write for a pass whose every step it ran and that all succeeded: the status the
   * workflow would write at the end of that pass (`succeededPassStatus`), with its Event when the phase
   * changes, unless the object already shows it. Returns the object as written, or nothing when
   * nothing was written; a failed write is left to the workflow's own status write.
   */
  const writePassStatus = async (
    plan: ReconcilerPlan,
    ref: ObjectRef,
    obj: CustomObject,
    snapshot: ObjectSnapshot,
    leading: readonly LeadingStepOutcome[],
    pass: number,
    retired: readonly string[] = [],
  ): Promise<CustomObject | undefined> => {
    const results = plan.steps.map((step) => {
      const outcome = leading.find((o) => o.step === step.name);
      return outcome && 'result' in outcome ? outcome.result : undefined;
    });
    if (results.some((r) => r === undefined)) return undefined;
    const done = results as StepActivityResult[];
    const fields = Object.assign({}, ...done.map((r) => r.status ?? {})) as StatusFields;
    const passed = succeededPassStatus(
      snapshot.generation,
      plan.steps.map((step, i) => ({
        name: step.name,
        ...(done[i]!.message ? { message: done[i]!.message } : {}),
        ...(done[i]!.progressing !== undefined ? { progressing: done[i]!.progressing } : {}),
      })),
      fields,
    );
    const event = phaseChangeEvent(snapshot.status.phase, passed.status, passed.event, pass);
    try {
      // Unchanged status is not written: writeOwnStatus compares it with `obj` before any request.
      const outcome = await writeOwnStatus(
        {
          ref,
          uid: snapshot.uid,
          status: passed.status,
          ...(event ? { event } : {}),
          ...(retired.length > 0 ? { retiredSteps: retired } : {}),
        },
        obj,
      );
      return outcome.written ? outcome.object : undefined;
    } catch (err) {
      log.warn(
        { ref, err: (err as Error).message },
        'status write with the observation failed; the workflow writes it',
      );
      return undefined;
    }
  };

  return { writeOwnStatus, writePassStatus };
}
