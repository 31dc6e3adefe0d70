/**
 * Repo wiring that breaks silently otherwise:
 * - turbo runs tasks in strict env mode, so a variable missing from `globalPassThroughEnv` never reaches
 *   `npm start` or `npm run bench` (the README promises every configuration variable works there);
 * - the dependency patches in tools/patches must be applied in node_modules (postinstall);
 * - package-lock.json must say what `npm install` derives from each package.json: `npm ci` checks only
 *   the dependency ranges, so a stale entry (an install script added by hand: no `hasInstallScript`)
 *   passes CI and then `npm install` rewrites the lock on every clean clone;
 * - no scratch file (`*.tmp.*`, e.g. `measure.tmp.mjs`) is committed: experiments stay out of the tree.
 */
import { execFileSync } from 'node:child_process';
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

describe('package-lock.json agrees with every package.json', () => {
  type Manifest = Record<string, unknown> & { scripts?: Record<string, string>; workspaces?: string[] };
  const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, Record<string, unknown>> };
  const rootManifest = JSON.parse(read('package.json')) as Manifest;
  const places = ['', ...(rootManifest.workspaces ?? [])];
  // The fields npm copies from a workspace's (or the root's) package.json into its lock entry.
  const copied = ['name', 'version', 'license', 'bin', 'engines', 'dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies', 'workspaces'];

  it.each(places)('"%s"', (place) => {
    const manifest = JSON.parse(read(join(place, 'package.json'))) as Manifest;
    const installScript = ['preinstall', 'install', 'postinstall'].some((s) => manifest.scripts?.[s] !== undefined);
    const expected = { ...Object.fromEntries(copied.filter((k) => manifest[k] !== undefined).map((k) => [k, manifest[k]])), ...(installScript ? { hasInstallScript: true } : {}) };
    const entry = lock.packages[place] ?? {};
    const actual = Object.fromEntries(Object.entries(entry).filter(([k]) => copied.includes(k) || k === 'hasInstallScript'));
    expect(actual, 'run `npm install` and commit package-lock.json').toEqual(expected);
  });
});

describe('no scratch files are committed', () => {
  // `fmt.tmp.mjs`, `notes.tmp.md`, `a/b/x.tmp.ts`: a `.tmp.` in the file's own name.
  const isScratch = (path: string) => /(^|\/)[^/]*\.tmp\.[^/]+$/.test(path);

  it('the pattern knows a scratch file from a real one', () => {
    expect(['packages/server/measure.tmp.mjs', 'fmt.tmp.mjs', 'a/b.tmp.d/c.tmp.ts'].every(isScratch)).toBe(true);
    expect(['packages/server/src/tmp.ts', 'tmp.d/c.ts', 'a.tmp', 'tmp/x.mjs'].some(isScratch)).toBe(false);
  });

  it('git tracks no *.tmp.* file', () => {
    const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
    expect(tracked.length).toBeGreaterThan(100);
    expect(tracked.filter(isScratch), 'remove the experiment (or give it a real name and a place)').toEqual([]);
  });
});
