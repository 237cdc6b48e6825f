/** The `status` schema of every generated CRD: homeostat's own fields and a reconciler's declared ones. */
import { phases } from '../core/definitions';
import type { CrdOptions } from '../core/reconciler';

type Json = Record<string, unknown>;

/** The status schema homeostat writes (observedGeneration, phase, metav1.Condition list). */
export const statusSchema: Json = {
  type: 'object',
  properties: {
    observedGeneration: {
      type: 'integer',
      format: 'int64',
      minimum: 0,
      description: 'The generation of the spec that homeostat last reconciled.',
    },
    phase: {
      description: 'Where the object stands: Pending, Reconciling, Ready, Degraded, Invalid or Deleting.',
      type: 'string',
      enum: [...phases],
    },
    conditions: {
      description: 'The latest observations of the object (Ready, Progressing, Degraded and one per step).',
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
      items: {
        type: 'object',
        required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
        properties: {
          type: {
            description: 'The type of the condition (Ready, Progressing, Degraded or a step).',
            type: 'string',
            maxLength: 316,
            pattern:
              '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
          },
          status: { description: 'True, False or Unknown.', type: 'string', enum: ['True', 'False', 'Unknown'] },
          observedGeneration: {
            description: 'The generation of the spec the condition was set for.',
            type: 'integer',
            format: 'int64',
            minimum: 0,
          },
          lastTransitionTime: {
            description: 'When the condition last changed its status.',
            type: 'string',
            format: 'date-time',
          },
          reason: {
            description: 'Why the condition is as it is, in one CamelCase word.',
            type: 'string',
            maxLength: 1024,
            minLength: 1,
            pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
          },
          message: { description: 'What happened, for people.', type: 'string', maxLength: 32768 },
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
