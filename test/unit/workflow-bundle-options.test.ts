/**
 * The shared workflow modules (`workers/workflow-bundle-options.ts`): every module of the workflow code
 * is either shared by all workflows of a worker thread or kept per workflow, a shared module keeps no
 * state at module scope and imports only shared modules, and a bundle built with the options preloads
 * each shared module.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import ts from 'typescript';
import {
  perWorkflowModules,
  sharedWorkflowModules,
  workflowBundleOptions,
  workflowInterceptorModules,
} from '../../workers/workflow-bundle-options';
import { workflowCodeFiles } from '../support/workflow-fingerprint';

const root = resolve(__dirname, '../..');

/** The module-scope `let` and `var` declarations of a source file, by name. */
function moduleVariables(path: string): string[] {
  const source = ts.createSourceFile(path, readFileSync(join(root, path), 'utf8'), ts.ScriptTarget.ES2022, true);
  return source.statements.flatMap((s) =>
    ts.isVariableStatement(s) && (s.declarationList.flags & ts.NodeFlags.Const) === 0
      ? s.declarationList.declarations.map((d) => d.name.getText(source))
      : [],
  );
}

describe('shared workflow modules', () => {
  it('given the workflow code, every module of it is either shared or kept per workflow, never both', () => {
    const modules = [...workflowCodeFiles().keys()];
    const perWorkflow = Object.keys(perWorkflowModules);
    expect([...sharedWorkflowModules, ...perWorkflow].sort()).toEqual(modules.sort());
    expect(sharedWorkflowModules.filter((m) => perWorkflow.includes(m))).toEqual([]);
  });

  it('given a shared module, it declares no let or var at module scope (its state would be every workflow’s)', () => {
    const offending = sharedWorkflowModules.flatMap((m) => moduleVariables(m).map((v) => `${m}: ${v}`));
    expect(offending).toEqual([]);
    // The rule finds what it is for: the pass trace keeps its context so, and is kept per workflow.
    expect(moduleVariables('workflows/pass-trace.ts').length).toBeGreaterThan(0);
  });

  it('given a shared module, everything it imports is shared too (a per-workflow import would be shared with it)', () => {
    for (const m of sharedWorkflowModules) {
      const reached = [...workflowCodeFiles(join(root, m)).keys()];
      expect({ m, perWorkflow: reached.filter((r) => !sharedWorkflowModules.includes(r)) }).toEqual({
        m,
        perWorkflow: [],
      });
    }
  });

  it('given the options, the bundle preloads every shared module and keeps the interceptors', async () => {
    const options = workflowBundleOptions(require.resolve('../../workflows'));
    expect(options.workflowInterceptorModules).toEqual([...workflowInterceptorModules]);
    const { code } = await bundleWorkflowCode({
      ...options,
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
    });
    const start = code.indexOf('exports.preloadModules = function preloadModules()');
    expect(start).toBeGreaterThan(-1);
    const hook = code.slice(start, code.indexOf('exports.importWorkflows', start));
    for (const m of sharedWorkflowModules)
      expect({ m, preloaded: hook.includes(`"./${m}"`) }).toEqual({ m, preloaded: true });
    for (const m of Object.keys(perWorkflowModules))
      expect({ m, preloaded: hook.includes(`"./${m}"`) }).toEqual({ m, preloaded: false });
  }, 120_000);
});
