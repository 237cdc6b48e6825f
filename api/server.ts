/**
 * The HTTP API (Fastify with the zod type provider): trigger a reconcile through update-with-start
 * of the object's workflow, read its state through the `state` query, list objects through Temporal
 * visibility, with Kubernetes authentication and authorization on every object route, problem
 * documents for every error, rate limits per caller, size limits, timeouts, health, metrics and an
 * OpenAPI document generated from the same schemas.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import type * as k8s from '@kubernetes/client-node';
import {
  type Client,
  WithStartWorkflowOperation,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import Fastify, { type FastifyError, type FastifyRequest } from 'fastify';
import {
  hasZodFastifySchemaValidationErrors,
  jsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { z } from 'zod';
import { plansOf, type Operator } from '../core/operator';
import { planRegistry, type PlanRegistry, type ReconcilerPlan } from '../core/plan';
import {
  type ObjectRef,
  objectWorkflowStartOptions,
  objectWorkflowType,
  reconcileNowUpdate,
  stateQuery,
  workflowIdFor,
} from '../core/definitions';
import type { AccessRequest, Caller, KubernetesAuth } from './auth';
import { codecEndpoint, type CodecEndpointOptions } from './codec-endpoint';
import { AuthFailureLimiter } from './failure-limiter';
import { ApiProblem, problem, problemCodes, type ProblemCode } from './problems';

/** What the API needs. */
export interface ApiDeps {
  readonly temporal: Client;
  readonly kc: k8s.KubeConfig;
  readonly objects: k8s.KubernetesObjectApi;
  readonly plans: PlanRegistry;
  /** Short names by kind (`pgdb`), listed by `GET /v1/kinds` for clients that resolve kinds. */
  readonly shortNames?: Readonly<Record<string, readonly string[]>>;
  readonly auth: Pick<KubernetesAuth, 'authenticate' | 'authorize'> & Partial<Pick<KubernetesAuth, 'known'>>;
  readonly log: Logger;
  /** @default 'homeostat' */
  readonly taskQueue: string;
  /** Base URL of the Temporal UI, for links to workflows. */
  readonly temporalUiUrl?: string;
  /** Requests per minute per caller. @default 600 */
  readonly rateLimitPerMinute?: number;
  /** How long `POST …/reconcile` waits for the pass before answering 202. @default 30_000 */
  readonly reconcileWaitMs?: number;
  /** Largest request body accepted. @default 16384 */
  readonly bodyLimit?: number;
  /**
   * Serve Temporal's codec-server protocol at `/codec/decode` and `/codec/encode` with this payload
   * codec, for the Temporal UI at `allowedOrigins` (see `codec-endpoint.ts`). @default not served
   */
  readonly codec?: {
    readonly payloadCodec: CodecEndpointOptions['codec'];
    readonly allowedOrigins?: readonly string[];
  };
  /**
   * Failed authentications (no token, a malformed or an invalid one) one client address may make per
   * minute before it gets 429 without a TokenReview. @default 30
   */
  readonly authFailuresPerMinute?: number;
  /** Deadline of each call to Temporal (the wait for a pass has its own, `reconcileWaitMs`). @default 10_000 */
  readonly temporalTimeoutMs?: number;
  /**
   * Key of the MAC that seals list page tokens, so only tokens this API issued (for the same query)
   * reach Temporal. Replicas behind one Service need the same key. @default random per process
   */
  readonly pageTokenKey?: Buffer;
  /** Serve HTTPS with this certificate and key (PEM); without it, plain HTTP. */
  readonly https?: { readonly cert: string | Buffer; readonly key: string | Buffer };
}

/**
 * The kinds an operator serves through the API, as {@link ApiDeps} takes them: its plans, and the
 * short names of the CRDs it defines (`pgdb`), listed by `GET /v1/kinds`.
 */
export function apiKindsOf(operator: Operator): Pick<ApiDeps, 'plans' | 'shortNames'> {
  return {
    plans: planRegistry(plansOf(operator)),
    shortNames: Object.fromEntries(
      operator.reconcilers.map((r) => [r.plan.kind, r.crd ? [...(r.crd.shortNames ?? [])] : []]),
    ),
  };
}

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const objectParams = z.object({
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
type ObjectParams = z.infer<typeof objectParams>;

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
const problems = Object.fromEntries(
  [...new Set(Object.values(problemCodes))].map((status) => [status, problemSchema]),
) as Record<(typeof problemCodes)[ProblemCode], typeof problemSchema>;

const fastifyCodes: Record<number, ProblemCode> = {
  400: 'ERR_VALIDATION',
  404: 'ERR_NOT_FOUND',
  413: 'ERR_PAYLOAD_TOO_LARGE',
  415: 'ERR_UNSUPPORTED_MEDIA_TYPE',
  429: 'ERR_RATE_LIMITED',
};

/** The part of an OpenAPI operation rewritten for problem documents. */
interface OpenApiOperation {
  responses?: Record<string, { content?: Record<string, unknown> }>;
}

const phases = ['Pending', 'Reconciling', 'Ready', 'Degraded', 'Invalid', 'Deleting'] as const;
const grpcDeadlineExceeded = 4;
const grpcUnavailable = 14;

/** The gRPC status code of a Temporal client error (on it or its cause), if it has one. */
function temporalStatus(err: unknown): number | undefined {
  for (let e = err, i = 0; typeof e === 'object' && e !== null && i < 4; e = (e as { cause?: unknown }).cause, i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'number') return code;
  }
  return undefined;
}

function findPlanFor(plans: PlanRegistry, p: ObjectParams): ReconcilerPlan {
  const group = p.group === 'core' ? '' : p.group;
  const plan = Object.values(plans).find((x) => x.group === group && x.kind === p.kind && x.version === p.version);
  if (!plan) throw new ApiProblem('ERR_UNKNOWN_KIND', `no reconciler for ${p.kind}.${p.group}/${p.version}`);
  return plan;
}

function refOf(plan: ReconcilerPlan, p: ObjectParams): ObjectRef {
  if ((plan.scope === 'Cluster') !== (p.namespace === '_')) {
    throw new ApiProblem(
      'ERR_VALIDATION',
      plan.scope === 'Cluster'
        ? `${plan.kind} is cluster-scoped: use _ as namespace`
        : `${plan.kind} is namespaced: _ is not a namespace`,
    );
  }
  return {
    group: plan.group,
    version: plan.version,
    kind: plan.kind,
    name: p.name,
    ...(p.namespace === '_' ? {} : { namespace: p.namespace }),
  };
}

function bearer(req: FastifyRequest): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)$/i.exec(header);
  if (!m?.[1]) throw new ApiProblem('ERR_UNAUTHENTICATED', 'the Authorization header must be "Bearer <token>"');
  return m[1];
}

/** Builds the API (not listening): call `listen()` on the result, or `inject()` in tests. */
export async function buildApiServer(deps: ApiDeps) {
  const app = Fastify({
    ...(deps.https ? { https: { cert: deps.https.cert, key: deps.https.key, minVersion: 'TLSv1.2' as const } } : {}),
    loggerInstance: deps.log,
    bodyLimit: deps.bodyLimit ?? 16_384,
    connectionTimeout: 60_000,
    requestTimeout: 60_000,
    routerOptions: { maxParamLength: 300 },
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'homeostat_api_' });
  const requests = new Counter({
    name: 'homeostat_api_requests_total',
    help: 'HTTP requests by route, method and status',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'homeostat_api_request_duration_seconds',
    help: 'HTTP request duration',
    labelNames: ['route', 'method'],
    registers: [registry],
  });
  const reconciles = new Counter({
    name: 'homeostat_api_reconciles_total',
    help: 'API-triggered reconciles by kind and result',
    labelNames: ['kind', 'result'],
    registers: [registry],
  });
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    requests.inc({ route, method: req.method, status: String(reply.statusCode) });
    duration.observe({ route, method: req.method }, reply.elapsedTime / 1000);
  });

  app.setErrorHandler((err: FastifyError | ApiProblem, req, reply) => {
    let doc;
    if (err instanceof ApiProblem) {
      doc = problem(err.code, err.message, req.url);
      if (err.retryAfterSeconds !== undefined) void reply.header('retry-after', String(err.retryAfterSeconds));
    } else if (hasZodFastifySchemaValidationErrors(err)) {
      const detail = err.validation.map((v) => `${v.instancePath || 'request'}: ${v.message ?? 'invalid'}`).join('; ');
      doc = problem('ERR_VALIDATION', `invalid ${err.validationContext ?? 'request'}: ${detail}`, req.url);
    } else if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
      // Fastify's and its plugins' client errors, as the documented code of their status (a status the
      // API does not document, e.g. 405, is answered as a 400 rather than with an undocumented status).
      const detail = typeof err.message === 'string' && err.message !== '' ? err.message : 'the request was refused';
      doc = problem(fastifyCodes[err.statusCode] ?? 'ERR_VALIDATION', detail, req.url);
    } else if (temporalStatus(err) === grpcDeadlineExceeded) {
      doc = problem('ERR_TIMEOUT', 'Temporal did not answer in time', req.url);
    } else if (temporalStatus(err) === grpcUnavailable) {
      doc = problem('ERR_UNAVAILABLE', 'Temporal is unreachable', req.url);
    } else {
      req.log.error({ err }, 'request failed');
      doc = problem('ERR_UPSTREAM', 'the request failed; see the server log', req.url);
    }
    return reply.status(doc.status).type('application/problem+json').send(doc);
  });
  app.setNotFoundHandler((req, reply) =>
    reply
      .status(404)
      .type('application/problem+json')
      .send(problem('ERR_NOT_FOUND', `no route ${req.method} ${req.url.split('?')[0] ?? ''}`, req.url)),
  );

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'homeostat API',
        version: '0.1.0',
        description: 'Trigger and read reconciles of Kubernetes objects.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
    // Errors are answered as application/problem+json (RFC 9457): the document says so.
    transformObject: (doc) => {
      const openapi = (doc as { openapiObject: { paths?: Record<string, Record<string, OpenApiOperation>> } })
        .openapiObject;
      for (const methods of Object.values(openapi.paths ?? {})) {
        for (const op of Object.values(methods)) {
          for (const [status, response] of Object.entries(op.responses ?? {})) {
            const json = response.content?.['application/json'];
            if (Number(status) >= 400 && json) response.content = { 'application/problem+json': json };
          }
        }
      }
      return openapi;
    },
  });

  await app.register(rateLimit, {
    global: true,
    max: deps.rateLimitPerMinute ?? 600,
    timeWindow: 60_000,
    keyGenerator: (req) => {
      const h = req.headers.authorization;
      return h ? createHash('sha256').update(h).digest('hex') : req.ip;
    },
    allowList: (req) => ['/healthz', '/readyz', '/metrics'].includes(req.url),
    // Thrown by the plugin, so answered by the error handler above like every other problem.
    errorResponseBuilder: (_req, ctx) =>
      new ApiProblem(
        'ERR_RATE_LIMITED',
        `rate limit of ${ctx.max} requests per minute exceeded; retry in ${ctx.after}`,
      ),
  });

  // Failed authentications are counted per client address and refused past the budget before any
  // TokenReview: random tokens cost the API server a bounded number of reviews (the rate limit above
  // is per token, so each made-up token would otherwise start a fresh bucket).
  const failures = new AuthFailureLimiter({ perWindow: deps.authFailuresPerMinute ?? 30 });
  const caller = async (req: FastifyRequest): Promise<Caller> => {
    const wait = failures.retryAfterMs(req.ip);
    const refuse = (problem: ApiProblem): never => {
      if (wait > 0) {
        throw new ApiProblem('ERR_RATE_LIMITED', `too many failed authentications from ${req.ip}`, {
          retryAfterSeconds: Math.ceil(wait / 1000),
        });
      }
      failures.fail(req.ip);
      throw problem;
    };
    let token: string | undefined;
    try {
      token = bearer(req);
    } catch (err) {
      if (err instanceof ApiProblem) return refuse(err);
      throw err;
    }
    if (!token) return refuse(new ApiProblem('ERR_UNAUTHENTICATED', 'a bearer token is required'));
    const invalid = new ApiProblem(
      'ERR_UNAUTHENTICATED',
      'the bearer token is not valid, or not meant for this API (mint it with --audience homeostat)',
    );
    // A static token or a cached answer costs nothing: a valid caller is let in even from an address
    // over its budget. Only a token that needs a TokenReview is refused there.
    const known = deps.auth.known?.(token);
    if (known) return known.caller ?? refuse(invalid);
    if (wait > 0) return refuse(invalid);
    const who = await deps.auth.authenticate(token);
    return who ?? refuse(invalid);
  };
  const allow = async (who: Caller, access: AccessRequest): Promise<void> => {
    if (!(await deps.auth.authorize(who, access))) {
      const where = access.namespace ? ` in namespace ${access.namespace}` : ' cluster-wide';
      throw new ApiProblem(
        'ERR_FORBIDDEN',
        `${who.user} may not ${access.verb} ${access.resource}.${access.group || 'core'}${where}`,
      );
    }
  };
  const uiLink = (workflowId: string): string | undefined =>
    deps.temporalUiUrl
      ? `${deps.temporalUiUrl}/namespaces/${deps.temporal.options.namespace}/workflows/${encodeURIComponent(workflowId)}`
      : undefined;

  const pageKey = deps.pageTokenKey ?? randomBytes(32);
  const pageMac = (query: string, token: Buffer): Buffer =>
    createHmac('sha256', pageKey).update(query).update('\0').update(token).digest().subarray(0, 16);
  const sealPageToken = (query: string, token: Buffer): string =>
    Buffer.concat([pageMac(query, token), token]).toString('base64url');
  const openPageToken = (query: string, text: string): Buffer | undefined => {
    const raw = Buffer.from(text, 'base64url');
    if (raw.length <= 16) return undefined;
    const token = raw.subarray(16);
    return timingSafeEqual(raw.subarray(0, 16), pageMac(query, token)) ? token : undefined;
  };

  // Every call to Temporal has a deadline: a slow or unreachable frontend answers 504, never a hang.
  const temporalCall = <R>(fn: () => Promise<R>, ms = deps.temporalTimeoutMs ?? 10_000): Promise<R> =>
    deps.temporal.connection.withDeadline(Date.now() + ms, fn);

  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
    try {
      await temporalCall(() => deps.temporal.workflowService.getSystemInfo({}));
      return { status: 'ok' };
    } catch (err) {
      return reply
        .status(503)
        .type('application/problem+json')
        .send(problem('ERR_UNAVAILABLE', `Temporal unreachable: ${(err as Error).message}`));
    }
  });
  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) =>
    reply.type(registry.contentType).send(await registry.metrics()),
  );
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  if (deps.codec) {
    await app.register(codecEndpoint, {
      prefix: '/codec',
      codec: deps.codec.payloadCodec,
      ...(deps.codec.allowedOrigins ? { allowedOrigins: deps.codec.allowedOrigins } : {}),
      errorResponses: problems,
      authorize: async (req, access) => allow(await caller(req), access),
    });
  }

  app.get(
    '/v1/kinds',
    {
      schema: {
        summary: 'List the kinds this API serves',
        description:
          'The operator’s kinds, with plural, scope and short names, so clients resolve `pgdb` or `apps` as kubectl does. Requires an authenticated caller.',
        response: {
          200: z.object({
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
          }),
          ...problems,
        },
      },
    },
    async (req) => {
      await caller(req);
      return {
        kinds: Object.values(deps.plans).map((p) => ({
          group: p.group,
          version: p.version,
          kind: p.kind,
          plural: p.plural,
          scope: p.scope,
          shortNames: [...(deps.shortNames?.[p.kind] ?? [])],
        })),
      };
    },
  );

  app.post(
    '/v1/objects/:group/:version/:kind/:namespace/:name/reconcile',
    {
      schema: {
        summary: 'Run a reconcile pass of an object now',
        description:
          'Runs a pass through update-with-start of the object’s workflow and returns its outcome. Passes of one object never overlap: a concurrent call gets the outcome of the next pass. Requires the `reconcile` verb on the resource (RBAC).',
        params: objectParams,
        querystring: z.object({
          wait: z.enum(['true', 'false']).default('true').describe('false: answer 202 once the request is accepted'),
        }),
        body: z
          .object({ reason: z.string().max(200).optional() })
          .strict()
          .nullish(),
        response: {
          200: z.object({ workflowId: z.string(), link: z.string().optional(), outcome: outcomeSchema }),
          202: z.object({ workflowId: z.string(), link: z.string().optional(), accepted: z.literal(true) }),
          ...problems,
        },
      },
    },
    async (req, reply) => {
      const plan = findPlanFor(deps.plans, req.params);
      const ref = refOf(plan, req.params);
      const who = await caller(req);
      await allow(who, {
        verb: 'reconcile',
        group: plan.group,
        resource: plan.plural,
        namespace: ref.namespace,
        name: ref.name,
      });
      const object = await deps.objects
        .read({
          apiVersion: `${plan.group ? `${plan.group}/` : ''}${plan.version}`,
          kind: plan.kind,
          metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
        })
        .catch((err: unknown) => {
          if ((err as { code?: number }).code === 404)
            throw new ApiProblem(
              'ERR_OBJECT_NOT_FOUND',
              `${plan.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name} does not exist`,
            );
          throw err;
        });
      // The bridge's start options (ID, input, static summary, the object's search attributes), so a
      // workflow started here is named and findable in the Temporal UI before its first pass.
      const startOptions = objectWorkflowStartOptions(ref, deps.taskQueue);
      const workflowId = startOptions.workflowId;
      const startWorkflowOperation = new WithStartWorkflowOperation(objectWorkflowType, {
        ...startOptions,
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
      let handle;
      try {
        handle = await temporalCall(() =>
          deps.temporal.workflow.startUpdateWithStart(reconcileNowUpdate, {
            args: [{ ref, ...(object.metadata?.uid ? { uid: object.metadata.uid } : {}) }],
            waitForStage: 'ACCEPTED',
            startWorkflowOperation,
          }),
        );
      } catch (err) {
        if (err instanceof WorkflowUpdateFailedError)
          throw new ApiProblem(
            'ERR_CONFLICT',
            `the workflow refused the reconcile: ${err.cause?.message ?? err.message}`,
          );
        throw err;
      }
      const link = uiLink(workflowId);
      req.log.info({ ref, user: who.user, reason: req.body?.reason }, 'reconcile requested');
      if (req.query.wait === 'false') {
        reconciles.inc({ kind: plan.kind, result: 'accepted' });
        return reply.status(202).send({ workflowId, ...(link ? { link } : {}), accepted: true as const });
      }
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>(
        (r) => (timer = setTimeout(() => r('timeout'), deps.reconcileWaitMs ?? 30_000)),
      );
      try {
        const waitMs = deps.reconcileWaitMs ?? 30_000;
        const result = temporalCall(() => handle.result(), waitMs + 1_000).catch((err: unknown) => {
          if (temporalStatus(err) === grpcDeadlineExceeded) return 'timeout' as const;
          throw err;
        });
        const outcome = await Promise.race([result, timeout]);
        if (outcome === 'timeout') {
          reconciles.inc({ kind: plan.kind, result: 'pending' });
          return reply.status(202).send({ workflowId, ...(link ? { link } : {}), accepted: true as const });
        }
        reconciles.inc({ kind: plan.kind, result: outcome.result });
        return reply.status(200).send({
          workflowId,
          ...(link ? { link } : {}),
          outcome: outcome,
        });
      } finally {
        clearTimeout(timer);
      }
    },
  );

  app.get(
    '/v1/objects/:group/:version/:kind/:namespace/:name',
    {
      schema: {
        summary: 'Read an object’s reconcile state',
        description: 'The `state` query of the object’s workflow. Requires `get` on the resource.',
        params: objectParams,
        response: {
          200: z.object({
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
          }),
          ...problems,
        },
      },
    },
    async (req) => {
      const plan = findPlanFor(deps.plans, req.params);
      const ref = refOf(plan, req.params);
      const who = await caller(req);
      await allow(who, {
        verb: 'get',
        group: plan.group,
        resource: plan.plural,
        namespace: ref.namespace,
        name: ref.name,
      });
      const workflowId = workflowIdFor(ref);
      try {
        const state = await temporalCall(() => deps.temporal.workflow.getHandle(workflowId).query(stateQuery));
        const link = uiLink(workflowId);
        return { workflowId, ...(link ? { link } : {}), state: { ...state, conditions: [...state.conditions] } };
      } catch (err) {
        if (err instanceof WorkflowNotFoundError)
          throw new ApiProblem(
            'ERR_NO_WORKFLOW',
            `no workflow for ${plan.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`,
          );
        throw err;
      }
    },
  );

  app.get(
    '/v1/objects',
    {
      schema: {
        summary: 'List reconciled objects from Temporal visibility',
        description:
          'A page of objects of one kind, filtered by namespace and phase (search attributes). Requires `list` on the resource.',
        querystring: z.object({
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
        }),
        response: {
          200: z.object({
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
          }),
          ...problems,
        },
      },
    },
    async (req) => {
      const q = req.query;
      const plan = Object.values(deps.plans).find((p) => p.kind === q.kind);
      if (!plan) throw new ApiProblem('ERR_UNKNOWN_KIND', `no reconciler for kind ${q.kind}`);
      const who = await caller(req);
      await allow(who, {
        verb: 'list',
        group: plan.group,
        resource: plan.plural,
        ...(q.namespace ? { namespace: q.namespace } : {}),
      });
      // Built from known values only: the plan's kind, a phase from the enum, and a namespace that
      // matched the DNS-label pattern (letters, digits and dashes: nothing that can end a string).
      const namespace = q.namespace && dnsLabel.test(q.namespace) ? q.namespace : undefined;
      const phase = q.phase ? phases.find((p) => p === q.phase) : undefined;
      const clauses = [`WorkflowType = '${objectWorkflowType}'`, `HomeostatKind = '${plan.kind}'`];
      if (namespace) clauses.push(`HomeostatNamespace = '${namespace}'`);
      if (phase) clauses.push(`HomeostatPhase = '${phase}'`);
      const query = clauses.join(' AND ');
      // Only a token this API sealed for this very query reaches Temporal: anything else is a 400 here
      // (Temporal retries an unreadable token until the call's deadline).
      const pageToken = q.pageToken === undefined ? undefined : openPageToken(query, q.pageToken);
      if (q.pageToken !== undefined && pageToken === undefined) {
        throw new ApiProblem(
          'ERR_VALIDATION',
          'invalid querystring: pageToken is not a token this API issued for this query',
        );
      }
      const res = await temporalCall(() =>
        deps.temporal.workflowService.listWorkflowExecutions({
          namespace: deps.temporal.options.namespace,
          query,
          pageSize: q.pageSize,
          ...(pageToken ? { nextPageToken: pageToken } : {}),
        }),
      );
      const attr = (fields: Record<string, unknown> | null | undefined, key: string): unknown => {
        const payload = fields?.[key];
        if (!payload) return undefined;
        const value = defaultPayloadConverter.fromPayload(payload);
        return Array.isArray(value) ? value[0] : value;
      };
      const items = (res.executions ?? []).map((e) => {
        const f = e.searchAttributes?.indexedFields as Record<string, unknown> | undefined;
        const statusName =
          ['UNSPECIFIED', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELED', 'TERMINATED', 'CONTINUED_AS_NEW', 'TIMED_OUT'][
            e.status ?? 0
          ] ?? 'UNKNOWN';
        return {
          workflowId: e.execution?.workflowId ?? '',
          kind: attr(f, 'HomeostatKind') as string | undefined,
          namespace: attr(f, 'HomeostatNamespace') as string | undefined,
          name: attr(f, 'HomeostatName') as string | undefined,
          phase: attr(f, 'HomeostatPhase') as string | undefined,
          generation: attr(f, 'HomeostatGeneration') as number | undefined,
          status: statusName,
        };
      });
      const token = res.nextPageToken?.length ? sealPageToken(query, Buffer.from(res.nextPageToken)) : undefined;
      return { items, ...(token ? { nextPageToken: token } : {}) };
    },
  );

  return app;
}
