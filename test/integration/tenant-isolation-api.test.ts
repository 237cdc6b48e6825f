/**
 * Tenant isolation of the HTTP API (issue 31): junk bearer tokens cannot lock a valid caller out nor
 * spend the API server's TokenReviews, forged JWTs are refused without one, and SubjectAccessReview
 * answers are cached. The API runs as a ServiceAccount of its own in homeostat's namespace, bound to
 * deploy/rbac's `homeostat-api` ClusterRole, so the API server's audit log counts its reviews exactly
 * (other test files running meanwhile have identities of their own); the API server's metrics give
 * the same figures for the whole server.
 */
import { execFile, execFileSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes, sign, type KeyObject, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import pino from 'pino';
import { apiKindsOf, buildApiServer, KubernetesAuth } from '../../api';
import { builtinOperator } from '../../builtin';
import { randomSuffix, useStack } from '../support/harness';

const execFileAsync = promisify(execFile);
const root = join(__dirname, '..', '..');
const systemNamespace = 'homeostat-system';
const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');

/** A compact JWS signed with `key` (RS256), or unsigned (`alg: none`) without one. */
function jws(header: Record<string, unknown>, claims: Record<string, unknown>, key?: KeyObject): string {
  const input = `${b64(header)}.${b64(claims)}`;
  return `${input}.${key ? sign('sha256', Buffer.from(input), key).toString('base64url') : ''}`;
}

interface AuditEvent {
  readonly stage: string;
  readonly verb: string;
  readonly user: { readonly username: string };
  readonly objectRef?: { readonly resource?: string };
}

describe('tenant isolation: the HTTP API', () => {
  const t = useStack();
  const suffix = randomSuffix();
  const apiUser = `isolation-api-${suffix}`;
  const kubectl = (...args: string[]): string =>
    execFileSync(t.stack.kubectl, ['--kubeconfig', t.endpoints.kubeconfig, ...args], { encoding: 'utf8' });
  let apiKc: k8s.KubeConfig;
  let issuer = '';
  let kid = '';

  /** Reviews of `resource` made by this file's API identity, from the audit log (written before each answer). */
  const audited = (resource: 'tokenreviews' | 'subjectaccessreviews'): number =>
    readFileSync(t.stack.auditLog, 'utf8')
      .split('\n')
      .filter((l) => l.includes(apiUser) && l.includes(resource))
      .map((l) => JSON.parse(l) as AuditEvent)
      .filter(
        (e) =>
          e.stage === 'ResponseComplete' &&
          e.verb === 'create' &&
          e.user.username === `system:serviceaccount:${systemNamespace}:${apiUser}` &&
          e.objectRef?.resource === resource,
      ).length;
  /** Reviews of `resource` the API server served to anyone, from its own metrics. */
  const served = async (resource: 'tokenreviews' | 'subjectaccessreviews'): Promise<number> =>
    (
      await execFileAsync(t.stack.kubectl, ['--kubeconfig', t.endpoints.kubeconfig, 'get', '--raw', '/metrics'], {
        encoding: 'utf8',
        maxBuffer: 64 << 20,
      })
    ).stdout
      .split('\n')
      .filter(
        (l) =>
          l.startsWith('apiserver_request_total{') && l.includes(`resource="${resource}"`) && l.includes('verb="POST"'),
      )
      .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);

  /** A bound token of ServiceAccount `name` in `namespace`, for `audiences`. */
  const tokenOf = async (namespace: string, name: string, audiences: string[]): Promise<string> =>
    (
      await t.core.createNamespacedServiceAccountToken({
        namespace,
        name,
        body: { spec: { audiences, expirationSeconds: 3600 } },
      })
    ).status!.token;

  const apiWith = (auth: KubernetesAuth) =>
    buildApiServer({
      temporal: t.temporal,
      kc: apiKc,
      objects: k8s.KubernetesObjectApi.makeApiClient(apiKc),
      ...apiKindsOf(builtinOperator),
      auth,
      log: pino({ level: 'silent' }),
      taskQueue: `isolation-api-${suffix}`,
      rateLimitPerMinute: 1_000_000,
    });
  const list = (app: Awaited<ReturnType<typeof apiWith>>, token: string) =>
    app.inject({
      method: 'GET',
      url: `/v1/objects?kind=App&namespace=${t.namespace}`,
      remoteAddress: '203.0.113.7', // every caller behind one NAT
      headers: { authorization: `Bearer ${token}` },
    });

  beforeAll(async () => {
    kubectl('apply', '--server-side', '-f', join(root, 'deploy/base/namespace.yaml'));
    kubectl('apply', '--server-side', '-k', join(root, 'deploy/rbac'));
    await t.core.createNamespacedServiceAccount({ namespace: systemNamespace, body: { metadata: { name: apiUser } } });
    const rbac = t.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: apiUser },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'homeostat-api' },
        subjects: [{ kind: 'ServiceAccount', name: apiUser, namespace: systemNamespace }],
      },
    });
    const cluster = t.kc.getCurrentCluster()!;
    apiKc = new k8s.KubeConfig();
    apiKc.loadFromOptions({
      clusters: [{ ...cluster, name: 'stack' }],
      users: [{ name: apiUser, token: await tokenOf(systemNamespace, apiUser, []) }],
      contexts: [{ name: apiUser, cluster: 'stack', user: apiUser }],
      currentContext: apiUser,
    });
    issuer = (JSON.parse(kubectl('get', '--raw', '/.well-known/openid-configuration')) as { issuer: string }).issuer;
    kid = (JSON.parse(kubectl('get', '--raw', '/openid/v1/jwks')) as { keys: { kid: string }[] }).keys[0]!.kid;

    // A caller allowed to list Apps in the test's namespace.
    await t.core.createNamespacedServiceAccount({ namespace: t.namespace, body: { metadata: { name: 'backend' } } });
    await rbac.createNamespacedRole({
      namespace: t.namespace,
      body: {
        metadata: { name: 'app-reader' },
        rules: [{ apiGroups: ['homeostat.dev'], resources: ['apps'], verbs: ['list'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: t.namespace,
      body: {
        metadata: { name: 'app-reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'app-reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'backend', namespace: t.namespace }],
      },
    });
  });

  afterAll(async () => {
    await t.kc
      .makeApiClient(k8s.RbacAuthorizationV1Api)
      .deleteClusterRoleBinding({ name: apiUser })
      .catch(() => undefined);
    await t.core.deleteNamespacedServiceAccount({ namespace: systemNamespace, name: apiUser }).catch(() => undefined);
  });

  it('given 1,000 junk tokens from one address (random strings, alg none, self-signed, right key but wrong audience, expired, foreign issuer), a valid never-seen token from it gets 200 and the junk cost no TokenReview', async () => {
    const auth = new KubernetesAuth({ kc: apiKc });
    const app = await apiWith(auth);
    try {
      const now = Math.floor(Date.now() / 1000);
      const claims = (over: Record<string, unknown> = {}) => ({
        iss: issuer,
        aud: ['homeostat'],
        sub: `system:serviceaccount:${t.namespace}:backend`,
        iat: now,
        nbf: now,
        exp: now + 3600,
        ...over,
      });
      const clusterKey = createPrivateKey(readFileSync(join(t.stack.dir, 'pki', 'sa.key')));
      const ownKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
      const minted = await tokenOf(t.namespace, 'backend', []); // real, for the API server's audience
      const junk: Record<string, () => string> = {
        random: () => randomBytes(24).toString('base64url'),
        'alg none': () => jws({ alg: 'none', typ: 'JWT' }, claims()),
        'self-signed': () => jws({ alg: 'RS256', kid }, claims({ jti: randomBytes(8).toString('hex') }), ownKey),
        'self-signed, unknown kid': () => jws({ alg: 'RS256', kid: randomBytes(8).toString('hex') }, claims(), ownKey),
        'right key, wrong audience': () => jws({ alg: 'RS256', kid }, claims({ aud: ['vault'] }), clusterKey),
        'minted for the API server': () => minted,
        'right key, expired': () =>
          jws({ alg: 'RS256', kid }, claims({ nbf: now - 7200, exp: now - 3600 }), clusterKey),
        'foreign issuer': () => jws({ alg: 'RS256', kid }, claims({ iss: 'https://evil.example' }), clusterKey),
      };
      const kinds = Object.keys(junk);
      const statuses = new Map<string, number>();
      const [auditedBefore, servedBefore] = [audited('tokenreviews'), await served('tokenreviews')];
      for (let i = 0; i < 1000; i++) {
        const kind = kinds[i % kinds.length]!;
        const res = await list(app, junk[kind]!());
        const k = `${kind}: ${res.statusCode}`;
        statuses.set(k, (statuses.get(k) ?? 0) + 1);
      }
      const [auditedJunk, servedJunk] = [
        audited('tokenreviews') - auditedBefore,
        (await served('tokenreviews')) - servedBefore,
      ];
      const reviewedForJunk = auth.counts.tokenReviews;
      const valid = await list(app, await tokenOf(t.namespace, 'backend', ['homeostat']));
      process.stdout.write(
        `[figures] api junk tokens: 1000 requests, TokenReviews by this API ${auditedJunk} (audit log), by the whole API server ${servedJunk} (metrics); ${JSON.stringify(Object.fromEntries(statuses))}; refusals ${JSON.stringify(auth.counts.refusals)}; then a valid token: ${valid.statusCode}\n`,
      );
      expect([...statuses.keys()].every((k) => k.endsWith(': 401'))).toBe(true);
      expect(auditedJunk).toBe(0);
      expect(reviewedForJunk).toBe(0);
      expect(valid.statusCode).toBe(200);
      expect(auth.counts.tokenReviews).toBe(1); // the valid token still goes to TokenReview (revocation)
      expect(audited('tokenreviews') - auditedBefore).toBe(1);
      // Refused locally for what they are: the cluster's keys were fetched through the API's own RBAC.
      expect(auth.counts.refusals).toMatchObject({
        opaque: 125,
        unsigned: 125,
        'bad-signature': 125,
        'unknown-key': 125,
        'wrong-audience': 250,
        expired: 125,
        'unknown-issuer': 125,
      });
      const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(metrics).toContain('homeostat_api_auth_refusals_total{reason="opaque"} 125');
      expect(metrics).toContain('homeostat_api_token_reviews_total 1');
    } finally {
      await app.close();
    }
  });

  it('given a token of a deleted ServiceAccount, it verifies locally but TokenReview refuses it (revocation)', async () => {
    await t.core.createNamespacedServiceAccount({ namespace: t.namespace, body: { metadata: { name: 'leaving' } } });
    const token = await tokenOf(t.namespace, 'leaving', ['homeostat']);
    await t.core.deleteNamespacedServiceAccount({ namespace: t.namespace, name: 'leaving' });
    const auth = new KubernetesAuth({ kc: apiKc });
    const app = await apiWith(auth);
    try {
      expect(await auth.check(token)).toEqual({ verdict: 'verified', issuer });
      expect((await list(app, token)).statusCode).toBe(401);
      expect(auth.counts.tokenReviews).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('given 20 requests of one caller, the API server sees one SubjectAccessReview; another access is a review of its own', async () => {
    // An allowed answer kept for 10 minutes, so the figure does not depend on the machine's pace.
    const auth = new KubernetesAuth({ kc: apiKc, allowedCacheMs: 600_000 });
    const app = await apiWith(auth);
    try {
      const token = await tokenOf(t.namespace, 'backend', ['homeostat']);
      const [auditedBefore, servedBefore] = [audited('subjectaccessreviews'), await served('subjectaccessreviews')];
      for (let i = 0; i < 20; i++) expect((await list(app, token)).statusCode).toBe(200);
      const [auditedSpent, servedSpent] = [
        audited('subjectaccessreviews') - auditedBefore,
        (await served('subjectaccessreviews')) - servedBefore,
      ];
      process.stdout.write(
        `[figures] api SubjectAccessReviews for 20 requests of one caller: ${auditedSpent} by this API (audit log), ${servedSpent} by the whole API server (metrics); cache hits ${auth.counts.accessCacheHits}\n`,
      );
      expect(auditedSpent).toBe(1);
      expect(auth.counts).toMatchObject({ accessReviews: 1, accessCacheHits: 19 });
      // Another namespace is another question (denied here): reviewed, not answered from the cache.
      const other = await app.inject({
        method: 'GET',
        url: '/v1/objects?kind=App&namespace=default',
        headers: { authorization: `Bearer ${token}` },
      });
      expect(other.statusCode).toBe(403);
      expect(audited('subjectaccessreviews') - auditedBefore).toBe(2);
    } finally {
      await app.close();
    }
  });
});
