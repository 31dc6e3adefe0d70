import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // These need a PostgreSQL server (an outage proxy, several instances or processes on one database).
    exclude: process.env.DATABASE_URL ? [] : ['test/faults.test.ts', 'test/scale-out.test.ts', 'test/processes.test.ts'],
    // Type tests of the handler contract (*.test-d.ts) run through tsc as part of the suite.
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    // A worker process runs many files: its imports, JIT warm-up and compiled validator serve them all
    // (each file still gets its own servers and databases through the harness).
    isolate: false,
    // Each file starts its own server(s); keep the output readable.
    reporters: ['default', ['json', { outputFile: '.vitest-report.json' }]],
  },
});
