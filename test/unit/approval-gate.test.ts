import { readCarriedState } from '../../core/carried-state';
import { awaitingApprovalStatus, type ApprovalCheck, type ApprovalDecision } from '../../core/approval';
import type { ObjectRef } from '../../core/definitions';
import type { StepInput, WriteStatusInput } from '../../core/activity-contract';
import { definePlan, type StepPlan } from '../../core/plan';
import { ApprovalGate, type ApprovalEffects } from '../../workflows/approval-gate';
import { ObjectEntity } from '../../workflows/object-entity';
import { StatusWriter } from '../../workflows/status-writer';
import { StepRunner, type StepRunnerEffects } from '../../workflows/step-runner';

const ref: ObjectRef = { group: 'g.test', version: 'v1', kind: 'Ledger', namespace: 'ns', name: 'a' };
const step: StepPlan = { name: 'record', approval: { timeout: '1 hour' } };
const hour = 3_600_000;

/** A check that asks for approval of generation 2 with preview hash `hash`. */
const asking = (hash: string): ApprovalCheck => ({
  reason: 'shrinking',
  preview: 'shrink record a',
  previewHash: hash,
  awaitingStatus: awaitingApprovalStatus(2, 'record', { reason: 'shrinking', preview: 'shrink record a' }),
});

function gateOf(
  entity: ObjectEntity,
  effects: Partial<ApprovalEffects> & Pick<ApprovalEffects, 'check' | 'wait'>,
): { gate: ApprovalGate; writes: unknown[] } {
  const writes: unknown[] = [];
  const status = new StatusWriter(entity, (input) => {
    writes.push(input);
    return Promise.resolve({ written: true });
  });
  const gate = new ApprovalGate(entity, status, {
    now: () => 0,
    showDetails: () => undefined,
    upsert: () => undefined,
    handOver: () => false,
    settle: () => Promise.resolve(),
    ...effects,
  });
  return { gate, writes };
}

describe('the approval gate across continue-as-new', () => {
  it('given a wait that gives way to continue-as-new, the next run shows it at once and resumes it with its deadline and the decision that came meanwhile', async () => {
    const first = new ObjectEntity({ ref });
    let handOver = false;
    const { gate } = gateOf(first, {
      check: () => Promise.resolve(asking('h1')),
      now: () => 1_000,
      wait: (until, ms) => {
        expect(ms).toBe(hour);
        handOver = true; // the history grew long while it waited
        return Promise.resolve(until());
      },
      handOver: () => handOver,
    });
    expect(await gate.before(step, 2, 'uid', false)).toMatchObject({ superseded: expect.stringContaining('next run') });
    const decision: ApprovalDecision = {
      ref,
      decision: 'approve',
      approver: 'alice',
      generation: 2,
      previewHash: 'h1',
    };
    first.decision = decision; // accepted by the update handler before the run continued as new
    first.finishPass(first.outcome('superseded', 2));
    const carried = first.carried(first.lastOutcome);
    expect(carried.approvals?.awaiting).toMatchObject({
      step: 'record',
      previewHash: 'h1',
      deadline: new Date(1_000 + hour).toISOString(),
    });

    const next = new ObjectEntity({ ref, carried });
    expect(next.state().awaitingApproval).toMatchObject({ step: 'record', generation: 2 });
    let waitedMs: number | undefined;
    const resumed = gateOf(next, {
      check: () => Promise.resolve(asking('h1')),
      now: () => 61_000,
      wait: (until, ms) => {
        waitedMs = ms;
        return Promise.resolve(until());
      },
    });
    expect(await resumed.gate.before(step, 2, 'uid', false)).toEqual({ run: true });
    expect(waitedMs).toBe(hour - 60_000); // the same deadline, not a new hour
    expect(next.granted.record).toEqual({ generation: 2, previewHash: 'h1' });
    next.finishPass(next.outcome('ready', 2));
    expect(next.carried(next.lastOutcome).approvals).toEqual({
      granted: { record: { generation: 2, previewHash: 'h1' } },
    });
  });

  it('given a carried wait whose preview changed meanwhile, the carried decision is void: the pass waits anew with a new deadline', async () => {
    const first = new ObjectEntity({ ref });
    const { gate } = gateOf(first, {
      check: () => Promise.resolve(asking('h1')),
      wait: () => Promise.resolve(true),
      handOver: () => true,
    });
    await gate.before(step, 2, 'uid', false);
    first.decision = { ref, decision: 'approve', approver: 'alice', generation: 2, previewHash: 'h1' };
    first.finishPass(first.outcome('superseded', 2));
    const next = new ObjectEntity({ ref, carried: first.carried(first.lastOutcome) });
    let waitedMs: number | undefined;
    const { gate: again } = gateOf(next, {
      check: () => Promise.resolve(asking('h2')),
      now: () => 5_000,
      wait: (until, ms) => {
        waitedMs = ms;
        return Promise.resolve(until()); // nothing decided: the timeout
      },
    });
    expect(await again.before(step, 2, 'uid', false)).toMatchObject({ terminal: true });
    expect(waitedMs).toBe(hour);
    expect(next.granted.record).toBeUndefined();
  });

  it('given a pass that did not give its wait way, the wait ends with the pass and is not carried', () => {
    const entity = new ObjectEntity({ ref });
    entity.awaiting = { step: 'record', generation: 2, previewHash: 'h', reason: 'r', preview: 'p', deadline: 'x' };
    entity.finishPass(entity.outcome('superseded', 2));
    expect(entity.awaiting).toBeUndefined();
    expect(entity.carried(entity.lastOutcome).approvals).toBeUndefined();
  });

  it('given a carried envelope with a malformed approval, the reader names the field', () => {
    expect(() =>
      readCarriedState({ passes: 0, runs: 1, approvals: { granted: { record: { generation: -1 } } } }),
    ).toThrow('approvals.granted.record.generation');
    expect(() => readCarriedState({ passes: 0, runs: 1, approvals: { awaiting: 'x' } })).toThrow('approvals.awaiting');
  });
});

describe('the approval gate and the decision it acts on', () => {
  const decided = (entity: ObjectEntity, decision: 'approve' | 'reject'): ApprovalDecision => {
    const d: ApprovalDecision = { ref, decision, approver: 'alice', generation: 2, previewHash: 'h1' };
    entity.decision = d;
    return d;
  };

  it.each(['approve', 'reject'] as const)(
    'given a decision (%s), the gate ends the workflow task that received it before writing status or letting the step run',
    async (decision) => {
      const entity = new ObjectEntity({ ref });
      const order: string[] = [];
      const { gate, writes } = gateOf(entity, {
        check: () => Promise.resolve(asking('h1')),
        wait: (until) => {
          decided(entity, decision);
          return Promise.resolve(until());
        },
        settle: () => {
          order.push(`settle after ${writes.length} writes`);
          return Promise.resolve();
        },
      });
      const outcome = await gate.before(step, 2, 'uid', false);
      order.push(`${writes.length} writes at the end`);
      expect(order).toEqual(['settle after 0 writes', '1 writes at the end']);
      expect(outcome).toMatchObject(decision === 'approve' ? { run: true } : { terminal: true });
    },
  );

  it('given a wait that times out, nothing is settled: the timer that ended it is already in history', async () => {
    const entity = new ObjectEntity({ ref });
    let settled = 0;
    const { gate } = gateOf(entity, {
      check: () => Promise.resolve(asking('h1')),
      wait: () => Promise.resolve(false),
      settle: () => {
        settled++;
        return Promise.resolve();
      },
    });
    expect(await gate.before(step, 2, 'uid', false)).toMatchObject({ terminal: true });
    expect(settled).toBe(0);
  });
});

describe('an approval check that fails', () => {
  /** The ActivityFailure a check throttled by the API server ends in (Retry-After 2 s), or a terminal one. */
  const checkFailure = (type: string, nonRetryable: boolean, detail: Record<string, unknown>) =>
    Object.assign(new Error('activity failed'), {
      name: 'ActivityFailure',
      cause: { type, message: 'get Ledger ns/a: HTTP 429 too many requests', nonRetryable, details: [detail] },
    });

  /** A step runner with the gate, whose check answers with `checks` in turn; the step itself succeeds. */
  function runnerOf(checks: (() => Promise<ApprovalCheck>)[]) {
    let now = 0;
    const entity = new ObjectEntity({ ref });
    const waits: { ms: number; phase: string | undefined }[] = [];
    const writes: WriteStatusInput[] = [];
    const ran: string[] = [];
    const status = new StatusWriter(entity, async (input) => void writes.push(input));
    const wait = (until: () => boolean, ms: number) => {
      if (waits.length >= 5) throw new Error('still failing after 5 waits');
      waits.push({ ms, phase: writes.at(-1)?.status.phase });
      now += ms;
      return Promise.resolve(until());
    };
    let n = 0;
    const gate = new ApprovalGate(entity, status, {
      check: () => checks[Math.min(n++, checks.length - 1)]!(),
      wait,
      now: () => now,
      showDetails: () => undefined,
      upsert: () => undefined,
      handOver: () => false,
      settle: () => Promise.resolve(),
    });
    const effects: StepRunnerEffects = {
      execute: (_type, s) => {
        ran.push(s.name);
        return Promise.resolve({ attempt: 1, message: 'recorded' });
      },
      wait,
      continueAsNewSuggested: () => false,
      now: () => now,
      showDetails: () => undefined,
      upsert: () => undefined,
    };
    const plan = definePlan({
      group: 'g.test',
      version: 'v1',
      kind: 'Ledger',
      plural: 'ledgers',
      scope: 'Namespaced',
      steps: [step],
    });
    const runner = new StepRunner(entity, status, effects, {}, gate);
    return { run: () => runner.runStep(plan, plan.steps[0], { ref } as StepInput, 2, 'uid'), waits, writes, ran };
  }

  it('given a check the API server throttles (429, Retry-After 2 s), the step reports Degraded, waits the Retry-After, asks again and runs: the pass goes on', async () => {
    const h = runnerOf([
      () => Promise.reject(checkFailure('KubernetesThrottled', false, { retryAfterMs: 2_000 })),
      () => Promise.resolve({ preview: 'shrink record a', previewHash: 'h1' }),
    ]);
    const run = await h.run();
    expect(run).toMatchObject({ terminal: false, superseded: false, state: { status: 'succeeded' } });
    expect(h.ran).toEqual(['record']);
    expect(h.waits).toEqual([{ ms: 2_000, phase: 'Degraded' }]);
    expect(h.writes[0]).toMatchObject({ status: { phase: 'Degraded' }, event: { reason: 'StepFailed' } });
  });

  it('given a check that fails without a Retry-After, it is asked again after the step’s backoff, which grows', async () => {
    const h = runnerOf([
      () => Promise.reject(checkFailure('KubernetesUnavailable', false, {})),
      () => Promise.reject(checkFailure('KubernetesUnavailable', false, {})),
      () => Promise.resolve({ preview: 'shrink record a', previewHash: 'h1' }),
    ]);
    expect(await h.run()).toMatchObject({ state: { status: 'succeeded' } });
    expect(h.waits).toHaveLength(2);
    expect(h.waits[1]!.ms).toBeGreaterThan(h.waits[0]!.ms);
  });

  it('given a check that fails terminally, the step fails terminally without running and without waiting', async () => {
    const h = runnerOf([() => Promise.reject(checkFailure('TerminalStepError', true, {}))]);
    expect(await h.run()).toMatchObject({ terminal: true, state: { status: 'failed' } });
    expect(h.ran).toEqual([]);
    expect(h.waits).toEqual([]);
  });
});
