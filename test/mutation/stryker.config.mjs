// Mutation testing of homeostat's pure logic (issue 17): `npm run mutation`. Not part of `npm test` or
// CI: it takes minutes on two shared cores (test/mutation/README.md has the latest figures).
// Incremental: mutants whose code and covering tests did not change keep their last result, read from
// the committed stryker-incremental.json, so a rerun after a small change is quick.
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'jest',
  // Not --findRelatedTests (it walks every test file's module graph on each run): the sequencer in
  // jest.config.cjs already keeps only the files holding the mutant's covering tests.
  jest: { projectType: 'custom', configFile: 'test/mutation/jest.config.cjs', enableFindRelatedTests: false },
  coverageAnalysis: 'perTest',
  // Static mutants (module-level values: zod schemas, the error catalog, lookup tables) are left out:
  // each one reloads every related test file and runs all of its tests, the process-spawning ones
  // included (~30 s each on two shared cores, 1-2 h for the 170 of them). Tests that call the schemas
  // and read the tables still check those values; the score is over the code that runs per call.
  ignoreStatic: true,
  // The files issue 17 names: the object workflow's pure state and status decisions and its parts (the
  // entity, step runner, status writer and pass timer, unit-tested with fake effects), plans, the
  // bridge's predicates, queue, merging (delivery) and backoff, the error catalog, CRD generation
  // (crd.ts and its schema files, the CEL rules and RE2 patterns it writes), config parsing.
  mutate: [
    'workflows/object-state.ts',
    'workflows/object-entity.ts',
    'workflows/step-runner.ts',
    'workflows/status-writer.ts',
    'workflows/pass-timer.ts',
    'core/plan.ts',
    'core/status.ts',
    'core/errors.ts',
    'informer-bridge/predicates.ts',
    'informer-bridge/queue.ts',
    'informer-bridge/delivery.ts',
    'informer-bridge/backoff.ts',
    'informer-bridge/config.ts',
    'reconcilers/crd.ts',
    'reconcilers/crd-problems.ts',
    'reconcilers/spec-schema.ts',
    'reconcilers/status-schema.ts',
    'reconcilers/structural-schema.ts',
    'reconcilers/cel.ts',
    'reconcilers/re2-pattern.ts',
    'config/env.ts',
    'config/temporal.ts',
    'api/config.ts',
    'workers/config.ts',
  ],
  // Every test that kills a mutant is recorded, not only the first (jest runs all selected tests
  // anyway): the report then says which tests kill what, e.g. which mutants only newer tests kill.
  disableBail: true,
  // Two cores shared with other work: one test process at a time.
  concurrency: 1,
  timeoutMS: 20_000,
  // The initial run of every unit test with coverage took over Stryker's default 5 minutes when the
  // two cores were shared with four other test runs (load 15).
  dryRunTimeoutMinutes: 20,
  incremental: true,
  incrementalFile: 'test/mutation/stryker-incremental.json',
  // The incremental file is itself a complete JSON report: summarize.mjs writes report.md from it.
  reporters: ['clear-text', 'progress'],
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  // The sandbox copy leaves out what no unit test reads.
  ignorePatterns: [
    'dist',
    'test-artifacts',
    '.devstack',
    'coverage',
    'bench/results',
    'test/mutation/*.json',
    'test/mutation/*.md',
  ],
  // Outside the checkout: jest runs of others in this checkout would otherwise see the sandbox's copy.
  tempDirName: join(tmpdir(), 'homeostat-stryker'),
  cleanTempDir: true,
  thresholds: { high: 80, low: 65, break: null },
};
