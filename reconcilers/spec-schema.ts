/**
 * The structural `spec` schema of a reconciler's zod spec schema: zod's OpenAPI output annotated per
 * node (the CEL rules attached with `celRule`, patterns rewritten for RE2 with their flags, the key
 * rules of records) and made structural. Descriptions given with `.describe()` or
 * `.meta({ description })` stay on their node, so `kubectl explain` prints them.
 */
import { z } from 'zod';
import { celString, celValidationsOf, type CelValidation } from './cel';
import { CrdError } from './crd-error';
import { re2Pattern } from './re2-pattern';
import { structuralSchema, validations } from './structural-schema';

type Json = Record<string, unknown>;

/** The patterns and length bounds of a string schema, read from its checks (zod's JSON loses regex flags). */
function stringChecks(schema: z.core.$ZodType): { patterns: RegExp[]; minimum?: number; maximum?: number } {
  const def = schema._zod.def as { checks?: z.core.$ZodCheck[] };
  // A format schema (z.email()) is its own first check.
  const self = schema._zod.traits.has('$ZodCheck') ? [schema as unknown as z.core.$ZodCheck] : [];
  const out: { patterns: RegExp[]; minimum?: number; maximum?: number } = { patterns: [] };
  for (const check of [...self, ...(def.checks ?? [])]) {
    const c = check._zod.def as {
      check: string;
      pattern?: RegExp;
      minimum?: number;
      maximum?: number;
      length?: number;
    };
    if (c.check === 'string_format' && c.pattern instanceof RegExp) out.patterns.push(c.pattern);
    const min = c.check === 'min_length' ? c.minimum : c.check === 'length_equals' ? c.length : undefined;
    const max = c.check === 'max_length' ? c.maximum : c.check === 'length_equals' ? c.length : undefined;
    if (min !== undefined) out.minimum = Math.max(out.minimum ?? 0, min);
    if (max !== undefined) out.maximum = Math.min(out.maximum ?? Infinity, max);
  }
  return out;
}

/** The key constraints of a `z.record` (JSON Schema has no structural form for them) as one CEL rule. */
function recordKeyRule(record: z.core.$ZodType): CelValidation | undefined {
  const keyType = (record._zod.def as { keyType?: z.core.$ZodType }).keyType;
  if (!keyType) return undefined;
  const values = keyType._zod.values;
  const conditions: string[] = [];
  const said: string[] = [];
  if (values && values.size > 0 && [...values].every((v) => typeof v === 'string')) {
    conditions.push(`k in [${[...values].map((v) => celString(v as string)).join(', ')}]`);
    said.push(`be one of ${[...values].join(', ')}`);
  }
  if ((keyType._zod.def as { type: string }).type === 'string') {
    const { patterns, minimum, maximum } = stringChecks(keyType);
    for (const re of patterns) {
      const pattern = re2Pattern(re);
      if (pattern === undefined) continue;
      conditions.push(`k.matches(${celString(pattern)})`);
      said.push(`match ${re.source}`);
    }
    if (minimum !== undefined && minimum > 0) {
      conditions.push(`size(k) >= ${minimum}`);
      said.push(`be at least ${minimum} characters`);
    }
    if (maximum !== undefined) {
      conditions.push(`size(k) <= ${maximum}`);
      said.push(`be at most ${maximum} characters`);
    }
  }
  if (conditions.length === 0) return undefined;
  return { rule: `self.all(k, ${conditions.join(' && ')})`, message: `keys must ${said.join(' and ')}` };
}

/**
 * zod's per-node hook: the CEL rules of the node, its patterns with their flags (zod writes only a
 * regex's source) rewritten for RE2, and the key rules of records.
 */
function annotate(ctx: { zodSchema: z.core.$ZodType; jsonSchema: Json }): void {
  const { zodSchema, jsonSchema: json } = ctx;
  const def = zodSchema._zod.def as { type: string };
  if (def.type === 'string') {
    delete json.pattern;
    delete json.allOf;
    const rewritten = stringChecks(zodSchema)
      .patterns.map(re2Pattern)
      .filter((p): p is string => p !== undefined);
    if (rewritten.length === 1) json.pattern = rewritten[0];
    else if (rewritten.length > 1) json.allOf = rewritten.map((pattern) => ({ pattern }));
  }
  const rules: CelValidation[] = [];
  if (def.type === 'record') {
    const keyRule = recordKeyRule(zodSchema);
    if (keyRule) rules.push(keyRule);
  }
  rules.push(...celValidationsOf(zodSchema));
  if (rules.length === 0) return;
  // Rules given directly in `.meta()` stay; identical ones are written once.
  const all = [...(Array.isArray(json[validations]) ? (json[validations] as CelValidation[]) : []), ...rules];
  const seen = new Set<string>();
  json[validations] = all.filter((r) => {
    const key = JSON.stringify([r.rule, r.message, r.fieldPath, r.reason]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The structural `spec` schema of a zod spec schema, with its CEL rules at their nodes. */
export function specSchema(schema: z.ZodType): Json {
  let json: unknown;
  try {
    json = z.toJSONSchema(schema, {
      target: 'openapi-3.0',
      io: 'input',
      override: (ctx) => annotate(ctx as { zodSchema: z.core.$ZodType; jsonSchema: Json }),
    });
  } catch (err) {
    throw new CrdError(`the spec schema cannot be written as OpenAPI: ${(err as Error).message}`, { cause: err });
  }
  const spec = structuralSchema(json) as Json;
  if (spec.type !== 'object')
    throw new CrdError(
      `the spec schema must be an object schema (z.object), not ${JSON.stringify(spec.type ?? 'untyped')}`,
    );
  return spec;
}
