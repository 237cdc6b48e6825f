/**
 * Kubernetes structural schemas from JSON Schema: only the keys `JSONSchemaProps` has, every node typed
 * (or explicitly kept with `x-kubernetes-preserve-unknown-fields`), unions merged into one node that
 * accepts every branch. What it cannot state is loosened, never made stricter: zod still checks it.
 */
type Json = Record<string, unknown>;

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

/** The key under which kube-apiserver keeps a node as it is. */
export const preserve = 'x-kubernetes-preserve-unknown-fields';
/** The key of a node's CEL rules. */
export const validations = 'x-kubernetes-validations';

/** Whether a JSON value is an object (not null, not an array). */
export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

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
