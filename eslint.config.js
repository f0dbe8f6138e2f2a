import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // The dashboard's API types are generated (npm run web:api) and checked against the served document.
  { ignores: ['dist/', 'node_modules/', 'data/', 'coverage/', 'bench/results/', 'test-results/', 'web/src/api/openapi.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  {
    // STYLE rules 8 and 9: configuration comes from config.ts only; logs go through pino.
    files: ['src/**/*.ts'],
    ignores: ['src/config.ts', 'src/server.ts', 'src/worker.ts', 'src/cli/ferry.ts'],
    rules: {
      'no-console': 'error',
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read configuration in src/config.ts' }],
    },
  },
  {
    // The bar (STYLE, "Small files"): no function over 60 lines (blank lines and comments not counted), no file
    // over 300 lines. An exception goes in a block after this one, each file named with a one-line reason.
    files: ['src/**/*.ts', 'web/src/**/*.ts', 'web/src/**/*.tsx'],
    rules: {
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
      'max-lines': ['error', { max: 300 }],
    },
  },
  {
    // STYLE (The dashboard): web/ imports nothing from the server (web/tsconfig.json's rootDir refuses it too)
    // and runs in the browser only.
    files: ['web/src/**/*.ts', 'web/src/**/*.tsx'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { regex: '(^|/)src/', message: 'The dashboard imports nothing from the server; use the generated API types (web/src/api).' },
          { regex: '^node:', message: 'The dashboard runs in the browser.' },
        ],
      }],
      'no-console': 'error',
    },
  },
);
