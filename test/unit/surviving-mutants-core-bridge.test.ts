/**
 * What the mutation run left untested in core/errors.ts, core/plan.ts, informer-bridge/queue.ts and
 * informer-bridge/delivery.ts: Retry-After of more than one digit or with a unit, a rejection without a
 * reason becoming a failure, local steps that ask for a heartbeat timeout, an object's drift-check
 * interval at every branch (the 32-character limit, the default and partial bounds, the problem text),
 * which keys of the delivery queue are dirty, and a start refused for another reason than a running
 * workflow. Delivery runs against a recording stand-in for the Temporal client, as in
 * delivery-merging.test.ts.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { ReconcileRequest } from '../../core/definitions';
import { fromKubernetesError, parseRetryAfter, toApplicationFailure } from '../../core/errors';
import { definePlan, driftIntervalMs, PlanError } from '../../core/plan';
import { signalDelivery, startIfAbsent } from '../../informer-bridge/delivery';
import { CoalescingQueue } from '../../informer-bridge/queue';
import { FakeClock, flush } from '../support/fake-clock';

describe('surviving mutants of core/errors.ts', () => {
  it('given Retry-After delta-seconds of several digits, they convert whole; seconds with a unit or junk are undefined, never NaN', () => {
    const now = Date.parse('Wed, 02 Dec 2026 10:00:00 GMT');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 86400 ', now)).toBe(86_400_000);
    expect(fromKubernetesError({ code: 429, headers: { 'retry-after': '15' } }, 'get').retryAfterMs).toBe(15_000);
    expect(parseRetryAfter('5s', now)).toBeUndefined();
    expect(parseRetryAfter('7 seconds', now)).toBeUndefined();
  });

  it('given a rejection without a reason (undefined) or null, toApplicationFailure makes a retryable StepFailed of it', () => {
    for (const thrown of [undefined, null]) {
      const f = toApplicationFailure(thrown);
      expect(f).toBeInstanceOf(ApplicationFailure);
      expect({ type: f.type, message: f.message, nonRetryable: f.nonRetryable }).toEqual({
        type: 'StepFailed',
        message: String(thrown),
        nonRetryable: false,
      });
    }
  });
});

describe('surviving mutants of core/plan.ts', () => {
  const base = { group: 'g.dev', version: 'v1', kind: 'Thing', plural: 'things', scope: 'Namespaced' } as const;
  const plan = { driftCheckInterval: '5 minutes' } as const;
  const problem = (quoted: string) =>
    `homeostat.dev/drift-check-interval: ${JSON.stringify(quoted)} is not a duration such as '10 minutes'`;

  it('given a local step with a heartbeat timeout, in steps or cleanup, definePlan refuses it and says to drop the timeout', () => {
    const message = 'step apply is local: a local activity cannot heartbeat (drop heartbeatTimeout)';
    const local = { name: 'apply', execution: 'local', heartbeatTimeout: '5 seconds' } as const;
    expect(() => definePlan({ ...base, steps: [local] })).toThrow(new PlanError(message));
    expect(() => definePlan({ ...base, steps: [{ name: 'a' }], cleanup: [local] })).toThrow(new PlanError(message));
    const fine = [
      { name: 'a', execution: 'local' },
      { name: 'b', execution: 'regular', heartbeatTimeout: '5 seconds' },
      { name: 'c', heartbeatTimeout: '5 seconds' },
    ] as const;
    expect(definePlan({ ...base, steps: fine }).steps).toBe(fine);
  });

  it('given no drift check in the plan, none whatever the annotation; given one and no annotation, the plan interval', () => {
    expect(driftIntervalMs({}, undefined)).toEqual({});
    expect(driftIntervalMs({}, '1 minute')).toEqual({});
    expect(driftIntervalMs({}, 'whenever')).toEqual({});
    expect(driftIntervalMs(plan, undefined)).toEqual({ ms: 300_000 });
    expect(driftIntervalMs({ driftCheckInterval: 1234 }, undefined)).toEqual({ ms: 1234 });
  });

  it('given an annotation and no bounds, it is taken within 30 s to 24 h and clamped outside; a bound set alone keeps the other default', () => {
    expect(driftIntervalMs(plan, '10 minutes')).toEqual({ ms: 600_000 });
    expect(driftIntervalMs(plan, '1 second')).toEqual({ ms: 30_000 });
    expect(driftIntervalMs(plan, '2 days')).toEqual({ ms: 86_400_000 });
    const onlyMin = { ...plan, driftCheckBounds: { min: '1 hour' } };
    expect(driftIntervalMs(onlyMin, '10 minutes')).toEqual({ ms: 3_600_000 });
    expect(driftIntervalMs(onlyMin, '2 days')).toEqual({ ms: 86_400_000 });
    const onlyMax = { ...plan, driftCheckBounds: { max: '1 hour' } };
    expect(driftIntervalMs(onlyMax, '10 minutes')).toEqual({ ms: 600_000 });
    expect(driftIntervalMs(onlyMax, '1 second')).toEqual({ ms: 30_000 });
    expect(driftIntervalMs(onlyMax, '2 hours')).toEqual({ ms: 3_600_000 });
  });

  it('given an annotation of 32 characters, it is read; of 33, it is refused and the problem quotes its first 32', () => {
    const at32 = '10 minutes'.padStart(32);
    expect(driftIntervalMs(plan, at32)).toEqual({ ms: 600_000 });
    const at33 = '10 minutes'.padStart(33);
    expect(driftIntervalMs(plan, at33)).toEqual({ ms: 300_000, problem: problem(at33.slice(0, 32)) });
    const huge = `${'9'.repeat(400)}s`;
    expect(driftIntervalMs(plan, huge)).toEqual({ ms: 300_000, problem: problem('9'.repeat(32)) });
  });

  it('given an annotation that is not a duration, the plan interval and a problem that quotes it', () => {
    expect(driftIntervalMs(plan, 'whenever')).toEqual({ ms: 300_000, problem: problem('whenever') });
    expect(driftIntervalMs(plan, '-5m')).toEqual({ ms: 300_000, problem: problem('-5m') });
  });
});

describe('surviving mutants of informer-bridge/queue.ts', () => {
  it('given a key, isDirty is true while its item is pending or in flight, and false before, after and for unknown keys', async () => {
    const clock = new FakeClock();
    const calls: (() => void)[] = [];
    const q = new CoalescingQueue<string>({
      deliver: () => new Promise<void>((resolve) => calls.push(resolve)),
      merge: (older, newer) => `${older}+${newer}`,
      clock,
      minIntervalMs: 100,
      paused: true,
    });
    expect(q.isDirty('k')).toBe(false);
    q.add('k', 'a');
    expect(q.isDirty('k')).toBe(true); // pending, paused
    expect(q.isDirty('other')).toBe(false);
    q.resume();
    await flush();
    expect(calls).toHaveLength(1);
    expect(q.peek('k')).toBeUndefined();
    expect(q.isDirty('k')).toBe(true); // in flight, nothing pending
    calls[0]!();
    await flush();
    expect(q.isDirty('k')).toBe(false); // delivered, waiting out its interval
    await clock.advance(100);
    expect(q.isDirty('k')).toBe(false);
  });
});

describe('surviving mutants of informer-bridge/delivery.ts', () => {
  const ref = { group: 'homeostat.dev', version: 'v1alpha1', kind: 'App', namespace: 'ns', name: 'app' };
  const added: ReconcileRequest = { ref, uid: 'u1', generation: 1, resourceVersion: '10', reason: 'added' };

  /** A stand-in client whose start fails with `startError` (if any); it records what was called. */
  function client(startError?: Error) {
    const calls: string[] = [];
    const stub = {
      withDeadline: async (_at: number, fn: () => Promise<unknown>) => fn(),
      workflow: {
        start: async () => {
          calls.push('start');
          if (startError) throw startError;
        },
        signalWithStart: async () => {
          calls.push('signalWithStart');
        },
      },
    };
    return { calls, client: stub as unknown as Client };
  }

  it('given a start refused because the workflow runs, startIfAbsent says false; started, true', async () => {
    const running = new WorkflowExecutionAlreadyStartedError('running', 'id', 'objectWorkflow');
    await expect(startIfAbsent(client(running).client, 'tq', added)).resolves.toBe(false);
    await expect(startIfAbsent(client().client, 'tq', added)).resolves.toBe(true);
  });

  it('given a start that fails for another reason, the error reaches the caller (the queue retries) and no signal is sent', async () => {
    const down = new Error('connection refused');
    await expect(startIfAbsent(client(down).client, 'tq', added)).rejects.toBe(down);
    const { calls, client: c } = client(down);
    await expect(signalDelivery({ client: c, taskQueue: 'tq' })('key', added)).rejects.toBe(down);
    expect(calls).toEqual(['start']);
  });
});
