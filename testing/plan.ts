/**
 * `env.plan(object)`: a dry run through the same `planObjectWorkflow` the API starts (`core/dry-run.ts`),
 * straight to Temporal on the environment's task queue, so a test sees the API's and the CLI's answer.
 */
import { randomUUID } from 'node:crypto';
import { type Client, WorkflowFailedError } from '@temporalio/client';
import { workflowIdFor, type ObjectRef } from '../core/definitions';
import { planTimeoutMs, planWorkflowIdFor, planWorkflowType, type DryRunResult } from '../core/dry-run';
import type { Operator } from '../core/operator';
import { describeRef, type ObjectReference } from './references';

/** What `env.plan` takes: a reference (the stored object), or a whole manifest (with a `spec`). */
export type PlannedObject = ObjectReference & { readonly spec?: unknown };

/** Runs a dry run of `object` on the worker of `taskQueue`; a failed one throws its failure's type and message. */
export async function planThrough(
  temporal: Client,
  taskQueue: string,
  operator: Operator,
  object: PlannedObject,
): Promise<DryRunResult> {
  const [group, version] = (object.apiVersion ?? '').includes('/')
    ? (object.apiVersion ?? '').split('/')
    : ['', object.apiVersion ?? ''];
  const plan = operator.reconcilers
    .map((r) => r.plan)
    .find((p) => p.group === group && p.version === version && p.kind === object.kind);
  if (!plan) throw new Error(`the operator has no reconciler for ${object.kind ?? '?'} ${object.apiVersion ?? '?'}`);
  const ref: ObjectRef = {
    group: plan.group,
    version: plan.version,
    kind: plan.kind,
    name: object.metadata.name,
    ...(plan.scope === 'Namespaced' ? { namespace: object.metadata.namespace ?? 'default' } : {}),
  };
  const manifest = 'spec' in object ? (JSON.parse(JSON.stringify(object)) as Record<string, unknown>) : undefined;
  try {
    return (await temporal.workflow.execute(planWorkflowType, {
      taskQueue,
      workflowId: planWorkflowIdFor(workflowIdFor(ref), randomUUID()),
      args: [{ ref, ...(manifest ? { manifest } : {}) }],
      workflowExecutionTimeout: planTimeoutMs,
    })) as DryRunResult;
  } catch (err) {
    if (!(err instanceof WorkflowFailedError)) throw err;
    let e: unknown = err.cause;
    while (typeof e === 'object' && e !== null && (e as { type?: unknown }).type === undefined)
      e = (e as { cause?: unknown }).cause;
    const f = (e ?? err) as { type?: string; message: string };
    throw new Error(`dry run of ${describeRef(object)}: ${f.type ? `${f.type}: ` : ''}${f.message}`, { cause: err });
  }
}
