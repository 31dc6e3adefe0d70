/**
 * The payment lifecycle (docs/design.md §5): authorize only (`capture: false`), capture, cancel, refund
 * and cancel-or-refund. Every change is in transactions_history and announced by an event; every refusal
 * (state, amount, chargeback, provider) leaves the payment exactly as it was; each operation is
 * idempotent, and concurrent refunds never add up to more than was captured.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { describe, expect, it } from 'vitest';
import { expectProblem, expectSchema } from './support/assertions.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import {
  authorizedPayment,
  CARDS,
  cardTransactionId,
  createPayment,
  evidence,
  getPayment,
  injectChargeback,
  postDispute,
  postLifecycle,
} from './support/payments.js';

type Payment = Schemas['Payment'];

async function ok(res: Response, status = 200): Promise<Payment> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  const body = JSON.parse(text) as Payment;
  expectSchema('Payment', body);
  return body;
}

/** The event types announced for a payment, in order. */
async function eventTypes(t: TestServer, paymentId: string): Promise<string[]> {
  const rows = await t.db.query<{ type: string }>('SELECT type FROM webhook_events WHERE resource_id = $1 ORDER BY seq', [paymentId]);
  return rows.map((r) => r.type);
}

/** The payment is exactly as it was: same body (so same updated_at, transactions and history). */
async function expectUnchanged(t: TestServer, before: Payment): Promise<void> {
  expect(await getPayment(t, before.id, '?transactions_history=true')).toEqual(before);
}

for (const backend of backends()) {
  describe(`payment lifecycle on ${backend}`, () => {
    const t = useServer(backend);

    it('capture: false authorizes only: PENDING / AUTHORIZED, an AUTHORIZE transaction, nothing captured, payment.authorized', async () => {
      const payment = await authorizedPayment(t);
      expect(payment).toMatchObject({ status: 'PENDING', sub_status: 'AUTHORIZED', amount: { value: 150.5, captured: 0, refunded: 0 } });
      expect(Array.isArray(payment.transactions)).toBe(false); // the create shape: the transaction just made
      expect(payment.transactions).toMatchObject({ type: 'AUTHORIZE', status: 'SUCCEEDED', amount: 150.5 });
      expect(payment.payment_method.payment_method_detail.card?.capture).toBe(false);
      expect(await eventTypes(t, payment.id)).toEqual(['payment.authorized']);
    });

    it('capture without amount: SUCCEEDED / CAPTURED, a CAPTURE transaction, amount.captured, history and payment.captured', async () => {
      const payment = await authorizedPayment(t);
      const auth = payment.transactions;
      const captured = await ok(await postLifecycle(t, payment.id, 'capture', { reason: 'PRODUCT_CONFIRMED', merchant_reference: 'CAP-1' }, { transactionId: auth.id }));
      expect(captured).toMatchObject({ status: 'SUCCEEDED', sub_status: 'CAPTURED', amount: { value: 150.5, captured: 150.5, refunded: 0 } });
      expect(captured.transactions.map((x) => [x.type, x.status, x.amount])).toEqual([['AUTHORIZE', 'SUCCEEDED', 150.5], ['CAPTURE', 'SUCCEEDED', 150.5]]);
      expect(captured.transactions[1]).toMatchObject({ reason: 'PRODUCT_CONFIRMED', merchant_reference: 'CAP-1', provider_id: 'SANDBOX_A' });
      const read = await getPayment(t, payment.id, '?transactions_history=true');
      expect(read.transactions_history!.map((h) => [h.status, h.sub_status])).toEqual([['CREATED', 'CREATED'], ['PENDING', 'AUTHORIZED'], ['SUCCEEDED', 'CAPTURED']]);
      expect(read.transactions_history!.at(-1)!.transaction_id).toBe(captured.transactions[1]!.id);
      expect(await eventTypes(t, payment.id)).toEqual(['payment.authorized', 'payment.captured']);
    });

    it('a partial capture: PARTIALLY_CAPTURED, and the authorization is captured once only (a second capture is 409 INVALID_STATUS)', async () => {
      const payment = await authorizedPayment(t);
      const auth = payment.transactions.id;
      const captured = await ok(await postLifecycle(t, payment.id, 'capture', { amount: { currency: 'BRL', value: 100.25 } }, { transactionId: auth }));
      expect(captured).toMatchObject({ status: 'SUCCEEDED', sub_status: 'PARTIALLY_CAPTURED', amount: { captured: 100.25 } });
      const before = await getPayment(t, payment.id, '?transactions_history=true');
      await expectProblem(await postLifecycle(t, payment.id, 'capture', { amount: { currency: 'BRL', value: 10 } }, { transactionId: auth }), 409, 'INVALID_STATUS');
      await expectUnchanged(t, before);
    });

    it.each([
      ['more than authorized', { currency: 'BRL', value: 150.51 }, '/body/amount/value'],
      ['another currency', { currency: 'USD', value: 10 }, '/body/amount/currency'],
      ['more decimals than the currency has', { currency: 'BRL', value: 10.005 }, '/body/amount/value'],
    ])('capture of %s: 422 INVALID_AMOUNT naming the field, nothing changes', async (_, amount, path) => {
      const payment = await authorizedPayment(t);
      const before = await getPayment(t, payment.id, '?transactions_history=true');
      const body = await expectProblem(await postLifecycle(t, payment.id, 'capture', { amount }, { transactionId: payment.transactions.id }), 422, 'INVALID_AMOUNT');
      expect(body.errors).toEqual([expect.objectContaining({ path })]);
      await expectUnchanged(t, before);
    });

    it('cancel voids the authorization: CANCELED / CANCELED, a CANCEL transaction, payment.canceled; then nothing can be captured', async () => {
      const payment = await authorizedPayment(t);
      const auth = payment.transactions.id;
      const canceled = await ok(await postLifecycle(t, payment.id, 'cancel', { reason: 'REQUESTED_BY_CUSTOMER' }, { transactionId: auth }));
      expect(canceled).toMatchObject({ status: 'CANCELED', sub_status: 'CANCELED', amount: { captured: 0, refunded: 0 } });
      expect(canceled.transactions.at(-1)).toMatchObject({ type: 'CANCEL', status: 'SUCCEEDED', amount: 150.5, reason: 'REQUESTED_BY_CUSTOMER' });
      expect(await eventTypes(t, payment.id)).toEqual(['payment.authorized', 'payment.canceled']);
      await expectProblem(await postLifecycle(t, payment.id, 'capture', {}, { transactionId: auth }), 409, 'INVALID_STATUS');
      await expectProblem(await postLifecycle(t, payment.id, 'cancel', {}, { transactionId: auth }), 409, 'INVALID_STATUS');
      await expectProblem(await postLifecycle(t, payment.id, 'refund', {}, { transactionId: auth }), 409, 'INVALID_STATUS');
    });

    it('refund in parts up to the captured amount: PARTIALLY_REFUNDED, then REFUNDED / REFUNDED; beyond it 422 INVALID_AMOUNT', async () => {
      const payment = await createPayment(t);
      const purchase = payment.transactions.id;
      const first = await ok(await postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value: 50.25 } }, { transactionId: purchase }));
      expect(first).toMatchObject({ status: 'SUCCEEDED', sub_status: 'PARTIALLY_REFUNDED', amount: { captured: 150.5, refunded: 50.25 } });
      expect(first.transactions.at(-1)).toMatchObject({ type: 'REFUND', status: 'SUCCEEDED', amount: 50.25 });
      const before = await getPayment(t, payment.id, '?transactions_history=true');
      const over = await expectProblem(await postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value: 100.26 } }, { transactionId: purchase }), 422, 'INVALID_AMOUNT');
      expect(over.detail).toContain('100.25');
      await expectUnchanged(t, before);
      const rest = await ok(await postLifecycle(t, payment.id, 'refund', {}, { transactionId: purchase }));
      expect(rest).toMatchObject({ status: 'REFUNDED', sub_status: 'REFUNDED', amount: { captured: 150.5, refunded: 150.5 } });
      expect(rest.transactions.map((x) => [x.type, x.amount])).toEqual([['PURCHASE', 150.5], ['REFUND', 50.25], ['REFUND', 100.25]]);
      await expectProblem(await postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value: 0.01 } }, { transactionId: purchase }), 409, 'INVALID_STATUS');
      expect(await eventTypes(t, payment.id)).toEqual(['payment.succeeded', 'payment.refunded', 'payment.refunded']);
    });

    it('a captured authorization is refunded through its CAPTURE transaction, up to what was captured', async () => {
      const payment = await authorizedPayment(t);
      const captured = await ok(await postLifecycle(t, payment.id, 'capture', { amount: { currency: 'BRL', value: 100 } }, { transactionId: payment.transactions.id }));
      const capture = captured.transactions[1]!.id;
      await expectProblem(await postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value: 100.01 } }, { transactionId: capture }), 422, 'INVALID_AMOUNT');
      const refunded = await ok(await postLifecycle(t, payment.id, 'refund', {}, { transactionId: capture }));
      expect(refunded).toMatchObject({ status: 'REFUNDED', sub_status: 'REFUNDED', amount: { captured: 100, refunded: 100 } });
    });

    it.each([
      ['capture of a purchase (already captured)', 'capture'],
      ['cancel of a purchase (refund it instead)', 'cancel'],
    ] as const)('409 INVALID_STATUS: %s, nothing changes', async (_, operation) => {
      const payment = await createPayment(t);
      const before = await getPayment(t, payment.id, '?transactions_history=true');
      await expectProblem(await postLifecycle(t, payment.id, operation, {}, { transactionId: payment.transactions.id }), 409, 'INVALID_STATUS');
      await expectUnchanged(t, before);
    });

    it('409 INVALID_STATUS: a refund of an authorization not captured, and anything on a declined payment', async () => {
      const auth = await authorizedPayment(t);
      await expectProblem(await postLifecycle(t, auth.id, 'refund', {}, { transactionId: auth.transactions.id }), 409, 'INVALID_STATUS');
      const declined = await createPayment(t, { card: CARDS.declined });
      expect(declined.status).toBe('DECLINED');
      const before = await getPayment(t, declined.id, '?transactions_history=true');
      for (const op of ['capture', 'cancel', 'refund', 'cancel-or-refund'] as const) {
        await expectProblem(await postLifecycle(t, declined.id, op, {}, { transactionId: declined.transactions.id }), 409, 'INVALID_STATUS');
      }
      await expectUnchanged(t, before);
    });

    it('404: an unknown payment or a transaction of another payment', async () => {
      const a = await createPayment(t);
      const b = await createPayment(t);
      await expectProblem(await postLifecycle(t, randomUUID(), 'refund', {}, { transactionId: a.transactions.id }), 404, 'PAYMENT_NOT_FOUND');
      await expectProblem(await postLifecycle(t, a.id, 'refund', {}, { transactionId: b.transactions.id }), 404, 'TRANSACTION_NOT_FOUND');
      await expectProblem(await postLifecycle(t, randomUUID(), 'cancel-or-refund'), 404, 'PAYMENT_NOT_FOUND');
    });

    it('409 CHARGEBACK_IN_PROCESS: no refund while a chargeback is open', async () => {
      const payment = await createPayment(t);
      await injectChargeback(t, payment.id);
      const before = await getPayment(t, payment.id, '?transactions_history=true');
      await expectProblem(await postLifecycle(t, payment.id, 'refund', {}, { transactionId: payment.transactions.id }), 409, 'CHARGEBACK_IN_PROCESS');
      await expectProblem(await postLifecycle(t, payment.id, 'cancel-or-refund'), 409, 'CHARGEBACK_IN_PROCESS');
      await expectUnchanged(t, before);
    });

    it('a provider that refuses the capture or the refund: 422 PROVIDER_DECLINED saying why; the payment unchanged, the refused transaction kept as a record', async () => {
      /** The payment as it was (status, amounts, updated_at, history), plus the refused transaction last. */
      async function expectOnlyRefusalRecorded(before: Payment, type: string, code: string): Promise<void> {
        const after = await getPayment(t, before.id, '?transactions_history=true');
        const { transactions, ...rest } = after;
        const { transactions: beforeTransactions, ...beforeRest } = before;
        expect(rest).toEqual(beforeRest);
        expect(transactions.slice(0, -1)).toEqual(beforeTransactions);
        expect(transactions.at(-1)).toMatchObject({ type, status: 'DECLINED', response_code: code, amount: expect.any(Number) });
      }
      const auth = await authorizedPayment(t, { card: CARDS.captureFails });
      const beforeAuth = await getPayment(t, auth.id, '?transactions_history=true');
      // Industry data sent with the refused capture changes nothing either (it was merged before the call).
      const airline = { pnr: 'REFUSE1', passengers: [{ first_name: 'JANE' }] };
      const cap = await expectProblem(
        await postLifecycle(t, auth.id, 'capture', { additional_data: { airline } }, { transactionId: auth.transactions.id }),
        422,
        'PROVIDER_DECLINED',
      );
      expect(cap.detail).toContain('CAPTURE_DECLINED');
      await expectOnlyRefusalRecorded(beforeAuth, 'CAPTURE', 'CAPTURE_DECLINED');
      // The refused capture is no capture: the authorization can still be voided.
      expect((await postLifecycle(t, auth.id, 'cancel', {}, { transactionId: auth.transactions.id })).status).toBe(200);

      const paid = await createPayment(t, { card: CARDS.refundFails });
      const beforePaid = await getPayment(t, paid.id, '?transactions_history=true');
      const ref = await expectProblem(await postLifecycle(t, paid.id, 'refund', { amount: { currency: 'BRL', value: 1 } }, { transactionId: paid.transactions.id }), 422, 'PROVIDER_DECLINED');
      expect(ref.detail).toContain('REFUND_DECLINED');
      await expectOnlyRefusalRecorded(beforePaid, 'REFUND', 'REFUND_DECLINED');
      expect(await eventTypes(t, paid.id)).toEqual(['payment.succeeded']);
    });

    it('reason REVERSE (Yuno: reverse split recipients, none here) is treated as REQUESTED_BY_CUSTOMER, also when cancel-or-refund voids', async () => {
      const paid = await createPayment(t);
      const refunded = await ok(await postLifecycle(t, paid.id, 'refund', { amount: { currency: 'BRL', value: 1 }, reason: 'REVERSE' }, { transactionId: paid.transactions.id }));
      expect(refunded.transactions.at(-1)).toMatchObject({ type: 'REFUND', status: 'SUCCEEDED', reason: 'REQUESTED_BY_CUSTOMER' });
      const rest = await ok(await postLifecycle(t, paid.id, 'cancel-or-refund', { reason: 'REVERSE' }), 201);
      expect(rest.transactions.at(-1)).toMatchObject({ type: 'REFUND', status: 'SUCCEEDED', reason: 'REQUESTED_BY_CUSTOMER' });
      // A void's reasons (CancelRequest) have no REVERSE at all.
      const auth = await authorizedPayment(t);
      const voided = await ok(await postLifecycle(t, auth.id, 'cancel-or-refund', { reason: 'REVERSE' }), 201);
      expect(voided.transactions.at(-1)).toMatchObject({ type: 'CANCEL', status: 'SUCCEEDED', reason: 'REQUESTED_BY_CUSTOMER' });
      expect((await getPayment(t, auth.id, '?transactions_history=true')).transactions.at(-1)?.reason).toBe('REQUESTED_BY_CUSTOMER');
    });

    it('cancel-or-refund cancels what is only authorized and refunds what is captured (201)', async () => {
      const auth = await authorizedPayment(t);
      await expectProblem(await postLifecycle(t, auth.id, 'cancel-or-refund', { amount: { currency: 'BRL', value: 10 } }), 422, 'INVALID_AMOUNT');
      const canceled = await ok(await postLifecycle(t, auth.id, 'cancel-or-refund', { reason: 'DUPLICATE' }), 201);
      expect(canceled).toMatchObject({ status: 'CANCELED', sub_status: 'CANCELED' });
      expect(canceled.transactions.at(-1)).toMatchObject({ type: 'CANCEL', reason: 'DUPLICATE' });

      const paid = await createPayment(t);
      const part = await ok(await postLifecycle(t, paid.id, 'cancel-or-refund', { amount: { currency: 'BRL', value: 0.5 } }), 201);
      expect(part).toMatchObject({ status: 'SUCCEEDED', sub_status: 'PARTIALLY_REFUNDED', amount: { refunded: 0.5 } });
      const rest = await ok(await postLifecycle(t, paid.id, 'cancel-or-refund'), 201);
      expect(rest).toMatchObject({ status: 'REFUNDED', sub_status: 'REFUNDED', amount: { refunded: 150.5 } });
      await expectProblem(await postLifecycle(t, paid.id, 'cancel-or-refund'), 409, 'INVALID_STATUS');
    });

    it('idempotent: the same key replays the answer (Idempotent-Replayed) without a second refund; another body with it is 422', async () => {
      const payment = await createPayment(t);
      const purchase = payment.transactions.id;
      const key = randomUUID();
      const body = { amount: { currency: 'BRL', value: 10 } };
      const first = await postLifecycle(t, payment.id, 'refund', body, { transactionId: purchase, key });
      const firstBody = await ok(first);
      const again = await postLifecycle(t, payment.id, 'refund', body, { transactionId: purchase, key });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await ok(again)).toEqual(firstBody);
      await expectProblem(await postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value: 11 } }, { transactionId: purchase, key }), 422, 'IDEMPOTENCY_KEY_REUSED');
      const read = await getPayment(t, payment.id);
      expect(read.amount.refunded).toBe(10);
      expect(read.transactions.filter((x) => x.type === 'REFUND')).toHaveLength(1);
      // A refused operation is stored too: the same key answers the same refusal.
      const capKey = randomUUID();
      await expectProblem(await postLifecycle(t, payment.id, 'capture', {}, { transactionId: purchase, key: capKey }), 409, 'INVALID_STATUS');
      const replayed = await postLifecycle(t, payment.id, 'capture', {}, { transactionId: purchase, key: capKey });
      expect(replayed.headers.get('idempotent-replayed')).toBe('true');
      await expectProblem(replayed, 409, 'INVALID_STATUS');
    });

    it('50 concurrent partial refunds never exceed the captured amount', async () => {
      const payment = await createPayment(t, { amount: { currency: 'BRL', value: 100 } });
      const purchase = payment.transactions.id;
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value: 3 } }, { transactionId: purchase })),
      );
      const statuses = answers.map((r) => r.status);
      await Promise.all(answers.map((r) => r.text()));
      expect(statuses.filter((s) => s === 200)).toHaveLength(33);
      expect(statuses.filter((s) => s === 422)).toHaveLength(17);
      const read = await getPayment(t, payment.id, '?transactions_history=true');
      expect(read).toMatchObject({ status: 'SUCCEEDED', sub_status: 'PARTIALLY_REFUNDED', amount: { captured: 100, refunded: 99 } });
      expect(read.transactions.filter((x) => x.type === 'REFUND')).toHaveLength(33);
      expect(read.transactions_history!.filter((h) => h.sub_status === 'PARTIALLY_REFUNDED')).toHaveLength(33);
      expect((await eventTypes(t, payment.id)).filter((e) => e === 'payment.refunded')).toHaveLength(33);
    });

    it('amounts stay exact in a currency without minor units (COP) and with three (KWD)', async () => {
      const cop = await createPayment(t, { amount: { currency: 'COP', value: 50000 } });
      await expectProblem(await postLifecycle(t, cop.id, 'refund', { amount: { currency: 'COP', value: 0.5 } }, { transactionId: cop.transactions.id }), 422, 'INVALID_AMOUNT');
      expect(await ok(await postLifecycle(t, cop.id, 'refund', { amount: { currency: 'COP', value: 500 } }, { transactionId: cop.transactions.id }))).toMatchObject({ amount: { refunded: 500 } });
      const kwd = await createPayment(t, { amount: { currency: 'KWD', value: 0.3 } });
      const id = kwd.transactions.id;
      await ok(await postLifecycle(t, kwd.id, 'refund', { amount: { currency: 'KWD', value: 0.1 } }, { transactionId: id }));
      await ok(await postLifecycle(t, kwd.id, 'refund', { amount: { currency: 'KWD', value: 0.2 } }, { transactionId: id }));
      expect(await getPayment(t, kwd.id)).toMatchObject({ status: 'REFUNDED', amount: { refunded: 0.3 } });
    });

    it('end to end through @payorch/client: authorize, capture in part, refund, cancel-or-refund the rest; cancel another; errors as PayorchError', async () => {
      const auth = await authorizedPayment(t);
      const authorization = await cardTransactionId(t, auth.id);
      const payorch = t.clientFor(t.sandbox);
      const keys: string[] = [];
      payorch.use({ onRequest: ({ request }) => void keys.push(request.headers.get('x-idempotency-key') ?? '') });
      const captured = await payorch.payments.capture(auth.id, authorization, { amount: { currency: 'BRL', value: 100 }, reason: 'PRODUCT_CONFIRMED' });
      expect(captured).toMatchObject({ status: 'SUCCEEDED', sub_status: 'PARTIALLY_CAPTURED', amount: { captured: 100 } });
      const capture = captured.transactions.find((x) => x.type === 'CAPTURE')!;
      const refunded = await payorch.payments.refund(auth.id, capture.id, { amount: { currency: 'BRL', value: 20 }, reason: 'REQUESTED_BY_CUSTOMER' });
      expect(refunded).toMatchObject({ status: 'SUCCEEDED', sub_status: 'PARTIALLY_REFUNDED', amount: { refunded: 20 } });
      const done = await payorch.payments.cancelOrRefund(auth.id, {}, { idempotencyKey: `order-${auth.id}-close` });
      expect(done).toMatchObject({ status: 'REFUNDED', sub_status: 'REFUNDED', amount: { captured: 100, refunded: 100 } });
      expect(keys.at(-1)).toBe(`order-${auth.id}-close`);
      expect(keys.slice(0, 2), keys.join()).toEqual([expect.stringMatching(/^[0-9a-f-]{36}$/), expect.stringMatching(/^[0-9a-f-]{36}$/)]);
      const err = await payorch.payments.refund(auth.id, capture.id).then(() => undefined, (e: unknown) => e as { status: number; code: string });
      expect(err).toMatchObject({ name: 'PayorchError', status: 409, code: 'INVALID_STATUS' });

      const other = await authorizedPayment(t);
      expect(await payorch.payments.cancel(other.id, await cardTransactionId(t, other.id), { reason: 'DUPLICATE' })).toMatchObject({ status: 'CANCELED', sub_status: 'CANCELED' });
    });

    describe('disputes meet refunds', () => {
      async function disputed(payment: { id: string }): Promise<string> {
        const chargeback = await injectChargeback(t, payment.id, { amount: 50 });
        expect((await postDispute(t, payment.id, chargeback.id, { evidence: [evidence()] })).status).toBe(200);
        return chargeback.id;
      }
      const resolve = (paymentId: string, outcome: 'WON' | 'LOST') =>
        t.fetch(`/sandbox/payments/${paymentId}/disputes/resolve`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ outcome }) });

      it('a chargeback on a partially refunded payment; the dispute won returns it to SUCCEEDED / PARTIALLY_REFUNDED and the rest can be refunded', async () => {
        const payment = await createPayment(t);
        const purchase = payment.transactions.id;
        await ok(await postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value: 50.5 } }, { transactionId: purchase }));
        await disputed(payment);
        expect((await resolve(payment.id, 'WON')).status).toBe(200);
        expect(await getPayment(t, payment.id)).toMatchObject({ status: 'SUCCEEDED', sub_status: 'PARTIALLY_REFUNDED', amount: { refunded: 50.5 } });
        expect(await ok(await postLifecycle(t, payment.id, 'refund', {}, { transactionId: purchase }))).toMatchObject({ status: 'REFUNDED', amount: { refunded: 150.5 } });
      });

      it('a dispute lost after a refund: CHARGEBACK / LOST, and no more refunds (409 INVALID_STATUS)', async () => {
        const payment = await createPayment(t);
        const purchase = payment.transactions.id;
        await ok(await postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value: 10 } }, { transactionId: purchase }));
        await disputed(payment);
        expect((await resolve(payment.id, 'LOST')).status).toBe(200);
        expect(await getPayment(t, payment.id)).toMatchObject({ status: 'CHARGEBACK', sub_status: 'LOST', amount: { refunded: 10 } });
        await expectProblem(await postLifecycle(t, payment.id, 'refund', {}, { transactionId: purchase }), 409, 'INVALID_STATUS');
      });

      it('no chargeback on a fully refunded payment (409 INVALID_STATUS): the customer has the money back', async () => {
        const payment = await createPayment(t);
        await ok(await postLifecycle(t, payment.id, 'refund', {}, { transactionId: payment.transactions.id }));
        const res = await t.fetch(`/sandbox/payments/${payment.id}/chargebacks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        await expectProblem(res, 409, 'INVALID_STATUS');
        expect(await getPayment(t, payment.id)).toMatchObject({ status: 'REFUNDED', sub_status: 'REFUNDED' });
      });

      it('a captured authorization can be charged back (the chargeback names the authorization)', async () => {
        const payment = await authorizedPayment(t);
        await ok(await postLifecycle(t, payment.id, 'capture', {}, { transactionId: await cardTransactionId(t, payment.id) }));
        await injectChargeback(t, payment.id);
        expect(await getPayment(t, payment.id)).toMatchObject({ status: 'IN_DISPUTE', sub_status: 'RECEIVED' });
      });
    });
  });
}
