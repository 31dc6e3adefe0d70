/**
 * Asynchronous payment methods through the real connectors, end to end through the public API on each
 * database backend: a payorch server whose STRIPE_API_URL, MERCADO_PAGO_API_URL and ADYEN_API_URL are the
 * local doubles (doubles/stripe/server.ts, doubles/mercado-pago/server.ts, doubles/adyen/server.ts), a
 * connection to each, and the sandbox account's PIX, OXXO and BOLETO routings pointed at them.
 *
 *   - STRIPE PIX: PENDING with the QR code of the PaymentIntent's next_action in
 *     payment_method.payment_method_detail (Yuno's shape, as the sandbox gives it), then Stripe's signed
 *     payment_intent.succeeded → SUCCEEDED with payment.succeeded; a re-delivery changes nothing; refunded
 *     at Stripe (part, then the rest).
 *   - STRIPE OXXO: the voucher; an expired attempt (payment_intent.payment_failed) → EXPIRED, a cancelled
 *     intent (payment_intent.canceled) → CANCELED; paid cash is not refundable (409, nothing sent to Stripe).
 *   - STRIPE BOLETO: the payer's CPF and address reach Stripe; without them the step is refused before any
 *     call; a failed attempt → DECLINED.
 *   - MERCADO_PAGO PIX paid by its payment notification → SUCCEEDED, refunded there; a boleto expired by
 *     its notification → EXPIRED.
 *   - ADYEN PIX: PENDING with the qrCode action's code, then Adyen's signed AUTHORISATION (success true) →
 *     SUCCEEDED with payment.succeeded; a re-delivery changes nothing; refunded at Adyen (its REFUND
 *     notification confirms it). ADYEN OXXO: the voucher; OFFER_CLOSED → EXPIRED; AUTHORISATION
 *     success=false "Shopper Cancelled" → CANCELED; paid cash not refundable (409, Adyen not asked).
 *     ADYEN BOLETO: the typed line and barcode, the payer's CPF and address reach Adyen; refused → DECLINED.
 *     A card's AUTHORISATION about the waiting payment's pspReference ends nothing.
 *   - Routing accepts PIX to any of the three connectors, and refuses a method the connector does not serve.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADYEN_TEST_CREDENTIALS, startAdyenDouble, type AdyenDouble, type LedgerPayment } from './doubles/adyen/server.js';
import { startMercadoPagoDouble, type MercadoPagoDouble } from './doubles/mercado-pago/server.js';
import { startStripeDouble, type StripeDouble } from './doubles/stripe/server.js';
import type { IntentRecord } from './doubles/stripe/objects.js';
import { expectProblem, expectSchema } from './support/assertions.js';
import { connectProvider, routeMethod, routingRequest } from './support/connectors.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { getPayment, postLifecycle, postPayment } from './support/payments.js';

type Created = Schemas['CreatedPayment'];
type Payment = Schemas['Payment'];
type Method = 'PIX' | 'OXXO' | 'BOLETO';

const CPF = '52998224725';
/** A payer with everything a voucher may need (a boleto: name, e-mail, CPF, address). */
const FULL_PAYER = {
  first_name: 'Ana',
  last_name: 'Lima',
  email: 'ana@example.com',
  document: { document_type: 'CPF', document_number: CPF },
  billing_address: { address_line_1: 'Rua das Flores, 123', city: 'São Paulo', state: 'SP', zip_code: '01310-100', country: 'BR', neighborhood: 'Bela Vista' },
};

const COUNTRY: Record<Method, [country: string, currency: string]> = { PIX: ['BR', 'BRL'], BOLETO: ['BR', 'BRL'], OXXO: ['MX', 'MXN'] };

const body = (t: TestServer, type: Method, over: Record<string, unknown> = {}) => ({
  account_id: t.sandbox.account_id,
  description: `Order with ${type}`,
  country: COUNTRY[type][0],
  merchant_order_id: `ORDER-${randomUUID().slice(0, 8)}`,
  amount: { currency: COUNTRY[type][1], value: 120.5 },
  customer_payer: FULL_PAYER,
  payment_method: { type },
  workflow: 'DIRECT',
  ...over,
});

async function create(t: TestServer, type: Method, over: Record<string, unknown> = {}): Promise<Created> {
  const res = await postPayment(t, body(t, type, over));
  const text = await res.text();
  expect(res.status, text).toBe(201);
  const created = JSON.parse(text) as Created;
  expectSchema('CreatedPayment', created);
  return created;
}

/** The event types recorded for a payment, oldest first. */
async function eventsOf(t: TestServer, paymentId: string): Promise<string[]> {
  const list = (await (await t.fetch('/events?limit=100')).json()) as Schemas['EventList'];
  return list.events
    .filter((e) => (e.data as { payment?: { id?: string } }).payment?.id === paymentId)
    .map((e) => e.type_event)
    .reverse();
}

function notify(t: TestServer, connectionId: string, signed: { body: string; headers: Record<string, string> }): Promise<Response> {
  return t.fetch(`/provider-notifications/${connectionId}`, { method: 'POST', headers: signed.headers, body: signed.body, credentials_: false });
}

async function delivered(t: TestServer, connectionId: string, signed: { body: string; headers: Record<string, string> }): Promise<void> {
  const res = await notify(t, connectionId, signed);
  expect(res.status, await res.clone().text()).toBe(200);
}

for (const backend of backends()) {
  describe(`asynchronous methods through STRIPE, MERCADO_PAGO and ADYEN, on ${backend}`, () => {
    let stripe: StripeDouble;
    let mp: MercadoPagoDouble;
    let adyen: AdyenDouble;
    const env: Record<string, string> = { RECONCILIATION_INTERVAL_MS: '3600000' };
    beforeAll(async () => {
      [stripe, mp, adyen] = await Promise.all([startStripeDouble(), startMercadoPagoDouble(), startAdyenDouble(ADYEN_TEST_CREDENTIALS)]);
      env.STRIPE_API_URL = stripe.url;
      env.MERCADO_PAGO_API_URL = mp.url;
      env.ADYEN_API_URL = adyen.url;
    });
    const t = useServer(backend, { env });
    afterAll(async () => {
      await Promise.all([stripe?.close(), mp?.close(), adyen?.close()]);
    });

    const stripeCredentials = { secret_key: `sk_test_${randomBytes(16).toString('hex')}`, webhook_secret: `whsec_${randomBytes(16).toString('hex')}` };
    let mpCredentials: { access_token: string; webhook_secret: string };
    let stripeConnection: string;
    let mpConnection: string;
    let adyenConnection: string;
    let sandboxA: string;
    beforeAll(async () => {
      mpCredentials = mp.account();
      adyenConnection = await connectProvider(t, { providerId: 'ADYEN', credentials: { ...ADYEN_TEST_CREDENTIALS } });
      stripeConnection = await connectProvider(t, { providerId: 'STRIPE', credentials: stripeCredentials });
      mpConnection = await connectProvider(t, { providerId: 'MERCADO_PAGO', credentials: mpCredentials });
      const connections = (await (await t.fetch('/connections')).json()) as { connection_id: string; provider_id: string }[];
      sandboxA = connections.find((c) => c.provider_id === 'SANDBOX_A')!.connection_id;
      for (const method of ['PIX', 'OXXO', 'BOLETO'] as const) await routeMethod(t, method, [{ provider_id: 'STRIPE', connection_id: stripeConnection }]);
    });

    const intentOf = (paymentId: string): IntentRecord => {
      const found = [...stripe.ledger.intents.values()].filter((pi) => pi.metadata.payorch_payment_id === paymentId);
      expect(found).toHaveLength(1);
      return found[0]!;
    };
    const stripeEvent = (kind: 'payment_intent.succeeded' | 'payment_intent.payment_failed' | 'payment_intent.canceled', intentId: string) =>
      stripe.signedNotification(kind, { intentId }, stripeCredentials.webhook_secret);

    it('GET /v1/providers: STRIPE and ADYEN serve CARD, PIX, BOLETO, OXXO; MERCADO_PAGO CARD, PIX, BOLETO', async () => {
      const providers = (await (await t.fetch('/providers')).json()) as { provider_id: string; payment_methods: string[] }[];
      const methods = (id: string) => providers.find((p) => p.provider_id === id)?.payment_methods;
      expect(methods('STRIPE')).toEqual(['CARD', 'PIX', 'BOLETO', 'OXXO']);
      expect(methods('MERCADO_PAGO')).toEqual(['CARD', 'PIX', 'BOLETO']);
      expect(methods('ADYEN')).toEqual(['CARD', 'PIX', 'BOLETO', 'OXXO']);
    });

    it('routing: PIX to a STRIPE or a MERCADO_PAGO connection is accepted; a method the connector does not serve is refused naming the step', async () => {
      const pix = await routingRequest(t, 'PIX', [
        { provider_id: 'MERCADO_PAGO', connection_id: mpConnection },
        { provider_id: 'STRIPE', connection_id: stripeConnection },
      ]);
      expect(pix.status, await pix.clone().text()).toBe(200);
      const paypal = await expectProblem(await routingRequest(t, 'PAYPAL', [{ provider_id: 'STRIPE', connection_id: stripeConnection }]), 422, 'ROUTING_VALIDATION_FAILED');
      expect(paypal.errors).toEqual([{ path: 'default_route.steps[0].provider_id', message: 'STRIPE does not serve PAYPAL payments (GET /v1/providers lists what each provider serves)' }]);
      const oxxo = await expectProblem(
        await routingRequest(t, 'OXXO', [
          { provider_id: 'SANDBOX_A', connection_id: sandboxA },
          { provider_id: 'MERCADO_PAGO', connection_id: mpConnection },
        ]),
        422,
        'ROUTING_VALIDATION_FAILED',
      );
      expect(oxxo.errors).toEqual([{ path: 'default_route.steps[1].provider_id', message: 'MERCADO_PAGO does not serve OXXO payments (GET /v1/providers lists what each provider serves)' }]);
      await routeMethod(t, 'PIX', [{ provider_id: 'STRIPE', connection_id: stripeConnection }]);
    });

    it("STRIPE PIX: PENDING with the PaymentIntent's QR code, then Stripe's signed payment_intent.succeeded → SUCCEEDED with payment.succeeded; refunded at Stripe", async () => {
      const created = await create(t, 'PIX');
      expect([created.status, created.sub_status]).toEqual(['PENDING', 'PENDING']);
      expect(created.transactions).toMatchObject({ type: 'PURCHASE', status: 'CREATED', provider_id: 'STRIPE', category: 'BANK_TRANSFER' });
      const pi = intentOf(created.id);
      expect(pi).toMatchObject({ method: 'pix', status: 'requires_action', amount: 12050, currency: 'brl', metadata: { payorch_reference: created.transactions.id } });
      expect(pi.methodOptions).toEqual({ expires_after_seconds: '1800' });
      const shown = pi.nextAction!.pix_display_qr_code as { data: string; expires_at: number; hosted_instructions_url: string };
      const detail = created.payment_method.payment_method_detail;
      expect(detail.bank_transfer).toMatchObject({ qr_code: shown.data, redirect_url: shown.hosted_instructions_url, expires_at: new Date(shown.expires_at * 1000).toISOString() });
      expect(detail.bank_transfer!.qr_code).toMatch(/^000201.*br\.gov\.bcb\.pix.*5406120\.50.*6304[0-9A-F]{4}$/);
      expect([detail.card, detail.ticket, detail.wallet]).toEqual([null, null, null]);
      expect(created.transactions.provider_data.transaction_id).toBe(pi.id);
      // PIX needs no payer data at Stripe: none was sent.
      const sent = stripe.requests.find((r) => r.method === 'POST' && r.path === '/v1/payment_intents' && r.idempotencyKey === created.transactions.id)!;
      expect(sent.params).toMatchObject({ confirm: 'true', allowed_payment_method_types: ['pix'], payment_method_data: { type: 'pix' } });
      expect(JSON.stringify(sent.params)).not.toContain(CPF);

      stripe.settleAsync(pi.id, 'paid');
      const succeeded = stripeEvent('payment_intent.succeeded', pi.id);
      await delivered(t, stripeConnection, succeeded);
      const paid = await getPayment(t, created.id);
      expect([paid.status, paid.sub_status, paid.amount.captured]).toEqual(['SUCCEEDED', 'APPROVED', 120.5]);
      expect(paid.transactions[0]).toMatchObject({ status: 'SUCCEEDED', provider_id: 'STRIPE' });
      expect(await eventsOf(t, created.id)).toEqual(['payment.pending', 'payment.succeeded']);
      // A re-delivery of the same event changes nothing twice.
      await delivered(t, stripeConnection, succeeded);
      expect(await getPayment(t, created.id)).toEqual(paid);
      expect(await eventsOf(t, created.id)).toEqual(['payment.pending', 'payment.succeeded']);

      const purchase = created.transactions.id;
      const part = await postLifecycle(t, created.id, 'refund', { amount: { currency: 'BRL', value: 20.5 } }, { transactionId: purchase });
      expect(part.status, await part.clone().text()).toBe(200);
      expect(((await part.json()) as Payment).sub_status).toBe('PARTIALLY_REFUNDED');
      const rest = await postLifecycle(t, created.id, 'refund', {}, { transactionId: purchase });
      expect(rest.status, await rest.clone().text()).toBe(200);
      const refunded = (await rest.json()) as Payment;
      expect([refunded.status, refunded.amount.refunded]).toEqual(['REFUNDED', 120.5]);
      expect(refunded.transactions.filter((x) => x.type === 'REFUND').map((x) => [x.status, x.provider_id])).toEqual([
        ['SUCCEEDED', 'STRIPE'],
        ['SUCCEEDED', 'STRIPE'],
      ]);
      expect([...stripe.ledger.refunds.values()].filter((r) => r.intentId === pi.id).map((r) => r.amount)).toEqual([2050, 10000]);
    });

    it('STRIPE OXXO: the voucher (number, hosted page, due date); an expired attempt → EXPIRED, a cancelled intent → CANCELED; paid cash is not refundable and Stripe is not asked', async () => {
      const expiring = await create(t, 'OXXO');
      const pi = intentOf(expiring.id);
      const voucher = pi.nextAction!.oxxo_display_details as { number: string; hosted_voucher_url: string; expires_after: number };
      expect(expiring.payment_method.payment_method_detail.ticket).toMatchObject({
        type: 'OXXO',
        provider_number: voucher.number,
        redirect_url: voucher.hosted_voucher_url,
        expires_at: new Date(voucher.expires_after * 1000).toISOString(),
        date_of_expiration: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      });
      expect(expiring.transactions).toMatchObject({ category: 'TICKET', status: 'CREATED' });
      // The payer's name and e-mail, as Stripe requires for OXXO; no document, no address.
      const sent = stripe.requests.find((r) => r.path === '/v1/payment_intents' && r.idempotencyKey === expiring.transactions.id)!;
      expect(sent.params).toMatchObject({ currency: 'mxn', payment_method_data: { type: 'oxxo', billing_details: { name: 'Ana Lima', email: 'ana@example.com' } }, payment_method_options: { oxxo: { expires_after_days: '3' } } });
      expect(JSON.stringify(sent.params)).not.toContain(CPF);

      stripe.settleAsync(pi.id, 'expired');
      await delivered(t, stripeConnection, stripeEvent('payment_intent.payment_failed', pi.id));
      const expired = await getPayment(t, expiring.id);
      expect([expired.status, expired.sub_status, expired.transactions[0]!.status]).toEqual(['EXPIRED', 'EXPIRED', 'EXPIRED']);
      expect(await eventsOf(t, expiring.id)).toEqual(['payment.pending', 'payment.expired']);

      const canceling = await create(t, 'OXXO');
      const second = intentOf(canceling.id);
      stripe.settleAsync(second.id, 'canceled');
      await delivered(t, stripeConnection, stripeEvent('payment_intent.canceled', second.id));
      expect((await getPayment(t, canceling.id)).status).toBe('CANCELED');
      expect(await eventsOf(t, canceling.id)).toEqual(['payment.pending', 'payment.canceled']);

      const paying = await create(t, 'OXXO');
      const third = intentOf(paying.id);
      stripe.settleAsync(third.id, 'paid');
      await delivered(t, stripeConnection, stripeEvent('payment_intent.succeeded', third.id));
      const paid = await getPayment(t, paying.id);
      expect(paid.status).toBe('SUCCEEDED');
      const before = stripe.requests.length;
      const refused = await expectProblem(await postLifecycle(t, paying.id, 'refund', {}, { transactionId: paying.transactions.id }), 409, 'REFUND_NOT_SUPPORTED');
      expect(String(refused.detail)).toMatch(/OXXO payment cannot be refunded/);
      expect(stripe.requests.length).toBe(before);
      expect(await getPayment(t, paying.id)).toEqual(paid);
    });

    it("STRIPE BOLETO: the payer's CPF and address reach Stripe, the boleto's typed line and barcode are shown; a failed attempt → DECLINED; without a CPF the step is refused before any call", async () => {
      const boleto = await create(t, 'BOLETO');
      const pi = intentOf(boleto.id);
      const shown = pi.nextAction!.boleto_display_details as { number: string; hosted_voucher_url: string; expires_at: number };
      const ticket = boleto.payment_method.payment_method_detail.ticket!;
      expect(ticket).toMatchObject({ type: 'BOLETO', provider_number: shown.number, provider_format: 'ITF', redirect_url: shown.hosted_voucher_url, expires_at: new Date(shown.expires_at * 1000).toISOString() });
      // The 44-digit barcode read from the 47-digit typed line: bank and currency, check digit, due factor and value, free field.
      const n = shown.number;
      expect(ticket.provider_barcode).toBe(`${n.slice(0, 4)}${n[32]}${n.slice(33)}${n.slice(4, 9)}${n.slice(10, 20)}${n.slice(21, 31)}`);
      expect(ticket.provider_barcode).toMatch(/^\d{44}$/);
      const sent = stripe.requests.find((r) => r.path === '/v1/payment_intents' && r.idempotencyKey === boleto.transactions.id)!;
      expect(sent.params).toMatchObject({
        payment_method_data: {
          type: 'boleto',
          boleto: { tax_id: CPF },
          billing_details: { name: 'Ana Lima', email: 'ana@example.com', address: { line1: 'Rua das Flores, 123', city: 'São Paulo', state: 'SP', postal_code: '01310-100', country: 'BR' } },
        },
      });

      stripe.settleAsync(pi.id, 'failed');
      await delivered(t, stripeConnection, stripeEvent('payment_intent.payment_failed', pi.id));
      expect((await getPayment(t, boleto.id)).status).toBe('DECLINED');
      expect(await eventsOf(t, boleto.id)).toEqual(['payment.pending', 'payment.declined']);

      const before = stripe.requests.length;
      const { document: _document, ...withoutDocument } = FULL_PAYER;
      const refused = await create(t, 'BOLETO', { customer_payer: withoutDocument });
      expect(refused.status).not.toBe('PENDING');
      expect(refused.transactions_history!.map((x) => [x.provider_id, x.status, x.response_code])).toEqual([['STRIPE', 'ERROR', 'PROVIDER_REQUEST_REJECTED']]);
      expect(refused.transactions.response_message).toMatch(/customer_payer\.document/);
      expect(stripe.requests.length).toBe(before);
    });

    it("payment_intent.succeeded about a card's PaymentIntent is acknowledged and ends nothing, even under a waiting payment's intent id", async () => {
      const pix = await create(t, 'PIX');
      const pi = intentOf(pix.id);
      // The waiting intent seen as a card's (payment_method_types: ['card']): its events are not an asynchronous payment's end.
      pi.method = 'card';
      try {
        await delivered(t, stripeConnection, stripeEvent('payment_intent.succeeded', pi.id));
      } finally {
        pi.method = 'pix';
      }
      expect((await getPayment(t, pix.id)).status).toBe('PENDING');
      // The same event about the PIX intent ends it.
      stripe.settleAsync(pi.id, 'paid');
      await delivered(t, stripeConnection, stripeEvent('payment_intent.succeeded', pi.id));
      expect((await getPayment(t, pix.id)).status).toBe('SUCCEEDED');
    });

    it('MERCADO_PAGO PIX: PENDING with its QR code, paid by its payment notification → SUCCEEDED, then refunded at Mercado Pago; a re-delivery changes nothing', async () => {
      await routeMethod(t, 'PIX', [{ provider_id: 'MERCADO_PAGO', connection_id: mpConnection }]);
      try {
        const created = await create(t, 'PIX');
        expect([created.status, created.sub_status]).toEqual(['PENDING', 'PENDING']);
        expect(created.transactions).toMatchObject({ provider_id: 'MERCADO_PAGO', status: 'CREATED' });
        const [atMp] = mp.paymentsFor(created.transactions.id);
        expect(atMp).toMatchObject({ payment_method_id: 'pix', status: 'pending', transaction_amount: 120.5, metadata: { payorch_payment_id: created.id } });
        const data = atMp!.point_of_interaction!.transaction_data!;
        expect(created.payment_method.payment_method_detail.bank_transfer).toMatchObject({
          qr_code: data.qr_code,
          redirect_url: data.ticket_url,
          expires_at: new Date(atMp!.date_of_expiration!).toISOString(),
        });
        // About 30 minutes to pay, as the sandbox gives a PIX code.
        const left = Date.parse(atMp!.date_of_expiration!) - Date.now();
        expect(left).toBeGreaterThan(25 * 60_000);
        expect(left).toBeLessThanOrEqual(30 * 60_000);

        mp.settlePending(atMp!.id, 'approved');
        const signed = mp.signedNotification('payment', atMp!.id);
        await delivered(t, mpConnection, signed);
        const paid = await getPayment(t, created.id);
        expect([paid.status, paid.sub_status, paid.amount.captured]).toEqual(['SUCCEEDED', 'APPROVED', 120.5]);
        expect(await eventsOf(t, created.id)).toEqual(['payment.pending', 'payment.succeeded']);
        await delivered(t, mpConnection, mp.signedNotification('payment', atMp!.id));
        expect(await eventsOf(t, created.id)).toEqual(['payment.pending', 'payment.succeeded']);

        const refund = await postLifecycle(t, created.id, 'refund', {}, { transactionId: created.transactions.id });
        expect(refund.status, await refund.clone().text()).toBe(200);
        expect(((await refund.json()) as Payment).status).toBe('REFUNDED');
        expect(mp.payment(atMp!.id)).toMatchObject({ status: 'refunded', transaction_amount_refunded: 120.5 });
      } finally {
        await routeMethod(t, 'PIX', [{ provider_id: 'STRIPE', connection_id: stripeConnection }]);
      }
    });

    it('MERCADO_PAGO BOLETO: the barcode, typed line and printable page; expired at its deadline by its payment notification → EXPIRED; paid → SUCCEEDED and not refundable', async () => {
      await routeMethod(t, 'BOLETO', [{ provider_id: 'MERCADO_PAGO', connection_id: mpConnection }]);
      try {
        const expiring = await create(t, 'BOLETO');
        const [atMp] = mp.paymentsFor(expiring.transactions.id);
        expect(atMp).toMatchObject({ payment_method_id: 'bolbradesco', payment_type_id: 'ticket', status: 'pending' });
        const sent = mp.requests.find((r) => r.method === 'POST' && r.path === '/v1/payments' && r.idempotencyKey === expiring.transactions.id)!;
        expect(sent.body).toMatchObject({
          payer: {
            email: 'ana@example.com',
            first_name: 'Ana',
            last_name: 'Lima',
            identification: { type: 'CPF', number: CPF },
            address: { zip_code: '01310100', street_name: 'Rua das Flores', street_number: '123', neighborhood: 'Bela Vista', city: 'São Paulo', federal_unit: 'SP' },
          },
        });
        const details = atMp!.transaction_details!;
        expect(expiring.payment_method.payment_method_detail.ticket).toMatchObject({
          type: 'BOLETO',
          provider_barcode: details.barcode!.content,
          provider_number: details.digitable_line,
          provider_format: 'ITF',
          redirect_url: details.external_resource_url,
          date_of_expiration: atMp!.date_of_expiration!.slice(0, 10),
        });

        mp.settlePending(atMp!.id, 'expired');
        await delivered(t, mpConnection, mp.signedNotification('payment', atMp!.id));
        expect((await getPayment(t, expiring.id)).status).toBe('EXPIRED');
        expect(await eventsOf(t, expiring.id)).toEqual(['payment.pending', 'payment.expired']);

        const paying = await create(t, 'BOLETO');
        const [second] = mp.paymentsFor(paying.transactions.id);
        mp.settlePending(second!.id, 'approved');
        await delivered(t, mpConnection, mp.signedNotification('payment', second!.id));
        expect((await getPayment(t, paying.id)).status).toBe('SUCCEEDED');
        await expectProblem(await postLifecycle(t, paying.id, 'refund', {}, { transactionId: paying.transactions.id }), 409, 'REFUND_NOT_SUPPORTED');
        expect(mp.payment(second!.id)!.refunds).toEqual([]);
      } finally {
        await routeMethod(t, 'BOLETO', [{ provider_id: 'STRIPE', connection_id: stripeConnection }]);
      }
    });

    /** The payment at Adyen's double for our attempt (its merchant reference is the attempt's id). */
    const atAdyen = (created: Created): LedgerPayment => {
      const p = adyen.paymentByReference(created.transactions.id);
      expect(p, 'no payment at the Adyen double for the attempt').toBeDefined();
      return p!;
    };
    /** Adyen's signed notification about a PIX, boleto or OXXO payment at its double. */
    const adyenEvent = (eventCode: 'AUTHORISATION' | 'OFFER_CLOSED', p: LedgerPayment, opts: { success?: boolean; reason?: string; paymentMethod?: string } = {}) => {
      const value = (p.request!.amount as { value: number }).value;
      return adyen.signedNotification(eventCode, { pspReference: p.pspReference, merchantReference: p.reference, value, currency: p.currency }, { paymentMethod: p.method, ...opts });
    };
    const withAdyen = async (method: Method, run: () => Promise<void>) => {
      await routeMethod(t, method, [{ provider_id: 'ADYEN', connection_id: adyenConnection }]);
      try {
        await run();
      } finally {
        await routeMethod(t, method, [{ provider_id: 'STRIPE', connection_id: stripeConnection }]);
      }
    };

    it('routing: PIX, BOLETO and OXXO to an ADYEN connection are accepted; PAYPAL is refused naming the step', async () => {
      for (const method of ['PIX', 'BOLETO', 'OXXO'] as const) {
        const res = await routingRequest(t, method, [
          { provider_id: 'ADYEN', connection_id: adyenConnection },
          { provider_id: 'STRIPE', connection_id: stripeConnection },
        ]);
        expect(res.status, await res.clone().text()).toBe(200);
        await routeMethod(t, method, [{ provider_id: 'STRIPE', connection_id: stripeConnection }]);
      }
      const paypal = await expectProblem(await routingRequest(t, 'PAYPAL', [{ provider_id: 'ADYEN', connection_id: adyenConnection }]), 422, 'ROUTING_VALIDATION_FAILED');
      expect(paypal.errors).toEqual([{ path: 'default_route.steps[0].provider_id', message: 'ADYEN does not serve PAYPAL payments (GET /v1/providers lists what each provider serves)' }]);
    });

    it("ADYEN PIX: PENDING with the qrCode action's code, then Adyen's signed AUTHORISATION → SUCCEEDED with payment.succeeded; a re-delivery changes nothing; refunded at Adyen", async () => {
      await withAdyen('PIX', async () => {
        const created = await create(t, 'PIX');
        expect([created.status, created.sub_status]).toEqual(['PENDING', 'PENDING']);
        expect(created.transactions).toMatchObject({ type: 'PURCHASE', status: 'CREATED', provider_id: 'ADYEN', category: 'BANK_TRANSFER' });
        const p = atAdyen(created);
        expect(p).toMatchObject({ method: 'pix', resultCode: 'Pending', currency: 'BRL', request: { amount: { currency: 'BRL', value: 12050 }, paymentMethod: { type: 'pix' }, countryCode: 'BR' } });
        const action = p.action as { qrCodeData: string; url: string; expiresAt: string };
        const detail = created.payment_method.payment_method_detail;
        expect(detail.bank_transfer).toMatchObject({ qr_code: action.qrCodeData, redirect_url: action.url, expires_at: new Date(action.expiresAt).toISOString() });
        expect([detail.card, detail.ticket, detail.wallet]).toEqual([null, null, null]);
        expect(created.transactions.provider_data.transaction_id).toBe(p.pspReference);
        // PIX needs no payer data at Adyen: none was sent.
        expect(JSON.stringify(p.request)).not.toContain(CPF);
        expect(JSON.stringify(p.request)).not.toContain('ana@example.com');

        adyen.settleAsync(p.pspReference, 'paid');
        const authorised = adyenEvent('AUTHORISATION', p);
        await delivered(t, adyenConnection, authorised);
        const paid = await getPayment(t, created.id);
        expect([paid.status, paid.sub_status, paid.amount.captured]).toEqual(['SUCCEEDED', 'APPROVED', 120.5]);
        expect(paid.transactions[0]).toMatchObject({ status: 'SUCCEEDED', provider_id: 'ADYEN' });
        expect(await eventsOf(t, created.id)).toEqual(['payment.pending', 'payment.succeeded']);
        await delivered(t, adyenConnection, authorised);
        expect(await getPayment(t, created.id)).toEqual(paid);
        expect(await eventsOf(t, created.id)).toEqual(['payment.pending', 'payment.succeeded']);

        const refund = await postLifecycle(t, created.id, 'refund', {}, { transactionId: created.transactions.id });
        expect(refund.status, await refund.clone().text()).toBe(200);
        expect(p.refunded).toBe(12050);
        const sentRefund = adyen.requests.find((r) => r.operation === 'refunds' && r.path.includes(p.pspReference))!;
        expect(sentRefund.body).toMatchObject({ amount: { currency: 'BRL', value: 12050 } });
        // Adyen's REFUND notification confirms it.
        await delivered(t, adyenConnection, adyen.signedNotification('REFUND', { pspReference: 'REFD0000PIX00001', originalReference: p.pspReference, merchantReference: sentRefund.idempotencyKey!, value: 12050, currency: 'BRL' }, { paymentMethod: 'pix' }));
        const refunded = await getPayment(t, created.id);
        expect([refunded.status, refunded.amount.refunded]).toEqual(['REFUNDED', 120.5]);
        expect(refunded.transactions.filter((x) => x.type === 'REFUND').map((x) => [x.status, x.provider_id])).toEqual([['SUCCEEDED', 'ADYEN']]);
        expect(adyen.invalidRequests()).toEqual([]);
      });
    });

    it('ADYEN OXXO: the voucher; OFFER_CLOSED → EXPIRED, AUTHORISATION refused as "Shopper Cancelled" → CANCELED; paid cash is not refundable and Adyen is not asked', async () => {
      await withAdyen('OXXO', async () => {
        const expiring = await create(t, 'OXXO');
        const p = atAdyen(expiring);
        const voucher = p.action as { reference: string; downloadUrl: string; expiresAt: string };
        expect(expiring.payment_method.payment_method_detail.ticket).toMatchObject({
          type: 'OXXO',
          provider_number: voucher.reference,
          redirect_url: voucher.downloadUrl,
          date_of_expiration: voucher.expiresAt.slice(0, 10),
          // Its last day on Mexico City's clock (UTC-6), payable until the next midnight there.
          expires_at: new Date(Date.parse(`${voucher.expiresAt}-06:00`) + 86_400_000).toISOString(),
        });
        expect(expiring.transactions).toMatchObject({ category: 'TICKET', status: 'CREATED', provider_id: 'ADYEN' });
        expect(p.request).toMatchObject({ amount: { currency: 'MXN', value: 12050 }, paymentMethod: { type: 'oxxo' }, shopperName: { firstName: 'Ana', lastName: 'Lima' }, shopperEmail: 'ana@example.com' });
        expect(JSON.stringify(p.request)).not.toContain(CPF);

        adyen.settleAsync(p.pspReference, 'expired');
        await delivered(t, adyenConnection, adyenEvent('OFFER_CLOSED', p));
        const expired = await getPayment(t, expiring.id);
        expect([expired.status, expired.sub_status, expired.transactions[0]!.status]).toEqual(['EXPIRED', 'EXPIRED', 'EXPIRED']);
        expect(await eventsOf(t, expiring.id)).toEqual(['payment.pending', 'payment.expired']);

        const canceling = await create(t, 'OXXO');
        const second = atAdyen(canceling);
        adyen.settleAsync(second.pspReference, 'cancelled');
        await delivered(t, adyenConnection, adyenEvent('AUTHORISATION', second, { success: false, reason: 'Shopper Cancelled' }));
        expect((await getPayment(t, canceling.id)).status).toBe('CANCELED');
        expect(await eventsOf(t, canceling.id)).toEqual(['payment.pending', 'payment.canceled']);

        const paying = await create(t, 'OXXO');
        const third = atAdyen(paying);
        adyen.settleAsync(third.pspReference, 'paid');
        await delivered(t, adyenConnection, adyenEvent('AUTHORISATION', third));
        const paid = await getPayment(t, paying.id);
        expect(paid.status).toBe('SUCCEEDED');
        const before = adyen.requests.length;
        const refused = await expectProblem(await postLifecycle(t, paying.id, 'refund', {}, { transactionId: paying.transactions.id }), 409, 'REFUND_NOT_SUPPORTED');
        expect(String(refused.detail)).toMatch(/OXXO payment cannot be refunded/);
        expect(adyen.requests.length).toBe(before);
        expect(await getPayment(t, paying.id)).toEqual(paid);
      });
    });

    it("ADYEN BOLETO: the payer's CPF and address reach Adyen, the typed line and its barcode are shown; refused → DECLINED; paid → not refundable; without an address the step is refused before any call", async () => {
      await withAdyen('BOLETO', async () => {
        const boleto = await create(t, 'BOLETO');
        const p = atAdyen(boleto);
        expect(p.request).toMatchObject({
          paymentMethod: { type: 'boletobancario' },
          shopperName: { firstName: 'Ana', lastName: 'Lima' },
          shopperEmail: 'ana@example.com',
          socialSecurityNumber: CPF,
          billingAddress: { street: 'Rua das Flores', houseNumberOrName: '123', city: 'São Paulo', stateOrProvince: 'SP', postalCode: '01310-100', country: 'BR' },
        });
        const shown = p.action as { reference: string; downloadUrl: string; expiresAt: string };
        const ticket = boleto.payment_method.payment_method_detail.ticket!;
        expect(ticket).toMatchObject({ type: 'BOLETO', provider_number: shown.reference, provider_format: 'ITF', redirect_url: shown.downloadUrl, date_of_expiration: shown.expiresAt.slice(0, 10) });
        const n = shown.reference.replace(/\D/g, '');
        expect(ticket.provider_barcode).toBe(`${n.slice(0, 4)}${n[32]}${n.slice(33)}${n.slice(4, 9)}${n.slice(10, 20)}${n.slice(21, 31)}`);
        expect(ticket.provider_barcode).toMatch(/^\d{44}$/);
        // The payer's name and e-mail Adyen echoes in the voucher are not kept with the attempt's raw answer.
        expect(JSON.stringify(await (await t.fetch(`/payments/${boleto.id}`)).json())).not.toContain('"shopperEmail"');

        adyen.settleAsync(p.pspReference, 'refused');
        await delivered(t, adyenConnection, adyenEvent('AUTHORISATION', p, { success: false, reason: 'Refused' }));
        expect((await getPayment(t, boleto.id)).status).toBe('DECLINED');
        expect(await eventsOf(t, boleto.id)).toEqual(['payment.pending', 'payment.declined']);

        const paying = await create(t, 'BOLETO');
        const second = atAdyen(paying);
        adyen.settleAsync(second.pspReference, 'paid');
        await delivered(t, adyenConnection, adyenEvent('AUTHORISATION', second, { paymentMethod: 'boletobancario_santander' }));
        expect((await getPayment(t, paying.id)).status).toBe('SUCCEEDED');
        const beforeRefund = adyen.requests.length;
        await expectProblem(await postLifecycle(t, paying.id, 'refund', {}, { transactionId: paying.transactions.id }), 409, 'REFUND_NOT_SUPPORTED');
        expect(adyen.requests.length).toBe(beforeRefund);

        const before = adyen.requests.length;
        const { billing_address: _address, ...withoutAddress } = FULL_PAYER;
        const refused = await create(t, 'BOLETO', { customer_payer: withoutAddress });
        expect(refused.status).not.toBe('PENDING');
        expect(refused.transactions_history!.map((x) => [x.provider_id, x.status, x.response_code])).toEqual([['ADYEN', 'ERROR', 'PROVIDER_REQUEST_REJECTED']]);
        expect(refused.transactions.response_message).toMatch(/customer_payer\.billing_address/);
        expect(adyen.requests.length).toBe(before);
        expect(adyen.invalidRequests()).toEqual([]);
      });
    });

    it("a card's AUTHORISATION (paymentMethod visa) under a waiting PIX's pspReference is acknowledged and ends nothing; the PIX's own ends it", async () => {
      await withAdyen('PIX', async () => {
        const pix = await create(t, 'PIX');
        const p = atAdyen(pix);
        await delivered(t, adyenConnection, adyenEvent('AUTHORISATION', p, { paymentMethod: 'visa' }));
        expect((await getPayment(t, pix.id)).status).toBe('PENDING');
        adyen.settleAsync(p.pspReference, 'paid');
        await delivered(t, adyenConnection, adyenEvent('AUTHORISATION', p));
        expect((await getPayment(t, pix.id)).status).toBe('SUCCEEDED');
        expect(adyen.invalidNotifications).toEqual([]);
      });
    });
  });
}
