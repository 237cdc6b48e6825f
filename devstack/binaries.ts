import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir, repoRoot } from './paths';

/** One server built from a pinned Go wrapper module under `devstack/go/<name>`. */
export interface GoServer {
  /** Folder under `devstack/go/` and the binary's file name. */
  readonly name:
    | 'temporal'
    | 'etcd'
    | 'kube-apiserver'
    | 'kubectl'
    | 'kube-controller-manager'
    | 'kube-scheduler'
    | 'kwok'
    | 'prometheus'
    | 'jaeger';
  /** The upstream version the wrapper module pins (part of the cache key). */
  readonly version: string;
  /** The main package to build. */
  readonly pkg: string;
  /** Extra `-ldflags`. */
  readonly ldflags: string;
  /** Go build tags (part of the cache key). @default none */
  readonly tags?: string;
}

const kubeLdflags = [
  '-X k8s.io/component-base/version.gitVersion=v1.35.4',
  '-X k8s.io/component-base/version.gitMajor=1',
  '-X k8s.io/component-base/version.gitMinor=35',
].join(' ');

/** The servers of the local control plane, pinned. Change a version here and in its wrapper go.mod together. */
export const goServers: readonly GoServer[] = [
  { name: 'etcd', version: 'v3.6.16', pkg: 'go.etcd.io/etcd/server/v3', ldflags: '' },
  // The Temporal dev server is a main of the wrapper's own (devstack/go/temporal/main.go): the server
  // and UI server modules embedded as the CLI's start-dev does, since current CLI releases cannot be
  // built from modules. The version is the server's.
  { name: 'temporal', version: 'v1.32.1', pkg: 'homeostat.dev/devstack/temporal', ldflags: '' },
  {
    name: 'kube-apiserver',
    version: 'v1.35.4',
    pkg: 'k8s.io/kubernetes/cmd/kube-apiserver',
    ldflags: [
      '-X k8s.io/component-base/version.gitVersion=v1.35.4',
      '-X k8s.io/component-base/version.gitMajor=1',
      '-X k8s.io/component-base/version.gitMinor=35',
    ].join(' '),
  },
  {
    name: 'kubectl',
    version: 'v1.35.4',
    pkg: 'k8s.io/kubernetes/cmd/kubectl',
    ldflags: [
      '-X k8s.io/component-base/version.gitVersion=v1.35.4',
      '-X k8s.io/component-base/version.gitMajor=1',
      '-X k8s.io/component-base/version.gitMinor=35',
      '-X k8s.io/client-go/pkg/version.gitVersion=v1.35.4',
    ].join(' '),
  },
  // The rest of a cluster (issue 14): controllers, scheduler and simulated nodes. The two Kubernetes
  // components share the kube-apiserver's wrapper-module layout and most of its compiled packages.
  {
    name: 'kube-controller-manager',
    version: 'v1.35.4',
    pkg: 'k8s.io/kubernetes/cmd/kube-controller-manager',
    ldflags: kubeLdflags,
  },
  { name: 'kube-scheduler', version: 'v1.35.4', pkg: 'k8s.io/kubernetes/cmd/kube-scheduler', ldflags: kubeLdflags },
  // kwok's go.mod has no replace directives. The wrapper's own main is kwok's entry point plus
  // `kwok default-stages` (the stages kwokctl uses), see devstack/go/kwok/main.go.
  { name: 'kwok', version: 'v0.8.0', pkg: 'homeostat.dev/devstack/kwok', ldflags: '' },
  // Prometheus (issue 30): scrapes the demo's processes; built only by what runs it (`homeostat dev`,
  // the metrics tests), never by a plain stack. Go module v0.316.0 is Prometheus 3.x; built without the
  // `builtinassets` tag (the module holds no compiled web UI), so its HTTP API serves and its UI does not.
  // Only static targets are scraped: `remove_all_sd` leaves out every service-discovery provider (the
  // cloud SDKs and client-go), which is most of a cold build.
  {
    name: 'prometheus',
    version: 'v0.316.0',
    pkg: 'github.com/prometheus/prometheus/cmd/prometheus',
    ldflags: '',
    tags: 'remove_all_sd',
  },
  // Jaeger v2 (issue 30): receives the demo's and the tracing test's OTLP spans, keeps them in memory and
  // serves its query API and UI; built only by what runs it. Jaeger v2 is tagged twice per release and the
  // module proxy serves only the v1 tag of the same commit: module v1.76.0 is Jaeger v2.13.0, and its
  // cmd/jaeger is the v2 binary (an OpenTelemetry Collector distribution).
  { name: 'jaeger', version: 'v2.13.0', pkg: 'github.com/jaegertracing/jaeger/cmd/jaeger', ldflags: '' },
];

/**
 * Cache path of a server's binary: keyed by version and by a hash of the wrapper's go.mod, go.sum and
 * its own Go files (a wrapper with a main of its own, such as kwok's).
 */
export function binaryPath(server: GoServer, env: NodeJS.ProcessEnv = process.env): string {
  const moduleDir = join(repoRoot, 'devstack', 'go', server.name);
  const hasher = createHash('sha256')
    .update(readFileSync(join(moduleDir, 'go.mod')))
    .update(readFileSync(join(moduleDir, 'go.sum')));
  for (const file of readdirSync(moduleDir)
    .filter((f) => f.endsWith('.go'))
    .sort()) {
    hasher.update(file).update(readFileSync(join(moduleDir, file)));
  }
  if (server.tags) hasher.update(`tags:${server.tags}`);
  const hash = hasher.digest('hex').slice(0, 12);
  return join(cacheDir(env), 'bin', server.name, `${server.version}-${hash}`, server.name);
}

/**
 * The oldest Go that builds every server: the highest `go` line of the wrapper modules' go.mod files
 * (what the README and the scaffold's README state).
 */
export function goVersionNeeded(): string {
  const goLine = (s: GoServer): string =>
    /^go (\d+(?:\.\d+)*)\s*$/m.exec(readFileSync(join(repoRoot, 'devstack', 'go', s.name, 'go.mod'), 'utf8'))?.[1] ??
    '0';
  return goServers.map(goLine).reduce((a, b) => (b.localeCompare(a, undefined, { numeric: true }) > 0 ? b : a));
}

/** Progress reporter: one line per call. */
export type Progress = (line: string) => void;

function run(cmd: string, args: string[], cwd: string, onLine?: (line: string) => void): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, {
      cwd,
      env: { ...process.env, CGO_ENABLED: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let tail = '';
    const onData = (chunk: Buffer, keep: boolean): void => {
      const text = chunk.toString('utf8');
      if (keep) out += text;
      tail = (tail + text).slice(-4000);
      if (onLine) for (const line of text.split('\n')) if (line.trim()) onLine(line);
    };
    child.stdout.on('data', (c: Buffer) => onData(c, true));
    child.stderr.on('data', (c: Buffer) => onData(c, false));
    child.on('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'ENOENT' && cmd === 'go'
          ? new Error(`the local stack's servers are built with Go: install Go ${goVersionNeeded()} or newer`, {
              cause: err,
            })
          : err,
      ),
    );
    child.on('close', (code) => {
      if (code === 0) resolvePromise(out);
      else reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}:\n${tail}`));
    });
  });
}

/**
 * Builds one server unless its binary is cached; returns the binary's path. Shows progress as
 * compiled packages out of the total, every few seconds. Safe to run concurrently: the binary is
 * written to a temporary name and renamed into place.
 */
export async function ensureBinary(server: GoServer, progress: Progress = () => {}): Promise<string> {
  const target = binaryPath(server);
  if (existsSync(target)) return target;
  const moduleDir = join(repoRoot, 'devstack', 'go', server.name);
  const started = Date.now();
  const elapsed = (): string => `${Math.round((Date.now() - started) / 1000)}s`;
  progress(
    `building ${server.name} ${server.version} from ${server.pkg} (cold Go builds take minutes; cached afterwards)`,
  );
  progress(`  downloading Go modules for ${server.name}…`);
  await run('go', ['mod', 'download'], moduleDir);
  const tags = server.tags ? ['-tags', server.tags] : [];
  const deps = (await run('go', ['list', '-deps', ...tags, server.pkg], moduleDir)).split('\n').filter(Boolean).length;
  let compiled = 0;
  let lastReport = Date.now();
  const tmp = `${target}.${process.pid}.tmp`;
  mkdirSync(join(target, '..'), { recursive: true });
  try {
    await run(
      'go',
      ['build', '-v', '-trimpath', ...tags, '-ldflags', `-s -w ${server.ldflags}`.trim(), '-o', tmp, server.pkg],
      moduleDir,
      () => {
        compiled += 1;
        if (Date.now() - lastReport > 10_000) {
          lastReport = Date.now();
          progress(`  ${server.name}: ${compiled}/${deps} packages compiled (${elapsed()})`);
        }
      },
    );
    renameSync(tmp, target);
  } finally {
    rmSync(tmp, { force: true });
  }
  progress(`built ${server.name} ${server.version} in ${elapsed()} → ${target}`);
  return target;
}

/** The servers every stack runs (the envtest-like control plane); the others come with `cluster: true`. */
export const coreServerNames = ['etcd', 'temporal', 'kube-apiserver', 'kubectl'] as const;

/** The servers of the whole-cluster option: controllers, scheduler and simulated nodes. */
export const clusterServerNames = ['kube-controller-manager', 'kube-scheduler', 'kwok'] as const;

/** Paths of the core servers' binaries, and of the cluster servers' when they were asked for. */
export type ServerBinaries = Record<(typeof coreServerNames)[number], string> &
  Partial<Record<(typeof clusterServerNames)[number], string>>;

/**
 * Builds (or finds cached) the servers of the local control plane, one after another (2 cores): the
 * core ones always, the cluster ones only with `cluster` (their cold builds cost minutes, and stacks
 * that do not run them should not pay for them).
 */
export async function ensureBinaries(
  progress: Progress = () => {},
  options: { cluster?: boolean } = {},
): Promise<ServerBinaries> {
  const wanted = new Set<string>([...coreServerNames, ...(options.cluster ? clusterServerNames : [])]);
  const paths: Partial<Record<GoServer['name'], string>> = {};
  for (const server of goServers) {
    if (wanted.has(server.name)) paths[server.name] = await ensureBinary(server, progress);
  }
  return paths as ServerBinaries;
}
