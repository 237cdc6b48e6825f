/**
 * `npm run bundle`: writes the prebuilt workflow bundle to `dist/workflow-bundle.js`, the file a
 * production worker loads (HOMEOSTAT_WORKFLOW_BUNDLE) instead of running webpack at start. The
 * container image builds it with this same command.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

async function main(): Promise<void> {
  const out = join(__dirname, '..', 'dist', 'workflow-bundle.js');
  const started = Date.now();
  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('../workflows') });
  mkdirSync(join(out, '..'), { recursive: true });
  writeFileSync(out, code);
  process.stdout.write(`wrote ${out} (${(code.length / 1024).toFixed(0)} KiB) in ${Date.now() - started} ms\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
