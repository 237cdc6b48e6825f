/**
 * The step runner to the letter ({@link StepRunner}, {@link appFailure}): which failure in a chain
 * decides, the activity options a step gets, what the UI sees while a step runs, fails and retries
 * (its state, the retry timer, the Warning), how attempts are counted when a failure has no details,
 * which failures are terminal, Retry-After that is not a number, what a superseded step leaves
 * pending, and in a pass: the pending start, the dependency outputs a step gets, and which steps are
 * skipped (and why) after a failure, a newer request or a refused adoption. Time is a fake clock
 * that the fake waits advance; steps finish in a set order. Written for mutants of
 * workflows/step-runner.ts that survived.
 */
import type { ActivityOptions } from '@temporalio/common';
import type { Observation, StepActivityResult, StepInput, WriteStatusInput } from '../../core/activity-contract';
import type { ObjectRef, ReconcileRequest, StepState } from '../../core/definitions';
import { definePlan, type ReconcilerPlan, type StepPlan } from '../../core/plan';
import { ObjectEntity } from '../../workflows/object-entity';
import { StatusWriter } from '../../workflows/status-writer';
import { StepRunner, appFailure, type StepRunnerEffects } from '../../workflows/step-runner';
import { terminalFailureTypes as terminalTypes } from '../../core/errors';

const ref: ObjectRef = { group: 'test.homeostat.dev', version: 'v1', kind: 'Gadget', namespace: 'ns', name: 'g' };
const request = (over: Partial<ReconcileRequest> = {}): ReconcileRequest => ({
  ref,
  uid: 'u1',
  generation: 1,
  resourceVersion: '1',
  reason: 'updated',
  ...over,
});
const start = 1_000_000;

/**
 * A fake clock that waits advance, and activities scripted per step (an outcome throws to fail).
 * A step listed in `hops` finishes after that many turns of the event loop, so steps end in a set
 * order; a step still failing after 10 rounds throws instead of waiting on. What the caller could
 * see is recorded: the step's state when its activity starts, the steps and the timer while
 * waiting, and the steps at every showDetails.
 */
function harness(
  script: Record<string, (() => StepActivityResult)[]>,
  hops: Record<string, number> = {},
  continueAsNew = false,
) {
  let now = start;
  const entity = new ObjectEntity({ ref });
  const calls: { step: string; options: ActivityOptions; input: StepInput; state: StepState | undefined }[] = [];
  const waits: { ms: number; steps: Record<string, StepState>; timer: typeof entity.nextTimer }[] = [];
  const details: Record<string, StepState>[] = [];
  const writes: WriteStatusInput[] = [];
  const status = new StatusWriter(entity, async (input) => void writes.push(input));
  const effects: StepRunnerEffects = {
    execute: async (type, step, options, input) => {
      calls.push({ step: step.name, options, input, state: entity.steps[step.name] });
      const n = calls.filter((c) => c.step === step.name).length;
      const outcomes = script[step.name]!;
      await Promise.resolve();
      for (let i = 0; i < (hops[step.name] ?? 0); i++) await new Promise((r) => setImmediate(r));
      return outcomes[Math.min(n, outcomes.length) - 1]!();
    },
    wait: async (until, ms) => {
      if (waits.length >= 10) throw new Error('a step still failing after 10 rounds');
      waits.push({ ms, steps: { ...entity.steps }, timer: entity.nextTimer && { ...entity.nextTimer } });
      now += ms;
      return until();
    },
    continueAsNewSuggested: () => continueAsNew,
    now: () => now,
    showDetails: () => void details.push({ ...entity.steps }),
    upsert: () => undefined,
  };
  return { runner: new StepRunner(entity, status, effects), entity, calls, waits, details, writes };
}

/** An ActivityFailure whose cause is the ApplicationFailure the activity threw. */
const failure = (type: string, message: string, detail: Record<string, unknown> = {}, nonRetryable = false) =>
  Object.assign(new Error('activity failed'), {
    name: 'ActivityFailure',
    cause: { type, message, nonRetryable, details: [detail] },
  });
const fails =
  (...args: Parameters<typeof failure>) =>
  (): never => {
    throw failure(...args);
  };
const ok =
  (message: string, extra: Partial<StepActivityResult> = {}) =>
  (): StepActivityResult => ({ attempt: 1, message, ...extra });
const obs = { found: true, uid: 'u1', generation: 1, spec: { size: 1 }, identity: { uid: 'u1' } } as unknown as Extract<
  Observation,
  { found: true }
>;
const plan = (steps: StepPlan[]): ReconcilerPlan =>
  definePlan({ group: 'g', version: 'v1', kind: 'Gadget', plural: 'gadgets', scope: 'Namespaced', steps });
const input = { ref } as StepInput;

describe('surviving mutants of step-runner.ts: appFailure', () => {
  it('given a failure chain, it returns the outermost failure with a type, or the innermost when none has one, and {} for no error', () => {
    // terminal(new Error(...)) as the workflow sees it: the typed failure carries its own cause.
    const typed = { type: 'TerminalStepError', message: 'zone', cause: { type: 'Error', message: 'zone' } };
    expect(appFailure(Object.assign(new Error('activity failed'), { cause: typed }))).toBe(typed);
    const timeout = { message: 'timed out' };
    expect(appFailure({ message: 'activity failed', cause: timeout })).toBe(timeout);
    const plain = new Error('boom');
    expect(appFailure(plain)).toBe(plain);
    expect(appFailure(undefined)).toEqual({});
    expect(appFailure(null)).toEqual({});
  });
});

describe('surviving mutants of step-runner.ts: activity options', () => {
  it('given a step with no options, it gets the defaults, the terminal types are never retried, and no heartbeat timeout', () => {
    const options = StepRunner.optionsOf({ name: 'a' }, 'a · Gadget ns/g gen 1');
    expect(options).toEqual({
      startToCloseTimeout: '1 minute',
      retry: {
        initialInterval: '1 second',
        backoffCoefficient: 2,
        maximumInterval: '5 minutes',
        maximumAttempts: 3,
        nonRetryableErrorTypes: ['InvalidSpec', 'TerminalStepError', 'UnknownKind', 'KubernetesRejected'],
      },
      summary: 'a · Gadget ns/g gen 1',
    });
    expect(options.heartbeatTimeout).toBeUndefined();
  });

  it('given a step with a heartbeat timeout and a retry policy, they are passed on, its error types after the terminal ones', () => {
    const options = StepRunner.optionsOf(
      {
        name: 'a',
        startToCloseTimeout: '10 minutes',
        heartbeatTimeout: '30 seconds',
        retry: {
          initialInterval: '2 seconds',
          backoffCoefficient: 3,
          maximumInterval: '1 minute',
          attemptsPerRound: 5,
          nonRetryableErrorTypes: ['QuotaExceeded'],
        },
      },
      'a',
    );
    expect(options).toEqual({
      startToCloseTimeout: '10 minutes',
      heartbeatTimeout: '30 seconds',
      retry: {
        initialInterval: '2 seconds',
        backoffCoefficient: 3,
        maximumInterval: '1 minute',
        maximumAttempts: 5,
        nonRetryableErrorTypes: [...terminalTypes, 'QuotaExceeded'],
      },
      summary: 'a',
    });
  });
});

describe('surviving mutants of step-runner.ts: one step', () => {
  it('given a summary, the activity is named by it, else by the step name, with the object and generation', async () => {
    const h = harness({ a: [ok('done')], b: [ok('done')] });
    const p = plan([{ name: 'a', summary: 'Creates the bucket' }, { name: 'b' }]);
    await h.runner.runStep(p, p.steps[0]!, input, 3, 'u1');
    await h.runner.runStep(p, p.steps[1]!, input, 3, 'u1');
    expect(h.calls.map((c) => c.options.summary)).toEqual([
      'Creates the bucket · Gadget ns/g gen 3',
      'b · Gadget ns/g gen 3',
    ]);
  });

  it('given a round failing then a success, the UI sees running, then retrying with the failure, the retry timer and a StepFailed warning, and the success keeps its message and requeue', async () => {
    const h = harness({ a: [fails('StepFailed', 'boom', { attempt: 3 }), ok('done', { requeueAfterMs: 60_000 })] });
    const p = plan([{ name: 'a' }]);
    const run = await h.runner.runStep(p, p.steps[0]!, input, 1, 'u1');
    expect(h.calls.map((c) => c.state)).toEqual([
      { status: 'running', attempts: 0 },
      { status: 'retrying', attempts: 3, message: 'boom' },
    ]);
    expect(h.waits).toEqual([
      {
        ms: 1000,
        steps: { a: { status: 'retrying', attempts: 3, message: 'boom' } },
        timer: { kind: 'retry', at: start + 1000 },
      },
    ]);
    expect(h.entity.nextTimer).toBeUndefined();
    expect(h.entity.lastError).toBe('a: boom');
    expect(h.writes).toHaveLength(1);
    expect(h.writes[0]!.event).toMatchObject({ type: 'Warning', reason: 'StepFailed', note: 'a: boom' });
    expect(run.state).toEqual({ status: 'succeeded', attempts: 4, message: 'done', requeueAfterMs: 60_000 });
    expect(h.entity.steps.a).toBe(run.state);
  });

  it('given a failure without details (an activity timeout), the round counts every server-side attempt of it', async () => {
    const timedOut = Object.assign(new Error('activity failed'), {
      name: 'ActivityFailure',
      cause: Object.assign(new Error('activity StartToClose timeout'), { name: 'TimeoutFailure' }),
    });
    const h = harness({
      a: [
        () => {
          throw timedOut;
        },
        ok('done'),
      ],
    });
    const p = plan([{ name: 'a' }]);
    const run = await h.runner.runStep(p, p.steps[0]!, input, 1, 'u1');
    expect(h.waits[0]!.steps.a).toEqual({ status: 'retrying', attempts: 3, message: 'activity StartToClose timeout' });
    expect(run.state).toMatchObject({ status: 'succeeded', attempts: 4 });
  });

  it('given a failure of a never-retried type (the catalog’s, the step’s own, or one with a cause) not flagged non-retryable, it is terminal at once', async () => {
    const withCause = Object.assign(new Error('activity failed'), {
      cause: {
        type: 'TerminalStepError',
        message: 'zone is not ours',
        nonRetryable: true,
        details: [{ attempt: 1 }],
        cause: { type: 'Error', message: 'zone is not ours' },
      },
    });
    const h = harness({
      a: [fails('InvalidSpec', 'size must be positive', { attempt: 1 })],
      b: [fails('QuotaExceeded', 'over quota', { attempt: 2 })],
      c: [
        () => {
          throw withCause;
        },
      ],
    });
    const p = plan([{ name: 'a' }, { name: 'b', retry: { nonRetryableErrorTypes: ['QuotaExceeded'] } }, { name: 'c' }]);
    const runs = [];
    for (const step of p.steps) runs.push(await h.runner.runStep(p, step, input, 1, 'u1'));
    expect(runs).toEqual([
      { state: { status: 'failed', attempts: 1, message: 'size must be positive' }, terminal: true, superseded: false },
      { state: { status: 'failed', attempts: 2, message: 'over quota' }, terminal: true, superseded: false },
      { state: { status: 'failed', attempts: 1, message: 'zone is not ours' }, terminal: true, superseded: false },
    ]);
    expect(h.waits).toEqual([]);
  });

  it('given a Retry-After in the details that is not a number, the step’s own backoff applies', async () => {
    const h = harness({ a: [fails('StepFailed', '429', { attempt: 1, retryAfterMs: '30s' }), ok('done')] });
    const p = plan([{ name: 'a' }]);
    await h.runner.runStep(p, p.steps[0]!, input, 1, 'u1');
    expect(h.waits.map((w) => [w.ms, w.timer])).toEqual([[1000, { kind: 'retry', at: start + 1000 }]]);
  });

  it('given a newer request while a step waits to retry, it gives way, not terminal, and the newer request stays pending as it was', async () => {
    const h = harness({ a: [fails('StepFailed', 'boom', { attempt: 3 })] });
    const p = plan([{ name: 'a' }]);
    h.entity.coalescer.offer(request({ generation: 2, resourceVersion: '7' }));
    const run = await h.runner.runStep(p, p.steps[0]!, input, 1, 'u1');
    expect(run).toEqual({
      state: { status: 'failed', attempts: 3, message: 'superseded after: boom' },
      terminal: false,
      superseded: true,
    });
    expect(h.entity.coalescer.peek()).toEqual(request({ generation: 2, resourceVersion: '7' }));
  });

  it('given continue-as-new coming while a step waits, exactly its generation is requeued, with no resource version', async () => {
    const h = harness({ a: [fails('StepFailed', 'boom', { attempt: 3 })] }, {}, true);
    const p = plan([{ name: 'a' }]);
    await h.runner.runStep(p, p.steps[0]!, input, 4, 'u1');
    expect(h.entity.coalescer.peek()).toEqual({
      ref,
      uid: 'u1',
      generation: 4,
      resourceVersion: '',
      reason: 'requeue',
    });
  });
});

describe('surviving mutants of step-runner.ts: a pass of steps', () => {
  const bare = { ref, identity: obs.identity, spec: obs.spec };

  it('given a pass starting, every step shows pending first, and a step gets results only from dependencies that gave outputs', async () => {
    const h = harness({
      prepare: [ok('prepared')],
      publish: [ok('published')],
      audit: [ok('audited', { outputs: { id: 7 } })],
      report: [ok('reported')],
    });
    const p = plan([
      { name: 'prepare' },
      { name: 'publish', dependsOn: ['prepare'] },
      { name: 'audit' },
      { name: 'report', dependsOn: ['audit'] },
    ]);
    await h.runner.runSteps(p, p.steps, obs);
    const pending = { status: 'pending', attempts: 0 };
    expect(h.details[0]).toEqual({ prepare: pending, publish: pending, audit: pending, report: pending });
    const inputOf = (step: string) => h.calls.find((c) => c.step === step)!.input;
    expect(inputOf('prepare')).toStrictEqual(bare);
    expect(inputOf('audit')).toStrictEqual(bare);
    expect(inputOf('publish')).toStrictEqual(bare);
    expect(inputOf('report')).toStrictEqual({ ...bare, results: { audit: { id: 7 } } });
  });

  it('given a terminal failure while other steps run, steps ready later are skipped as "another step failed", and dependents of skipped steps are skipped too', async () => {
    const h = harness(
      {
        a: [fails('TerminalStepError', 'never', { attempt: 1 }, true)],
        b: [ok('b done')],
        c: [ok('never runs')],
        e: [ok('never runs')],
        f: [ok('f done')],
        g: [ok('never runs')],
        h: [ok('never runs')],
      },
      { a: 1, b: 2, f: 3 },
    );
    const p = plan([
      { name: 'a' },
      { name: 'b' },
      { name: 'c', dependsOn: ['b'] },
      { name: 'e', dependsOn: ['c'] },
      { name: 'f' },
      { name: 'g', dependsOn: ['a'] },
      { name: 'h', dependsOn: ['g'] },
    ]);
    const result = await h.runner.runSteps(p, p.steps, obs);
    expect(result).toEqual({ failed: { step: 'a', message: 'never', terminal: true }, superseded: false });
    expect(h.calls.map((c) => c.step)).toEqual(['a', 'b', 'f']);
    const depFailed = { status: 'skipped', attempts: 0, message: 'a dependency failed' };
    expect(h.entity.steps).toEqual({
      a: { status: 'failed', attempts: 1, message: 'never' },
      b: { status: 'succeeded', attempts: 1, message: 'b done' },
      c: { status: 'skipped', attempts: 0, message: 'another step failed' },
      e: depFailed,
      f: { status: 'succeeded', attempts: 1, message: 'f done' },
      g: depFailed,
      h: depFailed,
    });
  });

  it('given a step superseded by a newer request, steps ready later are skipped as superseded, and the pass reports superseded, not failed', async () => {
    const h = harness(
      { a: [fails('StepFailed', 'boom', { attempt: 3 })], b: [ok('b done')], c: [ok('never runs')] },
      { b: 5 },
    );
    h.entity.coalescer.offer(request({ generation: 2 }));
    const p = plan([{ name: 'a' }, { name: 'b' }, { name: 'c', dependsOn: ['b'] }]);
    const result = await h.runner.runSteps(p, p.steps, obs);
    expect(result).toEqual({ superseded: true });
    expect(h.calls.map((c) => c.step)).toEqual(['a', 'b']);
    expect(h.entity.steps.c).toEqual({ status: 'skipped', attempts: 0, message: 'superseded' });
  });

  it('given a refused adoption, the pass’s failure is terminal and marked refused', async () => {
    const h = harness({ a: [fails('AdoptionRefused', 'Service ns/web: not ours', { attempt: 1 }, true)] });
    const p = plan([{ name: 'a' }]);
    const result = await h.runner.runSteps(p, p.steps, obs);
    expect(result).toEqual({
      failed: { step: 'a', message: 'Service ns/web: not ours', terminal: true, refused: true },
      superseded: false,
    });
  });
});
