/**
 * The API's contract, from outside: the API process configured as the demo runs it (HTTPS, a static
 * admin token) over the real stack, with a worker reconciling a real App. A contract fuzzer
 * (schemathesis, installed by scripts/ensure-deps.sh) runs every check against the served OpenAPI
 * document, with the token and without any; plain assertions pin each answer the fuzzer once found
 * outside the document: authentication before any other answer, 405 with `Allow` for undeclared
 * methods, and the schema-valid requests once refused with an undocumented 400.
 */
import * as k8s from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { apiEnvSchema, startApiComponent, type RunningApi } from '../../api';
import { builtinOperator } from '../../builtin';
import { cacheDir } from '../../devstack/paths';
import { randomSuffix, useStack } from '../support/harness';
import { installBuiltinCrds, type InProcessHomeostat, startInProcessHomeostat } from '../support/homeostat';

/** The schemathesis ensure-deps.sh pins and installs, so the test runs the very version CI installs. */
function schemathesisBinary(): string {
  const script = readFileSync(join(__dirname, '../../scripts/ensure-deps.sh'), 'utf8');
  const version = /^schemathesis_version=(\S+)$/m.exec(script)?.[1];
  if (!version) throw new Error('scripts/ensure-deps.sh pins no schemathesis_version');
  const bin = join(cacheDir(), `schemathesis-${version}`, 'bin', 'schemathesis');
  if (!existsSync(bin))
    throw new Error(`schemathesis ${version} is not installed at ${bin}: run scripts/ensure-deps.sh`);
  return bin;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

describe('API contract', () => {
  const t = useStack();
  const taskQueue = `api-contract-${randomSuffix()}`;
  const token = randomBytes(24).toString('base64url');
  /**
   * The fuzzer's own token: a user allowed only in this file's namespace, so the objects it finds by
   * listing are this file's, whose worker runs while it fuzzes — not another file's, whose worker may
   * be gone (a state query then has no worker to answer it: 503, which the fuzzer counts as a failure).
   */
  const fuzzToken = randomBytes(24).toString('base64url');
  let ca: Buffer;
  let caFile = '';
  let api: RunningApi | undefined;
  let homeostat: InProcessHomeostat | undefined;

  beforeAll(async () => {
    installBuiltinCrds(t);
    homeostat = await startInProcessHomeostat(t, { taskQueue, logger: pino({ level: 'warn' }), bridge: false });
    t.defer(() => homeostat?.stop());
    const cert = t.stack.servingCertificate('homeostat-api-contract');
    caFile = cert.ca;
    ca = readFileSync(cert.ca);
    // As `homeostat dev` runs it (cli/dev.ts): HTTPS, a static token of a cluster admin. Its limits are
    // raised so the fuzzer's few hundred requests meet the contract rather than the limits (429 is
    // documented, and tested in api.test.ts).
    api = await startApiComponent({
      config: apiEnvSchema.parse({
        HOMEOSTAT_TASK_QUEUE: taskQueue,
        KUBECONFIG: t.endpoints.kubeconfig,
        HOMEOSTAT_API_PORT: '0',
        HOMEOSTAT_API_HOST: '127.0.0.1',
        HOMEOSTAT_API_TLS_CERT_FILE: cert.cert,
        HOMEOSTAT_API_TLS_KEY_FILE: cert.key,
        HOMEOSTAT_API_STATIC_TOKENS: `${token}=demo-admin:system:masters;${fuzzToken}=contract-fuzzer`,
        HOMEOSTAT_API_INSECURE_STATIC_TOKENS: 'true',
        HOMEOSTAT_API_RATE_LIMIT_PER_MINUTE: '1000000',
        HOMEOSTAT_API_AUTH_FAILURES_PER_MINUTE: '1000000',
        HOMEOSTAT_API_RECONCILE_WAIT_SECONDS: '5',
        LOG_LEVEL: 'error',
      }),
      temporal: {
        connectionOptions: { address: t.endpoints.temporalAddress },
        namespace: t.endpoints.temporalNamespace,
      },
      operator: builtinOperator,
    });
    t.defer(() => api?.stop());
    const rbac = t.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: t.namespace,
      body: {
        metadata: { name: 'contract-fuzzer' },
        rules: [
          {
            apiGroups: ['homeostat.dev'],
            resources: ['apps', 'postgresdatabases'],
            verbs: ['get', 'list', 'reconcile', 'plan', 'create', 'patch'],
          },
        ],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: t.namespace,
      body: {
        metadata: { name: 'contract-fuzzer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'contract-fuzzer' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'contract-fuzzer' }],
      },
    });
    await t.custom.createNamespacedCustomObject({
      group: 'homeostat.dev',
      version: 'v1alpha1',
      namespace: t.namespace,
      plural: 'apps',
      body: {
        apiVersion: 'homeostat.dev/v1alpha1',
        kind: 'App',
        metadata: { name: 'pony-api' },
        spec: { image: 'registry.spr.com/pony-spawner:v2.1.0', replicas: 1 },
      },
    });
  });

  /** One request over the network, any method (fetch refuses TRACE). */
  const send = (method: string, path: string, auth?: string): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const req = httpsRequest(
        `${api!.address}${path}`,
        { method, ca, headers: auth === undefined ? {} : { authorization: `Bearer ${auth}` } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });
  const problemOf = (a: Answer) => {
    expect(a.headers['content-type']).toContain('application/problem+json');
    return JSON.parse(a.body) as { status: number; code: string; detail: string };
  };
  const object = (kind: string, namespace: string, name = 'pony-api') =>
    `/v1/objects/homeostat.dev/v1alpha1/${kind}/${namespace}/${name}`;

  it('given no token, every path, kind and method but the public ones gets 401 before anything else', async () => {
    const cases: [string, string][] = [
      ['GET', '/v1/objects?kind=A'], // the fuzzer's finding: 404 "no reconciler for kind A"
      ['GET', object('Unicorn', t.namespace)],
      ['POST', `${object('Unicorn', t.namespace)}/reconcile`],
      ['GET', object('PostgresServer', t.namespace)],
      ['GET', object('App', '_')],
      ['GET', '/v1/objects?kind=App&pageToken=AAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
      ['GET', '/v1/objects/Bad_Group/v1/App/x/y'],
      ['GET', '/v1/nothing-here'],
      ['GET', '/nothing-here'],
      ['QUERY', '/v1/kinds'],
      ['TRACE', '/v1/kinds'],
      ['PUT', '/v1/kinds'],
      ['DELETE', object('App', t.namespace)],
    ];
    for (const [method, path] of cases) {
      for (const auth of [undefined, 'not-a-token']) {
        const a = await send(method, path, auth);
        expect({ method, path, auth, status: a.status }).toEqual({ method, path, auth, status: 401 });
        expect(problemOf(a).code).toBe('ERR_UNAUTHENTICATED');
        expect(a.headers['www-authenticate']).toBe('Bearer');
      }
    }
    // The public routes stay public.
    expect((await send('GET', '/healthz')).status).toBe(200);
    expect((await send('GET', '/openapi.json')).status).toBe(200);
  });

  it('given a token, an undeclared method (QUERY, TRACE, PUT on a GET-only path) gets 405 with Allow and a problem document', async () => {
    const cases: [string, string, string][] = [
      ['QUERY', '/v1/kinds', 'GET, HEAD'],
      ['TRACE', '/v1/kinds', 'GET, HEAD'],
      ['PUT', '/v1/kinds', 'GET, HEAD'],
      ['DELETE', object('App', t.namespace), 'GET, HEAD'],
      ['GET', `${object('App', t.namespace)}/reconcile`, 'POST'],
      ['QUERY', '/v1/objects?kind=App', 'GET, HEAD'],
    ];
    for (const [method, path, allow] of cases) {
      const a = await send(method, path, token);
      expect({ method, path, status: a.status, allow: a.headers.allow }).toEqual({ method, path, status: 405, allow });
      expect(problemOf(a)).toMatchObject({ status: 405, code: 'ERR_METHOD_NOT_ALLOWED' });
    }
    // A path no route serves is still a 404, now that the caller is known.
    expect(problemOf(await send('GET', '/v1/nothing-here', token))).toMatchObject({ code: 'ERR_NOT_FOUND' });
    expect(problemOf(await send('GET', '/v1/objects?kind=A', token))).toMatchObject({ code: 'ERR_UNKNOWN_KIND' });
  });

  it('given the three schema-valid requests once refused with a 400, the document and the answers agree', async () => {
    const doc = JSON.parse((await send('GET', '/openapi.json')).body) as {
      info: { description: string };
      paths: Record<
        string,
        Record<
          string,
          {
            parameters: { name: string; schema: { minLength?: number }; description?: string }[];
            responses: Record<string, { description: string }>;
          }
        >
      >;
    };
    // A page token the API did not seal: a 400 the document describes, as far as a schema can (its form).
    const list = doc.paths['/v1/objects']!.get!;
    const pageToken = list.parameters.find((p) => p.name === 'pageToken')!;
    expect(pageToken.schema.minLength).toBe(23);
    expect(pageToken.description).toMatch(/any other token .* is a 400/);
    expect(list.responses['400']!.description).toMatch(/pageToken/);
    const made = await send('GET', `/v1/objects?kind=App&pageToken=${'A'.repeat(30)}`, token);
    expect(made.status).toBe(400);
    expect(problemOf(made).detail).toMatch(/pageToken is not a token this API issued/);
    // A scope that does not fit the kind names no object: 404, as the document says, as Kubernetes does.
    for (const path of [object('App', '_'), object('PostgresServer', t.namespace)]) {
      for (const [method, suffix] of [
        ['GET', ''],
        ['POST', '/reconcile'],
      ] as const) {
        const a = await send(method, `${path}${suffix}`, token);
        expect({ path, method, status: a.status }).toEqual({ path, method, status: 404 });
        expect(problemOf(a)).toMatchObject({ code: 'ERR_OBJECT_NOT_FOUND', detail: expect.stringMatching(/scoped/) });
      }
    }
    for (const route of [
      '/v1/objects/{group}/{version}/{kind}/{namespace}/{name}',
      '/v1/objects/{group}/{version}/{kind}/{namespace}/{name}/reconcile',
    ]) {
      const op = Object.values(doc.paths[route]!)[0]!;
      expect(op.responses['404']!.description).toMatch(/cluster-scoped kind or `_` for a namespaced one/);
    }
    expect(doc.info.description).toMatch(/405 `ERR_METHOD_NOT_ALLOWED` with an `Allow` header/);
  });

  /** Runs schemathesis with every check against the served document; its report on failure. */
  const fuzz = async (auth: boolean): Promise<void> => {
    const dir = mkdtempSync(join(tmpdir(), 'homeostat-contract-'));
    // Half of the drawn path and query values name what exists (the App, the kinds, the namespace), so
    // requests reach the routes' logic and not only their validation; the other half are generated.
    const drawn = (values: string[]) => `{ values = ${JSON.stringify(values)} }`;
    const bind = (name: string) => `{ dictionary = "${name}", probability = 0.5 }`;
    writeFileSync(
      join(dir, 'schemathesis.toml'),
      [
        '[dictionaries]',
        `groups = ${drawn(['homeostat.dev', 'core'])}`,
        `versions = ${drawn(['v1alpha1'])}`,
        `kinds = ${drawn(['App', 'PostgresDatabase', 'PostgresServer'])}`,
        `namespaces = ${drawn([t.namespace, '_'])}`,
        `names = ${drawn(['pony-api'])}`,
        '[parameters]',
        `"path.group" = ${bind('groups')}`,
        `"path.version" = ${bind('versions')}`,
        `"path.kind" = ${bind('kinds')}`,
        `"path.namespace" = ${bind('namespaces')}`,
        `"path.name" = ${bind('names')}`,
        `"query.kind" = ${bind('kinds')}`,
        '',
        // The one rule no schema can state: a page token must carry this API's MAC for this very query.
        // The document says so and answers 400 (as Kubernetes answers a bad `continue`); for this
        // operation alone, a schema-valid request may get it.
        '[[operations]]',
        'include-path = "/v1/objects"',
        'include-method = "GET"',
        '[operations.checks.positive_data_acceptance]',
        'expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "429"]',
        // Likewise a planned manifest: it must name the object of the path and be valid for the kind's
        // CRD and the reconciler's schema — rules the document states in words (422 ERR_INVALID_MANIFEST),
        // as the Kubernetes API server answers an invalid object.
        '[[operations]]',
        'include-path = "/v1/objects/{group}/{version}/{kind}/{namespace}/{name}/plan"',
        'include-method = "POST"',
        '[operations.checks.positive_data_acceptance]',
        'expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "422", "429", "5xx"]',
      ].join('\n'),
    );
    const args = [
      '--config-file',
      join(dir, 'schemathesis.toml'),
      'run',
      `${api!.address}/openapi.json`,
      '--checks',
      'all',
      '--max-examples',
      '25',
      '--workers',
      '1',
      '--tls-verify',
      caFile,
      '--request-timeout',
      '30',
      ...(auth ? ['--header', `Authorization: Bearer ${fuzzToken}`] : []),
    ];
    const { code, output } = await new Promise<{ code: number | string; output: string }>((resolve) => {
      execFile(
        schemathesisBinary(),
        args,
        // A hard bound: the run is killed past it (it takes about 15 s each on an idle machine).
        {
          cwd: dir,
          timeout: 150_000,
          killSignal: 'SIGKILL',
          maxBuffer: 32 << 20,
          env: { ...process.env, NO_COLOR: '1' },
        },
        (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number | string }).code ?? 'killed') : 0, output: stdout + stderr }),
      );
    });
    rmSync(dir, { recursive: true, force: true });
    const summary = /Test cases:\n\s*(.+)/.exec(output)?.[1] ?? 'no summary';
    process.stdout.write(`[figures] api contract fuzzer (${auth ? 'with a token' : 'without a token'}): ${summary}\n`);
    if (code !== 0) process.stdout.write(`schemathesis exited ${code}:\n${output}\n`);
    expect({ code, failures: output.match(/^\d+\. Test Case ID: .*$/gm) ?? [] }).toEqual({ code: 0, failures: [] });
  };

  it('given the served OpenAPI document, a contract fuzzer with every check and a valid token finds nothing', async () => {
    await fuzz(true);
  }, 200_000);

  it('given the served OpenAPI document, a contract fuzzer with every check and no token finds nothing', async () => {
    await fuzz(false);
  }, 200_000);
});
