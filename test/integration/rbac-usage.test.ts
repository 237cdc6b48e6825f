/**
 * deploy/rbac against what the code really does: the worker, the bridge and the API run here with
 * their own ServiceAccounts' tokens (the ClusterRoles and Roles of deploy/rbac applied as they ship)
 * through a whole life of a PostgresDatabase and an App — created, drifted by hand, reconciled over
 * the API, deleted — and the API server's audit log records each of their requests. Every verb
 * granted must appear there (nothing granted "just in case"), and none of their requests may be
 * forbidden (everything the code needs is granted).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import pino from 'pino';
import { apiKindsOf, buildApiServer, KubernetesAuth } from '../../api';
import { builtinOperator } from '../../builtin';
import { randomSuffix, useStack } from '../support/harness';
import { installBuiltinCrds, type InProcessHomeostat, startInProcessHomeostat } from '../support/homeostat';
import { createPostgresServer, systemNamespace } from '../support/postgres';
import { sleep, waitFor } from '../support/bridge';

const root = join(__dirname, '../..');

interface AuditEvent {
  user: { username: string };
  verb: string;
  requestURI?: string;
  objectRef?: { apiGroup?: string; resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  requestObject?: { spec?: { user?: string; extra?: Record<string, string[]> } };
}

/** `verb group/resource[/subresource]`, the grant's and the request's common form. */
const key = (verb: string, group: string, resource: string): string => `${verb} ${group}/${resource}`;

describe('deploy/rbac: every granted verb is used, every request is granted', () => {
  const t = useStack();
  const suffix = randomSuffix();
  const taskQueue = `rbac-${suffix}`;
  const log = pino({ level: 'warn' });
  const kubectl = (...args: string[]): string =>
    execFileSync(t.stack.kubectl, ['--kubeconfig', t.endpoints.kubeconfig, ...args], { encoding: 'utf8' });
  let homeostat: InProcessHomeostat | undefined;
  let api: Awaited<ReturnType<typeof buildApiServer>> | undefined;
  const sa = (name: string): string => `system:serviceaccount:${systemNamespace}:${name}`;

  /** A kubeconfig that is the ServiceAccount `name` of homeostat's namespace (a bound token). */
  const kubeconfigOf = async (name: string): Promise<k8s.KubeConfig> => {
    const { status } = await t.core.createNamespacedServiceAccountToken({
      namespace: systemNamespace,
      name,
      body: { spec: { audiences: [], expirationSeconds: 3600 } },
    });
    const cluster = t.kc.getCurrentCluster()!;
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ ...cluster, name: 'stack' }],
      users: [{ name, token: status!.token }],
      contexts: [{ name, cluster: 'stack', user: name }],
      currentContext: name,
    });
    return kc;
  };

  beforeAll(async () => {
    installBuiltinCrds(t);
    kubectl('apply', '--server-side', '-f', join(root, 'deploy/base/namespace.yaml'));
    kubectl('apply', '--server-side', '-k', join(root, 'deploy/rbac'));
  });

  afterAll(async () => {
    await api?.close();
    await homeostat?.stop();
  });

  it('given the worker, bridge and API as their ServiceAccounts through a whole life of a database and an app, the audit log shows each granted verb used and none refused', async () => {
    const [workerKc, bridgeKc, apiKc] = await Promise.all(
      ['homeostat-worker', 'homeostat-bridge', 'homeostat-api'].map(kubeconfigOf),
    );
    const server = await createPostgresServer(t, `rbac-${suffix}`);
    // Left with an older homeostat's finalizer too: the worker removes it (`patch` on postgresservers).
    await t.custom.patchClusterCustomObject(
      {
        group: 'homeostat.dev',
        version: 'v1alpha1',
        plural: 'postgresservers',
        name: server,
        body: { metadata: { finalizers: ['homeostat.dev/finalizer'] } },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    homeostat = await startInProcessHomeostat(t, {
      taskQueue,
      logger: log,
      kc: { worker: workerKc!, bridge: bridgeKc! },
      bridge: {
        watchTimeoutSeconds: 30,
        leaderElection: { namespace: systemNamespace, name: `rbac-${suffix}`, identity: `rbac-test-${suffix}` },
      },
    });
    api = await buildApiServer({
      temporal: t.temporal,
      kc: apiKc!,
      objects: k8s.KubernetesObjectApi.makeApiClient(apiKc!),
      ...apiKindsOf(builtinOperator),
      auth: new KubernetesAuth({ kc: apiKc! }),
      log,
      taskQueue,
      reconcileWaitMs: 60_000,
    });

    const custom = t.custom;
    const ns = t.namespace;
    const group = 'homeostat.dev';
    const version = 'v1alpha1';
    const phaseOf = async (plural: string, name: string): Promise<string | undefined> =>
      (
        (await custom.getNamespacedCustomObject({ group, version, namespace: ns, plural, name })) as {
          status?: { phase?: string };
        }
      ).status?.phase;
    await custom.createNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural: 'postgresdatabases',
      body: {
        apiVersion: `${group}/${version}`,
        kind: 'PostgresDatabase',
        metadata: { name: 'ledger' },
        spec: {
          serverRef: { name: server },
          databaseName: `ledger_${suffix}`,
          ownerRole: `ledger_${suffix}`,
          deletionPolicy: 'Delete',
        },
      },
    });
    await custom.createNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural: 'apps',
      body: {
        apiVersion: `${group}/${version}`,
        kind: 'App',
        // The finalizer an older homeostat added to every object: the worker removes it (its `patch`
        // on apps), since an App has no cleanup steps.
        metadata: { name: 'ledger-api', finalizers: ['homeostat.dev/finalizer'] },
        spec: {
          image: 'registry.spr.com/ledger:v1',
          replicas: 1,
          env: [{ name: 'MODE', value: 'strict' }],
          config: { mode: 'strict' },
        },
      },
    });
    await waitFor(
      async () => (await phaseOf('postgresdatabases', 'ledger')) === 'Ready',
      90_000,
      500,
      'the database Ready',
    );
    await waitFor(async () => (await phaseOf('apps', 'ledger-api')) === 'Ready', 90_000, 500, 'the app Ready');

    // Drift by hand: homeostat puts each child back (a server-side apply of what it controls).
    const core = t.core;
    const apps = t.kc.makeApiClient(k8s.AppsV1Api);
    const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
    await core.patchNamespacedConfigMap(
      { namespace: ns, name: 'ledger-api-config', body: { data: { mode: 'lax' } } },
      merge,
    );
    await core.patchNamespacedService(
      {
        namespace: ns,
        name: 'ledger-api',
        body: {
          metadata: { labels: { drift: 'yes' } },
          spec: { ports: [{ name: 'http', port: 81, targetPort: 8080 }] },
        },
      },
      merge,
    );
    await apps.patchNamespacedDeployment({ namespace: ns, name: 'ledger-api', body: { spec: { replicas: 5 } } }, merge);
    const secret = (await core.listNamespacedSecret({ namespace: ns })).items.find((s) =>
      s.metadata?.ownerReferences?.some((o) => o.kind === 'PostgresDatabase'),
    )!;
    await core.patchNamespacedSecret(
      { namespace: ns, name: secret.metadata!.name!, body: { stringData: { host: 'elsewhere' } } },
      merge,
    );
    await waitFor(
      async () => (await apps.readNamespacedDeployment({ namespace: ns, name: 'ledger-api' })).spec?.replicas === 1,
      60_000,
      500,
      'the Deployment put back',
    );
    await waitFor(
      async () =>
        Buffer.from(
          (await core.readNamespacedSecret({ namespace: ns, name: secret.metadata!.name! })).data?.host ?? '',
          'base64',
        ).toString() !== 'elsewhere',
      60_000,
      500,
      'the connection Secret put back',
    );

    // A reconcile through the API, by a caller the platform's RBAC allows (the API reviews its token).
    await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'caller' } } });
    const rbac = t.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: ns,
      body: {
        metadata: { name: 'caller' },
        rules: [
          {
            apiGroups: [group],
            resources: ['apps', 'postgresdatabases'],
            verbs: ['reconcile', 'get', 'plan', 'create'],
          },
        ],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: ns,
      body: {
        metadata: { name: 'caller' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'caller' },
        subjects: [{ kind: 'ServiceAccount', name: 'caller', namespace: ns }],
      },
    });
    const callerToken = (
      await core.createNamespacedServiceAccountToken({
        namespace: ns,
        name: 'caller',
        body: { spec: { audiences: ['homeostat'] } },
      })
    ).status!.token;
    for (const [plural, kind, name] of [
      ['apps', 'App', 'ledger-api'],
      ['postgresdatabases', 'PostgresDatabase', 'ledger'],
    ] as const) {
      const res = await api.inject({
        method: 'POST',
        url: `/v1/objects/${group}/${version}/${kind}/${ns}/${name}/reconcile`,
        headers: { authorization: `Bearer ${callerToken}` },
      });
      expect({ plural, status: res.statusCode }).toEqual({ plural, status: 200 });
    }
    // A dry run of a manifest not applied yet: the worker validates it by a server-side apply with
    // dryRun=All (its `create` on the kind) and dry-runs the children (nothing is written).
    for (const [kind, name, spec] of [
      ['App', 'ledger-next', { image: 'registry.spr.com/ledger:v2', replicas: 1 }],
      [
        'PostgresDatabase',
        'ledger-next',
        { serverRef: { name: server }, databaseName: `next_${suffix}`, ownerRole: `next_${suffix}` },
      ],
    ] as const) {
      const res = await api.inject({
        method: 'POST',
        url: `/v1/objects/${group}/${version}/${kind}/${ns}/${name}/plan`,
        headers: { authorization: `Bearer ${callerToken}` },
        payload: { apiVersion: `${group}/${version}`, kind, metadata: { name, namespace: ns }, spec },
      });
      expect({ kind, status: res.statusCode, body: res.statusCode === 200 ? '' : res.body }).toEqual({
        kind,
        status: 200,
        body: '',
      });
    }

    // Deleted: finalizers run, the database and its Secret go (deletionPolicy Delete), the app's children go.
    await custom.deleteNamespacedCustomObject({ group, version, namespace: ns, plural: 'apps', name: 'ledger-api' });
    await custom.deleteNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural: 'postgresdatabases',
      name: 'ledger',
    });
    const gone = async (plural: string, name: string): Promise<boolean> =>
      custom.getNamespacedCustomObject({ group, version, namespace: ns, plural, name }).then(
        () => false,
        () => true,
      );
    await waitFor(
      async () => (await gone('apps', 'ledger-api')) && (await gone('postgresdatabases', 'ledger')),
      90_000,
      500,
      'both gone',
    );
    await sleep(1_500); // the audit log is written asynchronously (batched)

    // What each ServiceAccount did, from the API server's audit log.
    expect(existsSync(t.stack.auditLog)).toBe(true);
    const events = readFileSync(t.stack.auditLog, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AuditEvent);
    const used = new Map<string, Set<string>>();
    const refused: string[] = [];
    for (const e of events) {
      if (!e.objectRef?.resource) continue;
      const resource = e.objectRef.subresource
        ? `${e.objectRef.resource}/${e.objectRef.subresource}`
        : e.objectRef.resource;
      const k = key(e.verb, e.objectRef.apiGroup ?? '', resource);
      if (!used.has(e.user.username)) used.set(e.user.username, new Set());
      used.get(e.user.username)!.add(k);
      // A server-side apply of an object that does not exist yet is authorized as a `create` too (no
      // audit event of its own): the dry run's validation of a new manifest (`dryRun=All`, its own field manager).
      if (
        e.verb === 'patch' &&
        /[?&]dryRun=All/.test(e.requestURI ?? '') &&
        /fieldManager=homeostat-plan/.test(e.requestURI ?? '')
      )
        used.get(e.user.username)!.add(key('create', e.objectRef.apiGroup ?? '', resource));
      if (e.responseStatus?.code === 403)
        refused.push(`${e.user.username}: ${k} ${e.objectRef.namespace ?? ''}/${e.objectRef.name ?? ''}`);
    }

    // What deploy/rbac grants them.
    const docs = k8s.loadAllYaml(kubectl('kustomize', join(root, 'deploy/rbac'))) as (k8s.V1ClusterRole &
      k8s.V1RoleBinding)[];
    const subjectsOf = new Map<string, string[]>();
    for (const b of docs.filter((d) => d.kind === 'ClusterRoleBinding' || d.kind === 'RoleBinding')) {
      subjectsOf.set(
        `${b.roleRef.kind}/${b.roleRef.name}`,
        (b.subjects ?? []).map((s) => sa(s.name)),
      );
    }
    const unused: string[] = [];
    for (const role of docs.filter((d) => d.kind === 'ClusterRole' || d.kind === 'Role')) {
      for (const user of subjectsOf.get(`${role.kind}/${role.metadata!.name}`) ?? []) {
        for (const rule of role.rules ?? []) {
          for (const g of rule.apiGroups ?? [])
            for (const r of rule.resources ?? [])
              for (const v of rule.verbs) {
                // Owner-reference permission is checked by admission on a child's create or apply, not
                // requested: `update <owner>/finalizers` is used when the worker writes a child of that owner.
                const inUse = r.endsWith('/finalizers')
                  ? [...(used.get(user) ?? [])].some((u) =>
                      /^(create|patch) (|apps)\/(deployments|services|configmaps|secrets)$/.test(u),
                    )
                  : used.get(user)?.has(key(v, g, r));
                if (!inUse) unused.push(`${user}: ${key(v, g, r)}`);
              }
        }
      }
    }
    process.stdout.write(
      `[figures] rbac usage: ${events.length} audited requests; ${[...used].map(([u, s]) => `${u.split(':').pop()} ${s.size} verb/resource pairs`).join(', ')}\n`,
    );
    expect({ unused, refused }).toEqual({ unused: [], refused: [] });

    // The API's SubjectAccessReviews ask for the caller with the extra attributes its token carries
    // (a bound ServiceAccount token's credential ID), as Kubernetes' own aggregated API servers do.
    // The stack's audit log is shared by the tests running beside this one: only the reviews of this
    // test's callers count (another test's API asks about its own namespace's callers).
    const reviews = events.filter(
      (e) =>
        e.objectRef?.resource === 'subjectaccessreviews' &&
        e.requestObject?.spec?.user?.startsWith(`system:serviceaccount:${ns}:`),
    );
    expect(reviews.length).toBeGreaterThan(0);
    for (const r of reviews) {
      expect(r.requestObject!.spec).toMatchObject({
        user: `system:serviceaccount:${ns}:caller`,
        extra: expect.objectContaining({
          'authentication.kubernetes.io/credential-id': [expect.stringMatching(/^JTI=/)],
        }),
      });
    }
  });
});
