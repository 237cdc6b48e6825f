/**
 * The condition types the workflow writes and the ones the status write treats as homeostat's (kept
 * apart from other controllers' conditions) come from one rule in core/status.ts; the label the
 * worker puts on children and the selector the bridge watches them by from core/labels.ts.
 */
import { ownedConditionTypes } from '../../activities/owned-status';
import { childLabels, managedByValue, ownedChildSelector } from '../../core/labels';
import { retiredSteps, stepConditionType } from '../../core/status';
import { builtinOperator } from '../../builtin';

describe('ownership rules shared by the worker, the bridge and the workflow', () => {
  it('given the worker’s child labels, the bridge’s owned-child selector selects exactly them', () => {
    expect(ownedChildSelector).toBe(`${childLabels.managedBy}=${managedByValue}`);
    expect(ownedChildSelector).toBe('app.kubernetes.io/managed-by=homeostat');
  });

  it('given the built-in plans, every condition type the workflow writes is one the status write owns, and a foreign one is not', () => {
    for (const { plan } of builtinOperator.reconcilers) {
      const owned = ownedConditionTypes(plan, { conditions: [] });
      for (const step of [...plan.steps, ...(plan.cleanup ?? [])])
        expect(owned.has(stepConditionType(step.name))).toBe(true);
      expect([...owned]).toEqual(expect.arrayContaining(['Ready', 'Progressing', 'Degraded']));
      expect(owned.has('example.com/Audited')).toBe(false);
    }
  });

  it('given steps an earlier plan had, their conditions are owned (so a write removes them), and a step still planned is not retired', () => {
    const plan = { steps: [{ name: 'prepare' }, { name: 'audit' }], cleanup: [{ name: 'drop' }] };
    const retired = retiredSteps(plan, ['prepare', 'legacy', 'drop', 'old-step']);
    expect(retired).toEqual(['legacy', 'old-step']);
    const owned = ownedConditionTypes(plan, { conditions: [] }, retired);
    expect(owned.has('LegacyReady')).toBe(true);
    expect(owned.has('OldStepReady')).toBe(true);
    expect(ownedConditionTypes(plan, { conditions: [] }).has('LegacyReady')).toBe(false);
  });
});
