/**
 * Field descriptions as a user reads them: the built-in CRDs (`deploy/crds`, as committed) and the
 * scaffold's Tenant CRD installed into the real kube-apiserver, then `kubectl explain <kind>.spec.<field>`
 * (the stack's own kubectl, which reads the served OpenAPI v3 document) prints the description the
 * field's zod schema states with `.describe()`. The served document itself is read too
 * (`/openapi/v3/apis/<group>/<version>`), so a failure says whether the API server or kubectl lost it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtinOperator } from '../../builtin';
import { specSchema } from '../../reconcilers';
import templateOperator from '../../templates/tenant-operator/src/operator';
import { eventually } from '../support/eventually';
import { useStack } from '../support/harness';
import { installBuiltinCrds, installOperatorCrds } from '../support/homeostat';

type Json = Record<string, any>;

/** The description a reconciler's zod schema gives a field of its spec (a dotted path under spec). */
function describedInSchema(operator: typeof builtinOperator, kind: string, path: string): string {
  const reconciler = operator.reconcilers.find((r) => r.plan.kind === kind)!;
  let node: Json = specSchema(reconciler.schema);
  for (const name of path.split('.')) node = (node.properties as Json)[name] as Json;
  expect(typeof node.description).toBe('string');
  return node.description as string;
}

describe('CRD field descriptions on the real kube-apiserver (what kubectl explain prints)', () => {
  const t = useStack();
  // kubectl keeps its discovery and OpenAPI cache under HOME: a fresh one, so it reads what is served now.
  const home = mkdtempSync(join(tmpdir(), 'homeostat-explain-'));
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  const kubectl = (...args: string[]): string =>
    execFileSync(t.stack.kubectl, ['--kubeconfig', t.endpoints.kubeconfig, ...args], {
      encoding: 'utf8',
      env: { ...process.env, HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  /** The served OpenAPI v3 schema of a kind's spec field, or `undefined` while it is not published. */
  const served = (group: string, version: string, kind: string, path: string): Json | undefined => {
    const document = JSON.parse(kubectl('get', '--raw', `/openapi/v3/apis/${group}/${version}`)) as {
      components: { schemas: Record<string, Json> };
    };
    const name = Object.keys(document.components.schemas).find((n) => n.endsWith(`.${version}.${kind}`));
    let node: Json | undefined = name ? document.components.schemas[name] : undefined;
    for (const segment of ['spec', ...path.split('.')]) node = (node?.properties as Json | undefined)?.[segment];
    return node;
  };

  beforeAll(async () => {
    installBuiltinCrds(t);
    await installOperatorCrds(t, templateOperator);
  }, 120_000);

  it.each([
    ['homeostat.dev', 'v1alpha1', 'PostgresDatabase', 'postgresdatabases', 'deletionPolicy', builtinOperator],
    ['homeostat.dev', 'v1alpha1', 'PostgresServer', 'postgresservers', 'adminSecretRef.key', builtinOperator],
    ['homeostat.dev', 'v1alpha1', 'App', 'apps', 'replicas', builtinOperator],
    ['platform.example.com', 'v1alpha1', 'Tenant', 'tenants', 'quota.cpu', templateOperator],
  ])(
    'given the %s/%s CRD of %s installed, kubectl explain %s.spec.%s prints the field’s description',
    async (group, version, kind, plural, path, operator) => {
      const description = describedInSchema(operator, kind, path);
      // The API server publishes a new CRD's OpenAPI a moment after it is Established.
      const node = await eventually(
        `the served OpenAPI of ${kind}.spec.${path}`,
        () => Promise.resolve(served(group, version, kind, path)),
        (n) => n?.description !== undefined,
      );
      expect(node?.description).toBe(description);
      const printed = await eventually(
        `kubectl explain ${plural}.spec.${path}`,
        () => Promise.resolve(kubectl('explain', `${plural}.spec.${path}`, `--api-version=${group}/${version}`)),
        (out) => out.includes('DESCRIPTION'),
      );
      // kubectl wraps long descriptions: compare the words.
      const words = (s: string): string => s.replace(/\s+/g, ' ').trim();
      expect(words(printed)).toContain(words(description));
      expect(printed).toMatch(new RegExp(`KIND:\\s+${kind}`));
    },
    120_000,
  );
});
