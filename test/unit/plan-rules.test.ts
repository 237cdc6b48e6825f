/**
 * The rules of reconciler plans, to the letter: every duration unit Temporal's format allows, the
 * naming and dependency rules definePlan enforces (with the messages users read), the plan registry
 * and which steps start or are skipped. Written for mutants of core/plan.ts that survived (issue 17).
 */
import {
  definePlan,
  durationMs,
  executionLayers,
  findPlan,
  planRegistry,
  PlanError,
  runnableSteps,
  type ReconcilerPlan,
} from '../../core/plan';

const base = { group: 'g.dev', version: 'v1', kind: 'Thing', plural: 'things', scope: 'Namespaced' } as const;

describe('reconciler plan rules', () => {
  it('given every unit spelling, durationMs converts it, case and spaces between number and unit aside', () => {
    const cases: [string, number][] = [
      ['7', 7],
      ['7ms', 7],
      ['7 millisecond', 7],
      ['7 milliseconds', 7],
      ['7s', 7000],
      ['7 sec', 7000],
      ['7 secs', 7000],
      ['7 second', 7000],
      ['7 seconds', 7000],
      ['7m', 420_000],
      ['7 min', 420_000],
      ['7 mins', 420_000],
      ['7 minute', 420_000],
      ['7 minutes', 420_000],
      ['7h', 25_200_000],
      ['7 hour', 25_200_000],
      ['7 hours', 25_200_000],
      ['7d', 604_800_000],
      ['7 day', 604_800_000],
      ['7 days', 604_800_000],
      ['1.5   Seconds', 1500],
      ['2 MS', 2],
    ];
    expect(cases.map(([text]) => durationMs(text, -1))).toEqual(cases.map(([, ms]) => ms));
    expect(durationMs(42, -1)).toBe(42);
    expect(durationMs(0, -1)).toBe(0);
  });

  it('given a duration that is not one, durationMs throws a PlanError naming it', () => {
    // '1.2.3 s' once gave NaN (a timeout of NaN ms) instead of an error.
    // Leading or trailing spaces, or a tab, are not read by Temporal's format either.
    for (const bad of [
      '',
      'soon',
      '5 weeks',
      '-5s',
      '5 s s',
      's',
      '1e3 ms',
      '1.2.3 s',
      '. s',
      '5. s',
      ' 5s',
      '5s ',
      '5\ts',
    ]) {
      expect(() => durationMs(bad, 0)).toThrow(
        new PlanError(
          `${JSON.stringify(bad)} is not a duration homeostat can run (use a number of ms, s, m, h or d, such as 500ms, 30s, 10 minutes or 2h, up to 3650 days)`,
        ),
      );
    }
  });

  it('given step names, only kebab-case starting with a letter is accepted, and the message names the step', () => {
    expect(definePlan({ ...base, steps: [{ name: 'a' }, { name: 'a1-b2' }] }).steps).toHaveLength(2);
    for (const name of ['1a', 'a_b', 'Ab', '-a', 'a b', 'é', '']) {
      expect(() => definePlan({ ...base, steps: [{ name }] })).toThrow(
        new PlanError(`step name ${name} is not kebab-case`),
      );
    }
  });

  it('given a plan, definePlan returns it as it is', () => {
    const plan = { ...base, steps: [{ name: 'a' }], cleanup: [{ name: 'z' }] };
    expect(definePlan(plan)).toBe(plan);
  });

  it('given the same name twice, in steps or across steps and cleanup, definePlan names it', () => {
    expect(() => definePlan({ ...base, steps: [{ name: 'a' }, { name: 'a' }] })).toThrow(
      new PlanError('step a is defined twice'),
    );
    expect(() => definePlan({ ...base, steps: [{ name: 'a' }], cleanup: [{ name: 'a' }] })).toThrow(
      new PlanError('step a is defined twice'),
    );
  });

  it('given dependencies, each list depends only on itself: cleanup cannot wait for a step, nor a step for cleanup', () => {
    expect(() => definePlan({ ...base, steps: [{ name: 'a' }], cleanup: [{ name: 'z', dependsOn: ['a'] }] })).toThrow(
      new PlanError('step z depends on unknown step a'),
    );
    expect(() => definePlan({ ...base, steps: [{ name: 'a', dependsOn: ['z'] }], cleanup: [{ name: 'z' }] })).toThrow(
      new PlanError('step a depends on unknown step z'),
    );
    expect(
      definePlan({ ...base, steps: [{ name: 'a' }], cleanup: [{ name: 'y' }, { name: 'z', dependsOn: ['y'] }] }),
    ).toBeDefined();
  });

  it('given a cycle in the cleanup steps, definePlan names the steps in it', () => {
    expect(() =>
      definePlan({
        ...base,
        steps: [{ name: 'a' }],
        cleanup: [
          { name: 'y', dependsOn: ['z'] },
          { name: 'z', dependsOn: ['y'] },
        ],
      }),
    ).toThrow(new PlanError('steps y, z form a dependency cycle'));
    expect(() => executionLayers([{ name: 'a' }, { name: 'b', dependsOn: ['b'] }])).toThrow(
      new PlanError('steps b form a dependency cycle'),
    );
  });

  it('given a diamond, the layers follow the longest path', () => {
    expect(
      executionLayers([
        { name: 'd', dependsOn: ['b', 'c'] },
        { name: 'c', dependsOn: ['a'] },
        { name: 'b', dependsOn: ['a'] },
        { name: 'a' },
      ]),
    ).toEqual([['a'], ['c', 'b'], ['d']]);
    expect(executionLayers([])).toEqual([]);
  });

  it('given plans, the registry keys them by <plural>.<group> and findPlan needs both group and kind', () => {
    const thing: ReconcilerPlan = { ...base, steps: [] };
    const other: ReconcilerPlan = { ...base, group: 'h.dev', kind: 'Other', plural: 'others', steps: [] };
    const registry = planRegistry([thing, other]);
    expect(Object.keys(registry)).toEqual(['things.g.dev', 'others.h.dev']);
    expect(registry['others.h.dev']).toBe(other);
    expect(findPlan(registry, { group: 'g.dev', kind: 'Thing' })).toBe(thing);
    expect(findPlan(registry, { group: 'h.dev', kind: 'Other' })).toBe(other);
    expect(findPlan(registry, { group: 'h.dev', kind: 'Thing' })).toBeUndefined();
    expect(findPlan(registry, { group: 'g.dev', kind: 'Other' })).toBeUndefined();
  });

  it('given a skipped dependency, its dependents are skipped too; steps already under way are left alone', () => {
    const steps = [{ name: 'a' }, { name: 'b', dependsOn: ['a'] }, { name: 'c', dependsOn: ['a', 'x'] }, { name: 'x' }];
    expect(runnableSteps(steps, { a: 'skipped', x: 'succeeded' })).toEqual({ start: [], skip: ['b', 'c'] });
    expect(runnableSteps(steps, { a: 'succeeded', x: 'retrying' })).toEqual({ start: ['b'], skip: [] });
    expect(runnableSteps(steps, { a: 'succeeded', x: 'failed' })).toEqual({ start: ['b'], skip: ['c'] });
    expect(runnableSteps(steps, { a: 'succeeded', b: 'succeeded', x: 'succeeded' })).toEqual({
      start: ['c'],
      skip: [],
    });
    expect(runnableSteps(steps, { a: 'succeeded', b: 'failed', c: 'skipped', x: 'succeeded' })).toEqual({
      start: [],
      skip: [],
    });
  });
});
