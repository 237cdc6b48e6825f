/**
 * The request rate limit per caller: keyed by the hash of the Authorization header (by client address
 * without one), health and metrics exempt, refusals answered as `ERR_RATE_LIMITED` problems.
 */
import { createHash } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import { ApiProblem } from './problems';
import type { ApiApp } from './route-context';

/** Limits every route of `app` but health and metrics to `perMinute` requests per caller. */
export async function limitRequestRate(app: ApiApp, perMinute: number): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    max: perMinute,
    timeWindow: 60_000,
    keyGenerator: (req) => {
      const h = req.headers.authorization;
      return h ? createHash('sha256').update(h).digest('hex') : req.ip;
    },
    allowList: (req) => ['/healthz', '/readyz', '/metrics'].includes(req.url),
    // Thrown by the plugin, so answered by the error handler like every other problem.
    errorResponseBuilder: (_req, ctx) =>
      new ApiProblem(
        'ERR_RATE_LIMITED',
        `rate limit of ${ctx.max} requests per minute exceeded; retry in ${ctx.after}`,
      ),
  });
}
