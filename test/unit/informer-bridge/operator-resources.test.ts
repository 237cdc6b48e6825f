import { builtinOperator } from '../../../builtin';
import {
  type DiscoveredResource,
  DiscoveryError,
  type ResourceMapper,
  watchedResourcesFor,
} from '../../../informer-bridge';
import { relevantChange } from '../../../informer-bridge/predicates';
import { driftCheckAnnotation } from '../../../core/plan';
import { ownedChildSelector } from '../../../core/labels';

/** What a cluster serves, as its discovery documents say (the real API server is asked in test/integration/discovery.test.ts). */
function served(resources: DiscoveredResource[]): ResourceMapper {
  return {
    async resourceFor(apiVersion, kind) {
      const found = resources.find(
        (r) => (r.group ? `${r.group}/${r.version}` : r.version) === apiVersion && r.kind === kind,
      );
      if (!found) throw new DiscoveryError(`the API server serves no kind ${kind} in ${apiVersion}`);
      return found;
    },
  };
}

const r = (group: string, version: string, kind: string, plural: string, namespaced = true): DiscoveredResource => ({
  group,
  version,
  kind,
  plural,
  namespaced,
  verbs: ['list', 'watch'],
});

const cluster = [
  r('homeostat.dev', 'v1alpha1', 'PostgresDatabase', 'postgresdatabases'),
  r('homeostat.dev', 'v1alpha1', 'App', 'apps'),
  r('homeostat.dev', 'v1alpha1', 'PostgresServer', 'postgresservers', false),
  r('', 'v1', 'Secret', 'secrets'),
  r('', 'v1', 'ConfigMap', 'configmaps'),
  r('', 'v1', 'Service', 'services'),
  r('apps', 'v1', 'Deployment', 'deployments'),
  r('', 'v1', 'Namespace', 'namespaces', false),
  r('', 'v1', 'Endpoints', 'endpoints'),
];

describe('watched resources of an operator, from discovery', () => {
  it('given the built-in operator, each kind is watched once, as metadata only but the Deployment (its status matters); owned-only kinds by homeostat’s label, Secret (owned and referenced) unfiltered', async () => {
    const resources = await watchedResourcesFor(builtinOperator, served(cluster));
    // Related (owned or referenced) kinds; a primary kind may also be referenced (watched twice then).
    const related = resources.filter((x) => x.owners || x.referrers);
    const byKind = Object.fromEntries(
      [...resources.filter((x) => !x.owners && !x.referrers), ...related].map((x) => [x.kind, x]),
    );
    expect(Object.keys(byKind)).toEqual(
      expect.arrayContaining(['App', 'ConfigMap', 'Deployment', 'PostgresDatabase', 'Secret', 'Service']),
    );
    expect(new Set(related.map((x) => x.kind)).size).toBe(related.length); // each related kind once
    expect(byKind.Deployment).toMatchObject({
      group: 'apps',
      plural: 'deployments',
      owners: [{ group: 'homeostat.dev', kind: 'App' }],
    });
    expect(byKind.Secret).toMatchObject({
      group: '',
      plural: 'secrets',
      owners: [{ group: 'homeostat.dev', kind: 'PostgresDatabase' }],
      referrers: [expect.objectContaining({ group: 'homeostat.dev' })],
    });
    expect(byKind.Secret!.metadataOnly).toBe(true);
    expect(byKind.Secret!.labelSelector).toBeUndefined(); // referenced too: a server Secret carries no homeostat label
    for (const owned of ['ConfigMap', 'Service']) {
      expect(byKind[owned]).toMatchObject({ metadataOnly: true, labelSelector: ownedChildSelector });
      expect(byKind[owned]!.watchStatus).toBeUndefined();
    }
    // The App asks for its Deployment's status (a rollout's progress): watched whole, still by label.
    expect(byKind.Deployment).toMatchObject({ watchStatus: true, labelSelector: ownedChildSelector });
    expect(byKind.Deployment!.metadataOnly).toBeUndefined();
    expect(byKind.App).toEqual({
      group: 'homeostat.dev',
      version: 'v1alpha1',
      plural: 'apps',
      kind: 'App',
      namespaced: true,
      relevantAnnotations: [driftCheckAnnotation],
    });
  });

  it('given a core-kind primary selected by label that references an irregular kind, the plural comes from the server and the referenced kind is metadata only', async () => {
    const resources = await watchedResourcesFor(
      {
        reconcilers: [
          {
            plan: {
              group: '',
              version: 'v1',
              kind: 'Namespace',
              plural: 'namespaces',
              scope: 'Cluster',
              owns: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
              steps: [],
            },
            labelSelector: 'platform.example.com/managed=true',
            references: [{ apiVersion: 'v1', kind: 'Endpoints', referencedBy: () => [] }],
          },
        ],
      },
      served(cluster),
    );
    expect(resources).toEqual([
      {
        group: '',
        version: 'v1',
        plural: 'namespaces',
        kind: 'Namespace',
        namespaced: false,
        labelSelector: 'platform.example.com/managed=true',
      },
      {
        group: '',
        version: 'v1',
        plural: 'configmaps',
        kind: 'ConfigMap',
        namespaced: true,
        owners: [{ group: '', kind: 'Namespace' }],
        metadataOnly: true,
        labelSelector: 'app.kubernetes.io/managed-by=homeostat',
      },
      {
        group: '',
        version: 'v1',
        plural: 'endpoints',
        kind: 'Endpoints',
        namespaced: true,
        referrers: [{ group: '', kind: 'Namespace' }],
        metadataOnly: true,
      },
    ]);
  });

  it('given kinds the server does not serve and a plan whose plural disagrees with it, it fails naming every one', async () => {
    const operator = {
      reconcilers: [
        {
          plan: {
            group: 'homeostat.dev',
            version: 'v1alpha1',
            kind: 'App',
            plural: 'applications',
            scope: 'Namespaced' as const,
            owns: [{ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute' }],
            steps: [],
          },
          references: [{ apiVersion: 'v1', kind: 'Sekret', referencedBy: () => [] }],
        },
      ],
    };
    const err = await watchedResourcesFor(operator, served(cluster)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DiscoveryError);
    const message = (err as Error).message;
    expect(message).toMatch(/reconciled kind App .*plural applications.*serves apps/);
    expect(message).toMatch(/owned kind HTTPRoute \(gateway\.networking\.k8s\.io\/v1\)/);
    expect(message).toMatch(/referenced kind Sekret \(v1\)/);
  });

  it('given a primary kind with a drift check, a change of its drift-check-interval annotation alone signals (the new interval applies at once); other annotations do not', async () => {
    const resources = await watchedResourcesFor(builtinOperator, served(cluster));
    const primaries = resources.filter((x) => !x.owners && !x.referrers);
    for (const p of primaries) expect(p.relevantAnnotations).toEqual([driftCheckAnnotation]);
    const app = primaries.find((x) => x.kind === 'App')!;
    const obj = (annotations: Record<string, string>) => ({
      apiVersion: 'homeostat.dev/v1alpha1',
      kind: 'App',
      metadata: { name: 'a', namespace: 'n', uid: 'u', generation: 1, resourceVersion: '1', annotations },
    });
    const at30 = obj({ [driftCheckAnnotation]: '30m', other: 'x' });
    expect(relevantChange(app, at30, obj({ [driftCheckAnnotation]: '1m', other: 'x' }))).toBe('annotations');
    expect(relevantChange(app, obj({ other: 'x' }), at30)).toBe('annotations');
    expect(relevantChange(app, at30, obj({ [driftCheckAnnotation]: '30m', other: 'y' }))).toBeUndefined();
  });
});
