/**
 * The methods each path of the API is served with, so a request with another method on a served path
 * is answered 405 with `Allow` (RFC 9110) rather than as an unknown route. Fastify's router answers
 * both with its not-found route; this table, filled from the routes as they are added, tells them
 * apart.
 */
import type { ApiApp } from './route-context';

/** The methods of the API's paths. */
export interface AllowedMethods {
  /** The methods a route serves at `path` (no query string), sorted; empty for a path no route serves. */
  readonly of: (path: string) => readonly string[];
}

/** A route path (`/v1/objects/:group/…`) as a pattern matching the paths it serves. */
function pathPattern(url: string): RegExp {
  const parts = url.split('/').map((part) => {
    if (part.startsWith(':')) return '[^/]+';
    if (part === '*') return '.*';
    return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  });
  return new RegExp(`^${parts.join('/')}$`);
}

/** Records the routes added to `app` from now on (call it before adding them). */
export function allowedMethods(app: ApiApp): AllowedMethods {
  const routes: { pattern: RegExp; methods: readonly string[] }[] = [];
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    routes.push({ pattern: pathPattern(route.url), methods: methods.map((m) => m.toUpperCase()) });
  });
  return {
    of: (path) => {
      const methods = new Set(routes.filter((r) => r.pattern.test(path)).flatMap((r) => r.methods));
      return [...methods].sort();
    },
  };
}
