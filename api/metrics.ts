/**
 * The API's Prometheus metrics, served at `/metrics`: the process's defaults, requests and their
 * duration by route, API-triggered reconciles by kind and result, and what authentication and
 * authorization cost (tokens refused locally by reason, TokenReviews and SubjectAccessReviews made,
 * answers taken from the cache).
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { AuthCounts } from './auth';
import type { ApiApp } from './route-context';

/** The API's metrics registry and the counter its reconcile route feeds. */
export interface ApiMetrics {
  readonly registry: Registry;
  /** `homeostat_api_reconciles_total`, labels `kind` and `result`. */
  readonly reconciles: Counter<'kind' | 'result'>;
}

/** Counters read from `counts` when scraped (they only grow). */
function authMetrics(registry: Registry, auth: { readonly counts?: AuthCounts }): void {
  const read = (name: string, help: string, value: (c: AuthCounts) => number): void => {
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        if (auth.counts) this.inc(value(auth.counts));
      },
    });
  };
  read('homeostat_api_token_reviews_total', 'TokenReviews sent to the API server', (c) => c.tokenReviews);
  read('homeostat_api_access_reviews_total', 'SubjectAccessReviews sent to the API server', (c) => c.accessReviews);
  read('homeostat_api_access_cache_hits_total', 'Authorization answers taken from the cache', (c) => c.accessCacheHits);
  new Counter({
    name: 'homeostat_api_auth_refusals_total',
    help: 'Bearer tokens refused by local verification, without a TokenReview, by reason',
    labelNames: ['reason'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [reason, n] of Object.entries(auth.counts?.refusals ?? {})) this.inc({ reason }, n);
    },
  });
}

/** Creates the API's metrics and counts every response of `app` (and, given `auth`, what it reviewed and refused). */
export function apiMetrics(app: ApiApp, auth?: { readonly counts?: AuthCounts }): ApiMetrics {
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
  if (auth) authMetrics(registry, auth);
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    requests.inc({ route, method: req.method, status: String(reply.statusCode) });
    duration.observe({ route, method: req.method }, reply.elapsedTime / 1000);
  });
  return { registry, reconciles };
}
