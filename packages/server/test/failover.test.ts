/**
 * The failover table (src/orchestration/failover.ts), row by row, and what it makes of the sandbox test
 * cards and of every connector's code table: soft failures move a payment on to the next provider, hard
 * declines never do. The routing guide's table is FAILOVER_RULES rendered (UPDATE_FAILOVER_DOCS=1
 * rewrites it), so the guide says what the code does.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FAILOVER_RULES, failoverDecision, failoverRule, movesOn, type AttemptAnswer, type FailoverDecision, type FailoverRule } from '../src/orchestration/failover.js';
import { CONNECTORS } from '../src/providers/connectors.js';
import { CARDS_B } from '../src/providers/sandbox/acquirer-b/server.js';
import { TEST_CARDS } from '../src/providers/sandbox/test-cards.js';

const answered = (outcome: 'SUCCEEDED' | 'DECLINED' | 'ERROR', iso: string, advice: string | null = null): AttemptAnswer => ({
  answered: true,
  result: { outcome, iso8583ResponseCode: iso, merchantAdviceCode: advice },
});

const cases: [string, AttemptAnswer, FailoverDecision][] = [
  ['approved', answered('SUCCEEDED', '00'), 'APPROVED'],
  ['provider error', answered('ERROR', '96', '02'), 'SOFT_FAILURE'],
  ['provider error without codes', answered('ERROR', ''), 'SOFT_FAILURE'],
  ['not sent', { answered: false, kind: 'NOT_SENT' }, 'SOFT_FAILURE'],
  ['unreadable answer', { answered: false, kind: 'BAD_RESPONSE' }, 'SOFT_FAILURE'],
  ['timeout', { answered: false, kind: 'TIMEOUT' }, 'UNKNOWN'],
  ['connection cut', { answered: false, kind: 'CONNECTION_CUT' }, 'UNKNOWN'],
  ['do not honor, try again later (MAC 02)', answered('DECLINED', '05', '02'), 'SOFT_FAILURE'],
  ['issuer inoperative (91)', answered('DECLINED', '91'), 'SOFT_FAILURE'],
  ['system malfunction (96)', answered('DECLINED', '96'), 'SOFT_FAILURE'],
  ['re-enter transaction (19)', answered('DECLINED', '19'), 'SOFT_FAILURE'],
  ['response too late (68)', answered('DECLINED', '68'), 'SOFT_FAILURE'],
  ['issuer inoperative but MAC 03 do not try again', answered('DECLINED', '91', '03'), 'HARD_DECLINE'],
  ['system malfunction but MAC 21 cancelled', answered('DECLINED', '96', '21'), 'HARD_DECLINE'],
  ['insufficient funds (51)', answered('DECLINED', '51'), 'HARD_DECLINE'],
  ['insufficient funds (51) with MAC 01 new account information', answered('DECLINED', '51', '01'), 'HARD_DECLINE'],
  ['do not honor (05) with MAC 03', answered('DECLINED', '05', '03'), 'HARD_DECLINE'],
  ['do not honor (05) without advice', answered('DECLINED', '05'), 'HARD_DECLINE'],
  ['stolen card (43)', answered('DECLINED', '43', '03'), 'HARD_DECLINE'],
  ['lost card (41)', answered('DECLINED', '41'), 'HARD_DECLINE'],
  ['invalid card number (14)', answered('DECLINED', '14', '03'), 'HARD_DECLINE'],
  ['CVV failure (N7)', answered('DECLINED', 'N7'), 'HARD_DECLINE'],
  ['transaction not permitted (57)', answered('DECLINED', '57'), 'HARD_DECLINE'],
];

describe('failover table', () => {
  it.each(cases)('%s → %s', (_name, answer, decision) => {
    expect(failoverDecision(answer)).toBe(decision);
  });

  it('moves on after soft failures and unknown outcomes only', () => {
    expect(['APPROVED', 'HARD_DECLINE', 'SOFT_FAILURE', 'UNKNOWN'].filter((d) => movesOn(d as FailoverDecision))).toEqual(['SOFT_FAILURE', 'UNKNOWN']);
  });

  it('the rules decide every decision, each example by its own row (the first that matches)', () => {
    expect([...new Set(FAILOVER_RULES.map((r) => r.decision))].sort()).toEqual(['APPROVED', 'HARD_DECLINE', 'SOFT_FAILURE', 'UNKNOWN']);
    for (const rule of FAILOVER_RULES) {
      for (const e of rule.examples ?? []) expect(failoverRule(answered('DECLINED', e.iso, e.advice ?? null)), `${e.what}: "${rule.answer}"`).toBe(rule);
    }
    // Each case above is decided by a row of the table with that decision.
    for (const [name, answer, decision] of cases) expect(failoverRule(answer).decision, name).toBe(decision);
  });

  it("every connector's code table and both sandbox acquirers' cards decide as their rows say", () => {
    for (const connector of CONNECTORS) {
      for (const row of connector.codes) expect(failoverDecision({ answered: true, result: row }), `${connector.id} ${row.providerCode}`).toBe(row.decision);
    }
    for (const [pan, [, , iso, advice]] of Object.entries(CARDS_B)) expect(failoverDecision(answered('DECLINED', iso, advice)), `SANDBOX_B ${pan}`).toBe('HARD_DECLINE');
  });

  it('sandbox test cards: 0077 (provider error) moves on; 0010 insufficient funds, stolen, invalid card, CVV stop', () => {
    const decisionOf = (pan: string) => {
      const b = TEST_CARDS[pan]!;
      return failoverDecision(answered(b.outcome, b.iso8583[0], b.merchantAdvice?.[0] ?? null));
    };
    expect(decisionOf('4507990000000002')).toBe('APPROVED');
    expect(decisionOf('4507990000000077')).toBe('SOFT_FAILURE');
    expect(decisionOf('4507990000000036')).toBe('SOFT_FAILURE'); // do not honor + "try again later"
    for (const pan of ['4507990000000010', '4507990000000028', '4507990000000044', '4507990000000051', '4507990000000069', '4000000000000002']) {
      expect(decisionOf(pan), pan).toBe('HARD_DECLINE');
    }
  });
});

/** The guide's table: one row per rule, in order, the examples after the rule's words. */
function renderRules(rules: readonly FailoverRule[]): string {
  const examples = (r: FailoverRule) =>
    r.examples ? `, e.g. ${r.examples.map((e) => `${e.what} (ISO \`${e.iso}\`${e.advice ? `, advice \`${e.advice}\`` : ''})`).join(', ')}` : '';
  return ['| the provider answered | what happens |', '|---|---|', ...rules.map((r) => `| ${r.answer}${examples(r)} | ${r.effect} |`)].join('\n');
}

describe('the failover table in the docs', () => {
  it('docs/guides/routing.md renders FAILOVER_RULES, row by row, between its markers (UPDATE_FAILOVER_DOCS=1 rewrites it)', () => {
    const file = new URL('../../../docs/guides/routing.md', import.meta.url);
    const guide = readFileSync(file, 'utf8');
    const markers = /(<!-- failover-table:start[^\n]*-->\n)([\s\S]*?)\n(<!-- failover-table:end -->)/;
    expect(guide, 'routing.md has <!-- failover-table:start … --> and <!-- failover-table:end --> markers').toMatch(markers);
    const expected = renderRules(FAILOVER_RULES);
    if (process.env.UPDATE_FAILOVER_DOCS === '1') writeFileSync(file, guide.replace(markers, (_all, start: string, _table, end: string) => `${start}${expected}\n${end}`));
    else expect(markers.exec(guide)![2], 'run UPDATE_FAILOVER_DOCS=1 npx vitest run --project server test/failover.test.ts').toBe(expected);
  });

  const section = (file: string, heading: string) => {
    const text = readFileSync(new URL(`../../../${file}`, import.meta.url), 'utf8');
    const start = text.indexOf(heading);
    expect(start, `${file} has "${heading}"`).toBeGreaterThanOrEqual(0);
    return text.slice(start, text.indexOf('\n## ', start + heading.length) === -1 ? undefined : text.indexOf('\n## ', start + heading.length));
  };
  it.each([
    ['docs/guides/routing.md', '## Failover and provider health'],
    ['docs/design.md', '## 5a. Orchestration'],
  ])('%s names every code the table decides on', (file, heading) => {
    const text = section(file, heading);
    // Each soft ISO code, each merchant advice code with a rule, and the examples of hard declines.
    for (const code of ['19', '28', '68', '90', '91', '92', '96', '02', '03', '21', '51', '05', '43', '14', 'N7']) {
      expect(text, `${file} mentions \`${code}\``).toContain(`\`${code}\``);
    }
    // And each way of getting no answer.
    for (const words of [/reached|NOT_SENT/i, /unreadable|BAD_RESPONSE/i, /timeout|TIMEOUT/, /connection (cut|broke)|CONNECTION_CUT/i]) expect(text).toMatch(words);
  });
});
