/**
 * Dispute evidence edge cases: the 1 MB boundary (exactly 1,048,576 decoded bytes accepted, one more
 * refused), strict base64 (whitespace, URL-safe alphabet, missing or non-canonical padding), real PDF
 * bytes (a PNG named .pdf is refused), safe file names, and the route's body limit: ten 1 MB files with
 * the longest names fit, anything larger is 413.
 */
import { createRequire } from 'node:module';
import type { Schemas } from '@payorch/types';
import { describe, expect, it } from 'vitest';
import { expectProblem } from './support/assertions.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { chargedBackPayment, evidence, pdfBase64, postDispute } from './support/payments.js';

const require = createRequire(import.meta.url);
const spec = require('@payorch/types/openapi.json') as { paths: Record<string, Record<string, { 'x-body-limit'?: number }>> };
const disputePath = spec.paths['/payments/{payment_id}/transactions/{transaction_id}/dispute']!;
const BODY_LIMIT = disputePath.post!['x-body-limit']!;

const MB = 1_048_576;

/** A PDF whose base64 contains both + and / (binary comment bytes, as real PDF writers emit). */
function pdfWithBinaryComment(): string {
  const bytes = Buffer.concat([
    Buffer.from('%PDF-1.7\n%', 'latin1'),
    Buffer.from([0xfb, 0xff, 0xbf, 0xfe, 0xef, 0xff, 0xfb, 0xf0]),
    Buffer.from('\n1 0 obj << >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n', 'latin1'),
  ]);
  return bytes.toString('base64');
}

/** The largest body the dispute contract allows: 10 items of 1 MB, 255-character names, longest category. */
function largestBody(accountId: string): string {
  const content = pdfBase64(MB);
  return JSON.stringify({
    account_id: accountId,
    evidence: Array.from({ length: 10 }, (_, i) => ({
      content_type: 'application/pdf',
      file_name: `${String(i)}${'é'.repeat(250)}.pdf`,
      content_category: 'TERMS_AND_CONDITIONS',
      content,
    })),
  });
}

async function dispute(t: TestServer, ev: Schemas['DisputeEvidence'][]): Promise<Response> {
  const { payment, chargeback } = await chargedBackPayment(t);
  return postDispute(t, payment.id, chargeback.id, { evidence: ev });
}

async function expectRefused(res: Response, field: string, message: RegExp): Promise<void> {
  const problem = await expectProblem(res, 422, 'INVALID_EVIDENCE');
  const errors = problem.errors as { path: string; message: string }[];
  expect(errors).toHaveLength(1);
  expect(errors[0]!.path).toBe(field);
  expect(errors[0]!.message).toMatch(message);
}

for (const backend of backends()) {
  describe(`dispute evidence on ${backend}`, () => {
    const t = useServer(backend);

    it('200: exactly 1,048,576 decoded bytes', async () => {
      const content = pdfBase64(MB);
      expect(content).toHaveLength(1_398_104);
      const res = await dispute(t, [evidence({ content })]);
      expect(res.status, await res.clone().text()).toBe(200);
      const rows = await t.db.query<{ size_bytes: number }>('SELECT size_bytes FROM dispute_evidence ORDER BY created_at DESC LIMIT 1');
      expect(rows[0]!.size_bytes).toBe(MB);
    });

    it('422: 1,048,577 and 1,048,578 decoded bytes (same base64 length as 1 MB)', async () => {
      for (const size of [MB + 1, MB + 2]) {
        const content = pdfBase64(size);
        expect(content).toHaveLength(1_398_104);
        await expectRefused(await dispute(t, [evidence({ content })]), '/body/evidence/0/content', new RegExp(`decodes to ${size} bytes`));
      }
    });

    it('422: base64 with line breaks (MIME style) or a space', async () => {
      const mime = pdfBase64(4096).replace(/.{76}/g, '$&\r\n');
      await expectRefused(await dispute(t, [evidence({ content: mime })]), '/body/evidence/0/content', /whitespace/);
      const spaced = `${pdfBase64(4096).slice(0, 40)} ${pdfBase64(4096).slice(40)}`;
      await expectRefused(await dispute(t, [evidence({ content: spaced })]), '/body/evidence/0/content', /whitespace/);
    });

    it('422: the URL-safe alphabet; the same bytes in the standard alphabet are accepted', async () => {
      const standard = pdfWithBinaryComment();
      expect(standard).toMatch(/[+/]/);
      const urlSafe = standard.replace(/\+/g, '-').replace(/\//g, '_');
      await expectRefused(await dispute(t, [evidence({ content: urlSafe })]), '/body/evidence/0/content', /URL-safe/);
      expect((await dispute(t, [evidence({ content: standard })])).status).toBe(200);
    });

    it('422: missing padding, padding inside, non-canonical padding bits, foreign characters', async () => {
      const padded = pdfBase64(4096); // 4096 = 3·1365 + 1 bytes → ends with "=="
      expect(padded.endsWith('==')).toBe(true);
      await expectRefused(await dispute(t, [evidence({ content: padded.replace(/=+$/, '') })]), '/body/evidence/0/content', /multiple of 4/);
      await expectRefused(await dispute(t, [evidence({ content: `${padded.slice(0, 8)}====${padded.slice(8)}` })]), '/body/evidence/0/content', /padding/);
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
      const last = padded.at(-3)!;
      const nonCanonical = `${padded.slice(0, -3)}${alphabet[alphabet.indexOf(last) + 1]}==`;
      await expectRefused(await dispute(t, [evidence({ content: nonCanonical })]), '/body/evidence/0/content', /non-canonical/);
      await expectRefused(await dispute(t, [evidence({ content: `${pdfBase64(4096).slice(0, -4)}ab*c` })]), '/body/evidence/0/content', /outside the base64 alphabet/);
    });

    it('422: a PNG named .pdf; a text file; a PDF without its %%EOF trailer', async () => {
      const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(2000, 7)]).toString('base64');
      await expectRefused(await dispute(t, [evidence({ file_name: 'receipt.pdf', content: png })]), '/body/evidence/0/content', /does not start with %PDF-/);
      await expectRefused(await dispute(t, [evidence({ content: Buffer.from('Hello, this is my receipt.').toString('base64') })]), '/body/evidence/0/content', /%PDF-/);
      const truncated = Buffer.from(pdfBase64(4096), 'base64').subarray(0, 3000).toString('base64');
      await expectRefused(await dispute(t, [evidence({ content: truncated })]), '/body/evidence/0/content', /%%EOF/);
    });

    it('200: trailing white-space after %%EOF is allowed', async () => {
      const res = await dispute(t, [evidence({ content: pdfBase64(4096, '\r\n \t\n\0') })]);
      expect(res.status).toBe(200);
    });

    it('422: unsafe file names (bidirectional override, reserved characters, only dots, edge whitespace, trailing dot)', async () => {
      for (const name of ['invoice\u202Efdp.exe', 'a<b>.pdf', 'what?.pdf', '....', ' receipt.pdf', 'receipt.pdf.']) {
        await expectRefused(await dispute(t, [evidence({ file_name: name })]), '/body/evidence/0/file_name', /./);
      }
    });

    it('200: non-ASCII file names up to 255 characters', async () => {
      expect((await dispute(t, [evidence({ file_name: `${'ã'.repeat(251)}.pdf` })])).status).toBe(200);
    });

    it('the body limit fits the largest allowed body and nothing much larger (both POST and PATCH)', () => {
      const largest = Buffer.byteLength(largestBody('00000000-0000-4000-8000-000000000000'));
      expect(BODY_LIMIT).toBeGreaterThanOrEqual(largest);
      expect(BODY_LIMIT - largest).toBeLessThan(64 * 1024);
      expect(disputePath.patch!['x-body-limit']).toBe(BODY_LIMIT);
    });

    it('200: ten files of 1,048,576 bytes with the longest names and category', async () => {
      const { payment, chargeback } = await chargedBackPayment(t);
      const res = await postDispute(t, payment.id, chargeback.id, undefined, { raw: largestBody(t.sandbox.account_id) });
      expect(res.status, await res.clone().text()).toBe(200);
      const rows = await t.db.query<{ n: number; total: number }>(
        'SELECT count(*)::int8 AS n, sum(size_bytes)::int8 AS total FROM dispute_evidence e JOIN disputes d ON d.id = e.dispute_id WHERE d.payment_id = $1',
        [payment.id],
      );
      expect(rows[0]).toEqual({ n: 10, total: 10 * MB });
    });

    it('413 PAYLOAD_TOO_LARGE: one byte over the limit, and eleven 1 MB files (POST and PATCH); nothing written', async () => {
      const { payment, chargeback } = await chargedBackPayment(t);
      const base = JSON.stringify({ evidence: [evidence()] });
      const overByOne = `${base.slice(0, -1)}${' '.repeat(BODY_LIMIT + 1 - base.length)}}`;
      expect(Buffer.byteLength(overByOne)).toBe(BODY_LIMIT + 1);
      await expectProblem(await postDispute(t, payment.id, chargeback.id, undefined, { raw: overByOne }), 413, 'PAYLOAD_TOO_LARGE');
      const justFits = `${base.slice(0, -1)}${' '.repeat(BODY_LIMIT - base.length)}}`;
      expect((await postDispute(t, payment.id, chargeback.id, undefined, { raw: justFits })).status).toBe(200);
      const eleven = JSON.stringify({ evidence: Array.from({ length: 11 }, () => evidence({ content: pdfBase64(MB) })) });
      await expectProblem(await postDispute(t, payment.id, chargeback.id, undefined, { raw: eleven, method: 'PATCH' }), 413, 'PAYLOAD_TOO_LARGE');
      await expectProblem(await postDispute(t, payment.id, chargeback.id, undefined, { raw: overByOne, method: 'PATCH' }), 413, 'PAYLOAD_TOO_LARGE');
      const rows = await t.db.query('SELECT 1 FROM dispute_evidence e JOIN disputes d ON d.id = e.dispute_id WHERE d.payment_id = $1', [payment.id]);
      expect(rows).toHaveLength(1);
    });
  });
}
