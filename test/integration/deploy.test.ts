/**
 * The deploy manifests against the real kube-apiserver: they pass server-side dry run, and each
 * process's ServiceAccount may do what its process needs and nothing broader (SubjectAccessReview).
 * The compose file passes a real compose implementation's config check.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { useStack } from '../support/harness';

const root = join(__dirname, '../..');
/** The image's `USER`, numeric (`uid:gid`). */
const imageUser = /^USER\s+(\d+:\d+)\s*$/m.exec(readFileSync(join(root, 'Dockerfile'), 'utf8'))?.[1];

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
}

describe('deploy manifests', () => {
  const t = useStack();
  const kubectl = (...args: string[]): string =>
    execFileSync(t.stack.kubectl, ['--kubeconfig', t.endpoints.kubeconfig, ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  let docs: k8s.KubernetesObject[] = [];

  beforeAll(() => {
    docs = k8s.loadAllYaml(kubectl('kustomize', join(root, 'deploy'))) as k8s.KubernetesObject[];
  });

  it('given the kustomization, every object passes server-side dry run', () => {
    // Dry run cannot create the namespace and the CRDs the other objects need: apply those first.
    kubectl('apply', '--server-side', '-f', join(root, 'deploy/base/namespace.yaml'));
    kubectl('apply', '--server-side', '-k', join(root, 'deploy/crds'));
    const out = kubectl('apply', '--server-side', '--dry-run=server', '-k', join(root, 'deploy'));
    const kinds = docs.map((d) => d.kind);
    expect(kinds).toEqual(
      expect.arrayContaining([
        'CustomResourceDefinition',
        'ClusterRole',
        'ClusterRoleBinding',
        'ServiceAccount',
        'Deployment',
        'PodDisruptionBudget',
        'Role',
        'RoleBinding',
        'ConfigMap',
        'Service',
        'NetworkPolicy',
      ]),
    );
    expect(out.trim().split('\n')).toHaveLength(docs.length);
    for (const d of docs.filter((x) => x.kind === 'Deployment')) {
      const pod = (d as k8s.V1Deployment).spec!.template.spec!;
      expect(pod.securityContext?.runAsNonRoot).toBe(true);
      // Numeric and the same as the image's USER: the kubelet refuses runAsNonRoot with a named user.
      expect(`${pod.securityContext?.runAsUser}:${pod.securityContext?.runAsGroup}`).toBe(imageUser);
      expect(pod.containers[0]?.readinessProbe?.httpGet?.path).toBe('/readyz');
      expect(pod.containers[0]?.resources?.requests).toBeDefined();
    }
  });

  it('given homeostat’s namespace enforcing Pod Security "restricted", each Deployment’s Pod is admitted, and a Pod without its security context is not', async () => {
    const ns = docs.find((d) => d.kind === 'Namespace' && d.metadata?.name === 'homeostat-system')!;
    expect(ns.metadata?.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
    // The namespace is applied by the dry-run case above; its ServiceAccounts are created here (dry run
    // of a Pod needs them), idempotently.
    const apply = (obj: object): string =>
      execFileSync(t.stack.kubectl, ['--kubeconfig', t.endpoints.kubeconfig, 'apply', '--server-side', '-f', '-'], {
        input: JSON.stringify(obj),
        encoding: 'utf8',
      });
    kubectl('apply', '--server-side', '-f', join(root, 'deploy/base/namespace.yaml'));
    const deployments = docs.filter((x) => x.kind === 'Deployment') as k8s.V1Deployment[];
    expect(deployments.length).toBeGreaterThanOrEqual(3);
    for (const d of deployments) {
      const spec = d.spec!.template.spec!;
      apply({
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: spec.serviceAccountName, namespace: 'homeostat-system' },
      });
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `${d.metadata!.name}-check`, namespace: 'homeostat-system' },
        spec,
      };
      const dry = (body: object): string =>
        execFileSync(
          t.stack.kubectl,
          ['--kubeconfig', t.endpoints.kubeconfig, 'create', '--dry-run=server', '-f', '-'],
          {
            input: JSON.stringify(body),
            encoding: 'utf8',
            stdio: ['pipe', 'pipe', 'pipe'],
          },
        );
      expect(dry(pod)).toContain('created (server dry run)');
      const loose = structuredClone(pod);
      delete loose.spec.securityContext;
      expect(() => dry(loose)).toThrow(/violates PodSecurity "restricted/);
    }
  });

  it('given the rainbow kustomization, the single worker becomes one Deployment per build ID, labelled and told its build, and all of it passes server-side dry run', () => {
    const rainbow = k8s.loadAllYaml(kubectl('kustomize', join(root, 'deploy/rainbow'))) as k8s.KubernetesObject[];
    const deployments = rainbow.filter((d) => d.kind === 'Deployment') as k8s.V1Deployment[];
    expect(deployments.map((d) => d.metadata?.name).sort()).toEqual([
      'homeostat-api',
      'homeostat-bridge',
      'homeostat-worker-0-3-0-example',
    ]);
    const worker = deployments.find((d) => d.metadata?.name === 'homeostat-worker-0-3-0-example')!;
    expect(worker.metadata?.labels?.['homeostat.dev/build-id']).toBe('0-3-0-example');
    expect(worker.spec?.selector.matchLabels?.['homeostat.dev/build-id']).toBe('0-3-0-example');
    expect(worker.spec?.template.metadata?.labels?.['homeostat.dev/build-id']).toBe('0-3-0-example');
    const env = worker.spec!.template.spec!.containers[0]!.env!;
    expect(env.find((e) => e.name === 'HOMEOSTAT_BUILD_ID')?.valueFrom?.fieldRef?.fieldPath).toBe(
      "metadata.labels['homeostat.dev/build-id']",
    );
    expect(env.find((e) => e.name === 'HOMEOSTAT_DEPLOYMENT_NAME')?.value).toBe('homeostat-builtin');
    expect(worker.spec!.template.spec!.containers[0]!.image).toBe('ghcr.io/homeostat-dev/homeostat:0.3.0');
    // Everything else is what deploy/ installs, its namespace included.
    const key = (d: k8s.KubernetesObject): string => `${d.kind}/${d.metadata?.namespace ?? ''}/${d.metadata?.name}`;
    const others = (list: k8s.KubernetesObject[]): string[] =>
      list
        .filter((d) => d.kind !== 'Deployment')
        .map(key)
        .sort();
    expect(others(rainbow)).toEqual(others(docs));
    const uncommented = (file: string): string => readFileSync(join(root, file), 'utf8').replace(/^#.*\n/gm, '');
    expect(uncommented('deploy/rainbow/namespace.yaml')).toBe(uncommented('deploy/base/namespace.yaml'));
    kubectl('apply', '--server-side', '-f', join(root, 'deploy/rainbow/namespace.yaml'));
    kubectl('apply', '--server-side', '-k', join(root, 'deploy/crds'));
    const out = kubectl('apply', '--server-side', '--dry-run=server', '-k', join(root, 'deploy/rainbow'));
    expect(out.trim().split('\n')).toHaveLength(rainbow.length);
  });

  it('given new-version.sh, a new build is written and listed next to the old one, and a build ID that cannot name a Deployment is refused', () => {
    const copy = mkdtempSync(join(tmpdir(), 'homeostat-deploy-'));
    cpSync(join(root, 'deploy'), copy, { recursive: true });
    execFileSync('sh', [join(copy, 'rainbow/new-version.sh'), '0-4-0-next', '0.4.0'], { encoding: 'utf8' });
    const built = k8s.loadAllYaml(kubectl('kustomize', join(copy, 'rainbow'))) as k8s.V1Deployment[];
    const workers = built.filter((d) => d.kind === 'Deployment' && d.metadata?.name?.startsWith('homeostat-worker'));
    expect(workers.map((d) => [d.metadata?.name, d.spec?.template.spec?.containers[0]?.image])).toEqual([
      ['homeostat-worker-0-3-0-example', 'ghcr.io/homeostat-dev/homeostat:0.3.0'],
      ['homeostat-worker-0-4-0-next', 'ghcr.io/homeostat-dev/homeostat:0.4.0'],
    ]);
    for (const bad of ['Bad:1', 'a'.repeat(41), '-x', '../../base']) {
      const r = spawnSync('sh', [join(copy, 'rainbow/new-version.sh'), bad, '0.4.0'], { encoding: 'utf8' });
      expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 2, stderr: expect.stringMatching(/build ID/) });
    }
  });

  it('given the RBAC rules, none uses * and only the worker and bridge touch Secrets (their reconcilers need them), not the API', () => {
    const roles = docs.filter((d) => d.kind === 'ClusterRole' || d.kind === 'Role') as (k8s.KubernetesObject & {
      rules: Rule[];
    })[];
    expect(roles.map((r) => r.metadata?.name).sort()).toEqual([
      'homeostat-api',
      'homeostat-bridge',
      'homeostat-bridge-leader-election',
      'homeostat-worker',
    ]);
    for (const role of roles) {
      for (const rule of role.rules) {
        expect([...rule.verbs, ...(rule.resources ?? []), ...(rule.apiGroups ?? [])]).not.toContain('*');
      }
    }
    const secretRules = roles.flatMap((r) =>
      r.rules.filter((rule) => rule.resources?.includes('secrets')).map((rule) => [r.metadata?.name, rule.verbs]),
    );
    expect(Object.fromEntries(secretRules)).toEqual({
      'homeostat-worker': ['get', 'create', 'patch'],
      'homeostat-bridge': ['list', 'watch'],
    });
    expect(secretRules).toHaveLength(2);
  });

  describe('given the RBAC applied, SubjectAccessReview', () => {
    const authz = (): k8s.AuthorizationV1Api => t.kc.makeApiClient(k8s.AuthorizationV1Api);
    async function allowed(sa: string, attrs: k8s.V1ResourceAttributes): Promise<boolean> {
      const review = await authz().createSubjectAccessReview({
        body: {
          spec: {
            user: `system:serviceaccount:homeostat-system:${sa}`,
            groups: ['system:serviceaccounts', 'system:serviceaccounts:homeostat-system', 'system:authenticated'],
            resourceAttributes: attrs,
          },
        },
      });
      return review.status?.allowed === true;
    }
    beforeAll(() => {
      kubectl('apply', '--server-side', '-f', join(root, 'deploy/base/namespace.yaml'));
      kubectl('apply', '--server-side', '-k', join(root, 'deploy/rbac'));
    });

    const ns = 'pony-prod';
    it.each([
      ['get', 'homeostat.dev', 'apps', ''],
      ['patch', 'homeostat.dev', 'postgresdatabases', ''],
      ['patch', 'homeostat.dev', 'apps', 'status'],
      ['patch', 'apps', 'deployments', ''],
      ['create', '', 'configmaps', ''],
      ['get', '', 'secrets', ''],
      ['create', '', 'secrets', ''],
      ['create', 'events.k8s.io', 'events', ''],
      ['update', 'homeostat.dev', 'apps', 'finalizers'],
      ['update', 'homeostat.dev', 'postgresdatabases', 'finalizers'],
      ['get', '', 'namespaces', ''],
    ])('lets the worker %s %s/%s %s', async (verb, group, resource, subresource) => {
      expect(await allowed('homeostat-worker', { verb, group, resource, subresource, namespace: ns })).toBe(true);
    });

    it.each([
      ['list', '', 'secrets', ''],
      ['update', '', 'secrets', ''],
      ['watch', '', 'secrets', ''],
      ['delete', 'homeostat.dev', 'apps', ''],
      ['create', 'rbac.authorization.k8s.io', 'clusterroles', ''],
      ['delete', '', 'namespaces', ''],
      ['delete', '', 'secrets', ''],
      ['delete', '', 'services', ''],
      ['delete', 'apps', 'deployments', ''],
      ['patch', 'events.k8s.io', 'events', ''],
      ['create', '', 'pods', ''],
      ['update', 'coordination.k8s.io', 'leases', ''],
    ])('refuses the worker %s %s/%s %s', async (verb, group, resource, subresource) => {
      expect(await allowed('homeostat-worker', { verb, group, resource, subresource, namespace: ns })).toBe(false);
    });

    it.each([
      ['watch', 'homeostat.dev', 'apps', ns],
      ['list', 'homeostat.dev', 'postgresdatabases', ns],
      ['watch', 'apps', 'deployments', ns],
      ['list', '', 'secrets', ns],
      ['update', 'coordination.k8s.io', 'leases', 'homeostat-system'],
      ['create', 'coordination.k8s.io', 'leases', 'homeostat-system'],
    ])('lets the bridge %s %s/%s in %s', async (verb, group, resource, namespace) => {
      expect(await allowed('homeostat-bridge', { verb, group, resource, namespace })).toBe(true);
    });

    it.each([
      ['create', 'authentication.k8s.io', 'tokenreviews', ''],
      ['create', 'authorization.k8s.io', 'subjectaccessreviews', ''],
      ['get', 'homeostat.dev', 'apps', ns],
      ['get', 'homeostat.dev', 'postgresdatabases', ns],
    ])('lets the api %s %s/%s in %s', async (verb, group, resource, namespace) => {
      expect(await allowed('homeostat-api', { verb, group, resource, namespace })).toBe(true);
    });

    it.each([
      ['get', '', 'secrets', ns],
      ['list', '', 'secrets', ''],
      ['patch', 'homeostat.dev', 'apps', ns],
      ['list', 'homeostat.dev', 'apps', ns],
      ['patch', 'homeostat.dev', 'apps/status', ns],
      ['create', '', 'pods', ns],
      ['create', '', 'secrets', ns],
      ['delete', 'homeostat.dev', 'postgresdatabases', ns],
    ])('refuses the api %s %s/%s in %s', async (verb, group, resource, namespace) => {
      expect(await allowed('homeostat-api', { verb, group, resource, namespace })).toBe(false);
    });

    it.each([
      ['get', '', 'secrets', ns],
      ['patch', 'homeostat.dev', 'apps', ns],
      ['create', 'apps', 'deployments', ns],
      ['update', 'coordination.k8s.io', 'leases', 'default'],
      ['patch', 'homeostat.dev', 'apps/status', ns],
    ])('refuses the bridge %s %s/%s in %s', async (verb, group, resource, namespace) => {
      expect(await allowed('homeostat-bridge', { verb, group, resource, namespace })).toBe(false);
    });
  });

  it('given docker-compose.yml, every published port is bound to 127.0.0.1, not to every interface', () => {
    const config = k8s.loadYaml<{ services: Record<string, { ports?: string[] }> }>(
      execFileSync('docker-compose', ['-f', join(root, 'docker-compose.yml'), 'config'], { encoding: 'utf8' }),
    );
    const ports = Object.entries(config.services).flatMap(([name, svc]) =>
      (svc.ports ?? []).map((p) => `${name} ${p}`),
    );
    expect(ports.length).toBeGreaterThanOrEqual(4);
    for (const p of ports) expect(p).toMatch(/^\S+ 127\.0\.0\.1:/);
  });

  it('given docker-compose.yml, the compose config check passes and lists homeostat’s services', () => {
    const services = execFileSync('docker-compose', ['-f', join(root, 'docker-compose.yml'), 'config', '--services'], {
      encoding: 'utf8',
    });
    expect(services.trim().split('\n').sort()).toEqual([
      'api',
      'bridge',
      'crds',
      'k3s',
      'kubeconfig',
      'postgresql',
      'temporal',
      'temporal-setup',
      'temporal-ui',
      'worker',
    ]);
  });
});
