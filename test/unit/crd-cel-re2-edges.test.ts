/**
 * The two translators CRD generation relies on, at their edges: `celRule` (its limits at the boundary,
 * the rule object it records, field paths with escaped keys, absent values) and `celString`, and
 * `re2Pattern` (escapes, surrogate boundaries, classes, groups, repeat counts, flags). Written for the
 * mutants of reconcilers/cel.ts and reconcilers/re2-pattern.ts that survived (issue 17); every value is
 * computed inside its test and compared whole.
 */
import { z } from 'zod';
import { celRule, CelRuleError, celString, celValidationsOf, type CelValidation } from '../../reconcilers/cel';
import { re2Pattern } from '../../reconcilers/re2-pattern';

/** The CelRuleError message celRule throws for a validation, or undefined when it accepts it. */
function refusal(validation: CelValidation, schema: z.ZodType = z.number()): string | undefined {
  try {
    celRule(schema, validation, () => true);
    return undefined;
  } catch (err) {
    if (err instanceof CelRuleError) return err.message;
    throw err;
  }
}

describe('CEL rules at their edges', () => {
  it('given a schema without rules, celValidationsOf returns an empty list', () => {
    expect(celValidationsOf(z.string())).toEqual([]);
  });

  it('given stacked rules, the node records each rule once, in order, frozen, with only the keys given', () => {
    const first = celRule(z.number(), { rule: 'self > 0', message: 'positive' }, (n) => n > 0);
    const both = celRule(
      first,
      { rule: 'self < 10', message: 'small', fieldPath: '.x', reason: 'FieldValueForbidden' },
      (n) => n < 10,
    );
    expect(celValidationsOf(both)).toStrictEqual([
      { rule: 'self > 0', message: 'positive' },
      { rule: 'self < 10', message: 'small', fieldPath: '.x', reason: 'FieldValueForbidden' },
    ]);
    expect(Object.isFrozen(celValidationsOf(both)[1])).toBe(true);
    expect(both.safeParse(5).success).toBe(true);
    expect(both.safeParse(0).error?.issues.map((i) => i.message)).toEqual(['positive']);
    expect(both.safeParse(12).error?.issues.map((i) => [i.message, i.path])).toEqual([['small', ['x']]]);
  });

  it('given a rule on a schema that accepts undefined, an absent value is not checked (as in CEL)', () => {
    const check = jest.fn((n: number | undefined) => n! > 0);
    const schema = celRule(z.number().optional(), { rule: 'self > 0', message: 'positive' }, check);
    expect(schema.safeParse(undefined).success).toBe(true);
    expect(check).not.toHaveBeenCalled();
    expect(schema.safeParse(-1).success).toBe(false);
  });

  it('given field paths with dotted fields and escaped map keys, the issue path names the same field', () => {
    const schema = celRule(
      z.object({ a: z.object({ b: z.number() }) }),
      { rule: 'false', message: 'never', fieldPath: ".a['it\\'s'].b_2" },
      () => false,
    );
    expect(schema.safeParse({ a: { b: 1 } }).error?.issues[0]?.path).toEqual(['a', "it's", 'b_2']);
  });

  it('given a field path that is not .field and [key] segments, the message quotes its first 80 characters', () => {
    expect(refusal({ rule: 'true', message: 'm', fieldPath: '.a[0]' })).toBe(
      `fieldPath ".a[0]" must be made of .field and ['key'] segments (no array indexes)`,
    );
    expect(refusal({ rule: 'true', message: 'm', fieldPath: `.${'a'.repeat(100)}-` })).toBe(
      `fieldPath ${JSON.stringify(`.${'a'.repeat(79)}`)} must be made of .field and ['key'] segments (no array indexes)`,
    );
  });

  it('given a rule at the length limit it is accepted; one character more, the message gives both lengths', () => {
    const rule = (n: number) => `self == '${'x'.repeat(n - 10)}'`;
    expect(rule(4096)).toHaveLength(4096);
    expect(refusal({ rule: rule(4096), message: 'm' })).toBeUndefined();
    expect(refusal({ rule: rule(4097), message: 'm' })).toBe('a CEL rule must be at most 4096 characters (got 4097)');
  });

  it('given a message at the length limit it is accepted; one character more, or a carriage return, it is refused', () => {
    const long = `rule "true": the message must be one line of at most 1024 characters`;
    expect(refusal({ rule: 'true', message: 'm'.repeat(1024) })).toBeUndefined();
    expect(refusal({ rule: 'true', message: 'm'.repeat(1025) })).toBe(long);
    expect(refusal({ rule: 'true', message: 'one\rtwo' })).toBe(long);
  });

  it('given a missing message, the refusal quotes the rule’s first 80 characters', () => {
    const rule = `self == '${'x'.repeat(100)}'`;
    expect(refusal({ rule, message: '  ' })).toBe(`rule ${JSON.stringify(rule.slice(0, 80))}: a message is required`);
  });

  it('given rule and message that are not strings (a hostile JavaScript caller), celRule refuses them', () => {
    expect(refusal({ rule: 42, message: 'm' } as never)).toBe('a CEL rule must not be empty');
    expect(refusal({ rule: 'true', message: 42 } as never)).toBe('rule "true": a message is required');
  });

  it('given words that only contain oldSelf, the rule is not a transition rule', () => {
    expect(refusal({ rule: 'self.oldSelfish > 0', message: 'm' })).toBeUndefined();
    expect(refusal({ rule: 'self.myoldSelf > 0', message: 'm' })).toBeUndefined();
    expect(refusal({ rule: 'self > oldSelf', message: 'm' })).toBe(
      'rule "self > oldSelf": transition rules (oldSelf) have no JS check',
    );
  });

  it('given a bare transform or a pipe, celRule refuses it; given neither, it accepts', () => {
    const message = 'rule "true": attach it before .transform()';
    expect(
      refusal(
        { rule: 'true', message: 'm' },
        z.transform((v: unknown) => v),
      ),
    ).toBe(message);
    expect(refusal({ rule: 'true', message: 'm' }, z.string().pipe(z.string()))).toBe(message);
    expect(refusal({ rule: 'true', message: 'm' }, z.string())).toBeUndefined();
  });

  it('given backslashes, quotes and line breaks, celString writes a CEL string literal of the same text', () => {
    expect(celString("a\\b'c\nd\re")).toBe("'a\\\\b\\'c\\nd\\re'");
    expect(celString('')).toBe("''");
  });
});

describe('RE2 patterns at their edges', () => {
  it.each([
    [/^\u{1F600}$/u, '^\\x{1F600}$'],
    [/^\u00e9x$/u, '^\\x{00e9}x$'],
    [/^\u004Ax$/, '^\\x{004A}x$'],
    [/^\x4ax$/, '^\\x{4a}x$'],
    [/^[\x41-\x5a]$/, '^[\\x{41}-\\x{5a}]$'],
    [/^\ud7ff$/, '^\\x{d7ff}$'],
    [/^\ue000$/, '^\\x{e000}$'],
    [
      /^\S+x$/,
      '^[^\\t\\n\\v\\f\\r \\x{00a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}]+x$',
    ],
    [
      /^[\sx]$/,
      '^[\\t\\n\\v\\f\\r \\x{00a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}x]$',
    ],
    // A dash beside a class escape is a literal to JavaScript and a malformed range to RE2.
    [
      /^[\s-_]$/,
      '^[\\t\\n\\v\\f\\r \\x{00a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}\\-_]$',
    ],
    [/^[\w-.]+$/, '^[\\w\\-.]+$'],
    [/^[a-\d]$/, '^[a\\-\\d]$'],
    [/^[\d-]$/, '^[\\d-]$'],
    [/^[a-z]$/, '^[a-z]$'],
    [/^\p{General_Category=Lu}x$/u, '^\\p{Lu}x$'],
    [/^\p{gc=Ll}$/u, '^\\p{Ll}$'],
    [/^\P{Lu}$/u, '^\\P{Lu}$'],
    [/^\bx\B$/, '^\\bx\\B$'],
    [/^\d\D\w\W\t\n\r\f\v$/, '^\\d\\D\\w\\W\\t\\n\\r\\f\\v$'],
    [/^\.\\\/$/, '^\\.\\\\/$'],
    [/^[^a.]b.$/, '^[^a.]b[^\\n\\r\\x{2028}\\x{2029}]$'],
    [/^[a\].]b$/, '^[a\\].]b$'],
    [/^(?:a)(?<n>b)$/, '^(?:a)(?P<n>b)$'],
    [/^a{1000}b{2,1000}c{2,}$/, '^a{1000}b{2,1000}c{2,}$'],
    [/^a$/im, '(?im)^a$'],
    [/^a.$/gimsuy, '(?ims)^a.$'],
    [/^a$/m, '(?m)^a$'],
  ])('given %s, RE2 gets %s', (re, expected) => {
    expect(re2Pattern(re)).toBe(expected);
  });

  it.each([
    ['a surrogate half at the low end', /^\ud800$/],
    ['a surrogate half at the high end', /^\udfff$/],
    ['a surrogate code point in braces', /^\u{d800}$/u],
    // Legal without the u flag but odd enough that TypeScript and ESLint refuse them as literals.
    ['\\x without two hex digits', new RegExp('^\\xZZ$')],
    ['\\u{…} without the u flag (u repeated)', new RegExp('^\\u{41}$')],
    ['a backspace class escape', /^[\b]$/],
    ['\\B inside a class', new RegExp('^[\\B]$')],
    ['an identity escape of a letter', new RegExp('^\\e$')],
    ['a lookbehind', /^(?<=a)b$/],
    ['a negative lookahead', /^(?!a)b$/],
    ['a maximum repeat count above 1000', /^a{2,1001}$/],
    ['a minimum repeat count above 1000', /^a{1001,}$/],
    ['\\0', /^\0$/],
    ['a binary property', /^\p{ASCII}$/u],
    ['[]', new RegExp('^[]a$')],
    // Without the u flag \p is a plain "p": /\p{Lu}/ matches the text "p{Lu}", not a category.
    ['\\p{…} without the u flag', new RegExp('^\\p{Lu}$')],
  ])('given %s, it refuses', (_what, re) => {
    expect(re2Pattern(re)).toBeUndefined();
  });
});
