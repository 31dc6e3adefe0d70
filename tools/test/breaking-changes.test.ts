// tools/breaking-changes.mjs: each crafted spec pair (fixtures/breaking/<case>/{old,new}.yaml) gives
// exactly the changes its expected.json lists; the CLI's exit code follows them and the version;
// and against a git ref it reads the old spec from git without touching the working tree.
import { execFileSync, spawnSync } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleSpec, changeId, diffSpecs, main, verdict } from '../breaking-changes.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '../..');
const fixtures = join(here, 'fixtures/breaking');
const tool = join(repoRoot, 'tools/breaking-changes.mjs');

interface Expected {
  breaking: string[];
  safe: string[];
  fail: boolean;
}

const cases = (await readdir(fixtures, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name).sort();

describe('crafted spec pairs', () => {
  it('cover every kind of change the tool promises to catch', () => {
    expect(cases).toEqual(
      expect.arrayContaining([
        'identical',
        'removed-operation',
        'removed-path',
        'removed-response-field',
        'response-enum-value-removed',
        'request-enum-value-removed',
        'new-required-request-field',
        'narrowed-type',
        'narrowed-length',
        'narrowed-range',
        'response-type-widened',
        'success-status-changed',
        'success-status-removed',
        'required-parameter',
        'safe-changes',
        'major-version',
      ]),
    );
  });

  it.each(cases)('%s: exactly the expected changes', async (name) => {
    const dir = join(fixtures, name);
    const expected = JSON.parse(await readFile(join(dir, 'expected.json'), 'utf8')) as Expected;
    const result = diffSpecs(await bundleSpec(join(dir, 'old.yaml')), await bundleSpec(join(dir, 'new.yaml')));
    expect(result.breaking.map(changeId).sort()).toEqual([...expected.breaking].sort());
    expect(result.safe.map(changeId).sort()).toEqual([...expected.safe].sort());
    expect(verdict(result).fail).toBe(expected.fail);
    for (const change of [...result.breaking, ...result.safe]) expect(change.message.length).toBeGreaterThan(0);
  });

  it('the real spec compared with itself has no change', async () => {
    const doc = await bundleSpec(join(repoRoot, 'spec/openapi.yaml'));
    const result = diffSpecs(doc, structuredClone(doc));
    expect([...result.breaking, ...result.safe]).toEqual([]);
  });
});

describe('command line', () => {
  const run = (...args: string[]) => spawnSync(process.execPath, [tool, ...args], { encoding: 'utf8', cwd: repoRoot });

  it('exits 1 and lists the change for a breaking pair', () => {
    const dir = join(fixtures, 'new-required-request-field');
    const r = run('--old', join(dir, 'old.yaml'), '--new', join(dir, 'new.yaml'));
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/✗ request-required-property-added\s+POST \/customers request body \/country/);
    expect(r.stdout).toMatch(/^FAIL: 2 breaking change\(s\)/m);
  });

  it('exits 0 for safe changes, and for breaking ones with a new major version', () => {
    for (const name of ['safe-changes', 'major-version']) {
      const dir = join(fixtures, name);
      const r = run('--old', join(dir, 'old.yaml'), '--new', join(dir, 'new.yaml'));
      expect(r.status, r.stdout + r.stderr).toBe(0);
    }
  });

  it('--json prints the result for machines', () => {
    const dir = join(fixtures, 'removed-path');
    const r = run('--old', join(dir, 'old.yaml'), '--new', join(dir, 'new.yaml'), '--json');
    expect(r.status).toBe(1);
    const out = JSON.parse(r.stdout) as { breaking: { kind: string }[]; fail: boolean };
    expect(out.breaking.map((c) => c.kind)).toEqual(['path-removed']);
    expect(out.fail).toBe(true);
  });

  it('exits 2 with one line for an unknown ref', () => {
    const r = run('--base', 'no-such-ref-xyz');
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe('breaking-changes: no such git ref: no-such-ref-xyz');
  });
});

describe('against a git ref', () => {
  let repo: string | undefined;
  afterAll(async () => {
    if (repo) await rm(repo, { recursive: true, force: true });
  });
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', ...args], { cwd: repo, encoding: 'utf8' });

  it('compares the working tree with the merge base with main, reading the base from git only', async () => {
    // A throwaway repository holding a copy of the real multi-file spec.
    repo = await mkdtemp(join(tmpdir(), 'payorch-breaking-'));
    await cp(join(repoRoot, 'spec'), join(repo, 'spec'), { recursive: true });
    git('init', '-q', '-b', 'main');
    git('add', '.');
    git('commit', '-q', '-m', 'spec');
    git('checkout', '-q', '-b', 'feature');

    const lines: string[] = [];
    expect(await main([], { cwd: repo, log: (l) => lines.push(l) })).toBe(0);
    expect(lines.join('\n')).toMatch(/^Comparing the spec with merge base with main/);

    // Break a response: Health loses its `status` field (a component file, reached through $ref).
    const file = join(repo, 'spec/components/schemas/Health.yaml');
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace(/^required:.*\n/m, '').replace(/^ {2}status:\n(?: {4}.*\n)+/m, ''));
    const before = git('status', '--porcelain');

    lines.length = 0;
    expect(await main([], { cwd: repo, log: (l) => lines.push(l) })).toBe(1);
    const out = lines.join('\n');
    expect(out).toMatch(/✗ response-property-removed\s+GET \/healthz 200 response body \/status/);
    expect(out).toMatch(/✗ response-property-removed\s+GET \/readyz 200 response body \/status/);

    // An explicit --base gives the same answer; the working tree and index are untouched.
    lines.length = 0;
    expect(await main(['--base', 'main'], { cwd: repo, log: (l) => lines.push(l) })).toBe(1);
    expect(git('status', '--porcelain')).toBe(before);
  });
});
