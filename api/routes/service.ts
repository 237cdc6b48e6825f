/**
 * The routes about the API process itself, left out of the OpenAPI document: liveness, readiness
 * (Temporal answers), Prometheus metrics and the OpenAPI document; public: answered without authentication.
 */
import type { Registry } from 'prom-client';
import { problem } from '../problems';
import type { ApiApp, RouteContext } from '../route-context';

/** Adds `/healthz`, `/readyz`, `/metrics` and `/openapi.json` to `app`. */
export function serviceRoutes(app: ApiApp, ctx: RouteContext, registry: Registry): void {
  const { deps, temporalCall } = ctx;
  app.get('/healthz', { schema: { hide: true }, config: { public: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true }, config: { public: true } }, async (_req, reply) => {
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
  app.get('/metrics', { schema: { hide: true }, config: { public: true } }, async (_req, reply) =>
    reply.type(registry.contentType).send(await registry.metrics()),
  );
  app.get('/openapi.json', { schema: { hide: true }, config: { public: true } }, async () => app.swagger());
}
