/**
 * homeostat's alerting rules (`deploy/monitoring/homeostat-alerts.yaml`, issue 30), each made to fire by
 * a real fault and to clear after it, on a real Prometheus scraping the real `homeostat worker` and
 * `homeostat bridge` processes and the Temporal dev server:
 * - a step that fails for good: HomeostatReconcileErrors and HomeostatObjectsDegraded, cleared by a spec fix;
 * - a step that stays in progress: HomeostatObjectsStuckReconciling, cleared when its work finishes;
 * - a bridge whose RBAC forbids listing one kind: HomeostatBridgeNotSynced, cleared by granting it;
 * - a workflow the worker cannot run (a type it does not have): HomeostatWorkflowTaskFailures, cleared
 *   when it is terminated;
 * - a burst of signals: HomeostatApproachingTemporalActionLimit, cleared when it stops.
 * The rules' clocks are scaled down (`writeScaledAlertRules`: `for`, range windows, the not-Ready and
 * action-rate thresholds) so the test takes minutes, not hours; expressions, names and labels are the
 * shipped ones. Nothing here waits for a pace: each wait is for a state Prometheus reports.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { Pool } from 'pg';
import { devWorkflowBundle } from '../../cli/dev-workflow-bundle';
import { type RunningPrometheus, startPrometheus } from '../../devstack/components/prometheus';
import { freePorts } from '../../devstack/processes';
import { createCounterTables } from '../fixtures/counter/reconciler';
import { type BridgeProcess, spawnBridge, waitFor } from '../support/bridge';
import { Counters, installCounterCrds } from '../support/counter-harness';
import { randomSuffix, useStack } from '../support/harness';
import { alertStates, promQuery, shippedAlertNames, writeScaledAlertRules } from '../support/prometheus';

const operatorModule = join(__dirname, '../fixtures/operators/counters.ts');
const cli = join(__dirname, '../../cli/homeostat.ts');

/** The alerts the test's standing faults fire together (the action-rate alert has a burst of its own). */
const faultAlerts = [
  'HomeostatReconcileErrors',
  'HomeostatObjectsDegraded',
  'HomeostatObjectsStuckReconciling',
  'HomeostatBridgeNotSynced',
  'HomeostatWorkflowTaskFailures',
];

describe('alerting rules under induced faults', () => {
  const t = useStack();
  const taskQueue = `alerts-${randomSuffix()}`;
  const dir = mkdtempSync(join(tmpdir(), 'homeostat-alerts-'));
  const children: ChildProcess[] = [];
  let pool: Pool;
  let bridge: BridgeProcess | undefined;
  let prometheus: RunningPrometheus | undefined;
  const roleName = 'alerts-bridge';
  /** The bridge may read every counter kind but ChainCounter until the fault is lifted. */
  const counterRule = (plurals: string[]): k8s.V1PolicyRule => ({
    apiGroups: ['test.homeostat.dev'],
    resources: plurals,
    verbs: ['get', 'list', 'watch'],
  });
  const role = (plurals: string[]): k8s.V1Role => ({
    metadata: { name: roleName, namespace: t.namespace },
    rules: [counterRule(plurals), { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }],
  });

  /** A kubeconfig file for a ServiceAccount of the test's namespace (a bound token). */
  async function serviceAccountKubeconfig(name: string): Promise<string> {
    await t.core.createNamespacedServiceAccount({ namespace: t.namespace, body: { metadata: { name } } });
    const { status } = await t.core.createNamespacedServiceAccountToken({
      namespace: t.namespace,
      name,
      body: { spec: { audiences: [], expirationSeconds: 3600 } },
    });
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ ...t.kc.getCurrentCluster()!, name: 'stack' }],
      users: [{ name, token: status!.token }],
      contexts: [{ name, cluster: 'stack', user: name }],
      currentContext: name,
    });
    const file = join(dir, `${name}.kubeconfig`);
    writeFileSync(file, kc.exportConfig(), { mode: 0o600 });
    return file;
  }

  /** Starts `homeostat worker` for the counter operator and waits until it polls (`/readyz`). */
  async function startWorker(port: number, env: Record<string, string>): Promise<void> {
    // The worker is this child itself (tsx as a loader, not tsx's CLI, which runs it in a grandchild):
    // afterAll's SIGKILL must end it, not orphan it (an orphaned worker outlived a CI run).
    const child = spawn(process.execPath, ['--import', 'tsx', cli, 'worker'], {
      env: { ...process.env, ...env, KUBECONFIG: t.endpoints.kubeconfig, HOMEOSTAT_WORKER_PORT: String(port) },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code) => reject(new Error(`the worker exited early (${code})`))),
    );
    const ready = waitFor(
      () =>
        fetch(`http://127.0.0.1:${port}/readyz`).then(
          (r) => r.ok,
          () => false,
        ),
      120_000,
      250,
      'the worker to poll',
    );
    await Promise.race([ready, exited]);
  }

  beforeAll(async () => {
    pool = new Pool({ connectionString: t.endpoints.postgresUrl, max: 4 });
    await createCounterTables(pool);
    await installCounterCrds(t);
    const rbac = t.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: t.namespace,
      body: role(['counters', 'driftcounters', 'localcounters']),
    });
    await rbac.createNamespacedRoleBinding({
      namespace: t.namespace,
      body: {
        metadata: { name: roleName, namespace: t.namespace },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: roleName },
        subjects: [{ kind: 'ServiceAccount', name: roleName, namespace: t.namespace }],
      },
    });
    const env = {
      TEMPORAL_ADDRESS: t.endpoints.temporalAddress,
      TEMPORAL_NAMESPACE: t.endpoints.temporalNamespace,
      HOMEOSTAT_TASK_QUEUE: taskQueue,
      HOMEOSTAT_OPERATOR: operatorModule,
      HOMEOSTAT_WORKER_VERSIONING: 'false',
      HOMEOSTAT_WORKFLOW_BUNDLE: await devWorkflowBundle(() => {}),
      COUNTER_POSTGRES_URL: t.endpoints.postgresUrl,
      LOG_LEVEL: 'warn',
    };
    const [workerPort] = await freePorts(1);
    await startWorker(workerPort!, env);
    bridge = await spawnBridge({
      ...env,
      LOG_LEVEL: 'info',
      KUBECONFIG: await serviceAccountKubeconfig(roleName),
      HOMEOSTAT_BRIDGE_NAMESPACE: t.namespace,
      HOMEOSTAT_BRIDGE_LEADER_ELECTION: 'false',
    });
    const rules = join(dir, 'alerts.yaml');
    writeScaledAlertRules(rules, { forSeconds: 2, windowSeconds: 60, notReadySeconds: 3, actionLimitPerSecond: 2.5 });
    prometheus = await startPrometheus({
      dir: join(dir, 'prometheus'),
      targets: [
        { job: 'worker', url: `http://127.0.0.1:${workerPort}/metrics` },
        { job: 'bridge', url: `http://127.0.0.1:${bridge.port}/metrics` },
        { job: 'temporal', url: t.endpoints.temporalMetricsUrl },
      ],
      ruleFiles: [rules],
      intervalSeconds: 1,
    });
  }, 600_000);

  afterAll(async () => {
    await prometheus?.stop();
    bridge?.kill('SIGKILL');
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await pool?.end();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Waits until each named alert has been seen in `state` (Prometheus's own evaluation), not necessarily at
   * the same moment when firing: a fault counted once (a terminal error) fires its rate alert for one
   * window only. Inactive means all of them at once: the faults are gone, nothing fires again.
   */
  async function waitForAlerts(names: string[], state: 'firing' | 'inactive', what: string): Promise<void> {
    const seen = new Set<string>();
    let last: Record<string, string> = {};
    await waitFor(
      async () => {
        last = await alertStates(prometheus!.url);
        if (state === 'inactive') seen.clear();
        for (const name of names) if (last[name] === state) seen.add(name);
        return seen.size === names.length;
      },
      240_000,
      500,
      () => `${names.filter((n) => !seen.has(n)).join(', ')} to be ${state} (${what}); states: ${JSON.stringify(last)}`,
    );
  }

  it('given each fault the rules name, its alert fires, and it clears once the fault is lifted', async () => {
    const rbac = t.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    // Before any fault, every shipped rule is loaded and none fires but the bridge's (ChainCounter unlisted).
    const states = await waitFor(async () => {
      const s = await alertStates(prometheus!.url);
      // A rule reads `unknown` until its first evaluation.
      return Object.keys(s).length === shippedAlertNames().length && !Object.values(s).includes('unknown') && s;
    });
    expect(Object.keys(states).sort()).toEqual([...shippedAlertNames()].sort());
    expect(states.HomeostatReconcileErrors).toBe('inactive');
    expect(states.HomeostatWorkflowTaskFailures).toBe('inactive');

    // The worker exports the error counters at 0 before its first pass (as controller-runtime does): a
    // series first seen at 1 would show no increase, and the first failure would never fire its alert.
    const zero = await waitFor(async () => {
      const found = await promQuery(prometheus!.url, 'controller_runtime_reconcile_errors_total{controller="counter"}');
      return found.length > 0 && found;
    });
    expect(zero.map((s) => s.value[1])).toEqual(['0']);

    // The faults, all at once.
    const counters = new Counters(t, taskQueue);
    const failing = t.unique('failing');
    await counters.create(failing, { message: 'doomed pony', terminal: true });
    const held = t.unique('held');
    const gate = `gate-${held}`;
    await pool.query('INSERT INTO counter_conflicts (name) VALUES ($1)', [gate]);
    const heldObj = await counters.create(held, { message: 'patient pony', holdWhile: gate });
    const stranger = await t.temporal.workflow.start('noSuchWorkflowType', {
      taskQueue,
      workflowId: `alerts-unknown-type-${randomSuffix()}`,
      args: [],
    });
    await counters.waitForPhase(failing, 'Degraded', 1, 120_000);
    await counters.waitForPhase(held, 'Reconciling', 1, 120_000);
    await waitForAlerts(faultAlerts, 'firing', 'under their faults');

    // The faults lifted: a fixed spec, the work done, the bridge allowed, the stranger gone.
    await counters.patchSpec(failing, { terminal: false });
    await pool.query('DELETE FROM counter_conflicts WHERE name = $1', [gate]);
    await counters.request(heldObj, 'child-changed');
    await rbac.replaceNamespacedRole({
      name: roleName,
      namespace: t.namespace,
      body: role(['counters', 'driftcounters', 'localcounters', 'chaincounters']),
    });
    await stranger.terminate('the alerts test is done with it');
    await counters.waitForPhase(failing, 'Ready', 2, 120_000);
    await counters.waitForPhase(held, 'Ready', 1, 120_000);
    await waitForAlerts(faultAlerts, 'inactive', 'after their faults');

    // A burst of reconcile requests (each signal is a Temporal action) until the action-rate alert fires.
    const ready = (await counters.get(failing))!;
    let bursting = true;
    const burst = Promise.all(
      [0, 1, 2, 3].map(async () => {
        while (bursting) await counters.request(ready, 'updated');
      }),
    );
    try {
      await waitForAlerts(['HomeostatApproachingTemporalActionLimit'], 'firing', 'during a burst of signals');
    } finally {
      bursting = false;
      await burst;
    }
    await waitForAlerts(['HomeostatApproachingTemporalActionLimit'], 'inactive', 'after the burst');
  }, 900_000);
});
