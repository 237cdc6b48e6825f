// Lint that catches real bugs (CONVENTIONS.md §10), with type information.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';

const bannedInWorkflows = {
  patterns: [
    {
      group: ['zod', 'zod/*', 'pino', 'pino/*', '@kubernetes/client-node', '@kubernetes/client-node/*', 'pg', 'pg/*'],
      message: 'Workflow code must stay deterministic: no zod, pino, pg or Kubernetes client (DESIGN.md).',
    },
    {
      group: ['@temporalio/client', '@temporalio/worker', '@temporalio/activity', '@temporalio/testing'],
      message: 'Workflow code may import only @temporalio/workflow and @temporalio/common.',
    },
  ],
};

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
