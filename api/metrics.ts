/**
 * The API's Prometheus metrics, served at `/metrics`: the process's defaults, requests and their
 * duration by route, and API-triggered reconciles by kind and result.
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ApiApp } from './route-context';

/** The API's metrics registry and the counter its reconcile route feeds. */
export interface ApiMetrics {
  readonly registry: Registry;
  /** `homeostat_api_reconciles_total`, labels `kind` and `result`. */
  readonly reconciles: Counter<'kind' | 'result'>;
}

/** Creates the API's metrics and counts every response of `app`. */
export function apiMetrics(app: ApiApp): ApiMetrics {
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
    labelNames: ['kind', 'result'] as const,
    registers: [registry],
  });
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    requests.inc({ route, method: req.method, status: String(reply.statusCode) });
    duration.observe({ route, method: req.method }, reply.elapsedTime / 1000);
  });
  return { registry, reconciles };
}
