/**
 * The wire contract of homeostat's per-object workflow: its ID scheme, start input, signals, queries
 * and updates. Clients (the informer bridge, the HTTP API, tests) import this file without importing
 * workflow code; wire names are kebab-case and are API surface (DESIGN.md).
 */
import { defineSignal } from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** A Kubernetes object, named by its API group/version/kind and namespace/name. */
export interface ObjectRef {
  /** API group; `''` for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** Undefined or `''` for a cluster-scoped object. */
  readonly namespace?: string;
  readonly name: string;
}

/** Why a reconcile was requested. */
export type ReconcileReason =
  'added' | 'updated' | 'deleted' | 'child-changed' | 'resync' | 'api' | 'drift' | 'requeue';

/**
 * A level-based reconcile request: it names the object and the state seen, never the body
 * (activities re-read the object).
 */
export interface ReconcileRequest {
  readonly ref: ObjectRef;
  /** The object's UID: the same name with a new UID is a new object. */
  readonly uid: string;
  /** `metadata.generation` seen by the sender (0 when unknown, e.g. deleted objects). */
  readonly generation: number;
  readonly resourceVersion: string;
  readonly reason: ReconcileReason;
}

/** The workflow type name of the per-object workflow. */
export const objectWorkflowType = 'objectWorkflow';

/** The default task queue of homeostat's workers. */
export const defaultTaskQueue = 'homeostat';

/**
 * The ID of an object's workflow: `homeostat/<group>/<kind>/<namespace>/<name>`, with `core` for the
 * core group and `_` for cluster-scoped objects.
 */
export function workflowIdFor(ref: Pick<ObjectRef, 'group' | 'kind' | 'namespace' | 'name'>): string {
  return `homeostat/${ref.group || 'core'}/${ref.kind}/${ref.namespace || '_'}/${ref.name}`;
}

/** Signal: reconcile this object (coalesced by the workflow). */
export const reconcileRequestedSignal = defineSignal<[ReconcileRequest]>('reconcile-requested');

/** Typed search attributes (Temporal UI and visibility), registered by devstack and deploy. */
export const searchAttributeKeys = {
  kind: defineSearchAttributeKey('HomeostatKind', SearchAttributeType.KEYWORD),
  namespace: defineSearchAttributeKey('HomeostatNamespace', SearchAttributeType.KEYWORD),
  name: defineSearchAttributeKey('HomeostatName', SearchAttributeType.KEYWORD),
  phase: defineSearchAttributeKey('HomeostatPhase', SearchAttributeType.KEYWORD),
  generation: defineSearchAttributeKey('HomeostatGeneration', SearchAttributeType.INT),
} as const;
