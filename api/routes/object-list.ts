/**
 * `GET /v1/objects`: a page of the objects of one kind from Temporal visibility, filtered by the
 * object workflows' search attributes (namespace, phase), with sealed page tokens.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { objectWorkflowType, searchAttributeKeys } from '../../core/definitions';
import { pageTokens } from '../page-tokens';
import { ApiProblem } from '../problems';
import type { ApiApp, RouteContext } from '../route-context';
import { dnsLabel, listQuery, listResponse, phases, problemResponsesWith } from '../schemas';

const executionStatuses = [
  'UNSPECIFIED',
  'RUNNING',
  'COMPLETED',
  'FAILED',
  'CANCELED',
  'TERMINATED',
  'CONTINUED_AS_NEW',
  'TIMED_OUT',
];

/** The first value of a search attribute of a listed execution. */
function attr(fields: Record<string, unknown> | null | undefined, key: string): unknown {
  const payload = fields?.[key];
  if (!payload) return undefined;
  const value = defaultPayloadConverter.fromPayload(payload);
  return Array.isArray(value) ? value[0] : value;
}

/** Adds `GET /v1/objects` to `app`. */
export function objectListRoutes(app: ApiApp, ctx: RouteContext): void {
  const { deps, temporalCall } = ctx;
  const tokens = pageTokens(deps.pageTokenKey);
  const keys = searchAttributeKeys;
  app.get(
    '/v1/objects',
    {
      schema: {
        summary: 'List reconciled objects from Temporal visibility',
        description:
          'A page of objects of one kind, filtered by namespace and phase (search attributes). Requires `list` on the resource.',
        querystring: listQuery,
        response: {
          200: listResponse,
          ...problemResponsesWith({
            400: 'Here also: a `pageToken` this API did not issue for this very query.',
            404: 'Here: no reconciler serves the kind (`ERR_UNKNOWN_KIND`).',
          }),
        },
      },
    },
    async (req) => {
      const q = req.query;
      // Authenticated first (by the server's hook already): the kinds are only told to a known caller.
      const who = await ctx.caller(req);
      const plan = Object.values(deps.plans).find((p) => p.kind === q.kind);
      if (!plan) throw new ApiProblem('ERR_UNKNOWN_KIND', `no reconciler for kind ${q.kind}`);
      await ctx.allow(who, {
        verb: 'list',
        group: plan.group,
        resource: plan.plural,
        ...(q.namespace ? { namespace: q.namespace } : {}),
      });
      // Built from known values only: the plan's kind, a phase from the enum, and a namespace that
      // matched the DNS-label pattern (letters, digits and dashes: nothing that can end a string).
      const namespace = q.namespace && dnsLabel.test(q.namespace) ? q.namespace : undefined;
      const phase = q.phase ? phases.find((p) => p === q.phase) : undefined;
      const clauses = [`WorkflowType = '${objectWorkflowType}'`, `${keys.kind.name} = '${plan.kind}'`];
      if (namespace) clauses.push(`${keys.namespace.name} = '${namespace}'`);
      if (phase) clauses.push(`${keys.phase.name} = '${phase}'`);
      const query = clauses.join(' AND ');
      // Only a token this API sealed for this very query reaches Temporal: anything else is a 400 here
      // (Temporal retries an unreadable token until the call's deadline).
      const pageToken = q.pageToken === undefined ? undefined : tokens.open(query, q.pageToken);
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
      const items = (res.executions ?? []).map((e) => {
        const f = e.searchAttributes?.indexedFields as Record<string, unknown> | undefined;
        return {
          workflowId: e.execution?.workflowId ?? '',
          kind: attr(f, keys.kind.name) as string | undefined,
          namespace: attr(f, keys.namespace.name) as string | undefined,
          name: attr(f, keys.name.name) as string | undefined,
          phase: attr(f, keys.phase.name) as string | undefined,
          generation: attr(f, keys.generation.name) as number | undefined,
          status: executionStatuses[e.status ?? 0] ?? 'UNKNOWN',
        };
      });
      const token = res.nextPageToken?.length ? tokens.seal(query, Buffer.from(res.nextPageToken)) : undefined;
      return { items, ...(token ? { nextPageToken: token } : {}) };
    },
  );
}
