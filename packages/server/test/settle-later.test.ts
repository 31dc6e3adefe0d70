/**
 * Issue 21 finding 2 (a): once a provider was called, no answer says "nothing happened". A database that
 * fails after the call (phase C of a payment or a follow-up, the idempotency record's completion, an
 * enrollment's write after its verify) or a bug there answers the settle-later 502 PROVIDER_UNAVAILABLE,
 * never 503 SERVICE_UNAVAILABLE ("nothing was written") or 500; the attempt stays for the reconciliation,
 * and the same X-Idempotency-Key later gives the settled outcome. A wrapper of the test database throws
 * on the statement named by the test, so every deferred operation is exercised through its real path.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Database, Queryable } from '../src/db/database.js';
import { startSandboxAcquirers, type SandboxAcquirers } from '../src/providers/sandbox/acquirers.js';
import { ledgerOf } from './support/acquirers.js';
import { expectProblem } from './support/assertions.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { authorizedPayment, CARDS, createCustomer, createPayment, getPayment, paymentBody, postLifecycle, postPayment, rawCard } from './support/payments.js';

/** What the wrapper throws: a lost connection (503 before the fix), or a bug (500 before the fix). */
type Fault = { statement: RegExp; error: () => Error } | null;

const lostConnection = () => Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
const bug = () => new TypeError("Cannot read properties of undefined (reading 'status')");

/** The database with a switchable fault: every statement matching `fault.statement` throws while it is set. */
function faulty(state: { fault: Fault }) {
  const wrap = <Q extends Queryable>(q: Q): Queryable => ({
    async query<R>(text: string, params?: readonly unknown[]) {
      if (state.fault?.statement.test(text)) throw state.fault.error();
      return q.query<R>(text, params);
    },
    exec: (sql) => q.exec(sql),
    transaction: (fn) => q.transaction((tx) => fn(wrap(tx))),
  });
  return (db: Database): Database => ({ ...wrap(db), kind: db.kind, ping: () => db.ping(), close: () => db.close() });
}

const PHASE_C = /^UPDATE payment_transactions SET status/;
const COMPLETE = /^UPDATE idempotency_keys SET state = 'COMPLETE'/;
const ENROLL_WRITE = /^INSERT INTO payment_methods/;

for (const backend of backends()) {
  describe(`a failure after the provider call answers settle-later, on ${backend}`, () => {
    let acquirers: SandboxAcquirers;
    const state: { fault: Fault } = { fault: null };
    // Reconciliation runs when the test says (runOnce).
    const env: Record<string, string> = { RECONCILIATION_INTERVAL_MS: '3600000' };
    beforeAll(async () => {
      acquirers = await startSandboxAcquirers();
      Object.assign(env, { SANDBOX_A_URL: acquirers.a.url, SANDBOX_B_URL: acquirers.b.url });
    });
    const t = useServer(backend, { env, wrapDatabase: faulty(state) });
    afterEach(() => {
      state.fault = null;
    });
    afterAll(() => acquirers.close());

    /** As if the attempt's deadline had passed: the reconciliation takes it on its next pass. */
    async function reconcileNow(t: TestServer, paymentId: string) {
      await t.db.query(`UPDATE payment_transactions SET reconcile_after = clock_timestamp() - interval '1 second' WHERE payment_id = $1 AND status = 'PENDING'`, [paymentId]);
      await t.running.deps.services.orchestration.reconciliation.runOnce();
    }

    async function settleLater(res: Response) {
      const body = await expectProblem(res, 502, 'PROVIDER_UNAVAILABLE');
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(body.detail).toMatch(/X-Idempotency-Key/);
      return body;
    }

    it('refund: the database fails in phase C (after the acquirer refunded): 502, the refund PENDING, reconciled from the ledger, the key replays 200', async () => {
      const payment = await createPayment(t, { amount: { currency: 'BRL', value: 100 } });
      const purchase = (await getPayment(t, payment.id)).transactions.find((x) => x.type === 'PURCHASE')!;
      const key = randomUUID();
      state.fault = { statement: PHASE_C, error: lostConnection };
      await settleLater(await postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value: 10 } }, { transactionId: purchase.id, key }));
      state.fault = null;

      const refund = (await getPayment(t, payment.id)).transactions.find((x) => x.type === 'REFUND')!;
      expect(refund.status).toBe('PENDING');
      expect((await ledgerOf(acquirers.a.url)).find((e) => e.reference === refund.id)).toMatchObject({ kind: 'REFUND', status: 'APPROVED' });
      // Until it is settled the key says so; then it answers the settled refund.
      await expectProblem(await postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value: 10 } }, { transactionId: purchase.id, key }), 409, 'REQUEST_IN_PROCESS');
      await reconcileNow(t, payment.id);
      const replay = await postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value: 10 } }, { transactionId: purchase.id, key });
      expect(replay.status).toBe(200);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(((await replay.json()) as Schemas['Payment']).amount.refunded).toBe(10);
    });

    it('capture: a bug in phase C is a 502 too (not a 500), and the key replays the settled capture', async () => {
      const payment = await authorizedPayment(t, { card: CARDS.approved });
      const auth = (await getPayment(t, payment.id)).transactions.find((x) => x.type === 'AUTHORIZE')!;
      const key = randomUUID();
      state.fault = { statement: PHASE_C, error: bug };
      await settleLater(await postLifecycle(t, payment.id, 'capture', {}, { transactionId: auth.id, key }));
      state.fault = null;
      await reconcileNow(t, payment.id);
      const replay = await postLifecycle(t, payment.id, 'capture', {}, { transactionId: auth.id, key });
      expect(replay.status).toBe(200);
      expect(((await replay.json()) as Schemas['Payment']).sub_status).toBe('CAPTURED');
    });

    it('capture with additional_data, settled by the reconciliation: the payment takes it once the capture is approved, never while it is in flight or when it is refused', async () => {
      const airline = { pnr: 'LATE01', passengers: [{ first_name: 'JOHN' }] };
      for (const card of [CARDS.approved, CARDS.captureFails]) {
        const payment = await authorizedPayment(t, { card });
        const auth = (await getPayment(t, payment.id)).transactions.find((x) => x.type === 'AUTHORIZE')!;
        const before = (await getPayment(t, payment.id)).additional_data;
        const key = randomUUID();
        state.fault = { statement: PHASE_C, error: lostConnection };
        await settleLater(await postLifecycle(t, payment.id, 'capture', { additional_data: { airline } }, { transactionId: auth.id, key }));
        state.fault = null;
        const inFlight = await getPayment(t, payment.id);
        expect(inFlight.transactions.at(-1)).toMatchObject({ type: 'CAPTURE', status: 'PENDING' });
        expect(inFlight.additional_data).toEqual(before);
        await reconcileNow(t, payment.id);
        const settled = await getPayment(t, payment.id);
        if (card === CARDS.approved) {
          expect(settled.sub_status).toBe('CAPTURED');
          expect(settled.additional_data?.airline).toMatchObject(airline);
        } else {
          expect(settled.transactions.at(-1)).toMatchObject({ type: 'CAPTURE', status: 'DECLINED' });
          expect(settled.additional_data).toEqual(before);
        }
      }
    });

    it('create payment: the database fails recording the approval: 502 (not 201, not 503), the key then replays the settled 201', async () => {
      const customerId = await createCustomer(t);
      const body = paymentBody(t, customerId, { amount: { currency: 'BRL', value: 42 } });
      const key = randomUUID();
      state.fault = { statement: PHASE_C, error: lostConnection };
      await settleLater(await postPayment(t, body, { key }));
      state.fault = null;
      const [row] = await t.db.query<{ id: string }>(`SELECT id FROM payments WHERE merchant_order_id = $1`, [body.merchant_order_id]);
      await reconcileNow(t, row!.id);
      const replay = await postPayment(t, body, { key });
      expect(replay.status).toBe(201);
      expect(((await replay.json()) as Schemas['CreatedPayment']).status).toBe('SUCCEEDED');
    });

    it('cancel-or-refund: the idempotency record cannot be completed (phase C writes it since claim-on-bind): 502, reconciled, and the key replays the true answer (201)', async () => {
      const payment = await createPayment(t, { amount: { currency: 'BRL', value: 30 } });
      const key = randomUUID();
      state.fault = { statement: COMPLETE, error: lostConnection };
      await settleLater(await postLifecycle(t, payment.id, 'cancel-or-refund', {}, { key }));
      state.fault = null;
      await reconcileNow(t, payment.id);
      const replay = await postLifecycle(t, payment.id, 'cancel-or-refund', {}, { key });
      expect(replay.status, await replay.clone().text()).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(((await replay.json()) as Schemas['Payment']).status).toBe('REFUNDED');
    });

    it('enrollment: the write after an answered verify fails: 502, nothing enrolled, and the same key runs again', async () => {
      const customerId = await createCustomer(t);
      const key = randomUUID();
      const enroll = () =>
        t.fetch(`/customers/${customerId}/payment-methods`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-idempotency-key': key },
          body: JSON.stringify({ account_id: t.sandbox.account_id, country: 'BR', type: 'CARD', card_data: rawCard(CARDS.approved), verify: { currency: 'BRL' } }),
        });
      state.fault = { statement: ENROLL_WRITE, error: lostConnection };
      await settleLater(await enroll());
      state.fault = null;
      expect(await t.db.query('SELECT 1 FROM payment_methods WHERE customer_id = $1', [customerId])).toEqual([]);
      const again = await enroll();
      expect(again.status, await again.clone().text()).toBe(201);
    });
  });
}
