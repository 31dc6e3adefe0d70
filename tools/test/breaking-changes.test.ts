// tools/breaking-changes.mjs: each crafted spec pair (fixtures/breaking/<case>/{old,new}.yaml) gives
// exactly the changes its expected.json lists; the CLI's exit code follows them and the version. In a
// scratch repository, as CI runs it on a fresh clone of `main`: a committed breaking change fails the
// check against the released contract (spec/released/openapi.json) until info.version's major goes
// up, and `npm run release` moves the baseline. Against a git ref it reads the old spec from git
// without touching the working tree.
import { execFileSync, spawnSync } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleSpec, changeId, diffSpecs, main, verdict } from '../breaking-changes.mjs';
import { renderChangelog } from '../changelog.mjs';
import { bumpLevel, nextVersion, release, requiredBump } from '../release.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '../..');
const fixtures = join(here, 'fixtures/breaking');
const tool = join(repoRoot, 'tools/breaking-changes.mjs');

interface Expected {
  breaking: string[];
  limits?: string[];
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
        'limit-added',
        'limit-added-minor',
        'webhook-changes',
      ]),
    );
  });

  it.each(cases)('%s: exactly the expected changes', async (name) => {
    const dir = join(fixtures, name);
    const expected = JSON.parse(await readFile(join(dir, 'expected.json'), 'utf8')) as Expected;
    const result = diffSpecs(await bundleSpec(join(dir, 'old.yaml')), await bundleSpec(join(dir, 'new.yaml')));
    expect(result.breaking.map(changeId).sort()).toEqual([...expected.breaking].sort());
    expect(result.limits.map(changeId).sort()).toEqual([...(expected.limits ?? [])].sort());
    expect(result.safe.map(changeId).sort()).toEqual([...expected.safe].sort());
    expect(verdict(result).fail).toBe(expected.fail);
    for (const change of [...result.breaking, ...result.limits, ...result.safe]) expect(change.message.length).toBeGreaterThan(0);
  });

  it('the real spec compared with itself has no change', async () => {
    const doc = await bundleSpec(join(repoRoot, 'spec/openapi.yaml'));
    const result = diffSpecs(doc, structuredClone(doc));
    expect([...result.breaking, ...result.limits, ...result.safe]).toEqual([]);
  });
});

describe('version policy', () => {
  const result = (breaking: number, limits: number, oldVersion: string, newVersion: string) => {
    const change = { kind: 'k', severity: 'breaking' as const, where: 'w', message: 'm' };
    return { breaking: Array(breaking).fill(change), limits: Array(limits).fill({ ...change, severity: 'limit' as const }), safe: [], oldVersion, newVersion };
  };
  it.each([
    { name: 'breaking, same version', r: result(1, 0, '1.0.0', '1.0.0'), fail: true },
    { name: 'breaking, new minor', r: result(1, 0, '1.0.0', '1.1.0'), fail: true },
    { name: 'breaking, new major', r: result(1, 0, '1.4.2', '2.0.0'), fail: false },
    { name: 'limit, same version', r: result(0, 1, '1.0.0', '1.0.0'), fail: true },
    { name: 'limit, new patch', r: result(0, 1, '1.0.0', '1.0.1'), fail: true },
    { name: 'limit, new minor', r: result(0, 1, '1.0.0', '1.1.0'), fail: false },
    { name: 'limit, new major', r: result(0, 1, '1.3.0', '2.0.0'), fail: false },
    { name: 'nothing, version lowered', r: result(0, 0, '1.2.0', '1.1.9'), fail: true },
    { name: 'nothing, same version', r: result(0, 0, '1.2.0', '1.2.0'), fail: false },
  ])('$name → fail: $fail', ({ r, fail }) => {
    expect(verdict(r).fail).toBe(fail);
  });

  it('release asks for the bump the changes call for', async () => {
    const dir = join(fixtures, 'safe-changes');
    const old = await bundleSpec(join(dir, 'old.yaml'));
    expect(requiredBump(old, await bundleSpec(join(fixtures, 'removed-path/new.yaml'))).required).toBe('major');
    expect(requiredBump(old, await bundleSpec(join(dir, 'new.yaml'))).required).toBe('minor');
    expect(requiredBump(await bundleSpec(join(fixtures, 'limit-added/old.yaml')), await bundleSpec(join(fixtures, 'limit-added/new.yaml'))).required).toBe('minor');
    const reworded = structuredClone(old) as { info: { description?: string } };
    reworded.info.description = 'Clearer words.';
    expect(requiredBump(old, reworded).required).toBe('patch');
    expect(requiredBump(old, structuredClone(old)).required).toBe('none');
    expect([bumpLevel([1, 2, 3], [2, 0, 0]), bumpLevel([1, 2, 3], [1, 3, 0]), bumpLevel([1, 2, 3], [1, 2, 4]), bumpLevel([1, 2, 3], [1, 2, 3])]).toEqual([
      'major',
      'minor',
      'patch',
      'none',
    ]);
    expect([nextVersion([1, 2, 3], 'major'), nextVersion([1, 2, 3], 'minor'), nextVersion([1, 2, 3], 'patch')]).toEqual(['2.0.0', '1.3.0', '1.2.4']);
  });
});

describe('changelog', () => {
  it('groups the changes, breaking ones marked, in Markdown', async () => {
    const result = diffSpecs(await bundleSpec(join(fixtures, 'webhook-changes/old.yaml')), await bundleSpec(join(fixtures, 'webhook-changes/new.yaml')));
    const text = renderChangelog(result, { heading: '2.0.0 (2026-11-23)' });
    expect(text).toMatch(/^## 2\.0\.0 \(2026-11-23\)\n\n### Breaking changes\n\n/);
    expect(text).toContain('- **Breaking:** `WEBHOOK customer.deleted`: event customer.deleted no longer sent (webhook-removed)');
    expect(text).toMatch(/### Added\n\n- `WEBHOOK customer.created payload \/created_at`: new field created_at \(response-property-added\)\n- `WEBHOOK customer.updated`/);
    expect(text).not.toContain('### Limits introduced');
  });

  it('`npm run changelog` prints the changes from the baseline to the working spec', () => {
    const dir = join(fixtures, 'limit-added');
    const r = spawnSync(process.execPath, [join(repoRoot, 'tools/changelog.mjs'), '--old', join(dir, 'old.yaml'), '--new', join(dir, 'new.yaml')], {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^## 1\.0\.0 \+ unreleased changes: changes since 1\.0\.0\n\n### Limits introduced\n/);
    expect(r.stdout).toContain('- `POST /customers request body /tags`: maxItems none → 10 (none was written) (request-limit-added)');
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

  it('exits 1 for a bound introduced without a new minor version, and says so', () => {
    const dir = join(fixtures, 'limit-added');
    const r = run('--old', join(dir, 'old.yaml'), '--new', join(dir, 'new.yaml'));
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/! request-limit-added\s+POST \/customers request body \/tags — maxItems none → 10/);
    expect(r.stdout).toMatch(/^FAIL: 3 limit\(s\) introduced without a new minor version/m);
  });

  it('exits 2 with one line for an unknown ref', () => {
    const r = run('--base', 'no-such-ref-xyz');
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe('breaking-changes: no such git ref: no-such-ref-xyz');
  });
});

describe('in a repository, as CI runs it on main', () => {
  let repo: string | undefined;
  const clones: string[] = [];
  afterAll(async () => {
    for (const dir of [repo, ...clones]) if (dir) await rm(dir, { recursive: true, force: true });
  });
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', ...args], { cwd, encoding: 'utf8' });
  const commit = (message: string) => {
    git(repo!, 'add', '-A');
    git(repo!, 'commit', '-q', '-m', message);
  };
  /** `npm run breaking` in a fresh clone of main (no tags, no working state, nothing but what was committed). */
  const ciCheck = async () => {
    const clone = await mkdtemp(join(tmpdir(), 'payorch-breaking-clone-'));
    clones.push(clone);
    git(clone, 'clone', '-q', '--no-tags', '--branch', 'main', repo!, '.');
    return spawnSync(process.execPath, [tool], { cwd: clone, encoding: 'utf8' });
  };
  const edit = async (file: string, change: (text: string) => string) => {
    const path = join(repo!, file);
    const before = await readFile(path, 'utf8');
    const after = change(before);
    expect(after, `${file} unchanged`).not.toBe(before);
    await writeFile(path, after);
  };

  it('a committed breaking change fails until the major goes up; a release moves the baseline', async () => {
    // A throwaway repository holding a small multi-file spec (a component reached through $ref, as in
    // spec/; the real spec is checked by `npm run breaking` in the same npm test), released once.
    repo = await mkdtemp(join(tmpdir(), 'payorch-breaking-'));
    await cp(join(repoRoot, 'tools/test/fixtures/scratch-spec'), join(repo, 'spec'), { recursive: true });
    expect(await release({ specEntry: join(repo, 'spec/openapi.yaml'), log: () => {}, today: new Date('2026-11-23T12:00:00Z') })).toBe(0);
    const v = /^ {2}version: (\S+)$/m.exec(await readFile(join(repo, 'spec/openapi.yaml'), 'utf8'))![1]!;
    const [maj, min] = v.split('.').map(Number) as [number, number];
    const minor = `${maj}.${min + 1}.0`;
    const major = `${maj + 1}.0.0`;
    const esc = (version: string) => version.replaceAll('.', '\\.');
    git(repo, 'init', '-q', '-b', 'main');
    commit('spec as released');
    let r = await ciCheck();
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^Comparing the spec with the released contract ${esc(v)} \\(spec/released/openapi\\.json\\)`));

    // Customer loses `gender` (a component file, reached through $ref), committed on main.
    await edit('spec/components/schemas/Customer.yaml', (t) => t.replace(' gender,', '').replace(/^ {2}gender:\n(?: {4}.*\n)+/m, ''));
    commit('Remove gender from Customer');
    r = await ciCheck();
    expect(r.status, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toMatch(/✗ response-property-removed\s+POST \/customers 201 response body \/gender — field gender removed/);
    expect(r.stdout).toMatch(new RegExp(`^FAIL: \\d+ breaking change\\(s\\) without a new major version \\(info\\.version ${esc(v)} → ${esc(v)}\\)`, 'm'));

    // A new minor is not enough; a new major is.
    await edit('spec/openapi.yaml', (t) => t.replace(/^( {2}version:) .*$/m, `$1 ${minor}`));
    commit(minor);
    expect(await main([], { cwd: repo, log: () => {} })).toBe(1);
    await edit('spec/openapi.yaml', (t) => t.replace(/^( {2}version:) .*$/m, `$1 ${major}`));
    commit(major);
    r = await ciCheck();
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^Breaking changes accepted: the major version went up \\(info\\.version ${esc(v)} → ${esc(major)}\\)`, 'm'));

    // Against a git ref the old spec is read from git only: the working tree and index stay untouched.
    const lines: string[] = [];
    const status = git(repo, 'status', '--porcelain');
    expect(await main(['--base', 'HEAD~3'], { cwd: repo, log: (l) => lines.push(l) })).toBe(0);
    expect(lines.join('\n')).toMatch(/✗ response-property-removed\s+POST \/customers 201 response body \/gender/);
    expect(git(repo, 'status', '--porcelain')).toBe(status);

    // `npm run release` records the new major: the changelog says what broke, and the baseline moves.
    const log: string[] = [];
    expect(await release({ specEntry: join(repo, 'spec/openapi.yaml'), log: (...l: string[]) => log.push(l.join(' ')), today: new Date('2026-11-23T12:00:00Z') })).toBe(0);
    const changelog = await readFile(join(repo, 'spec/CHANGELOG.md'), 'utf8');
    expect(changelog.indexOf(`## ${major} (2026-11-23)`)).toBeGreaterThanOrEqual(0);
    expect(changelog.indexOf(`## ${major} (2026-11-23)`)).toBeLessThan(changelog.indexOf(`## ${v} (`));
    expect(changelog).toContain('- **Breaking:** `POST /customers 201 response body /gender`: field gender removed (response-property-removed)');
    commit(`Release ${major}`);
    r = await ciCheck();
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^No breaking change \\(info\\.version ${esc(major)} → ${esc(major)}\\)`, 'm'));

    // Releasing again: nothing to release. A new field without a new minor: refused, naming the version.
    expect(await release({ specEntry: join(repo, 'spec/openapi.yaml'), log: (...l: string[]) => log.push(l.join(' ')) })).toBe(0);
    expect(log.at(-1)).toBe(`Nothing to release: the spec is the released contract ${major}.`);
    await edit('spec/components/schemas/Customer.yaml', (t) => t.replace(/^properties:\n/m, "properties:\n  preferred_language:\n    type: [string, 'null']\n    maxLength: 35\n"));
    expect(await release({ specEntry: join(repo, 'spec/openapi.yaml'), log: (...l: string[]) => log.push(l.join(' ')) })).toBe(1);
    expect(log.at(-1)).toMatch(
      new RegExp(`^Cannot release ${esc(major)} after ${esc(major)}: \\d+ compatible change\\(s\\) to the contract call\\(s\\) for a new minor version\\. Set info\\.version in spec/openapi\\.yaml to ${esc(`${maj + 1}.1.0`)}`),
    );
  }, 120_000); // a hang detector: a dozen bundles of a small spec and git clones

  it('without a release baseline the check cannot pass (exit 2)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'payorch-breaking-nobase-'));
    clones.push(dir);
    await cp(join(repoRoot, 'spec'), join(dir, 'spec'), { recursive: true, filter: (src) => !src.includes('released') });
    const r = spawnSync(process.execPath, [tool, '--spec', join(dir, 'spec/openapi.yaml')], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^breaking-changes: no release baseline at .*spec\/released\/openapi\.json: run `npm run release`/);
  });
});
