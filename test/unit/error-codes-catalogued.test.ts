/**
 * Every error code the product throws has one home: a `HomeostatError` (or any other error carrying an
 * `ERR_…` code) names a code of the catalog in core/errors.ts; the HTTP API's problem documents name
 * one of its own table in api/problems.ts, and `homeostat rollout`'s refusals one of
 * `rolloutErrorCatalog` in core/rollout/rollout-errors.ts (with the exit status of each). The scan reads the product's sources, so a code written
 * into a new file is checked too.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { errorCatalog } from '../../core/errors';
import { problemCodes } from '../../api/problems';
import { rolloutErrorCatalog } from '../../core/rollout';

const root = join(__dirname, '../..');
const skipped = new Set(['node_modules', 'dist', 'test', 'bench', 'coverage', '.git']);

function productSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name.startsWith('.') || skipped.has(entry.name)) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return productSources(path);
    return /\.(ts|mts|cts)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

const sources = productSources(root).map((path) => ({ file: relative(root, path), text: readFileSync(path, 'utf8') }));

/** `[file, code]` for each match of `pattern` (its first group is the code). */
function codesOf(pattern: RegExp, only?: (file: string) => boolean): [string, string][] {
  return sources
    .filter((s) => !only || only(s.file))
    .flatMap((s) => [...s.text.matchAll(pattern)].map((m) => [s.file, m[1]!] as [string, string]));
}

const inCatalog = (code: string): boolean => Object.hasOwn(errorCatalog, code);

describe('error codes', () => {
  it('given the product sources, the scan finds the files and codes it checks', () => {
    expect(sources.some((s) => s.file === join('activities', 'create-activities.ts'))).toBe(true);
    expect(codesOf(/new HomeostatError\(\s*'(\w+)'/g).length).toBeGreaterThan(10);
  });

  it('given every HomeostatError the product throws, its code is in the catalog', () => {
    const unknown = codesOf(/new HomeostatError\(\s*['"`](\w+)['"`]/g).filter(([, code]) => !inCatalog(code));
    expect(unknown).toEqual([]);
  });

  it('given every other error carrying an ERR_ code outside the HTTP API, its code is in the catalog', () => {
    const carried = codesOf(/\bcode\s*(?::\s*\w+\s*)?[:=]\s*['"`](ERR_\w+)['"`]/g, (f) => !f.startsWith('api'));
    const watchdog = codesOf(/['"`](ERR_\w+)['"`]\s+satisfies ErrorCode/g);
    expect(carried.length + watchdog.length).toBeGreaterThan(0);
    expect([...carried, ...watchdog].filter(([, code]) => !inCatalog(code))).toEqual([]);
  });

  it('given every ERR_ literal in the product, it is a code of the catalog, of the HTTP API’s problem table or of the rollout refusals', () => {
    const unknown = codesOf(/['"`](ERR_[A-Z0-9_]+)['"`]/g).filter(
      ([, code]) => !inCatalog(code) && !Object.hasOwn(problemCodes, code) && !Object.hasOwn(rolloutErrorCatalog, code),
    );
    expect(unknown).toEqual([]);
  });

  it('given every RolloutError the product throws, its code is in the rollout catalog and no code is in both catalogs', () => {
    const thrown = codesOf(/new RolloutError\(\s*['"`](\w+)['"`]/g);
    expect(thrown.length).toBeGreaterThan(5);
    expect(thrown.filter(([, code]) => !Object.hasOwn(rolloutErrorCatalog, code))).toEqual([]);
    expect(Object.keys(rolloutErrorCatalog).filter(inCatalog)).toEqual([]);
  });
});
