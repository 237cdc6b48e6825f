/**
 * The schemas of `POST /v1/objects/…/plan` (zod): the optional manifest it plans instead of the stored
 * object, and the dry run's result ({@link DryRunResult}, `core/dry-run.ts`), so its JSON shape is
 * documented in the OpenAPI document and checked on every answer.
 */
import { z } from 'zod';
import type { DryRunResult } from '../core/dry-run';

/** `POST …/plan`: a manifest to plan instead of the stored object (absent: the stored object). */
export const planBody = z
  .object({
    apiVersion: z.string().max(253),
    kind: z.string().max(63),
    metadata: z
      .object({ name: z.string().max(253), namespace: z.string().max(63).optional() })
      .passthrough()
      .describe('must name the object of the path'),
    spec: z.unknown().optional(),
  })
  .passthrough()
  .nullish()
  .describe(
    'A manifest of the object, as `kubectl apply -f` takes it: planned instead of the stored object (`kubectl diff -f`). It must name the kind, namespace and name of the path; it is validated as the API server would (a server-side apply with `dryRun: All`), then by the reconciler’s schema.',
  );

const fieldChange = z.object({
  path: z.string(),
  old: z.unknown().optional().describe('absent: the field would be added; Secret data shows as `(redacted)`'),
  new: z.unknown().optional().describe('absent: the field would be removed'),
});

const childDiff = z.object({
  apiVersion: z.string(),
  kind: z.string(),
  namespace: z.string().optional(),
  name: z.string(),
  action: z.enum(['create', 'update', 'unchanged', 'delete', 'refused']),
  fields: z.array(fieldChange).readonly(),
  reason: z.string().optional().describe('why it was refused: someone else controls it'),
});

const plannedChange = z.object({ action: z.string(), target: z.string(), detail: z.string().optional() });

const dryRunStep = z.object({
  name: z.string(),
  outcome: z
    .enum(['previewed', 'no-preview', 'failed', 'skipped'])
    .describe(
      '`previewed`: `children` and `changes` are what it would do; `no-preview`: it would run, what it would do is unknown (it was not run); `failed`: its preview failed, as the pass would (`message`, `code`); `skipped`: a step it depends on did not preview.',
    ),
  children: z.array(childDiff).readonly(),
  changes: z.array(plannedChange).readonly(),
  message: z.string().optional(),
  code: z.string().optional(),
});

/** `POST …/plan`: what a pass would do ({@link DryRunResult}). */
export const planResponse = z.object({
  version: z.literal(1),
  ref: z.object({
    group: z.string(),
    version: z.string(),
    kind: z.string(),
    namespace: z.string().optional(),
    name: z.string(),
  }),
  source: z.enum(['stored', 'manifest']),
  exists: z.boolean(),
  pass: z.enum(['reconcile', 'cleanup']),
  steps: z.array(dryRunStep).readonly(),
  changed: z
    .boolean()
    .describe('false only when every step previewed and none would change anything (`homeostat diff` exits 0)'),
});

// The schema and the shared type must describe the same JSON (a compile-time check).
const sameShape = (r: DryRunResult): z.input<typeof planResponse> => r;
void sameShape;
