// Spectral in-process and kept warm, for the designer's loop (tools/dev.mjs). `npm run lint` runs the
// Spectral CLI with the same ruleset (spec/.spectral.yaml) and the same threshold (a warning fails);
// this linter answers the same diagnostics in a fraction of the time on the second and later runs:
// - the ruleset is bundled once (again only when spec/.spectral.yaml or spec/rules/ change);
// - the rules that validate values against schemas (every example against its schema, every enum for
//   duplicates) are most of a run's CPU, and their answer depends only on the value they are given, its
//   options and where it is: it is kept from one run to the next (per rule, keyed by those three) and
//   only what a save changed is validated again. Entries a run did not use are dropped after it.
import fs from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import spectralCore from '@stoplight/spectral-core';
import spectralParsers from '@stoplight/spectral-parsers';
import { bundleAndLoadRuleset } from '@stoplight/spectral-ruleset-bundler/with-loader';

process.env.SCARF_ANALYTICS ??= 'false';
const { Document, Spectral } = spectralCore;
const DiagnosticSeverity = { Error: 0, Warning: 1 }; // @stoplight/types' values
const { Yaml } = spectralParsers;

/** Rules whose function's answer depends on (value, options, path) only: see the header. */
export const MEMOIZED_RULES = ['oas3-valid-media-example', 'oas3-valid-schema-example', 'duplicated-entry-in-enum'];

/**
 * @param {{ rulesetPath: string, cwd?: string }} options cwd: paths in messages are relative to it
 * @returns {{ lint: (specEntry: string) => Promise<{ problems: string[], memo: { hits: number, misses: number } }> }}
 */
export function createSpectralLinter({ rulesetPath, cwd = process.cwd() }) {
  let ruleset;
  let rulesetStamp;
  const memo = new Map(); // key → { results, run }
  let runNo = 0;
  let hits = 0;
  let misses = 0;

  /** mtimes of the ruleset and its functions: a change reloads the ruleset (and empties the memo). */
  async function stampOf() {
    const dir = join(rulesetPath, '..', 'rules');
    const files = [rulesetPath, ...(await readdir(dir).catch(() => [])).map((f) => join(dir, f))];
    const times = await Promise.all(files.map((f) => stat(f).then((s) => `${f}@${s.mtimeMs}`, () => f)));
    return times.join('|');
  }

  async function load() {
    const stamp = await stampOf();
    if (ruleset && stamp === rulesetStamp) return;
    ruleset = await bundleAndLoadRuleset(rulesetPath, { fs, fetch });
    for (const name of MEMOIZED_RULES) {
      for (const then of ruleset.rules[name]?.then ?? []) {
        const fn = then.function;
        then.function = function memoized(targetVal, opts, context) {
          let key;
          try {
            key = `${name}\0${JSON.stringify(targetVal)}\0${JSON.stringify(opts)}\0${JSON.stringify(context.path)}`;
          } catch {
            return fn.call(this, targetVal, opts, context); // a value JSON cannot hold: not memoized
          }
          const hit = memo.get(key);
          if (hit) {
            hits++;
            hit.run = runNo;
            return hit.results;
          }
          misses++;
          const results = fn.call(this, targetVal, opts, context);
          memo.set(key, { results, run: runNo });
          return results;
        };
      }
    }
    rulesetStamp = stamp;
    memo.clear();
  }

  return {
    async lint(specEntry) {
      await load();
      runNo++;
      hits = 0;
      misses = 0;
      // A new Spectral per run: its $ref resolver caches every file it read for good, so a warm one would
      // lint the component files as they were at the first run. The ruleset object is what stays warm.
      const spectral = new Spectral();
      spectral.setRuleset(ruleset);
      const results = await spectral.run(new Document(await readFile(specEntry, 'utf8'), Yaml, specEntry));
      for (const [key, entry] of memo) if (entry.run !== runNo) memo.delete(key);
      // `--fail-severity=warn`: errors and warnings fail, like `npm run lint`.
      const failing = results
        .filter((r) => r.severity <= DiagnosticSeverity.Warning)
        .sort((a, b) => a.severity - b.severity || String(a.source).localeCompare(String(b.source)) || a.range.start.line - b.range.start.line);
      const problems = failing.map((r) => formatResult(r, cwd));
      return { problems, memo: { hits, misses } };
    },
  };
}

/** `file:line:col severity code: message (path)`, with the 1-based line and column editors show. */
export function formatResult(r, cwd = process.cwd()) {
  const file = r.source ? relative(cwd, r.source) : '?';
  const severity = r.severity === DiagnosticSeverity.Error ? 'error' : 'warning';
  const path = r.path?.length ? ` (${r.path.join('.')})` : '';
  return `${file}:${r.range.start.line + 1}:${r.range.start.character + 1} ${severity} ${r.code}: ${r.message}${path}`;
}
