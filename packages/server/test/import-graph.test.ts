/**
 * Dependencies point one way between the server's domains (the top-level folders of src/): payments uses
 * the orchestration engine, and orchestration declares what it needs of payments as a port
 * (src/orchestration/payment-port.ts) instead of importing payments' internals. This reads every import
 * of every .ts file under src/ (TypeScript's own pre-processor: static, type-only, re-exports and dynamic
 * imports alike), resolves the relative ones to their domain, and fails if a direction listed in ONE_WAY
 * comes back, or if any two domains import each other at all (no such pair is left: a new one is a cycle
 * to break before it lands, not debt to list).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return tsFiles(path);
    return e.isFile() && e.name.endsWith('.ts') ? [path] : [];
  });
}

/** The domain of a file under src/: its top-level folder; undefined for src/'s own files (the composition root). */
function domainOf(file: string): string | undefined {
  const parts = relative(SRC, file).split(sep);
  return parts.length > 1 && parts[0] !== '..' ? parts[0] : undefined;
}

/** from domain → to domain → the importing files (relative to src/). */
function domainGraph(): Map<string, Map<string, Set<string>>> {
  const graph = new Map<string, Map<string, Set<string>>>();
  for (const file of tsFiles(SRC)) {
    const from = domainOf(file);
    if (!from) continue;
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue; // packages and node: builtins
      const to = domainOf(resolve(dirname(file), fileName));
      if (!to || to === from) continue;
      const targets = graph.get(from) ?? new Map<string, Set<string>>();
      graph.set(from, targets);
      const files = targets.get(to) ?? new Set<string>();
      targets.set(to, files);
      files.add(relative(SRC, file).split(sep).join('/'));
    }
  }
  return graph;
}

/** Directions that must not come back: `from` imports nothing of `to`, and `because` says how it gets what it needs. */
const ONE_WAY: ReadonlyArray<{ from: string; to: string; because: string }> = [
  { from: 'orchestration', to: 'payments', because: 'it is given payments through orchestration/payment-port.ts' },
  { from: 'providers', to: 'payments', because: 'payments uses the connectors; the ISO 4217 minor units are providers/minor-units.ts' },
  { from: 'customers', to: 'payments', because: 'payments records a customer as its payer; the If-None-Match check is http/conditional-requests.ts' },
  { from: 'customers', to: 'vault', because: 'the vault holds a customer\'s payment methods; a deletion is given them through customers/payment-methods-port.ts' },
  { from: 'payments', to: 'checkout', because: 'checkout builds on payments; a payment claims a one-time token through payments/one-time-token-port.ts' },
  { from: 'orchestration', to: 'checkout', because: 'checkout builds on the engine; a payment link learns of an approval through orchestration/approval-hook.ts' },
  { from: 'platform', to: 'db', because: 'the metrics read the database counts through platform/prometheus.ts DatabaseCountsReading' },
  { from: 'http', to: 'idempotency', because: 'src/dispatch.ts runs handlers through idempotency; its settle-later error is an http/problems.ts ProblemFailure' },
  { from: 'http', to: 'ratelimit', because: 'GET /metrics checks its token beside the other credentials, in tenancy/metrics-endpoint.ts' },
  { from: 'http', to: 'tenancy', because: 'GET /metrics checks its token beside the other credentials, in tenancy/metrics-endpoint.ts' },
  { from: 'tenancy', to: 'routing', because: 'a new organization or account gets its sandbox defaults through tenancy/service.ts SandboxDefaults, implemented in routing/services.ts' },
  { from: 'webhooks', to: 'vault', because: 'webhook secrets are sealed with src/keyring/, below the card vault' },
  { from: 'providers', to: 'vault', because: 'the sandbox providers seal with src/keyring/ and build links with http/spec.ts API_BASE_PATH' },
];

describe('import graph of src/ domains', () => {
  const graph = domainGraph();
  const importers = (from: string, to: string) => [...(graph.get(from)?.get(to) ?? [])].sort();

  it('is read (payments imports the orchestration engine)', () => {
    expect(importers('payments', 'orchestration').length).toBeGreaterThan(0);
  });

  for (const { from, to, because } of ONE_WAY) {
    it(`${from} imports nothing of ${to} (${because})`, () => {
      expect(importers(from, to), `files of src/${from} importing src/${to}`).toEqual([]);
    });
  }

  it('no two domains import each other', () => {
    const mutual: string[] = [];
    for (const [a, targets] of [...graph].sort(([x], [y]) => x.localeCompare(y))) {
      for (const b of [...targets.keys()].sort()) {
        if (a < b && graph.get(b)?.has(a)) {
          mutual.push(`${a} ↔ ${b}: ${a} → ${b} in ${importers(a, b).join(', ')}; ${b} → ${a} in ${importers(b, a).join(', ')}`);
        }
      }
    }
    expect(mutual, 'domains importing each other (break the cycle with a port, as ONE_WAY lists)').toEqual([]);
  });

  it('nor do longer circles form (a → b → c → a)', () => {
    // Depth-first search; a domain met again while still on the path closes a circle.
    const circles: string[] = [];
    const done = new Set<string>();
    const visit = (domain: string, path: string[]) => {
      if (path.includes(domain)) return void circles.push([...path.slice(path.indexOf(domain)), domain].join(' → '));
      if (done.has(domain)) return;
      for (const next of [...(graph.get(domain)?.keys() ?? [])].sort()) visit(next, [...path, domain]);
      done.add(domain);
    };
    for (const domain of [...graph.keys()].sort()) visit(domain, []);
    expect(circles, 'circles of imports between domains').toEqual([]);
  });
});
