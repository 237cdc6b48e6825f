/**
 * The HTTP API against the real kube-apiserver (TokenReview, SubjectAccessReview) and Temporal
 * (update-with-start, query, visibility), with a worker reconciling a real App object.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import SwaggerParser from '@apidevtools/swagger-parser';
import * as k8s from '@kubernetes/client-node';
import { defaultPayloadConverter } from '@temporalio/common';
import Ajv, { type ValidateFunction } from 'ajv';
import fc from 'fast-check';
import pino from 'pino';
import { apiEnvSchema, apiKindsOf, buildApiServer, KubernetesAuth, startApiComponent } from '../../api';
import { builtinOperator } from '../../builtin';
import { searchAttributeKeys, staticSummaryFor } from '../../core/definitions';
import { randomSuffix, useStack } from '../support/harness';
import { activityTypes } from '../support/histories';
import { installBuiltinCrds, type InProcessHomeostat, startInProcessHomeostat } from '../support/homeostat';

const execFileAsync = promisify(execFile);

describe('HTTP API', () => {
  const t = useStack();
  const taskQueue = `api-${randomSuffix()}`;
  const staticToken = randomBytes(24).toString('hex');
  const logLines: string[] = [];
  let app: Awaited<ReturnType<typeof buildApiServer>>;
  let homeostat: InProcessHomeostat | undefined;
  let allowedToken = '';
  let deniedToken = '';
  const path = (name: string, ns = t.namespace) => `/v1/objects/homeostat.dev/v1alpha1/App/${ns}/${name}`;

  beforeAll(async () => {
    installBuiltinCrds(t);
    const log = pino(
      { level: 'info', redact: { paths: ['req.headers.authorization'], censor: '[redacted]' } },
      new Writable({
        write(chunk: Buffer, _enc, cb) {
          logLines.push(chunk.toString());
          cb();
        },
      }),
    );
    homeostat = await startInProcessHomeostat(t, { taskQueue, logger: pino({ level: 'warn' }) });
    app = await buildApiServer({
      temporal: t.temporal,
      kc: t.kc,
      objects: k8s.KubernetesObjectApi.makeApiClient(t.kc),
      ...apiKindsOf(builtinOperator),
      auth: new KubernetesAuth({
        kc: t.kc,
        staticTokens: [{ token: staticToken, user: 'local-admin', groups: ['system:masters'] }],
      }),
      log,
      taskQueue,
      temporalUiUrl: t.endpoints.temporalUiUrl,
      rateLimitPerMinute: 1_000_000,
      reconcileWaitMs: 60_000,
    });
    await app.ready();

    // Two ServiceAccounts: one bound to a Role that allows reconcile and get on Apps, one not.
    const rbac = t.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    for (const name of ['allowed', 'denied']) {
      await t.core.createNamespacedServiceAccount({ namespace: t.namespace, body: { metadata: { name } } });
    }
    await rbac.createNamespacedRole({
      namespace: t.namespace,
      body: {
        metadata: { name: 'app-reconciler' },
        rules: [{ apiGroups: ['homeostat.dev'], resources: ['apps'], verbs: ['reconcile', 'get', 'list'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: t.namespace,
      body: {
        metadata: { name: 'app-reconciler' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'app-reconciler' },
        subjects: [{ kind: 'ServiceAccount', name: 'allowed', namespace: t.namespace }],
      },
    });
    const token = async (name: string): Promise<string> =>
      (
        await t.core.createNamespacedServiceAccountToken({
          namespace: t.namespace,
          name,
          body: { spec: { audiences: ['homeostat'], expirationSeconds: 3600 } },
        })
      ).status!.token;
    allowedToken = await token('allowed');
    deniedToken = await token('denied');

    await t.custom.createNamespacedCustomObject({
      group: 'homeostat.dev',
      version: 'v1alpha1',
      namespace: t.namespace,
      plural: 'apps',
      body: {
        apiVersion: 'homeostat.dev/v1alpha1',
        kind: 'App',
        metadata: { name: 'pony-api' },
        spec: { image: 'registry.spr.com/pony-spawner:v2.1.0', replicas: 2 },
      },
    });
  });

  afterAll(async () => {
    await app?.close();
    await homeostat?.stop();
  });

  const post = (url: string, token?: string, body?: unknown) =>
    app.inject({
      method: 'POST',
      url,
      headers: token ? { authorization: `Bearer ${token}` } : {},
      ...(body === undefined ? {} : { payload: body as object }),
    });

  it('given a ServiceAccount allowed by a Role, a reconcile returns the outcome of a real pass', async () => {
    const res = await post(`${path('pony-api')}/reconcile`, allowedToken);
    expect(res.statusCode).toBe(200);
    let body = res.json();
    expect(body.workflowId).toBe(`homeostat/homeostat.dev/App/${t.namespace}/pony-api`);
    expect(body.link).toContain('/namespaces/homeostat/workflows/');
    // On a stack running the whole cluster the first pass may find the Deployment still rolling out
    // (Reconciling; no bridge runs here to bring the next pass): each reconcile asked for is a real
    // pass, and one of them finds the rollout complete.
    expect(body.outcome).toMatchObject({ generation: 1, result: expect.stringMatching(/^(ready|reconciling)$/) });
    for (const deadline = Date.now() + 90_000; body.outcome.result !== 'ready' && Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 500));
      body = (await post(`${path('pony-api')}/reconcile`, allowedToken)).json();
    }
    expect(body.outcome).toMatchObject({ result: 'ready', phase: 'Ready', generation: 1 });
    expect(Object.keys(body.outcome.steps).sort()).toEqual(['config', 'deployment', 'service']);
    const state = await app.inject({
      method: 'GET',
      url: path('pony-api'),
      headers: { authorization: `Bearer ${allowedToken}` },
    });
    expect(state.statusCode).toBe(200);
    expect(state.json().state).toMatchObject({ phase: 'Ready', observedGeneration: 1 });
  });

  it('given no binding, no token or a forged token, it answers 403, 401 and 401 as problem documents', async () => {
    const denied = await post(`${path('pony-api')}/reconcile`, deniedToken);
    expect(denied.statusCode).toBe(403);
    expect(denied.headers['content-type']).toContain('application/problem+json');
    expect(denied.json()).toMatchObject({ code: 'ERR_FORBIDDEN', status: 403 });
    expect((await post(`${path('pony-api')}/reconcile`)).json()).toMatchObject({
      code: 'ERR_UNAUTHENTICATED',
      status: 401,
    });
    const [h, p] = allowedToken.split('.');
    const forged = `${h}.${p}.${Buffer.from('not the signature').toString('base64url')}`;
    expect((await post(`${path('pony-api')}/reconcile`, forged)).json()).toMatchObject({
      code: 'ERR_UNAUTHENTICATED',
      status: 401,
    });
    // Allowed in its own namespace only.
    expect((await post(`${path('pony-api', 'default')}/reconcile`, allowedToken)).statusCode).toBe(403);
  });

  it('given two concurrent reconciles of one object, they never run two passes at once', async () => {
    const [a, b] = await Promise.all([
      post(`${path('pony-api')}/reconcile`, allowedToken),
      post(`${path('pony-api')}/reconcile`, allowedToken),
    ]);
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    const passes = [a.json().outcome.pass as number, b.json().outcome.pass as number].sort();
    // Both share one pass (coalesced) or the second runs after the first: never two at once.
    expect(passes[1]! - passes[0]!).toBeLessThanOrEqual(1);
    // In the history, no pass observed while another pass's steps were still to come: between two
    // observes (local activities, recorded as markers in completion order) each step ran at most once.
    const history = await t.temporal.workflow
      .getHandle(`homeostat/homeostat.dev/App/${t.namespace}/pony-api`)
      .fetchHistory();
    const types = activityTypes(history);
    expect(types.filter((x) => x === 'observeObject').length).toBeGreaterThanOrEqual(2);
    let seen = new Map<string, number>();
    for (const type of types) {
      if (type === 'observeObject') seen = new Map();
      else if (type.startsWith('apps.homeostat.dev/')) {
        seen.set(type, (seen.get(type) ?? 0) + 1);
        expect({ type, times: seen.get(type) }).toEqual({ type, times: 1 });
      }
    }
  });

  it('given unknown kinds, missing objects and malformed requests, it answers 4xx problem documents', async () => {
    const cases: [string, string, number, string][] = [
      ['POST', `/v1/objects/homeostat.dev/v1alpha1/Unicorn/${t.namespace}/x/reconcile`, 404, 'ERR_UNKNOWN_KIND'],
      ['POST', `${path('no-such-app')}/reconcile`, 404, 'ERR_OBJECT_NOT_FOUND'],
      ['GET', path('no-such-app'), 404, 'ERR_NO_WORKFLOW'],
      ['POST', `/v1/objects/homeostat.dev/v1alpha1/App/${t.namespace}/Bad_Name/reconcile`, 400, 'ERR_VALIDATION'],
      ['POST', `/v1/objects/homeostat.dev/v1alpha1/App/_/x/reconcile`, 404, 'ERR_OBJECT_NOT_FOUND'], // scope: no such object
      ['POST', `${path('pony-api')}/reconcile?wait=maybe`, 400, 'ERR_VALIDATION'],
      ['GET', '/v1/objects', 400, 'ERR_VALIDATION'],
      ['GET', '/v1/nothing-here', 404, 'ERR_NOT_FOUND'],
    ];
    for (const [method, url, status, code] of cases) {
      const res = await app.inject({
        method: method as 'GET' | 'POST',
        url,
        headers: { authorization: `Bearer ${staticToken}` },
      });
      expect({ url, status: res.statusCode, code: res.json().code }).toEqual({ url, status, code });
      expect(res.headers['content-type']).toContain('application/problem+json');
    }
    const huge = await app.inject({
      method: 'POST',
      url: `${path('pony-api')}/reconcile`,
      headers: { authorization: `Bearer ${staticToken}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ reason: 'x'.repeat(100_000) }),
    });
    expect(huge.statusCode).toBe(413);
    expect(huge.json()).toMatchObject({ status: 413, code: 'ERR_PAYLOAD_TOO_LARGE' });
    const badJson = await app.inject({
      method: 'POST',
      url: `${path('pony-api')}/reconcile`,
      headers: { authorization: `Bearer ${staticToken}`, 'content-type': 'application/json' },
      payload: '{"reason":',
    });
    expect(badJson.statusCode).toBe(400);
    const extra = await post(`${path('pony-api')}/reconcile`, staticToken, { reason: 'ok', surprise: true });
    expect(extra.statusCode).toBe(400);
  });

  it('given a caller over the rate limit, it answers a documented 429 problem with Retry-After, never a 5xx', async () => {
    const limited = await buildApiServer({
      temporal: t.temporal,
      kc: t.kc,
      objects: k8s.KubernetesObjectApi.makeApiClient(t.kc),
      ...apiKindsOf(builtinOperator),
      auth: new KubernetesAuth({ kc: t.kc }),
      log: pino({ level: 'silent' }),
      taskQueue,
      rateLimitPerMinute: 3,
    });
    try {
      const statuses: number[] = [];
      let last: Awaited<ReturnType<typeof limited.inject>> | undefined;
      for (let i = 0; i < 6; i++) {
        last = await limited.inject({
          method: 'GET',
          url: '/v1/kinds',
          headers: { authorization: `Bearer ${allowedToken}` },
        });
        statuses.push(last.statusCode);
      }
      if (!last) throw new Error('no answer');
      expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
      expect(last.headers['content-type']).toContain('application/problem+json');
      expect(Number(last.headers['retry-after'])).toBeGreaterThan(0);
      expect(last.json()).toMatchObject({ status: 429, code: 'ERR_RATE_LIMITED', title: 'Too Many Requests' });
      expect(last.json().detail).toMatch(/rate limit of 3 requests per minute/);
      // Every route documents the 429 (and the 413 and 415 that Fastify answers) in the OpenAPI document.
      const doc = (await limited.inject({ method: 'GET', url: '/openapi.json' })).json();
      for (const [route, methods] of Object.entries(
        doc.paths as Record<string, Record<string, { responses: object }>>,
      )) {
        for (const [method, op] of Object.entries(methods)) {
          expect({ route, method, codes: Object.keys(op.responses) }).toEqual({
            route,
            method,
            codes: expect.arrayContaining(['400', '401', '403', '404', '413', '415', '429', '502', '503', '504']),
          });
        }
      }
    } finally {
      await limited.close();
    }
  });

  it('given a token minted for the API server rather than for homeostat, it is refused (TokenReview audiences)', async () => {
    const { status } = await t.core.createNamespacedServiceAccountToken({
      namespace: t.namespace,
      name: 'allowed',
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    const res = await post(`${path('pony-api')}/reconcile?wait=false`, status!.token);
    expect(res.statusCode).toBe(401);
    expect(res.json().detail).toMatch(/not meant for this API \(mint it with --audience homeostat\)/);
    expect((await post(`${path('pony-api')}/reconcile?wait=false`, allowedToken)).statusCode).toBe(202);
  });

  it('given opaque tokens may be reviewed and 1,000 requests with random bearer tokens from one address, the API server sees a bounded number of TokenReviews and the rest get a documented 429', async () => {
    // Counted by the API server itself.
    const reviews = async (): Promise<number> =>
      (
        await execFileAsync(t.stack.kubectl, ['--kubeconfig', t.endpoints.kubeconfig, 'get', '--raw', '/metrics'], {
          encoding: 'utf8',
          maxBuffer: 64 << 20,
        })
      ).stdout
        .split('\n')
        .filter((l) => l.startsWith('apiserver_request_total{') && l.includes('resource="tokenreviews"'))
        .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    const guarded = await buildApiServer({
      temporal: t.temporal,
      kc: t.kc,
      objects: k8s.KubernetesObjectApi.makeApiClient(t.kc),
      ...apiKindsOf(builtinOperator),
      // Opaque tokens are refused without a TokenReview unless a webhook authenticator needs them
      // reviewed (tenant-isolation-api.test.ts); reviewed, they spend the per-address budget.
      auth: new KubernetesAuth({ kc: t.kc, reviewOpaqueTokens: true }),
      log: pino({ level: 'silent' }),
      taskQueue,
      rateLimitPerMinute: 1_000_000,
    });
    try {
      const before = await reviews();
      const statuses = new Map<number, number>();
      let limited: Awaited<ReturnType<typeof guarded.inject>> | undefined;
      for (let i = 0; i < 1000; i++) {
        const res = await guarded.inject({
          method: 'GET',
          url: path('pony-api'),
          headers: { authorization: `Bearer ${randomBytes(24).toString('base64url')}` },
        });
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        if (res.statusCode === 429) limited = res;
      }
      const spent = (await reviews()) - before;
      process.stdout.write(
        `[figures] api random tokens: 1000 requests, ${spent} TokenReviews, statuses ${JSON.stringify(Object.fromEntries(statuses))}\n`,
      );
      expect(Object.fromEntries(statuses)).toEqual({ 401: 30, 429: 970 });
      // Other test files may review tokens meanwhile: a little slack above the budget of 30.
      expect(spent).toBeGreaterThanOrEqual(30);
      expect(spent).toBeLessThan(60);
      if (!limited) throw new Error('never limited');
      expect(limited.json()).toMatchObject({ status: 429, code: 'ERR_RATE_LIMITED' });
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await guarded.close();
    }
  });

  it('given a certificate, the API process serves HTTPS only: a client trusting the CA gets in, plain HTTP does not, and the CLI talks HTTPS; stopping it twice (SIGINT and SIGTERM) is one stop', async () => {
    const cert = t.stack.servingCertificate('homeostat-api-test');
    const running = await startApiComponent({
      config: apiEnvSchema.parse({
        HOMEOSTAT_TASK_QUEUE: taskQueue,
        KUBECONFIG: t.endpoints.kubeconfig,
        HOMEOSTAT_API_PORT: '0',
        HOMEOSTAT_API_HOST: '127.0.0.1',
        HOMEOSTAT_API_TLS_CERT_FILE: cert.cert,
        HOMEOSTAT_API_TLS_KEY_FILE: cert.key,
        LOG_LEVEL: 'error',
      }),
      temporal: {
        connectionOptions: { address: t.endpoints.temporalAddress },
        namespace: t.endpoints.temporalNamespace,
      },
      operator: builtinOperator,
    });
    try {
      expect(running.address).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const ca = readFileSync(cert.ca);
      const status = (getter: typeof httpsGet, url: string, options: object): Promise<number> =>
        new Promise((resolve, reject) => {
          getter(url, options, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          }).on('error', reject);
        });
      expect(await status(httpsGet, `${running.address}/healthz`, { ca })).toBe(200);
      await expect(status(httpsGet, `${running.address}/healthz`, {})).rejects.toThrow(/certificate/);
      await expect(status(httpGet, `${running.address.replace('https:', 'http:')}/healthz`, {})).rejects.toThrow();
      const { stdout } = await execFileAsync(
        process.execPath,
        [
          '--import',
          'tsx',
          join(__dirname, '../../cli/homeostat.ts'),
          'get',
          'App',
          `${t.namespace}/pony-api`,
          '-o',
          'json',
          '--api',
          running.address,
        ],
        {
          encoding: 'utf8',
          env: { ...process.env, HOMEOSTAT_API_TOKEN: allowedToken, HOMEOSTAT_API_CA_FILE: cert.ca },
        },
      );
      expect(JSON.parse(stdout).state.phase).toBe('Ready');
    } finally {
      // SIGINT and SIGTERM both stop the API process (a Ctrl-C reaches the whole process group): the
      // second stop is the first one, not a second close of the server and the connection.
      const stopping = running.stop();
      expect(running.stop()).toBe(stopping);
      await stopping;
    }
  });

  it('given ?wait=false, it answers 202 with the workflow link; listing finds the object by kind, namespace and phase', async () => {
    const res = await post(`${path('pony-api')}/reconcile?wait=false`, allowedToken);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({
      accepted: true,
      workflowId: `homeostat/homeostat.dev/App/${t.namespace}/pony-api`,
    });
    let items: { name?: string; phase?: string }[] = [];
    for (let i = 0; i < 50 && items.length === 0; i++) {
      const list = await app.inject({
        method: 'GET',
        url: `/v1/objects?kind=App&namespace=${t.namespace}&phase=Ready`,
        headers: { authorization: `Bearer ${allowedToken}` },
      });
      expect(list.statusCode).toBe(200);
      items = list.json().items;
      if (items.length === 0) await new Promise((r) => setTimeout(r, 200));
    }
    expect(items).toEqual([
      expect.objectContaining({ name: 'pony-api', phase: 'Ready', namespace: t.namespace, kind: 'App' }),
    ]);
    const forbidden = await app.inject({
      method: 'GET',
      url: '/v1/objects?kind=App',
      headers: { authorization: `Bearer ${allowedToken}` },
    });
    expect(forbidden.statusCode).toBe(403); // cluster-wide list needs a ClusterRole
  });

  it('given pages of a list, the API’s page token leads to the next page; a token it did not issue, or one for another query, is a 400 without asking Temporal', async () => {
    const list = (query: string) =>
      app.inject({ method: 'GET', url: `/v1/objects?${query}`, headers: { authorization: `Bearer ${staticToken}` } });
    // Two App workflows at least: pony-api's and this one's.
    await t.custom.createNamespacedCustomObject({
      group: 'homeostat.dev',
      version: 'v1alpha1',
      namespace: t.namespace,
      plural: 'apps',
      body: {
        apiVersion: 'homeostat.dev/v1alpha1',
        kind: 'App',
        metadata: { name: 'paged' },
        spec: { image: 'nginx:1.27', replicas: 1 },
      },
    });
    expect((await post(`${path('paged')}/reconcile`, staticToken)).statusCode).toBe(200);
    const first = await list('kind=App&pageSize=1');
    expect(first.statusCode).toBe(200);
    const token = first.json().nextPageToken as string;
    expect(token).toMatch(/^[A-Za-z0-9_-]{22,}$/);
    const second = await list(`kind=App&pageSize=1&pageToken=${token}`);
    expect(second.statusCode).toBe(200);
    expect(second.json().items[0].workflowId).not.toBe(first.json().items[0].workflowId);
    const started = Date.now();
    for (const query of [
      `kind=App&pageSize=1&phase=Ready&pageToken=${token}`, // another query
      'kind=App&pageToken=222', // made up
      `kind=App&pageSize=1&pageToken=${token.slice(0, -2)}AA`, // tampered
    ]) {
      const res = await list(query);
      expect({ query, status: res.statusCode, code: res.json().code }).toEqual({
        query,
        status: 400,
        code: 'ERR_VALIDATION',
      });
    }
    expect(Date.now() - started).toBeLessThan(5_000); // answered here, not after Temporal's deadline
  });

  it('given a reconcile started through the API, the workflow has the summary and search attributes from its start, like one the bridge starts', async () => {
    const name = `started-${randomSuffix()}`;
    await t.custom.createNamespacedCustomObject({
      group: 'homeostat.dev',
      version: 'v1alpha1',
      namespace: t.namespace,
      plural: 'apps',
      body: {
        apiVersion: 'homeostat.dev/v1alpha1',
        kind: 'App',
        metadata: { name },
        spec: { image: 'registry.spr.com/pony-spawner:v2.1.0' },
      },
    });
    const res = await post(`${path(name)}/reconcile?wait=false`, allowedToken);
    expect(res.statusCode).toBe(202);
    const handle = t.temporal.workflow.getHandle(res.json().workflowId);
    // The start event itself carries them: no pass (and no upsert) is needed for the UI to name the object.
    const [started] = (await handle.fetchHistory()).events ?? [];
    const ref = { group: 'homeostat.dev', version: 'v1alpha1', kind: 'App', namespace: t.namespace, name };
    expect(started?.userMetadata?.summary).toBeDefined();
    expect(defaultPayloadConverter.fromPayload(started!.userMetadata!.summary!)).toBe(staticSummaryFor(ref));
    const fields = started?.workflowExecutionStartedEventAttributes?.searchAttributes?.indexedFields ?? {};
    const attr = (key: string): unknown => {
      const value = defaultPayloadConverter.fromPayload(fields[key]!);
      return Array.isArray(value) ? value[0] : value;
    };
    expect(attr(searchAttributeKeys.kind.name)).toBe('App');
    expect(attr(searchAttributeKeys.namespace.name)).toBe(t.namespace);
    expect(attr(searchAttributeKeys.name.name)).toBe(name);
    const description = await handle.describe();
    expect(await description.staticSummary()).toBe(staticSummaryFor(ref));
  });

  it('given GET /v1/kinds, an authenticated caller gets every kind with plural, scope and short names; no token or a forged one gets 401', async () => {
    const res = await app.inject({
      method: 'GET',
      url: '/v1/kinds',
      headers: { authorization: `Bearer ${deniedToken}` }, // any authenticated caller: kinds are not secret
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().kinds).toEqual(
      expect.arrayContaining([
        {
          group: 'homeostat.dev',
          version: 'v1alpha1',
          kind: 'PostgresDatabase',
          plural: 'postgresdatabases',
          scope: 'Namespaced',
          shortNames: ['pgdb'],
        },
        {
          group: 'homeostat.dev',
          version: 'v1alpha1',
          kind: 'App',
          plural: 'apps',
          scope: 'Namespaced',
          shortNames: ['hsapp'],
        },
      ]),
    );
    expect(res.json().kinds).toHaveLength(builtinOperator.reconcilers.length);
    const [h, p] = allowedToken.split('.');
    for (const headers of [
      {},
      { authorization: `Bearer ${h}.${p}.${Buffer.from('not the signature').toString('base64url')}` },
      { authorization: `Bearer ${'x'.repeat(8000)}` },
      { authorization: 'Basic YWRtaW46YWRtaW4=' },
    ]) {
      const denied = await app.inject({ method: 'GET', url: '/v1/kinds', headers });
      expect(denied.statusCode).toBe(401);
      expect(denied.headers['content-type']).toContain('application/problem+json');
      expect(denied.json()).toMatchObject({ code: 'ERR_UNAUTHENTICATED', status: 401 });
    }
  });

  it('given the OpenAPI document, it is valid and lists every route', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    await SwaggerParser.validate(structuredClone(doc));
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/v1/kinds',
      '/v1/objects',
      '/v1/objects/{group}/{version}/{kind}/{namespace}/{name}',
      '/v1/objects/{group}/{version}/{kind}/{namespace}/{name}/approve',
      '/v1/objects/{group}/{version}/{kind}/{namespace}/{name}/plan',
      '/v1/objects/{group}/{version}/{kind}/{namespace}/{name}/reconcile',
      '/v1/objects/{group}/{version}/{kind}/{namespace}/{name}/reject',
    ]);
  });

  it('given 5,000 requests generated from the OpenAPI document (good, bad and missing tokens, over the rate limit too), none gets a 5xx and every answer conforms to the document', async () => {
    interface Operation {
      parameters?: { in: string; name: string; schema?: { enum?: string[]; type?: string } }[];
      requestBody?: unknown;
      responses: Record<string, { content?: Record<string, { schema: object }> }>;
    }
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, Record<string, Operation>>;
    }>();
    const operations = Object.entries(doc.paths).flatMap(([route, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ route, method: method.toUpperCase(), op })),
    );
    expect(operations.length).toBeGreaterThanOrEqual(4);
    const ajv = new Ajv({ strict: false, validateFormats: false });
    const validators = new Map<object, ValidateFunction>();
    const validate = (schema: object): ValidateFunction => {
      let v = validators.get(schema);
      if (!v) validators.set(schema, (v = ajv.compile(schema)));
      return v;
    };
    // Over its rate limit within the run: a tenth of the requests go to an API that allows 50 a minute.
    const limited = await buildApiServer({
      temporal: t.temporal,
      kc: t.kc,
      objects: k8s.KubernetesObjectApi.makeApiClient(t.kc),
      ...apiKindsOf(builtinOperator),
      auth: new KubernetesAuth({
        kc: t.kc,
        staticTokens: [{ token: staticToken, user: 'local-admin', groups: ['system:masters'] }],
      }),
      log: pino({ level: 'silent' }),
      taskQueue,
      rateLimitPerMinute: 50,
      reconcileWaitMs: 3_000,
    });
    const hostile = fc.oneof(
      fc.constantFrom(
        '',
        '_',
        '..',
        '%00',
        '%2F',
        'kube-system',
        'default',
        'x'.repeat(300),
        'CON',
        "a'b",
        'a" OR 1=1',
      ),
      fc.string({ maxLength: 40 }),
    );
    const pick = (known: string[]) =>
      fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: hostile });
    const pathValues: Record<string, fc.Arbitrary<string>> = {
      group: pick(['homeostat.dev', 'core']),
      version: pick(['v1alpha1', 'v1']),
      kind: pick(['App', 'PostgresDatabase', 'PostgresServer', 'Unicorn']),
      namespace: pick([t.namespace, '_']),
      name: pick(['pony-api', 'no-such-app', 'Bad_Name']),
    };
    const queryValue = (p: NonNullable<Operation['parameters']>[number]) =>
      p.schema?.enum
        ? pick(p.schema.enum)
        : fc.oneof(
            pick(
              p.name === 'kind' ? ['App', 'PostgresDatabase'] : p.name === 'namespace' ? [t.namespace] : ['1', '50'],
            ),
            fc.integer({ min: -5, max: 500 }).map(String),
          );
    const request = fc.constantFrom(...operations).chain(({ route, method, op }) =>
      fc.record({
        route: fc.constant(route),
        method: fc.constant(method),
        op: fc.constant(op),
        path: fc.record(
          Object.fromEntries(
            (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => [p.name, pathValues[p.name] ?? hostile]),
          ),
        ),
        query: fc.array(
          fc
            .constantFrom(...(op.parameters ?? []).filter((p) => p.in === 'query'), { in: 'query', name: 'surprise' })
            .chain((p) => queryValue(p).map((v) => [p.name, v] as const)),
          { maxLength: 4 },
        ),
        body: op.requestBody
          ? fc.option(
              fc.oneof(
                fc.constant('{"reason":"fuzz"}'),
                fc.constant(JSON.stringify({ reason: 'x'.repeat(300) })),
                fc.constant(JSON.stringify({ reason: 'x'.repeat(20_000) })),
                fc.json(),
                fc.string({ maxLength: 50 }),
              ),
              { nil: undefined },
            )
          : fc.constant(undefined),
        contentType: fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded'),
        auth: fc.constantFrom('static', 'allowed', 'denied', 'random', 'none', 'basic', 'empty'),
        limited: fc.boolean().map((b) => b && Math.random() < 0.2),
      }),
    );
    const statuses = new Map<number, number>();
    const problems: string[] = [];
    let requests = 0;
    let fivexx = 0;
    const problems5xx: string[] = [];
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        requests++;
        const url =
          r.route.replace(/\{(\w+)\}/g, (_, name: string) =>
            encodeURIComponent((r.path as Record<string, string>)[name] ?? 'x'),
          ) + (r.query.length ? `?${r.query.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}` : '');
        const headers: Record<string, string> = {};
        const tokens: Record<string, string | undefined> = {
          static: `Bearer ${staticToken}`,
          allowed: `Bearer ${allowedToken}`,
          denied: `Bearer ${deniedToken}`,
          random: `Bearer ${randomBytes(12).toString('hex')}`,
          basic: 'Basic YTpi',
          empty: 'Bearer ',
        };
        if (tokens[r.auth]) headers.authorization = tokens[r.auth]!;
        if (r.body !== undefined) headers['content-type'] = r.contentType;
        const res = await (r.limited ? limited : app).inject({
          method: r.method as 'GET',
          url,
          headers,
          ...(r.body === undefined ? {} : { payload: r.body }),
        });
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        if (res.statusCode >= 500) {
          fivexx++;
          problems5xx.push(`${r.method} ${url} (${r.auth}) → ${res.statusCode} ${res.body.slice(0, 160)}`);
        }
        const where = `${r.method} ${url} (${r.auth}) → ${res.statusCode}`;
        const documented = r.op.responses[String(res.statusCode)];
        if (!documented) problems.push(`${where}: status not in the document`);
        else if (res.statusCode !== 204) {
          const [mediaType, media] = Object.entries(documented.content ?? {})[0] ?? [];
          const type = String(res.headers['content-type'] ?? '');
          if (!mediaType || !type.startsWith(mediaType))
            problems.push(`${where}: content-type ${type}, documented ${mediaType}`);
          else if (!validate(media!.schema)(res.json())) {
            problems.push(
              `${where}: body ${res.body.slice(0, 200)} does not match: ${ajv.errorsText(validate(media!.schema).errors)}`,
            );
          }
        }
        return true;
      }),
      { numRuns: 5000 },
    );
    await limited.close();
    process.stdout.write(
      `[figures] api contract fuzz: ${requests} requests from the OpenAPI document, ${fivexx} 5xx, ${problems.length} non-conforming; statuses ${JSON.stringify(Object.fromEntries(statuses))}\n`,
    );
    expect({
      fivexx,
      fivexxExamples: problems5xx.slice(0, 5),
      problems: problems.slice(0, 10),
      count: problems.length,
    }).toEqual({
      fivexx: 0,
      fivexxExamples: [],
      problems: [],
      count: 0,
    });
    expect(requests).toBeGreaterThanOrEqual(5000);
    expect(statuses.get(429)).toBeGreaterThan(0);
    expect(statuses.get(200)).toBeGreaterThan(0);
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });

  it('given the CLI, reconcile, get and list talk to the API and print tables or JSON', async () => {
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    // Asynchronous: the API answers from this very process.
    // The token comes from the environment (or a file), never from the command line.
    const run = async (env: Record<string, string>, ...args: string[]): Promise<string> =>
      (
        await execFileAsync(
          process.execPath,
          ['--import', 'tsx', join(__dirname, '../../cli/homeostat.ts'), ...args, '--api', url],
          { encoding: 'utf8', env: { ...process.env, ...env } },
        )
      ).stdout;
    const cli = (...args: string[]): Promise<string> => run({ HOMEOSTAT_API_TOKEN: staticToken }, ...args);
    const reconciled = await cli('reconcile', 'app', `${t.namespace}/pony-api`);
    expect(reconciled).toMatch(new RegExp(`^App ${t.namespace}/pony-api: pass \\d+ ready, phase Ready, generation 1`));
    expect(reconciled).toMatch(
      /STEP\s+STATUS\s+ATTEMPTS\s+MESSAGE\nconfig\s+succeeded\s+1\s+ConfigMap pony-api-config: 0 keys\ndeployment\s+succeeded/,
    );
    expect(JSON.parse(await cli('get', 'App', `${t.namespace}/pony-api`, '-o', 'json')).state.phase).toBe('Ready');
    const tokenFile = join(mkdtempSync(join(tmpdir(), 'homeostat-token-')), 'token');
    writeFileSync(tokenFile, `${staticToken}\n`, { mode: 0o600 });
    expect(
      JSON.parse(await run({}, 'get', 'App', `${t.namespace}/pony-api`, '-o', 'json', '--token-file', tokenFile)).state
        .phase,
    ).toBe('Ready');
    await expect(run({}, 'get', 'App', `${t.namespace}/pony-api`, '--token', staticToken)).rejects.toThrow(
      /a token on the command line is visible to every user in the process list/,
    );
    await expect(
      run({}, 'get', 'App', `${t.namespace}/pony-api`, '--token-file', `${tokenFile}.missing`),
    ).rejects.toThrow(/cannot read the token file/);
    const listed = await cli('list', 'apps', '-n', t.namespace);
    expect(listed).toMatch(/^NAMESPACE\s+NAME\s+PHASE\s+GENERATION\s+WORKFLOW\n/);
    expect(listed).toMatch(new RegExp(`\\n${t.namespace}\\s+pony-api\\s+Ready\\s+1\\s+RUNNING(\\n|$)`));
    await expect(cli('get', 'Unicorn', 'x/y')).rejects.toThrow(/unknown kind Unicorn/);
    // Short names and plural.group resolve through GET /v1/kinds, as kubectl resolves them.
    expect(JSON.parse(await cli('get', 'hsapp', `${t.namespace}/pony-api`, '-o', 'json')).state.phase).toBe('Ready');
    expect(
      JSON.parse(await cli('get', 'apps.homeostat.dev', `${t.namespace}/pony-api`, '-o', 'json')).state.phase,
    ).toBe('Ready');
    await expect(cli('get', 'pgdb', `${t.namespace}/no-such-db`)).rejects.toThrow(
      /404 ERR_NO_WORKFLOW: no workflow for PostgresDatabase/,
    );
  });

  it('given all of the above, no token or secret value appears in the captured logs', () => {
    const text = logLines.join('');
    expect(text.length).toBeGreaterThan(0);
    expect(text).toContain('reconcile requested');
    for (const secret of [staticToken, allowedToken, deniedToken]) expect(text).not.toContain(secret);
  });
});
