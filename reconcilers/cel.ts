/**
 * Validation rules stated once, for both places a spec is checked: as CEL, which the generated CRD
 * carries in `x-kubernetes-validations` so that kube-apiserver refuses a bad spec at admission, and as
 * the equivalent JavaScript check, which the worker runs through the zod schema (an object stored
 * before the rule existed, or written past admission, still ends in phase `Invalid`).
 *
 * The rules travel in a zod registry of homeostat's own (not in `refine` closures, which are opaque);
 * CRD generation reads them back at the node of the schema they were attached to.
 */
import { z } from 'zod';

/**
 * A CEL validation rule, as a CRD's `x-kubernetes-validations` entry (Kubernetes' `ValidationRule`).
 * `self` is the value of the schema node the rule is attached to, after the API server applied the
 * schema's defaults.
 */
export interface CelValidation {
  /**
   * The CEL expression, true when the value is valid, e.g. `self.minReplicas <= self.maxReplicas`.
   * An optional field must be tested with `has(self.field)` before it is read.
   */
  readonly rule: string;
  /** What the user reads when the rule fails, at admission and in the object's `Ready` condition. One line. */
  readonly message: string;
  /**
   * The field the failure is reported on, relative to the node: `.maxReplicas`, `.ports['http']`.
   * @default the node itself
   */
  readonly fieldPath?: string;
  /** The reason kube-apiserver reports. @default 'FieldValueInvalid' */
  readonly reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
}

/** Thrown by {@link celRule} for a rule that cannot be stated (empty, multi-line message, transition rule, …). */
export class CelRuleError extends Error {
  override readonly name = 'CelRuleError';
}

/** Longest rule and message accepted: far above any hand-written rule, far below what bloats a CRD. */
const maxRuleLength = 4096;
const maxMessageLength = 1024;

/** The rules attached to each schema (a clone made by `.min()`, `.describe()` … inherits its parent's). */
const celRegistry = z.registry<{ readonly rules: readonly CelValidation[] }>();

/**
 * The CEL rules attached to this very schema node by {@link celRule} (including those of the schema it
 * was refined from); wrappers such as `.optional()` carry none of their own.
 */
export function celValidationsOf(schema: z.core.$ZodType): readonly CelValidation[] {
  return celRegistry.get(schema)?.rules ?? [];
}

/**
 * Parses a Kubernetes `fieldPath` (`.a.b`, `.a['b-c']`) into zod's issue path, so that the worker's
 * `Invalid` condition names the same field as the admission error.
 */
function issuePath(fieldPath: string): string[] {
  const path: string[] = [];
  const re = /\.([A-Za-z_][A-Za-z0-9_]*)|\['((?:[^'\\]|\\.)*)'\]/y;
  let at = 0;
  while (at < fieldPath.length) {
    re.lastIndex = at;
    const m = re.exec(fieldPath);
    if (!m) {
      throw new CelRuleError(
        `fieldPath ${JSON.stringify(fieldPath.slice(0, 80))} must be made of .field and ['key'] segments (no array indexes)`,
      );
    }
    path.push(m[1] ?? (m[2] ?? '').replace(/\\(.)/g, '$1'));
    at = re.lastIndex;
  }
  return path;
}

function checkValidation(v: CelValidation): void {
  if (typeof v.rule !== 'string' || v.rule.trim() === '') throw new CelRuleError('a CEL rule must not be empty');
  if (v.rule.length > maxRuleLength) {
    throw new CelRuleError(`a CEL rule must be at most ${maxRuleLength} characters (got ${v.rule.length})`);
  }
  // A transition rule compares with the stored object, which the worker's zod check never sees.
  if (/\boldSelf\b/.test(v.rule)) {
    throw new CelRuleError(`rule ${JSON.stringify(v.rule.slice(0, 80))}: transition rules (oldSelf) have no JS check`);
  }
  if (typeof v.message !== 'string' || v.message.trim() === '') {
    throw new CelRuleError(`rule ${JSON.stringify(v.rule.slice(0, 80))}: a message is required`);
  }
  if (v.message.length > maxMessageLength || /[\r\n]/.test(v.message)) {
    throw new CelRuleError(
      `rule ${JSON.stringify(v.rule.slice(0, 80))}: the message must be one line of at most ${maxMessageLength} characters`,
    );
  }
}

/**
 * States a validation rule once, as CEL and as its JavaScript equivalent, and returns the schema
 * refined by it: the worker's zod validation enforces `check` (a spec that fails it is `Invalid`), and
 * the generated CRD carries `rule` in `x-kubernetes-validations` at this node, so kube-apiserver refuses
 * the spec at admission with `message`. Attach a rule to the smallest node that holds every field it
 * reads; call `.optional()` or `.default()` after it (an absent value is never checked, as in CEL).
 * Keep `rule` and `check` equivalent on every value the node's schema accepts.
 *
 * @example
 * ```ts
 * const scaling = celRule(
 *   z.object({ minReplicas: z.number().int().min(0), maxReplicas: z.number().int().max(100) }),
 *   { rule: 'self.minReplicas <= self.maxReplicas', message: 'minReplicas must not exceed maxReplicas',
 *     fieldPath: '.minReplicas' },
 *   (v) => v.minReplicas <= v.maxReplicas,
 * );
 * ```
 */
export function celRule<S extends z.ZodType>(
  schema: S,
  validation: CelValidation,
  check: (value: z.output<S>) => boolean,
): S {
  checkValidation(validation);
  const def = schema._zod.def as { type: string };
  if (def.type === 'pipe' || def.type === 'transform') {
    // CEL sees the stored value, the check would see the transformed one: they would disagree.
    throw new CelRuleError(`rule ${JSON.stringify(validation.rule.slice(0, 80))}: attach it before .transform()`);
  }
  const path = validation.fieldPath === undefined ? undefined : issuePath(validation.fieldPath);
  const rule: CelValidation = Object.freeze({
    rule: validation.rule,
    message: validation.message,
    ...(validation.fieldPath !== undefined ? { fieldPath: validation.fieldPath } : {}),
    ...(validation.reason !== undefined ? { reason: validation.reason } : {}),
  });
  const refined: S = schema.refine((value) => value === undefined || check(value), {
    message: validation.message,
    ...(path ? { path } : {}),
  });
  celRegistry.add(refined, { rules: [...celValidationsOf(schema), rule] });
  return refined;
}

/** A CEL string literal (single-quoted) of `s`. */
export function celString(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n').replace(/\r/g, '\\r')}'`;
}
