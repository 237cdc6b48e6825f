/**
 * The spec schema's rewriting into a structural schema, node by node and with the exact result: record
 * key rules (lengths, enums, patterns RE2 cannot read), patterns and their allOf, union merging (objects,
 * arrays, scalars, nullables, defaults and rules dropped where branches merge), maps of anything, catch-all
 * objects, formats, and `structuralSchema` called directly on hand-written JSON Schema. Written for the
 * mutants of reconcilers/crd.ts that survived (issue 17): every value is computed inside its test and
 * compared whole, because a stray key (`pattern: undefined`, `allOf: []`) is what a broken line leaves.
 */
import { z } from 'zod';
import { celRule } from '../../reconcilers/cel';
import { CrdError, customResourceDefinition, specSchema, structuralSchema } from '../../reconcilers';

type Json = Record<string, any>;
const preserve = 'x-kubernetes-preserve-unknown-fields';

/** The structural node a field of the given schema gets in the spec. */
const nodeOf = (field: z.ZodType): Json => (specSchema(z.object({ f: field })).properties as Record<string, Json>).f!;

/** The CrdError `specSchema` throws for a schema. */
function specError(schema: z.ZodType): CrdError {
  try {
    specSchema(schema);
  } catch (err) {
    if (err instanceof CrdError) return err;
    throw err;
  }
  throw new Error('specSchema accepted the schema');
}

describe('CRD schema rewriting at its edges', () => {
  it('given record keys with length bounds, one CEL rule states both bounds and its message says them', () => {
    expect(nodeOf(z.record(z.string().min(2).max(5), z.number()))).toStrictEqual({
      type: 'object',
      additionalProperties: { type: 'number' },
      'x-kubernetes-validations': [
        {
          rule: 'self.all(k, size(k) >= 2 && size(k) <= 5)',
          message: 'keys must be at least 2 characters and be at most 5 characters',
        },
      ],
    });
  });

  it('given record keys of an exact length, the rule bounds them on both sides', () => {
    expect(nodeOf(z.record(z.string().length(3), z.number()))['x-kubernetes-validations']).toStrictEqual([
      {
        rule: 'self.all(k, size(k) >= 3 && size(k) <= 3)',
        message: 'keys must be at least 3 characters and be at most 3 characters',
      },
    ]);
  });

  it('given record keys bounded twice, the tightest bounds win', () => {
    expect(
      nodeOf(z.record(z.string().min(2).min(4).max(9).max(6), z.number()))['x-kubernetes-validations'],
    ).toStrictEqual([
      {
        rule: 'self.all(k, size(k) >= 4 && size(k) <= 6)',
        message: 'keys must be at least 4 characters and be at most 6 characters',
      },
    ]);
  });

  it('given a minimum key length of 0, no lower bound is written (every key has at least 0 characters)', () => {
    expect(nodeOf(z.record(z.string().min(0).max(4), z.number()))['x-kubernetes-validations']).toStrictEqual([
      { rule: 'self.all(k, size(k) <= 4)', message: 'keys must be at most 4 characters' },
    ]);
    expect(nodeOf(z.record(z.string().min(1), z.number()))['x-kubernetes-validations']).toStrictEqual([
      { rule: 'self.all(k, size(k) >= 1)', message: 'keys must be at least 1 characters' },
    ]);
  });

  it('given enum record keys, the rule lists them', () => {
    expect(nodeOf(z.partialRecord(z.enum(['a', 'b']), z.number()))).toStrictEqual({
      type: 'object',
      additionalProperties: { type: 'number' },
      'x-kubernetes-validations': [{ rule: "self.all(k, k in ['a', 'b'])", message: 'keys must be one of a, b' }],
    });
  });

  it('given record keys with a pattern RE2 cannot read, the pattern is left to zod and the other key rules stay', () => {
    expect(
      nodeOf(
        z.record(
          z
            .string()
            .regex(/^(?!x)a+$/)
            .max(4),
          z.number(),
        ),
      )['x-kubernetes-validations'],
    ).toStrictEqual([{ rule: 'self.all(k, size(k) <= 4)', message: 'keys must be at most 4 characters' }]);
  });

  it('given record keys of a string format, the format’s own pattern constrains the keys', () => {
    const [rule] = nodeOf(z.record(z.uuid(), z.string()))['x-kubernetes-validations'] as Json[];
    const pattern = /^self\.all\(k, k\.matches\('(.*)'\)\)$/.exec(rule!.rule)?.[1];
    expect(new RegExp(pattern!).test('123e4567-e89b-12d3-a456-426614174000')).toBe(true);
    expect(new RegExp(pattern!).test('not-a-uuid')).toBe(false);
  });

  it('given unconstrained record keys, no rule is written', () => {
    expect(nodeOf(z.record(z.string(), z.number()))).toStrictEqual({
      type: 'object',
      additionalProperties: { type: 'number' },
    });
  });

  it('given a string format, the node keeps the format’s own pattern, rewritten for RE2', () => {
    const node = nodeOf(z.uuid());
    expect(node.format).toBe('uuid');
    expect(new RegExp(node.pattern).test('123e4567-e89b-12d3-a456-426614174000')).toBe(true);
    expect(new RegExp(node.pattern).test('123e4567')).toBe(false);
  });

  it('given no pattern, one pattern, two, or one RE2 cannot read, the node has no pattern key, pattern, or allOf', () => {
    expect(nodeOf(z.string().min(1))).toStrictEqual({ type: 'string', minLength: 1 });
    expect(nodeOf(z.string().regex(/^a/))).toStrictEqual({ type: 'string', pattern: '^a' });
    expect(nodeOf(z.string().regex(/^a/).regex(/b$/))).toStrictEqual({
      type: 'string',
      allOf: [{ pattern: '^a' }, { pattern: 'b$' }],
    });
    expect(nodeOf(z.string().regex(/^(?!x)a+$/))).toStrictEqual({ type: 'string' });
    expect(
      nodeOf(
        z
          .string()
          .regex(/^(?!x)a+$/)
          .regex(/b$/),
      ),
    ).toStrictEqual({ type: 'string', pattern: 'b$' });
    expect(
      nodeOf(
        z
          .string()
          .regex(/^(?!x)a+$/)
          .regex(/(?<!y)b$/),
      ),
    ).toStrictEqual({ type: 'string' });
  });

  it('given a template literal, its pattern is kept; given a number, no pattern key appears', () => {
    expect(nodeOf(z.templateLiteral(['v', z.number().int()]))).toStrictEqual({ type: 'string', pattern: '^v-?\\d+$' });
    expect(nodeOf(z.number().int().min(1))).toStrictEqual({
      type: 'integer',
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
    });
  });

  it('given a rule both in .meta() and by celRule, it is written once', () => {
    const rule = { rule: 'self.a > 0', message: 'a must be positive' };
    const schema = celRule(z.object({ a: z.number() }), rule, (v) => v.a > 0).meta({
      'x-kubernetes-validations': [rule],
    });
    expect(nodeOf(schema)['x-kubernetes-validations']).toStrictEqual([rule]);
  });

  it('given a union of objects whose shared field differs, the field merges and loses its defaults, rules and required fields', () => {
    const positive = { rule: 'self.z > 0', message: 'z must be positive' };
    const a = z.object({ k: z.literal('A'), a: z.object({ x: z.string().default('d') }) });
    const b = z.object({
      k: z.literal('B'),
      a: z.object({
        y: z.array(celRule(z.object({ z: z.number().default(1) }), positive, (v) => v.z > 0)),
        m: z.record(z.string(), z.object({ q: z.string().default('q') })),
      }),
    });
    expect(nodeOf(z.union([a, b]))).toStrictEqual({
      type: 'object',
      properties: {
        k: { type: 'string', enum: ['A', 'B'] },
        a: {
          type: 'object',
          properties: {
            x: { type: 'string' },
            y: { type: 'array', items: { type: 'object', properties: { z: { type: 'number' } } } },
            m: { type: 'object', additionalProperties: { type: 'object', properties: { q: { type: 'string' } } } },
          },
        },
      },
      required: ['k', 'a'],
    });
  });

  it('given a union of arrays of unlike objects, the items merge', () => {
    const union = z.union([z.array(z.object({ a: z.string().default('x') })), z.array(z.object({ b: z.number() }))]);
    expect(nodeOf(union)).toStrictEqual({
      type: 'array',
      items: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } } },
    });
    expect(structuralSchema({ anyOf: [{ type: 'array' }, { type: 'array', minItems: 1 }] })).toStrictEqual({
      type: 'array',
      items: { [preserve]: true },
    });
  });

  it('given a union of an object and a map, the node keeps any field (zod checks the branch)', () => {
    expect(nodeOf(z.union([z.object({ a: z.string() }), z.record(z.string(), z.string())]))).toStrictEqual({
      type: 'object',
      [preserve]: true,
    });
    expect(nodeOf(z.union([z.object({ a: z.string() }), z.looseObject({ b: z.string() })]).nullable())).toStrictEqual({
      type: 'object',
      [preserve]: true,
      nullable: true,
    });
  });

  it('given unions of one scalar type, of integer and number, and with null, the merged node keeps the type and nullability', () => {
    expect(nodeOf(z.union([z.string().min(1), z.string().max(3)]))).toStrictEqual({ type: 'string' });
    expect(nodeOf(z.union([z.number().int(), z.number()]))).toStrictEqual({ type: 'number' });
    expect(nodeOf(z.union([z.string(), z.null()]))).toStrictEqual({ type: 'string', nullable: true });
    expect(nodeOf(z.union([z.object({ a: z.string() }), z.object({ b: z.number() }).nullable()]))).toStrictEqual({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'number' } },
      nullable: true,
    });
    expect(nodeOf(z.union([z.object({ a: z.string() }), z.object({ b: z.number() })]).nullable())).toStrictEqual({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'number' } },
      nullable: true,
    });
  });

  it('given unions that no one node can type, the node keeps anything, with the union’s description', () => {
    expect(nodeOf(z.union([z.string(), z.boolean()]).describe('either'))).toStrictEqual({
      description: 'either',
      [preserve]: true,
    });
    expect(nodeOf(z.union([z.string(), z.any()]).describe('maybe'))).toStrictEqual({
      description: 'maybe',
      [preserve]: true,
    });
    expect(structuralSchema({ anyOf: [{ type: 'null' }] })).toStrictEqual({ [preserve]: true, nullable: true });
  });

  it('given items and map values that are unions, they are merged like any other node', () => {
    expect(nodeOf(z.array(z.union([z.string(), z.number().int()])))).toStrictEqual({
      type: 'array',
      items: { 'x-kubernetes-int-or-string': true },
    });
    expect(nodeOf(z.record(z.string(), z.union([z.string(), z.number().int()])))).toStrictEqual({
      type: 'object',
      additionalProperties: { 'x-kubernetes-int-or-string': true },
    });
  });

  it('given a strict object, its additionalProperties: false is dropped (unknown fields are pruned)', () => {
    expect(nodeOf(z.strictObject({ a: z.string() }))).toStrictEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
    });
  });

  it('given a loose object, it keeps its fields and unknown ones, with no additionalProperties', () => {
    expect(nodeOf(z.looseObject({ a: z.string() }))).toStrictEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
      [preserve]: true,
    });
  });

  it('given a map of anything, it becomes an object that keeps any field; a map of typed objects stays a map', () => {
    expect(nodeOf(z.record(z.string(), z.unknown()))).toStrictEqual({ type: 'object', [preserve]: true });
    expect(nodeOf(z.record(z.string(), z.unknown().describe('any value')))).toStrictEqual({
      type: 'object',
      [preserve]: true,
    });
    expect(nodeOf(z.record(z.string(), z.looseObject({ a: z.string() })))).toStrictEqual({
      type: 'object',
      additionalProperties: {
        type: 'object',
        properties: { a: { type: 'string' } },
        required: ['a'],
        [preserve]: true,
      },
    });
  });

  it('given formats kube-apiserver names differently or does not check, they are renamed or dropped', () => {
    expect(nodeOf(z.base64()).format).toBe('byte');
    expect(nodeOf(z.cuid())).toStrictEqual({ type: 'string', pattern: '^[cC][0-9a-z]{6,}$' });
  });

  it('given an untyped field with a description, it keeps anything and the description', () => {
    expect(nodeOf(z.any().describe('anything'))).toStrictEqual({ description: 'anything', [preserve]: true });
    expect(nodeOf(z.json().describe('free form'))).toStrictEqual({ description: 'free form', [preserve]: true });
    expect(nodeOf(z.json())).toStrictEqual({ [preserve]: true });
  });

  it('given a spec schema zod cannot write as JSON Schema, the CrdError says why and keeps zod’s error as its cause', () => {
    const err = specError(z.object({ at: z.date() }));
    expect(err.name).toBe('CrdError');
    expect(err.message).toBe('the spec schema cannot be written as OpenAPI: Date cannot be represented in JSON Schema');
    expect((err.cause as Error).message).toBe('Date cannot be represented in JSON Schema');
  });

  it('given a spec schema that is not an object, the error names its JSON type, or says it is untyped', () => {
    expect(specError(z.any()).message).toBe('the spec schema must be an object schema (z.object), not "untyped"');
    expect(specError(z.string()).message).toBe('the spec schema must be an object schema (z.object), not "string"');
  });

  it('given hostile names that are arrays of valid names, generation refuses each of them', () => {
    const plan = {
      group: 'scalers.example.com',
      version: 'v1',
      kind: 'Scaler',
      plural: 'scalers',
      scope: 'Namespaced',
    };
    const spec = z.object({ a: z.string() });
    const refuse = (p: Json, options: Json = {}) =>
      expect(() => customResourceDefinition({ ...plan, ...p } as never, spec, options)).toThrow(CrdError);
    refuse({ group: ['scalers.example.com'] });
    refuse({ kind: ['Scaler'] });
    refuse({ version: ['v1'] });
    refuse({}, { shortNames: [['sc']] });
    refuse({}, { columns: [{ name: ['Size'], type: 'integer', jsonPath: '.spec.size' }] });
    expect(() => customResourceDefinition({ ...plan, version: 'xv1' } as never, spec)).toThrow(
      'version "xv1" must look like v1, v1alpha1 or v2beta3',
    );
  });
});

describe('structuralSchema on hand-written JSON Schema', () => {
  it('given a list of schemas, each is rewritten; given a value that is not a schema, it is returned as is', () => {
    expect(structuralSchema([{ properties: { a: { type: 'string' } } }, { items: { type: 'string' } }])).toStrictEqual([
      { type: 'object', properties: { a: { type: 'string' } } },
      { type: 'array', items: { type: 'string' } },
    ]);
    expect(structuralSchema('text')).toBe('text');
    expect(structuralSchema(null)).toBe(null);
  });

  it('given untyped nodes, they are typed by what they hold: properties or a map is an object, items an array', () => {
    expect(structuralSchema({ additionalProperties: { type: 'string' } })).toStrictEqual({
      type: 'object',
      additionalProperties: { type: 'string' },
    });
    expect(structuralSchema({ description: 'x' })).toStrictEqual({ description: 'x', [preserve]: true });
  });

  it('given an array without structural items (none, or a tuple list), its items keep anything', () => {
    expect(structuralSchema({ type: 'array' })).toStrictEqual({ type: 'array', items: { [preserve]: true } });
    expect(structuralSchema({ type: 'array', items: [{ type: 'string' }] })).toStrictEqual({
      type: 'array',
      items: { [preserve]: true },
    });
  });

  it('given a reference, with or without siblings, the node keeps anything and its description only', () => {
    expect(
      structuralSchema({ $ref: '#/definitions/a', type: 'object', properties: { a: { type: 'string' } } }),
    ).toStrictEqual({
      [preserve]: true,
    });
    expect(
      structuralSchema({ allOf: [{ $ref: '#/definitions/a' }], type: 'string', description: 'ref', minLength: 1 }),
    ).toStrictEqual({ description: 'ref', [preserve]: true });
  });

  it('given allOf members with more than patterns, only the patterns are kept', () => {
    expect(
      structuralSchema({ type: 'string', allOf: [{ pattern: '^a', minLength: 1 }, { maxLength: 3 }, 'x'] }),
    ).toStrictEqual({ type: 'string', allOf: [{ pattern: '^a' }] });
  });

  it('given a oneOf next to an anyOf, the anyOf is the union that is merged', () => {
    expect(
      structuralSchema({ anyOf: [{ type: 'string' }, { type: 'integer' }], oneOf: [{ type: 'boolean' }] }),
    ).toStrictEqual({ 'x-kubernetes-int-or-string': true });
  });
});
