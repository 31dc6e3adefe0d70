#!/usr/bin/env node
// `npm test`: every check of the repo through turbo (spec lint, breaking changes, type tests, every
// package's tests), then the closing summary with the run's wall time (tools/test-summary.mjs).
// The wall time is measured here, around the whole turbo run (builds included), because that is the
// figure a developer waits for and the one docs/testing.md states. Reports of an earlier run are removed
// first, so a run that tested nothing can never be summed up from stale files.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPORT_FILES, summarize } from './test-summary.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
for (const file of REPORT_FILES) rmSync(join(root, file), { force: true });

const started = Date.now();
const turbo = spawnSync('npx', ['turbo', 'run', 'lint', 'breaking', 'typetest', 'test', '--concurrency=4', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
});
const seconds = (Date.now() - started) / 1000;
const ok = summarize({ wallSeconds: seconds });
process.exit(turbo.status === 0 && ok ? 0 : 1);
