/**
 * The card rules the hosted form checks in the browser before anything is sent: the very `card-validator`
 * (with `credit-card-type`) the vault validates with on the server (vault/card-validation.ts), so the
 * form and the API never disagree on a brand's ranges, lengths or security-code size.
 *
 * Both packages ship as a couple of dozen small CommonJS files whose only requires are relative paths
 * and each other. Rather than a bundler dependency and a build step, this wraps those files, read from
 * node_modules once per process, in a minimal module table (one function per file) and exposes the
 * result as `window.payorchCardRules`, with the API's brand names and the server's expiry horizon. The
 * script is served from payorch's own origin (no CDN): GET /checkout/assets/card-rules.js.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { BRAND_OF_TYPE, MAX_YEARS_AHEAD } from '../vault/card-validation.js';

const REQUIRE_CALL = /\brequire\("([^"]+)"\)/g;
/** The packages the walk may enter: anything else is a dependency the wrapper was not written for. */
const ALLOWED_PACKAGES = ['card-validator', 'credit-card-type'];

export interface BrowserScript {
  body: string;
  /** Strong validator for caching (the files change only with an install). */
  etag: string;
}

let built: BrowserScript | undefined;

/** The browser script (built on first use, then kept). */
export function cardRulesScript(): BrowserScript {
  built ??= build();
  return built;
}

function build(): BrowserScript {
  const nodeRequire = createRequire(import.meta.url);
  const entry = nodeRequire.resolve('card-validator');
  const ids = new Map<string, number>();
  const modules: { file: string; source: string; deps: Record<string, number> }[] = [];

  const visit = (file: string): number => {
    const known = ids.get(file);
    if (known !== undefined) return known;
    const id = modules.length;
    ids.set(file, id);
    const record = { file, source: readFileSync(file, 'utf8'), deps: {} as Record<string, number> };
    modules.push(record);
    const from = createRequire(file);
    for (const [, spec] of record.source.matchAll(REQUIRE_CALL)) {
      if (!spec!.startsWith('.') && !ALLOWED_PACKAGES.includes(spec!)) throw new Error(`card-rules: ${file} requires ${spec}, which the browser wrapper does not know`);
      record.deps[spec!] = visit(from.resolve(spec!));
    }
    return id;
  };
  visit(entry);

  const table = modules
    .map((m) => `/* ${m.file.slice(m.file.lastIndexOf('node_modules/') + 'node_modules/'.length)} */\n[function (module, exports, require) {\n${m.source}\n}, ${JSON.stringify(m.deps)}]`)
    .join(',\n');
  const body = `/* payorch hosted form: card-validator and credit-card-type (MIT), wrapped for the browser. */
(function () {
  "use strict";
  var table = [
${table}
  ];
  var cache = [];
  function load(id) {
    if (cache[id]) return cache[id].exports;
    var module = (cache[id] = { exports: {} });
    var entry = table[id];
    entry[0].call(module.exports, module, module.exports, function (spec) { return load(entry[1][spec]); });
    return module.exports;
  }
  window.payorchCardRules = Object.freeze({
    validator: load(0),
    brandOfType: ${JSON.stringify(BRAND_OF_TYPE)},
    maxYearsAhead: ${MAX_YEARS_AHEAD}
  });
})();
`;
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}
