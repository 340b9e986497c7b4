// ESLint (typescript-eslint's recommended rules) over the sources, tests and benchmarks; `npm test` runs it.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.bench/', 'data/', 'test/fixtures/feeds/', 'docs/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      // `_`-prefixed names are placeholders a signature or a destructuring needs.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Control characters are exactly what several patterns look for (NUL and C0 checks on user input).
      'no-control-regex': 'off',
    },
  },
  {
    // Migrations take Kysely<any>, as Kysely advises: a migration must not depend on today's table types.
    files: ['src/db/migrate.ts', 'src/db/migrations/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Tests read answers of any shape (parsed JSON bodies) and poke at internals on purpose.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    files: ['**/*.cjs', '**/*.mjs'],
    languageOptions: { globals: { module: 'writable', require: 'readonly', process: 'readonly', console: 'readonly' } },
  },
);
