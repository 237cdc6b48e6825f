/**
 * The request and response bodies of `POST …/approve` and `POST …/reject` (`routes/object-approval.ts`).
 */
import { z } from 'zod';
import { maxApprovalCommentLength } from '../core/approval';

/** What a step waits for, as `GET …` and the approval routes show it. */
export const awaitingApprovalSchema = z.object({
  step: z.string(),
  generation: z.number(),
  previewHash: z.string(),
  reason: z.string(),
  preview: z.string(),
  deadline: z.string(),
});

/**
 * `POST …/approve` and `…/reject`: an optional comment (at most 1,024 characters: a longer one is a 400),
 * and optionally the generation the approver reviewed: a decision for another generation than the one
 * waiting is refused (409), so an approval never applies to a spec the approver did not see.
 */
export const approvalBody = z
  .object({
    comment: z.string().max(maxApprovalCommentLength).optional(),
    generation: z.number().int().min(1).optional(),
  })
  .strict()
  .nullish();

/** `POST …/approve` and `…/reject`: the decision, as the workflow recorded it. */
export const approvalResponse = z.object({
  workflowId: z.string(),
  step: z.string(),
  generation: z.number(),
  decision: z.enum(['approve', 'reject']),
  approver: z.string(),
  comment: z.string().optional(),
});
