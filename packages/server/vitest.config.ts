import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The outage test cuts a PostgreSQL connection; without DATABASE_URL it has nothing to run.
    exclude: process.env.DATABASE_URL ? [] : ['test/faults.test.ts'],
    // Type tests of the handler contract (*.test-d.ts) run through tsc as part of the suite.
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    // Each file starts its own server(s); keep the output readable.
    reporters: ['default', ['json', { outputFile: '.vitest-report.json' }]],
  },
});
