// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', '.data/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.strict,
  {
    rules: {
      'no-console': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // Type-aware rules for the code that ships and the code that deploys it: an `any` that leaks
    // out of a library, or a promise nobody awaits, compiles but breaks at run time.
    files: ['lib/**/*.ts', 'functions/**/*.ts', 'infra/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'error',
      '@typescript-eslint/no-unsafe-member-access': 'error',
      '@typescript-eslint/no-unsafe-call': 'error',
      '@typescript-eslint/no-unsafe-return': 'error',
      '@typescript-eslint/no-unsafe-argument': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    // An Actor is a caller whose session was found live: only lib/auth/session-items.ts, which
    // reads it, may make one. A cast anywhere else would skip that check and still compile.
    files: ['lib/**/*.ts', 'functions/**/*.ts', 'infra/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts', 'test/**/*.ts'],
    ignores: ['lib/auth/session-items.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "TSAsExpression[typeAnnotation.typeName.name='Actor'], TSTypeAssertion[typeAnnotation.typeName.name='Actor']",
          message: 'Only readAsActor and signOutAs (lib/auth/session-items.ts) make an Actor.',
        },
      ],
    },
  },
  {
    // The bundles' one-line CommonJS shims of Node's builtins (infra/endpoint.ts BUILTINS).
    files: ['infra/builtins/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', process: 'readonly' } },
  },
  {
    // The local server and scripts talk to a person on the terminal.
    files: ['infra/local.ts', 'scripts/**', 'bench/**'],
    rules: { 'no-console': 'off' },
  },
);
