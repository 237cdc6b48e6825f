/**
 * CRD generation at the edges of what kube-apiserver accepts: every name and column limit at its
 * boundary (accepted at the limit, refused one past it, with the message a user reads), short names
 * that repeat the plural or the singular, the CRD's fixed parts, and which reconcilers get a CRD.
 * Written for mutants of reconcilers/crd.ts that survived (issue 17).
 */
import { z } from 'zod';
import { CrdError, customResourceDefinition, operatorCrds, statusSchema } from '../../reconcilers';
import type { Operator } from '../../core/operator';

type Json = Record<string, any>;
const plan = {
  group: 'scalers.example.com',
  version: 'v1',
  kind: 'Scaler',
  plural: 'scalers',
  scope: 'Namespaced' as const,
};
const spec = z.object({ size: z.number().int() });

/** The problems generation reports for a plan and options ([] when it succeeds). */
function problems(p: Partial<typeof plan> | Record<string, unknown>, options: Json = {}): string[] {
  try {
    customResourceDefinition({ ...plan, ...p }, spec, options);
    return [];
  } catch (err) {
    if (!(err instanceof CrdError)) throw err;
    return err.message.replace(/^[^:]*: /, '').split('; ');
  }
}

describe('CRD generation at its edges', () => {
  it('given names at their length limits, they pass; one character more, the message names the rule', () => {
    const label63 = 'a'.repeat(63);
    const group253 = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    expect(group253).toHaveLength(253);
    expect(problems({ group: group253, plural: 'x' })).toEqual([
      'the CRD name x.' + group253 + ' is longer than 253 characters',
    ]);
    expect(
      problems({ group: `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(59)}`, plural: 'x' }),
    ).toEqual([]);
    expect(problems({ group: `${group253}e` })[0]).toBe(
      `group ${JSON.stringify(`${group253}e`).slice(0, 80)} must be a DNS subdomain with at least one dot (example.com)`,
    );
    expect(problems({ plural: label63 })).toEqual([]);
    expect(problems({ plural: `${label63}a` })).toEqual([
      `plural ${JSON.stringify(`${label63}a`).slice(0, 80)} must be a lowercase DNS label`,
    ]);
    expect(problems({ kind: `K${'a'.repeat(62)}` })).toEqual([]);
    expect(problems({ kind: `K${'a'.repeat(63)}` })).toEqual([
      `kind ${JSON.stringify(`K${'a'.repeat(63)}`).slice(0, 80)} must be UpperCamelCase letters and digits, at most 63`,
    ]);
  });

  it('given names of the wrong shape or type, each is refused with its own message', () => {
    expect(problems({ group: 'Example.com' })).toEqual([
      'group "Example.com" must be a DNS subdomain with at least one dot (example.com)',
    ]);
    expect(problems({ group: 7 })).toEqual(['group 7 must be a DNS subdomain with at least one dot (example.com)']);
    expect(problems({ plural: 'my_things' })).toEqual(['plural "my_things" must be a lowercase DNS label']);
    expect(problems({ plural: undefined })).toEqual(['plural undefined must be a lowercase DNS label']);
    expect(problems({ kind: 'Has-Dash' })).toEqual([
      'kind "Has-Dash" must be UpperCamelCase letters and digits, at most 63',
    ]);
    expect(problems({ kind: 9 })).toEqual(['kind 9 must be UpperCamelCase letters and digits, at most 63']);
    for (const version of ['v1', 'v2', 'v1alpha1', 'v10beta20']) expect(problems({ version })).toEqual([]);
    for (const version of ['1', 'v1gamma1', 'v1alpha', 'v1 ', 'V1']) {
      expect(problems({ version })).toEqual([
        `version ${JSON.stringify(version)} must look like v1, v1alpha1 or v2beta3`,
      ]);
    }
    expect(problems({ version: 1 })).toEqual(['version 1 must look like v1, v1alpha1 or v2beta3']);
    expect(problems({ scope: 'Cluster' })).toEqual([]);
    expect(problems({ scope: 'namespaced' })).toEqual(['scope "namespaced" must be Namespaced or Cluster']);
  });

  it('given short names that repeat one another, the plural or the singular, each repeat is named', () => {
    expect(problems({}, { shortNames: ['sc', 'scl'] })).toEqual([]);
    expect(problems({}, { shortNames: ['sc', 'sc'] })).toEqual([
      'short name sc is given twice or repeats the plural or singular',
    ]);
    expect(problems({}, { shortNames: ['scalers'] })).toEqual([
      'short name scalers is given twice or repeats the plural or singular',
    ]);
    expect(problems({}, { shortNames: ['scaler'] })).toEqual([
      'short name scaler is given twice or repeats the plural or singular',
    ]);
    expect(problems({}, { shortNames: ['a'.repeat(64)], categories: ['a'.repeat(63), 7] })).toEqual([
      `short name ${JSON.stringify('a'.repeat(64)).slice(0, 80)} must be a lowercase DNS label`,
      'category 7 must be a lowercase DNS label',
    ]);
    // A category may repeat a short name or the plural: they are different lists.
    expect(problems({}, { shortNames: ['sc'], categories: ['sc', 'scalers', 'scalers'] })).toEqual([]);
  });

  it('given printer columns at their limits, they pass; past them, each problem names the column', () => {
    const ok = { name: 'c'.repeat(63), type: 'integer', jsonPath: `.${'p'.repeat(1023)}`, priority: 0 };
    expect(problems({}, { columns: [ok] })).toEqual([]);
    for (const type of ['integer', 'number', 'string', 'boolean', 'date']) {
      expect(problems({}, { columns: [{ ...ok, type }] })).toEqual([]);
    }
    expect(problems({}, { columns: [{ ...ok, name: '' }] })).toEqual(['column name "" must be 1 to 63 characters']);
    expect(problems({}, { columns: [{ ...ok, name: 'c'.repeat(64) }] })).toEqual([
      `column name ${JSON.stringify('c'.repeat(64)).slice(0, 80)} must be 1 to 63 characters`,
    ]);
    expect(
      problems(
        {},
        {
          columns: [
            { ...ok, name: 'Size' },
            { ...ok, name: 'Size' },
          ],
        },
      ),
    ).toEqual(['column Size is given twice (Phase, Ready and Age are always there)']);
    expect(problems({}, { columns: [{ ...ok, name: 'Age' }] })).toEqual([
      'column Age is given twice (Phase, Ready and Age are always there)',
    ]);
    expect(problems({}, { columns: [{ ...ok, name: 'Size', type: 'object' }] })).toEqual([
      'column "Size": type "object" must be one of integer, number, string, boolean, date',
    ]);
    expect(problems({}, { columns: [{ ...ok, name: 'Size', jsonPath: `.${'p'.repeat(1024)}` }] })).toEqual([
      `column "Size": jsonPath ${JSON.stringify(`.${'p'.repeat(1024)}`).slice(0, 80)} must start with . (.spec.image)`,
    ]);
    expect(problems({}, { columns: [{ ...ok, name: 'Size', jsonPath: 7 }] })).toEqual([
      'column "Size": jsonPath 7 must start with . (.spec.image)',
    ]);
    for (const priority of [-1, 1.5]) {
      expect(problems({}, { columns: [{ ...ok, name: 'Size', priority }] })).toEqual([
        'column "Size": priority must be a non-negative integer',
      ]);
    }
  });

  it('given several problems, the error names the kind once and lists them all', () => {
    expect(() => customResourceDefinition({ ...plan, plural: 'X', version: 'x' }, spec)).toThrow(
      new CrdError(
        'Scaler: plural "X" must be a lowercase DNS label; version "x" must look like v1, v1alpha1 or v2beta3',
      ),
    );
    let error: unknown;
    try {
      customResourceDefinition(plan, z.string());
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(CrdError);
    expect((error as Error).message).toBe('Scaler: the spec schema must be an object schema (z.object), not "string"');
    expect((error as Error).cause).toBeInstanceOf(CrdError);
  });

  it('given a plan, the CRD has the fixed parts every homeostat CRD has', () => {
    const crd: Json = customResourceDefinition(plan, spec);
    expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(crd.kind).toBe('CustomResourceDefinition');
    expect(crd.metadata).toEqual({
      name: 'scalers.scalers.example.com',
      labels: { 'app.kubernetes.io/part-of': 'homeostat' },
    });
    expect(crd.spec.names).toEqual({
      plural: 'scalers',
      singular: 'scaler',
      kind: 'Scaler',
      listKind: 'ScalerList',
      categories: ['homeostat'],
    });
    const [version] = crd.spec.versions;
    expect(version).toMatchObject({ name: 'v1', served: true, storage: true, subresources: { status: {} } });
    expect(version.additionalPrinterColumns).toEqual([
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ]);
    expect(version.schema.openAPIV3Schema).toEqual({
      type: 'object',
      required: ['spec'],
      properties: {
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        metadata: { type: 'object' },
        spec: {
          type: 'object',
          properties: { size: { type: 'integer', minimum: expect.any(Number), maximum: expect.any(Number) } },
          required: ['size'],
        },
        status: statusSchema,
      },
    });
    expect(customResourceDefinition(plan, spec, { shortNames: [] }).spec).toMatchObject({
      names: { categories: ['homeostat'] },
    });
    const noShortNames: Json = customResourceDefinition(plan, spec, { shortNames: [] });
    expect('shortNames' in noShortNames.spec.names).toBe(false);
  });

  it('given an operator, each reconciler with a CRD of its own gets one file named <plural>.<group>.yaml', () => {
    const reconciler = (p: Partial<typeof plan>, crd?: false | Json) => ({
      plan: { ...plan, ...p, steps: [] },
      schema: spec,
      crd,
    });
    const operator = {
      reconcilers: [
        reconciler({}),
        reconciler({ kind: 'Zone', plural: 'zones' }, { shortNames: ['zn'] }),
        reconciler({ kind: 'Elsewhere', plural: 'elsewheres' }, false),
        reconciler({ group: '', kind: 'Namespace', plural: 'namespaces', version: 'v1' }),
      ],
    } as unknown as Operator;
    const crds = operatorCrds(operator) as Record<string, Json>;
    expect(Object.keys(crds)).toEqual(['scalers.scalers.example.com.yaml', 'zones.scalers.example.com.yaml']);
    expect(crds['zones.scalers.example.com.yaml']!.spec.names.shortNames).toEqual(['zn']);
  });
});
