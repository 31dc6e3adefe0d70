import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // Loading the Spectral ruleset and bundling the spec take seconds alone (comparing the whole spec with
    // itself ~10 s); `npm test` runs this beside the server's build and tests on the same cores, where one
    // took 137 s on a loaded two-core machine, so the limits only catch a hang.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    reporters: ['default', ['json', { outputFile: '.vitest-report.json' }]],
  },
});
