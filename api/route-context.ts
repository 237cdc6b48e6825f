/**
 * What every route of the API works with: its dependencies, the caller's authentication and
 * authorization, calls to Temporal under a deadline, and links to the Temporal UI.
 */
import type {
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import type { ApiDeps } from './deps';
import { requestAuth, type RequestAuth } from './request-auth';
import { temporalCaller, type TemporalCall } from './temporal-calls';

/** The API's Fastify instance: it logs with pino, and validates and types with zod. */
export type ApiApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  Logger,
  ZodTypeProvider
>;

/** The shared tools of the routes. */
export interface RouteContext extends RequestAuth {
  readonly deps: ApiDeps;
  /** Every call to Temporal has a deadline: a slow or unreachable frontend answers 504, never a hang. */
  readonly temporalCall: TemporalCall;
  /** The Temporal UI's page of a workflow, when `temporalUiUrl` is set. */
  readonly uiLink: (workflowId: string) => string | undefined;
}

/** The route context of an API built from `deps`. */
export function routeContext(deps: ApiDeps): RouteContext {
  return {
    deps,
    ...requestAuth(deps.auth, deps.authFailuresPerMinute ?? 30),
    temporalCall: temporalCaller(deps.temporal, deps.temporalTimeoutMs ?? 10_000),
    uiLink: (workflowId) =>
      deps.temporalUiUrl
        ? `${deps.temporalUiUrl}/namespaces/${deps.temporal.options.namespace}/workflows/${encodeURIComponent(workflowId)}`
        : undefined,
  };
}
