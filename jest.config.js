// Three projects: unit (pure logic, no servers), integration (one real stack per run, started by
// test/support/global-setup.ts) and faults (test/faults/: each file starts a stack of its own, because
// its faults stop and restart the servers). @kubernetes/client-node and its ESM-only dependencies are
// transpiled to CommonJS by ts-jest, because jest's module system does not use Node's require(esm).
const esmPackages = [
  '@kubernetes/client-node',
  'openid-client',
  'oauth4webapi',
  'jose',
  '@apidevtools/json-schema-ref-parser',
  'cookie',
];
const transform = {
  '^.+\\.[cm]?[tj]s$': ['ts-jest', { tsconfig: '<rootDir>/test/tsconfig.jest.json' }],
};
const transformIgnorePatterns = [`/node_modules/(?!(${esmPackages.join('|')})/)`];
const common = {
  testEnvironment: 'node',
  transform,
  transformIgnorePatterns,
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
};

/** @type {import('jest').Config} */
module.exports = {
  // The Temporal SDK's native runtime and child processes of fault tests can keep the event loop
  // alive after the last test; every test cleans up what it starts, so exit when the run is done.
  forceExit: true,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/test/support/integration-setup.ts'],
      slowTestThreshold: 30,
    },
    {
      ...common,
      displayName: 'faults',
      testMatch: ['<rootDir>/test/faults/**/*.test.ts'],
      slowTestThreshold: 300,
    },
  ],
};
