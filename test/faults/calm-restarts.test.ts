/**
 * Calm restarts (issue 27): when every process restarts at once — the worker and the bridge killed,
 * the Temporal server and kube-apiserver stopped and started under them — homeostat comes back without
 * a pass, a signal or a history event for any object that did not change while it was away. The
 * bridge's relist fills its cache without signalling (only the audit looks at it, and starts a
 * workflow only where none runs); the workers replay a history only when its workflow has a task (or,
 * here, a query) and a replay records nothing.
 *
 * Measured (printed): history events added per unchanged object, signals the new bridge sent, and the
 * time from the restart to the bridge's first finished audit.
 */
import { workflowIdFor } from '../../core/definitions';
import { Databases } from './support/databases';
import { FaultEnv } from './support/fault-env';
import { type HomeostatProcess, waitUntil } from './support/processes';

jest.setTimeout(900_000);

/** Unchanged objects at the restart; each must come back with nothing added to its history. */
const objects = 40;

describe('every process restarted at once (own stack)', () => {
  let env: FaultEnv;

  beforeAll(async () => {
    env = await FaultEnv.start('faults-calm');
  }, 300_000);
  afterAll(async () => {
    await env?.stop();
  });

  const handleOf = (name: string) =>
    env.temporal.workflow.getHandle(
      workflowIdFor({ group: 'homeostat.dev', kind: 'PostgresDatabase', namespace: env.namespace, name }),
    );

  /** Each object's run and history length. */
  const histories = async (names: string[]): Promise<Map<string, { runId: string; events: number }>> => {
    const found = new Map<string, { runId: string; events: number }>();
    for (const name of names) {
      const d = await handleOf(name).describe();
      found.set(name, { runId: d.runId, events: d.historyLength });
    }
    return found;
  };

  it('given unchanged objects, a restart of the worker, the bridge, Temporal and kube-apiserver together adds no pass, signal or event to their workflows', async () => {
    let worker: HomeostatProcess = await env.startWorker();
    let bridge: HomeostatProcess = await env.startBridge();
    await env.waitLeader(bridge);
    const dbs = new Databases(env, 'calm');
    await dbs.create(objects);
    await dbs.waitConverged();
    const unchanged = dbs.names;
    const before = await histories(unchanged);

    // Everything at once: the homeostat processes die, the servers under them stop and start again.
    worker.kill('SIGKILL');
    bridge.kill('SIGKILL');
    await Promise.all([worker.exited, bridge.exited]);
    await Promise.all([env.stack.stopComponent('temporal'), env.stack.stopComponent('kube-apiserver')]);
    await Promise.all([env.stack.startComponent('temporal'), env.stack.startComponent('kube-apiserver')]);
    const restartedAt = Date.now();
    [worker, bridge] = await Promise.all([env.startWorker(), env.startBridge()]);
    await env.waitLeader(bridge);
    // The bridge has relisted and audited every cached object once; its queue is empty.
    await waitUntil(
      'the bridge to finish its first audit',
      async () => (await bridge.metric('homeostat_bridge_workflow_audits_total', { result: 'ok' })) >= 1,
      180_000,
    );
    const auditedAfterMs = Date.now() - restartedAt;
    await waitUntil(
      'the bridge queue to drain',
      async () => (await bridge.metric('homeostat_bridge_dirty_keys')) === 0,
      60_000,
    );
    const signals = await bridge.metric('homeostat_bridge_signals_sent_total');

    // The pipeline works: an object created now converges (and so do the unchanged ones: the queries
    // of waitConverged make the new worker replay every unchanged workflow).
    const [fresh] = await dbs.create(1);
    await dbs.waitConverged();
    const after = await histories(unchanged);

    const added = unchanged.map((name) => ({
      name,
      events: after.get(name)!.events - before.get(name)!.events,
      newRun: after.get(name)!.runId !== before.get(name)!.runId,
    }));
    const restartedWorkflows = await bridge.metric('homeostat_bridge_workflow_audit_starts_total');
    process.stdout.write(
      `[figures] calm restart: ${objects} unchanged objects; events added ${added.reduce((n, a) => n + a.events, 0)} ` +
        `(max per object ${Math.max(...added.map((a) => a.events))}); new runs ${added.filter((a) => a.newRun).length}; ` +
        `signals sent by the new bridge before ${fresh} was created ${signals}; workflows restarted by the audit ` +
        `${restartedWorkflows}; first audit done ${(auditedAfterMs / 1000).toFixed(1)} s after the servers were back\n`,
    );
    expect(added.filter((a) => a.events !== 0 || a.newRun)).toEqual([]);
    expect(restartedWorkflows).toBe(0);
    expect(signals).toBe(0);
    await dbs.deleteAll();
  });
});
