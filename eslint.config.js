import tseslint from 'typescript-eslint';
import promises from './eslint-rules/promises.js';

// ESLint guards what the compiler does not: a promise dropped on the floor or
// misused (typescript-eslint's rules, with the compiler's types, and yoke's
// own in eslint-rules/ for the misuses those let through), and an import or
// variable nothing reads. `npm test`
// runs it (test/lint.test.ts). Formatting is not its business.
export default tseslint.config(
  { ignores: ['node_modules/**', 'coverage/**', '**/*.d.ts', 'test/fixtures/**'] },
  {
    files: ['src/**/*.ts', 'sandbox/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin, yoke: promises },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      'yoke/promise-value': 'error',
      'yoke/promise-as-any': 'error',
      'yoke/expect-promise': 'error',
      'yoke/store-call-voided': 'error',
      // An import or variable nothing reads is left over from a change: it goes.
      '@typescript-eslint/no-unused-vars': ['error', { args: 'none', caughtErrors: 'none', ignoreRestSiblings: true, varsIgnorePattern: '^_' }],
    },
  },
);
