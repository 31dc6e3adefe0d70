/**
 * Chargebacks: the signed provider notification endpoint (receiveProviderNotification) and the sandbox
 * injection (createSandboxChargeback), which goes through the same path. A bad or stale signature is
 * 401 and writes nothing; a repeated notification id is acknowledged and changes nothing.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, expectSchema } from './support/assertions.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import {
  CARDS,
  chargebackNotification,
  createPayment,
  getPayment,
  injectChargeback,
  postNotification,
  providerSecret,
  signedNotification,
  startNonSandboxServer,
} from './support/payments.js';

async function notificationRows(t: TestServer, paymentId: string): Promise<number> {
  const rows = await t.db.query<{ n: number }>("SELECT count(*)::int8 AS n FROM provider_notifications WHERE payload->'data'->>'payment_id' = $1", [paymentId]);
  return rows[0]!.n;
}

/** The payment is exactly as it was: same body (so same updated_at, transactions and history). */
async function expectUnchanged(t: TestServer, before: Schemas['Payment']): Promise<void> {
  const after = await getPayment(t, before.id, '?transactions_history=true');
  expect(after).toEqual(before);
}

for (const backend of backends()) {
  describe(`receiveProviderNotification on ${backend}`, () => {
    const t = useServer(backend);

    it('200: a signed chargeback adds a CHARGEBACK transaction (CREATED) and moves the payment to IN_DISPUTE / RECEIVED', async () => {
      const payment = await createPayment(t);
      const body = chargebackNotification(payment, { chargeback_id: 'acq_cb_0001' });
      const signed = await signedNotification(t, body);
      const res = await postNotification(t, signed);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ received: true, duplicate: false });

      const p = await getPayment(t, payment.id, '?raw_response=true&transactions_history=true');
      expectSchema('Payment', p);
      expect(p).toMatchObject({ status: 'IN_DISPUTE', sub_status: 'RECEIVED', amount: { captured: 150.5, refunded: 0 } });
      const cb = p.transactions[1]!;
      expect(cb).toMatchObject({
        type: 'CHARGEBACK', status: 'CREATED', amount: 150.5, reason: 'REQUESTED_BY_CUSTOMER', provider_id: 'SANDBOX_A',
        response_code: null, category: 'CARD',
        provider_data: { id: 'SANDBOX_A', transaction_id: 'acq_cb_0001', status: 'CHARGEBACK', reason_code: '13.7', reason_description: 'Cancelled merchandise/services' },
      });
      // The raw response is the notification exactly as received.
      expect(cb.provider_data.raw_response).toEqual(body);
      const stored = await t.db.query<{ raw: string }>('SELECT raw_response::text AS raw FROM payment_transactions WHERE id = $1', [cb.id]);
      expect(stored[0]!.raw).toBe(signed.raw);
      expect(cb.payment_method).toEqual(p.transactions[0]!.payment_method);
      expect(p.transactions_history!.at(-1)).toMatchObject({ status: 'IN_DISPUTE', sub_status: 'RECEIVED', transaction_id: cb.id, transaction_status: 'CREATED', reason: 'REQUESTED_BY_CUSTOMER' });
    });

    it('200 duplicate: the same notification id again is acknowledged and changes nothing', async () => {
      const payment = await createPayment(t);
      const body = chargebackNotification(payment);
      expect((await postNotification(t, await signedNotification(t, body))).status).toBe(200);
      const before = await getPayment(t, payment.id, '?transactions_history=true');
      // Re-sent later with a fresh signature (a provider retry), and even with other content under the same id.
      const again = await postNotification(t, await signedNotification(t, body));
      expect(again.status).toBe(200);
      expect(await again.json()).toEqual({ received: true, duplicate: true });
      const altered = await postNotification(t, await signedNotification(t, { ...body, data: { ...(body.data as object), amount: 10 } }));
      expect(await altered.json()).toEqual({ received: true, duplicate: true });
      await expectUnchanged(t, before);
    });

    it('10 simultaneous deliveries of one notification: one chargeback', async () => {
      const payment = await createPayment(t);
      const signed = await signedNotification(t, chargebackNotification(payment));
      const results = await Promise.all(Array.from({ length: 10 }, () => postNotification(t, signed)));
      const bodies = (await Promise.all(results.map((r) => r.json()))) as { duplicate: boolean }[];
      expect(results.every((r) => r.status === 200)).toBe(true);
      expect(bodies.filter((b) => !b.duplicate)).toHaveLength(1);
      const p = await getPayment(t, payment.id);
      expect(p.transactions.filter((x) => x.type === 'CHARGEBACK')).toHaveLength(1);
    });

    const badSignatures: { name: string; sign: (t: TestServer, body: Record<string, unknown>) => Promise<{ raw: string; headers: Record<string, string> }> }[] = [
      { name: 'signed with another secret', sign: (t, b) => signedNotification(t, b, { secret: `whsec_${Buffer.from('not the provider secret').toString('base64')}` }) },
      {
        name: 'body changed after signing',
        sign: async (t, b) => {
          const s = await signedNotification(t, b);
          return { ...s, raw: s.raw.replace('"amount":150.5', '"amount":15.5') };
        },
      },
      { name: 'timestamp 10 minutes old (replay window)', sign: (t, b) => signedNotification(t, b, { at: new Date(Date.now() - 10 * 60_000) }) },
      { name: 'timestamp 10 minutes in the future', sign: (t, b) => signedNotification(t, b, { at: new Date(Date.now() + 10 * 60_000) }) },
      {
        name: 'webhook-id not the one signed',
        sign: async (t, b) => {
          const s = await signedNotification(t, b);
          return { ...s, headers: { ...s.headers, 'webhook-id': 'another-id' } };
        },
      },
      {
        name: 'signature of another scheme version',
        sign: async (t, b) => {
          const s = await signedNotification(t, b);
          return { ...s, headers: { ...s.headers, 'webhook-signature': s.headers['webhook-signature']!.replace(/^v1,/, 'v1a,') } };
        },
      },
      {
        name: 'garbage signature',
        sign: async (t, b) => {
          const s = await signedNotification(t, b);
          return { ...s, headers: { ...s.headers, 'webhook-signature': 'v1,AAAA' } };
        },
      },
    ];

    it.each(badSignatures)('401 INVALID_CREDENTIALS and nothing written: $name', async ({ sign }) => {
      const payment = await createPayment(t);
      const before = await getPayment(t, payment.id, '?transactions_history=true');
      const res = await postNotification(t, await sign(t, chargebackNotification(payment)));
      await expectProblem(res, 401, 'INVALID_CREDENTIALS');
      expect(await notificationRows(t, payment.id)).toBe(0);
      await expectUnchanged(t, before);
    });

    it('400: the Standard Webhooks headers are required', async () => {
      const payment = await createPayment(t);
      const signed = await signedNotification(t, chargebackNotification(payment));
      for (const missing of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
        const headers = { ...signed.headers };
        delete headers[missing];
        const problem = await expectProblem(await postNotification(t, { raw: signed.raw, headers }), 400, 'INVALID_REQUEST');
        expect(JSON.stringify(problem.errors)).toContain(missing);
      }
      expect(await notificationRows(t, payment.id)).toBe(0);
    });

    const badBodies: { name: string; body: (p: Schemas['CreatedPayment']) => Record<string, unknown>; field: string }[] = [
      { name: 'unknown type', body: (p) => ({ ...chargebackNotification(p), type: 'REFUND' }), field: '/body/type' },
      { name: 'unknown member', body: (p) => ({ ...chargebackNotification(p), extra: 1 }), field: '/body/extra' },
      { name: 'payment_id not a uuid', body: (p) => chargebackNotification(p, { payment_id: 'nope' }), field: '/body/data/payment_id' },
      { name: 'amount zero', body: (p) => chargebackNotification(p, { amount: 0 }), field: '/body/data/amount' },
      { name: 'amount with 3 decimals in BRL', body: (p) => chargebackNotification(p, { amount: 1.005 }), field: '/body/data/amount' },
      { name: 'amount above the captured amount', body: (p) => chargebackNotification(p, { amount: 150.51 }), field: '/body/data/amount' },
    ];

    it('404 TRANSACTION_NOT_FOUND: provider_transaction_id of no purchase of this payment; nothing written', async () => {
      const payment = await createPayment(t);
      const before = await getPayment(t, payment.id, '?transactions_history=true');
      const body = chargebackNotification(payment, { provider_transaction_id: 'sbx_txn_other' });
      const problem = await expectProblem(await postNotification(t, await signedNotification(t, body)), 404, 'TRANSACTION_NOT_FOUND');
      expect((problem.errors as { path: string }[]).map((e) => e.path)).toContain('/body/data/provider_transaction_id');
      expect(await notificationRows(t, payment.id)).toBe(0);
      await expectUnchanged(t, before);
    });

    it.each(badBodies)('400 names the field, nothing written: $name', async ({ body, field }) => {
      const payment = await createPayment(t);
      const before = await getPayment(t, payment.id, '?transactions_history=true');
      const problem = await expectProblem(await postNotification(t, await signedNotification(t, body(payment))), 400, 'INVALID_REQUEST');
      expect((problem.errors as { path: string }[]).map((e) => e.path)).toContain(field);
      expect(await notificationRows(t, payment.id)).toBe(0);
      await expectUnchanged(t, before);
    });

    it('404 NOT_FOUND: a provider that does not exist', async () => {
      const payment = await createPayment(t);
      await expectProblem(await postNotification(t, await signedNotification(t, chargebackNotification(payment)), 'adyen'), 404, 'NOT_FOUND');
    });

    it('404 PAYMENT_NOT_FOUND: a signed notification about an unknown payment; the id stays unused', async () => {
      const payment = await createPayment(t);
      const body = chargebackNotification(payment, { payment_id: randomUUID() });
      await expectProblem(await postNotification(t, await signedNotification(t, body)), 404, 'PAYMENT_NOT_FOUND');
      const rows = await t.db.query('SELECT 1 FROM provider_notifications WHERE notification_id = $1', [body.id]);
      expect(rows).toHaveLength(0);
    });

    it('409 INVALID_STATUS: a chargeback on a declined payment, or a second one while in dispute', async () => {
      const declined = await createPayment(t, { card: CARDS.declined });
      await expectProblem(await postNotification(t, await signedNotification(t, chargebackNotification(declined))), 409, 'INVALID_STATUS');
      const payment = await createPayment(t);
      expect((await postNotification(t, await signedNotification(t, chargebackNotification(payment)))).status).toBe(200);
      const before = await getPayment(t, payment.id, '?transactions_history=true');
      await expectProblem(await postNotification(t, await signedNotification(t, chargebackNotification(payment))), 409, 'INVALID_STATUS');
      await expectUnchanged(t, before);
    });

    it('413: a body over 100 KB; 415: a body not JSON', async () => {
      const payment = await createPayment(t);
      const huge = await signedNotification(t, chargebackNotification(payment, { reason: 'x'.repeat(200_000) }));
      await expectProblem(await postNotification(t, huge), 413, 'PAYLOAD_TOO_LARGE');
      const signed = await signedNotification(t, chargebackNotification(payment));
      await expectProblem(await postNotification(t, { raw: signed.raw, headers: { ...signed.headers, 'content-type': 'text/plain' } }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('the signing secret is generated once, Standard Webhooks form, and stored only sealed', async () => {
      const secret = await providerSecret(t);
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      const rows = await t.db.query<{ secret: string | null; key_id: string; sealed: string }>(
        "SELECT secret, key_id, encode(ciphertext, 'hex') AS sealed FROM provider_secrets",
      );
      expect(rows).toEqual([{ secret: null, key_id: 'k1', sealed: expect.stringMatching(/^[0-9a-f]{100,}$/) }]);
      expect(rows[0]!.sealed).not.toContain(Buffer.from(secret).toString('hex'));
      expect(t.logs.join('\n')).not.toContain(secret);
    });
  });

  describe(`createSandboxChargeback on ${backend}`, () => {
    const t = useServer(backend);

    it('201: the chargeback transaction; recorded as a signed provider notification', async () => {
      const payment = await createPayment(t);
      const cb = await injectChargeback(t, payment.id);
      expectSchema('Transaction', cb);
      expect(cb).toMatchObject({ type: 'CHARGEBACK', status: 'CREATED', amount: 150.5, reason: 'REQUESTED_BY_CUSTOMER', provider_data: { reason_code: '13.7', raw_response: null } });
      expect(await notificationRows(t, payment.id)).toBe(1);
      const p = await getPayment(t, payment.id);
      expect(p).toMatchObject({ status: 'IN_DISPUTE', sub_status: 'RECEIVED' });
      expect(p.transactions[1]).toEqual(cb);
    });

    it('201: a partial amount and another reason', async () => {
      const payment = await createPayment(t, { amount: { currency: 'BRL', value: 200 } });
      const cb = await injectChargeback(t, payment.id, { amount: 50.25, reason: 'FRAUDULENT' });
      expect(cb).toMatchObject({ amount: 50.25, reason: 'FRAUDULENT', provider_data: { reason_code: '10.4' } });
    });

    it('201 without a body at all', async () => {
      const payment = await createPayment(t);
      const res = await t.fetch(`/sandbox/payments/${payment.id}/chargebacks`, { method: 'POST' });
      expect(res.status).toBe(201);
    });

    const badInputs: { name: string; body: unknown; field: string }[] = [
      { name: 'amount with 3 decimals', body: { amount: 1.001 }, field: '/body/amount' },
      { name: 'amount above the captured amount', body: { amount: 1000 }, field: '/body/amount' },
      { name: 'amount zero', body: { amount: 0 }, field: '/body/amount' },
      { name: 'unknown reason', body: { reason: 'BORED' }, field: '/body/reason' },
      { name: 'unknown member', body: { amount: 1, extra: true }, field: '/body/extra' },
    ];

    it.each(badInputs)('400 names the field: $name', async ({ body, field }) => {
      const payment = await createPayment(t);
      const res = await t.fetch(`/sandbox/payments/${payment.id}/chargebacks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const problem = await expectProblem(res, 400, 'INVALID_REQUEST');
      expect((problem.errors as { path: string }[]).map((e) => e.path)).toContain(field);
      expect((await getPayment(t, payment.id)).status).toBe('SUCCEEDED');
    });

    it('401: no credentials', async () => {
      const payment = await createPayment(t);
      await expectProblem(await t.fetch(`/sandbox/payments/${payment.id}/chargebacks`, { method: 'POST', credentials_: false }), 401, 'INVALID_CREDENTIALS');
    });

    it('404 PAYMENT_NOT_FOUND: unknown, or another organization\'s payment', async () => {
      await expectProblem(await t.fetch(`/sandbox/payments/${randomUUID()}/chargebacks`, { method: 'POST' }), 404, 'PAYMENT_NOT_FOUND');
      const payment = await createPayment(t);
      const other = await t.createOrganization();
      const res = await t.fetch(`/sandbox/payments/${payment.id}/chargebacks`, {
        method: 'POST',
        headers: { 'public-api-key': other.public_api_key, 'private-secret-key': other.private_secret_key },
      });
      await expectProblem(res, 404, 'PAYMENT_NOT_FOUND');
    });

    it('409 INVALID_STATUS: a declined payment; a payment already in dispute', async () => {
      const declined = await createPayment(t, { card: CARDS.insufficientFunds });
      await expectProblem(await t.fetch(`/sandbox/payments/${declined.id}/chargebacks`, { method: 'POST' }), 409, 'INVALID_STATUS');
      const payment = await createPayment(t);
      await injectChargeback(t, payment.id);
      await expectProblem(await t.fetch(`/sandbox/payments/${payment.id}/chargebacks`, { method: 'POST' }), 409, 'INVALID_STATUS');
    });

    it('413: a body over 100 KB; 415: not JSON', async () => {
      const payment = await createPayment(t);
      const big = JSON.stringify({ reason: 'OTHER', pad: 'x'.repeat(200_000) });
      await expectProblem(await t.fetch(`/sandbox/payments/${payment.id}/chargebacks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big }), 413, 'PAYLOAD_TOO_LARGE');
      await expectProblem(await t.fetch(`/sandbox/payments/${payment.id}/chargebacks`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    });
  });
}

describe('sandbox operations outside sandbox mode', () => {
  let server: Awaited<ReturnType<typeof startNonSandboxServer>>;
  beforeAll(async () => {
    server = await startNonSandboxServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('404 NOT_FOUND for the chargeback injection and the dispute resolution', async () => {
    const headers = { 'content-type': 'application/json', 'public-api-key': server.creds.public_api_key, 'private-secret-key': server.creds.private_secret_key };
    const a = await fetch(`${server.url}/sandbox/payments/${randomUUID()}/chargebacks`, { method: 'POST', headers, body: '{}' });
    await expectProblem(a, 404, 'NOT_FOUND');
    const b = await fetch(`${server.url}/sandbox/payments/${randomUUID()}/disputes/resolve`, { method: 'POST', headers, body: '{"outcome":"WON"}' });
    await expectProblem(b, 404, 'NOT_FOUND');
  });
});
