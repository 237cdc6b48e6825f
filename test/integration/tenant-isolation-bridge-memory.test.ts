/**
 * Tenant isolation, the bridge's share (issues 13 and 31). Memory: 2,000 unrelated 100 KiB Secrets, and
 * 1,500 ConfigMaps wearing homeostat's managed-by label with a 200 KB annotation each, leave the
 * informer bridge's memory within 10% of what it was without them (the cache keeps only the fields the
 * bridge uses: informer-bridge/cache-transform.ts). The bridge runs in a process of its own
 * (test/support/bridge-memory-probe.ts, watching every namespace, as deployed) so the test runner's heap
 * is not measured; each figure is `heapUsed` after two forced collections, the median of three. The
 * bridge is measured both while it watches the objects arrive and freshly started with them present
 * (its first list). Owners: a labelled ConfigMap naming 200 Claims that do not exist starts no workflow
 * (an owner reference must resolve to a cached owner with its UID).
 * Run time: the 1,500 × 200 KB ConfigMaps (300 MB through the API server) take a few minutes to create.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import pino from 'pino';
import { workflowIdFor } from '../../core/definitions';
import { Bridge, watchedResourcesFor } from '../../informer-bridge';
import { waitFor, workflowExists } from '../support/bridge';
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
    // Free the API server and etcd of the 200 MiB of Secrets and 300 MB of ConfigMaps.
    await t.core?.deleteCollectionNamespacedSecret({ namespace: noise }).catch(() => {});
    await t.core?.deleteCollectionNamespacedConfigMap({ namespace: noise }).catch(() => {});
    await t.core?.deleteNamespace({ name: noise }).catch(() => {});
  }, 120_000);

  const probe = (which: 'owning' | 'referencing'): Probe => {
    const p = new Probe([t.endpoints.kubeconfig, t.endpoints.temporalAddress, t.endpoints.temporalNamespace, which]);
    probes.push(p);
    return p;
  };
  const secretsCached = (r: BridgeMemoryReport): number => r.cacheObjects.secrets ?? 0;
  const configMapsCached = (r: BridgeMemoryReport): number => r.cacheObjects.configmaps ?? 0;

  /** Runs `fn(i)` for i in [0, n) with `workers` at a time. */
  const bounded = async (n: number, workers: number, fn: (i: number) => Promise<unknown>): Promise<void> => {
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < n; i = next++) await fn(i);
    };
    await Promise.all(Array.from({ length: workers }, worker));
  };

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

  it('given 1,500 ConfigMaps wearing homeostat’s label, each with a 200 KB annotation, the bridge’s heap stays within 10% of its heap without them, whether it watched them arrive or listed them at start', async () => {
    const labelled = 1_500;
    const owning = probe('owning'); // owns ConfigMaps: watched by homeostat's label, metadata only
    await owning.until('synced', (r) => r.ready);
    const before = await owning.heap();
    const base = configMapsCached(before.report);
    const annotation = randomBytes(150 * 1024).toString('base64'); // 200 KB (the limit is 256 KiB in all)
    const startedAt = Date.now();
    await bounded(labelled, 6, (i) =>
      t.core.createNamespacedConfigMap({
        namespace: noise,
        body: {
          metadata: {
            name: `labelled-${i}`,
            labels: { 'app.kubernetes.io/managed-by': 'homeostat' },
            annotations: { 'tenant.example.com/blob': `${i}${annotation}` },
          },
        },
      }),
    );
    const createdMs = Date.now() - startedAt;
    await owning.until('past every ConfigMap', (r) => configMapsCached(r) >= base + labelled, 300_000);
    const after = await owning.heap();

    const fresh = probe('owning');
    await fresh.until('synced', (r) => r.ready && configMapsCached(r) >= base + labelled, 300_000);
    const started = await fresh.heap();
    await fresh.stop();

    process.stderr.write(
      `bridge heap with 1,500 labelled 200 KB ConfigMaps (MiB): ${JSON.stringify({
        before: before.heapUsed / MiB,
        after: after.heapUsed / MiB,
        freshWithConfigMaps: started.heapUsed / MiB,
        configMapsCached: configMapsCached(after.report),
        configMapCacheBytes: after.report.cacheBytes.configmaps,
        createdInSeconds: Math.round(createdMs / 1000),
      })}\n`,
    );
    expect(after.heapUsed).toBeLessThanOrEqual(before.heapUsed * 1.1);
    expect(started.heapUsed).toBeLessThanOrEqual(before.heapUsed * 1.1);
  }, 900_000);

  it('given a ConfigMap wearing homeostat’s label that names 200 Claims that do not exist and a real Claim under a wrong UID, no workflow starts; a reference with the real UID still signals the owner', async () => {
    const ns = t.namespace;
    const group = 'claims.example.com';
    const refOf = (name: string) => ({ group, version: 'v1', kind: 'Claim', namespace: ns, name });
    const bridge = new Bridge({
      kc: t.kc,
      resources: await watchedResourcesFor(claims, t.kc),
      operator: claims,
      namespace: ns,
      client: t.temporal,
      taskQueue: `forged-owners-${randomSuffix()}`, // no worker: started workflows stay visible, run nothing
      log: pino({ level: process.env.BRIDGE_TEST_LOG ?? 'silent' }),
      leaderElection: false,
      auditWorkflows: false,
    });
    t.defer(async () => {
      await bridge.stop();
    });
    bridge.start();
    await waitFor(() => bridge.ready, 120_000);
    const real = (await t.custom.createNamespacedCustomObject({
      group,
      version: 'v1',
      namespace: ns,
      plural: 'claims',
      body: {
        apiVersion: `${group}/v1`,
        kind: 'Claim',
        metadata: { name: 'real' },
        spec: { kind: 'ConfigMap', name: 'real-child' },
      },
    })) as { metadata: { uid: string } };
    await waitFor(() => workflowExists(t.temporal, refOf('real')), 120_000, 200, 'the real Claim’s workflow');
    const ghosts = Array.from({ length: 200 }, (_, i) => `ghost-${i}`);
    const ownerRef = (name: string, uid: string) => ({ apiVersion: `${group}/v1`, kind: 'Claim', name, uid });
    const unresolved = async (): Promise<number> =>
      (await bridge.metrics.unresolvedOwners.get()).values.reduce((n, v) => n + v.value, 0);
    const sent = async (): Promise<number> =>
      (await bridge.metrics.signalsSent.get()).values
        .filter((v) => v.labels.reason === 'child-changed')
        .reduce((n, v) => n + v.value, 0);

    await t.core.createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: {
          name: 'forged',
          labels: { 'app.kubernetes.io/managed-by': 'homeostat' },
          ownerReferences: [...ghosts.map((g) => ownerRef(g, randomUUID())), ownerRef('real', randomUUID())],
        },
        data: { a: '1' },
      },
    });
    // Handled once its owner references were looked up (and left unresolved; the cache keeps the first
    // few of them). Not "the cache holds the resourceVersion it was created with": the cluster's garbage
    // collector deletes the ConfigMap (none of its owners exists) at any moment, and that check then
    // never holds (a full run failed so, and a run alone with the collector quick).
    await waitFor(
      async () => bridge.dirtyKeys === 0 && (await unresolved()) > 0,
      120_000,
      100,
      'the bridge to handle the forged ConfigMap',
    );
    const exists = await Promise.all(ghosts.map((g) => workflowExists(t.temporal, refOf(g))));
    const started = exists.filter(Boolean).length;
    // Visibility catches up with the real Claim's start before the list is read.
    const listed = await waitFor(async () => {
      const ids: string[] = [];
      for await (const wf of t.temporal.workflow.list({ query: `HomeostatNamespace = '${ns}'` }))
        ids.push(wf.workflowId);
      return ids.includes(workflowIdFor(refOf('real'))) && ids;
    }, 120_000);
    process.stderr.write(
      `forged owners: ${started} workflows started for 200 Claims that do not exist; visibility lists ${listed.length} in the namespace; ${await unresolved()} owner references unresolved; ${await sent()} child-changed signals\n`,
    );
    expect(started).toBe(0);
    expect(listed).toEqual([workflowIdFor(refOf('real'))]);
    expect(await sent()).toBe(0); // the real Claim named under a wrong UID is not signalled either

    await t.core.createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: {
          name: 'honest',
          labels: { 'app.kubernetes.io/managed-by': 'homeostat' },
          ownerReferences: [{ ...ownerRef('real', real.metadata.uid), controller: true }],
        },
        data: { a: '1' },
      },
    });
    await waitFor(async () => (await sent()) === 1, 120_000, 200, 'the real owner’s child-changed signal');
  }, 600_000);
});
