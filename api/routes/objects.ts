/**
 * The routes of one object, `/v1/objects/:group/:version/:kind/:namespace/:name`: run a reconcile pass
 * now (update-with-start of the object's workflow) and read its reconcile state (the `state` query),
 * each authorized on the object's resource.
 */
import { WithStartWorkflowOperation, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { FastifyRequest } from 'fastify';
import type { Counter } from 'prom-client';
import {
  type ObjectRef,
  objectWorkflowStartOptions,
  objectWorkflowType,
  reconcileNowUpdate,
  stateQuery,
  workflowIdFor,
} from '../../core/definitions';
import type { PlanRegistry, ReconcilerPlan } from '../../core/plan';
import type { Caller } from '../auth';
import { ApiProblem } from '../problems';
import type { ApiApp, RouteContext } from '../route-context';
import {
  objectParams,
  objectStateResponse,
  problemResponsesWith,
  reconcileAccepted,
  reconcileBody,
  reconcileDone,
  reconcileQuery,
  type ObjectParams,
} from '../schemas';
import { grpcDeadlineExceeded, temporalStatus } from '../temporal-calls';

/** Why a path of one object is a 404: the kind, the scope, and what `missing` says. */
export const notFound = (missing: string) =>
  `Here: no reconciler serves the group, version and kind (\`ERR_UNKNOWN_KIND\`); the namespace does not fit the kind’s scope, a namespace for a cluster-scoped kind or \`_\` for a namespaced one (\`ERR_OBJECT_NOT_FOUND\`); ${missing}.`;

function findPlanFor(plans: PlanRegistry, p: ObjectParams): ReconcilerPlan {
  const group = p.group === 'core' ? '' : p.group;
  const plan = Object.values(plans).find((x) => x.group === group && x.kind === p.kind && x.version === p.version);
  if (!plan) throw new ApiProblem('ERR_UNKNOWN_KIND', `no reconciler for ${p.kind}.${p.group}/${p.version}`);
  return plan;
}

/**
 * The object a path names. A path whose scope does not fit the kind names no object: 404, as the
 * Kubernetes API server answers a cluster-scoped resource asked for in a namespace (the document cannot
 * tie the namespace to the kind, so a 400 would refuse a request the document allows).
 */
function refOf(plan: ReconcilerPlan, p: ObjectParams): ObjectRef {
  if ((plan.scope === 'Cluster') !== (p.namespace === '_')) {
    throw new ApiProblem(
      'ERR_OBJECT_NOT_FOUND',
      plan.scope === 'Cluster'
        ? `${plan.kind} is cluster-scoped: no ${plan.kind} is in a namespace (name its objects with _ as namespace)`
        : `${plan.kind} is namespaced: no ${plan.kind} is outside a namespace (_ names cluster-scoped objects)`,
    );
  }
  return {
    group: plan.group,
    version: plan.version,
    kind: plan.kind,
    name: p.name,
    ...(p.namespace === '_' ? {} : { namespace: p.namespace }),
  };
}

/**
 * The plan and reference of the object a request names, and its caller, once authorized for `verb`
 * on the object (problems: 401, unknown kind, wrong scope, 403).
 */
export async function objectAccess(
  ctx: RouteContext,
  req: FastifyRequest & { params: ObjectParams },
  verb: 'reconcile' | 'get' | 'plan' | 'approve',
): Promise<{ plan: ReconcilerPlan; ref: ObjectRef; who: Caller }> {
  // Authenticated first (by the server's hook already): kinds and scopes are only told to a known caller.
  const who = await ctx.caller(req);
  const plan = findPlanFor(ctx.deps.plans, req.params);
  const ref = refOf(plan, req.params);
  await ctx.allow(who, { verb, group: plan.group, resource: plan.plural, namespace: ref.namespace, name: ref.name });
  return { plan, ref, who };
}

/**
 * Adds `POST …/reconcile` and `GET …` of one object to `app`; API-triggered reconciles are counted in
 * `reconciles` by kind and result.
 */
export function objectRoutes(app: ApiApp, ctx: RouteContext, reconciles: Counter<'kind' | 'result'>): void {
  const { deps, temporalCall, uiLink } = ctx;

  app.post(
    '/v1/objects/:group/:version/:kind/:namespace/:name/reconcile',
    {
      schema: {
        summary: 'Run a reconcile pass of an object now',
        description:
          'Runs a pass through update-with-start of the object’s workflow and returns its outcome. Passes of one object never overlap: a concurrent call gets the outcome of the next pass. Requires the `reconcile` verb on the resource (RBAC).',
        params: objectParams,
        querystring: reconcileQuery,
        body: reconcileBody,
        response: {
          200: reconcileDone,
          202: reconcileAccepted,
          ...problemResponsesWith({ 404: notFound('the object does not exist (`ERR_OBJECT_NOT_FOUND`)') }),
        },
      },
    },
    async (req, reply) => {
      const { plan, ref, who } = await objectAccess(ctx, req, 'reconcile');
      const object = await deps.objects
        .read({
          apiVersion: `${plan.group ? `${plan.group}/` : ''}${plan.version}`,
          kind: plan.kind,
          metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
        })
        .catch((err: unknown) => {
          if ((err as { code?: number }).code === 404)
            throw new ApiProblem(
              'ERR_OBJECT_NOT_FOUND',
              `${plan.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name} does not exist`,
            );
          throw err;
        });
      // The bridge's start options (ID, input, static summary, the object's search attributes), so a
      // workflow started here is named and findable in the Temporal UI before its first pass.
      const startOptions = objectWorkflowStartOptions(ref, deps.taskQueue, deps.fairnessWeights);
      const workflowId = startOptions.workflowId;
      const startWorkflowOperation = new WithStartWorkflowOperation(objectWorkflowType, {
        ...startOptions,
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
      let handle;
      try {
        handle = await temporalCall(() =>
          deps.temporal.workflow.startUpdateWithStart(reconcileNowUpdate, {
            args: [{ ref, ...(object.metadata?.uid ? { uid: object.metadata.uid } : {}) }],
            waitForStage: 'ACCEPTED',
            startWorkflowOperation,
          }),
        );
      } catch (err) {
        if (err instanceof WorkflowUpdateFailedError)
          throw new ApiProblem(
            'ERR_CONFLICT',
            `the workflow refused the reconcile: ${err.cause?.message ?? err.message}`,
          );
        throw err;
      }
      const link = uiLink(workflowId);
      req.log.info({ ref, user: who.user, reason: req.body?.reason }, 'reconcile requested');
      if (req.query.wait === 'false') {
        reconciles.inc({ kind: plan.kind, result: 'accepted' });
        return reply.status(202).send({ workflowId, ...(link ? { link } : {}), accepted: true as const });
      }
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>(
        (r) => (timer = setTimeout(() => r('timeout'), deps.reconcileWaitMs ?? 30_000)),
      );
      try {
        const waitMs = deps.reconcileWaitMs ?? 30_000;
        const result = temporalCall(() => handle.result(), waitMs + 1_000).catch((err: unknown) => {
          if (temporalStatus(err) === grpcDeadlineExceeded) return 'timeout' as const;
          throw err;
        });
        const outcome = await Promise.race([result, timeout]);
        if (outcome === 'timeout') {
          reconciles.inc({ kind: plan.kind, result: 'pending' });
          return reply.status(202).send({ workflowId, ...(link ? { link } : {}), accepted: true as const });
        }
        reconciles.inc({ kind: plan.kind, result: outcome.result });
        return reply.status(200).send({
          workflowId,
          ...(link ? { link } : {}),
          outcome: outcome,
        });
      } finally {
        clearTimeout(timer);
      }
    },
  );

  app.get(
    '/v1/objects/:group/:version/:kind/:namespace/:name',
    {
      schema: {
        summary: 'Read an object’s reconcile state',
        description: 'The `state` query of the object’s workflow. Requires `get` on the resource.',
        params: objectParams,
        response: {
          200: objectStateResponse,
          ...problemResponsesWith({ 404: notFound('the object has no workflow yet (`ERR_NO_WORKFLOW`)') }),
        },
      },
    },
    async (req) => {
      const { plan, ref } = await objectAccess(ctx, req, 'get');
      const workflowId = workflowIdFor(ref);
      try {
        const state = await temporalCall(() => deps.temporal.workflow.getHandle(workflowId).query(stateQuery));
        const link = uiLink(workflowId);
        return { workflowId, ...(link ? { link } : {}), state: { ...state, conditions: [...state.conditions] } };
      } catch (err) {
        if (err instanceof WorkflowNotFoundError)
          throw new ApiProblem(
            'ERR_NO_WORKFLOW',
            `no workflow for ${plan.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`,
          );
        throw err;
      }
    },
  );
}
