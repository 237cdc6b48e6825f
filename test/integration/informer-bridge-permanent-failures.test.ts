/**
 * Deliveries Temporal refuses for good (issue 31): a Temporal dev server of the test's own, started with
 * a lowered `limit.maxIDLength` (dynamic config), refuses the workflow ID of an object with a long name
 * with INVALID_ARGUMENT — as a name over a production server's limits would be. The bridge drops that
 * request (logged, counted in `homeostat_bridge_signals_dropped_total{reason="invalid_argument"}`)
 * instead of retrying it for ever in the queue every team shares, and another object's delivery behind
 * it in the queue (one delivery at a time) still arrives. Kubernetes is the run's shared stack.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { WorkflowBundle } from '@temporalio/worker';
import pino from 'pino';
import { searchAttributes, temporalNamespace } from '../../devstack';
import { ensureBinary, goServers } from '../../devstack/binaries';
import { freePorts } from '../../devstack/processes';
import { workflowIdFor } from '../../core/definitions';
import { Bridge, type WatchedResource } from '../../informer-bridge';
import { randomSuffix, useStack } from '../support/harness';
import {
  bundleRecorder,
  createWidgetCrd,
  received,
  staysFalse,
  startRecorder,
  waitFor,
  Widgets,
} from '../support/bridge';

jest.setTimeout(240_000);

/** The longest workflow ID the test's Temporal accepts (its default is 1,000; no Kubernetes name reaches that). */
const maxIdLength = 120;

/** A Temporal dev server (on a SQLite file in a temporary folder, no UI) with `limit.maxIDLength` lowered. */
async function startLimitedTemporal(): Promise<{ address: string; proc: ChildProcess; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'homeostat-limited-temporal-'));
  const binary = await ensureBinary(goServers.find((s) => s.name === 'temporal')!);
  const [port, httpPort] = await freePorts(2);
  const proc = spawn(
    binary,
    [
      'server',
      'start-dev',
      '--port',
      String(port),
      '--http-port',
      String(httpPort),
      '--db-filename',
      join(dir, 'temporal.db'),
      '--namespace',
      temporalNamespace,
      '--dynamic-config-value',
      `limit.maxIDLength=${maxIdLength}`,
      ...Object.entries(searchAttributes).flatMap(([k, v]) => ['--search-attribute', `${k}=${v}`]),
    ],
    { stdio: 'ignore' },
  );
  const address = `127.0.0.1:${port}`;
  await waitFor(
    async () => {
      if (proc.exitCode !== null) throw new Error(`temporal exited with ${proc.exitCode}`);
      const c = await Connection.connect({ address, connectTimeout: 1000 }).catch(() => undefined);
      if (!c) return false;
      try {
        const listed = await c.operatorService.listSearchAttributes({ namespace: temporalNamespace });
        return Object.keys(searchAttributes).every((k) => k in (listed.customAttributes ?? {}));
      } catch {
        return false;
      } finally {
        await c.close();
      }
    },
    90_000,
    300,
    'the limited Temporal dev server',
  );
  return { address, proc, dir };
}

describe('informer bridge: deliveries that cannot succeed', () => {
  const t = useStack();
  let temporal: { address: string; proc: ChildProcess; dir: string };
  let connection: Connection;
  let client: Client;
  let bundle: WorkflowBundle;
  let widget: WatchedResource;
  const group = `ibp${randomSuffix(3)}.homeostat.dev`;
  const taskQueue = `permanent-${randomSuffix()}`;

  beforeAll(async () => {
    [temporal, bundle, widget] = await Promise.all([
      startLimitedTemporal(),
      bundleRecorder(),
      createWidgetCrd(t.apiext, group),
    ]);
    connection = await Connection.connect({ address: temporal.address });
    client = new Client({ connection, namespace: temporalNamespace });
  }, 180_000);

  afterAll(async () => {
    await connection?.close();
    if (temporal?.proc.exitCode === null) {
      const exited = new Promise((r) => temporal.proc.once('exit', r));
      temporal.proc.kill('SIGTERM');
      await exited;
    }
    if (temporal) rmSync(temporal.dir, { recursive: true, force: true });
  });

  it('given an object whose workflow ID Temporal refuses (INVALID_ARGUMENT), the request is dropped and counted, not retried, and the object behind it is delivered', async () => {
    const recorder = await startRecorder(temporal.address, temporalNamespace, taskQueue, bundle);
    const bridge = new Bridge({
      kc: t.kc,
      resources: [widget],
      namespace: t.namespace,
      client,
      taskQueue,
      log: pino({ level: process.env.BRIDGE_TEST_LOG ?? 'silent' }),
      leaderElection: false,
      auditWorkflows: false,
      concurrency: 1, // one delivery at a time: the second object waits behind the first
    });
    const widgets = new Widgets(t.custom, group, t.namespace);
    const long = `long-${'x'.repeat(maxIdLength)}`;
    expect(workflowIdFor(widgets.ref(long)).length).toBeGreaterThan(maxIdLength);
    expect(workflowIdFor(widgets.ref('short')).length).toBeLessThanOrEqual(maxIdLength);
    const dropped = async (): Promise<number> =>
      (await bridge.metrics.signalsDropped.get()).values
        .filter((v) => v.labels.reason === 'invalid_argument')
        .reduce((n, v) => n + v.value, 0);
    const failed = async (): Promise<number> => (await bridge.metrics.signalsFailed.get()).values[0]?.value ?? 0;
    let flushed = false;
    bridge.start();
    try {
      await waitFor(() => bridge.ready, 20_000);
      await widgets.create(long, 1);
      await widgets.create('short', 1);
      await waitFor(async () => (await received(client, widgets.ref('short'))).length === 1, 30_000, 200, 'short');
      await waitFor(
        async () => (await dropped()) === 1 && bridge.dirtyKeys === 0,
        30_000,
        200,
        () => `the long name's request dropped (dirty keys ${bridge.dirtyKeys})`,
      );
      // Never retried: longer than the retry backoff's ceiling (5 s), no attempt and no failure more.
      await staysFalse(
        async () => (await dropped()) !== 1 || (await failed()) !== 0 || bridge.dirtyKeys !== 0,
        7_000,
        'a retry',
      );
      // A later change of the same object is a new request: refused and dropped once more, not kept.
      await widgets.patch(long, { spec: { size: 2 } });
      await waitFor(async () => (await dropped()) === 2 && bridge.dirtyKeys === 0, 30_000, 200, 'the second drop');
      expect(await failed()).toBe(0);
    } finally {
      flushed = await bridge.stop();
      await recorder.stop();
    }
    expect(flushed).toBe(true); // nothing left undelivered: the flush completes
  });
});
