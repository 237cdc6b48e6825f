// Lint that catches real bugs (docs/conventions.md, "Formatting and lint"), with type information.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';

const bannedInWorkflows = {
  patterns: [
    {
      group: ['zod', 'zod/*', 'pino', 'pino/*', '@kubernetes/client-node', '@kubernetes/client-node/*', 'pg', 'pg/*'],
      message: 'Workflow code must stay deterministic: no zod, pino, pg or Kubernetes client (docs/architecture.md).',
    },
    {
      group: ['@temporalio/client', '@temporalio/worker', '@temporalio/activity', '@temporalio/testing'],
      message: 'Workflow code may import only @temporalio/workflow and @temporalio/common.',
    },
  ],
};

// Imports point one way (docs/architecture.md, "Layers and the import rule"): core at the bottom imports nothing
// of ours; workflows, activities, the bridge and the authoring API import only core (and config, the
// edge parsing shared by processes); the runtime folders import those; the built-in operator imports
// only the public authoring entry; devstack stands alone.
const folders = [
  'core',
  'config',
  'workflows',
  'activities',
  'informer-bridge',
  'reconcilers',
  'workers',
  'api',
  'cli',
  'runtime',
  'builtin',
  'testing',
  'devstack',
  'scripts',
  'templates',
];
const mayImport = {
  core: [],
  config: ['core'],
  workflows: ['core'],
  activities: ['core'],
  'informer-bridge': ['core', 'config'],
  reconcilers: ['core'],
  workers: ['core', 'config', 'activities', 'workflows'],
  api: ['core', 'config'],
  cli: [
    'core',
    'config',
    'activities',
    'workflows',
    'informer-bridge',
    'reconcilers',
    'workers',
    'api',
    'builtin',
    'devstack',
    'templates',
  ],
  runtime: ['core', 'config', 'activities', 'workflows', 'informer-bridge', 'reconcilers', 'workers', 'api', 'cli'],
  builtin: ['reconcilers'],
  testing: [
    'core',
    'config',
    'activities',
    'workflows',
    'informer-bridge',
    'reconcilers',
    'workers',
    'api',
    'cli',
    'runtime',
    'devstack',
  ],
  devstack: [],
  // The sample project `homeostat init` copies: public entry points only (checked below).
  templates: ['reconcilers', 'testing'],
  scripts: folders.filter((f) => f !== 'scripts'),
};
const layerZones = Object.entries(mayImport)
  .filter(([t, a]) => folders.some((f) => f !== t && !a.includes(f)))
  .map(([target, allowed]) => ({
    target: `./${target}`,
    from: folders.filter((f) => f !== target && !allowed.includes(f)).map((f) => `./${f}`),
    message: `${target}/ may import only ${allowed.length ? allowed.join(', ') : 'nothing of homeostat'} (imports point one way, docs/architecture.md)`,
  }));

export default tseslint.config(
  {
    ignores: ['node_modules/', 'dist/', 'devstack/go/', '.devstack/', 'coverage/', 'test-artifacts/', 'bench/results/'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [(await import('eslint-import-resolver-typescript')).createTypeScriptImportResolver()],
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      'import-x/no-cycle': ['error', { maxDepth: 10 }],
      'import-x/no-restricted-paths': ['error', { zones: layerZones }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'import-x/no-nodejs-modules': 'error',
      'no-restricted-imports': ['error', bannedInWorkflows],
    },
  },
  {
    // The built-in operator is written as any team's operator is: against the public entry only.
    files: ['builtin/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+(?!reconcilers$)[^.]',
              message: 'The built-in operator imports only the public authoring API (../reconcilers, i.e. homeostat).',
            },
            {
              regex: '^(\\.\\./)+reconcilers/',
              message: 'No deep imports: use the public authoring entry (../reconcilers, i.e. homeostat).',
            },
          ],
        },
      ],
    },
  },
  {
    // The scaffold's sample imports homeostat only as a user does: its imports of ../../../reconcilers
    // and ../../../testing become 'homeostat' and 'homeostat/testing' in the scaffolded project.
    files: ['templates/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./(?!\\.\\./\\.\\./(reconcilers|testing)$)',
              message: 'The sample project imports only the public entries (../../../reconcilers, ../../../testing).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.mjs', '**/*.cjs', '**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['**/*.cjs', 'jest.config.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { module: 'writable', require: 'readonly', __dirname: 'readonly' },
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
);
