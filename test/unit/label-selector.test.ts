import { LabelSelectorError, matchesLabels, parseLabelSelector } from '../../core/label-selector';

const matches = (selector: string, labels?: Record<string, string>): boolean =>
  matchesLabels(parseLabelSelector(selector), labels);

describe('label selectors', () => {
  it('given equality, inequality, existence and set requirements, it matches as the API server does', () => {
    const labels = { 'platform.example.com/managed': 'true', tier: 'gold' };
    expect(matches('platform.example.com/managed=true', labels)).toBe(true);
    expect(matches('platform.example.com/managed==true,tier=gold', labels)).toBe(true);
    expect(matches('platform.example.com/managed=false', labels)).toBe(false);
    expect(matches('tier!=silver', labels)).toBe(true);
    expect(matches('tier!=silver', {})).toBe(true);
    expect(matches('tier', labels)).toBe(true);
    expect(matches('!tier', labels)).toBe(false);
    expect(matches('tier in (gold, silver)', labels)).toBe(true);
    expect(matches('tier notin (gold)', labels)).toBe(false);
    expect(matches('tier notin (gold)', {})).toBe(true);
    expect(matches('', undefined)).toBe(true);
    expect(matches('tier', undefined)).toBe(false);
  });

  it.each([
    ['a value with a space', 'tier=gold plated'],
    ['unbalanced parentheses', 'tier in (gold'],
    ['an empty requirement', 'tier=gold,,a=b'],
    ['a key of 10,000 characters', `${'k'.repeat(10_000)}=v`],
    ['a value of 64 characters', `k=${'v'.repeat(64)}`],
    ['a key with a slash and no name', 'example.com/=v'],
  ])('given %s, it refuses the selector', (_what, selector) => {
    expect(() => parseLabelSelector(selector)).toThrow(LabelSelectorError);
  });
});
