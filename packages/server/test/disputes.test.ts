/**
 * disputeChargeback (POST), addDisputeEvidence (PATCH) and resolveSandboxDispute contract tests: every
 * documented status, the dispute response shape, the effects of one accepted dispute (evidence with
 * SHA-256, state, history, outbox) and that a refused one changes nothing.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { describe, expect, it } from 'vitest';
import { expectProblem, expectSchema } from './support/assertions.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { chargedBackPayment, createPayment, evidence, getPayment, injectChargeback, pdfBase64, postDispute } from './support/payments.js';

const DISPUTED_FIELDS = [
  'id', 'account_id', 'description', 'country', 'status', 'sub_status', 'merchant_order_id', 'created_at', 'updated_at', 'amount',
  'checkout', 'payment_method', 'customer_payer', 'additional_data', 'transactions', 'transactions_history', 'split_marketplace',
  'callback_url', 'workflow', 'metadata', 'fraud_screening', 'payment_link_id', 'subscription_code', 'routing_rules', 'simplified_mode',
].sort();

async function evidenceRows(t: TestServer, paymentId: string) {
  return t.db.query<{ file_name: string; content_category: string; size_bytes: number; sha256: Uint8Array; content: Uint8Array }>(
    `SELECT e.file_name, e.content_category, e.size_bytes, e.sha256, e.content FROM dispute_evidence e JOIN disputes d ON d.id = e.dispute_id
      WHERE d.payment_id = $1 ORDER BY e.seq`,
    [paymentId],
  );
}

async function outboxCount(t: TestServer, paymentId: string): Promise<number> {
  const rows = await t.db.query<{ n: number }>("SELECT count(*)::int8 AS n FROM outbox WHERE topic = 'dispute.evidence' AND payload->>'payment_id' = $1", [paymentId]);
  return rows[0]!.n;
}

/** Nothing of a refused dispute is left: payment as before, no evidence, no outbox message. */
async function expectNothingWritten(t: TestServer, before: Schemas['Payment']): Promise<void> {
  expect(await getPayment(t, before.id, '?transactions_history=true')).toEqual(before);
  expect(await evidenceRows(t, before.id)).toHaveLength(0);
  expect(await outboxCount(t, before.id)).toBe(0);
}

for (const backend of backends()) {
  describe(`disputeChargeback on ${backend}`, () => {
    const t = useServer(backend);

    it('200: the dispute shape; payment IN_DISPUTE / PENDING_REVIEW, chargeback still CREATED', async () => {
      const { payment, chargeback } = await chargedBackPayment(t);
      const content = pdfBase64(4096);
      const res = await postDispute(t, payment.id, chargeback.id, {
        account_id: t.sandbox.account_id,
        evidence: [evidence({ content, content_category: 'RECEIPT' }), evidence({ file_name: 'terms.pdf', content_category: 'TERMS_AND_CONDITIONS' })],
      });
      expect(res.status).toBe(200);
      const d = (await res.json()) as Schemas['DisputedPayment'];
      expectSchema('DisputedPayment', d);
      expect(Object.keys(d).sort()).toEqual(DISPUTED_FIELDS);
      expect(d).toMatchObject({
        id: payment.id,
        status: 'IN_DISPUTE',
        sub_status: 'PENDING_REVIEW',
        transactions_history: null,
        split_marketplace: [],
        fraud_screening: null,
        payment_link_id: '',
        subscription_code: null,
        routing_rules: { smart_routing: false, monitors: true, condition: { id: 0, name: 'Default route' } },
        simplified_mode: false,
      });
      expect(Array.isArray(d.transactions)).toBe(false);
      expect(d.transactions).toMatchObject({ id: chargeback.id, type: 'CHARGEBACK', status: 'CREATED', reason: 'REQUESTED_BY_CUSTOMER' });

      // Effects, in one transaction: evidence with its SHA-256, history, outbox.
      const rows = await evidenceRows(t, payment.id);
      expect(rows.map((r) => [r.file_name, r.content_category])).toEqual([['receipt.pdf', 'RECEIPT'], ['terms.pdf', 'TERMS_AND_CONDITIONS']]);
      const bytes = Buffer.from(content, 'base64');
      expect(rows[0]!.size_bytes).toBe(4096);
      expect(Buffer.from(rows[0]!.content).equals(bytes)).toBe(true);
      expect(Buffer.from(rows[0]!.sha256).toString('hex')).toBe(createHash('sha256').update(bytes).digest('hex'));
      expect(await outboxCount(t, payment.id)).toBe(1);
      const p = await getPayment(t, payment.id, '?transactions_history=true');
      expect(p.transactions_history!.map((h) => `${h.status}/${h.sub_status}`)).toEqual([
        'CREATED/CREATED', 'SUCCEEDED/APPROVED', 'IN_DISPUTE/RECEIVED', 'IN_DISPUTE/PENDING_REVIEW',
      ]);
      expect(p.transactions.find((x) => x.id === chargeback.id)!.status).toBe('CREATED');
    });

    it('200 replayed with the same key: the stored answer, no second set of evidence; another body is 422 IDEMPOTENCY_KEY_REUSED', async () => {
      const { payment, chargeback } = await chargedBackPayment(t);
      const key = randomUUID();
      const body = { evidence: [evidence()] };
      const first = await postDispute(t, payment.id, chargeback.id, body, { key });
      expect(first.status).toBe(200);
      const again = await postDispute(t, payment.id, chargeback.id, body, { key });
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await again.json()).toEqual(await first.json());
      expect(await evidenceRows(t, payment.id)).toHaveLength(1);
      expect(await outboxCount(t, payment.id)).toBe(1);
      await expectProblem(await postDispute(t, payment.id, chargeback.id, { evidence: [evidence({ file_name: 'other.pdf' })] }, { key }), 422, 'IDEMPOTENCY_KEY_REUSED');
    });

    const badBodies: { name: string; body: unknown; field: string }[] = [
      { name: 'no evidence member', body: {}, field: '/body/evidence' },
      { name: 'zero evidence items', body: { evidence: [] }, field: '/body/evidence' },
      { name: 'eleven evidence items', body: { evidence: Array.from({ length: 11 }, () => evidence({ content: pdfBase64(128) })) }, field: '/body/evidence' },
      { name: 'content_type image/png', body: { evidence: [evidence({ content_type: 'image/png' as 'application/pdf' })] }, field: '/body/evidence/0/content_type' },
      { name: 'unknown content_category', body: { evidence: [evidence({ content_category: 'SELFIE' as 'RECEIPT' })] }, field: '/body/evidence/0/content_category' },
      { name: 'file_name with a slash', body: { evidence: [evidence({ file_name: '../etc/passwd' })] }, field: '/body/evidence/0/file_name' },
      { name: 'file_name with a backslash', body: { evidence: [evidence({ file_name: 'C:\\boot.pdf' })] }, field: '/body/evidence/0/file_name' },
      { name: 'file_name with a control character', body: { evidence: [evidence({ file_name: 'a\u0000b.pdf' })] }, field: '/body/evidence/0/file_name' },
      { name: 'file_name too short', body: { evidence: [evidence({ file_name: 'ab' })] }, field: '/body/evidence/0/file_name' },
      { name: 'file_name over 255 characters', body: { evidence: [evidence({ file_name: `${'a'.repeat(252)}.pdf` })] }, field: '/body/evidence/0/file_name' },
      { name: 'content not a string', body: { evidence: [{ ...evidence(), content: 12345 }] }, field: '/body/evidence/0/content' },
      { name: 'content too short', body: { evidence: [evidence({ content: 'JVBE' })] }, field: '/body/evidence/0/content' },
      { name: 'content over 1,398,104 characters', body: { evidence: [evidence({ content: 'A'.repeat(1_398_108) })] }, field: '/body/evidence/0/content' },
      { name: 'unknown member in an item', body: { evidence: [{ ...evidence(), size: 1 }] }, field: '/body/evidence/0/size' },
      { name: 'unknown top-level member', body: { evidence: [evidence()], note: 'x' }, field: '/body/note' },
      { name: 'account_id too short', body: { account_id: 'abc', evidence: [evidence()] }, field: '/body/account_id' },
    ];

    it.each(badBodies)('400 names the field, nothing written: $name', async ({ body, field }) => {
      const { payment, chargeback } = await chargedBackPayment(t);
      const before = await getPayment(t, payment.id, '?transactions_history=true');
      const problem = await expectProblem(await postDispute(t, payment.id, chargeback.id, body), 400, 'INVALID_REQUEST');
      expect((problem.errors as { path: string }[]).map((e) => e.path)).toContain(field);
      await expectNothingWritten(t, before);
    });

    it('400: missing X-Idempotency-Key; malformed JSON; a transaction_id shorter than 36 characters', async () => {
      const { payment, chargeback } = await chargedBackPayment(t);
      const path = `/payments/${payment.id}/transactions/${chargeback.id}/dispute`;
      await expectProblem(await t.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ evidence: [evidence()] }) }), 400, 'INVALID_REQUEST');
      await expectProblem(await postDispute(t, payment.id, chargeback.id, undefined, { raw: '{"evidence": [' }), 400, 'INVALID_REQUEST');
      await expectProblem(await postDispute(t, payment.id, 'short', { evidence: [evidence()] }), 400, 'INVALID_REQUEST');
    });

    it('401: no credentials', async () => {
      const { payment, chargeback } = await chargedBackPayment(t);
      const res = await t.fetch(`/payments/${payment.id}/transactions/${chargeback.id}/dispute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() },
        body: JSON.stringify({ evidence: [evidence()] }),
        credentials_: false,
      });
      await expectProblem(res, 401, 'INVALID_CREDENTIALS');
    });

    it('403 INVALID_ACCOUNT_ID: an account of another organization; nothing written', async () => {
      const { payment, chargeback } = await chargedBackPayment(t);
      const before = await getPayment(t, payment.id, '?transactions_history=true');
      const other = await t.createOrganization();
      await expectProblem(await postDispute(t, payment.id, chargeback.id, { account_id: other.account_id, evidence: [evidence()] }), 403, 'INVALID_ACCOUNT_ID');
      await expectNothingWritten(t, before);
    });

    it('404 PAYMENT_NOT_FOUND / TRANSACTION_NOT_FOUND: unknown ids, another payment\'s chargeback, another organization\'s payment', async () => {
      const { payment, chargeback } = await chargedBackPayment(t);
      const body = { evidence: [evidence()] };
      await expectProblem(await postDispute(t, randomUUID(), chargeback.id, body), 404, 'PAYMENT_NOT_FOUND');
      await expectProblem(await postDispute(t, payment.id, randomUUID(), body), 404, 'TRANSACTION_NOT_FOUND');
      const second = await chargedBackPayment(t);
      await expectProblem(await postDispute(t, payment.id, second.chargeback.id, body), 404, 'TRANSACTION_NOT_FOUND');
      const other = await t.createOrganization();
      const res = await t.fetch(`/payments/${payment.id}/transactions/${chargeback.id}/dispute`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json', 'x-idempotency-key': randomUUID(),
          'public-api-key': other.public_api_key, 'private-secret-key': other.private_secret_key,
        },
        body: JSON.stringify(body),
      });
      await expectProblem(res, 404, 'PAYMENT_NOT_FOUND');
    });

    it('409 INVALID_STATUS: disputing the PURCHASE transaction', async () => {
      const { payment } = await chargedBackPayment(t);
      const before = await getPayment(t, payment.id, '?transactions_history=true');
      await expectProblem(await postDispute(t, payment.id, payment.transactions.id, { evidence: [evidence()] }), 409, 'INVALID_STATUS');
      await expectNothingWritten(t, before);
    });

    it('409 INVALID_STATUS: a payment without a chargeback (its purchase), and a second dispute of the same chargeback', async () => {
      const plain = await createPayment(t);
      await expectProblem(await postDispute(t, plain.id, plain.transactions.id, { evidence: [evidence()] }), 409, 'INVALID_STATUS');
      const { payment, chargeback } = await chargedBackPayment(t);
      expect((await postDispute(t, payment.id, chargeback.id, { evidence: [evidence()] })).status).toBe(200);
      await expectProblem(await postDispute(t, payment.id, chargeback.id, { evidence: [evidence()] }), 409, 'INVALID_STATUS');
      expect(await evidenceRows(t, payment.id)).toHaveLength(1);
    });

    it('5 simultaneous disputes of one chargeback (different keys): one 200, four 409, one set of evidence', async () => {
      const { payment, chargeback } = await chargedBackPayment(t);
      const results = await Promise.all(Array.from({ length: 5 }, () => postDispute(t, payment.id, chargeback.id, { evidence: [evidence()] })));
      expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409]);
      expect(await evidenceRows(t, payment.id)).toHaveLength(1);
      expect(await outboxCount(t, payment.id)).toBe(1);
    });

    it('409 INVALID_STATUS: a chargeback already decided', async () => {
      const { payment, chargeback } = await chargedBackPayment(t);
      expect((await postDispute(t, payment.id, chargeback.id, { evidence: [evidence()] })).status).toBe(200);
      const resolved = await t.fetch(`/sandbox/payments/${payment.id}/disputes/resolve`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"outcome":"LOST"}' });
      expect(resolved.status).toBe(200);
      await expectProblem(await postDispute(t, payment.id, chargeback.id, { evidence: [evidence()] }), 409, 'INVALID_STATUS');
      await expectProblem(await postDispute(t, payment.id, chargeback.id, { evidence: [evidence()] }, { method: 'PATCH' }), 409, 'INVALID_STATUS');
    });

    it('415: body not JSON', async () => {
      const { payment, chargeback } = await chargedBackPayment(t);
      const res = await t.fetch(`/payments/${payment.id}/transactions/${chargeback.id}/dispute`, {
        method: 'POST',
        headers: { 'content-type': 'multipart/form-data; boundary=x', 'x-idempotency-key': randomUUID() },
        body: '--x--',
      });
      await expectProblem(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('422 INVALID_EVIDENCE names the item; several bad items are all listed; nothing written', async () => {
      const { payment, chargeback } = await chargedBackPayment(t);
      const before = await getPayment(t, payment.id, '?transactions_history=true');
      const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63000100000500010d0a2db40000000049454e44ae426082', 'hex');
      const res = await postDispute(t, payment.id, chargeback.id, {
        evidence: [evidence(), evidence(), evidence({ file_name: 'photo.pdf', content: png.toString('base64') }), evidence({ file_name: '...' })],
      });
      const problem = await expectProblem(res, 422, 'INVALID_EVIDENCE');
      expect(problem.errors).toEqual([
        { path: '/body/evidence/2/content', message: 'is not a PDF: the file does not start with %PDF-' },
        { path: '/body/evidence/3/file_name', message: 'must contain more than dots and spaces' },
      ]);
      await expectNothingWritten(t, before);
    });
  });

  describe(`addDisputeEvidence on ${backend}`, () => {
    const t = useServer(backend);

    it('200: more evidence while PENDING_REVIEW; state unchanged; another outbox message', async () => {
      const { payment, chargeback } = await chargedBackPayment(t);
      const opened = await postDispute(t, payment.id, chargeback.id, { evidence: [evidence()] });
      const first = (await opened.json()) as Schemas['DisputedPayment'];
      const res = await postDispute(t, payment.id, chargeback.id, { evidence: [evidence({ file_name: 'delivery.pdf', content_category: 'PROOF_OF_DELIVERY' })] }, { method: 'PATCH' });
      expect(res.status).toBe(200);
      const d = (await res.json()) as Schemas['DisputedPayment'];
      expectSchema('DisputedPayment', d);
      expect(d).toMatchObject({ status: 'IN_DISPUTE', sub_status: 'PENDING_REVIEW', transactions: { id: chargeback.id, status: 'CREATED' } });
      expect(d.updated_at >= first.updated_at).toBe(true);
      expect((await evidenceRows(t, payment.id)).map((r) => r.content_category)).toEqual(['RECEIPT', 'PROOF_OF_DELIVERY']);
      expect(await outboxCount(t, payment.id)).toBe(2);
      const p = await getPayment(t, payment.id, '?transactions_history=true');
      expect(p.transactions_history!.filter((h) => h.sub_status === 'PENDING_REVIEW')).toHaveLength(1);
    });

    it('409 INVALID_STATUS: no dispute yet (RECEIVED); the purchase transaction', async () => {
      const { payment, chargeback } = await chargedBackPayment(t);
      await expectProblem(await postDispute(t, payment.id, chargeback.id, { evidence: [evidence()] }, { method: 'PATCH' }), 409, 'INVALID_STATUS');
      await expectProblem(await postDispute(t, payment.id, payment.transactions.id, { evidence: [evidence()] }, { method: 'PATCH' }), 409, 'INVALID_STATUS');
      expect(await evidenceRows(t, payment.id)).toHaveLength(0);
    });

    it('400, 401, 403, 404, 415, 422 as for the dispute', async () => {
      const { payment, chargeback } = await chargedBackPayment(t);
      expect((await postDispute(t, payment.id, chargeback.id, { evidence: [evidence()] })).status).toBe(200);
      const patch = (body: unknown) => postDispute(t, payment.id, chargeback.id, body, { method: 'PATCH' });
      await expectProblem(await patch({ evidence: [] }), 400, 'INVALID_REQUEST');
      await expectProblem(
        await t.fetch(`/payments/${payment.id}/transactions/${chargeback.id}/dispute`, {
          method: 'PATCH', headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() }, body: JSON.stringify({ evidence: [evidence()] }), credentials_: false,
        }),
        401,
        'INVALID_CREDENTIALS',
      );
      const other = await t.createOrganization();
      await expectProblem(await patch({ account_id: other.account_id, evidence: [evidence()] }), 403, 'INVALID_ACCOUNT_ID');
      await expectProblem(await postDispute(t, payment.id, randomUUID(), { evidence: [evidence()] }, { method: 'PATCH' }), 404, 'TRANSACTION_NOT_FOUND');
      await expectProblem(await postDispute(t, randomUUID(), chargeback.id, { evidence: [evidence()] }, { method: 'PATCH' }), 404, 'PAYMENT_NOT_FOUND');
      await expectProblem(
        await t.fetch(`/payments/${payment.id}/transactions/${chargeback.id}/dispute`, { method: 'PATCH', headers: { 'content-type': 'text/plain', 'x-idempotency-key': randomUUID() }, body: 'x' }),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      );
      await expectProblem(await patch({ evidence: [evidence({ content: pdfBase64().replace(/=+$/, '') + 'AA' })] }), 422, 'INVALID_EVIDENCE');
      expect(await evidenceRows(t, payment.id)).toHaveLength(1);
    });
  });

  describe(`resolveSandboxDispute on ${backend}`, () => {
    const t = useServer(backend);
    const resolve = (paymentId: string, body: unknown, init: RequestInit & { credentials_?: false } = {}) =>
      t.fetch(`/sandbox/payments/${paymentId}/disputes/resolve`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), ...init });

    async function disputed(): Promise<{ payment: Schemas['CreatedPayment']; chargeback: Schemas['Transaction'] }> {
      const c = await chargedBackPayment(t);
      expect((await postDispute(t, c.payment.id, c.chargeback.id, { evidence: [evidence()] })).status).toBe(200);
      return c;
    }

    it('200 WON: the payment returns to SUCCEEDED / APPROVED, the chargeback to WON', async () => {
      const { payment, chargeback } = await disputed();
      const res = await resolve(payment.id, { outcome: 'WON' });
      expect(res.status).toBe(200);
      const p = (await res.json()) as Schemas['Payment'];
      expectSchema('Payment', p);
      expect(p).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED', transactions_history: null });
      expect(p.transactions.find((x) => x.id === chargeback.id)!.status).toBe('WON');
    });

    it('200 LOST: the payment is CHARGEBACK / LOST, the chargeback LOST', async () => {
      const { payment, chargeback } = await disputed();
      const p = (await (await resolve(payment.id, { outcome: 'LOST' })).json()) as Schemas['Payment'];
      expect(p).toMatchObject({ status: 'CHARGEBACK', sub_status: 'LOST' });
      expect(p.transactions.find((x) => x.id === chargeback.id)!.status).toBe('LOST');
    });

    it('400: an unknown outcome, a missing body; 401; 404 unknown payment; 415', async () => {
      const { payment } = await disputed();
      const problem = await expectProblem(await resolve(payment.id, { outcome: 'DRAW' }), 400, 'INVALID_REQUEST');
      expect(JSON.stringify(problem.errors)).toContain('/body/outcome');
      await expectProblem(await resolve(payment.id, {}), 400, 'INVALID_REQUEST');
      await expectProblem(await resolve(payment.id, { outcome: 'WON' }, { credentials_: false }), 401, 'INVALID_CREDENTIALS');
      await expectProblem(await resolve(randomUUID(), { outcome: 'WON' }), 404, 'PAYMENT_NOT_FOUND');
      await expectProblem(await t.fetch(`/sandbox/payments/${payment.id}/disputes/resolve`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'WON' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
      await expectProblem(await resolve(payment.id, { outcome: 'WON', pad: 'x'.repeat(200_000) }), 413, 'PAYLOAD_TOO_LARGE');
      expect((await getPayment(t, payment.id)).sub_status).toBe('PENDING_REVIEW');
    });

    it('409 INVALID_STATUS: a chargeback not disputed yet; a dispute already decided; a payment never charged back', async () => {
      const { payment } = await chargedBackPayment(t);
      await expectProblem(await resolve(payment.id, { outcome: 'WON' }), 409, 'INVALID_STATUS');
      const d = await disputed();
      expect((await resolve(d.payment.id, { outcome: 'WON' })).status).toBe(200);
      await expectProblem(await resolve(d.payment.id, { outcome: 'LOST' }), 409, 'INVALID_STATUS');
      const plain = await createPayment(t);
      await expectProblem(await resolve(plain.id, { outcome: 'WON' }), 409, 'INVALID_STATUS');
    });

    it('after WON a new chargeback can arrive and be disputed again', async () => {
      const { payment } = await disputed();
      expect((await resolve(payment.id, { outcome: 'WON' })).status).toBe(200);
      const second = await injectChargeback(t, payment.id, { amount: 10, reason: 'DUPLICATE' });
      expect((await postDispute(t, payment.id, second.id, { evidence: [evidence()] })).status).toBe(200);
      const p = await getPayment(t, payment.id);
      expect(p.transactions.map((x) => `${x.type}:${x.status}`)).toEqual(['PURCHASE:SUCCEEDED', 'CHARGEBACK:WON', 'CHARGEBACK:CREATED']);
    });
  });
}
