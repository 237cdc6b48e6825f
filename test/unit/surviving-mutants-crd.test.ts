/**
 * What the earlier edge tests of CRD generation left open, one behaviour per test: `celRule`'s
 * refusals (their error name, the rule quoted to 80 characters), the spec schema's rewriting (record
 * key rules of formats with a set length, empty enums and non-string keys; union merging of defaults,
 * examples, null, untyped and property-less branches and three-type unions; references inside allOf,
 * allOf members that are no patterns, formats that are no strings, catch-alls of a type, untyped nodes
 * and a rewritten schema rewritten again) and `re2Pattern` at the escapes, classes, groups and braces
 * whose neighbours it must not misread. Written for the mutants of reconcilers/cel.ts, reconcilers/crd.ts
 * and reconcilers/re2-pattern.ts that survived; every value is computed inside its test and compared whole.
 */
import { z } from 'zod';
import { celRule, CelRuleError, type CelValidation } from '../../reconcilers/cel';
import { specSchema, structuralSchema } from '../../reconcilers';
import { re2Pattern } from '../../reconcilers/re2-pattern';

type Json = Record<string, any>;
const preserve = 'x-kubernetes-preserve-unknown-fields';

/** The structural node a field of the given schema gets in the spec. */
const nodeOf = (field: z.ZodType): Json => (specSchema(z.object({ f: field })).properties as Record<string, Json>).f!;

/** The error celRule throws for a validation on a schema (it must throw). */
function refusalOf(validation: CelValidation, schema: z.ZodType = z.number()): Error {
  try {
    celRule(schema, validation, () => true);
  } catch (err) {
    return err as Error;
  }
  throw new Error('celRule accepted the rule');
}

describe('surviving mutants of cel.ts', () => {
  it('given a rule that cannot be stated, the error is named CelRuleError and quotes only the rule’s first 80 characters', () => {
    const long = `self.replicas > 0 && ${'self.a == 1 && '.repeat(10)}true`;
    const quoted = JSON.stringify(long.slice(0, 80));
    expect(long.length).toBeGreaterThan(80);
    const refusals = [
      refusalOf({ rule: `${long} && self != oldSelf`, message: 'm' }),
      refusalOf({ rule: long, message: 'one\ntwo' }),
      refusalOf(
        { rule: long, message: 'm' },
        z.string().transform((s) => s.length),
      ),
    ];
    for (const err of refusals) {
      expect(err).toBeInstanceOf(CelRuleError);
      expect(err.name).toBe('CelRuleError');
    }
    expect(refusals.map((err) => err.message)).toEqual([
      `rule ${quoted}: transition rules (oldSelf) have no JS check`,
      `rule ${quoted}: the message must be one line of at most 1024 characters`,
      `rule ${quoted}: attach it before .transform()`,
    ]);
  });
});

describe('surviving mutants of crd.ts', () => {
  it('given record keys of a format with a set length, the key rule is the format’s pattern alone', () => {
    expect(nodeOf(z.record(z.nanoid({ length: 5 }), z.string()))).toStrictEqual({
      type: 'object',
      additionalProperties: { type: 'string' },
      'x-kubernetes-validations': [
        { rule: "self.all(k, k.matches('^[a-zA-Z0-9_-]{5}$'))", message: 'keys must match ^[a-zA-Z0-9_-]{5}$' },
      ],
    });
  });

  it('given record keys of an empty enum, or of literals that are not all strings, no key rule is written', () => {
    expect(nodeOf(z.record(z.enum([]), z.string()))).toStrictEqual({
      type: 'object',
      additionalProperties: { type: 'string' },
    });
    expect(nodeOf(z.record(z.literal(['a', 1]), z.string()))).toStrictEqual({
      type: 'object',
      additionalProperties: { type: 'string' },
      required: ['a', '1'],
    });
  });

  it('given a union of objects, a field alike in every branch keeps its default; a field of one branch loses it', () => {
    const k = (v: string) => z.literal(v);
    expect(
      nodeOf(
        z.union([z.object({ k: k('A'), n: z.number().default(1) }), z.object({ k: k('B'), n: z.number().default(1) })]),
      ),
    ).toStrictEqual({
      type: 'object',
      properties: { k: { type: 'string', enum: ['A', 'B'] }, n: { default: 1, type: 'number' } },
      required: ['k'],
    });
    expect(nodeOf(z.union([z.object({ k: k('A'), n: z.number().default(1) }), z.object({ k: k('B') })]))).toStrictEqual(
      {
        type: 'object',
        properties: { k: { type: 'string', enum: ['A', 'B'] }, n: { type: 'number' } },
        required: ['k'],
      },
    );
  });

  it('given merged union branches, an example is kept whole: only the schema’s own defaults are dropped', () => {
    const a = {
      type: 'object',
      properties: { x: { type: 'string', default: 'd' } },
      example: { default: 'kept', x: 'e' },
    };
    expect(
      structuralSchema({
        anyOf: [
          { type: 'object', properties: { a } },
          { type: 'object', properties: { b: { type: 'string' } } },
        ],
      }),
    ).toStrictEqual({
      type: 'object',
      properties: {
        a: { type: 'object', properties: { x: { type: 'string' } }, example: { default: 'kept', x: 'e' } },
        b: { type: 'string' },
      },
    });
  });

  it('given a union with a branch of type null, the merged node is nullable', () => {
    expect(structuralSchema({ anyOf: [{ type: 'string' }, { type: 'null' }] })).toStrictEqual({
      type: 'string',
      nullable: true,
    });
  });

  it('given a union of untyped branches, the node keeps anything with the union’s description, not a branch’s', () => {
    expect(
      structuralSchema({ description: 'either', anyOf: [{ description: 'branch' }, { description: 'branch' }] }),
    ).toStrictEqual({ description: 'either', [preserve]: true });
  });

  it('given a union with an object branch that has no properties, the node is an object that keeps any field', () => {
    expect(
      structuralSchema({ anyOf: [{ type: 'object' }, { type: 'object', properties: { a: { type: 'string' } } }] }),
    ).toStrictEqual({ type: 'object', [preserve]: true });
  });

  it('given a union of integer, string and boolean, the node keeps anything (it is no int-or-string)', () => {
    expect(nodeOf(z.union([z.number().int(), z.string(), z.boolean()]))).toStrictEqual({ [preserve]: true });
  });

  it('given an allOf with a reference among other members, the node keeps anything; an empty allOf is dropped', () => {
    expect(
      structuralSchema({ type: 'string', allOf: [{ pattern: '^a' }, { $ref: '#/definitions/b' }], description: 'd' }),
    ).toStrictEqual({ description: 'd', [preserve]: true });
    expect(structuralSchema({ type: 'string', allOf: [] })).toStrictEqual({ type: 'string' });
  });

  it('given allOf members that are null or hold no pattern, no allOf is written', () => {
    expect(structuralSchema({ type: 'string', allOf: [null, { minLength: 1 }] })).toStrictEqual({ type: 'string' });
  });

  it('given a format that is not a string, it is dropped even when it reads as a known format', () => {
    expect(structuralSchema({ type: 'string', format: ['email'] })).toStrictEqual({ type: 'string' });
  });

  it('given its own output again (int-or-string, a nullable node that keeps anything), structuralSchema returns it unchanged', () => {
    const intOrString = nodeOf(z.union([z.number().int(), z.string()]).describe('a port'));
    expect(intOrString).toStrictEqual({ description: 'a port', 'x-kubernetes-int-or-string': true });
    expect(structuralSchema(intOrString)).toStrictEqual(intOrString);
    const anything = nodeOf(z.union([z.string(), z.boolean()]).nullable().describe('free'));
    expect(anything).toStrictEqual({ description: 'free', [preserve]: true, nullable: true });
    expect(structuralSchema(anything)).toStrictEqual(anything);
  });

  it('given an untyped node whose description is not a string, it keeps anything and drops the description', () => {
    expect(structuralSchema({ description: 42 })).toStrictEqual({ [preserve]: true });
  });

  it('given untyped nodes with properties or items, they are typed object and array', () => {
    expect(structuralSchema({ properties: { a: { type: 'string' } } })).toStrictEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
    });
    expect(structuralSchema({ items: { type: 'string' } })).toStrictEqual({ type: 'array', items: { type: 'string' } });
  });

  it('given an object with a typed catch-all, it keeps its fields and unknown ones, with no additionalProperties', () => {
    expect(nodeOf(z.object({ a: z.string() }).catchall(z.string()))).toStrictEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
      [preserve]: true,
    });
  });
});

describe('surviving mutants of re2-pattern.ts', () => {
  it.each([
    // A range between two plain escapes is a range, not a literal dash.
    [/^[\t-\r]$/, '^[\\t-\\r]$'],
    // Only a dash right before a class escape is a literal dash.
    [/^[a\d]$/, '^[a\\d]$'],
    [/^[a-z\d]$/, '^[a-z\\d]$'],
    // `=`, `!` and `<` are lookaround or a name only right after `(?`.
    [/^(a=b)$/, '^(a=b)$'],
    [/^ab?=c$/, '^ab?=c$'],
    [/^(?:a=b)(?:c!d)$/, '^(?:a=b)(?:c!d)$'],
    // A brace that is no repeat count is a literal; the count check does not read ahead to escaped text.
    [new RegExp('^a{b}\\{1001}$'), '^a{b}\\{1001}$'],
  ])('given %s, RE2 gets %s', (re, expected) => {
    expect(re2Pattern(re)).toBe(expected);
  });

  it.each([
    ['the v flag, even on a pattern without set notation', new RegExp('^a$', 'v')],
    // An escape that cannot be read at its place is refused, whatever well-formed escape follows it.
    ['\\x without hex digits, before a \\x escape', new RegExp('^\\xZx41$')],
    ['\\u without hex digits, before a \\u escape', new RegExp('^\\uZu0041$')],
    ['\\u{…} with seven digits, before a short \\u{…}', new RegExp('^\\u{0000041}\\u{42}$', 'u')],
    ['a script property, before a general category', new RegExp('^\\p{Script=Greek}\\p{Lu}$', 'u')],
  ])('given %s, it refuses', (_what, re) => {
    expect(re2Pattern(re)).toBeUndefined();
  });
});

describe('surviving mutants of crd.ts: a union kept as is', () => {
  it('given a union with null that falls back to keeping anything, the field stays nullable, so null is not pruned away', () => {
    // string | number | null: no common type, kept as is; the API server prunes a null from a node that
    // is not nullable (and a required field is then missing), though zod accepts it.
    expect(nodeOf(z.union([z.string(), z.number(), z.null()]))).toStrictEqual({
      'x-kubernetes-preserve-unknown-fields': true,
      nullable: true,
    });
    expect(nodeOf(z.union([z.any(), z.null()]))).toMatchObject({ nullable: true });
    expect(nodeOf(z.union([z.string(), z.number()]))).toStrictEqual({ 'x-kubernetes-preserve-unknown-fields': true });
  });
});
