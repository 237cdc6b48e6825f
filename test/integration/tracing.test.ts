/**
 * Traces (issue 30): `homeostat all` with the standard OTEL_* variables exports to a real Jaeger (v2,
 * built from its Go module), and a pass's trace is read back through Jaeger's query API — from the
 * bridge's signal (or the API's request) through the pass and each step to the Kubernetes calls.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { Client as PgClient } from 'pg';
import { recordPgSpans } from '../../config/pg-client-spans';
import { ensureBinary, goServers } from '../../devstack/binaries';
import { type RunningJaeger, startJaeger } from '../../devstack/components/jaeger';
import { eventually } from '../support/eventually';
import { randomSuffix, useStack } from '../support/harness';
import { installBuiltinCrds } from '../support/homeostat';

const cli = join(__dirname, '../../cli/homeostat.ts');

/** A span as Jaeger's query API returns it. */
interface JaegerSpan {
  spanID: string;
  operationName: string;
  references: { refType: string; spanID: string }[];
  tags: { key: string; value: unknown }[];
}
interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
}

const tag = (span: JaegerSpan, key: string): unknown => span.tags.find((t) => t.key === key)?.value;
const parentOf = (span: JaegerSpan): string | undefined =>
  span.references.find((r) => r.refType === 'CHILD_OF')?.spanID;

/** Whether `span` descends from the span `ancestor` in `trace`. */
function descendsFrom(trace: JaegerTrace, span: JaegerSpan, ancestor: string): boolean {
  const byId = new Map(trace.spans.map((s) => [s.spanID, s]));
  for (let p = parentOf(span); p !== undefined; p = byId.get(p) && parentOf(byId.get(p)!)) {
    if (p === ancestor) return true;
  }
  return false;
}

async function tracesOf(jaeger: string, service: string, tags: Record<string, string>): Promise<JaegerTrace[]> {
  const q = new URLSearchParams({ service, tags: JSON.stringify(tags), limit: '100', lookback: '1h' });
  const res = await fetch(`${jaeger}/api/traces?${q.toString()}`, { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`Jaeger answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { data: JaegerTrace[] | null }).data ?? [];
}

describe('traces of passes in Jaeger (issue 30)', () => {
  const t = useStack();
  const service = `homeostat-traced-${randomSuffix()}`;
  const token = randomSuffix(16);
  let jaeger: RunningJaeger;
  let dir: string;
  let child: ChildProcess;
  let out = '';

  beforeAll(async () => {
    // A cold run builds Jaeger here (minutes, once; cached afterwards).
    await ensureBinary(
      goServers.find((s) => s.name === 'jaeger')!,
      (l) => process.stderr.write(`[tracing] ${l}\n`),
    );
    dir = mkdtempSync(join(tmpdir(), 'homeostat-jaeger-'));
    jaeger = await startJaeger({ dir });
    installBuiltinCrds(t);
    child = spawn(process.execPath, ['--import', 'tsx', cli, 'all'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? tmpdir(),
        KUBECONFIG: t.endpoints.kubeconfig,
        TEMPORAL_ADDRESS: t.endpoints.temporalAddress,
        TEMPORAL_NAMESPACE: t.endpoints.temporalNamespace,
        HOMEOSTAT_TASK_QUEUE: `traced-${randomSuffix()}`,
        HOMEOSTAT_BRIDGE_NAMESPACE: t.namespace,
        HOMEOSTAT_BRIDGE_LEADER_ELECTION: 'false',
        HOMEOSTAT_API_PORT: '0',
        HOMEOSTAT_API_HOST: '127.0.0.1',
        HOMEOSTAT_WORKER_PORT: '0',
        HOMEOSTAT_BRIDGE_PORT: '0',
        HOMEOSTAT_API_STATIC_TOKENS: `${token}=tester:system:masters`,
        HOMEOSTAT_API_INSECURE_HTTP: 'true',
        HOMEOSTAT_API_INSECURE_STATIC_TOKENS: 'true',
        LOG_LEVEL: 'info',
        // The standard variables, nothing homeostat-specific.
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: service,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  }, 3_600_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await jaeger?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const appName = 'traced';
  const byName = { 'homeostat.object.name': appName };

  it('given an App applied, one trace holds the bridge’s signal, the pass, each step and the Kubernetes calls, with the object, generation, pass and step', async () => {
    // Created once the bridge watches: the request comes from the watch event (`added`), not the first list.
    await eventually(
      'the bridge synced',
      async () => out,
      (o) => o.includes('all resources synced'),
      120_000,
    );
    const app = k8s.loadYaml<Record<string, unknown>>(
      readFileSync(join(__dirname, '../../examples/30-pony-spawner-app.yaml'), 'utf8'),
    );
    await t.custom.createNamespacedCustomObject({
      group: 'homeostat.dev',
      version: 'v1alpha1',
      namespace: t.namespace,
      plural: 'apps',
      body: { ...app, metadata: { name: appName, namespace: t.namespace } },
    });

    // The first pass's trace: rooted at the bridge's signal (the start that carried the `added` request).
    const isFirstPass = (trace: JaegerTrace): boolean =>
      trace.spans.some((s) => s.operationName === 'pass App' && tag(s, 'homeostat.pass') === 1) &&
      ['config', 'deployment', 'service'].every((step) => trace.spans.some((s) => s.operationName === `step ${step}`));
    const traces = await eventually(
      `the first pass's trace in Jaeger (homeostat all's output:\n${out.slice(-3000)})`,
      () => tracesOf(jaeger.url, service, byName),
      (found) => found.some(isFirstPass),
      120_000,
    );
    const trace = traces.find(isFirstPass)!;
    const one = (name: string): JaegerSpan => {
      const spans = trace.spans.filter((s) => s.operationName === name);
      expect({ name, count: spans.length }).toEqual({ name, count: 1 });
      return spans[0]!;
    };

    const signal = one('reconcile-requested App');
    expect(parentOf(signal)).toBeUndefined(); // the root
    expect(tag(signal, 'span.kind')).toBe('producer');
    expect(tag(signal, 'homeostat.request.reason')).toBe('added');
    const objectTags = {
      'homeostat.object.group': 'homeostat.dev',
      'homeostat.object.kind': 'App',
      'homeostat.object.namespace': t.namespace,
      'homeostat.object.name': appName,
    };
    for (const [key, value] of Object.entries(objectTags))
      expect({ key, value: tag(signal, key) }).toEqual({ key, value });
    expect(tag(signal, 'homeostat.object.generation')).toBe(1);

    const pass = one('pass App');
    expect(parentOf(pass)).toBe(signal.spanID);
    for (const [key, value] of Object.entries(objectTags))
      expect({ key, value: tag(pass, key) }).toEqual({ key, value });
    expect(tag(pass, 'homeostat.pass')).toBe(1);
    expect(tag(pass, 'homeostat.object.generation')).toBe(1);
    expect(tag(pass, 'homeostat.pass.trigger')).toBe('added');

    // Observe and the status write are activities under the pass.
    const activities = trace.spans.filter((s) => s.operationName.startsWith('activity '));
    expect(activities.length).toBeGreaterThanOrEqual(2);
    for (const a of activities)
      expect({ a: a.operationName, parent: parentOf(a) }).toEqual({ a: a.operationName, parent: pass.spanID });
    expect(activities.map((a) => a.operationName)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^activity observe/)]),
    );

    for (const name of ['config', 'deployment', 'service']) {
      // One span per attempt: the first one's calls are checked.
      const step = trace.spans.find((s) => s.operationName === `step ${name}`)!;
      expect(descendsFrom(trace, step, pass.spanID)).toBe(true);
      expect(tag(step, 'homeostat.step')).toBe(name);
      expect(tag(step, 'homeostat.object.generation')).toBe(1);
      for (const [key, value] of Object.entries(objectTags))
        expect({ key, value: tag(step, key) }).toEqual({ key, value });
      // The step's Kubernetes calls (server-side applies of its child) are client spans under it.
      const calls = trace.spans.filter((s) => parentOf(s) === step.spanID && tag(s, 'span.kind') === 'client');
      expect({ step: name, hasCalls: calls.length > 0 }).toEqual({ step: name, hasCalls: true });
      // (Discovery's calls may be among them: the client resolves a kind's resource on first use.)
      const apiServer = new URL(t.kc.getCurrentCluster()!.server).host;
      expect(calls.map((c) => String(tag(c, 'url.full')))).toEqual(
        expect.arrayContaining([expect.stringContaining(`://${apiServer}/api`)]),
      );
      expect(calls.some((c) => String(tag(c, 'url.path')).includes(`/namespaces/${t.namespace}/`))).toBe(true);
      for (const c of calls) expect(tag(c, 'http.response.status_code')).toEqual(expect.any(Number));
    }
    // The pass's log line leads to its trace.
    const passLine = await eventually(
      'the first pass’s log line',
      async () =>
        out
          .split('\n')
          .flatMap((l) => {
            try {
              return [JSON.parse(l) as Record<string, unknown>]; // a line still being written is skipped
            } catch {
              return [];
            }
          })
          .find((l) => l.msg === 'pass finished' && l.pass === 1 && (l.ref as { name?: string })?.name === appName),
      (line) => line !== undefined,
    );
    expect(passLine).toMatchObject({ trace_id: trace.traceID, span_id: pass.spanID });
    // Observe read the App itself from the API server.
    const observe = activities.find((a) => a.operationName.startsWith('activity observe'))!;
    const reads = trace.spans.filter((s) => descendsFrom(trace, s, observe.spanID) && tag(s, 'span.kind') === 'client');
    expect(reads.map((s) => s.operationName)).toEqual(
      expect.arrayContaining([`GET /apis/homeostat.dev/v1alpha1/namespaces/${t.namespace}/apps/${appName}`]),
    );
  });

  it('given a reconcile through the API, that pass’s trace starts at the HTTP request', async () => {
    const api = /"address":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out)?.[1];
    expect(api).toBeDefined();
    const res = await fetch(`${api}/v1/objects/homeostat.dev/v1alpha1/App/${t.namespace}/${appName}/reconcile`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(200);
    const passNumber = ((await res.json()) as { outcome: { pass: number } }).outcome.pass;

    const route = 'POST /v1/objects/:group/:version/:kind/:namespace/:name/reconcile';
    const isApiPass = (trace: JaegerTrace): boolean =>
      trace.spans.some((s) => s.operationName === route) &&
      trace.spans.some((s) => s.operationName === 'pass App' && tag(s, 'homeostat.pass') === passNumber);
    const traces = await eventually(
      'the API-triggered pass in Jaeger',
      () => tracesOf(jaeger.url, service, { 'homeostat.pass': String(passNumber), ...byName }),
      (found) => found.some(isApiPass),
      60_000,
    );
    const trace = traces.find(isApiPass)!;
    const request = trace.spans.find((s) => s.operationName === route)!;
    expect(parentOf(request)).toBeUndefined(); // the root
    expect(tag(request, 'span.kind')).toBe('server');
    expect(tag(request, 'http.response.status_code')).toBe(200);
    const pass = trace.spans.find((s) => s.operationName === 'pass App')!;
    expect(parentOf(pass)).toBe(request.spanID);
    expect(tag(pass, 'homeostat.pass.trigger')).toBe('update');
    expect(
      trace.spans.filter((s) => s.operationName.startsWith('activity ') && parentOf(s) === pass.spanID).length,
    ).toBeGreaterThan(0);
  });

  it('given SQL statements under a span, each is a client span with its operation and database, never its text', async () => {
    // In this process, with the real SDK (an in-memory exporter) and the stack's PostgreSQL.
    const exporter = new InMemorySpanExporter();
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    trace.setGlobalTracerProvider(provider);
    const stop = recordPgSpans();
    const db = new PgClient({ connectionString: t.endpoints.postgresUrl });
    const role = `traced_${randomSuffix()}`;
    const secret = `s3cret-${randomSuffix(8)}`;
    try {
      await db.connect();
      await db.query('SELECT 1'); // outside any span: not recorded
      await trace.getTracer('test').startActiveSpan('step', async (span) => {
        await db.query(`CREATE ROLE ${role} LOGIN PASSWORD '${secret}'`);
        await db.query({ text: 'SELECT $1::text AS v', values: [secret] });
        await db.query(`ALTER ROLE ${role} WITH PASSWORD '${secret}'; SELECT 1`);
        await expect(db.query(`CREATE ROLE ${role} PASSWORD '${secret}'`)).rejects.toThrow(/already exists/);
        span.end();
      });
      await db.query(`DROP ROLE ${role}`);
    } finally {
      stop();
      await db.end();
      trace.disable();
      context.disable();
    }
    const spans = exporter.getFinishedSpans().filter((s) => s.name !== 'step');
    expect(spans.map((s) => [s.name, s.attributes['db.operation.name'], s.status.code])).toEqual([
      ['CREATE ROLE', 'CREATE ROLE', 0],
      ['SELECT', 'SELECT', 0],
      ['ALTER ROLE …', 'ALTER ROLE …', 0],
      ['CREATE ROLE', 'CREATE ROLE', 2],
    ]);
    expect(spans.every((s) => s.attributes['db.system.name'] === 'postgresql')).toBe(true);
    expect(spans[0]!.attributes['db.namespace']).toEqual(expect.any(String));
    expect(spans[3]!.status.message).toBe('SQLSTATE 42710'); // duplicate_object, without the statement
    expect(
      JSON.stringify(
        spans.map((s) => ({ name: s.name, attributes: s.attributes, status: s.status, events: s.events })),
      ),
    ).not.toContain(secret);
  });
});
