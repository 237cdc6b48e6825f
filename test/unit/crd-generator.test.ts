/**
 * The CRD generator as kube-apiserver will read it: CEL rules stated with `celRule` land at their node
 * (and the same rule is enforced by the zod schema), patterns are rewritten for RE2 or left out,
 * unions and catch-alls become structural, names, scope and printer columns are checked. That
 * kube-apiserver accepts what comes out is tested on the real server (test/integration/crd-validation).
 */
import { z } from 'zod';
import { appSpec, postgresDatabaseSpec } from '../../builtin';
import {
  celRule,
  CelRuleError,
  celValidationsOf,
  CrdError,
  customResourceDefinition,
  specSchema,
  structuralSchema,
} from '../../reconcilers';
import { re2Pattern } from '../../reconcilers/re2-pattern';

type Json = Record<string, any>;

const plan = {
  group: 'scalers.example.com',
  version: 'v1',
  kind: 'Scaler',
  plural: 'scalers',
  scope: 'Namespaced' as const,
};

const bounds = celRule(
  z.object({ minReplicas: z.number().int().min(0), maxReplicas: z.number().int().max(100) }),
  {
    rule: 'self.minReplicas <= self.maxReplicas',
    message: 'minReplicas must not exceed maxReplicas',
    fieldPath: '.minReplicas',
  },
  (v) => v.minReplicas <= v.maxReplicas,
);

/** Every node of a schema with the path to it. */
function* nodes(node: unknown, path = '$'): Generator<[string, Json]> {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return;
  const n = node as Json;
  yield [path, n];
  for (const [k, v] of Object.entries((n.properties ?? {}) as Json)) yield* nodes(v, `${path}.${k}`);
  if (n.items) yield* nodes(n.items, `${path}[]`);
  if (typeof n.additionalProperties === 'object') yield* nodes(n.additionalProperties, `${path}{}`);
}

/** The rules of Kubernetes' structural schemas that zod's JSON Schema can break. */
function structuralViolations(schema: unknown): string[] {
  const out: string[] = [];
  for (const [path, n] of nodes(schema)) {
    if (n.type === undefined && !n['x-kubernetes-preserve-unknown-fields'] && !n['x-kubernetes-int-or-string']) {
      out.push(`${path}: untyped`);
    }
    for (const key of ['anyOf', 'oneOf', 'not', '$ref', 'definitions', 'propertyNames', 'patternProperties', 'const']) {
      if (key in n) out.push(`${path}: ${key}`);
    }
    if (n.uniqueItems === true) out.push(`${path}: uniqueItems`);
    if (n.properties && n.additionalProperties !== undefined) out.push(`${path}: properties and additionalProperties`);
    if (n.additionalProperties === false || n.additionalProperties === true)
      out.push(`${path}: boolean additionalProperties`);
    for (const member of (n.allOf ?? []) as Json[]) {
      for (const key of Object.keys(member)) if (key !== 'pattern') out.push(`${path}: allOf with ${key}`);
    }
  }
  return out;
}

describe('celRule', () => {
  it('given a cross-field rule on an object, the CRD carries it at that object and zod refuses the same values with the same message and field', () => {
    const spec: Json = specSchema(z.object({ name: z.string(), scaling: bounds }));
    expect(spec['x-kubernetes-validations']).toBeUndefined();
    expect(spec.properties).toMatchObject({
      scaling: {
        type: 'object',
        'x-kubernetes-validations': [
          {
            rule: 'self.minReplicas <= self.maxReplicas',
            message: 'minReplicas must not exceed maxReplicas',
            fieldPath: '.minReplicas',
          },
        ],
      },
    });
    const result = bounds.safeParse({ minReplicas: 5, maxReplicas: 2 });
    expect(result.success).toBe(false);
    expect(result.error?.issues).toEqual([
      expect.objectContaining({ message: 'minReplicas must not exceed maxReplicas', path: ['minReplicas'] }),
    ]);
    expect(bounds.safeParse({ minReplicas: 2, maxReplicas: 2 }).success).toBe(true);
  });

  it('given rules stacked and the schema refined, described, made optional or defaulted afterwards, every rule stays at its node once', () => {
    const name = celRule(
      celRule(
        z.string().max(63),
        { rule: "!self.startsWith('pg_')", message: 'no pg_ prefix' },
        (s) => !s.startsWith('pg_'),
      ),
      { rule: "self != 'postgres'", message: 'not postgres' },
      (s) => s !== 'postgres',
    );
    const spec: Json = specSchema(
      z.object({
        a: name.min(1).describe('a name'),
        b: name.optional(),
        c: name.default('app'),
        list: z.array(name).max(10),
        plain: z.string(),
      }),
    );
    const rules = ['no pg_ prefix', 'not postgres'];
    for (const node of [spec.properties.a, spec.properties.b, spec.properties.c, spec.properties.list.items]) {
      expect((node['x-kubernetes-validations'] as { message: string }[]).map((r) => r.message)).toEqual(rules);
    }
    expect(spec.properties.a).toMatchObject({ minLength: 1, maxLength: 63, description: 'a name' });
    expect(spec.properties.list['x-kubernetes-validations']).toBeUndefined();
    expect(spec.properties.plain['x-kubernetes-validations']).toBeUndefined();
    expect(celValidationsOf(name.min(1))).toHaveLength(2);
    expect(celValidationsOf(name.optional())).toHaveLength(0); // the wrapper: the rules are on its inner node
    // An absent optional value is not checked, as in CEL (defaults are checked by kube-apiserver when the CRD is created).
    expect(name.optional().safeParse(undefined).success).toBe(true);
    expect(name.optional().safeParse('pg_x').success).toBe(false);
  });

  it('given a rule at the root of the spec, the spec node carries it (kube-apiserver reports it on spec)', () => {
    const spec: Json = specSchema(bounds);
    expect(spec['x-kubernetes-validations']).toHaveLength(1);
    expect(spec.required).toEqual(['minReplicas', 'maxReplicas']);
  });

  it.each([
    ['an empty rule', { rule: '  ', message: 'm' }, /must not be empty/],
    ['a rule of 1 MiB', { rule: `self == '${'x'.repeat(1 << 20)}'`, message: 'm' }, /at most 4096 characters/],
    ['no message', { rule: 'true', message: '' }, /a message is required/],
    ['a message of two lines', { rule: 'true', message: 'one\ntwo' }, /one line/],
    ['a message of 100 KiB', { rule: 'true', message: 'm'.repeat(100 * 1024) }, /at most 1024 characters/],
    ['a transition rule', { rule: 'self >= oldSelf', message: 'm' }, /transition rules/],
    ['a field path with an index', { rule: 'true', message: 'm', fieldPath: '.items[0]' }, /fieldPath/],
    ['a field path of 1 MiB', { rule: 'true', message: 'm', fieldPath: `.${'a'.repeat(1 << 20)}!` }, /fieldPath/],
  ])('given %s, celRule refuses it when the schema is defined', (_what, validation, message) => {
    expect(() => celRule(z.number(), validation, () => true)).toThrow(CelRuleError);
    expect(() => celRule(z.number(), validation, () => true)).toThrow(message);
  });

  it('given a transforming schema, celRule refuses it (CEL would see the stored value, the check the transformed one)', () => {
    expect(() =>
      celRule(
        z.string().transform((s) => s.length),
        { rule: 'size(self) < 3', message: 'short' },
        (n) => n < 3,
      ),
    ).toThrow(/before .transform/);
  });

  it("given a field path with a map key, zod's issue names the same field", () => {
    const schema = celRule(
      z.object({ ports: z.record(z.string(), z.number()) }),
      { rule: "has(self.ports['http-alt'])", message: 'an http-alt port is required', fieldPath: ".ports['http-alt']" },
      (v) => 'http-alt' in v.ports,
    );
    expect(schema.safeParse({ ports: {} }).error?.issues[0]?.path).toEqual(['ports', 'http-alt']);
  });
});

describe('the built-in operator’s rules', () => {
  it('given PostgresDatabase, it names a PostgresServer and never an admin Secret; extensions are unique, in the CRD and in zod', () => {
    const spec: Json = specSchema(postgresDatabaseSpec);
    expect(Object.keys(spec.properties)).not.toContain('serverSecretRef');
    expect(spec.properties.serverRef.required).toEqual(['name']);
    expect(spec.properties.extensions['x-kubernetes-validations']).toEqual([
      expect.objectContaining({ message: 'extensions must not be listed twice' }),
    ]);
    const base = { serverRef: { name: 'ranch-postgres' }, databaseName: 'shop', ownerRole: 'shop' };
    expect(postgresDatabaseSpec.safeParse(base).success).toBe(true);
    expect(postgresDatabaseSpec.safeParse({ ...base, connectionSecretName: 'shop-conn' }).success).toBe(true);
    expect(
      postgresDatabaseSpec.safeParse({ databaseName: 'shop', ownerRole: 'shop', serverSecretRef: { name: 'x' } })
        .success,
    ).toBe(false);
    expect(postgresDatabaseSpec.safeParse({ ...base, serverRef: { name: 'Not_A_Name' } }).success).toBe(false);
    expect(postgresDatabaseSpec.safeParse({ ...base, extensions: ['citext', 'citext'] }).success).toBe(false);
  });

  it('given App, env names are unique and config keys follow ConfigMap key rules, in the CRD and in zod', () => {
    const spec: Json = specSchema(appSpec);
    expect(spec.properties.env['x-kubernetes-validations']).toEqual([
      { rule: 'self.all(e, self.exists_one(f, f.name == e.name))', message: 'env names must be unique' },
    ]);
    expect(spec.properties.env.default).toEqual([]);
    expect(spec.properties.config['x-kubernetes-validations']).toEqual([
      { rule: "self.all(k, k.matches('^[-._a-zA-Z0-9]+$'))", message: 'keys must match ^[-._a-zA-Z0-9]+$' },
    ]);
    const env = [{ name: 'A' }, { name: 'A' }];
    expect(appSpec.safeParse({ image: 'x', env }).error?.issues[0]?.message).toBe('env names must be unique');
    expect(appSpec.safeParse({ image: 'x', env: [{ name: 'A' }, { name: 'B' }] }).success).toBe(true);
  });
});

describe('what zod states and the CRD keeps', () => {
  const spec: Json = specSchema(
    z.object({
      email: z.email(),
      id: z.uuid(),
      site: z.url(),
      ip: z.ipv4(),
      net: z.cidrv4(),
      at: z.iso.datetime(),
      day: z.iso.date(),
      period: z.iso.duration(),
      blob: z.base64(),
      shout: z.string().regex(/^[a-z]+$/i),
      both: z.string().regex(/^a/).regex(/b$/),
      look: z.string().regex(/^(?!admin$).+$/),
      uni: z.string().regex(/^\u00e9+$/),
      level: z.enum(['low', 'high']).default('low'),
      ratio: z.number().gt(0).lt(1),
      count: z.int32().nullable(),
      size: z.union([z.int(), z.string()]),
      target: z.discriminatedUnion('type', [
        z.object({ type: z.literal('url'), url: z.string().default('http://x') }),
        z.object({ type: z.literal('service'), service: z.string(), port: z.number() }),
      ]),
      mixed: z.union([z.string(), z.boolean()]),
      tuple: z.tuple([z.string(), z.number()]),
      anything: z.unknown(),
      json: z.json().optional(),
      labels: z.record(
        z
          .string()
          .max(63)
          .regex(/^[a-z]+$/),
        z.string(),
      ),
      slots: z.record(z.enum(['a', 'b']), z.number()),
      loose: z.looseObject({ a: z.string() }),
      extra: z.object({ a: z.string() }).catchall(z.number()),
      strict: z.strictObject({ a: z.string() }),
      unique: z.array(z.string()).meta({ uniqueItems: true }),
    }),
  );
  const p = spec.properties as Json;

  it('given every kind of zod schema a spec might hold, the result is a structural schema', () => {
    expect(structuralViolations(spec)).toEqual([]);
  });

  it('given string formats, kube-apiserver gets the formats it checks as zod does, under its names, and no others', () => {
    expect(p.email.format).toBe('email');
    expect(p.id.format).toBe('uuid');
    expect(p.site.format).toBe('uri');
    expect(p.ip.format).toBe('ipv4');
    expect(p.net.format).toBe('cidr');
    expect(p.at.format).toBe('date-time');
    expect(p.day.format).toBe('date');
    expect(p.blob.format).toBe('byte');
    // ISO 8601 durations are not Go durations, and zod's pattern for them needs lookahead.
    expect(p.period).toEqual({ type: 'string' });
    expect(JSON.stringify(spec)).not.toMatch(/contentEncoding|"format":"(duration|base64|cidrv4)"/);
  });

  it('given regex flags, several patterns and patterns RE2 cannot read, flags become inline, patterns allOf, the rest is left to zod', () => {
    expect(p.shout.pattern).toBe('(?i)^[a-z]+$');
    expect(p.both).toEqual({ type: 'string', allOf: [{ pattern: '^a' }, { pattern: 'b$' }] });
    expect(p.look).toEqual({ type: 'string' });
    expect(p.uni.pattern).toBe('^\\x{00e9}+$');
  });

  it('given enums, bounds, nullables and defaults, they are kept', () => {
    expect(p.level).toEqual({ type: 'string', enum: ['low', 'high'], default: 'low' });
    expect(p.ratio).toMatchObject({ minimum: 0, exclusiveMinimum: true, maximum: 1, exclusiveMaximum: true });
    expect(p.count).toMatchObject({ type: 'integer', nullable: true, minimum: -2147483648 });
  });

  it('given unions, objects merge (required where every branch requires), int|string is int-or-string, others are kept as they are', () => {
    expect(p.size).toEqual({ 'x-kubernetes-int-or-string': true });
    expect(p.target).toEqual({
      type: 'object',
      properties: {
        type: { type: 'string', enum: ['url', 'service'] },
        url: { type: 'string' }, // no default: it would be added to objects of the other branch
        service: { type: 'string' },
        port: { type: 'number' },
      },
      required: ['type'],
    });
    expect(p.mixed).toEqual({ 'x-kubernetes-preserve-unknown-fields': true });
    expect(p.tuple.items).toEqual({ 'x-kubernetes-preserve-unknown-fields': true });
    expect(p.anything).toEqual({ 'x-kubernetes-preserve-unknown-fields': true });
    expect(p.json).toEqual({ 'x-kubernetes-preserve-unknown-fields': true });
  });

  it('given records, the map keeps its value type and its key rules become one CEL rule', () => {
    expect(p.labels).toEqual({
      type: 'object',
      additionalProperties: { type: 'string' },
      'x-kubernetes-validations': [
        {
          rule: "self.all(k, k.matches('^[a-z]+$') && size(k) <= 63)",
          message: 'keys must match ^[a-z]+$ and be at most 63 characters',
        },
      ],
    });
    expect(p.slots['x-kubernetes-validations']).toEqual([
      { rule: "self.all(k, k in ['a', 'b'])", message: 'keys must be one of a, b' },
    ]);
  });

  it('given catch-alls and strict objects, known fields stay typed and extra fields are kept (loose) or pruned (strict)', () => {
    expect(p.loose).toMatchObject({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
    expect(p.loose.properties.a).toEqual({ type: 'string' });
    expect(p.extra).toMatchObject({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
    expect(p.strict.additionalProperties).toBeUndefined();
    expect(p.unique.uniqueItems).toBeUndefined();
  });

  it('given a recursive schema, the CRD keeps the value as it is instead of a $ref', () => {
    interface Tree {
      name: string;
      children: Tree[];
    }
    const tree: z.ZodType<Tree> = z.object({ name: z.string(), children: z.array(z.lazy(() => tree)) });
    const out = specSchema(z.object({ root: tree }));
    expect(structuralViolations(out)).toEqual([]);
    expect(JSON.stringify(out)).not.toContain('$ref');
  });

  it('given a spec that is not an object or cannot be written as JSON, it names the problem', () => {
    expect(() => specSchema(z.string() as unknown as z.ZodType)).toThrow(/must be an object schema/);
    expect(() => specSchema(z.object({ when: z.date() }))).toThrow(CrdError);
  });

  it('given structuralSchema on its own, it keeps typing maps (so the API server does not prune them)', () => {
    expect(
      structuralSchema(z.toJSONSchema(z.object({ m: z.record(z.string(), z.string()) }), { target: 'openapi-3.0' })),
    ).toMatchObject({ properties: { m: { type: 'object', additionalProperties: { type: 'string' } } } });
  });
});

describe('re2Pattern', () => {
  it.each([
    [/^[a-z0-9_-]+$/, '^[a-z0-9_-]+$'],
    [/^a.b$/, '^a[^\\n\\r\\x{2028}\\x{2029}]b$'],
    [/^a.b$/s, '(?s)^a.b$'],
    [
      /^\s*$/,
      `^[\\t\\n\\v\\f\\r \\x{00a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}]*$`,
    ],
    [/^(?<major>\d+)\.\d+$/, '^(?P<major>\\d+)\\.\\d+$'],
    [/^\p{Lu}+$/u, '^\\p{Lu}+$'],
    [/^a\/b$/, '^a/b$'],
    [/^\x41{2,1000}$/, '^\\x{41}{2,1000}$'],
  ])('given %s, RE2 gets %s', (re, expected) => {
    expect(re2Pattern(re)).toBe(expected);
  });

  it.each([
    ['lookahead', /^(?=a)a$/],
    ['negative lookbehind', /(?<!a)b/],
    ['a backreference', /^(a)\1$/],
    ['a named backreference', /^(?<x>a)\k<x>$/],
    ['a repeat count above 1000', /^a{1001}$/],
    ['\\S inside a class', /^[\Sa]$/],
    ['a script property', /^\p{Script=Greek}$/u],
    ['[^]', /^[^]$/],
    ['a surrogate half', /^\ud83d$/],
    ['set notation', new RegExp('^[\\p{L}--[a-z]]$', 'v')],
    ['a control escape', /^\cJ$/],
  ])('given %s, it refuses (the pattern stays out of the CRD)', (_what, re) => {
    expect(re2Pattern(re)).toBeUndefined();
  });
});

describe('names, scope and printer columns', () => {
  it('given a cluster-scoped plan, the CRD is cluster-scoped with the usual names, columns and category', () => {
    const crd: Json = customResourceDefinition({ ...plan, scope: 'Cluster', kind: 'Zone', plural: 'zones' }, bounds, {
      shortNames: ['zn'],
      categories: ['platform'],
      columns: [{ name: 'Max', type: 'integer', jsonPath: '.spec.maxReplicas', priority: 1 }],
    });
    expect(crd.metadata.name).toBe('zones.scalers.example.com');
    expect(crd.spec.scope).toBe('Cluster');
    expect(crd.spec.names).toEqual({
      plural: 'zones',
      singular: 'zone',
      kind: 'Zone',
      listKind: 'ZoneList',
      shortNames: ['zn'],
      categories: ['platform'],
    });
    expect(crd.spec.versions[0].additionalPrinterColumns.map((c: { name: string }) => c.name)).toEqual([
      'Phase',
      'Ready',
      'Max',
      'Age',
    ]);
  });

  it('given hostile names and columns, generation fails listing every problem', () => {
    const run = () =>
      customResourceDefinition(
        { ...plan, group: 'nodot', plural: 'Scalers', kind: 'scaler', version: 'one', scope: 'Global' as 'Cluster' },
        bounds,
        {
          shortNames: ['SC', 'x'.repeat(100_000)],
          categories: ['all of them'],
          columns: [
            { name: 'Phase', type: 'string', jsonPath: '.spec.x' },
            { name: 'Big', type: 'float' as 'number', jsonPath: 'spec.x', priority: -1 },
          ],
        },
      );
    expect(run).toThrow(CrdError);
    const message = (() => {
      try {
        run();
        return '';
      } catch (err) {
        return (err as Error).message;
      }
    })();
    for (const problem of [
      'group "nodot"',
      'plural "Scalers"',
      'kind "scaler"',
      'version "one"',
      'scope "Global"',
      'short name "SC"',
      'category "all of them"',
      'column Phase is given twice',
      'type "float"',
      'jsonPath "spec.x"',
      'priority must be',
    ]) {
      expect(message).toContain(problem);
    }
    expect(message.length).toBeLessThan(2000); // a 100 KB name is cut, not echoed
  });
});
