// ESLint flat config: the recommended JavaScript and TypeScript rules (not type-checked, so it stays fast),
// React's hook rules for the renderer, and eslint-config-prettier last so no style rule fights Prettier.
// Layout rules (who may import whom) live in .dependency-cruiser.cjs; table ownership in scripts/check-sql-owners.mjs.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import reactHooks from 'eslint-plugin-react-hooks';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const TESTS = ['**/*.test.ts', '**/*.test.tsx', '**/testing/**', 'e2e/**', 'test/**'];

export default defineConfig(
  globalIgnores([
    '**/node_modules/',
    'dist/',
    'release/',
    '.cache/',
    'test-results/',
    'playwright-report/',
    'e2e/screenshots/',
    'bench/results/',
    'test/reliability/reports/',
    'electron/**/testing/models/',
  ]),
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // `_`-prefixed names are deliberately unused (a skipped parameter, a key dropped by destructuring).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // Playwright fixtures take `async ({}, testInfo) => …`: the empty pattern is the API, not a slip.
      'no-empty-pattern': ['error', { allowObjectPatternsAsParameters: true }],
    },
  },
  {
    // CommonJS files (electron-builder's config) load their dependencies with require().
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Test doubles stand in for Electron's and Node's loosely typed APIs; production code keeps the rule.
    files: TESTS,
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The two hook rules every React app keeps. react-hooks 7's other recommended rules (refs,
    // set-state-in-effect, …) check code for the React Compiler, which this app does not use; meeting
    // them means changing when components render, a change of its own rather than a lint fix.
    files: ['renderer/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'error' },
    languageOptions: { globals: { ...globals.browser } },
  },
  prettier,
);
