import {
  definePlan,
  driftIntervalMs,
  durationMs,
  executionLayers,
  leadingLocalSteps,
  PlanError,
  runnableSteps,
  stepActivityType,
} from '../../core/plan';
import { counterPlan, localCounterPlan } from '../fixtures/counter/plan';

const base = { group: 'g.dev', version: 'v1', kind: 'Thing', plural: 'things', scope: 'Namespaced' } as const;

describe('reconciler plans', () => {
  it('given the test plan, it orders steps in layers: prepare and audit first, publish after prepare', () => {
    expect(executionLayers(counterPlan.steps)).toEqual([['prepare', 'audit'], ['publish']]);
  });

  it('given step states, it starts steps whose dependencies succeeded and skips those whose dependency failed', () => {
    expect(runnableSteps(counterPlan.steps, {})).toEqual({ start: ['prepare', 'audit'], skip: [] });
    expect(runnableSteps(counterPlan.steps, { prepare: 'running', audit: 'running' })).toEqual({ start: [], skip: [] });
    expect(runnableSteps(counterPlan.steps, { prepare: 'succeeded', audit: 'running' })).toEqual({
      start: ['publish'],
      skip: [],
    });
    expect(runnableSteps(counterPlan.steps, { prepare: 'failed', audit: 'succeeded' })).toEqual({
      start: [],
      skip: ['publish'],
    });
  });

  it('given a cycle, an unknown dependency, a duplicate or a non-kebab name, definePlan rejects the plan', () => {
    const cyc = [
      { name: 'a', dependsOn: ['b'] },
      { name: 'b', dependsOn: ['a'] },
    ];
    expect(() => definePlan({ ...base, steps: cyc })).toThrow(/cycle/);
    expect(() => definePlan({ ...base, steps: [{ name: 'a', dependsOn: ['zz'] }] })).toThrow(/unknown step zz/);
    expect(() => definePlan({ ...base, steps: [{ name: 'a' }], cleanup: [{ name: 'a' }] })).toThrow(/twice/);
    expect(() => definePlan({ ...base, steps: [{ name: 'Bad_Name' }] })).toThrow(PlanError);
  });

  it('given a plan, step activity types are <plural>.<group>/<step>', () => {
    expect(stepActivityType(counterPlan, 'publish')).toBe('counters.test.homeostat.dev/publish');
  });

  it('given durations in Temporal formats, durationMs reads them', () => {
    expect(durationMs('400 milliseconds', 0)).toBe(400);
    expect(durationMs('2 seconds', 0)).toBe(2000);
    expect(durationMs('500ms', 0)).toBe(500);
    expect(durationMs('5m', 0)).toBe(300_000);
    expect(durationMs('1 hour', 0)).toBe(3_600_000);
    expect(durationMs(undefined, 7)).toBe(7);
    expect(() => durationMs('soon', 0)).toThrow(/is not a duration homeostat can run/);
  });
});

describe('leadingLocalSteps: the chain observe may run', () => {
  const local = (name: string, dependsOn: string[] = [], timeout = '10 seconds') => ({
    name,
    dependsOn,
    execution: 'local' as const,
    startToCloseTimeout: timeout,
  });
  const names = (steps: readonly { name: string }[]) => steps.map((s) => s.name);

  it('given a chain of local steps, all of it; given a regular step, the chain ends before it', () => {
    expect(names(leadingLocalSteps([local('a'), local('b', ['a']), local('c', ['b'])], 60_000))).toEqual([
      'a',
      'b',
      'c',
    ]);
    expect(names(leadingLocalSteps([local('a'), { name: 'b', dependsOn: ['a'] }, local('c', ['b'])], 60_000))).toEqual([
      'a',
    ]);
    expect(leadingLocalSteps([{ name: 'a' }, local('b', ['a'])], 60_000)).toEqual([]);
  });

  it('given steps the workflow would run in parallel (two roots, or two dependents of one step), no step is fused past them', () => {
    // The LocalCounter's prepare and audit start together: nothing is fused, so both keep starting at once.
    expect(leadingLocalSteps(localCounterPlan.steps, 600_000)).toEqual([]);
    expect(names(leadingLocalSteps([local('a'), local('b', ['a']), local('c', ['a'])], 60_000))).toEqual(['a']);
  });

  it('given a step that needs two chain steps, it joins the chain; given timeouts past the budget, the chain stops at the budget', () => {
    expect(names(leadingLocalSteps([local('a'), local('b', ['a']), local('c', ['a', 'b'])], 60_000))).toEqual([
      'a',
      'b',
      'c',
    ]);
    expect(names(leadingLocalSteps([local('a'), local('b', ['a']), local('c', ['b'])], 25_000))).toEqual(['a', 'b']);
    expect(leadingLocalSteps([local('a', [], '2 minutes')], 60_000)).toEqual([]);
    // No timeout declared: the default minute counts.
    expect(names(leadingLocalSteps([{ name: 'a', execution: 'local' }], 60_000))).toEqual(['a']);
    expect(leadingLocalSteps([{ name: 'a', execution: 'local' }], 59_999)).toEqual([]);
  });

  it('given a gated step (an approval rule), the chain ends before it unless its rule, asked this pass, needs no approval', () => {
    const steps = [local('a'), { ...local('b', ['a']), approval: {} }, local('c', ['b'])];
    expect(names(leadingLocalSteps(steps, 60_000))).toEqual(['a']);
    expect(names(leadingLocalSteps(steps, 60_000, (s) => s === 'b'))).toEqual(['a', 'b', 'c']);
    expect(names(leadingLocalSteps(steps, 60_000, () => false))).toEqual(['a']);
  });
});

describe('driftIntervalMs: an object’s own drift-check interval', () => {
  const plan = { driftCheckInterval: '5 minutes' } as const;
  it('given no annotation, the plan’s interval; given no plan interval, none whatever the annotation says', () => {
    expect(driftIntervalMs(plan, undefined)).toEqual({ ms: 300_000 });
    expect(driftIntervalMs({}, '1 minute')).toEqual({});
  });
  it('given a duration, it is used within the bounds (default 30 s to 24 h), clamped outside them', () => {
    expect(driftIntervalMs(plan, '10 minutes')).toEqual({ ms: 600_000 });
    expect(driftIntervalMs(plan, '1ms')).toEqual({ ms: 30_000 });
    expect(driftIntervalMs(plan, '9999 days')).toEqual({ ms: 86_400_000 });
    expect(driftIntervalMs({ ...plan, driftCheckBounds: { min: '2m', max: '1h' } }, '1 minute')).toEqual({
      ms: 120_000,
    });
    expect(driftIntervalMs({ ...plan, driftCheckBounds: { min: '2m', max: '1h' } }, '2 hours')).toEqual({
      ms: 3_600_000,
    });
  });
  it('given something that is not a duration (a word, a negative, a huge string), the plan’s interval and the reason', () => {
    for (const bad of ['whenever', '-5m', '', `${'9'.repeat(400)}s`]) {
      const r = driftIntervalMs(plan, bad);
      expect(r.ms).toBe(300_000);
      expect(r.problem).toMatch(/^homeostat\.dev\/drift-check-interval: ".*" is not a duration/);
      expect(r.problem!.length).toBeLessThan(120);
    }
  });
});
