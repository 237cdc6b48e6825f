/** The `status` schema of every generated CRD: homeostat's own fields and a reconciler's declared ones. */
import type { CrdOptions } from '../core/reconciler';

type Json = Record<string, unknown>;

/** The status schema homeostat writes (observedGeneration, phase, metav1.Condition list). */
export const statusSchema: Json = {
  type: 'object',
  properties: {
    observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
    phase: { type: 'string', enum: ['Pending', 'Reconciling', 'Ready', 'Degraded', 'Invalid', 'Deleting'] },
    conditions: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
      items: {
        type: 'object',
        required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
        properties: {
          type: {
            type: 'string',
            maxLength: 316,
            pattern:
              '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
          },
          status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
          observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
          lastTransitionTime: { type: 'string', format: 'date-time' },
          reason: {
            type: 'string',
            maxLength: 1024,
            minLength: 1,
            pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
          },
          message: { type: 'string', maxLength: 32768 },
        },
      },
    },
  },
  // Reconcilers may report more (e.g. per-child results); keep it rather than prune it.
  'x-kubernetes-preserve-unknown-fields': true,
};

/** The types a reconciler's own status field may have. */
export const statusFieldTypes: ReadonlySet<unknown> = new Set(['integer', 'number', 'string', 'boolean']);

/** homeostat's status schema with a reconciler's own fields ({@link CrdOptions.status}). */
export function statusSchemaWith(fields: CrdOptions['status']): Json {
  const own = Object.entries(fields ?? {});
  if (own.length === 0) return statusSchema;
  return {
    ...statusSchema,
    properties: {
      ...(statusSchema.properties as Json),
      ...Object.fromEntries(
        own.map(([name, f]) => [name, { type: f.type, ...(f.description ? { description: f.description } : {}) }]),
      ),
    },
  };
}
