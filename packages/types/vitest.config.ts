import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    typecheck: { enabled: true, only: true, include: ['src/**/*.test-d.ts'], tsconfig: './tsconfig.test.json' },
    reporters: ['default', ['json', { outputFile: '.vitest-report.json' }]],
  },
});
