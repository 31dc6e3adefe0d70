import { defineConfig } from 'vitest/config';
import LongFilesFirst from './test/support/long-files-first.js';

// These need a PostgreSQL server (an outage proxy, several instances or processes on one database, two
// transactions interleaved).
const POSTGRES_ONLY = ['test/faults.test.ts', 'test/scale-out.test.ts', 'test/processes.test.ts', 'test/lock-order.test.ts'];
// Files whose assertions are about time or the machine's capacity (several server processes and a
// database on two cores, a /healthz answered within 100 ms, a delivery within 2 s): they run alone,
// after everything else, so a neighbour's CPU cannot decide them.
const ALONE = [...POSTGRES_ONLY, 'test/validation-bounds.test.ts', 'test/webhooks-fairness.test.ts', 'test/reconciliation-fairness.test.ts'];
const skipped = process.env.DATABASE_URL ? [] : POSTGRES_ONLY;

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // A worker process runs many files: its imports, JIT warm-up and compiled validator serve them all
    // (each file still gets its own servers and databases through the harness).
    isolate: false,
    // Each file starts its own server(s); keep the output readable.
    reporters: ['default', 'json'],
    // `npm run typetest` writes its own (--outputFile.json): the two run at the same time under turbo.
    outputFile: { json: '.vitest-report.json' },
    // The slowest files start first (a fresh clone has no timings of an earlier run to go by).
    sequence: { sequencer: LongFilesFirst },
    projects: [
      // Type tests of the handler contract (*.test-d.ts) through tsc. Vitest runs type tests after every
      // other group (~15 s of one core at the end), so `npm test` runs this project as its own turbo task
      // (`typetest`), alongside the others; `npx vitest run` here still runs all three projects.
      {
        test: {
          name: 'types',
          root: import.meta.dirname,
          typecheck: { enabled: true, only: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
        },
      },
      {
        extends: true,
        test: { name: 'server', include: ['test/**/*.test.ts'], exclude: [...ALONE], maxWorkers: 3, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: 'alone',
          include: ALONE.filter((f) => !skipped.includes(f)),
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
