/**
 * Which objects a reconciler's steps may read (`StepContext.read`): the rule that confines reads like
 * writes (docs/security.md). A namespaced object's steps read in its own namespace; anything else — an
 * object in another namespace, a cluster-scoped kind, any read of a cluster-scoped object's steps — only
 * when the reconciler declares it ({@link ReadDeclaration}). Plain functions, shared by the authoring API
 * (which checks declarations) and the activities (which enforce them before any request).
 */
import type { ReadDeclaration } from './reconciler';

/** The API group of an `apiVersion` (`''` for the core group's `v1`). */
export function groupOfApiVersion(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

const dnsLabel = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * What is wrong with a reconciler's `reads`, one line each (empty when nothing is): a kind or
 * apiVersion missing, a scope that is none of the three, a namespace that is not a DNS label, or
 * `anyNamespace` for Secrets (a Secret outside the object's namespace is read only from a namespace the
 * reconciler names).
 */
export function readDeclarationProblems(reads: readonly ReadDeclaration[]): string[] {
  const problems: string[] = [];
  reads.forEach((r, i) => {
    const where = `reads[${i}]`;
    if (typeof r.kind !== 'string' || r.kind === '') problems.push(`${where}: kind is required`);
    if (typeof r.apiVersion !== 'string' || r.apiVersion === '') problems.push(`${where}: apiVersion is required`);
    const scope: unknown = r.scope;
    if (scope === 'cluster') return;
    if (scope === 'anyNamespace') {
      if (r.kind === 'Secret' && groupOfApiVersion(r.apiVersion ?? '') === '') {
        problems.push(
          `${where}: Secrets cannot be read in any namespace (a tenant could name another team's Secret); ` +
            "declare the one namespace they live in: scope: { namespace: '…' }",
        );
      }
      return;
    }
    const namespace = (scope as { namespace?: unknown } | undefined)?.namespace;
    if (typeof scope !== 'object' || scope === null || typeof namespace !== 'string') {
      problems.push(`${where}: scope must be 'cluster', 'anyNamespace' or { namespace: '<name>' }`);
    } else if (!dnsLabel.test(namespace)) {
      problems.push(`${where}: scope.namespace ${JSON.stringify(namespace.slice(0, 70))} is not a namespace name`);
    }
  });
  return problems;
}

/** An object a step asks to read, placed: its kind's group, kind and scope, and its namespace. */
export interface ReadTarget {
  readonly group: string;
  readonly kind: string;
  /** Whether the kind is namespaced (from API discovery). */
  readonly namespaced: boolean;
  /** The namespace it is read in (namespaced kinds only). */
  readonly namespace?: string;
  readonly name: string;
}

/**
 * Why a step of the object in `ownerNamespace` (`undefined`: a cluster-scoped object) may not read
 * `target` under `reads`, or `undefined` when it may.
 */
export function readRefusal(
  ownerNamespace: string | undefined,
  reads: readonly ReadDeclaration[],
  target: ReadTarget,
): string | undefined {
  const declared = reads.filter((r) => r.kind === target.kind && groupOfApiVersion(r.apiVersion) === target.group);
  if (target.namespaced) {
    if (ownerNamespace !== undefined && target.namespace === ownerNamespace) return undefined;
    const ok = declared.some(
      (r) => r.scope === 'anyNamespace' || (typeof r.scope === 'object' && r.scope.namespace === target.namespace),
    );
    if (ok) return undefined;
    return ownerNamespace !== undefined
      ? `a namespaced object's steps read only in its own namespace (${ownerNamespace}) unless the reconciler ` +
          `declares reads of ${target.kind} in ${target.namespace ?? '?'} (reads: [{ kind: '${target.kind}', scope: … }])`
      : `the reconciler declares no reads of ${target.kind} in ${target.namespace ?? '?'} ` +
          `(reads: [{ kind: '${target.kind}', scope: … }])`;
  }
  if (declared.some((r) => r.scope === 'cluster')) return undefined;
  return (
    `${target.kind} is cluster-scoped and the reconciler declares no cluster-scoped reads of it ` +
    `(reads: [{ kind: '${target.kind}', scope: 'cluster' }])`
  );
}
