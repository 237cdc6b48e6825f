// The jest configuration Stryker runs (test/mutation/stryker.config.mjs): the `unit` project of the
// repository's jest.config.js (no servers), flattened, because Stryker's jest runner merges its options
// into a single-project configuration. Left out: tests that cover none of the mutated files and only
// cost time (the replay test bundles the workflow code with webpack, outside Stryker's instrumentation;
// the import-direction test runs ESLint).
// eslint-disable-next-line @typescript-eslint/no-require-imports -- jest reads this CommonJS file itself
const { projects } = require('../../jest.config.js');
const { displayName: _unit, ...unit } = projects.find((p) => p.displayName === 'unit');

/** @type {import('jest').Config} */
module.exports = {
  ...unit,
  rootDir: '../..',
  testSequencer: '<rootDir>/test/mutation/covering-files-sequencer.cjs',
  watchman: false,
  testPathIgnorePatterns: [
    '/node_modules/',
    '/test/unit/replay\\.test\\.ts$',
    '/test/unit/import-direction\\.test\\.ts$',
  ],
};
