import type { ReconcileRequest } from '../../core/definitions';
import { backoffMs, Coalescer, desiredStatus, detailsMarkdown, sameStatus } from '../../workflows/object-state';
import { counterPlan } from '../fixtures/counter/plan';

const ref = {
  group: 'test.homeostat.dev',
  version: 'v1',
  kind: 'Counter',
  namespace: 'pony-prod',
  name: 'pony-spawner',
};
const req = (generation: number, extra: Partial<ReconcileRequest> = {}): ReconcileRequest => ({
  ref,
  uid: 'u1',
  generation,
  resourceVersion: String(100 + generation),
  reason: 'updated',
  ...extra,
});

describe('object workflow state helpers', () => {
  it('given requests while a pass runs, the coalescer keeps only the newest and the wanted generation only rises', () => {
    const c = new Coalescer();
    c.offer(req(2));
    c.offer(req(5));
    const merged = c.offer(req(3, { resourceVersion: '999', reason: 'resync' }));
    expect(merged).toMatchObject({ generation: 5, resourceVersion: '999', reason: 'resync' });
    expect(c.wantedGeneration).toBe(5);
    expect(c.take()).toMatchObject({ generation: 5 });
    expect(c.take()).toBeUndefined();
    expect(c.wantedGeneration).toBe(5);
  });

  it('given a deletion request followed by others, the pending request stays a deletion', () => {
    const c = new Coalescer(req(1, { reason: 'deleted' }));
    expect(c.offer(req(1, { reason: 'resync' })).reason).toBe('deleted');
  });

  it('given a request for a new UID, it replaces the old one and supersedes a pass of the old object', () => {
    const c = new Coalescer(req(7));
    expect(c.offer(req(1, { uid: 'u2' }))).toMatchObject({ uid: 'u2', generation: 1 });
    expect(c.supersedes('u1', 7)).toBe(true);
    const d = new Coalescer(req(3));
    expect(d.supersedes('u1', 3)).toBe(false);
    expect(d.supersedes('u1', 2)).toBe(true);
  });

  it('given equal inputs, desiredStatus is equal (so unchanged status is not written); a new generation differs', () => {
    const a = desiredStatus({ phase: 'Ready', generation: 3, succeeded: 3 });
    const b = desiredStatus({ phase: 'Ready', generation: 3, succeeded: 3 });
    expect(sameStatus(a, b)).toBe(true);
    expect(sameStatus(a, desiredStatus({ phase: 'Ready', generation: 4, succeeded: 3 }))).toBe(false);
    expect(sameStatus(a, { ...a, conditions: [...a.conditions].reverse() })).toBe(true);
  });

  it('given an invalid spec, the Ready condition carries the validation message', () => {
    const s = desiredStatus({ phase: 'Invalid', generation: 2, message: 'spec.message: must not shout' });
    expect(s.conditions.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'InvalidSpec',
      message: 'spec.message: must not shout',
      observedGeneration: 2,
    });
  });

  it('given a failing step, Degraded says whether it is retried', () => {
    const retrying = desiredStatus({ phase: 'Degraded', generation: 1, failedStep: 'publish', message: 'boom' });
    expect(retrying.conditions.find((c) => c.type === 'Progressing')).toMatchObject({
      status: 'True',
      reason: 'Retrying',
    });
    const terminal = desiredStatus({
      phase: 'Degraded',
      generation: 1,
      failedStep: 'publish',
      message: 'no',
      terminal: true,
    });
    expect(terminal.conditions.find((c) => c.type === 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'TerminalStepError',
      message: 'publish: no',
    });
  });

  it('given retry settings, backoff grows exponentially up to the maximum', () => {
    const retry = { initialInterval: '400 milliseconds', backoffCoefficient: 2, maximumInterval: '2 seconds' };
    expect([1, 2, 3, 4, 5].map((r) => backoffMs(retry, r))).toEqual([400, 800, 1600, 2000, 2000]);
    expect(backoffMs(undefined, 1)).toBe(1000);
  });

  it('given step progress, the details are a readable markdown table', () => {
    const md = detailsMarkdown({
      ref,
      phase: 'Reconciling',
      pass: 4,
      generation: 2,
      title: 'Steps',
      plan: counterPlan.steps,
      steps: {
        prepare: { status: 'succeeded', attempts: 1, message: 'ConfigMap applied' },
        publish: { status: 'retrying', attempts: 2, message: 'a|b' },
      },
      nextTimer: { kind: 'retry', at: '2026-12-02T10:00:00.000Z' },
    });
    expect(md).toContain('**Counter pony-prod/pony-spawner** — phase **Reconciling**, pass 4, generation 2');
    expect(md).toContain('| prepare | — | ✅ succeeded | 1 | ConfigMap applied |');
    expect(md).toContain('| publish | prepare | 🔁 retrying | 2 | a\\|b |');
    expect(md).toContain('| audit | — | ⏳ pending | 0 |  |');
    expect(md).toContain('Next retry at 2026-12-02T10:00:00.000Z');
  });
});
