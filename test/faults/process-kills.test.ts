/**
 * Faults of homeostat's own processes, on a stack of this file's own, with PostgresDatabase objects
 * reconciled by `homeostat worker` and `homeostat bridge` running as child processes:
 * - a worker SIGKILLed while a step is blocked inside PostgreSQL (its CREATE ROLE waits on a lock);
 * - the (only) bridge SIGKILLed while objects change, and started again as its Deployment would;
 * - the leading bridge SIGKILLed with a standby, which takes over without any restart.
 * Each is repeated 3 times; afterwards every object converged to its last generation, each database
 * and role was created exactly once, deletion left no finalizer behind, and the processes that were
 * not killed are the same ones.
 */
import { Databases } from './support/databases';
import { FaultEnv } from './support/fault-env';
import { type HomeostatProcess, sleep, waitUntil } from './support/processes';
import { finishFault } from './support/report';

jest.setTimeout(900_000);

const reps = 3;

describe('homeostat processes killed (own stack)', () => {
  let env: FaultEnv;
  let worker: HomeostatProcess;
  let bridge: HomeostatProcess;

  beforeAll(async () => {
    env = await FaultEnv.start('faults-kills');
    [worker, bridge] = await Promise.all([env.startWorker(), env.startBridge()]);
    await env.waitLeader(bridge);
  }, 300_000);
  afterAll(async () => {
    await env?.stop();
  });

  it('given a worker SIGKILLed while a step is blocked in PostgreSQL, the worker already polling beside it finishes every pass and each database and role is created once', async () => {
    const startedAt = Date.now();
    const dbs = new Databases(env, 'wk');
    await dbs.create(2);
    await dbs.waitConverged();
    await dbs.verify(); // remembers the OIDs
    let killedMidStep = 0;
    let killedAt = 0;
    const resumedMs: number[] = [];
    for (let rep = 0; rep < reps; rep++) {
      // Hold the next two owner roles in an open transaction: the role step's CREATE ROLE waits on them.
      const blocker = await env.pg.connect();
      const roles = [dbs.roleFor(dbs.nextIndex), dbs.roleFor(dbs.nextIndex + 1)];
      await blocker.query('BEGIN');
      for (const role of roles) await blocker.query(`CREATE ROLE "${role}"`);
      try {
        const older = dbs.names;
        await dbs.create(2);
        await dbs.bump(older);
        await waitUntil(
          'both CREATE ROLE statements to wait on the lock',
          async () => {
            const res = await env.pg.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_stat_activity
               WHERE wait_event_type = 'Lock' AND query LIKE 'CREATE ROLE % LOGIN PASSWORD%' AND query SIMILAR TO $1`,
              [`%(${roles.join('|')})%`],
            );
            return res.rows[0]!.n === 2;
          },
          120_000,
        );
        // The replacement polls before the kill (another replica of the worker Deployment): what is
        // measured is how soon the killed worker's pass moves, not how fast a process starts.
        const next = await env.startWorker();
        worker.kill('SIGKILL');
        expect(await worker.exited).toEqual({ code: null, signal: 'SIGKILL' });
        killedAt = Date.now();
        killedMidStep += 2;
        worker = next;
      } finally {
        await blocker.query('ROLLBACK');
        blocker.release();
      }
      await dbs.waitConverged(240_000, dbs.names.slice(-2));
      resumedMs.push(Date.now() - killedAt);
      await dbs.waitConverged();
    }
    process.stderr.write(
      `[figures] worker SIGKILLed inside a local step (CREATE ROLE waiting on a lock), another worker polling: ` +
        `the two new objects were Ready ${resumedMs.join(', ')} ms after the kill\n`,
    );
    await finishFault({
      fault: 'worker-sigkill',
      reps,
      dbs,
      survivors: [bridge, worker],
      startedAt,
      extra: { killedMidStep, resumedMs: resumedMs.join('/') },
    });
  });

  it('given the bridge SIGKILLed while objects change, the restarted bridge delivers every change', async () => {
    const startedAt = Date.now();
    const dbs = new Databases(env, 'br');
    await dbs.create(4);
    await dbs.waitConverged();
    await dbs.verify();
    for (let rep = 0; rep < reps; rep++) {
      bridge.kill('SIGKILL');
      expect(await bridge.exited).toEqual({ code: null, signal: 'SIGKILL' });
      // Changes nobody watches: a new generation of every object and one new object.
      await dbs.bump();
      await dbs.create(1);
      await dbs.bump(dbs.names.slice(0, 2));
      // What its Deployment does: a new pod (new identity) that waits for the old Lease to expire.
      bridge = await env.startBridge();
      await env.waitLeader(bridge);
      await dbs.waitConverged();
    }
    await finishFault({ fault: 'bridge-sigkill', reps, dbs, survivors: [worker, bridge], startedAt });
  });

  it('given the leading bridge SIGKILLed with a standby running, the standby takes over and every change converges', async () => {
    const startedAt = Date.now();
    const dbs = new Databases(env, 'ld');
    let standby = await env.startBridge();
    await sleep(2000);
    expect(await standby.metric('homeostat_bridge_is_leader')).toBe(0);
    await dbs.create(4);
    await dbs.waitConverged();
    await dbs.verify();
    let takeovers = 0;
    for (let rep = 0; rep < reps; rep++) {
      const leader = bridge;
      leader.kill('SIGKILL');
      expect(await leader.exited).toEqual({ code: null, signal: 'SIGKILL' });
      await dbs.bump();
      await dbs.create(1);
      await env.waitLeader(standby);
      takeovers++;
      bridge = standby;
      await dbs.waitConverged();
      // The killed replica's replacement becomes the next standby.
      standby = await env.startBridge();
    }
    await finishFault({
      fault: 'leader-bridge-sigkill',
      reps,
      dbs,
      survivors: [worker, bridge, standby],
      startedAt,
      extra: { takeovers },
    });
  });
});
