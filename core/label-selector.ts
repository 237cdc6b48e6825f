/**
 * Kubernetes label selectors in their string form (`a=b,c!=d,e in (x,y),!f`), parsed and matched the
 * way the API server does, so that the activities can tell whether an object still belongs to a
 * reconciler that selects its objects by label (the informer bridge lets the API server filter).
 */

/** One requirement of a selector. */
export type LabelRequirement =
  | { readonly key: string; readonly op: 'exists' | 'notExists' }
  | { readonly key: string; readonly op: 'in' | 'notIn'; readonly values: readonly string[] };

/** Thrown for a selector that does not parse. */
export class LabelSelectorError extends Error {
  override readonly name = 'LabelSelectorError';
}

// A qualified label key (optional DNS prefix, then a name) and a label value, as the API server checks them.
const keyPattern =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const valuePattern = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkKey(key: string, selector: string): string {
  const name = key.includes('/') ? key.slice(key.indexOf('/') + 1) : key;
  if (!keyPattern.test(key) || name.length > 63 || key.length - name.length > 254) {
    throw new LabelSelectorError(`label selector ${JSON.stringify(selector)}: invalid key ${JSON.stringify(key)}`);
  }
  return key;
}

function checkValue(value: string, selector: string): string {
  if (value.length > 63 || !valuePattern.test(value)) {
    throw new LabelSelectorError(`label selector ${JSON.stringify(selector)}: invalid value ${JSON.stringify(value)}`);
  }
  return value;
}

/** Splits on commas outside parentheses. */
function splitRequirements(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (depth < 0) throw new LabelSelectorError(`label selector ${JSON.stringify(selector)}: unbalanced parentheses`);
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  if (depth !== 0) throw new LabelSelectorError(`label selector ${JSON.stringify(selector)}: unbalanced parentheses`);
  parts.push(current);
  return parts.map((p) => p.trim());
}

/** Parses a selector string; `''` selects everything. Throws a {@link LabelSelectorError}. */
export function parseLabelSelector(selector: string): LabelRequirement[] {
  if (selector.trim() === '') return [];
  return splitRequirements(selector).map((part): LabelRequirement => {
    if (part === '') throw new LabelSelectorError(`label selector ${JSON.stringify(selector)}: empty requirement`);
    const set = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(part);
    if (set) {
      const values = set[3]!.split(',').map((v) => checkValue(v.trim(), selector));
      return { key: checkKey(set[1]!, selector), op: set[2] === 'in' ? 'in' : 'notIn', values };
    }
    const eq = /^([^!=\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(part);
    if (eq) {
      const key = checkKey(eq[1]!, selector);
      const value = checkValue(eq[3]!, selector);
      return { key, op: eq[2] === '!=' ? 'notIn' : 'in', values: [value] };
    }
    if (part.startsWith('!')) return { key: checkKey(part.slice(1).trim(), selector), op: 'notExists' };
    return { key: checkKey(part, selector), op: 'exists' };
  });
}

/** Whether `labels` satisfy every requirement (`!=` and `notin` also match objects without the key). */
export function matchesLabels(
  requirements: readonly LabelRequirement[],
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const l = labels ?? {};
  return requirements.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    switch (r.op) {
      case 'exists':
        return has;
      case 'notExists':
        return !has;
      case 'in':
        return has && r.values.includes(l[r.key]!);
      case 'notIn':
        return !has || !r.values.includes(l[r.key]!);
    }
  });
}
