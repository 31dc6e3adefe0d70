#!/usr/bin/env node
// The contract's changelog: what the working spec changes against the last release, as Markdown, so
// an API designer sees what the next release changes (and `npm run release` records it in
// spec/CHANGELOG.md).
//   npm run changelog                           released contract (spec/released/openapi.json) → working spec
//   node tools/changelog.mjs --out <file>       … written to a file instead of printed
//   --baseline <file>, --base <git-ref>, --old a.yaml --new b.yaml, --spec <entry>: as breaking-changes.mjs
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compareWithBase, parseArgs } from './breaking-changes.mjs';

/** Sections in the order a reader needs them; each safe change goes where its kind says. */
const SECTIONS = [
  ['Breaking changes', (c) => c.severity === 'breaking'],
  ['Limits introduced', (c) => c.severity === 'limit'],
  ['Added', (c) => c.severity === 'safe' && c.kind.endsWith('-added')],
  ['Removed', (c) => c.severity === 'safe' && /-removed$/.test(c.kind)],
  ['Changed', (c) => c.severity === 'safe' && !c.kind.endsWith('-added') && !/-removed$/.test(c.kind)],
];

/**
 * One Markdown section for a diff result.
 * @param {import('./breaking-changes.d.mts').DiffResult} result
 * @param {{ heading: string }} options heading: the section title (`1.1.0 (2026-11-23)`)
 */
export function renderChangelog(result, { heading }) {
  const changes = [...result.breaking, ...(result.limits ?? []), ...result.safe];
  const lines = [`## ${heading}`, ''];
  if (changes.length === 0) {
    lines.push('No change to the contract (descriptions and examples may differ).', '');
    return lines.join('\n');
  }
  for (const [title, belongs] of SECTIONS) {
    const items = changes.filter(belongs).sort((a, b) => a.where.localeCompare(b.where) || a.kind.localeCompare(b.kind));
    if (items.length === 0) continue;
    lines.push(`### ${title}`, '');
    for (const c of items) lines.push(`- ${c.severity === 'breaking' ? '**Breaking:** ' : ''}\`${c.where}\`: ${c.message} (${c.kind})`);
    lines.push('');
  }
  return lines.join('\n');
}

export async function main(argv = process.argv.slice(2), { cwd = process.cwd(), log = console.log } = {}) {
  const args = parseArgs(argv.filter((a, i) => a !== '--out' && argv[i - 1] !== '--out'));
  const outIndex = argv.indexOf('--out');
  const out = outIndex >= 0 ? argv[outIndex + 1] : undefined;
  if (outIndex >= 0 && !out) throw new Error('--out needs a value');
  if (args.help) {
    log('usage: node tools/changelog.mjs [--baseline spec/released/openapi.json | --base <git-ref> | --old a.yaml --new b.yaml] [--out CHANGES.md]');
    return 0;
  }
  const compared = await compareWithBase(args, cwd);
  if ('none' in compared) {
    log(compared.none);
    return 0;
  }
  const { result } = compared;
  const next = result.newVersion === result.oldVersion ? `${result.newVersion} + unreleased changes` : `${result.newVersion} (unreleased)`;
  const text = renderChangelog(result, { heading: `${next}: changes since ${result.oldVersion}` });
  if (out) {
    writeFileSync(resolve(cwd, out), text);
    log(`Changelog written to ${out}`);
  } else log(text);
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (err) => {
      console.error(`changelog: ${err.message ?? err}`);
      process.exit(2);
    },
  );
}
