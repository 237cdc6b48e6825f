/**
 * `POST /v1/objects/:group/:version/:kind/:namespace/:name/plan`: a dry run of one object — what a
 * reconcile pass would do, step by step, without side effects (`core/dry-run.ts`). It starts a short
 * `planObjectWorkflow` of its own on the object's task queue (the operator's code on a worker computes
 * it) and never touches the object's workflow.
 *
 * Authorization: the custom verb `plan` on the object's resource — not `get`, because a dry run does
 * more than read the object: it runs the reconciler's previews (catalog reads on external systems,
 * dry-run applies of children with the worker's rights) and shows what they find, so a platform grants
 * it as deliberately as `reconcile`. Planning a manifest also needs the right to make it real, as
 * `kubectl diff` does: `patch` on an object that exists, `create` on one that does not.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { workflowIdFor } from '../../core/definitions';
import {
  planTimeoutMs,
  planWorkflowIdFor,
  planWorkflowType,
  type DryRunResult,
  type PlanInput,
} from '../../core/dry-run';
import { planBody, planResponse } from '../plan-schemas';
import { ApiProblem, type ProblemCode } from '../problems';
import type { ApiApp, RouteContext } from '../route-context';
import { objectParams, problemResponsesWith } from '../schemas';
import { notFound, objectAccess } from './objects';

/** The problem a failed dry run is answered with, by the failure type of its activity. */
const problemOfFailure: Readonly<Record<string, ProblemCode>> = {
  UnknownKind: 'ERR_UNKNOWN_KIND',
  PlanObjectNotFound: 'ERR_OBJECT_NOT_FOUND',
  InvalidManifest: 'ERR_INVALID_MANIFEST',
  InvalidSpec: 'ERR_INVALID_MANIFEST',
};

/** The innermost failure of a failed workflow that has a type (the activity's ApplicationFailure). */
function failureOf(err: WorkflowFailedError): { type?: string; message: string } {
  let e: unknown = err;
  for (let i = 0; i < 5 && typeof e === 'object' && e !== null; i++) {
    const { type, message, cause } = e as { type?: unknown; message?: unknown; cause?: unknown };
    if (typeof type === 'string') return { type, message: typeof message === 'string' ? message : '' };
    e = cause;
  }
  return { message: err.message };
}

/** Adds `POST …/plan` to `app`. */
export function objectPlanRoutes(app: ApiApp, ctx: RouteContext): void {
  const { deps, temporalCall } = ctx;
  app.post(
    '/v1/objects/:group/:version/:kind/:namespace/:name/plan',
    {
      schema: {
        summary: 'Plan a reconcile pass of an object (dry run)',
        description:
          'What a reconcile pass would do, step by step, without side effects: each child as a server-side apply with `dryRun: All` and a field-level diff against the live child (created, changed fields with old and new values, unchanged; refused when someone else controls it), and the changes each step’s preview lists for external systems; a step without a preview is reported `no-preview` and is not run. With a manifest as body, plans it instead of the stored object. Computed by a short workflow of its own on a worker; the object’s own workflow is not touched. Requires the `plan` verb on the resource (RBAC), and for a manifest also `patch` (the object exists) or `create` (it does not).',
        params: objectParams,
        body: planBody,
        response: {
          200: planResponse,
          ...problemResponsesWith({
            404: notFound('the object does not exist and no manifest was given (`ERR_OBJECT_NOT_FOUND`)'),
          }),
        },
      },
    },
    async (req) => {
      const { plan, ref, who } = await objectAccess(ctx, req, 'plan');
      const manifest = req.body ?? undefined;
      const where = `${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
      if (manifest) {
        const apiVersion = plan.group ? `${plan.group}/${plan.version}` : plan.version;
        const wrong = [
          manifest.apiVersion !== apiVersion && `apiVersion ${apiVersion}`,
          manifest.kind !== plan.kind && `kind ${plan.kind}`,
          manifest.metadata.name !== ref.name && `name ${ref.name}`,
          manifest.metadata.namespace !== undefined &&
            manifest.metadata.namespace !== (ref.namespace ?? '') &&
            (ref.namespace ? `namespace ${ref.namespace}` : 'no namespace'),
        ].filter((w): w is string => typeof w === 'string');
        if (wrong.length > 0)
          throw new ApiProblem(
            'ERR_INVALID_MANIFEST',
            `the manifest must name the object of the path: ${wrong.join(', ')}`,
          );
      }
      const header = {
        apiVersion: plan.group ? `${plan.group}/${plan.version}` : plan.version,
        kind: plan.kind,
        metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
      };
      const exists = await deps.objects.read(header).then(
        () => true,
        (err: unknown) => {
          if ((err as { code?: number }).code === 404) return false;
          throw err;
        },
      );
      if (!exists && !manifest) throw new ApiProblem('ERR_OBJECT_NOT_FOUND', `${plan.kind} ${where} does not exist`);
      if (manifest) {
        await ctx.allow(who, {
          verb: exists ? 'patch' : 'create',
          group: plan.group,
          resource: plan.plural,
          namespace: ref.namespace,
          ...(exists ? { name: ref.name } : {}),
        });
      }
      const input: PlanInput = { ref, ...(manifest ? { manifest } : {}) };
      const workflowId = planWorkflowIdFor(workflowIdFor(ref), randomUUID());
      let result: DryRunResult;
      try {
        result = await temporalCall(
          () =>
            deps.temporal.workflow.execute(planWorkflowType, {
              taskQueue: deps.taskQueue,
              workflowId,
              args: [input],
              workflowExecutionTimeout: planTimeoutMs,
              staticSummary: `dry run of ${plan.kind} ${where}`,
            }) as Promise<DryRunResult>,
          planTimeoutMs + 5_000,
        );
      } catch (err) {
        if (!(err instanceof WorkflowFailedError)) throw err;
        const failure = failureOf(err);
        const code = failure.type !== undefined ? problemOfFailure[failure.type] : undefined;
        if (code) throw new ApiProblem(code, failure.message);
        if (/timed? ?out/i.test(err.message) || err.cause?.name === 'TimeoutFailure')
          throw new ApiProblem('ERR_TIMEOUT', `the dry run did not finish within ${planTimeoutMs / 1000} s`);
        throw err;
      }
      req.log.info({ ref, user: who.user, source: result.source, changed: result.changed }, 'dry run');
      return result;
    },
  );
}
