#!/usr/bin/env node
// Adds up the vitest JSON reports every package writes (.vitest-report.json, and the server's
// .vitest-types-report.json) and prints one closing line, "Tests: N passed, N failed", so CI shows the
// whole run's count, with the slowest files and, when `npm test` (tools/test-run.mjs) ran it, the wall
// time. Run alone, exits 1 if any test failed or no report exists (a run that tested nothing must not
// look green).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const packages = ['tools', 'packages/types', 'packages/server', 'packages/client'];
// .vitest-types-report.json: the server's type tests, run by turbo as their own task (typetest).
export const REPORT_FILES = packages.flatMap((p) => ['.vitest-report.json', '.vitest-types-report.json'].map((f) => join(p, f)));

const minutes = (s) => {
  const whole = Math.round(s);
  return `${Math.floor(whole / 60)} min ${whole % 60} s`;
};

/** Prints the summary; true when every report passed and there was at least one. */
export function summarize({ wallSeconds } = {}) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  let reports = 0;
  const files = [];
  for (const file of REPORT_FILES.map((f) => join(root, f))) {
    if (!existsSync(file)) continue;
    const r = JSON.parse(readFileSync(file, 'utf8'));
    reports += 1;
    passed += r.numPassedTests ?? 0;
    failed += r.numFailedTests ?? 0;
    skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
    for (const t of r.testResults ?? []) if (t.endTime && t.startTime) files.push({ name: relative(root, t.name), seconds: (t.endTime - t.startTime) / 1000 });
    console.log(`${relative(root, dirname(file)) || '.'}: ${r.numPassedTests ?? 0} passed, ${r.numFailedTests ?? 0} failed`);
  }
  if (reports === 0) {
    console.error('no vitest reports found: nothing was tested');
    return false;
  }
  const slowest = files.sort((a, b) => b.seconds - a.seconds).slice(0, 8);
  if (slowest.length) console.log(`slowest files: ${slowest.map((f) => `${f.name} ${f.seconds.toFixed(0)} s`).join(', ')}`);
  if (wallSeconds !== undefined) console.log(`npm test wall time: ${minutes(wallSeconds)} (${wallSeconds.toFixed(0)} s)`);
  console.log(`Tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
  return failed === 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.exit(summarize() ? 0 : 1);
