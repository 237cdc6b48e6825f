/**
 * The object workflow's parts, each alone, outside any workflow: the run's state ({@link ObjectEntity}),
 * change-only status writes ({@link StatusWriter}), the step runner's rounds, backoff, Retry-After,
 * terminal and refused failures and dependency order ({@link StepRunner}), and the requeue/drift timer
 * ({@link PassTimer}). Time is a fake clock that the fake waits advance: what a time-skipping server
 * would do, without one. The whole workflow runs against the real server in the integration tests.
 */
import type { ActivityOptions } from '@temporalio/common';
import type {
  LeadingStepOutcome,
  Observation,
  StepActivityResult,
  StepInput,
  WriteStatusInput,
} from '../../core/activity-contract';
import type { ObjectRef, ReconcileRequest } from '../../core/definitions';
import { definePlan, type ReconcilerPlan, type StepPlan } from '../../core/plan';
import { ObjectEntity } from '../../workflows/object-entity';
import { desiredStatus } from '../../workflows/object-state';
import { PassTimer } from '../../workflows/pass-timer';
import { StatusWriter } from '../../workflows/status-writer';
import { StepRunner, type StepRunnerBehaviour, type StepRunnerEffects } from '../../workflows/step-runner';
import { succeededPassStatus } from '../../core/status';
import { passTimerOnFakeClock } from '../support/pass-timer';

const ref: ObjectRef = { group: 'test.homeostat.dev', version: 'v1', kind: 'Gadget', namespace: 'ns', name: 'g' };
const request = (over: Partial<ReconcileRequest> = {}): ReconcileRequest => ({
  ref,
  uid: 'u1',
  generation: 1,
  resourceVersion: '1',
  reason: 'updated',
  ...over,
});

describe('ObjectEntity: the state of a run', () => {
  it('given a fresh start, it is Pending, run 1, with the request pending, and its query answer says so', () => {
    const e = new ObjectEntity({ ref, pending: request({ reason: 'added' }) });
    expect(e.where).toBe('ns/g');
    expect(e.state()).toEqual({
      ref,
      uid: 'u1',
      phase: 'Pending',
      conditions: [],
      wantedGeneration: 1,
      reconciling: false,
      steps: {},
      passes: 0,
      run: 1,
      pending: true,
    });
    expect(e.details()).toContain('**Gadget ns/g**');
  });

  it('given carried state, it resumes passes, runs, the blocked generation and the last outcome', () => {
    const lastOutcome = {
      pass: 7,
      result: 'degraded' as const,
      phase: 'Degraded' as const,
      generation: 3,
      steps: { a: { status: 'failed' as const, attempts: 3, message: 'no' } },
      error: 'a: no',
      statusWritten: true,
    };
    const e = new ObjectEntity({
      ref: { ...ref, namespace: '' },
      carried: { uid: 'u1', passes: 7, runs: 2, invalidGeneration: 3, blockedBy: 'terminal', lastOutcome },
    });
    expect(e.where).toBe('g');
    expect(e.state()).toMatchObject({
      phase: 'Degraded',
      observedGeneration: 3,
      passes: 7,
      run: 3,
      lastError: 'a: no',
    });
    expect(e.blocks(request({ generation: 3 }), false, false)).toBe(true);
    expect(e.blocks(request({ generation: 4 }), false, false)).toBe(false);
    expect(e.blocks(request({ generation: 3, reason: 'deleted' }), false, false)).toBe(false);
    // A terminal failure may be cured by a referenced object; an invalid spec only by a spec change.
    expect(e.blocks(request({ generation: 3, reason: 'referenced-changed' }), false, false)).toBe(false);
    // So may a child's change (a drifted child an apply cannot merge over, a rollout past its deadline).
    expect(e.blocks(request({ generation: 3, reason: 'child-changed' }), false, false)).toBe(false);
    expect(e.blocks(request({ generation: 3, reason: 'resync' }), false, false)).toBe(true);
    // …but not in a history recorded before the version marker that made it so.
    const asked: string[] = [];
    const before = () => (asked.push('marker'), false);
    expect(e.blocks(request({ generation: 3, reason: 'child-changed' }), false, false, before)).toBe(true);
    expect(e.blocks(request({ generation: 3, reason: 'referenced-changed' }), false, false, before)).toBe(false);
    expect(e.blocks(request({ generation: 4, reason: 'child-changed' }), false, false, before)).toBe(false);
    expect(asked).toEqual(['marker']); // asked only where the answer matters
    e.blockedBy = 'invalid';
    expect(e.blocks(request({ generation: 3, reason: 'referenced-changed' }), false, false)).toBe(true);
    expect(e.blocks(request({ generation: 3, reason: 'child-changed' }), false, false)).toBe(true);
    expect(e.blocks(undefined, false, true)).toBe(true); // a timer does not retry a blocked generation
    expect(e.blocks(undefined, true, false)).toBe(false); // an explicit update does
    expect(e.blocks(request({ uid: 'u2', generation: 1 }), false, false)).toBe(false); // a new object
  });

  it('given passes, outcomes keep the last 20, carried state takes the armed drift timer but not a retry', () => {
    const e = new ObjectEntity({ ref });
    e.uid = 'u1';
    for (let i = 0; i < 25; i++) e.finishPass(e.outcome('ready', 1));
    expect(e.passes).toBe(25);
    expect([...e.outcomes.keys()]).toEqual([
      6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
    ]);
    e.nextTimer = { kind: 'retry', at: 5 };
    expect(e.carried(e.lastOutcome)).toEqual({
      format: 1,
      uid: 'u1',
      passes: 25,
      runs: 1,
      lastOutcome: e.lastOutcome,
    });
    e.nextTimer = { kind: 'drift', at: 9 };
    e.blockedGeneration = 2;
    expect(e.carried(e.lastOutcome)).toMatchObject({
      invalidGeneration: 2,
      blockedBy: 'invalid',
      timer: { kind: 'drift', at: 9 },
    });
  });

  it('given the current search attributes, only the values that differ are upserted', () => {
    const e = new ObjectEntity({ ref });
    const current = (values: Record<string, unknown>) =>
      ({ get: (key: { name: string }) => values[key.name] }) as never;
    expect(e.changedSearchAttributes(current({})).map((p) => p.key.name)).toEqual([
      'HomeostatKind',
      'HomeostatNamespace',
      'HomeostatName',
      'HomeostatPhase',
    ]);
    e.phase = 'Ready';
    e.observedGeneration = 4;
    const now = { HomeostatKind: 'Gadget', HomeostatNamespace: 'ns', HomeostatName: 'g', HomeostatPhase: 'Pending' };
    expect(e.changedSearchAttributes(current(now))).toEqual([
      { key: expect.objectContaining({ name: 'HomeostatPhase' }), value: 'Ready' },
      { key: expect.objectContaining({ name: 'HomeostatGeneration' }), value: 4 },
    ]);
  });
});

/** A fresh run's entity and a status writer whose writes are recorded, not sent. */
function recordingStatusWriter() {
  const e = new ObjectEntity({ ref });
  const writes: WriteStatusInput[] = [];
  const w = new StatusWriter(e, async (input) => void writes.push(input));
  return { e, writes, w };
}

describe('StatusWriter: status only when it changed', () => {
  it('given the same status twice, it writes once; a new phase carries its Event, a same-phase change none', async () => {
    const { e, writes, w } = recordingStatusWriter();
    const ready = desiredStatus({ phase: 'Ready', generation: 1, succeeded: 2 });
    const event = { type: 'Normal' as const, reason: 'Reconciled', note: 'ok' };
    await w.writeIfChanged('u1', ready, event);
    await w.writeIfChanged('u1', ready, event);
    expect(writes).toHaveLength(1);
    expect(writes[0]!.event).toMatchObject({ reason: 'Reconciled', action: 'Reconcile', dedupKey: '1/Ready/1' });
    expect(e.phase).toBe('Ready');
    expect(e.statusWritten).toBe(true);
    await w.writeIfChanged('u1', desiredStatus({ phase: 'Ready', generation: 2, succeeded: 2 }), event);
    expect(writes).toHaveLength(2);
    expect(writes[1]!.event).toBeUndefined();
  });

  it('given an observation with no status, the first write carries its resourceVersion (no read needed), later ones do not', async () => {
    const { writes, w } = recordingStatusWriter();
    w.observed({}, '41');
    await w.writeIfChanged('u1', desiredStatus({ phase: 'Degraded', generation: 1 }));
    await w.writeIfChanged('u1', desiredStatus({ phase: 'Ready', generation: 1 }));
    expect(writes.map((x) => x.expectedVersion)).toEqual(['41', undefined]);
    // A status already there (even another controller's condition alone) is read and merged first.
    w.observed({ conditions: [{ type: 'Other', status: 'True', reason: 'X', message: '' }] }, '42');
    await w.writeIfChanged('u1', desiredStatus({ phase: 'Ready', generation: 2 }));
    expect(writes[2]!.expectedVersion).toBeUndefined();
    w.observed({}, '');
    await w.writeIfChanged('u1', desiredStatus({ phase: 'Ready', generation: 3 }));
    expect(writes[3]!.expectedVersion).toBeUndefined();
  });

  it('given writes started together, they run one after the other, and a failed write does not block the next', async () => {
    const e = new ObjectEntity({ ref });
    const order: string[] = [];
    let fail = true;
    const w = new StatusWriter(e, async (input) => {
      order.push(`start ${input.status.phase}`);
      await new Promise((r) => setTimeout(r, 5));
      if (fail) {
        fail = false;
        throw new Error('conflict');
      }
      order.push(`end ${input.status.phase}`);
    });
    const a = w.writeIfChanged('u1', desiredStatus({ phase: 'Degraded', generation: 1 }));
    const b = w.writeIfChanged('u1', desiredStatus({ phase: 'Ready', generation: 1 }));
    await expect(a).rejects.toThrow('conflict');
    await b;
    expect(order).toEqual(['start Degraded', 'start Ready', 'end Ready']);
    expect(w.known.phase).toBe('Ready');
  });
});

describe('StatusWriter: reconciler fields', () => {
  it('given a field written, an unchanged value is not written again, a changed one is, and a pass without it keeps it', async () => {
    const { writes, w } = recordingStatusWriter();
    const ready = (fields?: Record<string, number>) =>
      desiredStatus({ phase: 'Ready', generation: 1, ...(fields ? { fields } : {}) });
    await w.writeIfChanged('u1', ready({ readyReplicas: 3 }));
    await w.writeIfChanged('u1', ready({ readyReplicas: 3 }));
    await w.writeIfChanged('u1', ready());
    expect(writes).toHaveLength(1);
    expect(w.known.fields).toEqual({ readyReplicas: 3 });
    await w.writeIfChanged('u1', ready({ readyReplicas: 2 }));
    expect(writes.map((x) => x.status.fields)).toEqual([{ readyReplicas: 3 }, { readyReplicas: 2 }]);
    await w.writeIfChanged('u1', desiredStatus({ phase: 'Degraded', generation: 1 }));
    expect(w.known.fields).toEqual({ readyReplicas: 2 });
  });
});

/** A fake clock that waits advance, and activities scripted per step. */
function harness(
  script: Record<string, ((attempt: number) => StepActivityResult | Error)[]>,
  behaviour: StepRunnerBehaviour = {},
) {
  let now = 1_000_000;
  const waits: number[] = [];
  const calls: { step: string; options: ActivityOptions; input: StepInput }[] = [];
  const entity = new ObjectEntity({ ref });
  const writes: WriteStatusInput[] = [];
  const status = new StatusWriter(entity, async (input) => void writes.push(input));
  let supersedeAfterWaits = Infinity;
  const effects: StepRunnerEffects = {
    execute: async (type, step, options, input) => {
      calls.push({ step: step.name, options, input });
      const n = calls.filter((c) => c.step === step.name).length;
      const outcome = script[step.name]![Math.min(n, script[step.name]!.length) - 1]!(n);
      await Promise.resolve();
      if (outcome instanceof Error) throw outcome;
      return outcome;
    },
    wait: async (until, ms) => {
      waits.push(ms);
      now += ms;
      return waits.length >= supersedeAfterWaits || until();
    },
    continueAsNewSuggested: () => false,
    now: () => now,
    showDetails: () => undefined,
    upsert: () => undefined,
  };
  const runner = new StepRunner(entity, status, effects, behaviour);
  return {
    runner,
    entity,
    waits,
    calls,
    writes,
    supersedeAfter: (n: number) => (supersedeAfterWaits = n),
  };
}

const failure = (type: string, message: string, detail: Record<string, unknown> = {}, nonRetryable = false) =>
  Object.assign(new Error('activity failed'), {
    name: 'ActivityFailure',
    cause: { type, message, nonRetryable, details: [detail] },
  });
const ok =
  (message: string, extra: Partial<StepActivityResult> = {}) =>
  (): StepActivityResult => ({
    attempt: 1,
    message,
    ...extra,
  });
const obs = { found: true, uid: 'u1', generation: 1, spec: { size: 1 }, identity: { uid: 'u1' } } as unknown as Extract<
  Observation,
  { found: true }
>;
const plan = (steps: StepPlan[]): ReconcilerPlan =>
  definePlan({ group: 'g', version: 'v1', kind: 'Gadget', plural: 'gadgets', scope: 'Namespaced', steps });

describe('StepRunner: rounds, backoff and dependency order', () => {
  it('given steps reporting progress and status fields, the run lists the progressing steps in plan order and merges the fields (a later step wins)', async () => {
    const h = harness({
      a: [ok('applied', { status: { readyReplicas: 1, image: 'v1' } })],
      b: [ok('rolled', { progressing: '1/3 replicas ready', status: { readyReplicas: 2 } })],
      c: [ok('waiting', { progressing: 'no endpoints' })],
      d: [ok('done')],
    });
    const p = plan([{ name: 'a' }, { name: 'b', dependsOn: ['a'] }, { name: 'c' }, { name: 'd' }]);
    const result = await h.runner.runSteps(p, p.steps, obs);
    expect(result.failed).toBeUndefined();
    expect(result.progressing).toEqual([
      { step: 'b', message: '1/3 replicas ready' },
      { step: 'c', message: 'no endpoints' },
    ]);
    expect(result.fields).toEqual({ readyReplicas: 2, image: 'v1' });
    expect(h.entity.steps.b).toMatchObject({ status: 'succeeded', progressing: '1/3 replicas ready' });
    expect(h.entity.steps.d!.progressing).toBeUndefined();
  });

  it('given no step reporting progress or fields, the run has neither key (passes recorded before them replay unchanged)', async () => {
    const h = harness({ a: [ok('applied')] });
    const p = plan([{ name: 'a' }]);
    const result = await h.runner.runSteps(p, p.steps, obs);
    expect('progressing' in result).toBe(false);
    expect('fields' in result).toBe(false);
  });

  it('given a step reporting progress and another failing, the failure is reported and the progress kept on its step', async () => {
    const h = harness({
      a: [ok('rolled', { progressing: '0/1 replicas ready', status: { readyReplicas: 0 } })],
      b: [() => failure('TerminalStepError', 'never', { attempt: 1 }, true)],
    });
    const p = plan([{ name: 'a' }, { name: 'b' }]);
    const result = await h.runner.runSteps(p, p.steps, obs);
    expect(result.failed).toMatchObject({ step: 'b', terminal: true });
    expect(result.fields).toEqual({ readyReplicas: 0 });
  });

  it('given a step failing two rounds, it waits the backoff between rounds (1 s, 2 s), reports Degraded while failing, then succeeds', async () => {
    const h = harness({
      a: [
        () => failure('StepFailed', 'boom', { attempt: 3 }),
        () => failure('StepFailed', 'boom', { attempt: 3 }),
        ok('done'),
      ],
    });
    const p = plan([{ name: 'a' }]);
    const run = await h.runner.runStep(p, p.steps[0]!, { ref } as StepInput, 1, 'u1');
    expect(run).toMatchObject({ terminal: false, superseded: false, state: { status: 'succeeded', attempts: 7 } });
    expect(h.waits).toEqual([1000, 2000]);
    expect(h.writes.map((w) => w.status.phase)).toEqual(['Degraded']); // the same failure again: unchanged
    expect(h.writes[0]!.status.conditions[0]).toMatchObject({ reason: 'StepFailed', message: 'a: boom' });
    expect(h.calls[0]!.options).toMatchObject({
      startToCloseTimeout: '1 minute',
      retry: { maximumAttempts: 3, backoffCoefficient: 2, initialInterval: '1 second' },
    });
  });

  it('given Retry-After in the failure, the next round waits exactly that long', async () => {
    const h = harness({
      a: [() => failure('KubernetesThrottled', '429', { attempt: 1, retryAfterMs: 7000 }), ok('done')],
    });
    const p = plan([{ name: 'a' }]);
    await h.runner.runStep(p, p.steps[0]!, { ref } as StepInput, 1, 'u1');
    expect(h.waits).toEqual([7000]);
  });

  it('given a terminal failure, and a refused adoption, there is no second round, and the refusal is marked', async () => {
    const h = harness({
      a: [() => failure('TerminalStepError', 'never', { attempt: 1 }, true)],
      b: [() => failure('AdoptionRefused', 'Service ns/web: not ours', { attempt: 1 }, true)],
    });
    const p = plan([{ name: 'a' }, { name: 'b' }]);
    const a = await h.runner.runStep(p, p.steps[0]!, { ref } as StepInput, 1, 'u1');
    const b = await h.runner.runStep(p, p.steps[1]!, { ref } as StepInput, 1, 'u1');
    expect(a).toMatchObject({ terminal: true, superseded: false, state: { status: 'failed', attempts: 1 } });
    expect(a.refused).toBeUndefined();
    expect(b).toMatchObject({ terminal: true, refused: true });
    expect(h.waits).toEqual([]);
    expect(h.writes).toEqual([]);
  });

  it('given a newer request while a step waits to retry, the step gives way as superseded', async () => {
    const h = harness({ a: [() => failure('StepFailed', 'boom', { attempt: 3 })] });
    const p = plan([{ name: 'a' }]);
    h.entity.coalescer.offer(request({ generation: 2 }));
    const run = await h.runner.runStep(p, p.steps[0]!, { ref } as StepInput, 1, 'u1');
    expect(run).toMatchObject({ superseded: true, state: { status: 'failed', message: 'superseded after: boom' } });
    expect(h.entity.nextTimer).toBeUndefined();
  });

  it('given a long failure and continue-as-new coming, the generation is requeued for the next run', async () => {
    const h = harness({ a: [() => failure('StepFailed', 'boom', { attempt: 3 })] });
    h.supersedeAfter(1);
    const p = plan([{ name: 'a' }]);
    await h.runner.runStep(p, p.steps[0]!, { ref } as StepInput, 4, 'u1');
    expect(h.entity.coalescer.peek()).toMatchObject({ generation: 4, reason: 'requeue', uid: 'u1' });
  });

  it('given dependent and independent steps, dependents wait, outputs flow to them, a failure skips what depends on it', async () => {
    const h = harness({
      prepare: [ok('prepared', { outputs: { id: 7 } })],
      publish: [() => failure('TerminalStepError', 'no', { attempt: 1 }, true)],
      audit: [ok('audited', { requeueAfterMs: 500 })],
      announce: [ok('never')],
    });
    const p = plan([
      { name: 'prepare' },
      { name: 'publish', dependsOn: ['prepare'] },
      { name: 'audit' },
      { name: 'announce', dependsOn: ['publish'] },
    ]);
    const result = await h.runner.runSteps(p, p.steps, obs);
    expect(h.calls.map((c) => c.step)).toEqual(['prepare', 'audit', 'publish']);
    expect(h.calls[2]!.input.results).toEqual({ prepare: { id: 7 } });
    expect(result).toEqual({
      failed: { step: 'publish', message: 'no', terminal: true },
      superseded: false,
      requeueAfterMs: 500,
    });
    expect(h.entity.steps.announce).toEqual({ status: 'skipped', attempts: 0, message: 'a dependency failed' });
  });

  it('given a chain a → b → c and a failing alone, both b and c are skipped, not c left pending', async () => {
    const h = harness({
      a: [() => failure('TerminalStepError', 'no', { attempt: 1 }, true)],
      b: [ok('never')],
      c: [ok('never')],
    });
    const p = plan([{ name: 'a' }, { name: 'b', dependsOn: ['a'] }, { name: 'c', dependsOn: ['b'] }]);
    await h.runner.runSteps(p, p.steps, obs);
    expect(h.calls.map((c) => c.step)).toEqual(['a']);
    expect(h.entity.steps.b).toEqual({ status: 'skipped', attempts: 0, message: 'a dependency failed' });
    expect(h.entity.steps.c).toEqual({ status: 'skipped', attempts: 0, message: 'a dependency failed' });
  });

  it('given a failure while another step runs, a step ready after it is skipped, and so is the step that needs that one', async () => {
    const h = harness({
      a: [() => failure('TerminalStepError', 'no', { attempt: 1 }, true)],
      b: [ok('done')],
      c: [ok('never')],
      d: [ok('never')],
    });
    const p = plan([{ name: 'a' }, { name: 'b' }, { name: 'c', dependsOn: ['b'] }, { name: 'd', dependsOn: ['c'] }]);
    await h.runner.runSteps(p, p.steps, obs);
    expect(h.calls.map((c) => c.step)).toEqual(['a', 'b']);
    expect(h.entity.steps.c).toEqual({ status: 'skipped', attempts: 0, message: 'another step failed' });
    expect(h.entity.steps.d).toEqual({ status: 'skipped', attempts: 0, message: 'a dependency failed' });
  });
});

describe('StepRunner: a progressing step holds back its dependents (workflow-code version 4)', () => {
  const rollout = plan([
    { name: 'deploy' },
    { name: 'announce', dependsOn: ['deploy'] },
    { name: 'record', dependsOn: ['announce'] },
    { name: 'config' },
  ]);

  it('given a step still rolling out, its dependents (direct or not) do not run and say what they wait for; independent steps run', async () => {
    const h = harness(
      {
        deploy: [ok('applied', { progressing: '0/3 replicas ready' })],
        announce: [ok('announced')],
        record: [ok('recorded')],
        config: [ok('configured')],
      },
      { holdDependents: true },
    );
    const result = await h.runner.runSteps(rollout, rollout.steps, obs);
    expect(h.calls.map((c) => c.step).sort()).toEqual(['config', 'deploy']);
    expect(result.failed).toBeUndefined();
    expect(result.progressing).toEqual([{ step: 'deploy', message: '0/3 replicas ready' }]);
    expect(h.entity.steps.announce).toEqual({
      status: 'skipped',
      attempts: 0,
      message: 'waits for deploy to finish: 0/3 replicas ready',
      waitingFor: 'deploy',
    });
    expect(h.entity.steps.record).toMatchObject({ status: 'skipped', waitingFor: 'deploy' });
    // The pass ends Reconciling; the waiting steps' conditions are False, naming the step they wait for.
    const passed = succeededPassStatus(
      1,
      rollout.steps.map((s) => ({ name: s.name, ...h.entity.steps[s.name] })),
      undefined,
    );
    expect(passed.status.phase).toBe('Reconciling');
    expect(passed.status.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'DeployReady', status: 'False', reason: 'InProgress' }),
        expect.objectContaining({
          type: 'AnnounceReady',
          status: 'False',
          reason: 'WaitingForDependency',
          message: 'waits for deploy to finish: 0/3 replicas ready',
        }),
        expect.objectContaining({ type: 'ConfigReady', status: 'True' }),
      ]),
    );
  });

  it('given the step finished in a later pass, its dependents run', async () => {
    const h = harness(
      { deploy: [ok('applied')], announce: [ok('announced')], record: [ok('recorded')], config: [ok('configured')] },
      { holdDependents: true },
    );
    const result = await h.runner.runSteps(rollout, rollout.steps, obs);
    expect(h.calls.map((c) => c.step).sort()).toEqual(['announce', 'config', 'deploy', 'record']);
    expect(result.progressing).toBeUndefined();
  });

  it('given a run of an older workflow-code version, dependents of a progressing step run as they did', async () => {
    const h = harness({
      deploy: [ok('applied', { progressing: '0/3 replicas ready' })],
      announce: [ok('announced')],
      record: [ok('recorded')],
      config: [ok('configured')],
    });
    await h.runner.runSteps(rollout, rollout.steps, obs);
    expect(h.calls.map((c) => c.step).sort()).toEqual(['announce', 'config', 'deploy', 'record']);
  });

  it('given a held step and a failed one both below a step, the failure is what it reports', async () => {
    const h = harness(
      {
        deploy: [ok('applied', { progressing: '0/3' })],
        config: [() => failure('TerminalStepError', 'bad config', { attempt: 1 }, true)],
        both: [ok('never')],
      },
      { holdDependents: true },
    );
    const p = plan([{ name: 'deploy' }, { name: 'config' }, { name: 'both', dependsOn: ['deploy', 'config'] }]);
    const result = await h.runner.runSteps(p, p.steps, obs);
    expect(result.failed).toMatchObject({ step: 'config', terminal: true });
    expect(h.entity.steps.both).toEqual({ status: 'skipped', attempts: 0, message: 'a dependency failed' });
  });
});

describe('StepRunner: a step sees its previous success (workflow-code version 4)', () => {
  it('given a step that succeeded in an earlier pass, its next input carries that generation, outputs and message', async () => {
    const h = harness({ announce: [ok('announced', { outputs: { id: 'a-1' } })] }, { previousResults: true });
    const p = plan([{ name: 'announce' }]);
    await h.runner.runSteps(p, p.steps, obs);
    expect(h.calls[0]!.input.previous).toBeUndefined();
    expect(h.entity.previous.announce).toEqual({ generation: 1, outputs: { id: 'a-1' }, message: 'announced' });
    await h.runner.runSteps(p, p.steps, { ...obs, generation: 2 });
    expect(h.calls[1]!.input.previous).toEqual({ generation: 1, outputs: { id: 'a-1' }, message: 'announced' });
    expect(h.entity.previous.announce!.generation).toBe(2);
    // Carried across continue-as-new.
    const next = new ObjectEntity({ ref, carried: h.entity.carried(h.entity.outcome('ready', 2)) });
    expect(next.previous.announce).toEqual({ generation: 2, outputs: { id: 'a-1' }, message: 'announced' });
  });

  it('given a failed attempt, the previous success stays the last success', async () => {
    const h = harness(
      { announce: [ok('announced'), () => failure('TerminalStepError', 'down', { attempt: 1 }, true)] },
      { previousResults: true },
    );
    const p = plan([{ name: 'announce' }]);
    await h.runner.runSteps(p, p.steps, obs);
    await h.runner.runSteps(p, p.steps, { ...obs, generation: 2 });
    expect(h.entity.previous.announce).toEqual({ generation: 1, message: 'announced' });
  });

  it('given a run of an older workflow-code version, no input carries a previous result and nothing is kept', async () => {
    const h = harness({ announce: [ok('announced')] });
    const p = plan([{ name: 'announce' }]);
    await h.runner.runSteps(p, p.steps, obs);
    await h.runner.runSteps(p, p.steps, obs);
    expect(h.calls.map((c) => c.input.previous)).toEqual([undefined, undefined]);
    expect(h.entity.previous).toEqual({});
  });
});

describe('StepRunner: leading steps observe already ran', () => {
  const chain = plan([
    { name: 'a', execution: 'local' },
    { name: 'b', dependsOn: ['a'], execution: 'local' },
    { name: 'c', dependsOn: ['b'] },
  ]);

  it('given a and b run by observe, only c runs as an activity, with both outputs, and the attempts count theirs', async () => {
    const h = harness({ a: [ok('never')], b: [ok('never')], c: [ok('published')] });
    const result = await h.runner.runSteps(chain, chain.steps, obs, [
      { step: 'a', result: { attempt: 1, message: 'applied', outputs: { id: 7 } } },
      { step: 'b', result: { attempt: 1, outputs: { port: 80 }, status: { port: 80 } } },
    ]);
    expect(h.calls.map((c) => c.step)).toEqual(['c']);
    expect(h.calls[0]!.input.results).toEqual({ a: { id: 7 }, b: { port: 80 } });
    expect(result).toEqual({ superseded: false, fields: { port: 80 } });
    expect(h.entity.steps.a).toEqual({ status: 'succeeded', attempts: 1, message: 'applied' });
    expect(h.entity.steps.b).toEqual({ status: 'succeeded', attempts: 1 });
  });

  it('given b failing in observe, b runs again as its own activity at once (no backoff, no Degraded write) and its attempts add up', async () => {
    const h = harness({ b: [ok('second time')], c: [ok('published')] });
    const result = await h.runner.runSteps(chain, chain.steps, obs, [
      { step: 'a', result: { attempt: 1 } },
      { step: 'b', failure: { message: 'connection reset', type: 'StepFailed', nonRetryable: false } },
    ]);
    expect(h.calls.map((c) => c.step)).toEqual(['b', 'c']);
    expect(h.waits).toEqual([]);
    expect(h.writes).toEqual([]);
    expect(result.failed).toBeUndefined();
    expect(h.entity.steps.b).toEqual({ status: 'succeeded', attempts: 2, message: 'second time' });
  });

  it('given b failing terminally in observe, it is not run again and c is skipped', async () => {
    const h = harness({ b: [ok('never')], c: [ok('never')] });
    const result = await h.runner.runSteps(chain, chain.steps, obs, [
      { step: 'a', result: { attempt: 1 } },
      {
        step: 'b',
        failure: { message: 'spec asks for the impossible', type: 'TerminalStepError', nonRetryable: true },
      },
    ]);
    expect(h.calls).toEqual([]);
    expect(result.failed).toEqual({ step: 'b', message: 'spec asks for the impossible', terminal: true });
    expect(h.entity.steps.b).toEqual({ status: 'failed', attempts: 1, message: 'spec asks for the impossible' });
    expect(h.entity.steps.c).toEqual({ status: 'skipped', attempts: 0, message: 'a dependency failed' });
  });

  it('given a failure type the step declares non-retryable, or a refused adoption, observe’s failure ends the step as the activity’s would', async () => {
    const p = plan([
      { name: 'a', execution: 'local', retry: { nonRetryableErrorTypes: ['QuotaExceeded'] } },
      { name: 'b', execution: 'local' },
    ]);
    const h = harness({ a: [ok('never')], b: [ok('never')] });
    const a = await h.runner.runStep(p, p.steps[0]!, { ref } as StepInput, 1, 'u1', {
      step: 'a',
      failure: { message: 'over quota', type: 'QuotaExceeded', nonRetryable: false },
    });
    const b = await h.runner.runStep(p, p.steps[1]!, { ref } as StepInput, 1, 'u1', {
      step: 'b',
      failure: { message: 'not ours', type: 'AdoptionRefused', nonRetryable: true },
    });
    expect(a).toMatchObject({ terminal: true, state: { status: 'failed', attempts: 1, message: 'over quota' } });
    expect(b).toMatchObject({ terminal: true, refused: true });
    expect(h.calls).toEqual([]);
  });
});

describe('StepRunner: leading successes taken in the same turn (workflow-code version 6)', () => {
  const chain = plan([
    { name: 'a', execution: 'local' },
    { name: 'b', dependsOn: ['a'], execution: 'local' },
    { name: 'c', dependsOn: ['b'], execution: 'local' },
  ]);
  const leading: LeadingStepOutcome[] = [
    { step: 'a', result: { attempt: 1, message: 'applied', outputs: { id: 7 } } },
    { step: 'b', result: { attempt: 2, outputs: { port: 80 }, status: { port: 80 }, requeueAfterMs: 5_000 } },
    { step: 'c', result: { attempt: 1, progressing: 'rolling out' } },
  ];

  it('given every step run by observe, all have ended before the call returns (no promise waited on), as version 5 ends them later', async () => {
    const now = harness({}, { holdDependents: true, previousResults: true, leadingAtOnce: true });
    const running = now.runner.runSteps(chain, chain.steps, obs, leading);
    // Nothing has run in between: the steps ended in the call itself.
    expect(Object.values(now.entity.steps).map((s) => s.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    const before = harness({}, { holdDependents: true, previousResults: true });
    const later = before.runner.runSteps(chain, chain.steps, obs, leading);
    // Version 5 ran a in the call too, but each dependent only after a promise settled.
    expect(Object.values(before.entity.steps).map((s) => s.status)).toEqual(['succeeded', 'pending', 'pending']);
    // And both end the same way: the same result, step states and previous results, no activity run.
    expect(await running).toEqual(await later);
    expect(await running).toEqual({
      superseded: false,
      requeueAfterMs: 5_000,
      progressing: [{ step: 'c', message: 'rolling out' }],
      fields: { port: 80 },
    });
    expect(now.entity.steps).toEqual(before.entity.steps);
    expect(now.entity.previous).toEqual(before.entity.previous);
    expect([now.calls, before.calls]).toEqual([[], []]);
  });

  it('given a and b run by observe and c not, only c runs, with both outputs, as in version 5', async () => {
    const mixed = plan([...chain.steps.slice(0, 2), { name: 'c', dependsOn: ['b'] }]);
    const runs = await Promise.all(
      [true, false].map(async (leadingAtOnce) => {
        const h = harness({ c: [ok('published')] }, { leadingAtOnce });
        const result = await h.runner.runSteps(mixed, mixed.steps, obs, leading.slice(0, 2));
        return { result, steps: h.entity.steps, calls: h.calls.map((c) => [c.step, c.input.results]) };
      }),
    );
    expect(runs[0]).toEqual(runs[1]);
    expect(runs[0]!.calls).toEqual([['c', { a: { id: 7 }, b: { port: 80 } }]]);
  });

  it('given b failed in observe, it still runs again as its own activity (only successes are taken at once)', async () => {
    const h = harness({ b: [ok('second time')], c: [ok('published')] }, { leadingAtOnce: true });
    const result = await h.runner.runSteps(chain, chain.steps, obs, [
      leading[0]!,
      { step: 'b', failure: { message: 'connection reset', type: 'StepFailed', nonRetryable: false } },
    ]);
    expect(h.calls.map((c) => c.step)).toEqual(['b', 'c']);
    expect(result.failed).toBeUndefined();
    expect(h.entity.steps.b).toEqual({ status: 'succeeded', attempts: 2, message: 'second time' });
  });
});

describe('StatusWriter: an unchanged status settled in the same turn (workflow-code version 6)', () => {
  it('given the known status wanted again and no write under way, it is settled at once with no write', async () => {
    const { e, writes, w } = recordingStatusWriter();
    const ready = desiredStatus({ phase: 'Ready', generation: 1, succeeded: 2 });
    expect(w.unchangedAtOnce(ready)).toBe(false); // nothing known yet: a write is needed
    await w.writeIfChanged('u1', ready);
    e.phase = 'Reconciling';
    expect(w.unchangedAtOnce(ready)).toBe(true);
    expect(e.phase).toBe('Ready');
    expect(writes).toHaveLength(1);
    expect(w.unchangedAtOnce(desiredStatus({ phase: 'Ready', generation: 2, succeeded: 2 }))).toBe(false);
  });

  it('given a write under way, even an unchanged status waits its turn (the write may still change what is known)', async () => {
    const e = new ObjectEntity({ ref });
    let release: () => void = () => undefined;
    const w = new StatusWriter(e, () => new Promise<void>((resolve) => (release = resolve)));
    const ready = desiredStatus({ phase: 'Ready', generation: 1, succeeded: 2 });
    w.observed(ready, '5');
    const degraded = desiredStatus({ phase: 'Degraded', generation: 1, message: 'down' });
    const writing = w.writeIfChanged('u1', degraded);
    await Promise.resolve();
    expect(w.unchangedAtOnce(ready)).toBe(false);
    release();
    await writing;
    expect(w.unchangedAtOnce(degraded)).toBe(true);
  });

  it('given a write that failed, the next unchanged status is settled at once again', async () => {
    const e = new ObjectEntity({ ref });
    const w = new StatusWriter(e, () => Promise.reject(new Error('rejected')));
    const ready = desiredStatus({ phase: 'Ready', generation: 1, succeeded: 2 });
    w.observed(ready, '5');
    await expect(w.writeIfChanged('u1', desiredStatus({ phase: 'Degraded', generation: 1 }))).rejects.toThrow(
      'rejected',
    );
    expect(w.unchangedAtOnce(ready)).toBe(true);
  });
});

describe('ObjectEntity: the loop woken by what arrives (workflow-code version 6)', () => {
  it('given the loop waiting, wake resolves its promise once; a wake with nobody waiting is lost harmlessly', async () => {
    const e = new ObjectEntity({ ref });
    e.wake(); // nobody waits: nothing happens, and nothing is kept for later
    let woken = 0;
    const waiting = e.woken().then(() => woken++);
    await Promise.resolve();
    expect(woken).toBe(0);
    e.wake();
    e.wake();
    await waiting;
    expect(woken).toBe(1);
  });

  it('given a timer that comes due, the waiting loop is woken with the timer due; one firing early re-arms and does not wake it', async () => {
    const { entity, timer, sleeps, clock } = passTimerOnFakeClock(ref);
    timer.arm('drift', 1_000);
    let woken = false;
    void entity.woken().then(() => (woken = true));
    clock.now = 500; // not due yet: re-arms for the rest
    sleeps[0]!.fire();
    await new Promise((r) => setImmediate(r));
    expect([woken, entity.timerDue]).toEqual([false, false]);
    clock.now = 1_000;
    sleeps.at(-1)!.fire();
    await new Promise((r) => setImmediate(r));
    expect([woken, entity.timerDue]).toEqual([true, true]);
  });
});

describe('PassTimer: one durable timer for the next pass', () => {
  it('given an earlier timer running, arming a later time starts no second timer and the first re-arms for the rest', async () => {
    const { entity, timer, sleeps, clock } = passTimerOnFakeClock(ref);
    timer.arm('requeue', 1000);
    timer.arm('drift', 5000);
    expect(sleeps.map((s) => s.ms)).toEqual([1000]);
    clock.now = 1000;
    sleeps[0]!.fire();
    await new Promise((r) => setImmediate(r));
    expect(entity.timerDue).toBe(false);
    expect(sleeps.map((s) => s.ms)).toEqual([1000, 4000]);
    clock.now = 5000;
    sleeps[1]!.fire();
    await new Promise((r) => setImmediate(r));
    expect(entity.timerDue).toBe(true);
    expect(entity.nextTimer).toEqual({ kind: 'drift', at: 5000 });
  });

  it('given a drift check armed with a window, a running timer firing inside it is kept: no second timer, no remainder, due when it fires', async () => {
    const { entity, timer, sleeps, clock } = passTimerOnFakeClock(ref);
    const window = { min: 27_000, max: 33_000 };
    timer.arm('drift', 31_000, window);
    // A pass a second later (a child or a referenced object changed) draws an earlier time, 28 s on.
    clock.now = 1000;
    timer.arm('drift', 28_000, window);
    expect(sleeps.map((s) => s.ms)).toEqual([31_000]);
    expect(entity.nextTimer).toEqual({ kind: 'drift', at: 31_000 });
    // A draw later than the running timer keeps it too: no remainder timer when it fires.
    clock.now = 2000;
    timer.arm('drift', 32_500, window);
    clock.now = 31_000;
    sleeps[0]!.fire();
    await new Promise((r) => setImmediate(r));
    expect(entity.timerDue).toBe(true);
    expect(sleeps).toHaveLength(1);
  });

  it('given a drift check whose window the running timer misses (a pass mid-interval), the running one re-arms for the remainder as before', async () => {
    const { entity, timer, sleeps, clock } = passTimerOnFakeClock(ref);
    timer.arm('drift', 30_000, { min: 27_000, max: 33_000 });
    clock.now = 15_000;
    timer.arm('drift', 30_000, { min: 27_000, max: 33_000 });
    expect(sleeps.map((s) => s.ms)).toEqual([30_000]);
    clock.now = 30_000;
    sleeps[0]!.fire();
    await new Promise((r) => setImmediate(r));
    expect(entity.timerDue).toBe(false);
    expect(sleeps.map((s) => s.ms)).toEqual([30_000, 15_000]);
    // A requeue (no window) earlier than the running timer starts one of its own.
    timer.arm('requeue', 500);
    expect(sleeps.map((s) => s.ms)).toEqual([30_000, 15_000, 500]);
  });

  it('given a retry timer wanted meanwhile, a firing requeue timer does not make a pass due', async () => {
    const entity = new ObjectEntity({ ref });
    const sleeps: (() => void)[] = [];
    const timer = new PassTimer(
      entity,
      () => new Promise<void>((fire) => sleeps.push(fire)),
      () => 0,
    );
    timer.arm('drift', 10);
    entity.nextTimer = { kind: 'retry', at: 0 };
    sleeps[0]!();
    await new Promise((r) => setImmediate(r));
    expect(entity.timerDue).toBe(false);
  });
});

describe('StepRunner: the spec by digest (workflow-code version 5)', () => {
  const twoSteps = plan([
    { name: 'local', execution: 'local' },
    { name: 'regular', dependsOn: ['local'] },
  ]);
  const observed = { ...obs, specDigest: 'sha256:abc' } as typeof obs;

  it('given version 5, a regular step’s input (recorded in history) names the spec by digest, a local step’s carries it', async () => {
    const h = harness({ local: [ok('l')], regular: [ok('r')] }, { specByDigest: true });
    await h.runner.runSteps(twoSteps, twoSteps.steps, observed);
    expect(h.calls.map((c) => [c.step, c.input.spec, c.input.specDigest])).toEqual([
      ['local', { size: 1 }, undefined],
      ['regular', undefined, 'sha256:abc'],
    ]);
  });

  it('given an earlier version, every step’s input carries the spec, as recorded', async () => {
    const h = harness({ local: [ok('l')], regular: [ok('r')] });
    await h.runner.runSteps(twoSteps, twoSteps.steps, observed);
    expect(h.calls.map((c) => [c.input.spec, c.input.specDigest])).toEqual([
      [{ size: 1 }, undefined],
      [{ size: 1 }, undefined],
    ]);
  });

  it('given a step that finds the spec changed since observe, the pass is superseded at once and requested again', async () => {
    const h = harness(
      { local: [ok('l')], regular: [() => failure('SpecChanged', 'the spec changed', {}, true)] },
      { specByDigest: true },
    );
    const result = await h.runner.runSteps(twoSteps, twoSteps.steps, observed);
    expect(result.superseded).toBe(true);
    expect(result.failed).toBeUndefined();
    expect(h.entity.steps.regular).toMatchObject({ status: 'failed', message: 'superseded after: the spec changed' });
    expect(h.entity.coalescer.peek()).toMatchObject({ uid: 'u1', generation: 1, reason: 'requeue' });
    expect(h.waits).toEqual([]);
    expect(h.writes).toEqual([]);
  });

  it('given a spec that changes during every pass, the pass after a superseded one carries the spec and completes, and the next names it by digest again', async () => {
    // The step finds the spec changed whenever it is given only the digest (a spec changing once a
    // second while a busy worker's passes take longer): without the guard no pass ever completes.
    const h = harness(
      {
        local: [ok('l')],
        regular: [(n) => (n % 2 === 1 ? failure('SpecChanged', 'the spec changed', {}, true) : ok('r')())],
      },
      { specByDigest: true },
    );
    const first = await h.runner.runSteps(twoSteps, twoSteps.steps, observed);
    expect(first.superseded).toBe(true);
    h.entity.coalescer.take();
    const second = await h.runner.runSteps(twoSteps, twoSteps.steps, { ...observed, generation: 2 });
    expect(second).toMatchObject({ superseded: false });
    expect(second.failed).toBeUndefined();
    await h.runner.runSteps(twoSteps, twoSteps.steps, { ...observed, generation: 3 });
    expect(h.calls.filter((c) => c.step === 'regular').map((c) => [c.input.spec, c.input.specDigest])).toEqual([
      [undefined, 'sha256:abc'],
      [{ size: 1 }, undefined],
      [undefined, 'sha256:abc'],
    ]);
  });
});
