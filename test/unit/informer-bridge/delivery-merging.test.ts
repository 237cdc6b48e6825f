/**
 * Merging of pending requests (every reason against every other, the resourceVersion fallback) and
 * what one delivery asks of Temporal: signalWithStart of the object's workflow with the request, or a
 * plain start carrying it for a new object, under a deadline. The delivery runs against a recording stand-in for the Temporal client; the real
 * server receives it in the informer-bridge integration tests. Written for issue 17's mutation run.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { mergeRequests, signalDelivery } from '../../../informer-bridge/delivery';
import { objectWorkflowStartOptions, type ReconcileReason, type ReconcileRequest } from '../../../core/definitions';
import { workflowCodeVersion } from '../../../core/workflow-code-version';

const ref = { group: 'homeostat.dev', version: 'v1alpha1', kind: 'App', namespace: 'pony-prod', name: 'pony-spawner' };
const req = (reason: ReconcileReason, generation = 1, resourceVersion = '10'): ReconcileRequest => ({
  ref,
  uid: 'u1',
  generation,
  resourceVersion,
  reason,
});

describe('delivery merging', () => {
  it('given two reasons, the stronger wins whichever comes first; equal ranks keep the newer', () => {
    const order: ReconcileReason[] = [
      'deleted',
      'added',
      'updated',
      'referenced-changed',
      'child-changed',
      'api',
      'drift',
      'resync',
    ];
    for (let i = 0; i < order.length; i++) {
      for (let j = i + 1; j < order.length; j++) {
        expect([
          mergeRequests(req(order[i]!), req(order[j]!)).reason,
          mergeRequests(req(order[j]!), req(order[i]!)).reason,
        ]).toEqual([order[i], order[i]]);
      }
    }
    expect(mergeRequests(req('requeue'), req('drift')).reason).toBe('drift');
  });

  it('given an older generation arriving later, the generation stays the highest and the newer resourceVersion wins', () => {
    expect(mergeRequests(req('updated', 5, '50'), req('updated', 3, '70'))).toEqual(req('updated', 5, '70'));
  });

  it('given a newer request without a resourceVersion, the older one is kept', () => {
    expect(mergeRequests(req('updated', 1, '10'), req('api', 1, '')).resourceVersion).toBe('10');
  });

  it('given another UID, the newer request is taken as it is', () => {
    const replaced = { ...req('added', 1, '5'), uid: 'u2' };
    expect(mergeRequests(req('deleted', 9, '99'), replaced)).toBe(replaced);
  });
});

describe('delivery to Temporal', () => {
  function recordingClient(running = false) {
    const calls: { deadline: number; type: string; options: Record<string, unknown>; via?: string }[] = [];
    let deadline = 0;
    const client = {
      withDeadline: async (at: number, fn: () => Promise<unknown>) => {
        deadline = at;
        return fn();
      },
      workflow: {
        signalWithStart: async (type: string, options: Record<string, unknown>) => {
          calls.push({ deadline, type, options });
        },
        start: async (type: string, options: Record<string, unknown>) => {
          calls.push({ deadline, type, options, via: 'start' });
          if (running) throw new WorkflowExecutionAlreadyStartedError('running', String(options.workflowId), type);
        },
      },
    };
    return { calls, client: client as unknown as Client };
  }

  it('given a new object, it starts the object’s workflow with the request as its pending input (one action, not two), within the timeout', async () => {
    const { calls, client } = recordingClient();
    const before = Date.now();
    await signalDelivery({ client, taskQueue: 'tq', timeoutMs: 3000 })('key', req('added'));
    expect(calls).toEqual([
      {
        deadline: expect.any(Number),
        type: 'objectWorkflow',
        via: 'start',
        options: {
          ...objectWorkflowStartOptions(ref, 'tq'),
          args: [{ ref, pending: req('added'), codeVersion: workflowCodeVersion }],
        },
      },
    ]);
    expect(calls[0]!.deadline).toBeGreaterThanOrEqual(before + 3000);
    expect(calls[0]!.deadline).toBeLessThanOrEqual(Date.now() + 3000);
  });

  it('given a new object whose workflow already runs, the request goes as signal-with-start after the refused start', async () => {
    const { calls, client } = recordingClient(true);
    await signalDelivery({ client, taskQueue: 'tq' })('key', req('added'));
    expect(calls.map((c) => c.via ?? 'signalWithStart')).toEqual(['start', 'signalWithStart']);
    expect(calls[1]!.options).toEqual({
      ...objectWorkflowStartOptions(ref, 'tq'),
      signal: expect.objectContaining({ name: 'reconcile-requested' }),
      signalArgs: [req('added')],
    });
  });

  it('given a request, it signals-with-start the object’s workflow with the request, within the timeout', async () => {
    const { calls, client } = recordingClient();
    const before = Date.now();
    await signalDelivery({ client, taskQueue: 'tq', timeoutMs: 3000 })('key', req('updated'));
    expect(calls).toHaveLength(1);
    const [call] = calls;
    expect(call!.type).toBe('objectWorkflow');
    expect(call!.options).toEqual({
      ...objectWorkflowStartOptions(ref, 'tq'),
      signal: expect.objectContaining({ name: 'reconcile-requested' }),
      signalArgs: [req('updated')],
    });
    expect(call!.deadline).toBeGreaterThanOrEqual(before + 3000);
    expect(call!.deadline).toBeLessThanOrEqual(Date.now() + 3000);
  });

  it('given no timeout, one attempt may take 10 s', async () => {
    const { calls, client } = recordingClient();
    const before = Date.now();
    await signalDelivery({ client, taskQueue: 'tq' })('key', req('updated'));
    expect(calls[0]!.deadline - before).toBeGreaterThanOrEqual(10_000);
    expect(calls[0]!.deadline - Date.now()).toBeLessThanOrEqual(10_000);
  });
});
