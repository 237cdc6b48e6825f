/**
 * One fault test file's world: a real stack of its own (faults stop and start its servers), the
 * built-in CRDs, a namespace with the PostgreSQL server Secret, PostgreSQL logging every DDL statement
 * (so side effects can be counted), the prebuilt workflow bundle, and homeostat's worker and bridge
 * as child processes on the file's own task queue.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { Pool } from 'pg';
import pino from 'pino';
import { type Stack, startStack } from '../../../devstack';
import { builtinOperator, defaultSystemNamespace } from '../../../builtin';
import { watchedResourcesFor } from '../../../informer-bridge/operator-resources';
import { bundleObjectWorkflows } from '../../../workers/create-worker';
import { randomSuffix } from '../../support/harness';
import { type HomeostatProcess, spawnHomeostat, waitUntil } from './processes';

/**
 * The PostgresServer that PostgresDatabase objects use; its admin URL Secret, of the same name, lives in
 * homeostat's system namespace.
 */
export const serverSecretName = 'pg-server';

/** Lease timings of the bridges in fault tests (short, so a takeover happens within seconds). */
const lease = { seconds: '6', renewDeadline: '4', retryPeriod: '1' };

/** Rethrows `err` with the process's last log lines. */
const explain =
  (p: HomeostatProcess) =>
  (err: Error): never => {
    throw new Error(`${err.message}; last lines of ${p.role} ${p.pid}:\n${p.lines.slice(-15).join('\n')}`);
  };

/** A fault test file's stack, clients and homeostat processes. */
export class FaultEnv {
  readonly processes: HomeostatProcess[] = [];
  /** The kubeconfig homeostat's processes use (a test may point it at a proxy). */
  processKubeconfig: string;

  private constructor(
    readonly stack: Stack,
    readonly kc: k8s.KubeConfig,
    readonly connection: Connection,
    readonly temporal: Client,
    readonly pg: Pool,
    readonly namespace: string,
    readonly taskQueue: string,
    readonly bundlePath: string,
  ) {
    this.processKubeconfig = stack.endpoints.kubeconfig;
  }

  get custom(): k8s.CustomObjectsApi {
    return this.kc.makeApiClient(k8s.CustomObjectsApi);
  }

  get core(): k8s.CoreV1Api {
    return this.kc.makeApiClient(k8s.CoreV1Api);
  }

  /** Starts a stack named `<prefix>-<random>` and prepares everything but homeostat's processes. */
  static async start(prefix: string): Promise<FaultEnv> {
    const [stack, bundle] = await Promise.all([
      // envtest's control plane is enough here (no App, nothing to schedule), and the faults restart
      // kube-apiserver under it: the cluster's controllers would only add noise and load.
      startStack({ name: `${prefix}-${randomSuffix()}`, cluster: false }),
      bundleObjectWorkflows(undefined, pino({ level: 'warn' })),
    ]);
    try {
      const bundlePath = join(mkdtempSync(join(tmpdir(), 'homeostat-faults-')), 'workflow-bundle.js');
      writeFileSync(bundlePath, bundle.code);
      const kc = new k8s.KubeConfig();
      kc.loadFromFile(stack.endpoints.kubeconfig);
      execFileSync(stack.kubectl, [
        '--kubeconfig',
        stack.endpoints.kubeconfig,
        'apply',
        '--server-side',
        '-k',
        join(__dirname, '../../../deploy/crds'),
      ]);
      execFileSync(stack.kubectl, [
        '--kubeconfig',
        stack.endpoints.kubeconfig,
        'wait',
        '--for=condition=Established',
        'crd/apps.homeostat.dev',
        'crd/postgresdatabases.homeostat.dev',
        'crd/postgresservers.homeostat.dev',
      ]);
      const namespace = `faults-${randomSuffix()}`;
      const core = kc.makeApiClient(k8s.CoreV1Api);
      await core.createNamespace({ body: { metadata: { name: namespace } } });
      await core.createNamespace({ body: { metadata: { name: defaultSystemNamespace } } });
      await core.createNamespacedSecret({
        namespace: defaultSystemNamespace,
        body: {
          metadata: { name: serverSecretName },
          stringData: { url: stack.endpoints.postgresUrl },
        },
      });
      await kc.makeApiClient(k8s.CustomObjectsApi).createClusterCustomObject({
        group: 'homeostat.dev',
        version: 'v1alpha1',
        plural: 'postgresservers',
        body: {
          apiVersion: 'homeostat.dev/v1alpha1',
          kind: 'PostgresServer',
          metadata: { name: serverSecretName },
          spec: {
            adminSecretRef: { name: serverSecretName },
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
            // The fault tests raise limits past the default ceiling (a quarter of max_connections).
            connectionLimits: { ceiling: 10000 },
          },
        },
      });
      const pg = new Pool({ connectionString: stack.endpoints.postgresUrl, max: 4 });
      pg.on('error', () => {}); // idle clients die when PostgreSQL is stopped on purpose
      // Every DDL statement goes to the server log: the tests count CREATE DATABASE / CREATE ROLE there.
      await pg.query(`ALTER SYSTEM SET log_statement = 'ddl'`);
      await pg.query('SELECT pg_reload_conf()');
      const connection = await Connection.connect({ address: stack.endpoints.temporalAddress });
      const temporal = new Client({ connection, namespace: stack.endpoints.temporalNamespace });
      return new FaultEnv(stack, kc, connection, temporal, pg, namespace, `faults-${randomSuffix()}`, bundlePath);
    } catch (err) {
      await stack.stop().catch(() => {});
      throw err;
    }
  }

  private commonEnv(): Record<string, string> {
    return {
      TEMPORAL_ADDRESS: this.stack.endpoints.temporalAddress,
      TEMPORAL_NAMESPACE: this.stack.endpoints.temporalNamespace,
      HOMEOSTAT_TASK_QUEUE: this.taskQueue,
      KUBECONFIG: this.processKubeconfig,
      LOG_LEVEL: process.env.FAULTS_LOG_LEVEL ?? 'info',
    };
  }

  /** Starts `homeostat worker` (with `extra` environment) and waits until it polls its task queue. */
  async startWorker(extra: Record<string, string> = {}): Promise<HomeostatProcess> {
    const worker = await spawnHomeostat('worker', {
      ...this.commonEnv(),
      HOMEOSTAT_WORKFLOW_BUNDLE: this.bundlePath,
      HOMEOSTAT_WORKER_IDENTITY: `fault-worker-${randomSuffix(3)}`,
      ...extra,
    });
    this.processes.push(worker);
    await waitUntil('the worker to poll', () => worker.ready(), 60_000).catch(explain(worker));
    return worker;
  }

  /** Starts `homeostat bridge` (leader election on, short lease) scoped to the test namespace; waits until ready. */
  async startBridge(
    identity = `fault-bridge-${randomSuffix(3)}`,
    extra: Record<string, string> = {},
  ): Promise<HomeostatProcess> {
    const bridge = await spawnHomeostat('bridge', {
      ...this.commonEnv(),
      HOMEOSTAT_BRIDGE_RESOURCES: JSON.stringify(await watchedResourcesFor(builtinOperator, this.kc)),
      HOMEOSTAT_BRIDGE_NAMESPACE: this.namespace,
      HOMEOSTAT_BRIDGE_LEADER_ELECTION: 'true',
      HOMEOSTAT_BRIDGE_LEASE_NAMESPACE: this.namespace,
      HOMEOSTAT_BRIDGE_IDENTITY: identity,
      HOMEOSTAT_BRIDGE_LEASE_SECONDS: lease.seconds,
      HOMEOSTAT_BRIDGE_RENEW_DEADLINE_SECONDS: lease.renewDeadline,
      HOMEOSTAT_BRIDGE_RETRY_PERIOD_SECONDS: lease.retryPeriod,
      ...extra,
    });
    this.processes.push(bridge);
    await waitUntil('the bridge to be ready', () => bridge.ready(), 60_000).catch(explain(bridge));
    return bridge;
  }

  /** Waits until `bridge` holds the Lease. */
  async waitLeader(bridge: HomeostatProcess, timeoutMs = 60_000): Promise<void> {
    await waitUntil(
      `bridge ${bridge.pid} to lead`,
      async () => (await bridge.metric('homeostat_bridge_is_leader')) === 1,
      timeoutMs,
    );
  }

  /** The PostgreSQL server log so far. */
  postgresLog(): string {
    return readFileSync(join(this.stack.dir, 'logs', 'postgres.log'), 'utf8');
  }

  /** Kills every process still running, closes the clients and stops the stack. */
  async stop(): Promise<void> {
    for (const p of this.processes) p.kill('SIGKILL');
    await Promise.all(this.processes.map((p) => p.exited));
    await this.pg.end().catch(() => {});
    await this.connection.close().catch(() => {});
    await this.stack.stop();
  }
}
