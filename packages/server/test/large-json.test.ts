/**
 * parseJsonBytes (http/large-json.ts), which cuts large base64 strings out of a body before JSON.parse and
 * puts them back as strings kept off V8's heap: it must accept, refuse and yield exactly what body-parser's
 * strict JSON.parse does on the whole text. Checked on hand-picked cases (escapes, keys, markers a client
 * could forge, broken text around a large token) and on random documents against JSON.parse itself; then
 * over HTTP on the dispute route, where bodies are large: a stored PDF comes back byte for byte, and broken
 * JSON around a large string is the usual 400.
 */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cutLargeStrings, LARGE_STRING, parseJsonBytes } from '../src/http/large-json.js';
import { expectProblem } from './support/assertions.js';
import { backends, useServer } from './support/harness.js';
import { chargedBackPayment, evidence, pdfBase64, postDispute } from './support/payments.js';
import { seededRandom } from './support/seeded-random.js';

/** What body-parser's strict mode gives for the same text: the value, or 'refused'. */
function reference(raw: string): unknown {
  // body-parser's UTF-8 decoder (iconv-lite) drops a leading byte order mark.
  const text = raw.startsWith('\uFEFF') ? raw.slice(1) : raw;
  if (text.length === 0) return {};
  if (!/^[\x20\x09\x0a\x0d]*[{[]/.test(text)) return 'refused';
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return 'refused';
  }
}

function parsed(text: string): unknown {
  try {
    return parseJsonBytes(Buffer.from(text, 'utf8'));
  } catch (err) {
    expect(err).toBeInstanceOf(SyntaxError);
    return 'refused';
  }
}

/** The string values JSON.parse yields that the cut must take out (large, base64 alphabet only, not keys). */
function largeValues(value: unknown): number {
  if (typeof value === 'string') return value.length >= LARGE_STRING && /^[A-Za-z0-9+/=]*$/.test(value) ? 1 : 0;
  if (value === null || typeof value !== 'object') return 0;
  return Object.values(value).reduce((n: number, v) => n + largeValues(v), 0);
}

const big = (n = LARGE_STRING, seed = 1) => randomBytes(Math.ceil((n * 3) / 4) + seed).toString('base64').slice(0, n);

describe('parseJsonBytes agrees with strict JSON.parse', () => {
  const b = big();
  const cases: [string, string][] = [
    ['a large base64 member', JSON.stringify({ evidence: [{ content: b, file_name: 'a.pdf' }] })],
    ['two large members and small ones around them', JSON.stringify({ a: b, n: 1, list: [b.slice(1), 'x', null, true], s: 'é"\\' })],
    ['a large string in a top-level array', JSON.stringify([b, { k: b }])],
    ['a large string that is a key', `{"${b}": 1, "x": "${b}"}`],
    ['a large string with an escape (kept for JSON.parse)', JSON.stringify({ a: `${b}\\/` }).replace('\\\\/', '\\/')],
    ['a large string with a JSON escape sequence', JSON.stringify({ a: `${b}\n${b}` })],
    ['a large string with a non-base64 character', JSON.stringify({ a: `${b}-${b}` })],
    ['a large string with UTF-8 characters', JSON.stringify({ a: `${b}é€😀` })],
    ['a large base64 string after an escaped quote', JSON.stringify({ q: 'say "hi" \\', a: b })],
    ['white space around the colon of a key', `{ "${b}" \n : "${b}" }`],
    ['a client string that looks like a marker', JSON.stringify({ a: b, m: 'payorch:000000000000000000000000:0' })],
    ['a raw control character in a large string', `{"a": "${b}\u0001${b}"}`],
    ['a raw new line in a large string', `{"a": "${b}\n"}`],
    ['an unterminated large string', `{"a": "${b}`],
    ['garbage after a large string', `{"a": "${b}" x}`],
    ['a missing comma between large strings', `["${b}" "${b}"]`],
    ['a top-level large string (strict mode refuses it)', `"${b}"`],
    ['a large string as a bare value after the object', `{"a": 1} "${b}"`],
    ['a byte order mark before a large member', `\uFEFF${JSON.stringify({ a: b })}`],
    ['only a byte order mark', '\uFEFF'],
    ['a byte order mark inside a large string (kept for JSON.parse)', JSON.stringify({ a: `\uFEFF${b}` })],
    ['an empty body', ''],
    ['only white space', '   '],
    ['a small body', '{"a": "b"}'],
  ];
  it.each(cases)('%s', (_name, text) => {
    expect(parsed(text)).toEqual(reference(text));
  });

  it('cuts out exactly the large base64 values, after any run of backslashes', () => {
    const text = JSON.stringify({ q: 'x\\', r: '\\"', a: b, k: { [b]: b }, s: `${b}é` });
    expect(cutLargeStrings(Buffer.from(text)).large).toEqual([b, b]);
  });

  it('yields the large strings themselves, equal to what JSON.parse yields', () => {
    const value = parseJsonBytes(Buffer.from(JSON.stringify({ a: [b], c: { d: b } }))) as { a: string[]; c: { d: string } };
    expect(value.a[0] === b && value.c.d === b).toBe(true);
  });

  it('on 2,000 random documents mixing large and small strings, escapes, keys and broken syntax', () => {
    const next = seededRandom(26026);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
    const large = [big(LARGE_STRING, 1), big(LARGE_STRING + 3, 2), `${big(LARGE_STRING, 3)}==`];
    const atoms = ['"s"', '1', 'null', 'true', '"a\\"b"', '"\\\\"', '"é"', ...large.map((s) => `"${s}"`), `"${large[0]}\\n"`, `"${large[1]}-"`];
    const value = (depth: number): string => {
      const r = next();
      if (depth > 3 || r < 0.4) return pick(atoms);
      if (r < 0.7) return `[${Array.from({ length: Math.floor(next() * 3) }, () => value(depth + 1)).join(',')}]`;
      // Distinct keys: JSON.parse keeps only the last of duplicates, which would hide a cut value.
      const members = Array.from({ length: Math.floor(next() * 3) }, (_, i) => `${pick([`"k${i}"`, `"${large[0]}${i}"`, `"é${i}"`])}:${value(depth + 1)}`);
      return `{${members.join(',')}}`;
    };
    const breakers = [(s: string) => s, (s: string) => s, (s: string) => s.slice(0, -1), (s: string) => `${s} x`, (s: string) => s.replace(',', ' ')];
    let accepted = 0;
    for (let i = 0; i < 2000; i++) {
      const text = pick(breakers)(next() < 0.5 ? `{"v":${value(0)}}` : `[${value(0)}]`);
      const expected = reference(text);
      expect(parsed(text), text.slice(0, 200)).toEqual(expected);
      if (expected !== 'refused') {
        accepted += 1;
        // Every large value was cut out (none left for JSON.parse to copy onto the heap).
        expect(cutLargeStrings(Buffer.from(text)).large.length, text.slice(0, 200)).toBe(largeValues(expected));
      }
    }
    // Both branches were exercised.
    expect(accepted).toBeGreaterThan(500);
    expect(accepted).toBeLessThan(1900);
  });
});

for (const backend of backends()) {
  describe(`large JSON bodies over HTTP on ${backend}`, () => {
    const t = useServer(backend);

    it('a 1 MB PDF is stored byte for byte', async () => {
      const content = pdfBase64(1_048_576);
      const { payment, chargeback } = await chargedBackPayment(t);
      const res = await postDispute(t, payment.id, chargeback.id, { evidence: [evidence({ content })] });
      expect(res.status, await res.clone().text()).toBe(200);
      const rows = await t.db.query<{ sha256: Uint8Array }>(
        `SELECT e.sha256 FROM dispute_evidence e JOIN disputes d ON d.id = e.dispute_id WHERE d.payment_id = $1`,
        [payment.id],
      );
      expect(rows).toHaveLength(1);
      expect(Buffer.from(rows[0]!.sha256).toString('hex')).toBe(createHash('sha256').update(Buffer.from(content, 'base64')).digest('hex'));
    });

    it.each([
      ['garbage after the large string', (body: string) => `${body.slice(0, -2)} x]}`],
      ['a raw control character inside it', (body: string) => body.replace('"content":"', '"content":"\u0001')],
      ['a top-level string', (body: string) => JSON.stringify(body)],
    ])('400 INVALID_REQUEST, nothing stored: %s', async (_name, broken) => {
      const { payment, chargeback } = await chargedBackPayment(t);
      const body = JSON.stringify({ evidence: [evidence({ content: pdfBase64(200_000) })] });
      const res = await postDispute(t, payment.id, chargeback.id, undefined, { raw: broken(body) });
      const problem = await expectProblem(res, 400, 'INVALID_REQUEST');
      expect(problem.detail).toBe('The request body is not valid JSON.');
      const rows = await t.db.query('SELECT 1 FROM disputes WHERE payment_id = $1', [payment.id]);
      expect(rows).toHaveLength(0);
    });
  });
}
