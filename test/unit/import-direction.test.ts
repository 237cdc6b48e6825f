/**
 * Imports point one way (docs/architecture.md): lint fails when a lower folder imports a higher one, and when the
 * built-in operator imports anything but the public authoring entry. Probe files are written into the
 * folders, linted together by the project's own ESLint (one run), and removed.
 */
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '../..');

const refused: [folder: string, source: string, rule: RegExp][] = [
  [
    'core',
    "export { sameRef } from '../workflows/object-state';",
    /no-restricted-paths: .*core\/ may import only nothing/,
  ],
  [
    'core',
    "export { runWorker } from '../workers/run-worker';",
    /no-restricted-paths: .*core\/ may import only nothing/,
  ],
  ['workflows', "export type { ActivityDeps } from '../activities/create-activities';", /workflows\/ may import only/],
  [
    'activities',
    "export { defineReconciler } from '../reconcilers/define-reconciler';",
    /activities\/ may import only/,
  ],
  [
    'reconcilers',
    "export { createActivities } from '../activities/create-activities';",
    /reconcilers\/ may import only/,
  ],
  ['informer-bridge', "export { builtinOperator } from '../builtin';", /informer-bridge\/ may import only/],
  ['workers', "export { runCli } from '../cli/run-cli';", /workers\/ may import only/],
  ['builtin', "export { finalizerName } from '../activities/kubernetes';", /public authoring API/],
  ['builtin', "export { defineReconciler } from '../reconcilers/define-reconciler';", /No deep imports/],
  ['builtin/app', "export { durationMs } from '../../core/plan';", /public authoring API/],
];
const allowed: [folder: string, source: string][] = [
  ['builtin', "export { defineOperator } from '../reconcilers';"],
  ['workflows', "export { workflowIdFor } from '../core/definitions';"],
  ['runtime', "export { createActivities } from '../activities/create-activities';"],
];

const probes = [...refused.map(([f, s]) => [f, s] as const), ...allowed].map(([folder, source], i) => ({
  folder,
  source,
  file: join(root, folder, `__import_probe_${process.pid}_${i}.ts`),
}));
let messages = new Map<string, string[]>();

beforeAll(() => {
  for (const p of probes) writeFileSync(p.file, `${p.source}\n`);
  try {
    const run = spawnSync(
      process.execPath,
      [join(root, 'node_modules/eslint/bin/eslint.js'), '--format', 'json', ...probes.map((p) => p.file)],
      { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20, timeout: 300_000 },
    );
    const results = JSON.parse(run.stdout) as {
      filePath: string;
      messages: { ruleId: string | null; message: string }[];
    }[];
    messages = new Map(results.map((r) => [r.filePath, r.messages.map((m) => `${m.ruleId ?? 'fatal'}: ${m.message}`)]));
  } finally {
    for (const p of probes) rmSync(p.file, { force: true });
  }
}, 300_000);

describe('import direction', () => {
  it.each(refused.map(([folder, source, rule], i) => ({ folder, source, rule, i })))(
    'given $folder/ importing what it may not ($source), lint fails',
    ({ i, rule }) => {
      expect((messages.get(probes[i]!.file) ?? []).join('\n')).toMatch(rule);
    },
  );

  it.each(allowed.map(([folder, source], i) => ({ folder, source, i: refused.length + i })))(
    'given $folder/ importing what it may ($source), lint passes',
    ({ i }) => {
      expect(messages.get(probes[i]!.file)).toEqual([]);
    },
  );
});
