/**
 * The request and response schemas of the API's routes (zod): Fastify validates requests and
 * serializes answers with them, and the OpenAPI document is generated from them.
 */
import { z } from 'zod';
import { phases } from '../core/definitions';
import { problemCodes, type ProblemCode } from './problems';

/** A DNS label (a namespace). */
export const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The phases an object's workflow reports, as the list filter accepts them (core's list). */
export { phases };

/** The path of an object: `/:group/:version/:kind/:namespace/:name`. */
export const objectParams = z.object({
  group: z
    .string()
    .max(253)
    .regex(dnsSubdomain, 'an API group (core for the core group)')
    .describe('API group; `core` for the core group'),
  version: z
    .string()
    .max(32)
    .regex(/^v\d+((alpha|beta)\d+)?$/, 'an API version such as v1alpha1'),
  kind: z
    .string()
    .max(63)
    .regex(/^[A-Z][A-Za-z0-9]*$/, 'a kind such as PostgresDatabase'),
  namespace: z
    .string()
    .max(63)
    .regex(/^(_|[a-z0-9]([-a-z0-9]*[a-z0-9])?)$/, 'a namespace, or _ for cluster-scoped objects'),
  name: z.string().max(253).regex(dnsSubdomain, 'an object name (DNS subdomain)'),
});

/** The validated path of an object. */
export type ObjectParams = z.infer<typeof objectParams>;

const conditionSchema = z.object({
  type: z.string(),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string(),
  message: z.string(),
  observedGeneration: z.number().optional(),
});
const stepSchema = z.object({
  status: z.string(),
  attempts: z.number(),
  message: z.string().optional(),
  requeueAfterMs: z.number().optional(),
});
const outcomeSchema = z.object({
  pass: z.number(),
  result: z.string(),
  phase: z.string(),
  generation: z.number(),
  uid: z.string().optional(),
  steps: z.record(z.string(), stepSchema),
  error: z.string().optional(),
  requeueAfterMs: z.number().optional(),
  statusWritten: z.boolean(),
});
const problemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number(),
  code: z.string(),
  detail: z.string(),
  instance: z.string().optional(),
});

/** Every status the API answers with a problem document, in every route's responses (OpenAPI included). */
export const problemResponses = Object.fromEntries(
  [...new Set(Object.values(problemCodes))].map((status) => [status, problemSchema]),
) as Record<(typeof problemCodes)[ProblemCode], typeof problemSchema>;

/** `GET /v1/kinds`: the kinds the API serves. */
export const kindsResponse = z.object({
  kinds: z.array(
    z.object({
      group: z.string(),
      version: z.string(),
      kind: z.string(),
      plural: z.string(),
      scope: z.enum(['Namespaced', 'Cluster']),
      shortNames: z.array(z.string()),
    }),
  ),
});

/** `POST …/reconcile`: whether to wait for the pass. */
export const reconcileQuery = z.object({
  wait: z.enum(['true', 'false']).default('true').describe('false: answer 202 once the request is accepted'),
});

/** `POST …/reconcile`: an optional reason, logged. */
export const reconcileBody = z
  .object({ reason: z.string().max(200).optional() })
  .strict()
  .nullish();

/** `POST …/reconcile`: the pass's outcome. */
export const reconcileDone = z.object({ workflowId: z.string(), link: z.string().optional(), outcome: outcomeSchema });

/** `POST …/reconcile`: accepted, the pass still runs. */
export const reconcileAccepted = z.object({
  workflowId: z.string(),
  link: z.string().optional(),
  accepted: z.literal(true),
});

/** `GET /v1/objects/…`: the `state` query of the object's workflow. */
export const objectStateResponse = z.object({
  workflowId: z.string(),
  link: z.string().optional(),
  state: z.object({
    phase: z.string(),
    conditions: z.array(conditionSchema),
    observedGeneration: z.number().optional(),
    wantedGeneration: z.number().optional(),
    reconciling: z.boolean(),
    steps: z.record(z.string(), stepSchema),
    lastError: z.string().optional(),
    nextTimer: z.object({ kind: z.string(), at: z.string() }).optional(),
    passes: z.number(),
    run: z.number(),
    pending: z.boolean(),
  }),
});

/** `GET /v1/objects`: kind, filters and page. */
export const listQuery = z.object({
  kind: z
    .string()
    .max(63)
    .regex(/^[A-Z][A-Za-z0-9]*$/),
  namespace: z.string().max(63).regex(dnsLabel).optional(),
  phase: z.enum(phases).optional(),
  pageSize: z.coerce.number().int().min(1).max(100).default(50),
  pageToken: z
    .string()
    .max(4096)
    .regex(/^[A-Za-z0-9_-]*$/)
    .optional(),
});

/** `GET /v1/objects`: a page of objects. */
export const listResponse = z.object({
  items: z.array(
    z.object({
      workflowId: z.string(),
      kind: z.string().optional(),
      namespace: z.string().optional(),
      name: z.string().optional(),
      phase: z.string().optional(),
      generation: z.number().optional(),
      status: z.string(),
    }),
  ),
  nextPageToken: z.string().optional(),
});
