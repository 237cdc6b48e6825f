/**
 * Generated CRDs on the real kube-apiserver: rules stated once with `celRule` refuse bad specs at
 * admission with the rule's message, agree with the zod check on random specs, work on a
 * cluster-scoped kind, and a spec that got past admission (stored before the rule existed) is reported
 * `Invalid` by the worker with the same message. The operator is a team's own
 * (test/fixtures/operators/scalers.ts), reconciles are triggered through the HTTP API.
 */
import { randomBytes } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import fc from 'fast-check';
import pino from 'pino';
import { apiKindsOf, buildApiServer, KubernetesAuth } from '../../api';
import { operatorCrds } from '../../reconcilers';
import scalers, { scalerSpec } from '../fixtures/operators/scalers';
import { randomSuffix, useStack } from '../support/harness';
import { type InProcessHomeostat, startInProcessHomeostat } from '../support/homeostat';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const group = 'scalers.example.com';
type Json = Record<string, unknown>;

/** The client's typed model of a generated CRD (its serializer knows only the model's property names). */
const typed = (crd: unknown): k8s.V1CustomResourceDefinition =>
  k8s.loadYaml<k8s.V1CustomResourceDefinition>(JSON.stringify(crd));

/** A CRD as it was before its rules were written: every `x-kubernetes-validations` removed. */
function withoutRules(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutRules);
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k]) => k !== 'x-kubernetes-validations')
      .map(([k, v]) => [k, withoutRules(v)]),
  );
}

interface Status {
  phase?: string;
  conditions?: { type: string; status: string; reason: string; message: string }[];
}

describe('generated CRDs with CEL rules on the real kube-apiserver', () => {
  const t = useStack();
  const token = randomBytes(24).toString('hex');
  const crds = operatorCrds(scalers);
  const scalerCrd = crds[`scalers.${group}.yaml`]!;
  const zoneCrd = crds[`zones.${group}.yaml`]!;
  let homeostat: InProcessHomeostat | undefined;
  let api: Awaited<ReturnType<typeof buildApiServer>> | undefined;
  const storedBeforeRule = `before-rule-${randomSuffix()}`;
  const taskQueue = `scalers-${randomSuffix()}`;

  const established = async (name: string): Promise<k8s.V1CustomResourceDefinition> => {
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(200)) {
      const crd = await t.apiext.readCustomResourceDefinition({ name });
      if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return crd;
    }
    throw new Error(`${name} not established`);
  };
  const scalerBody = (name: string, spec: unknown): Json => ({
    apiVersion: `${group}/v1`,
    kind: 'Scaler',
    metadata: { name },
    spec,
  });
  const createScaler = (name: string, spec: unknown, dryRun?: 'All') =>
    t.custom.createNamespacedCustomObject({
      group,
      version: 'v1',
      namespace: t.namespace,
      plural: 'scalers',
      body: scalerBody(name, spec),
      ...(dryRun ? { dryRun } : {}),
    });
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (e: { code?: number; body?: string }) => e,
    );
  const reconcile = async (kind: string, namespace: string, name: string) => {
    const res = await api!.inject({
      method: 'POST',
      url: `/v1/objects/${group}/v1/${kind}/${namespace}/${name}/reconcile`,
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.statusCode).toBe(200);
    return res.json().outcome as { phase: string; result: string; error?: string };
  };

  beforeAll(async () => {
    // The Scaler CRD as it was before its rules: a spec that breaks them is stored.
    const name = `scalers.${group}`;
    await t.apiext.createCustomResourceDefinition({
      body: typed(withoutRules(scalerCrd)),
    });
    await t.apiext.createCustomResourceDefinition({ body: typed(zoneCrd) });
    await established(name);
    await established(`zones.${group}`);
    await createScaler(storedBeforeRule, { minReplicas: 5, maxReplicas: 2 });
    // Then the rules arrive; wait until admission enforces them.
    const current = await t.apiext.readCustomResourceDefinition({ name });
    await t.apiext.replaceCustomResourceDefinition({
      name,
      body: { ...current, spec: typed(scalerCrd).spec },
    });
    for (const deadline = Date.now() + 30_000; ; await sleep(200)) {
      const err = await refusal(createScaler(`probe-${randomSuffix()}`, { minReplicas: 5, maxReplicas: 2 }, 'All'));
      if (err?.code === 422) break;
      if (Date.now() > deadline) throw new Error('the CEL rule never took effect');
    }
    homeostat = await startInProcessHomeostat(t, {
      taskQueue,
      logger: pino({ level: 'warn' }),
      operator: scalers,
    });
    api = await buildApiServer({
      temporal: t.temporal,
      kc: t.kc,
      objects: k8s.KubernetesObjectApi.makeApiClient(t.kc),
      ...apiKindsOf(scalers),
      auth: new KubernetesAuth({ kc: t.kc, staticTokens: [{ token, user: 'admin', groups: ['system:masters'] }] }),
      log: pino({ level: 'warn' }),
      taskQueue,
      rateLimitPerMinute: 1_000_000,
      reconcileWaitMs: 60_000,
    });
    await api.ready();
  }, 120_000);

  afterAll(async () => {
    await api?.close();
    await homeostat?.stop();
  });

  it.each([
    [
      'crossed replica bounds',
      { minReplicas: 5, maxReplicas: 2 },
      /spec.minReplicas: Invalid value.*minReplicas must not exceed maxReplicas/,
    ],
    [
      'a repeated env name',
      { minReplicas: 1, maxReplicas: 2, env: [{ name: 'A' }, { name: 'B' }, { name: 'A' }] },
      /spec.env: Invalid value.*env names must be unique/,
    ],
    [
      'a label key of the wrong shape',
      { minReplicas: 1, maxReplicas: 2, labels: { Team: 'x' } },
      /spec.labels: Invalid value.*keys must match/,
    ],
    [
      'a label key of 100 KiB',
      { minReplicas: 1, maxReplicas: 2, labels: { ['a'.repeat(100 * 1024)]: 'x' } },
      /spec.labels: Invalid value.*keys must/,
    ],
    ['replicas of 10^12', { minReplicas: 1e12, maxReplicas: 1e12 }, /spec.maxReplicas.*less than or equal to 1000/],
  ])(
    'given %s, kube-apiserver refuses the Scaler at admission with the rule’s message',
    async (_what, spec, message) => {
      const err = await refusal(createScaler(`bad-${randomSuffix()}`, spec));
      expect(err?.code).toBe(422);
      expect(String(err?.body)).toMatch(message);
    },
  );

  it('given 60 random specs, kube-apiserver admits exactly those the zod schema accepts (CEL and JS agree)', async () => {
    const spec = fc.record(
      {
        minReplicas: fc.integer({ min: -2, max: 1002 }),
        maxReplicas: fc.integer({ min: -2, max: 1002 }),
        env: fc.array(fc.record({ name: fc.constantFrom('A', 'B', 'C', 'PATH') }), { maxLength: 4 }),
        labels: fc.dictionary(fc.constantFrom('team', 'a-b', 'Team', '9lives', 'x-', 'tier2', ''), fc.constant('v'), {
          maxKeys: 3,
        }),
      },
      { requiredKeys: ['minReplicas', 'maxReplicas'] },
    );
    let admittedCount = 0;
    await fc.assert(
      fc.asyncProperty(spec, async (s) => {
        const admitted = (await refusal(createScaler(`rand-${randomSuffix()}`, s, 'All'))) === undefined;
        if (admitted) admittedCount += 1;
        return admitted === scalerSpec.safeParse(s).success;
      }),
      { numRuns: 60 },
    );
    expect(admittedCount).toBeGreaterThan(0);
  }, 120_000);

  it('given a Scaler stored before its CRD had the rule (admission bypassed), the worker reports it Invalid with the rule’s message and runs no step', async () => {
    const outcome = await reconcile('Scaler', t.namespace, storedBeforeRule);
    expect(outcome).toMatchObject({ phase: 'Invalid', result: 'invalid' });
    expect(outcome.error).toMatch(/minReplicas must not exceed maxReplicas/);
    const obj = (await t.custom.getNamespacedCustomObject({
      group,
      version: 'v1',
      namespace: t.namespace,
      plural: 'scalers',
      name: storedBeforeRule,
    })) as { status?: Status };
    expect(obj.status?.phase).toBe('Invalid');
    expect(obj.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'InvalidSpec',
      message: expect.stringMatching(/minReplicas.*minReplicas must not exceed maxReplicas/),
    });
  }, 60_000);

  it('given a valid Scaler, it passes admission and reconciles to Ready', async () => {
    const name = `good-${randomSuffix()}`;
    await createScaler(name, { minReplicas: 1, maxReplicas: 3, env: [{ name: 'A' }], labels: { team: 'ponies' } });
    expect(await reconcile('Scaler', t.namespace, name)).toMatchObject({ phase: 'Ready', result: 'ready' });
  }, 60_000);

  it('given the cluster-scoped Zone, its CRD is cluster-scoped, refuses a bad spec at admission, and a Zone reconciles to Ready', async () => {
    const crd = await t.apiext.readCustomResourceDefinition({ name: `zones.${group}` });
    expect(crd.spec.scope).toBe('Cluster');
    expect(crd.spec.names.categories).toEqual(['platform']);
    const zone = (name: string, spec: Json): Json => ({
      apiVersion: `${group}/v1`,
      kind: 'Zone',
      metadata: { name },
      spec,
    });
    const bad = await refusal(
      t.custom.createClusterCustomObject({
        group,
        version: 'v1',
        plural: 'zones',
        body: zone(`bad-${randomSuffix()}`, { region: 'eu', zones: 3, primary: 3 }),
      }),
    );
    expect(bad?.code).toBe(422);
    expect(String(bad?.body)).toMatch(/spec.primary: Invalid value.*primary must be one of the zones/);
    const name = `eu-${randomSuffix()}`;
    await t.custom.createClusterCustomObject({
      group,
      version: 'v1',
      plural: 'zones',
      body: zone(name, { region: 'eu', zones: 3, primary: 2 }),
    });
    expect(await reconcile('Zone', '_', name)).toMatchObject({ phase: 'Ready', result: 'ready' });
    const obj = (await t.custom.getClusterCustomObject({ group, version: 'v1', plural: 'zones', name })) as {
      status?: Status;
    };
    expect(obj.status?.phase).toBe('Ready');
  }, 60_000);
});
