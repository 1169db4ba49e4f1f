// Lint: typescript-eslint's recommended rules, and the type-aware ones that catch a promise nobody
// awaits or one passed where a callback's result is ignored (in the hub that is a lost ACK).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// node:test's describe/test return promises the runner itself awaits.
const nodeTest = ['describe', 'test', 'it', 'suite', 'before', 'after', 'beforeEach', 'afterEach'].map((name) => ({
  from: 'package',
  package: 'node:test',
  name,
}));

export default tseslint.config(
  { ignores: ['dist/', 'out/', 'node_modules/', 'test/vscode/.vscode-test/', '.test-artifacts/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/no-floating-promises': ['error', { allowForKnownSafeCalls: nodeTest }],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/require-await': 'error',
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // The two bundles loaded on first use (the hub client, matrix-js-sdk) are required lazily so
      // activation does not parse them.
      '@typescript-eslint/no-require-imports': ['error', { allow: ['^\\./hubClient$', 'matrix'] }],
    },
  },
  {
    // Tests read parsed JSON answers whose shape the assertion itself checks, and their fakes
    // implement async interfaces with synchronous bodies.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/require-await': 'off' },
  },
  { files: ['**/*.mjs'], languageOptions: { globals: globals.node } },
  { files: ['media/**/*.js'], languageOptions: { globals: globals.browser } },
  {
    files: ['test/vscode/installed/**/*.js', 'test/vscode/sample/**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: globals.node },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
