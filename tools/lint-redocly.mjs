#!/usr/bin/env node
// Redocly lint of the multi-file spec with Redocly's built-in `recommended` ruleset. It complements
// Spectral (see spec/.spectral.yaml): Redocly catches OAS 3.1 mistakes Spectral misses, such as a
// 3.0 `nullable: true` left in a 3.1 document or malformed `examples`.
//   node tools/lint-redocly.mjs [spec/openapi.yaml]
// Prints every problem as file:line:col and exits 1 on any warning or error.
import { relative, resolve, join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

process.env.REDOCLY_TELEMETRY ??= 'off';
process.env.REDOCLY_SUPPRESS_UPDATE_NOTICE ??= 'true';

const { createConfig, lint, getLineColLocation } = await import('@redocly/openapi-core');

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// `recommended` as-is. Its server rules (no-empty-servers, no-server-example.com,
// no-server-trailing-slash) accept our relative `/v1` server, so none is turned off.
const RULESET = { extends: ['recommended'] };

// Findings accepted on purpose, by rule and JSON pointer into spec/openapi.yaml. Keep this short:
// every entry needs a reason. (Redocly's own ignore file would have to live in spec/.)
const ACCEPTED = [
  {
    rule: 'operation-operationId',
    pointers: [
      'enrollment.enrolled', 'enrollment.declined', 'payment.succeeded', 'payment.declined',
      'payment.chargeback', 'payment.dispute.submitted', 'payment.dispute.won', 'payment.dispute.lost',
      'payment.authorized', 'payment.captured', 'payment.canceled', 'payment.refunded', 'payment.operation.failed',
      'enrollment.unenrolled', 'payment.pending', 'payment.expired', 'payment_link.paid', 'payment.failed',
    ].map((event) => `#/webhooks/${event}/post/operationId`),
    why: 'Outbound webhooks are sent, not served: an operationId would make openapi-typescript list them in `operations`, i.e. as server handlers to implement.',
  },
];

export async function lintSpec(specEntry = join(root, 'spec/openapi.yaml')) {
  const config = await createConfig(RULESET);
  const problems = await lint({ ref: specEntry, config });
  const entry = resolve(specEntry);
  const accepted = (p) => {
    const loc = p.location[0];
    return ACCEPTED.some(
      (a) => a.rule === p.ruleId && resolve(loc?.source.absoluteRef ?? '') === entry && a.pointers.includes(loc?.pointer),
    );
  };
  return problems.filter((p) => !p.ignored && !accepted(p));
}

export function formatProblem(p) {
  const loc = p.location[0];
  let where = '?';
  if (loc) {
    const abs = loc.source.absoluteRef;
    // Relative to the working directory (clickable in terminals), absolute for files outside the repo.
    const file = abs.startsWith(root) ? relative(process.cwd(), abs) : abs;
    let lineCol = '';
    try {
      const { start } = getLineColLocation(loc);
      lineCol = `:${start.line}:${start.col}`;
    } catch {
      // No position for this pointer (rare): print the pointer alone.
    }
    where = `${file}${lineCol}`;
  }
  return `${where} ${p.severity} ${p.ruleId}: ${p.message}${loc?.pointer ? ` (${loc.pointer})` : ''}`;
}

async function main() {
  const specEntry = process.argv[2] ? resolve(process.argv[2]) : undefined;
  const problems = await lintSpec(specEntry);
  for (const p of problems) console.error(formatProblem(p));
  if (problems.length > 0) {
    const errors = problems.filter((p) => p.severity === 'error').length;
    console.error(`redocly lint: ${errors} error(s), ${problems.length - errors} warning(s)`);
    process.exit(1);
  }
  console.log('redocly lint (recommended): no problems');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(err?.stack ?? err);
    process.exit(1);
  });
}
