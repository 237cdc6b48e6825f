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
  problemResponses,
  reconcileAccepted,
  reconcileBody,
  reconcileDone,
  reconcileQuery,
  type ObjectParams,
} from '../schemas';
import { grpcDeadlineExceeded, temporalStatus } from '../temporal-calls';

function findPlanFor(plans: PlanRegistry, p: ObjectParams): ReconcilerPlan {
  const group = p.group === 'core' ? '' : p.group;
  const plan = Object.values(plans).find((x) => x.group === group && x.kind === p.kind && x.version === p.version);
  if (!plan) throw new ApiProblem('ERR_UNKNOWN_KIND', `no reconciler for ${p.kind}.${p.group}/${p.version}`);
  return plan;
}

function refOf(plan: ReconcilerPlan, p: ObjectParams): ObjectRef {
  if ((plan.scope === 'Cluster') !== (p.namespace === '_')) {
    throw new ApiProblem(
      'ERR_VALIDATION',
      plan.scope === 'Cluster'
        ? `${plan.kind} is cluster-scoped: use _ as namespace`
        : `${plan.kind} is namespaced: _ is not a namespace`,
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
 * on the object (problems: unknown kind, wrong scope, 401, 403).
 */
async function objectAccess(
  ctx: RouteContext,
  req: FastifyRequest & { params: ObjectParams },
  verb: 'reconcile' | 'get',
): Promise<{ plan: ReconcilerPlan; ref: ObjectRef; who: Caller }> {
  const plan = findPlanFor(ctx.deps.plans, req.params);
  const ref = refOf(plan, req.params);
  const who = await ctx.caller(req);
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
        response: { 200: reconcileDone, 202: reconcileAccepted, ...problemResponses },
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
      const startOptions = objectWorkflowStartOptions(ref, deps.taskQueue);
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
        response: { 200: objectStateResponse, ...problemResponses },
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
