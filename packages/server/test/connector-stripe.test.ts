/**
 * The STRIPE connector end to end, through the public API, on each database backend: a payorch server
 * whose STRIPE_API_URL is the local Stripe double (doubles/stripe/server.ts), a STRIPE connection and the
 * sandbox account's card routing STRIPE → SANDBOX_A. Purchase, authorize + partial capture, void, partial
 * then full refund, no second charge for a retried request, every row of the code table (the decision:
 * stop or fail over to SANDBOX_A), a timeout settled by reconciliation's lookup, an oversized answer.
 * Adapter-level behaviour (lookup of each operation, notifications, evidence, shapes) is in
 * connector-stripe-units.test.ts.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { STRIPE_CODES, UNKNOWN_DECLINE } from '../src/providers/stripe/codes.js';
import { startStripeDouble, type StripeDouble, type StripeFault } from './doubles/stripe/server.js';
import { connectProvider, routeCards } from './support/connectors.js';
import { backends, useServer } from './support/harness.js';
import { describeFindings, scanForSensitiveData, NO_PERSONAL_DATA } from './support/sensitive-data-scan.js';
import { authorizedPayment, createCustomer, getPayment, paymentBody, postLifecycle, postPayment } from './support/payments.js';

type Payment = Schemas['Payment'];

/** How the double declines with a row's code (the `*` row: codes Stripe may add tomorrow). */
function declineOf(providerCode: string): StripeFault {
  if (providerCode === UNKNOWN_DECLINE) return { decline: 'a_reason_stripe_adds_later', code: 'a_code_stripe_adds_later' };
  return { decline: providerCode };
}

for (const backend of backends()) {
  describe(`STRIPE connector through the API, on ${backend}`, () => {
    let double: StripeDouble;
    const env: Record<string, string> = { RECONCILIATION_INTERVAL_MS: '3600000' };
    beforeAll(async () => {
      double = await startStripeDouble();
      env.STRIPE_API_URL = double.url;
    });
    const t = useServer(backend, { env });
    afterAll(() => double?.close());
    afterEach(() => double.fault(null));

    const issued: string[] = [];
    const credentials = () => {
      const c = { secret_key: `sk_test_${randomBytes(16).toString('hex')}`, webhook_secret: `whsec_${randomBytes(16).toString('hex')}` };
      issued.push(c.secret_key, c.webhook_secret);
      return c;
    };
    let stripe: string;
    let sandboxA: string;
    let customerId: string;
    beforeAll(async () => {
      stripe = await connectProvider(t, { providerId: 'STRIPE', credentials: credentials() });
      const connections = (await (await t.fetch('/connections')).json()) as { connection_id: string; provider_id: string }[];
      sandboxA = connections.find((c) => c.provider_id === 'SANDBOX_A')!.connection_id;
      await routeCards(t, [
        { provider_id: 'STRIPE', connection_id: stripe },
        { provider_id: 'SANDBOX_A', connection_id: sandboxA },
      ]);
      customerId = await createCustomer(t);
    });

    async function pay(overrides: Parameters<typeof paymentBody>[2] | ReturnType<typeof paymentBody> = {}, key?: string): Promise<Payment> {
      const body = 'payment_method' in overrides && 'account_id' in overrides ? overrides : paymentBody(t, customerId, overrides);
      const res = await postPayment(t, body, key ? { key } : {});
      const text = await res.text();
      expect(res.status, text).toBe(201);
      return getPayment(t, (JSON.parse(text) as { id: string }).id, '?transactions_history=true');
    }
    const attempts = (p: Payment) => p.transactions.filter((x) => x.type === 'PURCHASE' || x.type === 'AUTHORIZE');
    const intentOf = (paymentId: string) => [...double.ledger.intents.values()].filter((pi) => pi.metadata.payorch_payment_id === paymentId);
    async function ok(res: Response, status = 200): Promise<Payment> {
      const text = await res.text();
      expect(res.status, text).toBe(status);
      return JSON.parse(text) as Payment;
    }

    it('purchase: approved at Stripe, one PaymentIntent captured, our reference and payment id in its metadata', async () => {
      const payment = await pay();
      expect(payment.status).toBe('SUCCEEDED');
      const [attempt] = attempts(payment);
      expect(attempt).toMatchObject({ type: 'PURCHASE', status: 'SUCCEEDED', provider_id: 'STRIPE', response_code: 'SUCCEEDED' });
      const [pi] = intentOf(payment.id);
      expect(pi).toMatchObject({ status: 'succeeded', amount: 15050, currency: 'brl', captureMethod: 'automatic', metadata: { payorch_reference: attempt!.id } });
      expect(double.requests.find((r) => r.idempotencyKey === attempt!.id)).toBeDefined();
    });

    it('authorize, then a partial capture: Stripe captures that amount and releases the rest', async () => {
      const created = await authorizedPayment(t, {}, customerId);
      expect(created).toMatchObject({ status: 'PENDING', sub_status: 'AUTHORIZED' });
      const auth = attempts(await getPayment(t, created.id)).find((x) => x.status === 'SUCCEEDED')!;
      expect(auth.provider_id).toBe('STRIPE');
      const captured = await ok(await postLifecycle(t, created.id, 'capture', { amount: { currency: 'BRL', value: 100 } }, { transactionId: auth.id }));
      expect(captured.transactions.at(-1)).toMatchObject({ type: 'CAPTURE', status: 'SUCCEEDED', provider_id: 'STRIPE' });
      expect(intentOf(created.id)[0]).toMatchObject({ status: 'succeeded', amountReceived: 10000, amountCapturable: 0 });
    });

    it('void: the authorization is cancelled at Stripe', async () => {
      const created = await authorizedPayment(t, {}, customerId);
      const canceled = await ok(await postLifecycle(t, created.id, 'cancel-or-refund', {}), 201);
      expect(canceled.transactions.at(-1)).toMatchObject({ type: 'CANCEL', status: 'SUCCEEDED', provider_id: 'STRIPE' });
      expect(intentOf(created.id)[0]).toMatchObject({ status: 'canceled' });
    });

    it('a partial refund, then the rest: two refunds at Stripe adding up to the charge, the payment REFUNDED', async () => {
      const payment = await pay();
      const purchase = attempts(payment)[0]!;
      const partly = await ok(await postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value: 50 } }, { transactionId: purchase.id }));
      expect(partly).toMatchObject({ sub_status: 'PARTIALLY_REFUNDED' });
      const fully = await ok(await postLifecycle(t, payment.id, 'refund', {}, { transactionId: purchase.id }));
      expect(fully.transactions.at(-1)).toMatchObject({ type: 'REFUND', status: 'SUCCEEDED', provider_id: 'STRIPE' });
      expect(fully.sub_status).toBe('REFUNDED');
      const pi = intentOf(payment.id)[0]!;
      const refunds = [...double.ledger.refunds.values()].filter((r) => r.intentId === pi.id);
      expect(refunds.map((r) => r.amount)).toEqual([5000, 10050]);
      expect(double.ledger.charges.get(pi.chargeId)!.amountRefunded).toBe(15050);
    });

    it('a request retried with the same X-Idempotency-Key never charges twice at Stripe', async () => {
      const key = randomUUID();
      const body = paymentBody(t, customerId);
      const first = await pay(body, key);
      const again = await pay(body, key);
      expect(again.id).toBe(first.id);
      expect(intentOf(first.id)).toHaveLength(1);
    });

    it.each(STRIPE_CODES.map((row) => [row.providerCode, row] as const))('Stripe declines with %s: the code table decides (stop, or fail over to SANDBOX_A)', async (_code, row) => {
      double.fault(declineOf(row.providerCode));
      const payment = await pay();
      const [atStripe, next] = attempts(payment);
      expect(atStripe).toMatchObject({ provider_id: 'STRIPE', status: row.outcome === 'ERROR' ? 'ERROR' : 'DECLINED', response_code: row.responseCode });
      if (row.decision === 'SOFT_FAILURE') {
        expect(next).toMatchObject({ provider_id: 'SANDBOX_A', status: 'SUCCEEDED' });
        expect(payment.status).toBe('SUCCEEDED');
      } else {
        expect(next).toBeUndefined();
        expect(payment.status).not.toBe('SUCCEEDED');
      }
    });

    it("after Stripe's processing_error the payment is authorized at SANDBOX_A, and its capture and refund go there: Stripe sees neither", async () => {
      double.fault({ decline: 'processing_error' });
      const body = paymentBody(t, customerId);
      (body.payment_method.detail!.card as { capture?: boolean }).capture = false;
      const authorized = await pay(body);
      double.fault(null);
      const [atStripe, atA] = attempts(authorized);
      expect(atStripe).toMatchObject({ provider_id: 'STRIPE', status: 'ERROR', response_code: 'PROVIDER_ERROR' });
      expect(atA).toMatchObject({ provider_id: 'SANDBOX_A', status: 'SUCCEEDED', type: 'AUTHORIZE' });
      const before = double.requests.length;
      const captured = await ok(await postLifecycle(t, authorized.id, 'capture', { amount: { currency: 'BRL', value: 100 } }, { transactionId: atA!.id }));
      const capture = captured.transactions.at(-1)!;
      expect(capture).toMatchObject({ type: 'CAPTURE', status: 'SUCCEEDED', provider_id: 'SANDBOX_A' });
      const refunded = await ok(await postLifecycle(t, authorized.id, 'refund', { amount: { currency: 'BRL', value: 40 } }, { transactionId: capture.id }));
      expect(refunded.transactions.at(-1)).toMatchObject({ type: 'REFUND', status: 'SUCCEEDED', provider_id: 'SANDBOX_A' });
      expect(double.requests.length).toBe(before);
    });

    it("an answer over 64 KiB is BAD_RESPONSE: the attempt stays to be looked up and the payment fails over", async () => {
      double.fault({ mode: 'oversized' });
      const payment = await pay();
      const [atStripe, next] = attempts(payment);
      expect(atStripe).toMatchObject({ provider_id: 'STRIPE', status: 'PENDING', response_code: 'PROVIDER_BAD_RESPONSE' });
      expect(next).toMatchObject({ provider_id: 'SANDBOX_A', status: 'SUCCEEDED' });
    });

    it('a timeout leaves the attempt unknown (PENDING); reconciliation finds the PaymentIntent by our reference and takes the approval; a lost refund answer is found the same way', async () => {
      const fast = await connectProvider(t, { providerId: 'STRIPE', credentials: credentials(), timeoutMs: 300 });
      await routeCards(t, [{ provider_id: 'STRIPE', connection_id: fast }]);
      try {
        double.fault({ mode: 'timeout' });
        const payment = await pay();
        const [attempt] = attempts(payment);
        expect(attempt).toMatchObject({ provider_id: 'STRIPE', status: 'PENDING', response_code: 'PROVIDER_TIMEOUT' });
        expect(payment.status).not.toBe('SUCCEEDED');
        expect(intentOf(payment.id)).toHaveLength(1); // Stripe charged, we never heard
        double.fault(null);
        await t.db.query('UPDATE payment_transactions SET reconcile_after = clock_timestamp(), deadline_at = clock_timestamp() WHERE id = $1', [attempt!.id]);
        const worker = t.running.deps.services.orchestration.reconciliation;
        for (let i = 0; i < 20 && (await getPayment(t, payment.id)).status !== 'SUCCEEDED'; i++) await worker.runOnce();
        const settled = await getPayment(t, payment.id, '?transactions_history=true');
        expect(settled.status).toBe('SUCCEEDED');
        expect(attempts(settled)[0]).toMatchObject({ status: 'SUCCEEDED', response_code: 'SUCCEEDED' });
        expect(double.requests.some((r) => r.path === '/v1/payment_intents/search')).toBe(true);

        // A refund whose answer is lost: Stripe refunds, we hear nothing (502, the refund PENDING); the lookup finds it by its reference.
        double.fault({ mode: 'timeout', on: 'POST /v1/refunds' });
        const lost = await postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value: 20 } }, { transactionId: attempt!.id });
        expect(lost.status, await lost.clone().text()).toBe(502);
        double.fault(null);
        const pending = (await getPayment(t, payment.id, '?transactions_history=true')).transactions.find((x) => x.type === 'REFUND')!;
        expect(pending).toMatchObject({ status: 'PENDING', provider_id: 'STRIPE' });
        await t.db.query('UPDATE payment_transactions SET reconcile_after = clock_timestamp() WHERE id = $1', [pending.id]);
        const isSettled = async () => (await getPayment(t, payment.id, '?transactions_history=true')).transactions.find((x) => x.id === pending.id)!.status !== 'PENDING';
        for (let i = 0; i < 20 && !(await isSettled()); i++) await worker.runOnce();
        const after = await getPayment(t, payment.id, '?transactions_history=true');
        expect(after.transactions.find((x) => x.id === pending.id)).toMatchObject({ status: 'SUCCEEDED' });
        expect(after.sub_status).toBe('PARTIALLY_REFUNDED');
        expect([...double.ledger.refunds.values()].filter((r) => r.metadata.payorch_reference === pending.id)).toHaveLength(1);
      } finally {
        await routeCards(t, [
          { provider_id: 'STRIPE', connection_id: stripe },
          { provider_id: 'SANDBOX_A', connection_id: sandboxA },
        ]);
      }
    });

    it('signedNotification by our payment id: the events the lead feeds to POST /v1/provider-notifications/{connection_id} verify and translate', async () => {
      const payment = await pay();
      const purchase = attempts(payment)[0]!;
      const refunded = await ok(await postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value: 10 } }, { transactionId: purchase.id }));
      const pi = intentOf(payment.id)[0]!;
      const opened = await t.running.deps.services.orchestration.routing.openConnection(t.db, t.sandbox.organization_id, stripe);
      const adapter = t.running.deps.services.providers.get('STRIPE')!;
      const secret = opened!.context.credentials.webhook_secret!;
      const refund = await adapter.parseConnectionNotification!(...body(double.signedNotification('refund.updated', { paymentId: payment.id }, secret)), opened!.context);
      expect(refund.events).toEqual([expect.objectContaining({ kind: 'FOLLOW_UP_SETTLED', operation: 'REFUND', outcome: 'CONFIRMED', amount: '10', reference: refunded.transactions.at(-1)!.id, providerTransactionId: pi.id })]);
      const chargeback = await adapter.parseConnectionNotification!(...body(double.signedNotification('charge.dispute.created', { paymentId: payment.id }, secret)), opened!.context);
      expect(chargeback.events).toEqual([expect.objectContaining({ kind: 'CHARGEBACK', paymentId: payment.id, providerTransactionId: pi.id, amount: '150.5' })]);
    });
    const body = (signed: { body: string; headers: Record<string, string> }) => [signed.body, signed.headers] as const;

    // Last: the double's request log (test memory) after every call above holds no card number, security code or secret.
    it("the double's request log holds no card number, security code or connection secret", async () => {
      expect(double.requests.length).toBeGreaterThan(40);
      const findings = await scanForSensitiveData({ personal: NO_PERSONAL_DATA, logs: double.requests.map((r) => JSON.stringify(r)), secrets: issued.map((value) => ({ name: 'a STRIPE credential', value })) });
      expect(findings, describeFindings(findings)).toEqual([]);
      expect(double.requests.filter((r) => r.path === '/v1/payment_intents' && r.method === 'POST').every((r) => JSON.stringify(r.params).includes('"last4"'))).toBe(true);
    });
  });
}
