/**
 * What a pass records of an object's spec (issue 31, "a bounded history per object"): a spec larger
 * than {@link maxSpecBytes} is refused as `InvalidSpec` before anything of it is recorded, whatever the
 * reconciler's schema allows; a spec already recorded in the run is named by its digest
 * ({@link specDigestOf}), and a step given only the digest re-reads the object ({@link specByDigest}).
 */
import { createHash } from 'node:crypto';
import { HomeostatError } from '../core/errors';
import type { Reconciler } from '../core/reconciler';
import type { StepInput } from '../core/activity-contract';
import type { PrimaryObjects } from './kubernetes';

/**
 * The largest spec homeostat reconciles: 512 KiB of JSON. Bigger specs are `Invalid`, whatever the
 * reconciler's schema says, so that no tenant can make a pass record near a megabyte (Temporal warns at
 * 512 KiB per payload and refuses 2 MiB). Fixed, not configurable: it bounds homeostat's own histories.
 */
export const maxSpecBytes = 512 * 1024;

/** The size of a spec as JSON, in bytes. */
export function specBytes(spec: unknown): number {
  return Buffer.byteLength(JSON.stringify(spec ?? {}), 'utf8');
}

/** Why a spec is too large to reconcile, or `undefined` when it is not. */
export function oversizeProblem(spec: unknown): string | undefined {
  const bytes = specBytes(spec);
  if (bytes <= maxSpecBytes) return undefined;
  return (
    `spec is ${bytes} bytes as JSON, over homeostat's limit of ${maxSpecBytes} bytes (512 KiB): ` +
    'it is neither reconciled nor recorded; make it smaller (keep large data in a ConfigMap and name it)'
  );
}

/** JSON with object keys sorted, so equal specs have equal digests whatever the order of their keys. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The digest of a spec: `sha256:` and the hex SHA-256 of its canonical JSON. */
export function specDigestOf(spec: unknown): string {
  return `sha256:${createHash('sha256')
    .update(canonical(spec ?? null))
    .digest('hex')}`;
}

/**
 * The spec a step runs on. A step given the spec itself (local steps; runs before workflow-code
 * version 5) gets it; a step given its digest re-reads the object and gets its spec (parsed as observe
 * parses it) only if the object is still the one observed and its spec still has that digest: else
 * `SpecChanged`, and the workflow supersedes the pass. Any worker can run the step, on any attempt.
 */
export async function specByDigest(
  primary: PrimaryObjects,
  reconciler: Reconciler<unknown>,
  input: StepInput,
): Promise<unknown> {
  if (input.specDigest === undefined || input.spec !== undefined) return input.spec;
  const obj = await primary.get(reconciler.plan, input.ref);
  if (!obj || obj.metadata.uid !== input.identity.uid) {
    throw new HomeostatError('ERR_SPEC_CHANGED', 'the object is gone or was re-created since the pass observed it');
  }
  const parsed = reconciler.schema.safeParse(obj.spec ?? {});
  const spec = parsed.success ? parsed.data : obj.spec;
  if (specDigestOf(spec) !== input.specDigest) {
    throw new HomeostatError(
      'ERR_SPEC_CHANGED',
      `the spec changed since the pass observed it (now generation ${obj.metadata.generation ?? '?'}): a new pass follows`,
    );
  }
  return spec;
}
