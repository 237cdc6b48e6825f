/**
 * Authentication before any other answer: every request but those to the public routes (health,
 * readiness, metrics, the OpenAPI document, CORS preflights) authenticates its caller first, in the
 * first hook after the rate limit, before its route, its method, its parameters or its body are looked
 * at. So a caller without a valid token learns nothing, not even which paths, kinds or methods exist:
 * an unknown path, an unknown kind and an undeclared method are all 401 for it. An authenticated
 * caller then gets 405 with `Allow` for a method its path is not served with, and 404 for a path no
 * route serves.
 */
import type { FastifyRequest } from 'fastify';
import type { Caller } from './auth';
import type { AllowedMethods } from './allowed-methods';
import { ApiProblem } from './problems';
import type { ApiApp, RouteContext } from './route-context';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Answered without authentication (health, metrics, the OpenAPI document, CORS preflights). */
    public?: boolean;
  }
}

/** `ctx` with its caller authenticated once per request, whoever asks for it (hook, route, plugin). */
function callerOncePerRequest(ctx: RouteContext): RouteContext {
  const callers = new WeakMap<FastifyRequest, Promise<Caller>>();
  return {
    ...ctx,
    caller: (req) => {
      let caller = callers.get(req);
      if (!caller) callers.set(req, (caller = ctx.caller(req)));
      return caller;
    },
  };
}

/**
 * Adds the authentication hook to `app` (before its routes, so it runs for all of them and for unknown
 * paths) and returns the context its routes use, whose `caller` is the one the hook authenticated.
 */
export function authenticateFirst(app: ApiApp, ctx: RouteContext, methods: AllowedMethods): RouteContext {
  const once = callerOncePerRequest(ctx);
  app.addHook('onRequest', async (req) => {
    if (req.routeOptions.config.public === true) return;
    await once.caller(req);
    if (!req.is404) return;
    const path = req.url.split('?')[0] ?? '';
    const allow = methods.of(path);
    if (allow.length > 0 && !allow.includes(req.method)) {
      throw new ApiProblem('ERR_METHOD_NOT_ALLOWED', `${path} is served with ${allow.join(', ')}, not ${req.method}`, {
        allow,
      });
    }
  });
  return once;
}
