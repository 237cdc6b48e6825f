/**
 * The `checkApproval` activity: whether a step with an approval rule (`core/approval.ts`) needs
 * approval now, and what it would change. It reads the object (a generation or UID other than the
 * pass's supersedes the pass: `SpecChanged`), runs the object's dry run (`plan-object.ts`: read-only)
 * for the step's preview, and asks the step's rule. The preview's hash, with the generation, is what a
 * decision must name: a different preview voids an approval.
 */
import { createHash } from 'node:crypto';
import { awaitingApprovalStatus, previewText, type ApprovalCheck, type ApprovalCheckInput } from '../core/approval';
import { HomeostatError } from '../core/errors';
import type { ActivityContext } from './activity-context';
import { planObject } from './plan-object';
import { approvalFacts, observedOf } from './approval-rules';
import { phaseChangeEvent } from '../core/status';
import type { StatusWriter } from './status-writer';

/**
 * Builds the `checkApproval` activity (unguarded: errors leave as thrown). When the step needs an
 * approval the workflow does not hold yet, it also writes the `AwaitingApproval` status (and its Event)
 * itself, so entering the wait costs the workflow no status write of its own.
 */
export function approvalCheck(
  c: ActivityContext,
  status: Pick<StatusWriter, 'writeOwnStatus'>,
): (input: ApprovalCheckInput) => Promise<ApprovalCheck> {
  const plan = planObject(c);
  return async (input: ApprovalCheckInput): Promise<ApprovalCheck> => {
    const { ref, step, generation, uid } = input;
    const reconciler = c.reconcilerFor(ref);
    const rule = reconciler.approvals?.[step];
    const obj = await c.primary.get(reconciler.plan, ref);
    if (!obj || obj.metadata.uid !== uid || (obj.metadata.generation ?? 0) !== generation) {
      throw new HomeostatError(
        'ERR_SPEC_CHANGED',
        `the object changed since the pass observed generation ${generation}`,
      );
    }
    const dryRun = await plan({ ref });
    const previewed = dryRun.steps.find((s) => s.name === step);
    const observed = observedOf(dryRun, step);
    const facts = approvalFacts(c, reconciler, obj, dryRun.pass === 'cleanup', () => observed);
    // A rule missing from this worker's reconciler (a plan marked by another build): ask, to be safe.
    const reason = rule === undefined || rule === 'always' ? `step ${step} always needs approval` : await rule(facts);
    const preview =
      previewed?.outcome === 'previewed'
        ? previewText(observed) || 'nothing (the preview lists no change)'
        : `unknown (${previewed?.message ?? 'no preview'})`;
    const previewHash = createHash('sha256')
      .update(JSON.stringify({ generation, step, observed, outcome: previewed?.outcome }))
      .digest('hex')
      .slice(0, 32);
    if (reason === undefined) return { preview, previewHash };
    const shown = reason.slice(0, 512);
    if (input.grantedHash === previewHash) return { reason: shown, preview, previewHash };
    const wanted = awaitingApprovalStatus(generation, step, { reason: shown, preview });
    const event = phaseChangeEvent(
      input.knownPhase,
      wanted,
      { type: 'Normal', reason: 'AwaitingApproval', note: wanted.conditions.at(-1)!.message.slice(0, 1000) },
      input.pass,
    );
    // Keyed by step too: a second gated step of the same pass records its own AwaitingApproval Event.
    const keyed = event && { ...event, dedupKey: `${generation}/AwaitingApproval/${step}/${input.pass}` };
    await status.writeOwnStatus({ ref, uid, status: wanted, ...(keyed ? { event: keyed } : {}) }, obj);
    return { reason: shown, preview, previewHash, awaitingStatus: wanted };
  };
}
