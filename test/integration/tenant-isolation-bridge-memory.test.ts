/**
 * Tenant isolation, the bridge's share (issue 13): 2,000 unrelated 100 KiB Secrets added to the
 * cluster leave the informer bridge's memory within 10% of what it was without them. The bridge runs
 * in a process of its own (test/support/bridge-memory-probe.ts, watching every namespace, as deployed)
 * so the test runner's heap is not measured; each figure is `heapUsed` after two forced collections,
 * the median of three. The bridge is measured both while it watches the Secrets arrive and freshly
 * started with them present (its first list).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { BridgeMemoryReport } from '../support/bridge-memory-probe';
import { randomSuffix, useStack } from '../support/harness';
import { installOperatorCrds } from '../support/homeostat';
import claims from '../fixtures/operators/claims';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const secrets = 2_000;
const secretBytes = 100 * 1024;
const MiB = 1024 * 1024;

/** A bridge in its own process, measured on request. */
class Probe {
  private readonly child: ChildProcess;
  private readonly started: Promise<void>;

  constructor(args: string[]) {
    this.child = fork(join(__dirname, '../support/bridge-memory-probe.ts'), args, {
      execArgv: ['--expose-gc', '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.started = new Promise((resolve, reject) => {
      this.child.once('message', () => resolve());
      this.child.once('exit', (code) => reject(new Error(`probe exited with ${code}`)));
    });
  }

  async measure(): Promise<BridgeMemoryReport> {
    await this.started;
    return new Promise((resolve) => {
      this.child.once('message', (m) => resolve(m as BridgeMemoryReport));
      this.child.send('measure');
    });
  }

  /** The median of three measurements, a second apart. */
  async heap(): Promise<{ heapUsed: number; report: BridgeMemoryReport }> {
    const reports: BridgeMemoryReport[] = [];
    for (let i = 0; i < 3; i++) {
      reports.push(await this.measure());
      await sleep(1_000);
    }
    reports.sort((a, b) => a.heapUsed - b.heapUsed);
    return { heapUsed: reports[1]!.heapUsed, report: reports[2]! };
  }

  async until(what: string, test: (r: BridgeMemoryReport) => boolean, ms = 120_000): Promise<BridgeMemoryReport> {
    let last: BridgeMemoryReport | undefined;
    for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(500)) {
      last = await this.measure();
      if (test(last)) return last;
    }
    throw new Error(`probe: not ${what}: ${JSON.stringify(last)}`);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.send('stop');
    await Promise.race([exited, sleep(10_000)]);
    if (this.child.exitCode === null) this.child.kill();
  }
}

describe('tenant isolation: the bridge caches only what it needs', () => {
  const t = useStack();
  const probes: Probe[] = [];
  let noise: string;

  beforeAll(async () => {
    await installOperatorCrds(t, claims);
    noise = `t-noise-${randomSuffix()}`;
    await t.core.createNamespace({ body: { metadata: { name: noise, labels: { 'homeostat.dev/test': 'true' } } } });
  }, 120_000);

  afterAll(async () => {
    for (const p of probes) await p.stop();
    // Free the API server and etcd of the 200 MiB of Secrets.
    await t.core?.deleteCollectionNamespacedSecret({ namespace: noise }).catch(() => {});
    await t.core?.deleteNamespace({ name: noise }).catch(() => {});
  }, 120_000);

  const probe = (which: 'owning' | 'referencing'): Probe => {
    const p = new Probe([t.endpoints.kubeconfig, t.endpoints.temporalAddress, t.endpoints.temporalNamespace, which]);
    probes.push(p);
    return p;
  };
  const secretsCached = (r: BridgeMemoryReport): number => r.cacheObjects.secrets ?? 0;

  it('given 2,000 unrelated 100 KiB Secrets, the bridge’s heap stays within 10% of its heap without them, whether it watched them arrive or listed them at start', async () => {
    const owning = probe('owning'); // owns Secrets only: watched by homeostat's label, metadata only
    const referencing = probe('referencing'); // owns and references Secrets: unfiltered, metadata only
    await owning.until('synced', (r) => r.ready);
    await referencing.until('synced', (r) => r.ready);
    const before = { owning: await owning.heap(), referencing: await referencing.heap() };

    const data = { blob: randomBytes(secretBytes).toString('base64') };
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < secrets; i = next++) {
        await t.core.createNamespacedSecret({
          namespace: noise,
          body: { metadata: { name: `noise-${i}` }, data },
        });
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
    // A last Secret wearing homeostat's label: once the label-filtered watch delivered it, it has
    // passed every Secret created before it (one watch stream is ordered).
    await t.core.createNamespacedSecret({
      namespace: noise,
      body: { metadata: { name: 'marker', labels: { 'app.kubernetes.io/managed-by': 'homeostat' } } },
    });
    const base = { owning: secretsCached(before.owning.report), referencing: secretsCached(before.referencing.report) };
    await owning.until('past the marker', (r) => secretsCached(r) >= base.owning + 1);
    await referencing.until('past every Secret', (r) => secretsCached(r) >= base.referencing + secrets + 1);
    const after = { owning: await owning.heap(), referencing: await referencing.heap() };

    const fresh = probe('referencing');
    await fresh.until('synced', (r) => r.ready);
    const started = await fresh.heap();
    await fresh.stop();

    const figures = {
      owning: { before: before.owning.heapUsed / MiB, after: after.owning.heapUsed / MiB },
      referencing: {
        before: before.referencing.heapUsed / MiB,
        after: after.referencing.heapUsed / MiB,
        freshWithSecrets: started.heapUsed / MiB,
        secretsCached: secretsCached(after.referencing.report),
        secretCacheBytes: after.referencing.report.cacheBytes.secrets,
      },
    };
    process.stderr.write(`bridge heap (MiB): ${JSON.stringify(figures)}\n`);
    expect(secretsCached(after.owning.report)).toBe(base.owning + 1); // only the labelled one
    expect(after.owning.heapUsed).toBeLessThanOrEqual(before.owning.heapUsed * 1.1);
    expect(after.referencing.heapUsed).toBeLessThanOrEqual(before.referencing.heapUsed * 1.1);
    expect(started.heapUsed).toBeLessThanOrEqual(before.referencing.heapUsed * 1.1);
  }, 600_000);
});
