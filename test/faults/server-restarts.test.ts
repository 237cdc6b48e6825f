/**
 * Faults of the servers homeostat depends on, on a stack of this file's own, with PostgresDatabase
 * objects reconciled by `homeostat worker` and `homeostat bridge` (child processes that nobody
 * restarts: they must ride every fault out):
 * - the Temporal dev server stopped and started again on the same database file;
 * - kube-apiserver stopped and started again (resumed watches answer 410: the bridge relists);
 * - etcd compacted past the bridge's watch while kube-apiserver was down, with a spec change written
 *   to etcd in the gap (the bridge must relist on 410 and deliver it);
 * - PostgreSQL stopped and started while steps run.
 * Each is repeated 3 times; afterwards every object converged to its last generation, each database
 * and role was created exactly once, deletion left no finalizer behind.
 */
import { randomSuffix } from '../support/harness';
import { Databases } from './support/databases';
import { FaultEnv } from './support/fault-env';
import { type HomeostatProcess, sleep } from './support/processes';
import { finishFault } from './support/report';

jest.setTimeout(900_000);

const reps = 3;

async function etcd<T>(url: string, path: string, body: object): Promise<T> {
  const res = await fetch(`${url}${path}`, { method: 'POST', body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`etcd ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');

describe('servers restarted under homeostat (own stack)', () => {
  let env: FaultEnv;
  let worker: HomeostatProcess;
  let bridge: HomeostatProcess;

  beforeAll(async () => {
    env = await FaultEnv.start('faults-restarts');
    [worker, bridge] = await Promise.all([env.startWorker(), env.startBridge()]);
    await env.waitLeader(bridge);
  }, 300_000);
  afterAll(async () => {
    await env?.stop();
  });

  const gone410 = (): Promise<number> => bridge.metric('homeostat_bridge_lists_total', { reason: 'gone' });

  it('given the Temporal dev server restarted on the same database, worker and bridge carry on and every change converges', async () => {
    const startedAt = Date.now();
    const dbs = new Databases(env, 'tp');
    await dbs.create(4);
    await dbs.waitConverged();
    await dbs.verify();
    for (let rep = 0; rep < reps; rep++) {
      await dbs.bump(); // passes in flight when the server goes
      await env.stack.stopComponent('temporal');
      await dbs.bump(); // changes made while it is down: the bridge keeps them
      await dbs.create(1);
      await sleep(5000);
      await env.stack.startComponent('temporal');
      await dbs.waitConverged();
    }
    await finishFault({ fault: 'temporal-restart', reps, dbs, survivors: [worker, bridge], startedAt });
  });

  it('given kube-apiserver restarted, worker and bridge carry on and every change converges', async () => {
    const startedAt = Date.now();
    const dbs = new Databases(env, 'ka');
    await dbs.create(4);
    await dbs.waitConverged();
    await dbs.verify();
    const relistsBefore = await gone410();
    for (let rep = 0; rep < reps; rep++) {
      await dbs.bump();
      await env.stack.stopComponent('kube-apiserver');
      await sleep(3000);
      await env.stack.startComponent('kube-apiserver');
      await dbs.bump(dbs.names.slice(0, 2)); // a change right after, while the bridge reconnects
      await dbs.waitConverged();
    }
    const relists = (await gone410()) - relistsBefore;
    await finishFault({
      fault: 'kube-apiserver-restart',
      reps,
      dbs,
      survivors: [worker, bridge],
      startedAt,
      extra: { relists410: relists },
    });
  });

  it('given etcd compacted past the watch while kube-apiserver was down, the bridge relists on 410 and the change written in the gap converges', async () => {
    const startedAt = Date.now();
    const dbs = new Databases(env, 'ec');
    await dbs.create(4);
    await dbs.waitConverged();
    await dbs.verify();
    const relistsBefore = await gone410();
    const url = env.stack.endpoints.etcdUrl;
    for (let rep = 0; rep < reps; rep++) {
      await env.stack.stopComponent('kube-apiserver');
      // A spec change nobody saw: written to etcd directly (custom resources are stored as JSON).
      const name = dbs.names[rep % dbs.names.length]!;
      const key = b64(`/registry/homeostat.dev/postgresdatabases/${env.namespace}/${name}`);
      const { kvs } = await etcd<{ kvs: { value: string }[] }>(url, '/v3/kv/range', { key });
      const stored = JSON.parse(Buffer.from(kvs[0]!.value, 'base64').toString()) as {
        metadata: { generation: number };
        spec: { connectionLimit: number };
      };
      stored.spec.connectionLimit = dbs.limitOf(name) + 100;
      stored.metadata.generation += 1;
      await etcd(url, '/v3/kv/put', { key, value: b64(JSON.stringify(stored)) });
      dbs.expectLimit(name, stored.spec.connectionLimit);
      // History up to now is compacted away: the bridge's resourceVersion is too old to resume from.
      await etcd(url, '/v3/kv/put', { key: b64(`/homeostat-faults/${randomSuffix()}`), value: b64('x') });
      const { header } = await etcd<{ header: { revision: string } }>(url, '/v3/kv/range', { key: b64('/') });
      await etcd(url, '/v3/kv/compaction', { revision: header.revision, physical: true });
      await env.stack.startComponent('kube-apiserver');
      await dbs.waitConverged();
    }
    const relists = (await gone410()) - relistsBefore;
    await finishFault({
      fault: 'etcd-compaction-410',
      reps,
      dbs,
      survivors: [worker, bridge],
      startedAt,
      extra: { relists410: relists },
    });
    expect(relists).toBeGreaterThanOrEqual(reps);
  });

  it('given PostgreSQL stopped and started while steps run, every object converges and nothing is created twice', async () => {
    const startedAt = Date.now();
    const dbs = new Databases(env, 'pq');
    await dbs.create(4);
    await dbs.waitConverged();
    await dbs.verify();
    for (let rep = 0; rep < reps; rep++) {
      await dbs.bump();
      await dbs.create(1); // its role and database steps hit the stop
      await sleep(300);
      await env.stack.stopComponent('postgres');
      await dbs.bump(); // a change while it is down: steps fail and are retried
      await sleep(5000);
      await env.stack.startComponent('postgres');
      await dbs.waitConverged();
    }
    await finishFault({ fault: 'postgres-restart', reps, dbs, survivors: [worker, bridge], startedAt });
  });
});
