/**
 * The fingerprint of homeostat's workflow code: what the workflow bundle runs of the repository's own
 * code, reached from `workflows/index.ts` through its runtime imports, each file transpiled without
 * comments or types (so a comment or a type change keeps the fingerprint) and hashed with its path.
 * `test/histories/workflow-code.json` records the fingerprint of each workflow-code version: a change of
 * workflow code without a new version fails `test/unit/workflow-code-version.test.ts`.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(__dirname, '../..');

/** The repository's files the workflow bundle runs, relative to the repository root, in order. */
export function workflowCodeFiles(entry = join(root, 'workflows/index.ts')): Map<string, string> {
  const seen = new Map<string, string>();
  const visit = (file: string): void => {
    const rel = relative(root, file);
    if (seen.has(rel)) return;
    const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), {
      compilerOptions: { removeComments: true, module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
      fileName: file,
    });
    seen.set(rel, outputText);
    for (const [, spec] of outputText.matchAll(/require\("(\.{1,2}\/[^"]+)"\)/g)) {
      const base = resolve(dirname(file), spec!);
      const target = [`${base}.ts`, join(base, 'index.ts')].find((f) => existsSync(f));
      if (!target) throw new Error(`${rel}: cannot resolve ${spec}`);
      visit(target);
    }
  };
  visit(entry);
  return new Map([...seen.entries()].sort(([a], [b]) => a.localeCompare(b)));
}

/** The sha256 of {@link workflowCodeFiles}: paths and transpiled code. */
export function workflowCodeFingerprint(): string {
  const hash = createHash('sha256');
  for (const [path, code] of workflowCodeFiles()) hash.update(`${path}\0${code}\0`);
  return hash.digest('hex');
}
