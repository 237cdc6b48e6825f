/**
 * Rules written twice because the folders that use them may not import each other (eslint's import
 * direction): the label the worker puts on children and the selector the bridge watches them by, and
 * the step condition types the workflow writes and the ones the status write treats as homeostat's.
 */
import { childLabels, managedByValue } from '../../activities/children';
import { ownedConditionTypes, stepConditionTypeOf } from '../../activities/create-activities';
import { ownedChildSelector } from '../../informer-bridge';
import { stepConditionType } from '../../workflows/object-state';
import { builtinOperator } from '../../builtin';

describe('ownership rules shared by the worker, the bridge and the workflow', () => {
  it('given the worker’s child labels, the bridge’s owned-child selector selects exactly them', () => {
    expect(ownedChildSelector).toBe(`${childLabels.managedBy}=${managedByValue}`);
  });

  it.each(['config', 'connection-secret', 'a_b.c', 'x9', 'deployment', 'drop-database'])(
    'given step %s, the status write and the workflow name its condition alike',
    (step) => {
      expect(stepConditionTypeOf(step)).toBe(stepConditionType(step));
    },
  );

  it('given the built-in plans, every condition type the workflow writes is one the status write owns, and a foreign one is not', () => {
    for (const { plan } of builtinOperator.reconcilers) {
      const owned = ownedConditionTypes(plan, { conditions: [] });
      for (const step of [...plan.steps, ...(plan.cleanup ?? [])])
        expect(owned.has(stepConditionType(step.name))).toBe(true);
      expect([...owned]).toEqual(expect.arrayContaining(['Ready', 'Progressing', 'Degraded']));
      expect(owned.has('example.com/Audited')).toBe(false);
    }
  });
});
