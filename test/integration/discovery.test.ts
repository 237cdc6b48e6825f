/**
 * API discovery against the real kube-apiserver: plurals and scopes come from the server's resource
 * lists (irregular plurals included), a CRD installed after its group was cached is found, and a kind
 * the server does not serve fails clearly — in the library and as `homeostat bridge` refusing to start.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { z } from 'zod';
import { builtinOperator } from '../../builtin';
import { ApiDiscovery, DiscoveryError, watchedResourcesFor } from '../../informer-bridge';
import { customResourceDefinition } from '../../reconcilers';
import { randomSuffix, useStack } from '../support/harness';
import { installBuiltinCrds } from '../support/homeostat';

describe('API discovery on the real API server', () => {
  const t = useStack();

  it.each([
    ['v1', 'Endpoints', 'endpoints', true],
    ['v1', 'Namespace', 'namespaces', false],
    ['v1', 'ComponentStatus', 'componentstatuses', false],
    ['networking.k8s.io/v1', 'NetworkPolicy', 'networkpolicies', true],
    ['networking.k8s.io/v1', 'Ingress', 'ingresses', true],
    ['storage.k8s.io/v1', 'StorageClass', 'storageclasses', false],
    ['policy/v1', 'PodDisruptionBudget', 'poddisruptionbudgets', true],
  ])('given %s %s, the server names its plural %s (namespaced: %s)', async (apiVersion, kind, plural, namespaced) => {
    expect(await new ApiDiscovery(t.kc).resourceFor(apiVersion, kind)).toMatchObject({ kind, plural, namespaced });
  });

  it('given the built-in operator with its CRDs installed, the bridge watches its kinds under the served plurals', async () => {
    installBuiltinCrds(t);
    const resources = await watchedResourcesFor(builtinOperator, t.kc);
    const name = (r: (typeof resources)[number]): string => `${r.plural}${r.group ? `.${r.group}` : ''}`;
    // The reconciled kinds, whole objects, and the App's Deployments (their status matters: kept as
    // metadata and status only).
    expect(
      resources
        .filter((r) => !r.metadataOnly)
        .map(name)
        .sort(),
    ).toEqual([
      'apps.homeostat.dev',
      'deployments.apps',
      'postgresdatabases.homeostat.dev',
      'postgresservers.homeostat.dev',
    ]);
    expect(resources.filter((r) => r.watchStatus).map(name)).toEqual(['deployments.apps']);
    // Owned and referenced kinds, as metadata only: an App references its PostgresDatabase and a
    // PostgresDatabase its PostgresServer, so those two are also watched (again) as references.
    expect(
      resources
        .filter((r) => r.metadataOnly)
        .map(name)
        .sort(),
    ).toEqual([
      'configmaps',
      'postgresdatabases.homeostat.dev',
      'postgresservers.homeostat.dev',
      'secrets',
      'services',
    ]);
  });

  it.each([
    [
      'a group the server does not serve',
      'gizmos.example.com/v1',
      'Gizmo',
      /does not serve gizmos\.example\.com\/v1.*Gizmo/,
    ],
    ['a kind missing from a served group', 'v1', 'Sekret', /serves no kind Sekret in v1/],
    ['a kind name of 10,000 characters', 'v1', 'K'.repeat(10_000), /serves no kind K+ in v1/],
    ['a version with path characters', '../../api/v1', 'Secret', /"\.\.\/\.\.\/api\/v1" is not a valid apiVersion/],
  ])('given %s, it fails naming the kind', async (_what, apiVersion, kind, message) => {
    const err = await new ApiDiscovery(t.kc, { notServedGraceMs: 300 })
      .resourceFor(apiVersion, kind)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DiscoveryError);
    expect((err as Error).message).toMatch(message);
  });

  it('given a CRD installed after its group was looked up, the kind is found (the cached list is asked again)', async () => {
    const group = `late-${randomSuffix()}.example.com`;
    const discovery = new ApiDiscovery(t.kc, { notServedGraceMs: 300 });
    await expect(discovery.resourceFor(`${group}/v1`, 'Latecomer')).rejects.toThrow(DiscoveryError);
    const crd = customResourceDefinition(
      { group, version: 'v1', kind: 'Latecomer', plural: 'latecomers', scope: 'Cluster' },
      z.object({}),
    );
    await t.apiext.createCustomResourceDefinition({
      body: k8s.loadYaml<k8s.V1CustomResourceDefinition>(JSON.stringify(crd)),
    });
    // Established can reach the discovery documents a moment later: the grace period covers it.
    const found = await new ApiDiscovery(t.kc)
      .resourceFor(`${group}/v1`, 'Latecomer')
      .catch(async () => discovery.resourceFor(`${group}/v1`, 'Latecomer'));
    expect(found).toMatchObject({ group, plural: 'latecomers', namespaced: false });
    expect(await discovery.resourceFor(`${group}/v1`, 'Latecomer')).toMatchObject({ plural: 'latecomers' });
  });

  it('given an operator whose CRD is not installed, homeostat bridge exits non-zero naming the kind', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(__dirname, '../../cli/homeostat.ts'),
        'bridge',
        '--operator',
        join(__dirname, '../fixtures/operators/unserved.ts'),
      ],
      {
        env: {
          ...process.env,
          KUBECONFIG: t.endpoints.kubeconfig,
          TEMPORAL_ADDRESS: t.endpoints.temporalAddress,
          TEMPORAL_NAMESPACE: t.endpoints.temporalNamespace,
          HOMEOSTAT_BRIDGE_PORT: '0',
          HOMEOSTAT_BRIDGE_LEADER_ELECTION: 'false',
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/reconciled kind Gizmo \(gizmos\.example\.com\/v1\).*install its CRD/);
  }, 60_000);
});
