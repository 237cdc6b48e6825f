/**
 * The operator value: `defineOperator` checks what it is given, the runtime refuses an operator whose
 * plans name steps it cannot run, and the CLI loads a team's operator module (`--operator`) and exits
 * with status 2 and a clear message when it cannot.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { assertOperator, operatorProblems, type Operator } from '../../core/operator';
import {
  defineOperator,
  definePlan,
  defineReconciler,
  errorCatalog,
  isHomeostatError,
  OperatorError,
  retryAfter,
  terminal,
} from '../../reconcilers';
import { homeostat } from '../support/cli';

const fixtures = join(__dirname, '../fixtures/operators');

const plan = definePlan({
  group: 'example.com',
  version: 'v1',
  kind: 'Thing',
  plural: 'things',
  scope: 'Namespaced',
  steps: [{ name: 'one' }, { name: 'two', dependsOn: ['one'] }],
});
const thing = defineReconciler({
  plan,
  schema: z.object({}),
  steps: { one: async () => {}, two: async () => {} },
});

describe('defineOperator', () => {
  it('given reconcilers, it returns a frozen operator with them', () => {
    const op = defineOperator({ name: 'things', reconcilers: [thing] });
    expect(op.reconcilers.map((r) => r.plan.kind)).toEqual(['Thing']);
    expect(Object.isFrozen(op)).toBe(true);
    expect(operatorProblems(op)).toEqual([]);
  });

  it.each(['', 'Things', '../etc', 'a b', 'x'.repeat(64), 'things;rm'])(
    'given the hostile or malformed name %j, it refuses it',
    (name) => {
      expect(() => defineOperator({ name, reconcilers: [thing] })).toThrow(/kebab-case/);
    },
  );

  it('given the same kind twice, it refuses the operator naming the kind', () => {
    expect(() => defineOperator({ name: 'twice', reconcilers: [thing, thing] })).toThrow(
      /Thing\.example\.com: defined twice/,
    );
  });

  it('given no reconcilers, it refuses the operator', () => {
    expect(() => defineOperator({ name: 'empty', reconcilers: [] })).toThrow(OperatorError);
  });
});

describe('operatorProblems', () => {
  it('given a hand-built reconciler with missing and unplanned steps, it names every one of them', () => {
    const op: Operator = {
      name: 'broken',
      reconcilers: [{ plan, schema: z.object({}), steps: { one: async () => {}, three: async () => {} } }],
    };
    expect(operatorProblems(op)).toEqual([
      'Thing.example.com: no implementation for planned steps two',
      'Thing.example.com: steps three are implemented but not planned',
    ]);
    expect(() => assertOperator(op)).toThrow(/no implementation for planned steps two/);
  });

  it('given something that is not an operator, it says so instead of throwing a TypeError', () => {
    expect(operatorProblems({ name: 'x' } as unknown as Operator)).toEqual([
      'not an operator: expected an object with a reconcilers array (use defineOperator)',
    ]);
  });
});

describe('error helpers', () => {
  it('given terminal(err), the error is the catalog’s non-retryable step error with the message', () => {
    const err = terminal(new Error('zone not delegated'));
    expect(isHomeostatError(err)).toBe(true);
    expect(err.code).toBe('ERR_STEP_TERMINAL');
    expect(errorCatalog[err.code].retryable).toBe(false);
    expect(err.message).toBe('zone not delegated');
  });

  it('given retryAfter with a duration string, the next attempt waits that long', () => {
    expect(retryAfter('30s', new Error('quota')).retryAfterMs).toBe(30_000);
    expect(retryAfter('2 minutes', 'busy').retryAfterMs).toBe(120_000);
    expect(retryAfter(1500, 'busy').retryAfterMs).toBe(1500);
    expect(() => retryAfter('soon', 'busy')).toThrow(/"soon" is not a duration homeostat can run/);
  });
});

describe('homeostat --operator', () => {
  it('given a worker whose reconcilers do not match their plans, it exits non-zero naming the missing steps', () => {
    const r = homeostat('worker', '--operator', join(fixtures, 'mismatched.mjs'));
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('Gadget.widgets.example.com: no implementation for planned steps test, recycle');
  }, 60_000);

  it('given a module that exports no operator, it exits 2 and says what to export', () => {
    const r = homeostat('bridge', '--operator', join(fixtures, 'not-an-operator.mjs'));
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('exports no operator');
  }, 60_000);

  it('given a module that does not exist, it exits 2 and says it cannot load it', () => {
    const r = homeostat('api', '--operator', './no/such/operator.js');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('cannot load the module');
  }, 60_000);

  it("given a team's operator module, crds prints its CRD with its short names", () => {
    const r = homeostat('crds', '--operator', join(fixtures, 'widgets.ts'));
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('name: widgets.widgets.example.com');
    expect(r.stdout).toContain('- wdg');
    expect(r.stdout).not.toContain('postgresdatabases');
  }, 60_000);

  it('given no --operator, crds prints the built-in operator’s CRDs', () => {
    const r = homeostat('crds');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('name: postgresdatabases.homeostat.dev');
    expect(r.stdout).toContain('name: apps.homeostat.dev');
  }, 60_000);
});
