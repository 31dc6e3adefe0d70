#!/usr/bin/env node
// Adds up the vitest JSON reports every package writes (.vitest-report.json, and the server's
// .vitest-types-report.json) and prints one closing line, "Tests: N passed, N failed", so CI shows the
// whole run's count. Exits 1 if any test failed or no report exists (a run that tested nothing must not
// look green).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const packages = ['tools', 'packages/types', 'packages/server', 'packages/client'];
let passed = 0;
let failed = 0;
let skipped = 0;
let reports = 0;
// .vitest-types-report.json: the server's type tests, run by turbo as their own task (typetest).
for (const [pkg, file] of packages.flatMap((p) => ['.vitest-report.json', '.vitest-types-report.json'].map((f) => [p, join(root, p, f)]))) {
  if (!existsSync(file)) continue;
  const r = JSON.parse(readFileSync(file, 'utf8'));
  reports += 1;
  passed += r.numPassedTests ?? 0;
  failed += r.numFailedTests ?? 0;
  skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  console.log(`${pkg}: ${r.numPassedTests ?? 0} passed, ${r.numFailedTests ?? 0} failed`);
}
if (reports === 0) {
  console.error('no vitest reports found: nothing was tested');
  process.exit(1);
}
console.log(`Tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
