#!/usr/bin/env node
// `npm run release`: records the working spec as the released contract, the baseline every later
// breaking-change check compares with (tools/breaking-changes.mjs).
//   1. bundles spec/openapi.yaml and compares it with spec/released/openapi.json;
//   2. checks info.version against the version policy (spec/CONVENTIONS.md): breaking changes need a
//      new major, any other contract change (new operation, field, enum value, a bound introduced on a
//      request input) a new minor, descriptions and examples alone a new patch; the version never goes
//      down, and an unchanged spec is not released again;
//   3. writes spec/released/openapi.json and adds the release's section on top of spec/CHANGELOG.md.
// Options: --dry-run (check and print, write nothing), --spec <entry>.
// Exit 0: released (or would be). Exit 1: the version does not fit the changes (the message names the
// version to set). Exit 2: the tool could not run.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleSpec, compareVersions, diffSpecs, parseVersion, releasedSpecPath } from './breaking-changes.mjs';
import { renderChangelog } from './changelog.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const LEVELS = ['none', 'patch', 'minor', 'major'];
const RELEASE_NOTE = 'The contract as released (info.version). Written by `npm run release` (tools/release.mjs); do not edit.';
const CHANGELOG_INTRO = '# Contract changelog\n\nOne section per release of the API contract, written by `npm run release` (tools/release.mjs).\n`npm run changelog` shows what the next release changes.\n';

/** How far `next` moved from `prev`: 'major', 'minor', 'patch' or 'none' (equal or lower). */
export function bumpLevel(prev, next) {
  if (compareVersions(next, prev) <= 0) return 'none';
  if (next[0] > prev[0]) return 'major';
  if (next[1] > prev[1]) return 'minor';
  return 'patch';
}

/** The smallest version `level` above `prev`. */
export function nextVersion(prev, level) {
  if (level === 'major') return `${prev[0] + 1}.0.0`;
  if (level === 'minor') return `${prev[0]}.${prev[1] + 1}.0`;
  return `${prev[0]}.${prev[1]}.${prev[2] + 1}`;
}

const withoutVersion = (doc) => JSON.stringify({ ...doc, info: { ...doc.info, version: undefined }, 'x-released': undefined });

/**
 * What the working spec calls for against the baseline.
 * @returns {{ result: any, required: 'none' | 'patch' | 'minor' | 'major', reason: string }}
 */
export function requiredBump(baselineDoc, workingDoc) {
  const result = diffSpecs(baselineDoc, workingDoc);
  if (result.breaking.length > 0) return { result, required: 'major', reason: `${result.breaking.length} breaking change(s)` };
  const other = result.limits.length + result.safe.length;
  if (other > 0) return { result, required: 'minor', reason: `${other} compatible change(s) to the contract` };
  if (withoutVersion(baselineDoc) !== withoutVersion(workingDoc)) return { result, required: 'patch', reason: 'descriptions or examples changed' };
  return { result, required: 'none', reason: 'nothing changed' };
}

export async function release({ specEntry = join(root, 'spec/openapi.yaml'), dryRun = false, log = console.log, today = new Date() } = {}) {
  const snapshot = releasedSpecPath(specEntry);
  const changelogPath = join(dirname(specEntry), 'CHANGELOG.md');
  const working = await bundleSpec(specEntry);
  const version = parseVersion(working.info?.version);
  if (!version) throw new Error(`info.version "${working.info?.version}" is not a semantic version (MAJOR.MINOR.PATCH)`);
  const date = today.toISOString().slice(0, 10);
  let section;

  if (existsSync(snapshot)) {
    const baseline = JSON.parse(readFileSync(snapshot, 'utf8'));
    const prev = parseVersion(baseline.info?.version);
    if (!prev) throw new Error(`${relative(process.cwd(), snapshot)}: info.version "${baseline.info?.version}" is not a semantic version`);
    const { result, required, reason } = requiredBump(baseline, working);
    if (required === 'none') {
      log(`Nothing to release: the spec is the released contract ${baseline.info.version}.`);
      return 0;
    }
    const got = bumpLevel(prev, version);
    if (LEVELS.indexOf(got) < LEVELS.indexOf(required)) {
      log(
        `Cannot release ${working.info.version} after ${baseline.info.version}: ${reason} call(s) for a new ${required} version. ` +
          `Set info.version in spec/openapi.yaml to ${nextVersion(prev, required)}, run \`npm run generate\`, then \`npm run release\` again.`,
      );
      return 1;
    }
    section = renderChangelog(result, { heading: `${working.info.version} (${date})` });
    log(`Releasing ${working.info.version} after ${baseline.info.version} (${reason}; a ${got} version).`);
  } else {
    section = `## ${working.info.version} (${date})\n\nFirst recorded release: the contract as it stood. Earlier changes were not recorded.\n`;
    log(`No released contract yet: recording ${working.info.version} as the first release.`);
  }

  log('', section);
  if (dryRun) {
    log('(dry run: nothing written)');
    return 0;
  }
  mkdirSync(dirname(snapshot), { recursive: true });
  writeFileSync(snapshot, `${JSON.stringify({ ...working, 'x-released': RELEASE_NOTE }, null, 2)}\n`);
  const previous = existsSync(changelogPath) ? readFileSync(changelogPath, 'utf8') : CHANGELOG_INTRO;
  const at = previous.indexOf('\n## ');
  const head = at >= 0 ? previous.slice(0, at + 1) : `${previous.trimEnd()}\n`;
  const rest = at >= 0 ? previous.slice(at + 1) : '';
  writeFileSync(changelogPath, `${head}\n${section.trimEnd()}\n${rest ? `\n${rest}` : ''}`);
  log(`Wrote ${relative(process.cwd(), snapshot)} and ${relative(process.cwd(), changelogPath)}. Commit both (with the version change).`);
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const specAt = argv.indexOf('--spec');
  const unknown = argv.filter((a, i) => a !== '--dry-run' && a !== '--spec' && argv[i - 1] !== '--spec');
  if (unknown.length > 0) {
    console.error(`release: unknown argument ${unknown[0]} (usage: node tools/release.mjs [--dry-run] [--spec spec/openapi.yaml])`);
    process.exit(2);
  }
  release({ dryRun: argv.includes('--dry-run'), ...(specAt >= 0 ? { specEntry: resolve(argv[specAt + 1]) } : {}) }).then(
    (code) => process.exit(code),
    (err) => {
      console.error(`release: ${err.message ?? err}`);
      process.exit(2);
    },
  );
}
