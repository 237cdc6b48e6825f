/**
 * The bridge's second safety net: starts the workflow of every cached primary object that has none
 * running (terminated, reset away, lost when Temporal was restored from an older backup). One
 * visibility listing of the running object workflows per audit, and a start only where one is
 * missing: never a signal, so converged objects cost nothing. A workflow started moments ago and not
 * yet visible is left alone (the start is refused).
 */
import type { FairnessSetting } from '../core/fairness';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { ReconcileRequest } from '../core/definitions';
import { objectWorkflowType, searchAttributeKeys, workflowIdFor } from '../core/definitions';
import { startIfAbsent } from './delivery';
import { permanentDeliveryFailure } from './delivery-failures';
import type { KubeObject, WatchedResource } from './types';

/** How long one audit's listing of the running object workflows may take, retries included. */
const auditListTimeoutMs = 30_000;
/** How long a stopping bridge waits for an audit in flight: its listing's deadline, and a margin. */
export const auditStopWaitMs = auditListTimeoutMs + 5_000;

/** What {@link auditObjectWorkflows} audits, and with what. */
export interface WorkflowAuditInput {
  readonly client: Client;
  readonly taskQueue: string;
  /** Fairness weights by namespace (see `core/fairness.ts`), or `false` for none. @default every namespace 1 */
  readonly fairnessWeights?: FairnessSetting;
  /** Timeout of one start attempt. @default 10_000 */
  readonly deliveryTimeoutMs?: number | undefined;
  /** The cached objects of each primary resource. */
  readonly primaries: readonly { resource: WatchedResource; objects: () => Iterable<KubeObject> }[];
  /** The request that starts an object's workflow. */
  readonly requestOf: (resource: WatchedResource, obj: KubeObject) => ReconcileRequest;
  /** Whether a request for this workflow is on its way already (which starts it). */
  readonly pending: (workflowId: string) => boolean;
  /** Whether the bridge is stopping: the audit ends at its next step. */
  readonly stopping: () => boolean;
  /** Whether this replica still leads: starts stop when it does not. */
  readonly leading: () => boolean;
  readonly log: Logger;
  /** A start Temporal refused for good (`reason` as {@link permanentDeliveryFailure} names it); the audit goes on. */
  readonly onDropped?: (reason: string) => void;
}

/**
 * Starts the workflow of every cached primary object that has none running.
 * @returns how many workflows were started
 */
export async function auditObjectWorkflows(input: WorkflowAuditInput): Promise<number> {
  const { client, primaries } = input;
  // Kinds are the operator's own identifiers; anything else would not be one and is left out.
  const kinds = [...new Set(primaries.map((r) => r.resource.kind))].filter((k) => /^[A-Za-z][A-Za-z0-9]*$/.test(k));
  if (kinds.length === 0) return 0;
  const running = new Set<string>();
  const query =
    `WorkflowType = '${objectWorkflowType}' AND ExecutionStatus = 'Running' AND ` +
    `${searchAttributeKeys.kind.name} IN (${kinds.map((k) => `'${k}'`).join(', ')})`;
  // The listing has a deadline like every other call of the bridge: without one the client
  // retries a throttled or failing listing for minutes, and stop() waits for the audit.
  const listed = await client.withDeadline(Date.now() + auditListTimeoutMs, async () => {
    for await (const wf of client.workflow.list({ query })) {
      if (input.stopping()) return false;
      running.add(wf.workflowId);
    }
    return true;
  });
  if (!listed) return 0;
  let started = 0;
  for (const { resource, objects } of primaries) {
    for (const obj of objects()) {
      const request = input.requestOf(resource, obj);
      const key = workflowIdFor(request.ref);
      // Running, or a request on its way (which starts it): nothing to do.
      if (running.has(key) || input.pending(key)) continue;
      if (input.stopping() || !input.leading()) return started;
      try {
        if (await startIfAbsent(client, input.taskQueue, request, input.deliveryTimeoutMs, input.fairnessWeights))
          started++;
      } catch (err) {
        // One object Temporal refuses for good (a name over its limits) must not end every other object's audit.
        const reason = permanentDeliveryFailure(err);
        if (reason === undefined) throw err;
        input.onDropped?.(reason);
        input.log.error({ workflowId: key, err, reason }, 'audit: start dropped: it can never succeed');
      }
    }
  }
  if (started) input.log.info({ started }, 'audit: workflows started for objects that had none');
  return started;
}
