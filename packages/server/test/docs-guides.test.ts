/**
 * The guides state facts the code decides; these tests keep them equal, so a new test card or error
 * code cannot ship undocumented: every sandbox test card is in the test-card table with its outcome and
 * response code, and every code of the error catalogue is in the errors guide with its status.
 *
 * The provider pages' request samples (an ```http block, then its ```json body) are requests a merchant
 * copies: each body matches the spec's request schema of its operation, and a sandbox server accepts
 * them all, in the pages' order (connections first, then the routings through them). Their ```ts blocks
 * are type-checked against the client by packages/client/test/guides.test.ts, as the guides' are.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { PROBLEMS } from '../src/http/problems.js';
import { CONNECTORS } from '../src/providers/connectors.js';
import { CARDS_B } from '../src/providers/sandbox/acquirer-b/server.js';
import { REASONS as B_REASONS } from '../src/providers/sandbox/sandbox-b-provider.js';
import { TEST_CARDS } from '../src/providers/sandbox/test-cards.js';
import { expectSchema } from './support/assertions.js';
import { useServer } from './support/harness.js';

const guide = (name: string) => readFileSync(new URL(`../../../docs/guides/${name}.md`, import.meta.url), 'utf8');

/** The rows of the first Markdown table whose header starts with `firstHeader`, as arrays of cells. */
function tableRows(markdown: string, firstHeader: string): string[][] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`| ${firstHeader} |`));
  expect(start, `a table headed "${firstHeader}"`).toBeGreaterThanOrEqual(0);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line.slice(1, -1).split('|').map((c) => c.trim()));
  }
  return rows;
}

const unquote = (cell: string) => cell.replace(/^`|`$/g, '');

describe('docs/guides/test-cards.md', () => {
  const rows = tableRows(guide('test-cards'), 'card number');
  const byNumber = new Map(rows.map((r) => [unquote(r[0]!), r]));

  it('lists exactly the sandbox acquirer’s test cards', () => {
    expect([...byNumber.keys()].sort()).toEqual(Object.keys(TEST_CARDS).sort());
  });

  it.each(Object.entries(TEST_CARDS))('%s: its response code and ISO 8583 code as the acquirer answers them', (number, card) => {
    const row = byNumber.get(number)!;
    expect(unquote(row[3]!)).toBe(card.responseCode);
    expect(unquote(row[4]!)).toBe(card.iso8583[0]);
    expect(row[5]!.startsWith(card.merchantAdvice ? `\`${card.merchantAdvice[0]}\`` : '—')).toBe(true);
    const what = row[2]!;
    if (card.outcome === 'SUCCEEDED') expect(what).toMatch(/^approved/);
    if (card.outcome === 'DECLINED') expect(what).toMatch(/^declined/);
    if (card.outcome === 'ERROR') expect(what).toMatch(/^provider error/);
    if (card.chargebackFollows) expect(what).toContain('chargeback');
  });
});

describe('docs/guides/test-cards.md: SANDBOX_B', () => {
  const rows = tableRows(guide('test-cards'), "card number | `SANDBOX_B`'s refusal");

  it('lists exactly SANDBOX_B’s refusals, with its reason, our response code, ISO 8583 and advice codes', () => {
    expect(rows.map((r) => unquote(r[0]!)).sort()).toEqual(Object.keys(CARDS_B).sort());
    for (const row of rows) {
      const [reasonCode, reason, iso, advice] = CARDS_B[unquote(row[0]!)]!;
      expect(row.slice(1), row[0]).toEqual([`\`${reasonCode}\` ${reason}`, `\`${B_REASONS[reasonCode]![0]}\``, `\`${iso}\``, advice ? `\`${advice}\`` : '—']);
    }
  });
});

describe('docs/guides/errors.md', () => {
  const rows = tableRows(guide('errors'), 'status');

  it('documents every code of the error catalogue, once, with its status', () => {
    const documented = rows.map((r) => [unquote(r[1]!), Number(r[0])] as const);
    expect(documented.map(([code]) => code).sort()).toEqual(Object.keys(PROBLEMS).sort());
    for (const [code, status] of documented) expect(status, code).toBe(PROBLEMS[code as keyof typeof PROBLEMS].status);
  });
});

describe('docs/guides/webhooks.md', () => {
  const rows = tableRows(guide('webhooks'), '`type_event`');
  const spec = JSON.parse(readFileSync(new URL('../../types/openapi.json', import.meta.url), 'utf8')) as {
    components: { schemas: { WebhookEventType: { enum: string[] } } };
  };

  it("lists every event type of the spec's WebhookEventType, once (a cell may name several)", () => {
    const documented = rows.flatMap((r) => [...r[0]!.matchAll(/`([a-z_.]+)`/g)].map((m) => m[1]!));
    expect([...documented].sort()).toEqual([...spec.components.schemas.WebhookEventType.enum].sort());
  });
});

const DOCS = new URL('../../../docs/', import.meta.url);
const doc = (path: string) => readFileSync(new URL(path, DOCS), 'utf8');
const PROVIDER_PAGES = readdirSync(new URL('providers/', DOCS))
  .filter((f) => f.endsWith('.md') && f !== 'README.md')
  .sort()
  .map((f) => `providers/${f}`);

interface Sample {
  page: string;
  method: string;
  /** Under /v1, as the spec names it: `/routing/{routing_id}`. */
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

/** Every ```http block of a page followed by a ```json block: a request and its body. */
function requestSamples(page: string): Sample[] {
  const blocks = [...doc(page).matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, code: m[2]!, at: m.index }));
  const samples: Sample[] = [];
  blocks.forEach((block, i) => {
    if (block.lang !== 'http') return;
    const [requestLine, ...headerLines] = block.code.trim().split('\n');
    const [, method, path] = /^(GET|POST|PATCH|PUT|DELETE) \/v1(\/\S*)$/.exec(requestLine!) ?? [];
    expect(method, `${page}: "${requestLine}" is METHOD /v1/path`).toBeDefined();
    const headers = Object.fromEntries(headerLines.map((l) => l.split(/:\s*/, 2) as [string, string]).map(([k, v]) => [k.toLowerCase(), v]));
    const next = blocks[i + 1];
    const body = next?.lang === 'json' ? (JSON.parse(next.code) as unknown) : undefined;
    samples.push({ page, method: method!, path: path!, headers, body });
  });
  return samples;
}

describe('the provider pages’ request samples (docs/providers)', () => {
  type Operation = { parameters?: { $ref?: string; name?: string; in?: string; required?: boolean }[]; requestBody?: { content: Record<string, { schema: { $ref: string } }> } };
  const spec = createRequire(import.meta.url)('@payorch/types/openapi.json') as {
    paths: Record<string, Record<string, Operation>>;
    components: { parameters: Record<string, { name: string; in: string; required?: boolean }> };
  };
  const samples = [...PROVIDER_PAGES, 'guides/provider-notifications.md'].flatMap(requestSamples);
  const label = (s: Sample) => `${s.page}: ${s.method} ${s.path}`;

  it('each connector has a page, which creates its connection and routes through it', () => {
    expect(PROVIDER_PAGES.length).toBeGreaterThanOrEqual(CONNECTORS.length);
    for (const c of CONNECTORS) {
      const mine = samples.filter((s) => JSON.stringify(s.body ?? null).includes(`"${c.id}"`));
      expect(mine.some((s) => s.method === 'POST' && s.path === '/connections'), `a POST /v1/connections sample for ${c.id}`).toBe(true);
      expect(mine.some((s) => s.path.startsWith('/routing')), `a routing sample naming ${c.id}`).toBe(true);
      const page = mine[0]!.page;
      expect(doc(page), `${page}: the webhook URL to register`).toContain('/v1/provider-notifications/{connection_id}');
    }
  });

  it("each sample is an operation of the spec, with its required headers and a body of the operation's schema", () => {
    expect(samples.length).toBeGreaterThanOrEqual(2 * CONNECTORS.length);
    for (const s of samples) {
      const operation = spec.paths[s.path]?.[s.method.toLowerCase()];
      expect(operation, `${label(s)} is in the spec`).toBeDefined();
      for (const p of operation!.parameters ?? []) {
        const param = p.$ref ? spec.components.parameters[p.$ref.split('/').pop()!]! : p;
        if (param.in === 'header' && param.required) expect(s.headers[param.name!.toLowerCase()], `${label(s)}: header ${param.name}`).toBeTruthy();
      }
      const schema = operation!.requestBody?.content['application/json']?.schema.$ref;
      if (schema) {
        try {
          expectSchema(schema.split('/').pop()!, s.body);
        } catch (err) {
          throw new Error(`${label(s)}: ${(err as Error).message}`);
        }
      }
      if (!schema) expect(s.body, `${label(s)} takes no body`).toBeUndefined();
    }
  });

  describe('sent to a sandbox server', () => {
    const t = useServer('pglite');
    const json = { 'content-type': 'application/json' };

    it('accepts every sample as written (connections first, then routings through them, with their ids) and serves each connection’s webhook URL', async () => {
      const created = new Map<string, string>(); // provider_id → connection_id
      const ordered = [...samples.filter((s) => s.path === '/connections'), ...samples.filter((s) => s.path !== '/connections')];
      const list = await t.fetch(`/routing?account_id=${t.sandbox.account_id}&payment_method=CARD`);
      const [routing] = (await list.json()) as { id: string }[];
      for (const s of ordered) {
        const body = s.body as { provider_id?: string; credentials?: Record<string, string> } | undefined;
        for (const [field, value] of Object.entries(body?.credentials ?? {})) t.rememberSecret(value, `${s.page} ${field}`);
        // A sample's ids are placeholders: the routing is the sandbox account's, a step's connection the one made above.
        const text = JSON.stringify(s.body ?? null).replace(
          /"provider_id":"(\w+)","connection_id":"[^"]*"/g,
          (all, provider: string) => (created.has(provider) ? `"provider_id":"${provider}","connection_id":"${created.get(provider)}"` : all),
        );
        const res = await t.fetch(s.path.replace('{routing_id}', routing!.id), {
          method: s.method,
          headers: { ...json, ...s.headers },
          ...(s.body === undefined ? {} : { body: text }),
        });
        const answer = await res.text();
        expect(res.status, `${label(s)}: ${answer}`).toBeLessThan(300);
        const parsed = JSON.parse(answer) as { connection_id?: string; warnings?: string[] };
        if (s.path === '/connections') created.set(body!.provider_id!, parsed.connection_id!);
        if (s.path.startsWith('/routing')) expect(parsed.warnings, `${label(s)}: no step serves less than its conditions ask`).toEqual([]);
      }
      expect([...created.keys()].sort()).toEqual(CONNECTORS.map((c) => c.id).sort());
      // The URL each page says to register is served: an unsigned call is refused (401), never unknown (404).
      for (const id of created.values()) {
        const res = await fetch(`${t.running.url}/v1/provider-notifications/${id}`, { method: 'POST', headers: json, body: '{}' });
        expect(res.status).toBe(401);
      }
    });
  });
});
