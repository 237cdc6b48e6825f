/**
 * Durations are checked where a plan is defined: `definePlan` refuses every duration homeostat's own
 * backoff and timers could not run (`'1w'` reads in Temporal's format but not in homeostat's), naming
 * the step and the field, instead of a workflow failing in the middle of a pass. One grammar
 * (`parseDuration`) serves the definition check and `durationMs`, which the workflow uses.
 */
import { definePlan, durationMs, maxDurationMs, parseDuration, PlanError, type ReconcilerPlan } from '../../core/plan';

const base = { group: 'g.dev', version: 'v1', kind: 'Thing', plural: 'things', scope: 'Namespaced' } as const;
const grammar = '(use a number of ms, s, m, h or d, such as 500ms, 30s, 10 minutes or 2h, up to 3650 days)';

/** The PlanError message of a plan, or `undefined` when it is accepted. */
function refusal(plan: ReconcilerPlan): string | undefined {
  try {
    definePlan(plan);
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(PlanError);
    return (err as Error).message;
  }
}

const hostile: readonly unknown[] = [
  '1w',
  '2 weeks',
  '1y',
  '',
  ' ',
  '-1s',
  '-1',
  '1e309s',
  '1e3',
  `${'9'.repeat(400)}s`,
  '9'.repeat(20),
  'Infinity',
  'NaN',
  '0x10s',
  '1,5s',
  ' 5s',
  '5s\n',
  -1,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  1e20,
  maxDurationMs + 1,
  '3651d',
  null,
  true,
  {},
];

describe('durations, checked at definition', () => {
  it.each(hostile.map((d) => [JSON.stringify(d) ?? String(d), d]))(
    'given %s, parseDuration reads no duration and durationMs throws a PlanError naming it',
    (_shown, d) => {
      expect(parseDuration(d)).toBeUndefined();
      expect(() => durationMs(d as string, 0)).toThrow(PlanError);
      expect(() => durationMs(d as string, 0)).toThrow(/is not a duration homeostat can run \(use a number of ms, s/);
    },
  );

  it('given the largest durations it runs, they are read; one millisecond more is not', () => {
    expect(parseDuration('3650d')).toBe(maxDurationMs);
    expect(parseDuration(maxDurationMs)).toBe(maxDurationMs);
    expect(parseDuration('87600 hours')).toBe(maxDurationMs);
    expect(parseDuration(maxDurationMs + 1)).toBeUndefined();
    expect(parseDuration('0')).toBe(0);
    expect(parseDuration('1.5h')).toBe(5_400_000);
  });

  it.each([
    ['retry.initialInterval', { retry: { initialInterval: '1w' } }, '"1w"'],
    ['retry.maximumInterval', { retry: { maximumInterval: '-1s' } }, '"-1s"'],
    ['startToCloseTimeout', { startToCloseTimeout: '1e309s' }, '"1e309s"'],
    ['heartbeatTimeout', { heartbeatTimeout: '' }, '""'],
    ['startToCloseTimeout', { startToCloseTimeout: 1e20 }, '100000000000000000000'],
    ['startToCloseTimeout', { startToCloseTimeout: Number.NaN }, 'NaN'],
  ] as const)(
    'given a step whose %s is %j, definePlan refuses it naming the step and the field',
    (field, step, shown) => {
      expect(refusal({ ...base, steps: [{ name: 'prepare' }, { name: 'announce', ...step }] })).toBe(
        `step "announce": ${field} ${shown} is not a duration homeostat can run ${grammar}`,
      );
    },
  );

  it('given a cleanup step with a bad timeout, the message names the cleanup step', () => {
    expect(
      refusal({ ...base, steps: [{ name: 'a' }], cleanup: [{ name: 'drop', startToCloseTimeout: '1 fortnight' }] }),
    ).toBe(`step "drop": startToCloseTimeout "1 fortnight" is not a duration homeostat can run ${grammar}`);
  });

  it.each([
    ['driftCheckInterval', { driftCheckInterval: '1w' }, '"1w"'],
    ['driftCheckBounds.min', { driftCheckBounds: { min: '-5m' } }, '"-5m"'],
    ['driftCheckBounds.max', { driftCheckBounds: { max: '10 years' } }, '"10 years"'],
  ] as const)('given a plan whose %s is %j, definePlan refuses it naming the field', (field, extra, shown) => {
    expect(refusal({ ...base, steps: [{ name: 'a' }], ...extra })).toBe(
      `${field} ${shown} is not a duration homeostat can run ${grammar}`,
    );
  });

  it('given several bad durations, one error names every one of them', () => {
    const message = refusal({
      ...base,
      steps: [{ name: 'a', startToCloseTimeout: '1w', retry: { initialInterval: '2w' } }],
      driftCheckInterval: '3w',
    });
    expect(message?.split('; ').map((p) => p.split(' is not')[0])).toEqual([
      'step "a": startToCloseTimeout "1w"',
      'step "a": retry.initialInterval "2w"',
      'driftCheckInterval "3w"',
    ]);
  });

  it('given zero durations, retry numbers Temporal refuses and intervals in the wrong order, definePlan refuses each', () => {
    expect(refusal({ ...base, steps: [{ name: 'a', startToCloseTimeout: 0 }] })).toBe(
      'step "a": startToCloseTimeout must be longer than 0',
    );
    expect(refusal({ ...base, steps: [{ name: 'a' }], driftCheckInterval: '0s' })).toBe(
      'driftCheckInterval must be longer than 0',
    );
    expect(refusal({ ...base, steps: [{ name: 'a', retry: { backoffCoefficient: 0.5 } }] })).toBe(
      'step "a": retry.backoffCoefficient 0.5 must be a number of at least 1',
    );
    expect(refusal({ ...base, steps: [{ name: 'a', retry: { attemptsPerRound: 0 } }] })).toBe(
      'step "a": retry.attemptsPerRound 0 must be an integer of at least 1',
    );
    expect(refusal({ ...base, steps: [{ name: 'a', retry: { attemptsPerRound: 2.5 } }] })).toBe(
      'step "a": retry.attemptsPerRound 2.5 must be an integer of at least 1',
    );
    expect(refusal({ ...base, steps: [{ name: 'a' }], maxPassesPerRun: Number.POSITIVE_INFINITY })).toBe(
      'maxPassesPerRun Infinity must be an integer of at least 1',
    );
    expect(refusal({ ...base, steps: [{ name: 'a', retry: { initialInterval: '10m', maximumInterval: '1m' } }] })).toBe(
      'step "a": retry.maximumInterval must not be shorter than retry.initialInterval',
    );
    expect(refusal({ ...base, steps: [{ name: 'a' }], driftCheckBounds: { min: '2h', max: '1h' } })).toBe(
      'driftCheckBounds.max must not be shorter than its min',
    );
  });

  it('given every duration field set to something it runs, definePlan accepts the plan and durationMs reads each', () => {
    const plan = definePlan({
      ...base,
      steps: [
        {
          name: 'a',
          startToCloseTimeout: '2 minutes',
          heartbeatTimeout: 5000,
          retry: { initialInterval: '500ms', maximumInterval: '1h', backoffCoefficient: 1.5, attemptsPerRound: 4 },
        },
      ],
      cleanup: [{ name: 'b', startToCloseTimeout: '3650d' }],
      driftCheckInterval: '10 minutes',
      driftCheckBounds: { min: '1m', max: '2 days' },
      maxPassesPerRun: 100,
    });
    const step = plan.steps[0];
    expect([
      durationMs(step.startToCloseTimeout, 0),
      durationMs(step.retry?.initialInterval, 0),
      durationMs(plan.driftCheckInterval, 0),
    ]).toEqual([120_000, 500, 600_000]);
  });
});
