import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // Loading the Spectral ruleset and bundling the spec take a second or two each alone; `npm test` runs
    // this beside the server's build and tests on the same cores, so the limits only catch a hang.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: ['default', ['json', { outputFile: '.vitest-report.json' }]],
  },
});
