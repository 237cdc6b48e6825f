/**
 * What a stack records about itself in its folder: the state file (ports, password, the processes it
 * started) and the env file of its endpoints.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StackPorts } from './components/context';
import { kubeconfigPath } from './components/kube-apiserver';
import { postgresUrl } from './components/postgres';
import { temporalNamespace } from './components/temporal';
import { stackDir } from './paths';
import type { ManagedProcess } from './processes';

/** The servers of one stack, in start order (the last three with `cluster: true` only). */
export const componentNames = [
  'etcd',
  'kube-apiserver',
  'temporal',
  'postgres',
  'kube-controller-manager',
  'kube-scheduler',
  'kwok',
] as const;

/** One of {@link componentNames}. */
export type ComponentName = (typeof componentNames)[number];

/** What a stack's state file records. */
export interface StackState {
  readonly name: string;
  readonly dir: string;
  readonly createdAt: string;
  /** The process that owns the stack; a stack whose owner died is stale unless `detached`. */
  readonly ownerPid: number;
  /** Started by `devstack up`: lives until `devstack down`. */
  readonly detached: boolean;
  readonly ports: StackPorts;
  readonly postgresPassword: string;
  /** See {@link StartStackOptions.postgresNativeDir}. */
  readonly postgresNativeDir?: string;
  /** See {@link StartStackOptions.cluster}. */
  readonly cluster?: boolean;
  processes: Partial<Record<ComponentName, ManagedProcess>>;
}

/** The endpoints of a running stack, as printed and written to its env file. */
export interface StackEndpoints {
  /** Temporal frontend gRPC address, `host:port`. */
  readonly temporalAddress: string;
  readonly temporalNamespace: string;
  readonly temporalUiUrl: string;
  readonly temporalMetricsUrl: string;
  readonly kubeApiUrl: string;
  readonly kubeconfig: string;
  readonly etcdUrl: string;
  /** Superuser connection URL (contains the generated password). */
  readonly postgresUrl: string;
  /** The env file holding all of the above. */
  readonly envFile: string;
}

const stateFile = (dir: string): string => join(dir, 'state.json');

/**
 * Writes a stack's state file (readable by its owner only: it holds the PostgreSQL password). The
 * new state goes to a file of its own, renamed over the old one, so a reader in another process (the
 * CLI, a test) sees the old state or the new one whole, never a file truncated for the write.
 */
export function saveState(state: StackState): void {
  const file = stateFile(state.dir);
  const next = `${file}.${process.pid}.tmp`;
  writeFileSync(next, JSON.stringify(state, null, 2), { mode: 0o600 });
  renameSync(next, file);
}

/** Reads a stack's state file, or undefined when there is none. */
export function readState(name: string): StackState | undefined {
  const file = stateFile(stackDir(name));
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as StackState;
}

/** Endpoints of a stack from its state. */
export function endpointsOf(state: StackState): StackEndpoints {
  return {
    temporalAddress: `127.0.0.1:${state.ports.temporal}`,
    temporalNamespace,
    temporalUiUrl: `http://127.0.0.1:${state.ports.temporalUi}`,
    temporalMetricsUrl: `http://127.0.0.1:${state.ports.temporalMetrics}/metrics`,
    kubeApiUrl: `https://127.0.0.1:${state.ports.kube}`,
    kubeconfig: kubeconfigPath(state),
    etcdUrl: `http://127.0.0.1:${state.ports.etcdClient}`,
    postgresUrl: postgresUrl(state),
    envFile: join(state.dir, 'stack.env'),
  };
}

/** The env file's lines: what a shell, a worker or a test needs to reach the stack. */
export function envLines(endpoints: StackEndpoints): string[] {
  return [
    `TEMPORAL_ADDRESS=${endpoints.temporalAddress}`,
    `TEMPORAL_NAMESPACE=${endpoints.temporalNamespace}`,
    `HOMEOSTAT_TEMPORAL_UI_URL=${endpoints.temporalUiUrl}`,
    `KUBECONFIG=${endpoints.kubeconfig}`,
    `HOMEOSTAT_KUBE_API_URL=${endpoints.kubeApiUrl}`,
    `HOMEOSTAT_ETCD_URL=${endpoints.etcdUrl}`,
    `HOMEOSTAT_POSTGRES_URL=${endpoints.postgresUrl}`,
  ];
}

/**
 * The env file's lines as shell `export` statements, each value single-quoted, so that
 * `eval "$(…)"` sets them in a shell whatever the paths hold.
 */
export function shellExports(endpoints: StackEndpoints): string[] {
  return envLines(endpoints).map((line) => {
    const eq = line.indexOf('=');
    return `export ${line.slice(0, eq)}='${line.slice(eq + 1).replace(/'/g, `'\\''`)}'`;
  });
}
