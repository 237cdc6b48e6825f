/**
 * The labels homeostat puts on every child it creates: who manages it and which object owns it. The
 * bridge watches owned kinds by {@link ownedChildSelector} only, so it never lists the cluster's other
 * Secrets or ConfigMaps. Labels are forgeable by whoever can write the object: they select what the
 * bridge caches, never what homeostat may change — the controller ownerReference's UID decides that.
 */

/** The label keys of homeostat's children. */
export const childLabels = {
  managedBy: 'app.kubernetes.io/managed-by',
  ownerUid: 'homeostat.dev/owner-uid',
} as const;

/** The value of {@link childLabels}`.managedBy` on homeostat's children. */
export const managedByValue = 'homeostat';

/** The label selector owned children are watched by: `app.kubernetes.io/managed-by=homeostat`. */
export const ownedChildSelector = `${childLabels.managedBy}=${managedByValue}`;
