/**
 * sameStatus decides whether the status write is skipped (a controller that rewrites an unchanged
 * status spins): every owned field counts, condition order and transition times do not. Written for
 * mutants of core/status.ts that survived (issue 17).
 */
import { phaseChangeEvent, phaseEventKey, sameStatus, succeededPassStatus } from '../../core/status';
import type { ObjectStatus } from '../../core/definitions';

const ready = { type: 'Ready', status: 'True', reason: 'Reconciled', message: 'ok', observedGeneration: 2 } as const;
const degraded = {
  type: 'Degraded',
  status: 'False',
  reason: 'Reconciled',
  message: 'none',
  observedGeneration: 2,
} as const;
const status: ObjectStatus = { observedGeneration: 2, phase: 'Ready', conditions: [ready, degraded] };

describe('status comparison', () => {
  it('given the same status with conditions in another order or with other transition times, it is the same', () => {
    expect(sameStatus(status, { ...status, conditions: [degraded, ready] })).toBe(true);
    expect(
      sameStatus(status, {
        ...status,
        conditions: [{ ...ready, lastTransitionTime: '2026-12-03T10:00:00Z' } as typeof ready, degraded],
      }),
    ).toBe(true);
    expect(
      sameStatus(
        { observedGeneration: 1, phase: 'Pending' },
        { observedGeneration: 1, phase: 'Pending', conditions: [] },
      ),
    ).toBe(true);
  });

  it('given any owned field changed, it differs', () => {
    expect(sameStatus(status, { ...status, observedGeneration: 3 })).toBe(false);
    expect(sameStatus(status, { ...status, phase: 'Degraded' })).toBe(false);
    expect(sameStatus(status, { ...status, conditions: [ready] })).toBe(false);
    expect(sameStatus({ ...status, conditions: [ready] }, status)).toBe(false);
    expect(sameStatus(status, { ...status, conditions: undefined })).toBe(false);
    for (const field of ['type', 'status', 'reason', 'message'] as const) {
      expect(sameStatus(status, { ...status, conditions: [{ ...ready, [field]: 'Other' }, degraded] })).toBe(false);
    }
    expect(sameStatus(status, { ...status, conditions: [{ ...ready, observedGeneration: 1 }, degraded] })).toBe(false);
  });

  it('given reconciler fields, each field the wanted status reports must match; fields it does not report do not count', () => {
    const seen: ObjectStatus = { ...status, fields: { readyReplicas: 3, image: 'a' } };
    expect(sameStatus(seen, { ...status, fields: { readyReplicas: 3 } })).toBe(true);
    expect(sameStatus(seen, status)).toBe(true);
    expect(sameStatus(seen, { ...status, fields: { readyReplicas: 2 } })).toBe(false);
    expect(sameStatus(seen, { ...status, fields: { readyReplicas: '3' } })).toBe(false);
    expect(sameStatus(status, { ...status, fields: { readyReplicas: 0 } })).toBe(false);
    expect(sameStatus(seen, { ...status, fields: { ready: false } })).toBe(false);
  });
});

describe('succeededPassStatus: the status a pass whose steps all succeeded ends with', () => {
  it('given steps with messages and fields, it is Ready with a condition per step, the fields merged, and a Reconciled Event', () => {
    const { status: s, event } = succeededPassStatus(
      3,
      [{ name: 'config', message: 'ConfigMap web applied' }, { name: 'service' }],
      { port: 80 },
    );
    expect(s.phase).toBe('Ready');
    expect(s.observedGeneration).toBe(3);
    expect(s.fields).toEqual({ port: 80 });
    expect(s.conditions.map((c) => [c.type, c.status, c.message])).toEqual([
      ['Ready', 'True', 'All 2 steps succeeded'],
      ['Progressing', 'False', 'Reconcile finished'],
      ['Degraded', 'False', 'No step is failing'],
      ['ConfigReady', 'True', 'ConfigMap web applied'],
      ['ServiceReady', 'True', 'succeeded'],
    ]);
    expect(event).toEqual({ type: 'Normal', reason: 'Reconciled', note: 'generation 3 reconciled' });
    expect(phaseEventKey(3, s.phase, 7)).toBe('3/Ready/7');
    expect(phaseChangeEvent('Reconciling', s, event, 7)).toEqual({
      ...event,
      action: 'Reconcile',
      dedupKey: '3/Ready/7',
    });
    expect(phaseChangeEvent('Ready', s, event, 7)).toBeUndefined();
    expect(phaseChangeEvent(undefined, s, undefined, 7)).toBeUndefined();
  });

  it('given a step reporting progress, it is Reconciling with that step not ready and a Progressing Event; without step conditions, none per step', () => {
    const { status: s, event } = succeededPassStatus(
      1,
      [{ name: 'deployment', message: 'applied', progressing: '2/3 replicas ready' }],
      {},
    );
    expect(s.phase).toBe('Reconciling');
    expect(s.conditions.find((c) => c.type === 'DeploymentReady')).toMatchObject({
      status: 'False',
      reason: 'InProgress',
    });
    expect(s.fields).toBeUndefined();
    expect(event).toEqual({ type: 'Normal', reason: 'Progressing', note: 'deployment: 2/3 replicas ready' });
    const old = succeededPassStatus(1, [{ name: 'a' }, { name: 'b' }], undefined, false).status;
    expect(old.conditions.map((c) => c.type)).toEqual(['Ready', 'Progressing', 'Degraded']);
    expect(old.conditions[0]!.message).toBe('All 2 steps succeeded');
  });
});
