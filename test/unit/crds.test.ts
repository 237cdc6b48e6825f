import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { builtinOperator, postgresDatabasePlan, postgresDatabaseSpec } from '../../builtin';
import { customResourceDefinition, operatorCrds, renderCrdYaml, structuralSchema } from '../../reconcilers';

const crdDir = join(__dirname, '../../deploy/crds');

describe('CRDs generated from the zod schemas', () => {
  it('given the committed deploy/crds, each file equals what npm run crds generates', () => {
    const generated = operatorCrds(builtinOperator);
    const committed = readdirSync(crdDir).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
    expect(committed.sort()).toEqual(Object.keys(generated).sort());
    for (const [file, crd] of Object.entries(generated)) {
      expect(readFileSync(join(crdDir, file), 'utf8')).toBe(renderCrdYaml(crd));
    }
  });

  it('given the committed PostgresDatabase CRD, the YAML keeps defaults, enums, the conditions map list and unknown status fields', () => {
    const yaml = readFileSync(join(crdDir, 'postgresdatabases.homeostat.dev.yaml'), 'utf8');
    for (const kept of [
      'default: Retain',
      '- Delete',
      '- Deleting',
      'x-kubernetes-list-type: map',
      'x-kubernetes-preserve-unknown-fields: true',
    ]) {
      expect(yaml).toContain(kept);
    }
  });

  it('given the PostgresDatabase schema, the CRD states its defaults, enums, bounds and patterns, printer columns and short names', () => {
    const crd = customResourceDefinition(postgresDatabasePlan, postgresDatabaseSpec, { shortNames: ['pgdb'] }) as any;
    const version = crd.spec.versions[0];
    const spec = version.schema.openAPIV3Schema.properties.spec;
    expect(spec.required).toEqual(['serverRef', 'databaseName', 'ownerRole']);
    expect(spec.properties.deletionPolicy).toEqual({
      type: 'string',
      enum: ['Retain', 'Delete'],
      default: 'Retain',
      description: expect.stringMatching(/^What deleting this object does: Retain keeps/),
    });
    expect(spec.properties.connectionLimit).toMatchObject({
      type: 'integer',
      minimum: -1,
      maximum: 10000,
    });
    // Unset means the PostgresServer's default (issue 31): no CRD default of -1 ("no limit").
    expect(spec.properties.connectionLimit).not.toHaveProperty('default');
    expect(spec.properties.databaseName.pattern).toBe('^[a-z0-9_-]+$');
    expect(spec.properties.serverRef.required).toEqual(['name']);
    expect(version.subresources).toEqual({ status: {} });
    expect(version.additionalPrinterColumns.map((c: { name: string }) => c.name)).toEqual(['Phase', 'Ready', 'Age']);
    expect(crd.spec.names.shortNames).toEqual(['pgdb']);
    expect(JSON.stringify(spec)).not.toMatch(/"\$schema"|propertyNames|"additionalProperties":false/);
  });

  it('given a record in the schema, additionalProperties keeps typing the map (so the API server does not prune it)', () => {
    expect(
      structuralSchema(z.toJSONSchema(z.object({ m: z.record(z.string(), z.string()) }), { target: 'openapi-3.0' })),
    ).toMatchObject({
      properties: { m: { type: 'object', additionalProperties: { type: 'string' } } },
    });
  });
});
