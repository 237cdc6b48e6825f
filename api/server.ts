/**
 * The HTTP API (Fastify with the zod type provider): trigger a reconcile through update-with-start
 * of the object's workflow, read its state through the `state` query, list objects through Temporal
 * visibility, with Kubernetes authentication and authorization on every object route, problem
 * documents for every error, rate limits per caller, size limits, timeouts, health, metrics and an
 * OpenAPI document generated from the same schemas. Authentication comes before any other answer.
 * This file puts the parts together; each has a file of its own.
 */
import Fastify from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { allowedMethods } from './allowed-methods';
import { authenticateFirst } from './authenticate-first';
import { codecEndpoint } from './codec-endpoint';
import type { ApiDeps } from './deps';
import { apiMetrics } from './metrics';
import { describeWithOpenApi } from './openapi';
import { answerWithProblems } from './problem-answers';
import { limitRequestRate } from './rate-limits';
import { traceRequests } from './request-spans';
import { routeContext } from './route-context';
import { kindRoutes } from './routes/kinds';
import { objectListRoutes } from './routes/object-list';
import { objectPlanRoutes } from './routes/object-plan';
import { objectApprovalRoutes } from './routes/object-approval';
import { objectRoutes } from './routes/objects';
import { serviceRoutes } from './routes/service';
import { problemResponses } from './schemas';

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
  traceRequests(app); // first: the request's span covers authentication and every hook after it

  const metrics = apiMetrics(app, deps.auth);
  answerWithProblems(app);
  await describeWithOpenApi(app);
  await limitRequestRate(app, deps.rateLimitPerMinute ?? 600);
  // Before every route: authentication comes first (after the rate limit), then 405 for a method the
  // path is not served with.
  const ctx = authenticateFirst(app, routeContext(deps), allowedMethods(app));

  serviceRoutes(app, ctx, metrics.registry);
  if (deps.codec) {
    await app.register(codecEndpoint, {
      prefix: '/codec',
      codec: deps.codec.payloadCodec,
      ...(deps.codec.allowedOrigins ? { allowedOrigins: deps.codec.allowedOrigins } : {}),
      errorResponses: problemResponses,
      authorize: async (req, access) => ctx.allow(await ctx.caller(req), access),
    });
  }
  kindRoutes(app, ctx);
  objectRoutes(app, ctx, metrics.reconciles);
  objectPlanRoutes(app, ctx);
  objectApprovalRoutes(app, ctx);
  objectListRoutes(app, ctx);
  return app;
}
