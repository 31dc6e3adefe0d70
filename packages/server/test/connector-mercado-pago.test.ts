/**
 * The Mercado Pago connector end to end (issue 22): payments through the public API go to a local Mercado
 * Pago double (test/doubles/mercado-pago) at MERCADO_PAGO_API_URL, over the connection's access token.
 * Purchase, authorize + partial capture, void, partial then full refund; every row of the code table
 * (hard rows stop the route, soft ones fail over to SANDBOX_A); a timeout left unknown and settled by
 * reconciliation's lookup; answers we cannot read (oversized, HTTP 500); provider-side idempotency;
 * notifications verified then translated; dispute evidence uploaded to the chargeback's documentation.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Schemas } from '@payorch/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failoverDecision } from '../src/orchestration/failover.js';
import { MERCADO_PAGO_CODES } from '../src/providers/mercado-pago/codes.js';
import { SIGNATURE_TOLERANCE_SECONDS } from '../src/providers/mercado-pago/notifications.js';
import { NotificationSignatureError, ProviderRefusedError, ProviderUnavailableError, type AsyncPayer, type Charge, type ConnectionContext, type PaymentProvider } from '../src/providers/provider.js';
import { startMercadoPagoDouble, type DoubleAccount, type MercadoPagoDouble } from './doubles/mercado-pago/server.js';
import { connectProvider, routeCards } from './support/connectors.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { describeFindings, scanForSensitiveData, NO_PERSONAL_DATA } from './support/sensitive-data-scan.js';
import { authorizedPayment, createPayment, getPayment, postLifecycle, rawCard } from './support/payments.js';

type Created = Schemas['CreatedPayment'];
const MP = 'MERCADO_PAGO';

/** A payer with what a boleto names (name, CPF, address). */
const BOLETO_PAYER: AsyncPayer = {
  firstName: 'Ana',
  lastName: 'Lima',
  email: 'ana@example.com',
  document: { type: 'CPF', number: '52998224725' },
  address: { line1: 'Rua das Flores, 123', line2: null, neighborhood: 'Bela Vista', city: 'São Paulo', state: 'SP', zipCode: '01310-100', country: 'BR' },
};

let double: MercadoPagoDouble;
const env: Record<string, string> = { RECONCILIATION_INTERVAL_MS: '3600000' };
beforeAll(async () => {
  double = await startMercadoPagoDouble();
  env.MERCADO_PAGO_API_URL = double.url;
});
afterAll(() => double?.close());

async function ok(res: Response, status = 200): Promise<Schemas['Payment']> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as Schemas['Payment'];
}

/** Every account made for a connection (their secrets must be in no request the double kept). */
const accounts: DoubleAccount[] = [];

const attempts = (p: Created) => p.transactions_history!.map((x) => [x.provider_id, x.status, x.response_code]);

for (const backend of backends()) {
  describe(`Mercado Pago connector on ${backend}`, () => {
    const t: TestServer = useServer(backend, { env });
    let sandboxA: string;
    let customerId: string;
    const adapter = (): PaymentProvider => t.running.deps.services.providers.get(MP)!;

    beforeAll(async () => {
      const connections = (await (await t.fetch('/connections')).json()) as { provider_id: string; connection_id: string }[];
      sandboxA = connections.find((c) => c.provider_id === 'SANDBOX_A')!.connection_id;
      const { createCustomer } = await import('./support/payments.js');
      customerId = await createCustomer(t);
    });

    /** A Mercado Pago account of its own (its circuit too) and the card routing through it, then SANDBOX_A when `fallback`. */
    async function mercadoPago(options: { fallback?: boolean; timeoutMs?: number } = {}): Promise<{ account: DoubleAccount; connectionId: string; context: ConnectionContext }> {
      const account = double.account();
      accounts.push(account);
      const connectionId = await connectProvider(t, { providerId: MP, credentials: { ...account }, ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) });
      await routeCards(t, [{ provider_id: MP, connection_id: connectionId }, ...(options.fallback ? [{ provider_id: 'SANDBOX_A', connection_id: sandboxA }] : [])]);
      return { account, connectionId, context: { connectionId, credentials: { ...account }, timeoutMs: options.timeoutMs ?? 2_000 } };
    }

    const pay = (overrides: Parameters<typeof createPayment>[1] = {}) => createPayment(t, overrides, customerId);

    it('purchase: approved and captured at Mercado Pago, our transaction id as idempotency key and external_reference, no card data kept by the double', async () => {
      await mercadoPago();
      const before = double.requests.length;
      const p = await pay();
      expect(p).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });
      expect(attempts(p)).toEqual([[MP, 'SUCCEEDED', 'SUCCEEDED']]);
      const tx = p.transactions_history![0]!;
      const at = double.payment(tx.provider_data!.transaction_id!)!;
      expect(at).toMatchObject({ status: 'approved', status_detail: 'accredited', captured: true, transaction_amount: 150.5, external_reference: tx.id, installments: 1, payment_method_id: 'visa' });
      expect(at.metadata).toEqual({ payorch_reference: tx.id, payorch_payment_id: p.id });
      const sent = double.requests.slice(before);
      expect(sent.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/card_tokens', 'POST /v1/payments']);
      expect(sent[1]!.idempotencyKey).toBe(tx.id);
      expect(JSON.stringify(sent)).not.toContain(rawCard('4507990000000002').number);
      expect(sent[0]!.body).toMatchObject({ card_number: '450799******0002', security_code: '[REDACTED]', expiration_year: expect.stringMatching(/^20\d\d$/) });
    });

    it('the same reference sent twice is answered twice and charged once', async () => {
      const { context } = await mercadoPago();
      const charge: Charge = {
        card: { number: '5031755734530604', holderName: 'APRO', expirationMonth: 11, expirationYear: 30, securityCode: '123', brand: 'MASTERCARD' },
        amount: '99.90',
        currency: 'BRL',
        reference: randomUUID(),
        description: 'retried',
        connection: context,
      };
      const first = await adapter().purchase(charge);
      const second = await adapter().purchase(charge);
      expect(first.outcome).toBe('SUCCEEDED');
      expect(second.providerTransactionId).toBe(first.providerTransactionId);
      expect(double.paymentsFor(charge.reference)).toHaveLength(1);
    });

    it('authorize then a partial capture: the rest is released at Mercado Pago', async () => {
      await mercadoPago();
      const p = await authorizedPayment(t, {}, customerId);
      expect(p).toMatchObject({ status: 'PENDING', sub_status: 'AUTHORIZED' });
      const auth = p.transactions_history![0]!;
      expect(double.payment(auth.provider_data!.transaction_id!)).toMatchObject({ status: 'authorized', status_detail: 'pending_capture', captured: false });
      const captured = await ok(await postLifecycle(t, p.id, 'capture', { amount: { currency: 'BRL', value: 100.25 } }, { transactionId: auth.id }));
      expect(captured).toMatchObject({ status: 'SUCCEEDED', sub_status: 'PARTIALLY_CAPTURED', amount: { captured: 100.25 } });
      expect(double.payment(auth.provider_data!.transaction_id!)).toMatchObject({ status: 'approved', captured: true, transaction_amount: 100.25 });
    });

    it('void: the authorization is cancelled at Mercado Pago', async () => {
      await mercadoPago();
      const p = await authorizedPayment(t, {}, customerId);
      const auth = p.transactions_history![0]!;
      const canceled = await ok(await postLifecycle(t, p.id, 'cancel', { reason: 'REQUESTED_BY_CUSTOMER' }, { transactionId: auth.id }));
      expect(canceled).toMatchObject({ status: 'CANCELED', sub_status: 'CANCELED' });
      expect(double.payment(auth.provider_data!.transaction_id!)).toMatchObject({ status: 'cancelled', status_detail: 'by_collector' });
    });

    it('a partial then a full refund: two refunds at Mercado Pago, the payment refunded', async () => {
      await mercadoPago();
      const p = await pay();
      const purchase = p.transactions_history![0]!;
      const first = await ok(await postLifecycle(t, p.id, 'refund', { amount: { currency: 'BRL', value: 50.25 } }, { transactionId: purchase.id }));
      expect(first).toMatchObject({ status: 'SUCCEEDED', sub_status: 'PARTIALLY_REFUNDED', amount: { refunded: 50.25 } });
      const full = await ok(await postLifecycle(t, p.id, 'refund', {}, { transactionId: purchase.id }));
      expect(full).toMatchObject({ status: 'REFUNDED', sub_status: 'REFUNDED', amount: { refunded: 150.5 } });
      const at = double.payment(purchase.provider_data!.transaction_id!)!;
      expect(at).toMatchObject({ status: 'refunded', transaction_amount_refunded: 150.5 });
      expect(at.refunds.map((r) => [r.amount, r.status])).toEqual([
        [50.25, 'approved'],
        [100.25, 'approved'],
      ]);
    });

    describe('the code table, row by row: Mercado Pago answers the code, the route stops or fails over to SANDBOX_A', () => {
      it.each(MERCADO_PAGO_CODES.map((row) => [row.providerCode, row] as const))('%s', async (code, row) => {
        const { account } = await mercadoPago({ fallback: true });
        double.behave(account.access_token, row.outcome === 'DECLINED' ? { decline: code } : { error: { status: code === 'unauthorized' ? 401 : 400, error: code } });
        const p = await pay();
        const first = p.transactions_history![0]!;
        expect(first).toMatchObject({ provider_id: MP, response_code: row.responseCode, status: row.outcome === 'DECLINED' ? 'DECLINED' : 'ERROR' });
        if (row.decision === 'HARD_DECLINE') {
          expect(p).toMatchObject({ status: 'DECLINED' });
          expect(attempts(p)).toHaveLength(1);
        } else {
          expect(p).toMatchObject({ status: 'SUCCEEDED' });
          expect(attempts(p).map((a) => a[0])).toEqual([MP, 'SANDBOX_A']);
        }
      });

      it('an unknown rejection is a hard DO_NOT_HONOR; an unknown error answer is soft', async () => {
        const hard = await mercadoPago({ fallback: true });
        double.behave(hard.account.access_token, { decline: 'cc_rejected_something_new' });
        const declined = await pay();
        expect(declined).toMatchObject({ status: 'DECLINED' });
        expect(attempts(declined)).toEqual([[MP, 'DECLINED', 'DO_NOT_HONOR']]);
        const soft = await mercadoPago({ fallback: true });
        double.behave(soft.account.access_token, { error: { status: 429, error: 'too_many_requests' } });
        const moved = await pay();
        expect(moved).toMatchObject({ status: 'SUCCEEDED' });
        expect(attempts(moved).map((a) => [a[0], a[2]])).toEqual([
          [MP, 'PROVIDER_ERROR'],
          ['SANDBOX_A', 'SUCCEEDED'],
        ]);
      });
    });

    it('a timeout leaves the attempt unknown; reconciliation finds the payment by external_reference and takes the approval', async () => {
      const { account } = await mercadoPago({ timeoutMs: 300 });
      double.behave(account.access_token, { fault: 'timeout' });
      const p = await pay();
      const attempt = p.transactions_history![0]!;
      expect(attempt).toMatchObject({ provider_id: MP, status: 'PENDING' });
      expect(p.status).not.toBe('SUCCEEDED');
      expect(double.paymentsFor(attempt.id)).toMatchObject([{ status: 'approved' }]);
      double.behave(account.access_token, null);
      await t.running.deps.services.orchestration.reconciliation.runOnce();
      const read = await getPayment(t, p.id);
      expect(read).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });
      expect(read.transactions.map((x) => [x.provider_id, x.status])).toEqual([[MP, 'SUCCEEDED']]);
    });

    it('a timeout, then SANDBOX_A approves: reconciliation reverses the late approval at Mercado Pago (a captured payment is refunded in full)', async () => {
      const { account } = await mercadoPago({ fallback: true, timeoutMs: 300 });
      double.behave(account.access_token, { fault: 'timeout' });
      const p = await pay();
      expect(p).toMatchObject({ status: 'SUCCEEDED' });
      expect(attempts(p).map((a) => [a[0], a[1]])).toEqual([
        [MP, 'PENDING'],
        ['SANDBOX_A', 'SUCCEEDED'],
      ]);
      const late = p.transactions_history![0]!;
      double.behave(account.access_token, null);
      await t.running.deps.services.orchestration.reconciliation.runOnce();
      const read = await getPayment(t, p.id);
      expect(read).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });
      expect(read.transactions.map((x) => [x.provider_id, x.status, x.reason])).toEqual([
        [MP, 'CANCELED', 'LATE_APPROVAL_REVERSED'],
        ['SANDBOX_A', 'SUCCEEDED', null],
      ]);
      expect(double.paymentsFor(late.id)).toMatchObject([{ status: 'refunded', transaction_amount_refunded: 150.5 }]);
    });

    /**
     * Reconciliation takes the payment's PENDING transactions now (as if they were due). Earlier tests' PENDING
     * attempts are put off an hour: one pass claims at most 4 of the organization,
     * the oldest due first, and they would starve this payment's.
     */
    async function reconcileNow(paymentId: string): Promise<Schemas['Payment']> {
      await t.db.query(`UPDATE payment_transactions SET reconcile_after = clock_timestamp() - interval '1 second' WHERE payment_id = $1 AND status = 'PENDING'`, [paymentId]);
      await t.db.query(`UPDATE payment_transactions SET reconcile_after = clock_timestamp() + interval '1 hour' WHERE payment_id <> $1 AND status = 'PENDING'`, [paymentId]);
      await t.running.deps.services.orchestration.reconciliation.runOnce();
      return getPayment(t, paymentId);
    }

    it.each([
      ['captured', 'refunded whole', true, 'refunded'],
      ['authorized', 'cancelled', false, 'cancelled'],
    ] as const)(
      'a card attempt recorded ERROR / NOT_PROCESSED (not in the search for the whole settle window), then %s at Mercado Pago: its payment notification reverses the charge there (%s), with an error log',
      async (_what, _reversed, capture, reversedStatus) => {
        const { account, connectionId } = await mercadoPago({ timeoutMs: 300 });
        // Processed, never answered, and left out of the search far past the settle window (a lagging search).
        double.behave(account.access_token, { fault: 'timeout', hiddenFromSearchMs: 3_600_000 });
        const created = capture ? await pay() : await authorizedPayment(t, {}, customerId);
        double.behave(account.access_token, null);
        const attemptId = created.transactions_history![0]!.id;
        expect(created.transactions_history![0]).toMatchObject({ provider_id: MP, status: 'PENDING' });
        const [late] = double.paymentsFor(attemptId);
        expect(late).toMatchObject({ status: capture ? 'approved' : 'authorized' });
        // Not found within the window: asked again; once it has passed: ERROR / NOT_PROCESSED, the payment ERROR.
        expect((await reconcileNow(created.id)).transactions[0]).toMatchObject({ id: attemptId, status: 'PENDING' });
        await t.db.query(`UPDATE payment_transactions SET created_at = created_at - interval '16 minutes' WHERE id = $1`, [attemptId]);
        const given = await reconcileNow(created.id);
        expect(given.transactions[0]).toMatchObject({ id: attemptId, status: 'ERROR', response_code: 'NOT_PROCESSED' });
        expect(given).toMatchObject({ status: 'ERROR', sub_status: 'ERROR' });

        // Mercado Pago notifies the payment (it charged the card): a conflict, the money first.
        const notify = async () => {
          const signed = double.signedNotification('payment', late!.id);
          const res = await t.fetch(`/provider-notifications/${connectionId}`, { method: 'POST', headers: signed.headers, body: signed.body, credentials_: false });
          expect(res.status, await res.text()).toBe(200);
        };
        await notify();
        expect((await getPayment(t, created.id)).transactions[0]).toMatchObject({ id: attemptId, status: 'PENDING', reason: 'NOTIFIED_APPROVAL' });
        expect(t.logs.some((l) => l.includes('"level":50') && l.includes(attemptId) && l.includes('notified an approval of an attempt recorded ERROR'))).toBe(true);
        const settled = await reconcileNow(created.id);
        expect(settled.transactions[0]).toMatchObject({ id: attemptId, status: 'CANCELED', reason: 'LATE_APPROVAL_REVERSED' });
        expect(settled).toMatchObject({ status: 'ERROR', sub_status: 'ERROR' });
        expect(double.payment(late!.id)).toMatchObject({ status: reversedStatus, refunds: capture ? [expect.objectContaining({ amount: 150.5 })] : [] });
        // Notified again (the reversal's own notification): nothing more.
        await notify();
        await reconcileNow(created.id);
        expect((await getPayment(t, created.id)).transactions[0]).toMatchObject({ id: attemptId, status: 'CANCELED', reason: 'LATE_APPROVAL_REVERSED' });
        expect(double.payment(late!.id)!.refunds).toHaveLength(capture ? 1 : 0);
      },
    );

    it('a card attempt recorded DECLINED, then approved at Mercado Pago: its payment notification reverses it as a late approval', async () => {
      const { account, connectionId } = await mercadoPago({ fallback: true, timeoutMs: 300 });
      double.behave(account.access_token, { fault: 'timeout' });
      const p = await pay();
      double.behave(account.access_token, null);
      const attemptId = p.transactions_history![0]!.id;
      expect(attempts(p).map((a) => [a[0], a[1]])).toEqual([
        [MP, 'PENDING'],
        ['SANDBOX_A', 'SUCCEEDED'],
      ]);
      // As if its outcome had been read as a rejection, which Mercado Pago then turned into an approval.
      await t.db.query(`UPDATE payment_transactions SET status = 'DECLINED', response_code = 'DO_NOT_HONOR', reconcile_after = NULL WHERE id = $1`, [attemptId]);
      const mpPaymentId = double.paymentsFor(attemptId)[0]!.id;
      const signed = double.signedNotification('payment', mpPaymentId);
      const res = await t.fetch(`/provider-notifications/${connectionId}`, { method: 'POST', headers: signed.headers, body: signed.body, credentials_: false });
      expect(res.status, await res.text()).toBe(200);
      expect((await getPayment(t, p.id)).transactions[0]).toMatchObject({ id: attemptId, status: 'PENDING', reason: 'NOTIFIED_APPROVAL' });
      const settled = await reconcileNow(p.id);
      expect(settled.transactions[0]).toMatchObject({ id: attemptId, status: 'CANCELED', reason: 'LATE_APPROVAL_REVERSED' });
      expect(settled).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });
      expect(double.payment(mpPaymentId)).toMatchObject({ status: 'refunded' });
    });

    it('a refund whose answer is lost: reconciliation sends it again under the same key, Mercado Pago answers its first refund (one refund, not two)', async () => {
      // The purchase must answer within the timeout: 1 s, so a loaded machine does not make it late too.
      const { account } = await mercadoPago({ timeoutMs: 1_000 });
      const p = await pay();
      const purchase = p.transactions_history![0]!;
      double.behave(account.access_token, { on: 'any', fault: 'late', lateMs: 2_500 });
      const res = await postLifecycle(t, p.id, 'refund', { amount: { currency: 'BRL', value: 40 } }, { transactionId: purchase.id });
      expect(res.status, await res.clone().text()).toBe(502);
      const pending = (await getPayment(t, p.id)).transactions.at(-1)!;
      expect(pending).toMatchObject({ type: 'REFUND', status: 'PENDING' });
      double.behave(account.access_token, null);
      await t.running.deps.services.orchestration.reconciliation.runOnce();
      const read = await getPayment(t, p.id);
      expect(read.transactions.at(-1)).toMatchObject({ id: pending.id, type: 'REFUND', status: 'SUCCEEDED' });
      expect(read).toMatchObject({ sub_status: 'PARTIALLY_REFUNDED', amount: { refunded: 40 } });
      expect(double.payment(purchase.provider_data!.transaction_id!)!.refunds.map((r) => r.amount)).toEqual([40]);
    });

    it.each([
      ['an answer past 64 KiB', { fault: 'oversized' } as const, 'BAD_RESPONSE'],
      ['an HTTP 500', { fault: 'fail' } as const, 'BAD_RESPONSE'],
      ['an answer later than the connection timeout', { fault: 'late', lateMs: 600 } as const, 'TIMEOUT'],
      ['a payment still in process (not a final word)', { inProcess: true } as const, 'BAD_RESPONSE'],
    ])('%s is %s (no result; the orchestrator decides)', async (_what, fault, kind) => {
      const { account, context } = await mercadoPago({ timeoutMs: 300 });
      double.behave(account.access_token, fault);
      const charge: Charge = {
        card: { number: '4507990000000002', holderName: null, expirationMonth: 12, expirationYear: 30, securityCode: '123', brand: 'VISA' },
        amount: '10.00',
        currency: 'BRL',
        reference: randomUUID(),
        description: 'fault',
        connection: context,
      };
      const err = await adapter().purchase(charge).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ProviderUnavailableError);
      expect(err).toMatchObject({ kind, providerId: MP });
    });

    it('an oversized answer through the API: the attempt fails over to SANDBOX_A and stays to be looked up', async () => {
      const { account } = await mercadoPago({ fallback: true });
      double.behave(account.access_token, { fault: 'oversized' });
      const p = await pay();
      expect(p).toMatchObject({ status: 'SUCCEEDED' });
      expect(p.transactions_history!.map((x) => x.provider_id)).toEqual([MP, 'SANDBOX_A']);
      expect(p.transactions_history![0]).toMatchObject({ status: 'PENDING' });
    });

    describe('notifications: verified with the connection webhook_secret first, then translated', () => {
      async function paidAt(context: ConnectionContext, paymentId = randomUUID()) {
        const reference = randomUUID();
        const result = await adapter().purchase({
          card: { number: '4507990000000002', holderName: null, expirationMonth: 12, expirationYear: 30, securityCode: '123', brand: 'VISA' },
          amount: '80.00',
          currency: 'BRL',
          reference,
          paymentId,
          description: 'notified',
          connection: context,
        });
        expect(result.outcome).toBe('SUCCEEDED');
        return { mpPaymentId: result.providerTransactionId, paymentId, reference };
      }
      const parse = (context: ConnectionContext, signed: { body: string; headers: Record<string, string> }) =>
        adapter().parseConnectionNotification!(signed.body, signed.headers, context);

      it('refunds confirmed or failed by a payment notification → FOLLOW_UP_SETTLED; a re-delivery gives the same events', async () => {
        const { account, context } = await mercadoPago();
        const { mpPaymentId, reference } = await paidAt(context);
        double.behave(account.access_token, { on: 'any', asyncRefunds: true });
        const r1 = await adapter().refund({ providerTransactionId: mpPaymentId, amount: '30.00', currency: 'BRL', reference: randomUUID(), connection: context });
        const r2 = await adapter().refund({ providerTransactionId: mpPaymentId, amount: '20.00', currency: 'BRL', reference: randomUUID(), connection: context });
        double.behave(account.access_token, null);
        // The card payment approved: its attempt's outcome (ATTEMPT_SETTLED, UNCHANGED where it was recorded approved).
        const approval = { kind: 'ATTEMPT_SETTLED', notificationId: `mp_card_${mpPaymentId}_approved`, reference, providerTransactionId: mpPaymentId, outcome: 'SUCCEEDED', reason: null, authorizationCode: expect.any(String) };
        expect(await parse(context, double.signedNotification('payment', mpPaymentId))).toEqual({ events: [approval] });
        double.settleRefund(Number(r1.providerTransactionId), 'approved');
        double.settleRefund(Number(r2.providerTransactionId), 'rejected');
        const signed = double.signedNotification('payment', mpPaymentId);
        const parsed = await parse(context, signed);
        expect(parsed.events).toEqual([
          approval,
          expect.objectContaining({ kind: 'FOLLOW_UP_SETTLED', operation: 'REFUND', outcome: 'CONFIRMED', providerOperationId: r1.providerTransactionId, providerTransactionId: mpPaymentId, amount: '30.00' }),
          expect.objectContaining({ kind: 'FOLLOW_UP_SETTLED', operation: 'REFUND', outcome: 'FAILED', providerOperationId: r2.providerTransactionId, amount: '20.00' }),
        ]);
        expect(await parse(context, signed)).toEqual(parsed);
      });

      it.each([
        ['PIX', 'approved', 'SUCCEEDED'],
        ['PIX', 'rejected', 'DECLINED'],
        ['BOLETO', 'cancelled', 'CANCELED'],
        ['BOLETO', 'expired', 'EXPIRED'],
      ] as const)('a %s payment %s at Mercado Pago, by its payment notification → ASYNC_PAYMENT_SETTLED %s; pending → no event', async (method, status, outcome) => {
        const { context } = await mercadoPago();
        const started = await adapter().startAsyncPayment!({
          method,
          amount: '80.00',
          currency: 'BRL',
          country: 'BR',
          reference: randomUUID(),
          paymentId: randomUUID(),
          description: 'notified',
          baseUrl: 'http://127.0.0.1:1',
          payer: BOLETO_PAYER,
          connection: context,
        });
        expect(started.result.outcome).toBe('SUCCEEDED');
        expect(started.action!.kind).toBe(method === 'PIX' ? 'QR_CODE' : 'VOUCHER');
        const id = started.result.providerTransactionId;
        expect(await parse(context, double.signedNotification('payment', id))).toEqual({ events: [] });
        double.settlePending(id, status);
        const parsed = await parse(context, double.signedNotification('payment', id));
        expect(parsed.events).toEqual([{ kind: 'ASYNC_PAYMENT_SETTLED', notificationId: `mp_payment_${id}_${status === 'expired' ? 'cancelled' : status}`, providerTransactionId: id, outcome, reason: expect.toSatisfy((r: unknown) => (outcome === 'SUCCEEDED' ? r === null : typeof r === 'string')) }]);
      });

      it("lookup of an issued PIX by our reference (its answer lost): pending is no approval (ERROR), paid is (SUCCEEDED); the payer is not kept in the raw answer", async () => {
        const { context } = await mercadoPago();
        const reference = randomUUID();
        const started = await adapter().startAsyncPayment!({ method: 'PIX', amount: '80.00', currency: 'BRL', country: 'BR', reference, paymentId: randomUUID(), description: 'lost', baseUrl: 'http://127.0.0.1:1', payer: BOLETO_PAYER, connection: context });
        expect(started.result.rawResponse).not.toHaveProperty('payer');
        expect(await adapter().lookup({ reference, connection: context })).toMatchObject({ found: true, voided: false, result: { outcome: 'ERROR', responseCode: 'PROVIDER_ERROR' } });
        double.settlePending(started.result.providerTransactionId, 'approved');
        expect(await adapter().lookup({ reference, connection: context })).toMatchObject({ found: true, voided: false, result: { outcome: 'SUCCEEDED', providerTransactionId: started.result.providerTransactionId } });
      });

      it('PIX and boleto are refused before any call in another currency, and a boleto without the payer it must name', async () => {
        const { context } = await mercadoPago();
        const before = double.requests.length;
        const base = { amount: '80.00', country: 'BR', reference: randomUUID(), paymentId: randomUUID(), description: 'refused', baseUrl: 'http://127.0.0.1:1', connection: context };
        const usd = await adapter().startAsyncPayment!({ ...base, method: 'PIX', currency: 'USD' });
        expect(usd).toEqual({ result: expect.objectContaining({ outcome: 'ERROR', responseCode: 'PROVIDER_REQUEST_REJECTED', responseMessage: expect.stringMatching(/BRL only/) }), action: null });
        const noPayer = await adapter().startAsyncPayment!({ ...base, method: 'BOLETO', currency: 'BRL', payer: { ...BOLETO_PAYER, document: null, address: null } });
        expect(noPayer.result).toMatchObject({ outcome: 'ERROR', responseMessage: expect.stringMatching(/customer_payer\.document.*billing_address/) });
        const oxxo = await adapter().startAsyncPayment!({ ...base, method: 'OXXO', currency: 'MXN' });
        expect(oxxo.result).toMatchObject({ outcome: 'ERROR', responseMessage: expect.stringMatching(/does not issue OXXO/) });
        expect(double.requests.length).toBe(before);
      });

      it('a chargeback notification → CHARGEBACK for our payment (fetched after verification); its decision → DISPUTE_CLOSED', async () => {
        const { context } = await mercadoPago();
        const { mpPaymentId, paymentId } = await paidAt(context);
        const cb = double.openChargeback(Number(mpPaymentId), { reasonId: '4853' });
        const opened = await parse(context, double.signedNotification('chargeback', cb.id));
        expect(opened.events).toEqual([
          expect.objectContaining({ kind: 'CHARGEBACK', notificationId: `mp_cb_${cb.id}`, paymentId, providerTransactionId: mpPaymentId, chargebackId: cb.id, amount: '80.00', reasonCode: '4853' }),
        ]);
        double.decideChargeback(cb.id, 'WON');
        const closed = await parse(context, double.signedNotification('chargeback', cb.id));
        expect(closed.events.map((e) => [e.kind, e.notificationId])).toEqual([
          ['CHARGEBACK', `mp_cb_${cb.id}`],
          ['DISPUTE_CLOSED', `mp_cb_${cb.id}_WON`],
        ]);
        const lost = double.openChargeback(Number((await paidAt(context)).mpPaymentId));
        double.decideChargeback(lost.id, 'LOST');
        expect((await parse(context, double.signedNotification('chargeback', lost.id))).events.at(-1)).toMatchObject({ kind: 'DISPUTE_CLOSED', outcome: 'LOST' });
      });

      it("an unknown type, or a payment the connection's account cannot see, is acknowledged with no events", async () => {
        const { context } = await mercadoPago();
        const { mpPaymentId } = await paidAt(context);
        expect(await parse(context, double.signedNotification('other', mpPaymentId))).toEqual({ events: [] });
        const other = await mercadoPago();
        const signedForOther = double.signedNotification('payment', mpPaymentId, { secret: other.account.webhook_secret });
        expect(await parse(other.context, signedForOther)).toEqual({ events: [] });
      });

      it.each([
        ['a wrong secret', (s: { body: string; headers: Record<string, string> }) => s, { secret: 'not-the-secret' }],
        ['no x-signature', (s: { body: string; headers: Record<string, string> }) => ({ ...s, headers: { 'x-request-id': s.headers['x-request-id']! } }), {}],
        ['a stale ts', (s: { body: string; headers: Record<string, string> }) => s, { ts: Math.floor(Date.now() / 1000) - SIGNATURE_TOLERANCE_SECONDS - 60 }],
        ['another data.id than the one signed', (s: { body: string; headers: Record<string, string> }) => ({ ...s, body: s.body.replace(/"id":"(\d+)"/, '"id":"1$1"') }), {}],
        ['another x-request-id', (s: { body: string; headers: Record<string, string> }) => ({ ...s, headers: { ...s.headers, 'x-request-id': randomUUID() } }), {}],
      ])('%s → NotificationSignatureError, and Mercado Pago is not called', async (_what, tamper, options) => {
        const { context } = await mercadoPago();
        const { mpPaymentId } = await paidAt(context);
        const signed = tamper(double.signedNotification('payment', mpPaymentId, options));
        const before = double.requests.length;
        await expect(parse(context, signed)).rejects.toBeInstanceOf(NotificationSignatureError);
        expect(double.requests.length).toBe(before);
      });
    });

    /** A 45 BRL card purchase at the double, and a chargeback opened on it. */
    async function chargedBack(context: ConnectionContext) {
      const purchase = await adapter().purchase({
        card: { number: '4507990000000002', holderName: null, expirationMonth: 12, expirationYear: 30, securityCode: '123', brand: 'VISA' },
        amount: '45.00',
        currency: 'BRL',
        reference: randomUUID(),
        description: 'disputed',
        connection: context,
      });
      return double.openChargeback(Number(purchase.providerTransactionId));
    }

    it('dispute evidence goes to the chargeback documentation, once per reference', async () => {
      const { context } = await mercadoPago();
      const cb = await chargedBack(context);
      const content = Buffer.from('%PDF-1.4\n% receipt\n%%EOF\n');
      const sha256 = createHash('sha256').update(content).digest('hex');
      const forward = {
        reference: randomUUID(),
        disputeId: randomUUID(),
        paymentId: randomUUID(),
        chargebackId: cb.id,
        evidence: [{ id: randomUUID(), fileName: 'receipt.pdf', contentType: 'application/pdf', category: 'RECEIPT', sha256, content }],
        connection: context,
      };
      const ack = await adapter().forwardDisputeEvidence(forward);
      expect(ack.providerDisputeId).toBe(cb.id);
      await adapter().forwardDisputeEvidence(forward);
      expect(double.documentation(cb.id)).toEqual([{ name: 'receipt.pdf', type: 'application/pdf', sha256, size: content.length }]);
    });

    it('dispute evidence Mercado Pago refuses for good (a decided chargeback: 400; an unknown one: 404) is a ProviderRefusedError; 429 and 500 are retried', async () => {
      const { account, context } = await mercadoPago();
      const cb = await chargedBack(context);
      const content = Buffer.from('%PDF-1.4\n% receipt\n%%EOF\n');
      const forward = (chargebackId: string) =>
        adapter().forwardDisputeEvidence({
          reference: randomUUID(),
          disputeId: randomUUID(),
          paymentId: randomUUID(),
          chargebackId,
          evidence: [{ id: randomUUID(), fileName: 'receipt.pdf', contentType: 'application/pdf', category: 'RECEIPT', sha256: createHash('sha256').update(content).digest('hex'), content }],
          connection: context,
        });
      // Retryable: a rate limit, a 5xx (no answer to act on).
      for (const behaviour of [{ on: 'any' as const, error: { status: 429, error: 'too_many_requests' } }, { on: 'any' as const, fault: 'fail' as const }]) {
        double.behave(account.access_token, behaviour);
        const err = await forward(cb.id).catch((e: unknown) => e);
        expect(err, JSON.stringify(behaviour)).toBeInstanceOf(ProviderUnavailableError);
      }
      double.behave(account.access_token, null);
      expect(double.documentation(cb.id)).toEqual([]);
      // Definitive: a chargeback decided at Mercado Pago takes no documentation; an unknown one is not found.
      double.decideChargeback(cb.id, 'LOST');
      await expect(forward(cb.id)).rejects.toThrow(new ProviderRefusedError(MP, 'MERCADO_PAGO refused the evidence (HTTP 400 bad_request)'));
      await expect(forward('133000000000000001')).rejects.toThrow(new ProviderRefusedError(MP, 'MERCADO_PAGO refused the evidence (HTTP 404 not_found)'));
      expect(double.documentation(cb.id)).toEqual([]);
    });
  });
}

describe("the double's request log", () => {
  it('holds no card number, security code or connection secret', async () => {
    expect(double.requests.length).toBeGreaterThan(0);
    const findings = await scanForSensitiveData({
      personal: NO_PERSONAL_DATA,
      logs: double.requests.map((r) => JSON.stringify(r)),
      secrets: accounts.flatMap((a) => [
        { name: 'an access token', value: a.access_token },
        { name: 'a webhook secret', value: a.webhook_secret },
      ]),
    });
    expect(findings, describeFindings(findings)).toEqual([]);
  });
});

describe('the Mercado Pago code table', () => {
  it.each(MERCADO_PAGO_CODES.map((r) => [r.providerCode, r] as const))('%s: its decision is what failover decides', (_code, row) => {
    expect(failoverDecision({ answered: true, result: { outcome: row.outcome, iso8583ResponseCode: row.iso8583ResponseCode, merchantAdviceCode: row.merchantAdviceCode } })).toBe(row.decision);
  });

  it('docs/providers/mercado-pago.md renders it row by row', () => {
    const doc = readFileSync(new URL('../../../docs/providers/mercado-pago.md', import.meta.url), 'utf8');
    const table = doc.slice(doc.indexOf('<!-- codes:start -->'), doc.indexOf('<!-- codes:end -->'));
    const rows = table
      .split('\n')
      .filter((l) => l.startsWith('| `'))
      .map((l) => l.split('|').slice(1, -1).map((c) => c.trim().replace(/^`|`$/g, '')));
    expect(rows).toEqual(
      MERCADO_PAGO_CODES.map((r) => [r.providerCode, r.outcome, r.responseCode, r.iso8583ResponseCode, r.merchantAdviceCode ?? '—', r.decision, r.message]),
    );
  });
});
