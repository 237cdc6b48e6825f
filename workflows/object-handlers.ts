/**
 * The message handlers of an object's workflow run: the reconcile-request signal (coalesced), the
 * `state` and `carried-state` queries, and the `reconcile-now` update (served by the next pass).
 */
import { ApplicationFailure, condition, log, setHandler } from '@temporalio/workflow';
import { approvalRefusalTypes, maxApprovalCommentLength, type ApprovalDecision } from '../core/approval';
import { carriedStateQuery } from '../core/carried-state';
import {
  decideApprovalUpdate,
  reconcileNowUpdate,
  reconcileRequestedSignal,
  stateQuery,
  type ReconcileNowRequest,
} from '../core/definitions';
import type { ObjectEntity } from './object-entity';
import { sameRef } from './object-state';

/** Sets the signal, query and update handlers of a run on its entity. */
export function setObjectHandlers(entity: ObjectEntity): void {
  const { ref, where } = entity;
  setHandler(reconcileRequestedSignal, (request) => {
    if (!sameRef(request.ref, ref)) {
      log.warn('reconcile request for another object ignored', { ref: request.ref });
      return;
    }
    entity.coalescer.offer(request);
    entity.wake();
  });

  setHandler(stateQuery, () => entity.state());
  setHandler(carriedStateQuery, () => entity.carried(entity.lastOutcome));

  setHandler(
    reconcileNowUpdate,
    async () => {
      // A pass already running may have read older state: serve the one after it.
      const target = entity.passes + (entity.reconciling ? 2 : 1);
      entity.nowRequested = true;
      entity.wake();
      await condition(() => entity.passes >= target || entity.finished);
      return entity.outcomes.get(target) ?? entity.lastOutcome!;
    },
    {
      validator: (request: ReconcileNowRequest) => {
        if (!sameRef(request.ref, ref))
          throw new Error(`this workflow reconciles ${ref.kind} ${where}, not the requested object`);
        if (request.uid !== undefined && entity.uid !== undefined && request.uid !== entity.uid) {
          throw new Error(`unknown object: UID ${request.uid} is not ${entity.uid}`);
        }
        if (entity.finished) throw new Error('the object is gone; its workflow is completing');
      },
    },
  );

  setHandler(
    decideApprovalUpdate,
    (decision) => {
      // Accepted (and so recorded in history, approver and comment with it): the waiting step reads it.
      entity.decision = decision;
      const awaiting = entity.awaiting!;
      return { step: awaiting.step, generation: awaiting.generation, decision: decision.decision };
    },
    {
      validator: (d: ApprovalDecision) => {
        if (!sameRef(d.ref, ref))
          throw new Error(`this workflow reconciles ${ref.kind} ${where}, not the requested object`);
        if (typeof d.approver !== 'string' || d.approver === '') throw new Error('a decision names its approver');
        if (d.comment !== undefined && (typeof d.comment !== 'string' || d.comment.length > maxApprovalCommentLength))
          throw new Error(`a comment is a string of at most ${maxApprovalCommentLength} characters`);
        const waiting = entity.awaiting;
        if (!waiting || entity.decision !== undefined) {
          throw ApplicationFailure.create({
            type: approvalRefusalTypes.notAwaiting,
            message: `${ref.kind} ${where} is not waiting for approval`,
            nonRetryable: true,
          });
        }
        if (d.generation !== waiting.generation || d.previewHash !== waiting.previewHash) {
          throw ApplicationFailure.create({
            type: approvalRefusalTypes.stale,
            message: `${ref.kind} ${where} waits for approval of step ${waiting.step} at generation ${waiting.generation} (preview ${waiting.previewHash}), not of generation ${d.generation} (preview ${d.previewHash})`,
            nonRetryable: true,
          });
        }
      },
    },
  );
}
