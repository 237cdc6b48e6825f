/**
 * Field descriptions in generated CRDs: what a schema says with zod's `.describe()` or
 * `.meta({ description })` becomes the `description` of its node in `openAPIV3Schema`, which is what
 * `kubectl explain <kind>.spec.<field>` prints; every spec field of the built-in kinds and of the
 * scaffold's Tenant has one. (test/integration/crd-descriptions.test.ts reads them back from a real
 * kube-apiserver.)
 */
import { z } from 'zod';
import { builtinOperator } from '../../builtin';
import { celRule, operatorCrds, specSchema, statusSchema } from '../../reconcilers';
import templateOperator from '../../templates/tenant-operator/src/operator';

type Json = Record<string, any>;

/** The path of every property under a schema node (through array items) that has no description. */
function undescribed(node: Json, path: string): string[] {
  const out: string[] = [];
  for (const [name, child] of Object.entries((node.properties ?? {}) as Record<string, Json>)) {
    const at = `${path}.${name}`;
    if (typeof child.description !== 'string' || child.description.trim() === '') out.push(at);
    out.push(...undescribed(child, at));
  }
  if (node.items) out.push(...undescribed(node.items as Json, `${path}[]`));
  if (node.additionalProperties) out.push(...undescribed(node.additionalProperties as Json, `${path}{}`));
  return out;
}

const versionSchema = (crd: Json): Json => crd.spec.versions[0].schema.openAPIV3Schema as Json;

describe('descriptions in generated CRDs', () => {
  it('given .describe() and .meta({ description }) on fields, through defaults, optionals, nullables, unions, records and CEL rules, each becomes its node’s description', () => {
    const spec: Json = specSchema(
      z.object({
        plain: z.string().describe('a plain field'),
        meta: z.number().int().meta({ description: 'described with meta' }),
        defaulted: z.string().default('x').describe('a defaulted field'),
        describedInside: z.string().describe('described inside its default').default('x'),
        optional: z.boolean().optional().describe('an optional field'),
        nullable: z.string().nullable().describe('a nullable field'),
        union: z.union([z.string(), z.number().int()]).describe('a number or a string'),
        map: z.record(z.string(), z.string()).describe('a map'),
        ruled: celRule(z.string(), { rule: 'self != ""', message: 'not empty' }, (s) => s !== '').describe('ruled'),
        nested: z
          .object({ inner: z.string().describe('an inner field') })
          .default({ inner: 'a' })
          .describe('a nested object'),
        list: z.array(z.object({ item: z.string().describe('a field of each item') })).describe('a list'),
        bare: z.string(),
      }),
    );
    const descriptions = Object.fromEntries(
      Object.entries(spec.properties as Record<string, Json>).map(([k, v]) => [k, v.description]),
    );
    expect(descriptions).toEqual({
      plain: 'a plain field',
      meta: 'described with meta',
      defaulted: 'a defaulted field',
      describedInside: 'described inside its default',
      optional: 'an optional field',
      nullable: 'a nullable field',
      union: 'a number or a string',
      map: 'a map',
      ruled: 'ruled',
      nested: 'a nested object',
      list: 'a list',
      bare: undefined,
    });
    expect(spec.properties.nested.properties.inner.description).toBe('an inner field');
    expect(spec.properties.list.items.properties.item.description).toBe('a field of each item');
    expect(spec.properties.ruled['x-kubernetes-validations']).toEqual([{ rule: 'self != ""', message: 'not empty' }]);
    expect(undescribed(spec, 'spec')).toEqual(['spec.bare']);
  });

  it.each([
    ['the built-in operator', builtinOperator],
    ['the scaffold’s operator', templateOperator],
  ])('given %s, every field of every kind’s spec has a description', (_what, operator) => {
    const crds = Object.values(operatorCrds(operator)) as Json[];
    expect(crds.length).toBeGreaterThan(0);
    for (const crd of crds) {
      const spec = versionSchema(crd).properties.spec as Json;
      expect({ kind: crd.spec.names.kind, undescribed: undescribed(spec, 'spec') }).toEqual({
        kind: crd.spec.names.kind,
        undescribed: [],
      });
    }
  });

  it('given the status homeostat writes, its own fields are described', () => {
    expect(undescribed(statusSchema, 'status')).toEqual([]);
  });
});
