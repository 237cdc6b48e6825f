/**
 * Field-level differences between two forms of a Kubernetes object (the live child and a server-side
 * dry-run apply of it), as a dry run reports them: leaf fields only, server-managed fields and `status`
 * left out, a Secret's data redacted.
 */
import type { FieldChange } from './dry-run';

/** What is never compared: the server's bookkeeping, not what an apply changes. */
const ignoredMetadata = new Set([
  'managedFields',
  'resourceVersion',
  'generation',
  'uid',
  'creationTimestamp',
  'selfLink',
]);

/** The value shown for a Secret's data, whatever it is. */
export const redacted = '(redacted)';

type Plain = Record<string, unknown>;

const isPlain = (v: unknown): v is Plain => typeof v === 'object' && v !== null && !Array.isArray(v);

const segment = (key: string): string => (/^[A-Za-z_$][\w$-]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`);

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equal(x, b[i]));
  if (isPlain(a) && isPlain(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && equal(a[k], b[k]));
  }
  return false;
}

/** Whether a value is walked into (a non-empty object or array) rather than reported whole. */
const walkable = (v: unknown): boolean => (Array.isArray(v) ? v.length > 0 : isPlain(v) && Object.keys(v).length > 0);

/**
 * The fields that differ between `live` (absent: the object would be created) and `next`, each with its
 * path and old and new values, in path order. Lists are compared by index. `metadata.managedFields`,
 * `resourceVersion`, `generation`, `uid`, `creationTimestamp` and `status` are ignored; the values under
 * a Secret's `data` and `stringData` are compared but shown as {@link redacted}.
 */
export function fieldDiff(live: unknown, next: unknown): FieldChange[] {
  const kind = (isPlain(next) ? next.kind : undefined) ?? (isPlain(live) ? live.kind : undefined);
  const secret = kind === 'Secret';
  const out: FieldChange[] = [];
  const walk = (a: unknown, b: unknown, path: string, depth: number, hidden: boolean): void => {
    if (equal(a, b)) return;
    if ((walkable(a) || a === undefined) && (walkable(b) || b === undefined) && (walkable(a) || walkable(b))) {
      const arrays =
        Array.isArray(a ?? b) && (a === undefined || Array.isArray(a)) && (b === undefined || Array.isArray(b));
      const plains = !arrays && (a === undefined || isPlain(a)) && (b === undefined || isPlain(b));
      if (arrays) {
        const la = (a as unknown[] | undefined) ?? [];
        const lb = (b as unknown[] | undefined) ?? [];
        for (let i = 0; i < Math.max(la.length, lb.length); i++) walk(la[i], lb[i], `${path}[${i}]`, depth + 1, hidden);
        return;
      }
      if (plains) {
        const pa = a ?? {};
        const pb = b ?? {};
        for (const key of [...new Set([...Object.keys(pa), ...Object.keys(pb)])].sort()) {
          if (depth === 0 && key === 'status') continue;
          if (depth === 1 && path === 'metadata' && ignoredMetadata.has(key)) continue;
          const hide = hidden || (secret && depth === 0 && (key === 'data' || key === 'stringData'));
          walk(pa[key], pb[key], path ? `${path}${segment(key)}` : key, depth + 1, hide);
        }
        return;
      }
    }
    out.push({
      path,
      ...(a !== undefined ? { old: hidden ? redacted : a } : {}),
      ...(b !== undefined ? { new: hidden ? redacted : b } : {}),
    });
  };
  walk(live, next, '', 0, false);
  return out;
}
