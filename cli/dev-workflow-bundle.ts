/**
 * The workflow bundle `homeostat dev` gives its worker: the package's prebuilt one, or, from sources,
 * one built once per version of the workflow code and cached.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { cacheDir, repoRoot } from '../devstack/paths';
import { packagedWorkflowBundle } from '../workers/create-worker';
import { workflowBundleOptions } from '../workers/workflow-bundle-options';

const seconds = (since: number): string => `${((Date.now() - since) / 1000).toFixed(1)}s`;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/**
 * The prebuilt workflow bundle: the package's own (`dist/workflow-bundle.js`) when running from an
 * installed or built package; from sources, one cached by a hash of the code it is built from, so a
 * second demo starts its worker without webpack.
 */
export async function devWorkflowBundle(say: (line: string) => void): Promise<string> {
  const packaged = packagedWorkflowBundle();
  if (packaged) return packaged;
  const hash = createHash('sha256');
  for (const file of [...sourceFiles(join(repoRoot, 'workflows')), ...sourceFiles(join(repoRoot, 'core'))].sort()) {
    hash.update(relative(repoRoot, file)).update(readFileSync(file));
  }
  hash.update(readFileSync(join(repoRoot, 'package-lock.json')));
  hash.update(readFileSync(join(repoRoot, 'workers', 'workflow-bundle-options.ts'))); // how it is bundled
  const path = join(cacheDir(), 'workflow-bundles', `${hash.digest('hex').slice(0, 16)}.js`);
  if (existsSync(path)) return path;
  const started = Date.now();
  say('  bundling the workflow code (cached afterwards)…');
  const { code } = await bundleWorkflowCode({
    ...workflowBundleOptions(require.resolve('../workflows')),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
  });
  mkdirSync(join(path, '..'), { recursive: true });
  // Written aside and renamed into place: a second demo started at the same moment (the test runs
  // two) must never find, and load, a half-written bundle under the final name.
  const partial = `${path}.${process.pid}.tmp`;
  writeFileSync(partial, code);
  renameSync(partial, path);
  say(`  workflow bundle built in ${seconds(started)}`);
  return path;
}
