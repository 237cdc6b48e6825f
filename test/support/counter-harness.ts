/**
 * Helpers for tests of the object workflow with the test reconcilers (`test/fixtures/counter`):
 * installing their CRDs, creating and changing objects, sending reconcile requests the way the
 * informer bridge does, waiting for conditions, and reading histories (events and actions per pass).
 */
import * as k8s from '@kubernetes/client-node';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import type { Pool } from 'pg';
import { historyCost as eventsCost, type HistoryCost } from '../../bench/history-cost';
import { customResourceDefinition } from '../../reconcilers';
import {
  chainCounterPlan,
  counterGroup,
  counterPlan,
  driftCounterPlan,
  localCounterPlan,
} from '../fixtures/counter/plan';
import { counterSpec } from '../fixtures/counter/reconciler';
import {
  objectWorkflowStartOptions,
  type ObjectRef,
  type ReconcileReason,
  type ObjectState,
  stateQuery,
} from '../../core/definitions';
import type { TestStack } from './harness';
import { signalDelivery } from '../../informer-bridge/delivery';

/** A custom object as the tests read it. */
export interface CounterObject {
  apiVersion: string;
  kind: string;
  metadata: k8s.V1ObjectMeta;
  spec: Record<string, unknown>;
  status?: {
    observedGeneration?: number;
    phase?: string;
    conditions?: {
      type: string;
      status: string;
      reason: string;
      message: string;
      observedGeneration?: number;
      lastTransitionTime?: string;
    }[];
  };
}

/** Installs the CRDs of the test reconcilers (idempotent) and waits until they are established. */
function lenientSpec(crd: Record<string, unknown>): Record<string, unknown> {
  const version = (crd.spec as { versions: { schema: { openAPIV3Schema: { properties: Record<string, unknown> } } }[] })
    .versions[0]!;
  version.schema.openAPIV3Schema.properties.spec = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  return crd;
}

export async function installCounterCrds(t: TestStack): Promise<void> {
  for (const plan of [counterPlan, driftCounterPlan, localCounterPlan, chainCounterPlan]) {
    // The spec is left unvalidated at admission on purpose: these tests exercise the workflow's own
    // validation (phase Invalid), which a CRD schema would pre-empt.
    const crd = lenientSpec(customResourceDefinition(plan, counterSpec));
    try {
      // loadYaml maps the API's JSON names (x-kubernetes-…) to the client's model names.
      await t.apiext.createCustomResourceDefinition({
        body: k8s.loadYaml<k8s.V1CustomResourceDefinition>(JSON.stringify(crd)),
      });
    } catch (err) {
      if ((err as { code?: number }).code !== 409) throw err;
    }
    await waitFor(async () => {
      const got = await t.apiext.readCustomResourceDefinition({ name: (crd.metadata as { name: string }).name });
      return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') || undefined;
    }, 30_000);
  }
}

/** Polls `fn` until it returns something other than `undefined`/`false`. */
export async function waitFor<T>(
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 30_000,
  everyMs = 100,
  describe?: () => Promise<unknown>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) {
      const seen = describe ? ` (last seen: ${JSON.stringify(await describe().catch((e: unknown) => String(e)))})` : '';
      throw new Error(
        `timed out after ${timeoutMs} ms${lastErr instanceof Error ? `: ${lastErr.message}` : ''}${seen}`,
      );
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Objects of one kind in one namespace. */
export class Counters {
  constructor(
    private readonly t: TestStack,
    private readonly taskQueue: string,
    readonly kind: 'Counter' | 'DriftCounter' | 'LocalCounter' | 'ChainCounter' = 'Counter',
  ) {}

  private get plural(): string {
    return `${this.kind.toLowerCase()}s`;
  }

  ref(name: string): ObjectRef {
    return { group: counterGroup, version: 'v1', kind: this.kind, namespace: this.t.namespace, name };
  }

  async create(name: string, spec: Record<string, unknown>): Promise<CounterObject> {
    return (await this.t.custom.createNamespacedCustomObject({
      group: counterGroup,
      version: 'v1',
      namespace: this.t.namespace,
      plural: this.plural,
      body: { apiVersion: `${counterGroup}/v1`, kind: this.kind, metadata: { name }, spec },
    })) as CounterObject;
  }

  async get(name: string): Promise<CounterObject | undefined> {
    try {
      return (await this.t.custom.getNamespacedCustomObject({
        group: counterGroup,
        version: 'v1',
        namespace: this.t.namespace,
        plural: this.plural,
        name,
      })) as CounterObject;
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    }
  }

  /** Sets (or, with `null`, removes) annotations; a metadata change, so the generation stays. */
  async annotate(name: string, annotations: Record<string, string | null>): Promise<CounterObject> {
    return (await this.t.custom.patchNamespacedCustomObject(
      {
        group: counterGroup,
        version: 'v1',
        namespace: this.t.namespace,
        plural: this.plural,
        name,
        body: { metadata: { annotations } },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    )) as CounterObject;
  }

  async patchSpec(name: string, spec: Record<string, unknown>): Promise<CounterObject> {
    return (await this.t.custom.patchNamespacedCustomObject(
      { group: counterGroup, version: 'v1', namespace: this.t.namespace, plural: this.plural, name, body: { spec } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    )) as CounterObject;
  }

  async delete(name: string): Promise<void> {
    await this.t.custom.deleteNamespacedCustomObject({
      group: counterGroup,
      version: 'v1',
      namespace: this.t.namespace,
      plural: this.plural,
      name,
    });
  }

  /** Sends a reconcile request for the object through the informer bridge's own delivery function. */
  async request(obj: CounterObject, reason: ReconcileReason = 'updated'): Promise<WorkflowHandle> {
    const ref = this.ref(obj.metadata.name!);
    await signalDelivery({ client: this.t.temporal, taskQueue: this.taskQueue })(ref.name, {
      ref,
      uid: obj.metadata.uid!,
      generation: obj.metadata.generation ?? 0,
      resourceVersion: obj.metadata.resourceVersion ?? '',
      reason,
    });
    return this.handle(ref.name);
  }

  handle(name: string): WorkflowHandle {
    return this.t.temporal.workflow.getHandle(objectWorkflowStartOptions(this.ref(name)).workflowId);
  }

  async state(name: string): Promise<ObjectState> {
    return this.handle(name).query(stateQuery);
  }

  /** Waits until no pass runs and at least `passes` passes finished; returns the state. */
  async settled(name: string, passes = 1, timeoutMs = 30_000): Promise<ObjectState> {
    return waitFor(async () => {
      const s = await this.state(name);
      return !s.reconciling && s.passes >= passes ? s : undefined;
    }, timeoutMs);
  }

  /** Waits until the object's status has `phase` (and `observedGeneration`, when given). */
  async waitForPhase(name: string, phase: string, generation?: number, timeoutMs = 30_000): Promise<CounterObject> {
    return waitFor(
      async () => {
        const obj = await this.get(name);
        return obj?.status?.phase === phase &&
          (generation === undefined || obj.status.observedGeneration === generation)
          ? obj
          : undefined;
      },
      timeoutMs,
      100,
      async () => ({ status: (await this.get(name))?.status, state: await this.state(name).catch(String) }),
    );
  }
}

/** Step runs and effects recorded by the test reconcilers for one object. */
export async function stepRuns(
  pool: Pool,
  uid: string,
): Promise<
  {
    step: string;
    generation: number;
    attempt: number;
    worker: number;
    started: number;
    finished: number | null;
    outcome: string | null;
  }[]
> {
  const res = await pool.query<{
    step: string;
    generation: number;
    attempt: number;
    worker: number;
    started: string;
    finished: string | null;
    outcome: string | null;
  }>(
    `SELECT step, generation, attempt, worker, extract(epoch from started_at) * 1000 AS started,
            extract(epoch from finished_at) * 1000 AS finished, outcome
     FROM step_runs WHERE uid = $1 ORDER BY id`,
    [uid],
  );
  return res.rows.map((r) => ({
    ...r,
    started: Number(r.started),
    finished: r.finished === null ? null : Number(r.finished),
  }));
}

/** Effects recorded for one object: `step@generation` → times. */
export async function stepEffects(pool: Pool, uid: string): Promise<Record<string, number>> {
  const res = await pool.query<{ step: string; generation: number; times: number }>(
    'SELECT step, generation, times FROM step_effects WHERE uid = $1',
    [uid],
  );
  return Object.fromEntries(res.rows.map((r) => [`${r.step}@${r.generation}`, r.times]));
}

export type { HistoryCost };

/** Counts events and billable actions of a whole history (Temporal Cloud's rule, `bench/history-cost.ts`). */
export function historyCost(history: temporal.api.history.v1.IHistory): HistoryCost {
  return eventsCost(history.events ?? []);
}

/** The run IDs of a workflow ID, oldest first. */
export async function runsOf(client: Client, workflowId: string): Promise<string[]> {
  const runs: { runId: string; start: number }[] = [];
  for await (const wf of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    runs.push({ runId: wf.runId, start: wf.startTime.getTime() });
  }
  return runs.sort((a, b) => a.start - b.start).map((r) => r.runId);
}
