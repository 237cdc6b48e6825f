/**
 * The request and response schemas of the API's routes (zod): Fastify validates requests and
 * serializes answers with them, and the OpenAPI document is generated from them.
 */
import { z } from 'zod';
import { phases } from '../core/definitions';
import { awaitingApprovalSchema } from './approval-schemas';
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
/** What each status of a problem answer means on every route; a route may say more of its own. */
const problemMeanings = {
  400: 'The request does not fit this document (path, query or body), or its JSON body does not parse.',
  401: 'No valid bearer token. Answered before anything else, for every path and method but the public ones.',
  403: 'RBAC does not allow the caller the verb on the resource (SubjectAccessReview).',
  404: 'Nothing is there.',
  405: 'The path is served, but not with this method (see `Allow`): a path parameter of `.` or `..` is resolved away and the path can then name another route.',
  409: 'The object’s workflow refused the request.',
  413: 'The body is over the size limit (16 KiB by default).',
  415: 'The body is not `application/json`.',
  422: 'The manifest given (`…/plan`) names another object, or the API server or the reconciler’s schema refuses it.',
  429: 'Over the rate limit of the caller, or over the failed-authentication budget of the client address; see `Retry-After`.',
  502: 'A call the API made failed; the server log has the cause.',
  503: 'Temporal is unreachable, or (reading state) no worker polls the object’s task queue.',
  504: 'Temporal did not answer in time.',
} as const;

/** The statuses every route may answer with a problem document. */
export type ProblemStatus = keyof typeof problemMeanings;

/** A problem document of `status`, whose `code` is one of that status's codes. */
function problemSchema(status: ProblemStatus, meaning: string) {
  const codes = (Object.keys(problemCodes) as ProblemCode[]).filter((c) => problemCodes[c] === status);
  return z
    .object({
      type: z.string(),
      title: z.string(),
      status: z.literal(status),
      code: z.enum(codes as [ProblemCode, ...ProblemCode[]]).describe('stable error code'),
      detail: z.string(),
      instance: z.string().optional(),
    })
    .describe(`${meaning} Codes: ${codes.join(', ')}.`);
}

/**
 * The problem answers of a route, in its responses (OpenAPI included): every status the API answers
 * with a problem document, described, with what `more` says of this route's own causes.
 */
export function problemResponsesWith(more: Partial<Record<ProblemStatus, string>> = {}) {
  return Object.fromEntries(
    Object.entries(problemMeanings).map(([status, meaning]) => {
      const s = Number(status) as ProblemStatus;
      return [s, problemSchema(s, more[s] ? `${meaning} ${more[s]}` : meaning)];
    }),
  ) as { [S in ProblemStatus]: ReturnType<typeof problemSchema> };
}

/** Every status the API answers with a problem document, in every route's responses (OpenAPI included). */
export const problemResponses = problemResponsesWith();

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
    awaitingApproval: awaitingApprovalSchema.optional(),
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
    .min(23)
    .max(4096)
    .regex(/^[A-Za-z0-9_-]*$/)
    .optional()
    .describe(
      'The `nextPageToken` of the previous page, for the same kind, namespace and phase: opaque and sealed by this API, so any other token (made up, altered, for another query, or from an API with another key) is a 400.',
    ),
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
