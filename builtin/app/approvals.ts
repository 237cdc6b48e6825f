/**
 * The approval rule of the built-in `App` (`core/approval.ts`): with `spec.approvals.imageRepository`
 * (off by default), a change of the Deployment's image to another repository — another registry or
 * path, not just another tag or digest — waits for an approver. The rule reads the spec first and
 * touches the step's preview (a dry run) only when the App asks for the gate.
 */
import type { ApprovalFacts } from '../../reconcilers';
import type { AppSpec } from './schema';

/** An image reference's repository: without its digest (`@sha256:…`) and tag (`:v2`); a registry port stays. */
export function imageRepository(image: string): string {
  const named = image.split('@')[0]!;
  const colon = named.lastIndexOf(':');
  return colon > named.lastIndexOf('/') ? named.slice(0, colon) : named;
}

/** The `deployment` step's rule: an image whose repository would change, on an App that gates it. */
export function imageRepositoryApproval(facts: ApprovalFacts<AppSpec>): string | undefined {
  if (facts.spec.approvals?.imageRepository !== true) return undefined;
  const deployment = facts.observed.children.find((c) => c.kind === 'Deployment' && c.action === 'update');
  const image = deployment?.fields.find((f) => /^spec\.template\.spec\.containers\[\d+\]\.image$/.test(f.path));
  if (typeof image?.old !== 'string' || typeof image.new !== 'string') return undefined;
  const [from, to] = [imageRepository(image.old), imageRepository(image.new)];
  if (from === to) return undefined;
  return `the image repository would change from ${from} to ${to} (spec.approvals.imageRepository)`;
}
