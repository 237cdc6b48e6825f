/** Comparing the part of `status` homeostat owns (shared by the workflow and the status activity). */
import type { ObjectStatus } from './definitions';

/**
 * Whether status `a` (as read or last written) already shows `b` (as wanted): the same
 * observedGeneration, phase and conditions (compared by type, ignoring order and times), and every
 * reconciler field `b` reports with the same value in `a` (fields `b` does not report are left as
 * they are, so they do not count).
 */
export function sameStatus(a: ObjectStatus, b: ObjectStatus): boolean {
  if (a.observedGeneration !== b.observedGeneration || a.phase !== b.phase) return false;
  for (const [key, value] of Object.entries(b.fields ?? {})) if (a.fields?.[key] !== value) return false;
  const ca = [...(a.conditions ?? [])].sort((x, y) => x.type.localeCompare(y.type));
  const cb = [...(b.conditions ?? [])].sort((x, y) => x.type.localeCompare(y.type));
  if (ca.length !== cb.length) return false;
  return ca.every((c, i) => {
    const d = cb[i]!;
    return (
      c.type === d.type &&
      c.status === d.status &&
      c.reason === d.reason &&
      c.message === d.message &&
      c.observedGeneration === d.observedGeneration
    );
  });
}

/**
 * The annotations that carry homeostat's status on kinds it does not define (a `Namespace`, whose
 * `status` belongs to Kubernetes; any reconciler with `crd: false`): the phase, the observed
 * generation (`0` for kinds without generations) and the conditions as a JSON list of
 * `metav1.Condition`s with their transition times. API surface, like the status fields.
 */
export const statusAnnotations = {
  phase: 'homeostat.dev/phase',
  observedGeneration: 'homeostat.dev/observed-generation',
  conditions: 'homeostat.dev/conditions',
} as const;

/** homeostat's own status fields, which a reconciler cannot declare or report as its own. */
export const reservedStatusFields: ReadonlySet<string> = new Set(['observedGeneration', 'phase', 'conditions']);

/** The name of a reconciler's own status field: lowerCamelCase, as Kubernetes' API conventions write fields. */
export const statusFieldName = /^[a-z][A-Za-z0-9]{0,62}$/;
