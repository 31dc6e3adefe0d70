/**
 * Repo wiring that breaks silently otherwise:
 * - turbo runs tasks in strict env mode, so a variable missing from `globalPassThroughEnv` never reaches
 *   `npm start` or `npm run bench` (the README promises every configuration variable works there);
 * - the dependency patches in tools/patches must be applied in node_modules (postinstall).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const passThrough = new Set((JSON.parse(read('turbo.json')) as { globalPassThroughEnv: string[] }).globalPassThroughEnv);

describe('turbo passes every variable the service and the benchmark read', () => {
  const configKeys = [...read('packages/server/src/platform/config.ts').matchAll(/^ {2}([A-Z][A-Z0-9_]+): /gm)].map((m) => m[1]!);
  const benchKeys = [...new Set([...read('packages/server/bench/run.mjs').matchAll(/process\.env\.([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]!))];

  it('finds the variables it checks', () => {
    expect(configKeys).toEqual(expect.arrayContaining(['PORT', 'DATABASE_URL', 'RATE_LIMIT_PER_MINUTE']));
    expect(benchKeys).toEqual(expect.arrayContaining(['BENCH_RUNS', 'BENCH_SCENARIOS']));
  });

  it.each([...configKeys, ...benchKeys])('%s is in turbo.json globalPassThroughEnv', (name) => {
    expect(passThrough.has(name)).toBe(true);
  });
});

describe('dependency patches are applied', () => {
  const patches = readdirSync(join(root, 'tools', 'patches')).filter((f) => f.endsWith('.patch'));

  it('there are patches to check', () => {
    expect(patches.length).toBeGreaterThan(0);
  });

  it.each(patches)('%s: every line it adds is in the installed file', (patch) => {
    const files = read(join('tools', 'patches', patch)).split(/^diff --git /m).slice(1);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const target = /^\+\+\+ b\/(.+)$/m.exec(file)![1]!;
      const installed = read(target);
      const added = file.split('\n').filter((l) => l.startsWith('+') && !l.startsWith('+++') && l.trim() !== '+');
      expect(added.length).toBeGreaterThan(0);
      for (const line of added) expect(installed, `${target} lacks: ${line.slice(1)}`).toContain(line.slice(1));
    }
  });
});
