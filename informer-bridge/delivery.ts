/**
 * Delivery to Temporal: a reconcile request becomes `signalWithStart` of the object's workflow
 * (ID `homeostat/<group>/<kind>/<namespace>/<name>`), which starts the workflow if it is not running,
 * with its static summary and search attributes. A new object (`added`) is first started with the
 * request in its input: one billable action instead of two (start + signal); only when its workflow
 * already runs does the request go as a signal.
 * Requests for one object merge level-based: the newest UID, generation and resourceVersion win.
 */
import { SpanKind } from '@opentelemetry/api';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { inSpan } from '../core/in-span';
import type { FairnessSetting } from '../core/fairness';
import {
  objectWorkflowStartOptions,
  objectWorkflowType,
  type ReconcileReason,
  type ReconcileRequest,
  reconcileRequestedSignal,
} from '../core/definitions';
import { objectAttributes, traceAttributes } from '../core/trace-context';

const reasonRank: Record<ReconcileReason, number> = {
  deleted: 8,
  added: 7,
  updated: 6,
  // Above child-changed: a referenced object's change is what lifts a terminal block in the workflow,
  // and a child's echo of the object's own write arriving in the same window must not hide it.
  'referenced-changed': 5,
  'child-changed': 4,
  api: 3,
  drift: 2,
  requeue: 2,
  resync: 1,
};

/**
 * Merges a pending request with a newer one for the same object. A different UID means a different
 * object: the newer request wins outright. Otherwise the newest generation and resourceVersion win
 * and the reason is the stronger of the two (`deleted` > `added` > `updated` > `referenced-changed` > `child-changed` > …
 * > `resync`), so a create followed by updates still arrives as `added`.
 */
export function mergeRequests(older: ReconcileRequest, newer: ReconcileRequest): ReconcileRequest {
  if (older.uid !== newer.uid) return newer;
  return {
    ref: newer.ref,
    uid: newer.uid,
    generation: Math.max(older.generation, newer.generation),
    resourceVersion: newer.resourceVersion || older.resourceVersion,
    reason: reasonRank[newer.reason] >= reasonRank[older.reason] ? newer.reason : older.reason,
  };
}

/**
 * Starts the object's workflow with `request` as its pending input if no run of it is running, and
 * does nothing otherwise: never a signal, so a running workflow costs nothing. A new object's first
 * delivery and the bridge's audit of objects whose workflow went missing both start this way.
 * @returns whether a workflow was started
 */
export async function startIfAbsent(
  client: Client,
  taskQueue: string,
  request: ReconcileRequest,
  timeoutMs = 10_000,
  fairnessWeights: FairnessSetting = {},
): Promise<boolean> {
  return client.withDeadline(Date.now() + timeoutMs, async () => {
    try {
      const options = objectWorkflowStartOptions(request.ref, taskQueue, fairnessWeights);
      await client.workflow.start(objectWorkflowType, { ...options, args: [{ ...options.args[0], pending: request }] });
      return true;
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
      throw err;
    }
  });
}

/** Options of {@link signalDelivery}. */
export interface SignalDeliveryOptions {
  readonly client: Client;
  readonly taskQueue: string;
  /** Give up one attempt after this long (the queue retries it). @default 10_000 */
  readonly timeoutMs?: number;
  /** Fairness weights by namespace for the workflows it starts (see `core/fairness.ts`), or `false` for none. @default every namespace 1 */
  readonly fairnessWeights?: FairnessSetting;
}

/**
 * Returns the queue's deliver function: `signalWithStart` of the request's object workflow, or for an
 * `added` request a plain start carrying the request (falling back to `signalWithStart` when the
 * workflow is already running). Each delivery is a span (`reconcile-requested <Kind>`): the root of the
 * pass's trace, whose context travels in the start's or signal's header (`config/trace-headers.ts`).
 */
export function signalDelivery(
  options: SignalDeliveryOptions,
): (key: string, request: ReconcileRequest) => Promise<void> {
  const { client, taskQueue, fairnessWeights } = options;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deliver = async (request: ReconcileRequest): Promise<void> => {
    if (request.reason === 'added' && (await startIfAbsent(client, taskQueue, request, timeoutMs, fairnessWeights)))
      return;
    await client.withDeadline(Date.now() + timeoutMs, () =>
      client.workflow.signalWithStart(objectWorkflowType, {
        // ID, start input `{ ref }`, static summary and the object's search attributes (set at start,
        // so the workflow spends no upsert on them).
        ...objectWorkflowStartOptions(request.ref, taskQueue, fairnessWeights),
        signal: reconcileRequestedSignal,
        signalArgs: [request],
      }),
    );
  };
  return (_key, request) =>
    inSpan(
      `${reconcileRequestedSignal.name} ${request.ref.kind}`,
      {
        kind: SpanKind.PRODUCER,
        attributes: {
          ...objectAttributes(request.ref),
          [traceAttributes.generation]: request.generation,
          'homeostat.request.reason': request.reason,
        },
      },
      () => deliver(request),
    );
}
