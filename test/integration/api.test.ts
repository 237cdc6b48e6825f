/**
 * The HTTP API against the real kube-apiserver (TokenReview, SubjectAccessReview) and Temporal
 * (update-with-start, query, visibility), with a worker reconciling a real App object.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import SwaggerParser from '@apidevtools/swagger-parser';
import * as k8s from '@kubernetes/client-node';
import { defaultPayloadConverter } from '@temporalio/common';
import fc from 'fast-check';
import pino from 'pino';
import { apiKindsOf, buildApiServer, KubernetesAuth } from '../../api';
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
          body: { spec: { audiences: [], expirationSeconds: 3600 } },
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
    const body = res.json();
    expect(body.workflowId).toBe(`homeostat/homeostat.dev/App/${t.namespace}/pony-api`);
    expect(body.link).toContain('/namespaces/homeostat/workflows/');
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
      ['POST', `/v1/objects/homeostat.dev/v1alpha1/App/_/x/reconcile`, 400, 'ERR_VALIDATION'],
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
      let last;
      for (let i = 0; i < 6; i++) {
        last = await limited.inject({
          method: 'GET',
          url: '/v1/kinds',
          headers: { authorization: `Bearer ${allowedToken}` },
        });
        statuses.push(last.statusCode);
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
      expect(last!.headers['content-type']).toContain('application/problem+json');
      expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
      expect(last!.json()).toMatchObject({ status: 429, code: 'ERR_RATE_LIMITED', title: 'Too Many Requests' });
      expect(last!.json().detail).toMatch(/rate limit of 3 requests per minute/);
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
      '/v1/objects/{group}/{version}/{kind}/{namespace}/{name}/reconcile',
    ]);
  });

  it('given 5,000 random and mutated requests, none gets a 5xx and the server keeps answering', async () => {
    const segment = fc.oneof(
      fc.constantFrom(
        'v1',
        'objects',
        'homeostat.dev',
        'v1alpha1',
        'App',
        'PostgresDatabase',
        t.namespace,
        '_',
        'pony-api',
        'reconcile',
        'core',
        '..',
        '%00',
        '%2F',
        '',
      ),
      fc.string({ maxLength: 40 }).map(encodeURIComponent),
    );
    const request = fc.record({
      method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'),
      segments: fc.array(segment, { maxLength: 9 }),
      query: fc.array(
        fc.tuple(
          fc.constantFrom('wait', 'kind', 'namespace', 'phase', 'pageSize', 'pageToken', 'x'),
          fc.string({ maxLength: 30 }),
        ),
        { maxLength: 4 },
      ),
      auth: fc.constantFrom('static', 'static', 'static', 'none', 'garbage', 'Basic abc'),
      body: fc.option(fc.oneof(fc.json(), fc.string({ maxLength: 200 }), fc.constant('{"reason":"x"}')), {
        nil: undefined,
      }),
      contentType: fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', undefined),
    });
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const qs = r.query.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
        const headers: Record<string, string> = {};
        if (r.auth === 'static') headers.authorization = `Bearer ${staticToken}`;
        else if (r.auth === 'garbage') headers.authorization = `Bearer ${randomBytes(8).toString('hex')}`;
        else if (r.auth !== 'none') headers.authorization = r.auth;
        if (r.contentType && r.body !== undefined) headers['content-type'] = r.contentType;
        const res = await app.inject({
          method: r.method as 'GET',
          url: `/${r.segments.join('/')}${qs ? `?${qs}` : ''}`,
          headers,
          ...(r.body === undefined ? {} : { payload: r.body }),
        });
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        return res.statusCode < 500;
      }),
      { numRuns: 5000 },
    );
    process.stdout.write(
      `[figures] api fuzz: 5000 requests, statuses ${JSON.stringify(Object.fromEntries(statuses))}\n`,
    );
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
