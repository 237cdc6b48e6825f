/**
 * The status homeostat owns on an object, as read: from its status subresource, or from annotations
 * on kinds homeostat does not define (a `Namespace`: see `statusAnnotations`), and which condition
 * types are homeostat's (every other one belongs to another controller and is kept as it is).
 */
import type { ConditionSpec, ObjectStatus, Phase, StatusFields } from '../core/definitions';
import type { ReconcilerPlan } from '../core/plan';
import { homeostatConditionTypes, reservedStatusFields, statusAnnotations, stepConditionType } from '../core/status';
import { type CustomObject, type StatusLocation } from './kubernetes';
import { approvedConditionType } from '../core/approval';

/** The status homeostat wrote into annotations (kinds it does not define), in the shape of `status`. */
export function annotatedStatus(obj: CustomObject): Record<string, unknown> {
  const a = obj.metadata.annotations ?? {};
  const generation = Number(a[statusAnnotations.observedGeneration]);
  let conditions: unknown;
  try {
    conditions = JSON.parse(a[statusAnnotations.conditions] ?? 'null');
  } catch {
    conditions = undefined; // edited by hand into something else: rewritten on the next status write
  }
  return {
    ...(Number.isInteger(generation) && a[statusAnnotations.observedGeneration] !== undefined
      ? { observedGeneration: generation }
      : {}),
    ...(a[statusAnnotations.phase] !== undefined ? { phase: a[statusAnnotations.phase] } : {}),
    ...(Array.isArray(conditions) ? { conditions } : {}),
  };
}

/**
 * The status fields homeostat owns, as read (from `status` or from annotations), without transition
 * times. The `Approved` condition (`core/approval.ts`) is left out: it records the latest approval
 * decision and stays as written until the next one, so the passes after it (which do not report it)
 * compare equal and write nothing.
 */
export function ownedStatus(obj: CustomObject, location: StatusLocation = 'subresource'): ObjectStatus {
  const status = location === 'annotations' ? annotatedStatus(obj) : (obj.status ?? {});
  const conditions = Array.isArray(status.conditions)
    ? (status.conditions as Record<string, unknown>[]).filter((c) => c.type !== approvedConditionType)
    : undefined;
  return {
    ...(typeof status.observedGeneration === 'number' ? { observedGeneration: status.observedGeneration } : {}),
    ...(typeof status.phase === 'string' ? { phase: status.phase as Phase } : {}),
    ...(conditions
      ? {
          conditions: conditions.map((c) => ({
            type: String(c.type),
            status: c.status as ConditionSpec['status'],
            reason: typeof c.reason === 'string' ? c.reason : '',
            message: typeof c.message === 'string' ? c.message : '',
            ...(typeof c.observedGeneration === 'number' ? { observedGeneration: c.observedGeneration } : {}),
          })),
        }
      : {}),
    ...(location === 'subresource' ? fieldsOf(status) : {}),
  };
}

/** The reconciler's own status fields of a status: its top-level plain values other than homeostat's. */
function fieldsOf(status: Record<string, unknown>): { fields?: StatusFields } {
  const fields: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(status)) {
    if (reservedStatusFields.has(key)) continue;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') fields[key] = value;
  }
  return Object.keys(fields).length > 0 ? { fields } : {};
}

/**
 * The condition types homeostat owns on an object of `plan`: `Ready`, `Progressing`, `Degraded`, one
 * `<Step>Ready` per step and cleanup step, one per step an earlier plan had (`retired`: the workflow
 * ran them, on an operator version before this one), and whatever it is writing now. Every other
 * condition belongs to another controller (or a person) and is kept as it is by status writes.
 */
export function ownedConditionTypes(
  plan: Pick<ReconcilerPlan, 'steps' | 'cleanup'>,
  writing: ObjectStatus,
  retired: readonly string[] = [],
): Set<string> {
  return new Set<string>([
    ...homeostatConditionTypes,
    ...[...plan.steps, ...(plan.cleanup ?? [])].map((s) => stepConditionType(s.name)),
    ...retired.map(stepConditionType),
    ...(writing.conditions ?? []).map((c) => c.type),
  ]);
}

/** `status` with only the conditions of `owned` types: what a status write compares with what it writes. */
export function onlyOwned(status: ObjectStatus, owned: ReadonlySet<string>): ObjectStatus {
  return status.conditions ? { ...status, conditions: status.conditions.filter((c) => owned.has(c.type)) } : status;
}
