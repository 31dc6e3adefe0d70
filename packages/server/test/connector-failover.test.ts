/**
 * Failover between real connectors, end to end (issue 22 §5), on each database backend: one server whose
 * STRIPE_API_URL, ADYEN_API_URL and MERCADO_PAGO_API_URL are the local doubles (each started once for the
 * file). The merchant adds its Stripe, Adyen and Mercado Pago connections with POST /v1/connections and
 * sends its cards STRIPE → ADYEN through the routing API:
 *   - Stripe's processing error (soft) → approved at Adyen; the capture and refunds follow the approval
 *     to Adyen (Adyen's ledger has them, Stripe hears nothing of them);
 *   - a hard decline at Stripe stops the route (Adyen never sees the payment);
 *   - a Stripe timeout leaves the attempt unknown, Adyen approves, and reconciliation finds the late
 *     approval at Stripe by our reference and voids it there;
 *   - ADYEN → MERCADO_PAGO for a BRL payment Adyen refuses softly: approved at Mercado Pago;
 *   - a Mercado Pago refund whose answer was lost before the service restarted is settled by
 *     reconciliation, which names the follow-up to lookup (Mercado Pago cannot search refunds by our
 *     reference; a restarted process has no memory of what it sent).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ReconciliationWorker } from '../src/orchestration/reconciliation.js';
import { reversalReference } from '../src/orchestration/reversals.js';
import { LATE_APPROVAL_REVERSED } from '../src/orchestration/settle.js';
import { settleFollowUpByReconciliation } from '../src/payments/lifecycle.js';
import { CONNECTORS } from '../src/providers/connectors.js';
import { providerRegistry } from '../src/providers/registry.js';
import { ADYEN_TEST_CREDENTIALS, startAdyenDouble, type AdyenDouble } from './doubles/adyen/server.js';
import { startMercadoPagoDouble, type DoubleAccount, type MercadoPagoDouble } from './doubles/mercado-pago/server.js';
import { startStripeDouble, type StripeDouble } from './doubles/stripe/server.js';
import { routeCards } from './support/connectors.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { createCustomer, getPayment, paymentBody, postLifecycle, postPayment } from './support/payments.js';

type Payment = Schemas['Payment'];

/** Long enough for a loaded machine, short enough for the timeout tests to wait it out (Stripe, Mercado Pago). */
const TIMEOUT_MS = 1500;
/**
 * Adyen is never made to time out here: its connection waits longer, so a loaded machine (CI runs suites side
 * by side on two cores) cannot turn its approval into an unknown outcome the test did not ask for.
 */
const ADYEN_TIMEOUT_MS = 10_000;

let stripe: StripeDouble;
let adyen: AdyenDouble;
let mercadoPago: MercadoPagoDouble;
const env: Record<string, string> = { RECONCILIATION_INTERVAL_MS: '3600000', CIRCUIT_COOL_DOWN_MS: '100' };
beforeAll(async () => {
  [stripe, adyen, mercadoPago] = await Promise.all([startStripeDouble(), startAdyenDouble(ADYEN_TEST_CREDENTIALS), startMercadoPagoDouble()]);
  Object.assign(env, { STRIPE_API_URL: stripe.url, ADYEN_API_URL: adyen.url, MERCADO_PAGO_API_URL: mercadoPago.url });
});
afterAll(async () => {
  await Promise.all([stripe?.close(), adyen?.close(), mercadoPago?.close()]);
});

const attempts = (p: Payment) => p.transactions.filter((x) => x.type === 'PURCHASE' || x.type === 'AUTHORIZE');

async function ok(res: Response, status = 200): Promise<Payment> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as Payment;
}

/** A connection made as a merchant makes it: POST /v1/connections (its secrets remembered for the teardown scan). */
async function createConnection(t: TestServer, providerId: string, credentials: Record<string, string>, timeoutMs = TIMEOUT_MS): Promise<string> {
  for (const [field, value] of Object.entries(credentials)) t.rememberSecret(value, `${providerId} ${field}`);
  const res = await t.fetch('/connections', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() },
    body: JSON.stringify({ provider_id: providerId, name: `${providerId} failover`, environment: 'TEST', timeout_ms: timeoutMs, credentials }),
  });
  const text = await res.text();
  expect(res.status, text).toBe(201);
  return (JSON.parse(text) as Schemas['Connection']).connection_id;
}

for (const backend of backends()) {
  describe(`failover between connectors, on ${backend}`, () => {
    const t = useServer(backend, { env });
    afterEach(() => stripe.fault(null));

    const ids = { stripe: '', adyen: '', mercadoPago: '' };
    const stripeWebhookSecret = `whsec_${randomBytes(16).toString('hex')}`;
    let account: DoubleAccount;
    let customerId: string;
    const stripeThenAdyen = () => routeCards(t, [
      { provider_id: 'STRIPE', connection_id: ids.stripe },
      { provider_id: 'ADYEN', connection_id: ids.adyen },
    ]);
    beforeAll(async () => {
      account = mercadoPago.account({ currency: 'BRL' });
      ids.stripe = await createConnection(t, 'STRIPE', { secret_key: `sk_test_${randomBytes(16).toString('hex')}`, webhook_secret: stripeWebhookSecret });
      ids.adyen = await createConnection(t, 'ADYEN', { ...ADYEN_TEST_CREDENTIALS }, ADYEN_TIMEOUT_MS);
      ids.mercadoPago = await createConnection(t, 'MERCADO_PAGO', { ...account });
      await stripeThenAdyen();
      customerId = await createCustomer(t);
    });

    async function pay(options: { authorize?: boolean; amount?: number } = {}): Promise<Payment> {
      const body = paymentBody(t, customerId, options.amount ? { amount: { currency: 'BRL', value: options.amount } } : {});
      if (options.authorize) (body.payment_method.detail!.card as { capture?: boolean }).capture = false;
      const res = await postPayment(t, body);
      const text = await res.text();
      expect(res.status, text).toBe(201);
      return getPayment(t, (JSON.parse(text) as { id: string }).id, '?transactions_history=true');
    }

    /** Reconciliation takes the payment's unknown transactions now (as if their deadline had passed), until none is left PENDING. */
    async function reconcileNow(paymentId: string, worker = t.running.deps.services.orchestration.reconciliation): Promise<Payment> {
      for (let i = 0; i < 20; i++) {
        const rows = await t.db.query('SELECT id FROM payment_transactions WHERE payment_id = $1 AND status = $2', [paymentId, 'PENDING']);
        if (rows.length === 0) break;
        await t.db.query(`UPDATE payment_transactions SET reconcile_after = clock_timestamp() - interval '1 second', deadline_at = clock_timestamp() WHERE payment_id = $1 AND status = 'PENDING'`, [paymentId]);
        await worker.runOnce();
      }
      return getPayment(t, paymentId, '?transactions_history=true');
    }

    it("Stripe's processing error fails over to Adyen, and the capture and both refunds go to Adyen: Stripe hears of none", async () => {
      stripe.fault({ decline: 'processing_error' });
      const authorized = await pay({ authorize: true });
      stripe.fault(null);
      const [atStripe, atAdyen] = attempts(authorized);
      expect(atStripe).toMatchObject({ provider_id: 'STRIPE', status: 'ERROR', response_code: 'PROVIDER_ERROR' });
      expect(atAdyen).toMatchObject({ provider_id: 'ADYEN', status: 'SUCCEEDED', type: 'AUTHORIZE' });
      expect(authorized).toMatchObject({ status: 'PENDING', sub_status: 'AUTHORIZED' });
      const atAdyenLedger = adyen.paymentByReference(atAdyen!.id)!;
      expect(atAdyenLedger).toMatchObject({ authorised: 15050, captured: 0, manualCapture: true });
      const stripeHeard = stripe.requests.length;

      const captured = await ok(await postLifecycle(t, authorized.id, 'capture', { amount: { currency: 'BRL', value: 100 } }, { transactionId: atAdyen!.id }));
      const capture = captured.transactions.at(-1)!;
      expect(capture).toMatchObject({ type: 'CAPTURE', status: 'SUCCEEDED', provider_id: 'ADYEN' });
      await ok(await postLifecycle(t, authorized.id, 'refund', { amount: { currency: 'BRL', value: 40 } }, { transactionId: capture.id }));
      const refunded = await ok(await postLifecycle(t, authorized.id, 'refund', {}, { transactionId: capture.id }));
      expect(refunded.transactions.filter((x) => x.type === 'REFUND')).toEqual([
        expect.objectContaining({ status: 'SUCCEEDED', provider_id: 'ADYEN' }),
        expect.objectContaining({ status: 'SUCCEEDED', provider_id: 'ADYEN' }),
      ]);
      expect(refunded).toMatchObject({ status: 'REFUNDED', sub_status: 'REFUNDED' });
      // Adyen's ledger: captured 100.00 (the rest released), refunded 40.00 then 60.00, each under its own key.
      expect(atAdyenLedger).toMatchObject({ captured: 10000, refunded: 10000 });
      const refundKeys = refunded.transactions.filter((x) => x.type === 'REFUND').map((x) => x.id);
      expect(adyen.requests.filter((r) => r.operation === 'refunds' && refundKeys.includes(r.idempotencyKey!))).toHaveLength(2);
      expect(adyen.requests.filter((r) => r.operation === 'captures' && r.idempotencyKey === capture.id)).toHaveLength(1);
      // Stripe: not one call since the failover, and nothing of this payment's follow-ups in its ledger.
      expect(stripe.requests.length).toBe(stripeHeard);
      const atStripeLedger = [...stripe.ledger.intents.values()].filter((pi) => pi.metadata.payorch_payment_id === authorized.id);
      expect(atStripeLedger.every((pi) => pi.amountReceived === 0 && pi.status !== 'succeeded')).toBe(true);
      expect([...stripe.ledger.refunds.values()].filter((r) => refundKeys.includes(r.metadata.payorch_reference!))).toEqual([]);
    });

    it('a hard decline at Stripe stops the route: Adyen never sees the payment', async () => {
      stripe.fault({ decline: 'insufficient_funds' });
      const adyenHeard = adyen.requests.length;
      const payment = await pay();
      const tried = attempts(payment);
      expect(tried).toEqual([expect.objectContaining({ provider_id: 'STRIPE', status: 'DECLINED', response_code: 'INSUFFICIENT_FUNDS' })]);
      expect(payment.status).toBe('DECLINED');
      expect(adyen.requests.length).toBe(adyenHeard);
    });

    it('a Stripe timeout leaves the attempt unknown, Adyen approves, and reconciliation finds the late approval at Stripe and voids it there', async () => {
      stripe.fault({ mode: 'timeout' });
      const payment = await pay({ authorize: true });
      stripe.fault(null);
      const [atStripe, atAdyen] = attempts(payment);
      expect(atStripe).toMatchObject({ provider_id: 'STRIPE', status: 'PENDING', response_code: 'PROVIDER_TIMEOUT' });
      expect(atAdyen).toMatchObject({ provider_id: 'ADYEN', status: 'SUCCEEDED' });
      expect(payment).toMatchObject({ status: 'PENDING', sub_status: 'AUTHORIZED' });
      // Stripe authorized it; we never heard.
      const [late] = [...stripe.ledger.intents.values()].filter((pi) => pi.metadata.payorch_reference === atStripe!.id);
      expect(late).toMatchObject({ status: 'requires_capture' });

      const settled = await reconcileNow(payment.id);
      expect(stripe.requests.some((r) => r.path === '/v1/payment_intents/search')).toBe(true);
      expect(late!.status).toBe('canceled');
      expect(attempts(settled)[0]).toMatchObject({ id: atStripe!.id, status: 'CANCELED', reason: LATE_APPROVAL_REVERSED });
      // The payment keeps Adyen's authorization, untouched.
      expect(settled).toMatchObject({ status: 'PENDING', sub_status: 'AUTHORIZED' });
      expect(adyen.paymentByReference(atAdyen!.id)).toMatchObject({ cancelled: false, captured: 0 });
    });

    it('a Stripe timeout on a purchase, Adyen approves: reconciliation refunds the captured late approval at Stripe whole (a captured intent cannot be cancelled), once', async () => {
      // The test before timed Stripe out too: its circuit admits a probe again once the cool-down (100 ms) is over.
      await new Promise((r) => setTimeout(r, 300));
      stripe.fault({ mode: 'timeout' });
      const payment = await pay();
      stripe.fault(null);
      const [atStripe, atAdyen] = attempts(payment);
      expect(atStripe).toMatchObject({ provider_id: 'STRIPE', status: 'PENDING', response_code: 'PROVIDER_TIMEOUT' });
      expect(atAdyen).toMatchObject({ provider_id: 'ADYEN', status: 'SUCCEEDED' });
      expect(payment).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });
      // Stripe charged the card; we never heard.
      const [late] = [...stripe.ledger.intents.values()].filter((pi) => pi.metadata.payorch_reference === atStripe!.id);
      expect(late).toMatchObject({ status: 'succeeded' });
      const refundsOf = () => [...stripe.ledger.refunds.values()].filter((r) => r.intentId === late!.id);
      expect(refundsOf()).toEqual([]);

      const settled = await reconcileNow(payment.id);
      expect(attempts(settled)[0]).toMatchObject({ id: atStripe!.id, status: 'CANCELED', reason: LATE_APPROVAL_REVERSED });
      expect(refundsOf()).toEqual([expect.objectContaining({ amount: late!.amountReceived, status: 'succeeded' })]);
      // The payment keeps Adyen's charge, untouched and not refunded.
      expect(settled).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED', amount: { refunded: 0 } });
      await reconcileNow(payment.id);
      expect(refundsOf()).toHaveLength(1);
    });

    it("the refund reversing a late approval at Stripe fails (refund.failed): the attempt no longer reads reversed, payment.operation.failed, and reconciliation refunds it again under a new key", async () => {
      await new Promise((r) => setTimeout(r, 300)); // Stripe's circuit, opened by the timeout before, admits a probe again
      stripe.fault({ mode: 'timeout' });
      const payment = await pay();
      stripe.fault(null);
      const [atStripe] = attempts(payment);
      expect(atStripe).toMatchObject({ provider_id: 'STRIPE', status: 'PENDING' });
      const [late] = [...stripe.ledger.intents.values()].filter((pi) => pi.metadata.payorch_reference === atStripe!.id);
      const refundsOf = () => [...stripe.ledger.refunds.values()].filter((r) => r.intentId === late!.id);
      const reversed = await reconcileNow(payment.id);
      expect(attempts(reversed)[0]).toMatchObject({ status: 'CANCELED', reason: LATE_APPROVAL_REVERSED });
      const [first] = refundsOf();
      expect(first!.metadata.payorch_reference).toBe(`${reversalReference(atStripe!.id, 0)}:reversal`);

      // The refund fails at Stripe after it was created: the shopper is charged at Stripe and at Adyen.
      stripe.settleRefund(first!.id, 'failed');
      const signed = stripe.signedNotification('refund.failed', { refundId: first!.id }, stripeWebhookSecret);
      const res = await t.fetch(`/provider-notifications/${ids.stripe}`, { method: 'POST', headers: signed.headers, body: signed.body, credentials_: false });
      expect(res.status, await res.clone().text()).toBe(200);
      const [row] = await t.db.query<{ state: string }>('SELECT state FROM connection_notifications WHERE connection_id = $1 AND notification_id = $2', [ids.stripe, JSON.parse(signed.body).id]);
      expect(row!.state).toBe('APPLIED');
      const failed = await getPayment(t, payment.id, '?transactions_history=true');
      expect(attempts(failed)[0]).toMatchObject({ id: atStripe!.id, status: 'PENDING', reason: 'LATE_APPROVAL_REVERSAL_FAILED', response_code: 'FAILED_AT_PROVIDER' });
      const events = await t.db.query<{ type: string }>('SELECT type FROM webhook_events WHERE resource_id = $1', [payment.id]);
      expect(events.map((e) => e.type)).toContain('payment.operation.failed');

      const again = await reconcileNow(payment.id);
      expect(attempts(again)[0]).toMatchObject({ status: 'CANCELED', reason: LATE_APPROVAL_REVERSED });
      expect(refundsOf().map((r) => [r.metadata.payorch_reference, r.status])).toEqual([
        [`${reversalReference(atStripe!.id, 0)}:reversal`, 'failed'],
        [`${reversalReference(atStripe!.id, 1)}:reversal`, 'succeeded'],
      ]);
      expect(again).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED', amount: { refunded: 0 } });
    });

    it('ADYEN → MERCADO_PAGO: a BRL payment Adyen refuses softly is approved at Mercado Pago', async () => {
      await routeCards(t, [
        { provider_id: 'ADYEN', connection_id: ids.adyen },
        { provider_id: 'MERCADO_PAGO', connection_id: ids.mercadoPago },
      ]);
      try {
        adyen.next({ kind: 'refuse', code: '9' }); // issuer unavailable: soft
        const payment = await pay({ amount: 80 });
        const [atAdyen, atMercadoPago] = attempts(payment);
        expect(atAdyen).toMatchObject({ provider_id: 'ADYEN', status: 'DECLINED' });
        expect(atMercadoPago).toMatchObject({ provider_id: 'MERCADO_PAGO', status: 'SUCCEEDED', type: 'PURCHASE' });
        expect(payment).toMatchObject({ status: 'SUCCEEDED', amount: { currency: 'BRL', value: 80 } });
        expect(mercadoPago.paymentsFor(atMercadoPago!.id)).toEqual([expect.objectContaining({ status: 'approved', transaction_amount: 80, currency_id: 'BRL' })]);
        expect(adyen.paymentByReference(atAdyen!.id)).toBeUndefined();
      } finally {
        await stripeThenAdyen();
      }
    });

    it('a Mercado Pago refund whose answer was lost before the service restarted is settled: reconciliation names the refund to lookup', async () => {
      await routeCards(t, [{ provider_id: 'MERCADO_PAGO', connection_id: ids.mercadoPago }]);
      try {
        const payment = await pay({ amount: 90 });
        const [purchase] = attempts(payment);
        expect(purchase).toMatchObject({ provider_id: 'MERCADO_PAGO', status: 'SUCCEEDED' });
        const [atMercadoPago] = mercadoPago.paymentsFor(purchase!.id);

        // Mercado Pago refunds; its answer never comes (502, the refund PENDING).
        mercadoPago.behave(account.access_token, { on: 'any', fault: 'timeout' });
        const lost = await postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value: 30 } }, { transactionId: purchase!.id });
        mercadoPago.behave(account.access_token, null);
        expect(lost.status, await lost.clone().text()).toBe(502);
        const pending = (await getPayment(t, payment.id, '?transactions_history=true')).transactions.find((x) => x.type === 'REFUND')!;
        expect(pending).toMatchObject({ status: 'PENDING', provider_id: 'MERCADO_PAGO' });
        expect(mercadoPago.payment(atMercadoPago!.id)!.refunds).toHaveLength(1);

        // The restart: a new process's adapters (no memory of what the old one sent) over the same database.
        // Reconciliation as that process runs it: the real worker, given the new adapters.
        const { config, log, services } = t.running.deps;
        const restarted = providerRegistry(CONNECTORS.map((c) => c.create({ config, log, baseUrl: config.providerApiUrls[c.id] })));
        const opened = await services.orchestration.routing.openConnection(t.db, t.sandbox.organization_id, ids.mercadoPago);
        // Asked by our reference alone, the new adapter cannot tell a refund from a charge that never came.
        expect(await restarted.get('MERCADO_PAGO')!.lookup({ reference: pending.id, connection: opened!.context })).toMatchObject({ found: false });
        const worker = new ReconciliationWorker({
          orchestration: { ...services.orchestration, providers: restarted },
          log,
          intervalMs: 3_600_000,
          lookupTimeoutMs: config.providerLookupTimeoutMs,
          settleFollowUp: settleFollowUpByReconciliation,
        });
        const settled = await reconcileNow(payment.id, worker);
        expect(settled.transactions.find((x) => x.id === pending.id)).toMatchObject({ status: 'SUCCEEDED', provider_id: 'MERCADO_PAGO' });
        expect(settled).toMatchObject({ status: 'SUCCEEDED', sub_status: 'PARTIALLY_REFUNDED' });
        // Sent again under the same X-Idempotency-Key: Mercado Pago's first answer, no second refund.
        expect(mercadoPago.payment(atMercadoPago!.id)!.refunds).toEqual([expect.objectContaining({ amount: 30 })]);
        expect(mercadoPago.requests.filter((r) => r.idempotencyKey === pending.id)).toHaveLength(2);
      } finally {
        await stripeThenAdyen();
      }
    });

    it('a Mercado Pago timeout, Adyen approves; Mercado Pago charged the card but its search shows it only later: reconciliation asks again and refunds the late approval, once', async () => {
      await routeCards(t, [
        { provider_id: 'MERCADO_PAGO', connection_id: ids.mercadoPago },
        { provider_id: 'ADYEN', connection_id: ids.adyen },
      ]);
      try {
        await new Promise((r) => setTimeout(r, 300)); // an earlier timeout's circuit admits a probe again
        const hiddenMs = 6_000;
        mercadoPago.behave(account.access_token, { fault: 'timeout', hiddenFromSearchMs: hiddenMs });
        const payment = await pay({ amount: 70 });
        mercadoPago.behave(account.access_token, null);
        const [atMercadoPago, atAdyen] = attempts(payment);
        expect(atMercadoPago).toMatchObject({ provider_id: 'MERCADO_PAGO', status: 'PENDING', response_code: 'PROVIDER_TIMEOUT' });
        expect(atAdyen).toMatchObject({ provider_id: 'ADYEN', status: 'SUCCEEDED' });
        expect(payment).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });
        // Mercado Pago charged the card; we never heard, and its search does not show it yet.
        const [late] = mercadoPago.paymentsFor(atMercadoPago!.id);
        expect(late).toMatchObject({ status: 'approved', captured: true });

        // Reconciliation asks at once (the attempt is due at once): nothing found yet. Not final at Mercado
        // Pago, whose lookup closes nothing: the attempt stays PENDING and is asked again.
        const searches = () => mercadoPago.requests.filter((r) => r.path.startsWith('/v1/payments/search') && r.path.includes(atMercadoPago!.id)).length;
        await t.running.deps.services.orchestration.reconciliation.runOnce();
        expect(searches()).toBe(1);
        const asked = await getPayment(t, payment.id, '?transactions_history=true');
        expect(attempts(asked)[0]).toMatchObject({ id: atMercadoPago!.id, status: 'PENDING' });
        expect(asked).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });

        // The search shows it now: the late approval is found and reversed (a captured payment: refunded whole).
        await new Promise((r) => setTimeout(r, hiddenMs));
        const settled = await reconcileNow(payment.id);
        expect(attempts(settled)[0]).toMatchObject({ id: atMercadoPago!.id, status: 'CANCELED', reason: LATE_APPROVAL_REVERSED });
        expect(mercadoPago.payment(late!.id)).toMatchObject({ status: 'refunded', refunds: [expect.objectContaining({ amount: 70 })] });
        expect(settled).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED', amount: { refunded: 0 } });
        await reconcileNow(payment.id);
        expect(mercadoPago.payment(late!.id)!.refunds).toHaveLength(1);
      } finally {
        await stripeThenAdyen();
      }
    });

    it('a Mercado Pago call that processed nothing: "not found" is asked again within the settle window, and final once it has passed', async () => {
      await routeCards(t, [
        { provider_id: 'MERCADO_PAGO', connection_id: ids.mercadoPago },
        { provider_id: 'ADYEN', connection_id: ids.adyen },
      ]);
      try {
        await new Promise((r) => setTimeout(r, 300));
        mercadoPago.behave(account.access_token, { fault: 'fail' }); // HTTP 500: an unreadable answer, nothing processed
        const payment = await pay({ amount: 60 });
        mercadoPago.behave(account.access_token, null);
        const [atMercadoPago] = attempts(payment);
        expect(atMercadoPago).toMatchObject({ provider_id: 'MERCADO_PAGO', status: 'PENDING' });
        expect(mercadoPago.paymentsFor(atMercadoPago!.id)).toEqual([]);

        await t.running.deps.services.orchestration.reconciliation.runOnce();
        expect(attempts(await getPayment(t, payment.id))[0]).toMatchObject({ status: 'PENDING' });
        // The window (RECONCILIATION_NOT_FOUND_SETTLE_MS, 15 minutes) has passed since the attempt was sent.
        await t.db.query(`UPDATE payment_transactions SET created_at = created_at - interval '16 minutes' WHERE id = $1`, [atMercadoPago!.id]);
        const settled = await reconcileNow(payment.id);
        expect(attempts(settled)[0]).toMatchObject({ id: atMercadoPago!.id, status: 'ERROR', response_code: 'NOT_PROCESSED' });
        expect(settled).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });
      } finally {
        await stripeThenAdyen();
      }
    });
  });
}
