/**
 * The object workflow's run state, timer and status writes, to the letter: what a fresh run and a
 * resumed run answer to the `state` query and show as current details, what a pass outcome carries
 * (UID, steps, the error only when the pass failed), which triggers a blocked generation lets through,
 * the namespace search attribute of a cluster-scoped object, which durable timers {@link PassTimer}
 * starts when timers are armed earlier, later or again, and the summary a status write shows in the
 * Temporal UI. Written for mutants of workflows/object-entity.ts, pass-timer.ts and status-writer.ts
 * that survived (issue 17).
 */
import type { WriteStatusInput } from '../../core/activity-contract';
import type { ObjectRef, PassOutcome, ReconcileRequest } from '../../core/definitions';
import { ObjectEntity } from '../../workflows/object-entity';
import { desiredStatus } from '../../workflows/object-state';
import { StatusWriter } from '../../workflows/status-writer';
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
const lastOutcome: PassOutcome = {
  pass: 7,
  result: 'degraded',
  phase: 'Degraded',
  generation: 3,
  uid: 'u1',
  steps: { a: { status: 'failed', attempts: 3, message: 'no' } },
  error: 'a: no',
  statusWritten: true,
};
/** Search attributes as the workflow reads them, from attribute name to value. */
const current = (values: Record<string, unknown>) => ({ get: (key: { name: string }) => values[key.name] }) as never;

describe('surviving mutants of object-entity.ts', () => {
  it('given a fresh start with nothing requested, nothing is pending, wanted or finished, and the details show an empty Steps table', () => {
    const e = new ObjectEntity({ ref });
    expect(e.state()).toEqual({
      ref,
      phase: 'Pending',
      conditions: [],
      reconciling: false,
      steps: {},
      passes: 0,
      run: 1,
      pending: false,
    });
    expect(e.finished).toBe(false);
    expect(e.timerDue).toBe(false);
    expect(e.details()).toBe(
      [
        '**Gadget ns/g** — phase **Pending**, pass 0',
        '',
        'Steps:',
        '',
        '| step | depends on | status | attempts | message |',
        '| --- | --- | --- | --- | --- |',
      ].join('\n'),
    );
    expect(e.outcome('ready', 1)).toEqual({
      pass: 1,
      result: 'ready',
      phase: 'Pending',
      generation: 1,
      steps: {},
      statusWritten: false,
    });
  });

  it('given carried state and no request, the query answer keeps the last outcome, its steps, and its generation as the wanted one', () => {
    const e = new ObjectEntity({ ref, carried: { uid: 'u1', passes: 7, runs: 2, lastOutcome } });
    expect(e.state()).toEqual({
      ref,
      uid: 'u1',
      phase: 'Degraded',
      conditions: [],
      observedGeneration: 3,
      wantedGeneration: 3,
      reconciling: false,
      steps: { a: { status: 'failed', attempts: 3, message: 'no' } },
      lastError: 'a: no',
      lastOutcome,
      passes: 7,
      run: 3,
      pending: false,
    });
  });

  it('given a pass running for a generation with a timer armed and an error, the details and the query answer show them', () => {
    const e = new ObjectEntity({ ref });
    e.passes = 2;
    e.reconciling = true;
    e.currentGeneration = 4;
    e.lastError = 'a: boom';
    e.nextTimer = { kind: 'drift', at: Date.UTC(2026, 11, 3, 10, 0, 0) };
    const details = e.details();
    expect(details).toContain('**Gadget ns/g** — phase **Pending**, pass 3, generation 4\n');
    expect(details).toContain('\nLast error: a: boom');
    expect(details).toContain('\nNext drift at 2026-12-03T10:00:00.000Z');
    expect(e.state().nextTimer).toEqual({ kind: 'drift', at: '2026-12-03T10:00:00.000Z' });
  });

  it('given a failed step, the outcome carries the UID, the steps and the error; a ready outcome carries no error', () => {
    const e = new ObjectEntity({ ref, pending: request() });
    e.steps = { a: { status: 'failed', attempts: 1, message: 'no' } };
    e.lastError = 'a: no';
    expect(e.outcome('degraded', 2)).toEqual({
      pass: 1,
      result: 'degraded',
      phase: 'Pending',
      generation: 2,
      uid: 'u1',
      steps: { a: { status: 'failed', attempts: 1, message: 'no' } },
      error: 'a: no',
      statusWritten: false,
    });
    expect(e.outcome('ready', 2)).not.toHaveProperty('error');
  });

  it('given a blocked generation, an explicit update with that generation pending still runs a pass; given none blocked, a timer runs one', () => {
    const blocked = new ObjectEntity({ ref, carried: { uid: 'u1', passes: 1, runs: 1, invalidGeneration: 3 } });
    expect(blocked.blocks(request({ generation: 3 }), false, false)).toBe(true);
    expect(blocked.blocks(request({ generation: 3 }), true, false)).toBe(false);
    const free = new ObjectEntity({ ref });
    expect(free.blocks(undefined, false, true)).toBe(false);
  });

  it('given finished passes, both the passes of all runs and those of this run count up', () => {
    const e = new ObjectEntity({ ref, carried: { passes: 7, runs: 1 } });
    e.finishPass(e.outcome('ready', 1));
    e.finishPass(e.outcome('ready', 1));
    expect(e.passes).toBe(9);
    expect(e.passesThisRun).toBe(2);
  });

  it('given a cluster-scoped object, its namespace attribute is "_", and a generation not yet observed is left as it is', () => {
    const e = new ObjectEntity({ ref: { ...ref, namespace: '' } });
    expect(e.changedSearchAttributes(current({ HomeostatGeneration: 4 }))).toEqual([
      { key: expect.objectContaining({ name: 'HomeostatKind' }), value: 'Gadget' },
      { key: expect.objectContaining({ name: 'HomeostatNamespace' }), value: '_' },
      { key: expect.objectContaining({ name: 'HomeostatName' }), value: 'g' },
      { key: expect.objectContaining({ name: 'HomeostatPhase' }), value: 'Pending' },
    ]);
  });
});

/** A PassTimer on a fake clock whose sleeps fire when the test says. */
function timerHarness() {
  const { entity, timer, sleeps, clock } = passTimerOnFakeClock(ref);
  /** Fires the sleep of `ms` at time `at` and lets its continuation run. */
  const fire = async (ms: number, at: number) => {
    clock.now = at;
    sleeps.find((s) => s.ms === ms)!.fire();
    await new Promise((r) => setImmediate(r));
  };
  return { entity, timer, sleeps: () => sleeps.map((s) => s.ms), fire };
}

describe('surviving mutants of pass-timer.ts', () => {
  it('given a later timer running, arming an earlier time starts a timer for it, and arming the same time again starts none', () => {
    const h = timerHarness();
    h.timer.arm('drift', 5000);
    h.timer.arm('requeue', 1000);
    expect(h.sleeps()).toEqual([5000, 1000]);
    h.timer.arm('requeue', 1000);
    expect(h.sleeps()).toEqual([5000, 1000]);
  });

  it('given an earlier timer firing while another running timer fires exactly at the wanted time, it starts no third timer', async () => {
    const h = timerHarness();
    h.timer.arm('drift', 5000);
    h.timer.arm('requeue', 1000);
    h.timer.arm('drift', 5000);
    await h.fire(1000, 1000);
    expect(h.entity.timerDue).toBe(false);
    expect(h.sleeps()).toEqual([5000, 1000]);
    await h.fire(5000, 5000);
    expect(h.entity.timerDue).toBe(true);
  });

  it('given an earlier timer firing while the other running timer fires too late, it starts one for the wanted time', async () => {
    const h = timerHarness();
    h.timer.arm('drift', 5000);
    h.timer.arm('requeue', 1000);
    h.timer.arm('requeue', 3000);
    await h.fire(1000, 1000);
    expect(h.sleeps()).toEqual([5000, 1000, 2000]);
    await h.fire(2000, 3000);
    expect(h.entity.timerDue).toBe(true);
    expect(h.entity.nextTimer).toEqual({ kind: 'requeue', at: 3000 });
  });
});

describe('surviving mutants of status-writer.ts', () => {
  it('given a status write, the activity summary the Temporal UI shows names the phase, the generation and the object', async () => {
    const e = new ObjectEntity({ ref });
    const summaries: string[] = [];
    const w = new StatusWriter(e, async (_input: WriteStatusInput, summary) => void summaries.push(summary));
    await w.writeIfChanged('u1', desiredStatus({ phase: 'Ready', generation: 2, succeeded: 1 }));
    expect(summaries).toEqual(['status Ready gen 2 · Gadget ns/g']);
  });
});
