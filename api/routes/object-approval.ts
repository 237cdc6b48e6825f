/**
 * `POST /v1/objects/:group/:version/:kind/:namespace/:name/approve` and `…/reject`: a decision on the
 * step an object's workflow waits to run (`core/approval.ts`), sent as the `decide-approval` update.
 *
 * Authorization: the custom verb `approve` on the object's resource, for both routes — whoever may let
 * a step run may also refuse it, and `reconcile` alone grants neither: a caller who may run passes
 * cannot approve what a pass waits for. The approver is the caller the TokenReview (or the token's
 * issuer) named; the decision (approver, comment) is recorded in the workflow history, in the object's
 * `Approved` condition and in an Event. A decision binds to what waits: its generation and preview
 * hash, read from the workflow and checked again by the update's validator; nothing waiting, or a
 * generation other than the one given, is a 409.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { approvalRefusalTypes, type ApprovalDecision } from '../../core/approval';
import { decideApprovalUpdate, stateQuery, workflowIdFor } from '../../core/definitions';
import { approvalBody, approvalResponse } from '../approval-schemas';
import { ApiProblem } from '../problems';
import { isDroppedWithItsTask } from '../temporal-calls';
import type { ApiApp, RouteContext } from '../route-context';
import { objectParams, problemResponsesWith } from '../schemas';
import { notFound, objectAccess } from './objects';

const conflict =
  'Here: the object is not waiting for approval, or waits for another generation than the one given, or its wait ended meanwhile (`ERR_CONFLICT`).';

/** Adds `POST …/approve` and `POST …/reject` to `app`. */
export function objectApprovalRoutes(app: ApiApp, ctx: RouteContext): void {
  const { deps, temporalCall } = ctx;
  for (const decision of ['approve', 'reject'] as const) {
    app.post(
      `/v1/objects/:group/:version/:kind/:namespace/:name/${decision}`,
      {
        schema: {
          summary:
            decision === 'approve' ? 'Approve the step an object waits for' : 'Reject the step an object waits for',
          description: `${
            decision === 'approve'
              ? 'Lets the step that waits for approval run (phase `AwaitingApproval`).'
              : 'Refuses the step that waits for approval: the pass ends `Degraded` with nothing done, until the spec changes.'
          } The caller (from the TokenReview) and the comment are recorded in the workflow history, in the object’s \`Approved\` condition and in an Event. The decision is for the generation and preview that wait (give \`generation\` to make sure it is the one you reviewed). Requires the \`approve\` verb on the resource (RBAC); \`reconcile\` is not enough.`,
          params: objectParams,
          body: approvalBody,
          response: {
            200: approvalResponse,
            ...problemResponsesWith({
              404: notFound('the object has no workflow (`ERR_NO_WORKFLOW`)'),
              409: conflict,
              503: 'Here also: the workflow task that received the decision failed on the server each time it was sent (nothing was decided; send it again).',
            }),
          },
        },
      },
      async (req) => {
        const { plan, ref, who } = await objectAccess(ctx, req, 'approve');
        const where = `${plan.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
        const workflowId = workflowIdFor(ref);
        const handle = deps.temporal.workflow.getHandle(workflowId);
        const state = await temporalCall(() => handle.query(stateQuery)).catch((err: unknown) => {
          if (err instanceof WorkflowNotFoundError) throw new ApiProblem('ERR_NO_WORKFLOW', `no workflow for ${where}`);
          throw err;
        });
        const waiting = state.awaitingApproval;
        if (!waiting) throw new ApiProblem('ERR_CONFLICT', `${where} is not waiting for approval`);
        const given = req.body?.generation;
        if (given !== undefined && given !== waiting.generation) {
          throw new ApiProblem(
            'ERR_CONFLICT',
            `${where} waits for approval of generation ${waiting.generation}, not ${given}: review it again`,
          );
        }
        const comment = req.body?.comment;
        const input: ApprovalDecision = {
          ref,
          decision,
          approver: who.user,
          ...(comment ? { comment } : {}),
          generation: waiting.generation,
          previewHash: waiting.previewHash,
        };
        try {
          const answer = await sendDecision(() =>
            temporalCall(() => handle.executeUpdate(decideApprovalUpdate, { args: [input] })),
          );
          req.log.info({ ref, user: who.user, step: answer.step, generation: answer.generation, decision }, 'approval');
          return { workflowId, ...answer, approver: who.user, ...(comment ? { comment } : {}) };
        } catch (err) {
          if (err instanceof WorkflowNotFoundError) throw new ApiProblem('ERR_NO_WORKFLOW', `no workflow for ${where}`);
          if (err instanceof WorkflowUpdateFailedError) {
            const type = (err.cause as { type?: string } | undefined)?.type;
            const known = type === approvalRefusalTypes.notAwaiting || type === approvalRefusalTypes.stale;
            throw new ApiProblem(
              'ERR_CONFLICT',
              known
                ? (err.cause?.message ?? err.message)
                : `the workflow refused the decision: ${err.cause?.message ?? err.message}`,
            );
          }
          throw err;
        }
      },
    );
  }
}

/** How often a decision is sent when the workflow task that received it failed, and the pause between. */
const decisionAttempts = 3;
const decisionRetryMs = 500;

/**
 * Sends a decision, again (up to {@link decisionAttempts} times) when its workflow task failed on the
 * server and the update was dropped with it; after the last attempt, a 503 the caller may retry.
 */
async function sendDecision<R>(send: () => Promise<R>): Promise<R> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (err) {
      if (!isDroppedWithItsTask(err)) throw err;
      if (attempt >= decisionAttempts) {
        throw new ApiProblem(
          'ERR_UNAVAILABLE',
          'the workflow task that received the decision failed and nothing was decided; send it again',
          { retryAfterSeconds: 1 },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, decisionRetryMs));
    }
  }
}
