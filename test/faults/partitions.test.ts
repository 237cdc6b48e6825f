/**
 * Partitions (issue 27): a TCP proxy this test controls sits on one link at a time — the worker and
 * Temporal, the bridge and kube-apiserver, the steps and PostgreSQL — and cuts it for two minutes
 * (blackhole: nothing passes, nothing is answered) while objects are changed and created; then the link
 * heals. Nothing may be lost (every object converges to its last generation, each database and role
 * is created exactly once), no process may need a restart, and healing must not set off a retry storm:
 * the connections each link carried during and after the cut are counted and bounded. A reset (every
 * connection refused for a while) and added latency follow on the same links. Each fault prints its
 * figures: recovery time from the heal to the last object converged, connections per second.
 *
 * `HOMEOSTAT_PARTITION_SECONDS` shortens the cut for a quick local run (default 120, as the issue asks).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultSystemNamespace } from '../../builtin';
import { Databases } from './support/databases';
import { FaultEnv, serverSecretName } from './support/fault-env';
import { type HomeostatProcess, sleep } from './support/processes';
import { finishFault } from './support/report';
import { TcpProxy, totalTraffic } from './support/tcp-proxy';

const partitionMs = Number(process.env.HOMEOSTAT_PARTITION_SECONDS ?? 120) * 1000;

jest.setTimeout(900_000);

describe('links partitioned under homeostat (own stack)', () => {
  let env: FaultEnv;
  let worker: HomeostatProcess;
  let bridge: HomeostatProcess;
  const proxies: Record<'temporal' | 'kube' | 'postgres', TcpProxy> = {} as never;

  beforeAll(async () => {
    env = await FaultEnv.start('faults-partitions');
    const e = env.stack.endpoints;
    const portOf = (address: string): number => Number(address.slice(address.lastIndexOf(':') + 1));
    proxies.temporal = await TcpProxy.start({ host: '127.0.0.1', port: portOf(e.temporalAddress) });
    proxies.kube = await TcpProxy.start({ host: '127.0.0.1', port: Number(new URL(e.kubeApiUrl).port) });
    proxies.postgres = await TcpProxy.start({ host: '127.0.0.1', port: Number(new URL(e.postgresUrl).port) });
    // The bridge reaches kube-apiserver through its proxy (the worker directly); the server's
    // certificate names 127.0.0.1, which the proxy is too.
    const kubeconfig = join(env.stack.dir, 'kubeconfig-partitioned');
    writeFileSync(
      kubeconfig,
      readFileSync(e.kubeconfig, 'utf8').replace(e.kubeApiUrl, `https://${proxies.kube.address}`),
      { mode: 0o600 },
    );
    // Steps reach PostgreSQL through its proxy: the PostgresServer's admin URL names it.
    const url = new URL(e.postgresUrl);
    url.port = String(proxies.postgres.port);
    await env.core.patchNamespacedSecret({
      name: serverSecretName,
      namespace: defaultSystemNamespace,
      body: [{ op: 'replace', path: '/data/url', value: Buffer.from(url.toString()).toString('base64') }],
    });
    [worker, bridge] = await Promise.all([
      env.startWorker({ TEMPORAL_ADDRESS: proxies.temporal.address }),
      env.startBridge(undefined, { KUBECONFIG: kubeconfig }),
    ]);
    await env.waitLeader(bridge);
  }, 300_000);
  afterAll(async () => {
    await env?.stop();
    await Promise.all(Object.values(proxies).map((p) => p.close()));
  });

  /**
   * Cuts `link` for the partition's length while `during` changes the world, heals it, waits until
   * every object converged and returns the figures.
   */
  async function cut(link: keyof typeof proxies, dbs: Databases, during: () => Promise<void>) {
    const proxy = proxies[link];
    const steadySince = Date.now() - 30_000;
    const cutAt = Date.now();
    proxy.set('blackhole');
    await during();
    await sleep(Math.max(0, partitionMs - (Date.now() - cutAt)));
    const healedAt = Date.now();
    proxy.set('open');
    await dbs.waitConverged(300_000);
    const convergedAt = Date.now();
    const steady = totalTraffic(proxy.traffic(steadySince, cutAt));
    const partitioned = totalTraffic(proxy.traffic(cutAt, healedAt));
    const healing = totalTraffic(proxy.traffic(healedAt, convergedAt));
    return {
      recoverySeconds: (convergedAt - healedAt) / 1000,
      connectionsBefore: steady.connections,
      connectionsDuring: partitioned.connections,
      connectionsHealing: healing.connections,
      peakConnectionsPerSecondHealing: healing.peakConnectionsPerSecond,
      kibUpHealing: Math.round(healing.bytesUp / 1024),
    };
  }

  /**
   * No retry storm: while cut, a link sees reconnection attempts paced by backoff, not a flood; once
   * healed, no more connections than a few per object. The bounds are counts, not rates, so a slow
   * machine (fewer attempts) never fails them; they are far above what backoff allows (see the figures
   * each fault prints) and far below a client retrying without backoff, which opens hundreds.
   */
  function expectNoStorm(figures: { connectionsDuring: number; connectionsHealing: number }, objects: number): void {
    expect(figures.connectionsDuring).toBeLessThanOrEqual(20 * objects + 60);
    expect(figures.connectionsHealing).toBeLessThanOrEqual(10 * objects + 30);
  }

  it('given the worker cut off from Temporal for two minutes while objects change, nothing is lost and healing brings no retry storm', async () => {
    const startedAt = Date.now();
    const dbs = new Databases(env, 'wt');
    await dbs.create(4);
    await dbs.waitConverged();
    const figures = await cut('temporal', dbs, async () => {
      await dbs.bump(); // the bridge's signals land in Temporal; the worker cannot take the tasks
      await dbs.create(2);
    });
    // Then every connection reset, and refused for a while, with a change meanwhile.
    proxies.temporal.set('reset');
    await dbs.bump();
    await sleep(10_000);
    proxies.temporal.set('open');
    const objects = dbs.names.length;
    await finishFault({
      fault: 'partition-worker-temporal',
      reps: 1,
      dbs,
      survivors: [worker, bridge],
      startedAt,
      extra: figures,
    });
    expectNoStorm(figures, objects);
  });

  it('given the bridge cut off from kube-apiserver for two minutes while objects change, it delivers every change once it leads again, and healing brings no retry storm', async () => {
    const startedAt = Date.now();
    const dbs = new Databases(env, 'bk');
    await dbs.create(4);
    await dbs.waitConverged();
    const figures = await cut('kube', dbs, async () => {
      await dbs.bump(); // written to the API server; the bridge cannot see them until the link heals
      await dbs.create(2);
    });
    await env.waitLeader(bridge);
    // Added latency: every byte between the bridge and the API server 300 ms late, with changes.
    proxies.kube.latency(300);
    try {
      await dbs.bump();
      await dbs.waitConverged(300_000);
    } finally {
      proxies.kube.latency(0); // a failed wait must not leave the next fault a slow link
    }
    const objects = dbs.names.length;
    await finishFault({
      fault: 'partition-bridge-kube',
      reps: 1,
      dbs,
      survivors: [worker, bridge],
      startedAt,
      extra: figures,
    });
    expectNoStorm(figures, objects);
  });

  it('given the steps cut off from PostgreSQL for two minutes while objects change, every database and role is created exactly once and healing brings no retry storm', async () => {
    const startedAt = Date.now();
    const dbs = new Databases(env, 'sp');
    await dbs.create(3);
    await dbs.waitConverged();
    const figures = await cut('postgres', dbs, async () => {
      await dbs.bump(); // steps block on the cut link: their queries never answer
      await dbs.create(2); // CREATE DATABASE / CREATE ROLE may be sent and wait in the cut
    });
    // Connections reset mid-statement, then a slow link.
    proxies.postgres.set('reset');
    await dbs.bump();
    await sleep(10_000);
    proxies.postgres.set('open');
    proxies.postgres.latency(200);
    try {
      await dbs.create(1);
      await dbs.waitConverged(300_000);
    } finally {
      proxies.postgres.latency(0);
    }
    const objects = dbs.names.length;
    await finishFault({
      fault: 'partition-steps-postgres',
      reps: 1,
      dbs,
      survivors: [worker, bridge],
      startedAt,
      extra: figures,
    });
    expectNoStorm(figures, objects);
  });
});
