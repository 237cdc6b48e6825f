/**
 * `npm run bundle`: writes the prebuilt workflow bundle to `dist/workflow-bundle.js`, the file a
 * production worker loads (HOMEOSTAT_WORKFLOW_BUNDLE) instead of running webpack at start. The
 * container image builds it with this same command. Its inline source map (the worker's workflow stack
 * traces) carries the text of every source it names, and names them relative to the package root, not
 * by the build machine's paths.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowBundleOptions } from '../workers/workflow-bundle-options';

const inlineMap = /\/\/# sourceMappingURL=data:application\/json;charset=utf-8;base64,(\S+)\s*$/;

/** The bundle with the `sources` of its inline source map made relative to `root`. */
function withRelativeSources(code: string, root: string): string {
  const match = inlineMap.exec(code);
  if (!match?.[1]) return code;
  const map = JSON.parse(Buffer.from(match[1], 'base64').toString('utf8')) as { sources: string[] };
  map.sources = map.sources.map((s) => s.replaceAll(`${root}/`, ''));
  const encoded = Buffer.from(JSON.stringify(map)).toString('base64');
  return `${code.slice(0, match.index)}//# sourceMappingURL=data:application/json;charset=utf-8;base64,${encoded}\n`;
}

async function main(): Promise<void> {
  const root = join(__dirname, '..');
  const out = join(root, 'dist', 'workflow-bundle.js');
  const started = Date.now();
  const bundle = await bundleWorkflowCode(workflowBundleOptions(require.resolve('../workflows')));
  const code = withRelativeSources(bundle.code, root);
  mkdirSync(join(out, '..'), { recursive: true });
  writeFileSync(out, code);
  process.stdout.write(`wrote ${out} (${(code.length / 1024).toFixed(0)} KiB) in ${Date.now() - started} ms\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
