/** `GET /v1/kinds`: the kinds the API serves, so clients resolve `pgdb` or `apps` as kubectl does. */
import type { ApiApp, RouteContext } from '../route-context';
import { kindsResponse, problemResponses } from '../schemas';

/** Adds `GET /v1/kinds` to `app`. */
export function kindRoutes(app: ApiApp, ctx: RouteContext): void {
  const { deps } = ctx;
  app.get(
    '/v1/kinds',
    {
      schema: {
        summary: 'List the kinds this API serves',
        description:
          'The operator’s kinds, with plural, scope and short names, so clients resolve `pgdb` or `apps` as kubectl does. Requires an authenticated caller.',
        response: { 200: kindsResponse, ...problemResponses },
      },
    },
    async (req) => {
      await ctx.caller(req);
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
}
