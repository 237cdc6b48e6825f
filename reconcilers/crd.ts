/**
 * CustomResourceDefinitions generated from the reconcilers' zod spec schemas: a structural
 * `openAPIV3Schema` with the defaults, enums, bounds, formats and patterns the schema states, the CEL
 * rules attached with `celRule` as `x-kubernetes-validations` at their node (so kube-apiserver refuses
 * a bad spec at admission), the status subresource with homeostat's status shape, printer columns,
 * short names, categories and the plan's scope. `npm run crds` writes them to `deploy/crds/`.
 *
 * What kube-apiserver cannot state (a pattern RE2 cannot read, a union of unlike types, a `refine`
 * without CEL) is left out or loosened, never made stricter: the worker's zod validation still
 * enforces it and reports phase `Invalid`.
 */
import { z } from 'zod';
import type { Operator } from '../core/operator';
import type { ReconcilerPlan } from '../core/plan';
import type { CrdColumn, CrdOptions } from '../core/reconciler';
import { reservedStatusFields, statusFieldName } from '../core/status';
import { celString, celValidationsOf, type CelValidation } from './cel';
import { re2Pattern } from './re2-pattern';

type Json = Record<string, unknown>;

/** Thrown when a reconciler's CRD cannot be generated (a malformed name, a schema zod cannot express). */
export class CrdError extends Error {
  override readonly name = 'CrdError';
}

/** The keys of Kubernetes' `JSONSchemaProps` that a structural schema may use (others are dropped). */
const allowedKeys = new Set([
  'description',
  'type',
  'format',
  'title',
  'default',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'multipleOf',
  'enum',
  'maxProperties',
  'minProperties',
  'required',
  'items',
  'allOf',
  'properties',
  'additionalProperties',
  'example',
  'nullable',
]);

/** zod's string formats that kube-apiserver validates the same way, under its name for them. */
const formats: Record<string, string> = {
  email: 'email',
  uuid: 'uuid',
  uri: 'uri',
  hostname: 'hostname',
  ipv4: 'ipv4',
  ipv6: 'ipv6',
  cidrv4: 'cidr',
  cidrv6: 'cidr',
  mac: 'mac',
  date: 'date',
  'date-time': 'date-time',
  base64: 'byte',
  int32: 'int32',
  int64: 'int64',
  float: 'float',
  double: 'double',
};

const preserve = 'x-kubernetes-preserve-unknown-fields';
const validations = 'x-kubernetes-validations';

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

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

/** Drops every `default` and CEL rule in a subtree (used where union branches were merged). */
function loosen(node: Json): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'default' || key === validations) continue;
    if (key === 'properties' && isObject(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isObject(v) ? loosen(v) : v]));
    } else if ((key === 'items' || key === 'additionalProperties') && isObject(value)) {
      out[key] = loosen(value);
    } else out[key] = value;
  }
  return out;
}

/**
 * One structural node that accepts every value any branch accepts (a zod union): objects merge their
 * properties (required only where every branch requires it), scalars of one type keep their type (and
 * the union of their enums), integer-or-string becomes `x-kubernetes-int-or-string`, anything else is
 * kept as is (`x-kubernetes-preserve-unknown-fields`). zod checks the exact branch.
 */
function unionOf(branches: Json[], description: unknown): Json {
  const desc = typeof description === 'string' ? { description } : {};
  const nullable = branches.some((b) => b.nullable === true || b.type === 'null');
  const typed = branches.filter((b) => b.type !== 'null');
  const types = new Set(typed.map((b) => b.type));
  const withNull = (n: Json): Json => ({ ...desc, ...n, ...(nullable ? { nullable: true } : {}) });
  // Kept as is, but a null that zod accepts stays valid (the API server prunes a null from a node
  // that is not nullable, and a required field is then missing).
  if (typed.length === 0 || typed.some((b) => b.type === undefined)) return withNull({ [preserve]: true });
  if (typed.every((b) => JSON.stringify(b) === JSON.stringify(typed[0]))) {
    return withNull({ ...typed[0] });
  }
  if (types.size === 1) {
    const type = typed[0]!.type;
    if (type === 'object') {
      if (typed.some((b) => !isObject(b.properties) || b.additionalProperties !== undefined || b[preserve])) {
        return withNull({ type: 'object', [preserve]: true });
      }
      const keys = [...new Set(typed.flatMap((b) => Object.keys(b.properties as Json)))];
      const properties: Json = {};
      for (const key of keys) {
        const variants = typed.map((b) => (b.properties as Json)[key]).filter(isObject);
        const alike =
          variants.length === typed.length && variants.every((v) => JSON.stringify(v) === JSON.stringify(variants[0]));
        properties[key] = alike ? variants[0] : loosen(unionOf(variants, undefined));
      }
      const required = keys.filter((k) =>
        typed.every((b) => Array.isArray(b.required) && (b.required as string[]).includes(k)),
      );
      return withNull({ type: 'object', properties, ...(required.length ? { required } : {}) });
    }
    if (type === 'array') {
      const items = typed.map((b) => b.items).filter(isObject);
      return withNull({ type: 'array', ...(items.length ? { items: loosen(unionOf(items, undefined)) } : {}) });
    }
    const enums = typed.map((b) => b.enum);
    if (enums.every(Array.isArray)) {
      const values = [...new Set((enums as unknown[][]).flat().map((v) => JSON.stringify(v)))].map(
        (v) => JSON.parse(v) as unknown,
      );
      return withNull({ type, enum: values });
    }
    return withNull({ type });
  }
  if ([...types].every((t) => t === 'integer' || t === 'number')) return withNull({ type: 'number' });
  if (types.size === 2 && types.has('integer') && types.has('string')) {
    return withNull({ 'x-kubernetes-int-or-string': true });
  }
  return withNull({ [preserve]: true });
}

/**
 * Rewrites a JSON Schema (from `z.toJSONSchema`, target `openapi-3.0`) into a Kubernetes structural
 * schema: keeps only the keys `JSONSchemaProps` has, every node typed (or explicitly untyped with
 * `x-kubernetes-preserve-unknown-fields`), `additionalProperties` only where it types a map, unions
 * merged into one node, no `$ref`, no `uniqueItems`, only formats kube-apiserver checks like zod does.
 */
export function structuralSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(structuralSchema);
  if (!isObject(node)) return node;
  // References (recursive schemas such as z.json()) have no structural form: keep whatever is there.
  if ('$ref' in node || (Array.isArray(node.allOf) && node.allOf.some((m) => isObject(m) && '$ref' in m))) {
    return { ...(typeof node.description === 'string' ? { description: node.description } : {}), [preserve]: true };
  }
  const branches = node.anyOf ?? node.oneOf;
  if (Array.isArray(branches)) {
    const { anyOf: _a, oneOf: _o, ...rest } = node;
    const merged = unionOf(
      branches.map((b) => structuralSchema(b) as Json),
      rest.description,
    );
    return rest.nullable === true ? { ...merged, nullable: true } : merged;
  }
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith('x-kubernetes-')) out[key] = value;
    else if (!allowedKeys.has(key)) continue;
    else if (key === 'properties' && isObject(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, structuralSchema(v)]));
    } else if (key === 'items' || key === 'additionalProperties') {
      // `additionalProperties: false` (strict objects) has no structural form; unknown fields are pruned.
      if (isObject(value)) out[key] = structuralSchema(value);
    } else if (key === 'allOf' && Array.isArray(value)) {
      // Inside allOf only value validations may appear (several patterns of one string).
      const members = value
        .filter(isObject)
        .map((m) => Object.fromEntries(Object.entries(m).filter(([k]) => k === 'pattern')))
        .filter((m) => Object.keys(m).length > 0);
      if (members.length) out.allOf = members;
    } else if (key === 'format') {
      const format = typeof value === 'string' ? formats[value] : undefined;
      if (format) out.format = format;
    } else out[key] = value;
  }
  if (out.type === undefined && out['x-kubernetes-int-or-string'] !== true && out[preserve] !== true) {
    if (out.properties !== undefined || out.additionalProperties !== undefined) out.type = 'object';
    else if (out.items !== undefined) out.type = 'array';
    else return { ...(typeof out.description === 'string' ? { description: out.description } : {}), [preserve]: true };
  }
  if (out.type === 'array' && out.items === undefined) out.items = { [preserve]: true };
  if (out.properties !== undefined && out.additionalProperties !== undefined) {
    // Known fields and a catch-all (z.looseObject, .catchall): keep the extra fields, zod types them.
    delete out.additionalProperties;
    out[preserve] = true;
  }
  if (isObject(out.additionalProperties) && out.additionalProperties[preserve] === true) {
    // z.record(z.string(), z.unknown()): a map of anything.
    if (Object.keys(out.additionalProperties).every((k) => k === preserve || k === 'description')) {
      delete out.additionalProperties;
      out[preserve] = true;
    }
  }
  return out;
}

/** The status schema homeostat writes (observedGeneration, phase, metav1.Condition list). */
export const statusSchema: Json = {
  type: 'object',
  properties: {
    observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
    phase: { type: 'string', enum: ['Pending', 'Reconciling', 'Ready', 'Degraded', 'Invalid', 'Deleting'] },
    conditions: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
      items: {
        type: 'object',
        required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
        properties: {
          type: {
            type: 'string',
            maxLength: 316,
            pattern:
              '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
          },
          status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
          observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
          lastTransitionTime: { type: 'string', format: 'date-time' },
          reason: {
            type: 'string',
            maxLength: 1024,
            minLength: 1,
            pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
          },
          message: { type: 'string', maxLength: 32768 },
        },
      },
    },
  },
  // Reconcilers may report more (e.g. per-child results); keep it rather than prune it.
  'x-kubernetes-preserve-unknown-fields': true,
};

const dnsLabel = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
const columnTypes = new Set(['integer', 'number', 'string', 'boolean', 'date']);
const builtinColumns = ['Phase', 'Ready', 'Age'];

/** Every reason kube-apiserver would refuse the CRD's names, scope or printer columns, one line each. */
function crdProblems(
  plan: Pick<ReconcilerPlan, 'group' | 'version' | 'kind' | 'plural' | 'scope'>,
  options: CrdOptions,
): string[] {
  const problems: string[] = [];
  const show = (v: unknown): string => JSON.stringify(v)?.slice(0, 80) ?? String(v);
  if (typeof plan.group !== 'string' || plan.group.length > 253 || !dnsSubdomain.test(plan.group)) {
    problems.push(`group ${show(plan.group)} must be a DNS subdomain with at least one dot (example.com)`);
  }
  if (typeof plan.plural !== 'string' || plan.plural.length > 63 || !dnsLabel.test(plan.plural)) {
    problems.push(`plural ${show(plan.plural)} must be a lowercase DNS label`);
  } else if (`${plan.plural}.${plan.group}`.length > 253) {
    problems.push(`the CRD name ${plan.plural}.${plan.group} is longer than 253 characters`);
  }
  if (typeof plan.kind !== 'string' || plan.kind.length > 63 || !/^[A-Z][A-Za-z0-9]*$/.test(plan.kind)) {
    problems.push(`kind ${show(plan.kind)} must be UpperCamelCase letters and digits, at most 63`);
  }
  if (typeof plan.version !== 'string' || !/^v\d+((alpha|beta)\d+)?$/.test(plan.version)) {
    problems.push(`version ${show(plan.version)} must look like v1, v1alpha1 or v2beta3`);
  }
  if (plan.scope !== 'Namespaced' && plan.scope !== 'Cluster') {
    problems.push(`scope ${show(plan.scope)} must be Namespaced or Cluster`);
  }
  const names = new Set<string>();
  for (const [what, list] of [
    ['short name', options.shortNames ?? []],
    ['category', options.categories ?? []],
  ] as const) {
    for (const name of list) {
      if (typeof name !== 'string' || name.length > 63 || !dnsLabel.test(name)) {
        problems.push(`${what} ${show(name)} must be a lowercase DNS label`);
      } else if (
        what === 'short name' &&
        (names.has(name) || name === plan.plural || name === plan.kind.toLowerCase())
      ) {
        problems.push(`short name ${name} is given twice or repeats the plural or singular`);
      }
      if (what === 'short name') names.add(name);
    }
  }
  const columns = new Set(builtinColumns);
  for (const column of options.columns ?? []) {
    if (typeof column.name !== 'string' || column.name === '' || column.name.length > 63) {
      problems.push(`column name ${show(column.name)} must be 1 to 63 characters`);
    } else if (columns.has(column.name)) {
      problems.push(`column ${column.name} is given twice (Phase, Ready and Age are always there)`);
    } else columns.add(column.name);
    if (!columnTypes.has(column.type)) {
      problems.push(
        `column ${show(column.name)}: type ${show(column.type)} must be one of ${[...columnTypes].join(', ')}`,
      );
    }
    if (typeof column.jsonPath !== 'string' || !column.jsonPath.startsWith('.') || column.jsonPath.length > 1024) {
      problems.push(`column ${show(column.name)}: jsonPath ${show(column.jsonPath)} must start with . (.spec.image)`);
    }
    if (column.priority !== undefined && (!Number.isInteger(column.priority) || column.priority < 0)) {
      problems.push(`column ${show(column.name)}: priority must be a non-negative integer`);
    }
  }
  for (const [name, field] of Object.entries(options.status ?? {})) {
    if (reservedStatusFields.has(name)) {
      problems.push(
        `status field ${name} is homeostat's own (observedGeneration, phase and conditions are always there)`,
      );
    } else if (!statusFieldName.test(name)) {
      problems.push(`status field ${show(name)} must be a lowerCamelCase name of at most 63 characters`);
    }
    if (!statusFieldTypes.has(field?.type)) {
      problems.push(
        `status field ${show(name)}: type ${show(field?.type)} must be one of ${[...statusFieldTypes].join(', ')}`,
      );
    }
  }
  return problems;
}

const statusFieldTypes: ReadonlySet<unknown> = new Set(['integer', 'number', 'string', 'boolean']);

/** homeostat's status schema with a reconciler's own fields ({@link CrdOptions.status}). */
function statusSchemaWith(fields: CrdOptions['status']): Json {
  const own = Object.entries(fields ?? {});
  if (own.length === 0) return statusSchema;
  return {
    ...statusSchema,
    properties: {
      ...(statusSchema.properties as Json),
      ...Object.fromEntries(
        own.map(([name, f]) => [name, { type: f.type, ...(f.description ? { description: f.description } : {}) }]),
      ),
    },
  };
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

/**
 * The CRD of a reconciler's resource, as the API's JSON (ready for YAML, kubectl or the generic
 * client). Throws a `CrdError` listing every problem of its names, scope and columns.
 */
export function customResourceDefinition(
  plan: Pick<ReconcilerPlan, 'group' | 'version' | 'kind' | 'plural' | 'scope'>,
  schema: z.ZodType,
  options: CrdOptions = {},
): Json {
  const problems = crdProblems(plan, options);
  if (problems.length) throw new CrdError(`${String(plan.kind)}: ${problems.join('; ')}`);
  let spec: Json;
  try {
    spec = specSchema(schema);
  } catch (err) {
    throw new CrdError(`${plan.kind}: ${(err as Error).message}`, { cause: err });
  }
  const columns: CrdColumn[] = [
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    ...(options.columns ?? []),
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${plan.plural}.${plan.group}`,
      labels: { 'app.kubernetes.io/part-of': 'homeostat' },
    },
    spec: {
      group: plan.group,
      scope: plan.scope,
      names: {
        plural: plan.plural,
        singular: plan.kind.toLowerCase(),
        kind: plan.kind,
        listKind: `${plan.kind}List`,
        ...(options.shortNames?.length ? { shortNames: [...options.shortNames] } : {}),
        categories: [...(options.categories ?? ['homeostat'])],
      },
      versions: [
        {
          name: plan.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: columns.map((c) => ({ ...c })),
          schema: {
            openAPIV3Schema: {
              type: 'object',
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec,
                status: statusSchemaWith(options.status),
              },
            },
          },
        },
      ],
    },
  };
}

/**
 * The CRDs of an operator's reconcilers, by file name (`<plural>.<group>.yaml`); reconcilers with
 * `crd: false` (core kinds, CRDs defined elsewhere) have none.
 */
export function operatorCrds(operator: Operator): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const r of operator.reconcilers) {
    // A core kind (Namespace, ConfigMap) is Kubernetes' own: there is no CRD to generate.
    if (r.crd === false || r.plan.group === '') continue;
    out[`${r.plan.plural}.${r.plan.group}.yaml`] = customResourceDefinition(r.plan, r.schema, r.crd ?? {});
  }
  return out;
}
