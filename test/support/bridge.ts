/**
 * Helpers for the informer bridge's integration tests: a CRD to watch, a worker running the recording
 * `objectWorkflow` fixture, reading what each object's workflow received, and bridge replicas as child
 * processes (started through `cli/homeostat.ts bridge`, stopped with SIGTERM or SIGKILL).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker, type WorkflowBundle } from '@temporalio/worker';
import type { WatchedResource } from '../../informer-bridge';
import { type ObjectRef, type ReconcileRequest, workflowIdFor } from '../../core/definitions';
import { alive } from './process';

/** Resolves after `ms`. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `fn` until it returns a truthy value and returns that value; throws when `timeoutMs` passes
 * first. A wait that ran out is a failure, never a quiet return: checks that follow one (often "no
 * signal arrived") would otherwise pass without the awaited thing having happened.
 */
export async function waitFor<T>(
  fn: () => Promise<T> | T,
  timeoutMs = 30_000,
  everyMs = 200,
  what: string | (() => string) = 'the condition',
): Promise<Exclude<T, false | 0 | '' | null | undefined>> {
  const deadline = Date.now() + timeoutMs;
  let value = await fn();
  while (!value) {
    if (Date.now() >= deadline) {
      const described = typeof what === 'function' ? what() : what;
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${described} (last value: ${JSON.stringify(value)})`,
      );
    }
    await sleep(everyMs);
    value = await fn();
  }
  return value as Exclude<T, false | 0 | '' | null | undefined>;
}

/**
 * Polls `fn` for `forMs` and throws as soon as it returns a truthy value: the negative check "this
 * does not happen" held over a window, rather than sampled once. Run it after a positive wait that
 * proves the cause was processed (a wait alone cannot tell "did not happen" from "not yet").
 */
export async function staysFalse(
  fn: () => unknown,
  forMs: number,
  what = 'the condition',
  everyMs = 100,
): Promise<void> {
  const until = Date.now() + forMs;
  for (;;) {
    const value = await fn();
    if (value) throw new Error(`${what} became true (${JSON.stringify(value)}) within ${forMs} ms`);
    if (Date.now() >= until) return;
    await sleep(everyMs);
  }
}

/** Creates a namespaced `Widget` CRD (with the status subresource) in `group` and waits until established. */
export async function createWidgetCrd(apiext: k8s.ApiextensionsV1Api, group: string): Promise<WatchedResource> {
  const plural = 'widgets';
  await apiext.createCustomResourceDefinition({
    body: {
      metadata: { name: `${plural}.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural, singular: 'widget', kind: 'Widget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: { type: 'object', properties: { size: { type: 'integer' } } },
                  status: {
                    type: 'object',
                    properties: { observedGeneration: { type: 'integer' }, phase: { type: 'string' } },
                  },
                },
              },
            },
          },
        ],
      },
    },
  });
  for (;;) {
    const crd = await apiext.readCustomResourceDefinition({ name: `${plural}.${group}` });
    if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
    await sleep(100);
  }
  return {
    group,
    version: 'v1',
    plural,
    kind: 'Widget',
    namespaced: true,
    relevantLabels: ['homeostat.dev/tier'],
  };
}

/** ConfigMaps owned by Widgets of `group`. */
export function ownedConfigMaps(group: string): WatchedResource {
  return {
    group: '',
    version: 'v1',
    plural: 'configmaps',
    kind: 'ConfigMap',
    namespaced: true,
    owners: [{ group, kind: 'Widget' }],
  };
}

/** Typed access to Widgets of one group in one namespace. */
export class Widgets {
  constructor(
    private readonly custom: k8s.CustomObjectsApi,
    readonly group: string,
    readonly namespace: string,
  ) {}

  private get base() {
    return { group: this.group, version: 'v1', namespace: this.namespace, plural: 'widgets' };
  }

  /** The object reference of a Widget (for workflow IDs). */
  ref(name: string): ObjectRef {
    return { group: this.group, version: 'v1', kind: 'Widget', namespace: this.namespace, name };
  }

  async create(name: string, size = 1, labels?: Record<string, string>): Promise<k8s.KubernetesObject> {
    return (await this.custom.createNamespacedCustomObject({
      ...this.base,
      body: { apiVersion: `${this.group}/v1`, kind: 'Widget', metadata: { name, labels }, spec: { size } },
    })) as k8s.KubernetesObject;
  }

  async get(name: string): Promise<{ metadata: k8s.V1ObjectMeta; status?: { observedGeneration?: number } }> {
    return (await this.custom.getNamespacedCustomObject({ ...this.base, name })) as never;
  }

  async patch(name: string, body: object): Promise<{ metadata: k8s.V1ObjectMeta }> {
    return (await this.custom.patchNamespacedCustomObject(
      { ...this.base, name, body },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    )) as never;
  }

  async patchStatus(name: string, status: object): Promise<{ metadata: k8s.V1ObjectMeta }> {
    return (await this.custom.patchNamespacedCustomObjectStatus(
      { ...this.base, name, body: { status } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    )) as never;
  }

  async delete(name: string): Promise<void> {
    await this.custom.deleteNamespacedCustomObject({ ...this.base, name });
  }
}

/** Bundles the recording `objectWorkflow` once (workers started later reuse it). */
export function bundleRecorder(): Promise<WorkflowBundle> {
  return bundleWorkflowCode({
    workflowsPath: require.resolve('../fixtures/recording-object-workflow'),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
  });
}

/** Runs the recording `objectWorkflow` on `taskQueue` until stopped. */
export async function startRecorder(
  address: string,
  namespace: string,
  taskQueue: string,
  bundle?: WorkflowBundle,
): Promise<{ stop(): Promise<void> }> {
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue,
    workflowBundle: bundle ?? (await bundleRecorder()),
  });
  const running = worker.run();
  return {
    async stop() {
      worker.shutdown();
      await running.catch(() => {});
      await connection.close();
    },
  };
}

/** The requests the object's workflow received so far ([] when it was never started). */
export async function received(temporal: Client, ref: ObjectRef): Promise<ReconcileRequest[]> {
  try {
    return await temporal.workflow.getHandle(workflowIdFor(ref)).query<ReconcileRequest[]>('received');
  } catch (err) {
    if ((err as Error).name === 'WorkflowNotFoundError') return [];
    throw err;
  }
}

/** Whether the object's workflow exists (was ever started). */
export async function workflowExists(temporal: Client, ref: ObjectRef): Promise<boolean> {
  try {
    await temporal.workflow.getHandle(workflowIdFor(ref)).describe();
    return true;
  } catch (err) {
    if ((err as Error).name === 'WorkflowNotFoundError') return false;
    throw err;
  }
}

/** A bridge replica running as a child process. */
export interface BridgeProcess {
  readonly child: ChildProcess;
  /** The bridge's own process ID (as it logs it; a loader may sit between the child and the bridge). */
  readonly pid: number;
  readonly port: number;
  /** Sends `signal` to the bridge process itself. */
  kill(signal: NodeJS.Signals): void;
  /** Every stdout line so far (pino JSON). */
  readonly lines: string[];
  /** A metric's value summed over its label sets (0 when absent). */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  /** Whether `/readyz` answers 200. */
  ready(): Promise<boolean>;
  /** Resolves with the child's exit code once both the child and the bridge process are gone. */
  readonly exited: Promise<number | null>;
}

/** Starts `homeostat bridge` (`cli/homeostat.ts`) with `env` (plus the inherited environment) and waits for its HTTP port. */
export async function spawnBridge(env: Record<string, string>): Promise<BridgeProcess> {
  const child = spawn(
    process.execPath,
    [require.resolve('tsx/cli'), join(__dirname, '../../cli/homeostat.ts'), 'bridge'],
    {
      env: { ...process.env, HOMEOSTAT_BRIDGE_PORT: '0', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const lines: string[] = [];
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const childExited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const { port, pid } = await new Promise<{ port: number; pid: number }>((resolve, reject) => {
    let buffer = '';
    child.stdout.on('data', (c: Buffer) => {
      buffer += c.toString();
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        lines.push(line);
        if (line.includes('"http listening"')) resolve(JSON.parse(line) as { port: number; pid: number });
      }
    });
    void childExited.then((code) => reject(new Error(`bridge exited early (${code}): ${stderr}`)));
  });
  const exited = childExited.then(async (code) => {
    for (let i = 0; i < 100 && alive(pid); i++) await sleep(100);
    return code;
  });
  const metricsText = async (): Promise<string> => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return {
    child,
    pid,
    port,
    kill(signal) {
      if (alive(pid)) process.kill(pid, signal);
    },
    lines,
    exited,
    async metric(name, labels = {}) {
      const text = await metricsText();
      let sum = 0;
      for (const line of text.split('\n')) {
        if (!line.startsWith(name)) continue;
        const m = /^([a-z_]+)(\{([^}]*)\})? ([0-9.e+-]+)$/.exec(line);
        if (!m || m[1] !== name) continue;
        const set = m[3] ?? '';
        if (Object.entries(labels).every(([k, v]) => set.includes(`${k}="${v}"`))) sum += Number(m[4]);
      }
      return sum;
    },
    async ready() {
      try {
        return (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200;
      } catch {
        return false;
      }
    },
  };
}
