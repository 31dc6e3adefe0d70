/**
 * The guides state facts the code decides; these tests keep them equal, so a new test card or error
 * code cannot ship undocumented: every sandbox test card is in the test-card table with its outcome and
 * response code, and every code of the error catalogue is in the errors guide with its status.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PROBLEMS } from '../src/http/problems.js';
import { TEST_CARDS } from '../src/providers/sandbox/test-cards.js';

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
    const documented = rows.flatMap((r) => [...r[0]!.matchAll(/`([a-z.]+)`/g)].map((m) => m[1]!));
    expect([...documented].sort()).toEqual([...spec.components.schemas.WebhookEventType.enum].sort());
  });
});
