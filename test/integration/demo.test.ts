/**
 * The README's first command: the demo brings the Sparkle Pony Ranch to Ready on its own stack (beside
 * the test run's), prints where to look, and — left running — serves the API with the printed token
 * and every process's `/metrics` with the reconcile metrics of what it just did, until Ctrl-C.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureBinary, goServers, stackDir, stacksRoot } from '../../devstack';
import { postgresDataDir } from '../../devstack/components/postgres';
import { eventually } from '../support/eventually';
import { randomSuffix } from '../support/harness';
import { dashboardQueries, promQuery, promRules, promTargets, shippedAlertNames } from '../support/prometheus';

const cli = join(__dirname, '../../cli/homeostat.ts');
const tsx = pathToFileURL(require.resolve('tsx')).href;

function startDemo(
  args: string[],
  cwd?: string,
): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', tsx, cli, 'dev', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(cwd ? { cwd } : {}),
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { child, output: () => out, exited };
}

/** An HTTPS request checked against `ca` (the demo's API certificate is signed by its stack's CA). */
function httpsCall(url: string, options: RequestOptions): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, options, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The sum of a metric's samples whose labels include `labels`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  let found: number | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    found = (found ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return found;
}

/** Entries under `dir` (itself included) with mode bits beyond 0700: another user could read, write or enter them. */
function notPrivate(dir: string): string[] {
  const found: string[] = [];
  const walk = (path: string): void => {
    const stat = lstatSync(path);
    // A link's own mode means nothing; a socket is reached only through its (private) folder.
    if (stat.isSymbolicLink() || stat.isSocket()) return;
    if ((stat.mode & 0o077) !== 0) found.push(`${path} ${(stat.mode & 0o777).toString(8)}`);
    if (stat.isDirectory()) for (const entry of readdirSync(path)) walk(join(path, entry));
  };
  walk(dir);
  return found;
}

/** Whether the user `nobody` can read `path` (as root only: a process of another user really tries). */
function nobodyCanRead(path: string): boolean {
  try {
    execFileSync('runuser', ['-u', 'nobody', '--', 'cat', path], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('the demo (homeostat dev, what npm run demo runs)', () => {
  // The demo's Prometheus and Jaeger are built here when the cache has none (a cold CI run: minutes,
  // once), so the demos below do not wait for them within their own deadlines.
  beforeAll(async () => {
    for (const name of ['prometheus', 'jaeger']) {
      await ensureBinary(
        goServers.find((s) => s.name === name)!,
        (l) => process.stderr.write(`[demo] ${l}\n`),
      );
    }
  }, 3_600_000);

  it('given two project folders, two demos run side by side on stacks of their own and each brings its examples to Ready, prints the links and stops everything', async () => {
    // No --stack-name: each project's default name is its own (issue 31: every project's demo used the
    // same stack name, so a second demo stopped the first one's stack).
    const folders = ['ranch-a', 'ranch-b'].map((p) => mkdtempSync(join(tmpdir(), `${p}-`)));
    try {
      const demos = folders.map((folder) => startDemo(['--exit-when-ready'], folder));
      const results = await Promise.all(demos.map(async (d) => ({ code: await d.exited, out: d.output() })));
      const names = results.map(({ out }) => /env --stack-name ([a-z0-9._-]+)\)/.exec(out)?.[1]);
      expect(names[0]).toMatch(/^demo-ranch-a-/);
      expect(names[1]).toMatch(/^demo-ranch-b-/);
      for (const [i, { code, out }] of results.entries()) {
        expect({ code, out }).toEqual({ code: 0, out: expect.stringContaining('the examples are Ready') });
        expect(out).toMatch(/postgresdatabases\/pony-spawner-db\s+Ready — All 5 steps succeeded/);
        expect(out).toMatch(/apps\/pony-spawner\s+Ready — All 3 steps succeeded/);
        expect(out).toMatch(
          /Temporal UI\s+http:\/\/127\.0\.0\.1:\d+\/namespaces\/homeostat\/workflows\?query=HomeostatNamespace/,
        );
        expect(out).toMatch(/kubectl\s+kubectl --kubeconfig \S+\/kubeconfig get/);
        expect(out).toMatch(/Jaeger\s+http:\/\/127\.0\.0\.1:\d+\/search\?service=homeostat-bridge&tags=/);
        expect(out).toMatch(/API\s+https:\/\/127\.0\.0\.1:\d+\s+\(token \S+\)/);
        expect(out).toMatch(/curl --cacert \S+\/pki\/ca\.crt -H 'Authorization: Bearer \S+' https:/);
        // The stack's environment comes from the CLI itself, which runs here from the sources.
        expect(out).toMatch(/eval "\$\(npx tsx \S*cli\/homeostat\.ts env --stack-name demo-ranch-\S+\)"/);
        expect(out).toContain('stopped');
        expect(existsSync(stackDir(names[i]!))).toBe(false);
      }
    } finally {
      for (const folder of folders) rmSync(folder, { recursive: true, force: true });
    }
  });

  it('given it keeps running, the printed API token works and each process’s /metrics shows the reconcile metrics; Ctrl-C stops all', async () => {
    const name = `demo-test-${randomSuffix()}`;
    const demo = startDemo(['--stack-name', name]);
    try {
      const deadline = Date.now() + 240_000;
      while (!demo.output().includes('press Ctrl-C') && demo.child.exitCode === null && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
      }
      const out = demo.output();
      expect(out).toContain('press Ctrl-C');
      const [, api, token] = /API\s+(https:\/\/127\.0\.0\.1:\d+)\s+\(token (\S+)\)/.exec(out)!;
      const [, caFile] = /curl --cacert (\S+) /.exec(out)!;
      const ca = readFileSync(caFile!);

      // Its files are this user's alone (issue 31): folders 0700, files 0600, the PostgreSQL data too.
      const dir = stackDir(name);
      expect(lstatSync(stacksRoot()).mode & 0o777).toBe(0o700);
      expect(notPrivate(dir)).toEqual([]);
      const pgData = postgresDataDir(dir);
      if (!pgData.startsWith(dir)) {
        expect(lstatSync(dirname(pgData)).mode & 0o777).toBe(0o700);
        expect(notPrivate(pgData)).toEqual([]);
      }
      if (process.getuid?.() === 0) {
        for (const file of ['state.json', 'pki/ca.key', 'logs/temporal.log', 'kubeconfig']) {
          expect(existsSync(join(dir, file))).toBe(true);
          expect({ file, readable: nobodyCanRead(join(dir, file)) }).toEqual({ file, readable: false });
        }
        expect(nobodyCanRead(join(pgData, 'PG_VERSION'))).toBe(false);
      }

      const [, worker, bridge] = /metrics\s+worker (\S+) · bridge (\S+) · api \S+/.exec(out)!;

      const scrape = async (url: string) => (await fetch(url)).text();
      // controller-runtime's names, with its labels (the controller is the lowercased kind).
      const crSuccess = async () =>
        sample(await scrape(worker!), 'controller_runtime_reconcile_total', { controller: 'app', result: 'success' });
      const successBefore = await crSuccess();
      expect(successBefore).toBeGreaterThan(0);

      // An API-triggered reconcile with the printed token.
      const reconcile = await httpsCall(
        `${api}/v1/objects/homeostat.dev/v1alpha1/App/pony-prod/pony-spawner/reconcile`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
          ca,
        },
      );
      expect(reconcile.status).toBe(200);
      expect(JSON.parse(reconcile.body)).toMatchObject({ outcome: { result: 'ready', phase: 'Ready' } });

      const workerMetrics = await scrape(worker!);
      // The API's pass moved controller-runtime's counter, read as kubebuilder dashboards read it.
      expect(
        sample(workerMetrics, 'controller_runtime_reconcile_total', { controller: 'app', result: 'success' }),
      ).toBe(successBefore! + 1);
      expect(sample(workerMetrics, 'controller_runtime_reconcile_errors_total', { controller: 'app' })).toBe(0);
      expect(
        sample(workerMetrics, 'controller_runtime_reconcile_time_seconds_bucket', { controller: 'app', le: '0.15' }),
      ).toBeDefined();
      // Reconcile passes per kind and result (from the workflow metricMeter through Core's exporter).
      expect(sample(workerMetrics, 'homeostat_reconcile_total', { kind: 'App', result: 'ready' })).toBeGreaterThan(1);
      expect(
        sample(workerMetrics, 'homeostat_reconcile_total', { kind: 'PostgresDatabase', result: 'ready' }),
      ).toBeGreaterThan(0);
      expect(sample(workerMetrics, 'homeostat_reconcile_errors_total', { kind: 'App' })).toBe(0);
      expect(sample(workerMetrics, 'homeostat_reconcile_time_seconds_count', { kind: 'App' })).toBeGreaterThan(1);
      expect(sample(workerMetrics, 'homeostat_reconcile_time_seconds_sum', { kind: 'App' })).toBeGreaterThan(0);
      expect(sample(workerMetrics, 'homeostat_workqueue_depth', { type: 'workflow' })).toBeGreaterThanOrEqual(0);
      // The SDK's own metrics.
      expect(sample(workerMetrics, 'temporal_workflow_task_execution_latency_count')).toBeGreaterThan(0);
      // The built-ins' steps, observe and status writes run as local activities.
      expect(sample(workerMetrics, 'temporal_local_activity_execution_latency_count')).toBeGreaterThan(0);

      // Shown in the test output: the figures an operator would see after the demo.
      console.log(
        workerMetrics
          .split('\n')
          .filter((l) =>
            /^homeostat_(reconcile_total|reconcile_errors_total|reconcile_time_seconds_(sum|count)|workqueue_depth)/.test(
              l,
            ),
          )
          .join('\n'),
      );
      const bridgeMetrics = await scrape(bridge!);
      expect(sample(bridgeMetrics, 'homeostat_bridge_signals_sent_total')).toBeGreaterThan(0);
      expect(sample(bridgeMetrics, 'homeostat_bridge_watch_events_total', { type: 'ADDED' })).toBeGreaterThan(0);
      // A gauge read once could catch an event in flight: the queue is seen drained, not at one instant.
      await eventually(
        'the bridge’s queue drained',
        async () => sample(await scrape(bridge!), 'homeostat_workqueue_depth', { name: 'informer-bridge' }),
        (depth) => depth === 0,
      );

      // The bridge's delivery queue under controller-runtime's workqueue names, one queue per kind.
      const crQueue = { name: 'app', controller: 'app' };
      expect(sample(bridgeMetrics, 'workqueue_adds_total', crQueue)).toBeGreaterThan(0);
      expect(sample(bridgeMetrics, 'workqueue_queue_duration_seconds_count', crQueue)).toBeGreaterThan(0);
      expect(sample(bridgeMetrics, 'workqueue_work_duration_seconds_count', crQueue)).toBeGreaterThan(0);
      expect(sample(bridgeMetrics, 'workqueue_retries_total', crQueue)).toBeGreaterThanOrEqual(0);
      expect(sample(bridgeMetrics, 'workqueue_longest_running_processor_seconds', crQueue)).toBeGreaterThanOrEqual(0);
      await eventually(
        'the app queue drained',
        async () => sample(await scrape(bridge!), 'workqueue_depth', { name: 'app' }),
        (depth) => depth === 0,
      );

      const apiMetrics = (await httpsCall(`${api}/metrics`, { ca })).body;
      expect(sample(apiMetrics, 'homeostat_api_reconciles_total', { kind: 'App' })).toBe(1);
      expect(sample(apiMetrics, 'homeostat_api_requests_total')).toBeGreaterThan(0);

      // The demo's Prometheus scrapes all four processes, every dashboard panel's query finds data in
      // it, and the shipped alerting rules are loaded and evaluate without error.
      const [, prometheus] = /Prometheus\s+(http:\/\/127\.0\.0\.1:\d+)\/api\/v1\/query/.exec(out)!;
      await eventually(
        'every scrape target up',
        () => promTargets(prometheus!),
        (targets) => targets.length === 4 && targets.every((t) => t.health === 'up'),
      );
      for (const { panel, expr } of dashboardQueries()) {
        const found = await eventually(
          `data for the panel "${panel}" (${expr})`,
          () => promQuery(prometheus!, expr),
          (r) => r.length > 0,
        );
        console.log(`${panel}: ${found.map((r) => `${JSON.stringify(r.metric)} ${r.value[1]}`).join(', ')}`);
      }
      const rules = await eventually(
        'the alerting rules evaluated',
        () => promRules(prometheus!),
        (r) => r.length > 0 && r.every((rule) => rule.health === 'ok'),
      );
      expect(rules.map((r) => r.name)).toEqual(shippedAlertNames());
      console.log(rules.map((r) => `${r.name}: ${r.state}`).join('\n'));

      // The demo's Jaeger holds the examples' traces: the printed query finds passes of the object it names.
      const [, jaegerApi] = /\n\s+(http:\/\/127\.0\.0\.1:\d+\/api\/traces\?\S+)/.exec(out)!;
      await eventually(
        'the examples’ passes in the demo’s Jaeger',
        async () =>
          ((await (await fetch(jaegerApi!)).json()) as { data: { spans: { operationName: string }[] }[] | null })
            .data ?? [],
        (traces) => traces.some((t) => t.spans.some((s) => s.operationName.startsWith('pass '))),
      );

      demo.child.kill('SIGINT');
      expect(await demo.exited).toBe(0);
      expect(demo.output()).toContain('stopped');
      expect(existsSync(stackDir(name))).toBe(false);
      // Prometheus stopped with the rest.
      expect(
        await fetch(`${prometheus}/-/ready`).then(
          () => 'up',
          () => 'down',
        ),
      ).toBe('down');
      expect(
        await fetch(jaegerApi!).then(
          () => 'up',
          () => 'down',
        ),
      ).toBe('down');
    } finally {
      if (demo.child.exitCode === null) {
        demo.child.kill('SIGINT');
        await demo.exited;
      }
    }
  });
});
