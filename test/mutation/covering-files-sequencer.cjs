// A jest test sequencer for Stryker runs only (test/mutation/jest.config.cjs). Stryker's jest runner
// runs a mutant's covering tests by name (--testNamePattern) among the test files related to the
// mutated file, and jest loads every one of those files even when it runs none of their tests; in
// this repository loading one costs seconds (the Kubernetes and Temporal clients), which made a run
// take hours on two shared cores. So, when a name pattern is given, only files with a top-level
// `describe` whose title starts one of the named tests are kept (a test's name is its describe titles
// and its own, joined by spaces; every unit test file puts its tests in top-level describes).
// Without a pattern (the initial run, static mutants) every file is kept.
/* eslint-disable @typescript-eslint/no-require-imports -- jest loads a sequencer with require() */
const { readFileSync } = require('node:fs');
const Sequencer = require('@jest/test-sequencer').default;

function topLevelDescribeTitles(path) {
  const text = readFileSync(path, 'utf8');
  return [...text.matchAll(/^describe(?:\.each\(.*?\))?\((['"`])(.*?)\1/gm)].map((m) => m[2]);
}

class CoveringFilesSequencer extends Sequencer {
  constructor(options) {
    super(options);
    this.pattern = options.globalConfig.testNamePattern;
  }

  sort(tests) {
    const pattern = this.pattern;
    if (!pattern) return super.sort(tests);
    const kept = tests.filter((test) => {
      const titles = topLevelDescribeTitles(test.path);
      // A file whose describes this cannot read is kept: running too much is slow, never wrong.
      if (titles.length === 0) return true;
      // The pattern is `(<escaped name>)|(<escaped name>)…`: a name starts right after `(` at the
      // start or after `|`. Compared unescaped: the runner escapes more than escapeRegExp does (a
      // `-` in `step-runner.ts` was escaped, so files whose titles have one were all left out).
      const plain = pattern.replace(/\\(.)/g, '$1');
      return titles.some((title) => plain.startsWith(`(${title} `) || plain.includes(`|(${title} `));
    });
    return super.sort(kept);
  }
}

module.exports = CoveringFilesSequencer;
