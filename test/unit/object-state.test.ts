import type { ReconcileRequest } from '../../core/definitions';
import {
  backoffMs,
  Coalescer,
  desiredStatus,
  detailsMarkdown,
  sameRef,
  sameStatus,
  stepConditionType,
} from '../../workflows/object-state';
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

// The status each phase writes is API surface (users and `kubectl wait --for=condition=Ready` read
// it), so these pin every condition: type, status, reason, message and generation.
describe('object workflow status decisions', () => {
  const cond = (type: string, status: string, reason: string, message: string, observedGeneration = 7) => ({
    type,
    status,
    reason,
    message,
    observedGeneration,
  });

  it('given a Ready pass, it writes Ready, Progressing and Degraded, and one <Step>Ready condition per step', () => {
    expect(
      desiredStatus({
        phase: 'Ready',
        generation: 7,
        succeeded: 2,
        steps: [{ name: 'connection-secret', message: 'Secret pony-db applied' }, { name: 'role' }],
      }),
    ).toEqual({
      observedGeneration: 7,
      phase: 'Ready',
      conditions: [
        cond('Ready', 'True', 'Reconciled', 'All 2 steps succeeded'),
        cond('Progressing', 'False', 'Reconciled', 'Reconcile finished'),
        cond('Degraded', 'False', 'Reconciled', 'No step is failing'),
        cond('ConnectionSecretReady', 'True', 'StepSucceeded', 'Secret pony-db applied'),
        cond('RoleReady', 'True', 'StepSucceeded', 'succeeded'),
      ],
    });
    expect(desiredStatus({ phase: 'Ready', generation: 7 }).conditions).toEqual([
      cond('Ready', 'True', 'Reconciled', 'All 0 steps succeeded'),
      cond('Progressing', 'False', 'Reconciled', 'Reconcile finished'),
      cond('Degraded', 'False', 'Reconciled', 'No step is failing'),
    ]);
  });

  it('given an invalid spec, nothing progresses until the spec is fixed and nothing is degraded', () => {
    expect(desiredStatus({ phase: 'Invalid', generation: 7, message: 'spec.size: too big' }).conditions).toEqual([
      cond('Ready', 'False', 'InvalidSpec', 'spec.size: too big'),
      cond('Progressing', 'False', 'InvalidSpec', 'Waiting for the spec to be fixed'),
      cond('Degraded', 'False', 'InvalidSpec', 'No step ran'),
    ]);
    expect(desiredStatus({ phase: 'Invalid', generation: 7 }).conditions[0]!.message).toBe('invalid spec');
  });

  it('given a failing step, Degraded names it; retried failures progress, terminal ones wait for the spec', () => {
    expect(
      desiredStatus({ phase: 'Degraded', generation: 7, failedStep: 'database', message: 'refused' }).conditions,
    ).toEqual([
      cond('Ready', 'False', 'StepFailed', 'database: refused'),
      cond('Progressing', 'True', 'Retrying', 'Retrying database with backoff'),
      cond('Degraded', 'True', 'StepFailed', 'database: refused'),
    ]);
    expect(
      desiredStatus({ phase: 'Degraded', generation: 7, failedStep: 'database', message: 'no', terminal: true })
        .conditions,
    ).toEqual([
      cond('Ready', 'False', 'TerminalStepError', 'database: no'),
      cond('Progressing', 'False', 'TerminalStepError', 'Not retried until the spec changes'),
      cond('Degraded', 'True', 'TerminalStepError', 'database: no'),
    ]);
    expect(
      desiredStatus({
        phase: 'Degraded',
        generation: 7,
        failedStep: 'service',
        message: 'Service a/web: not ours',
        terminal: true,
        adoptionRefused: true,
      }).conditions,
    ).toEqual([
      cond('Ready', 'False', 'AdoptionRefused', 'service: Service a/web: not ours'),
      cond('Progressing', 'False', 'AdoptionRefused', 'Nothing changed; checked again at the drift interval'),
      cond('Degraded', 'True', 'AdoptionRefused', 'service: Service a/web: not ours'),
    ]);
    expect(desiredStatus({ phase: 'Degraded', generation: 7 }).conditions).toEqual([
      cond('Ready', 'False', 'StepFailed', 'step: failed'),
      cond('Progressing', 'True', 'Retrying', 'Retrying step with backoff'),
      cond('Degraded', 'True', 'StepFailed', 'step: failed'),
    ]);
  });

  it('given a deletion, cleanup progresses and the message says what it waits for', () => {
    expect(desiredStatus({ phase: 'Deleting', generation: 7 })).toEqual({
      observedGeneration: 7,
      phase: 'Deleting',
      conditions: [
        cond('Ready', 'False', 'Deleting', 'The object is being deleted'),
        cond('Progressing', 'True', 'Cleanup', 'Running cleanup steps'),
        cond('Degraded', 'False', 'Deleting', 'Cleanup in progress'),
      ],
    });
    expect(desiredStatus({ phase: 'Deleting', generation: 7, message: 'dropping database' }).conditions[2]).toEqual(
      cond('Degraded', 'False', 'Deleting', 'dropping database'),
    );
  });

  it('given Reconciling, Ready is False and Progressing True with each step in progress; the other steps are Ready', () => {
    expect(desiredStatus({ phase: 'Reconciling', generation: 7 })).toEqual({
      observedGeneration: 7,
      phase: 'Reconciling',
      conditions: [
        cond('Ready', 'False', 'Progressing', 'Reconcile in progress'),
        cond('Progressing', 'True', 'Progressing', 'Reconcile in progress'),
        cond('Degraded', 'False', 'Progressing', 'No step is failing'),
      ],
    });
    expect(
      desiredStatus({
        phase: 'Reconciling',
        generation: 3,
        steps: [
          { name: 'config', message: 'ConfigMap x' },
          { name: 'secret' },
          { name: 'deployment' },
          { name: 'service' },
        ],
        progressing: [
          { step: 'deployment', message: '2/3 replicas ready' },
          { step: 'service', message: 'no endpoints yet' },
        ],
        fields: { readyReplicas: 2 },
      }),
    ).toEqual({
      observedGeneration: 3,
      phase: 'Reconciling',
      conditions: [
        cond('Ready', 'False', 'Progressing', 'deployment: 2/3 replicas ready; service: no endpoints yet', 3),
        cond('Progressing', 'True', 'Progressing', 'deployment: 2/3 replicas ready; service: no endpoints yet', 3),
        cond('Degraded', 'False', 'Progressing', 'No step is failing', 3),
        cond('ConfigReady', 'True', 'StepSucceeded', 'ConfigMap x', 3),
        // A succeeded step without a message of its own says so.
        cond('SecretReady', 'True', 'StepSucceeded', 'succeeded', 3),
        cond('DeploymentReady', 'False', 'InProgress', '2/3 replicas ready', 3),
        cond('ServiceReady', 'False', 'InProgress', 'no endpoints yet', 3),
      ],
      fields: { readyReplicas: 2 },
    });
  });

  it('given no fields or empty fields, the status has no fields key (histories before fields write the same status)', () => {
    expect('fields' in desiredStatus({ phase: 'Ready', generation: 1 })).toBe(false);
    expect('fields' in desiredStatus({ phase: 'Ready', generation: 1, fields: {} })).toBe(false);
    expect(desiredStatus({ phase: 'Degraded', generation: 1, fields: { readyReplicas: 0 } }).fields).toEqual({
      readyReplicas: 0,
    });
  });

  it('given Pending, the phase is the reason and the message defaults to it', () => {
    // Pending is the one phase of the default branch: every condition pinned, not only Ready.
    expect(desiredStatus({ phase: 'Pending', generation: 7 }).conditions).toEqual([
      cond('Ready', 'False', 'Pending', 'Pending'),
      cond('Progressing', 'True', 'Pending', 'Reconcile in progress'),
      cond('Degraded', 'False', 'Pending', 'No step is failing'),
    ]);
    expect(desiredStatus({ phase: 'Pending', generation: 7, message: 'waiting' }).conditions[0]).toEqual(
      cond('Ready', 'False', 'Pending', 'waiting'),
    );
  });

  it('given step names, the condition type is their PascalCase words and Ready', () => {
    expect(stepConditionType('connection-secret')).toBe('ConnectionSecretReady');
    expect(stepConditionType('role')).toBe('RoleReady');
    expect(stepConditionType('a--b_c.d9')).toBe('ABCD9Ready');
  });

  it('given two refs, they name the same object only when group, kind, namespace, name and version all agree', () => {
    const base = { group: 'g', version: 'v1', kind: 'K', namespace: 'ns', name: 'n' };
    expect(sameRef(base, { ...base })).toBe(true);
    for (const field of ['group', 'version', 'kind', 'namespace', 'name'] as const) {
      expect(sameRef(base, { ...base, [field]: 'other' })).toBe(false);
      expect(sameRef({ ...base, [field]: 'other' }, base)).toBe(false);
    }
    // A cluster-scoped object's namespace may be absent or empty.
    expect(sameRef({ ...base, namespace: '' }, { ...base, namespace: undefined })).toBe(true);
    expect(sameRef({ ...base, namespace: undefined }, { ...base, namespace: '' })).toBe(true);
    expect(sameRef({ ...base, namespace: '' }, { ...base, namespace: 'x' })).toBe(false);
  });

  it('given no pending request, nothing supersedes a pass; a pending deletion of the same object does', () => {
    const empty = new Coalescer();
    expect(empty.peek()).toBeUndefined();
    expect(empty.supersedes('u1', 1)).toBe(false);
    const c = new Coalescer(req(3, { reason: 'deleted' }));
    expect(c.peek()).toMatchObject({ generation: 3, reason: 'deleted' });
    expect(c.supersedes('u1', 3)).toBe(true);
    expect(new Coalescer(req(3, { reason: 'resync' })).supersedes('u1', 3)).toBe(false);
  });

  it('given retry settings without a coefficient, backoff doubles', () => {
    expect([1, 2, 3].map((r) => backoffMs({ initialInterval: '1 second' }, r))).toEqual([1000, 2000, 4000]);
    expect(backoffMs({ maximumInterval: '3 seconds' }, 4)).toBe(3000);
    expect(backoffMs(undefined, 9)).toBe(256_000);
    expect(backoffMs(undefined, 10)).toBe(300_000);
  });

  it('given a failed pass, the details show every status, the last error, and no generation or timer when unknown', () => {
    const md = detailsMarkdown({
      ref: { ...ref, namespace: undefined, kind: 'Widget', name: 'w' },
      phase: 'Degraded',
      pass: 1,
      title: 'Cleanup',
      plan: [{ name: 'a' }, { name: 'b', dependsOn: ['a', 'c'] }, { name: 'c' }, { name: 'd' }],
      steps: {
        a: { status: 'running', attempts: 0 },
        b: { status: 'skipped', attempts: 0 },
        c: { status: 'failed', attempts: 3, message: `line one\n  line|two ${'x'.repeat(300)}` },
      },
      lastError: 'c:   boom\n again',
    });
    expect(md.split('\n')).toEqual([
      '**Widget w** — phase **Degraded**, pass 1',
      '',
      'Cleanup:',
      '',
      '| step | depends on | status | attempts | message |',
      '| --- | --- | --- | --- | --- |',
      '| a | — | ▶️ running | 0 |  |',
      '| b | a, c | ⏭️ skipped | 0 |  |',
      `| c | — | ❌ failed | 3 | ${`line one line\\|two ${'x'.repeat(300)}`.slice(0, 200)} |`,
      '| d | — | ⏳ pending | 0 |  |',
      '',
      'Last error: c: boom again',
    ]);
  });
});
