/**
 * The Mercado Pago double's own strictness (plain unit tests, no payorch server): what it refuses as
 * Mercado Pago does, its answers (built typed by the `mercadopago` package's types), and the adapter against it
 * for what needs no database (zero-decimal currencies, amounts both ways).
 */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../src/platform/config.js';
import { createLogger } from '../src/platform/logger.js';
import { mercadoPagoConnector } from '../src/providers/mercado-pago/index.js';
import type { CardTokenResponse, PaymentResponse, PaymentSearch, RefundResponse } from '../src/providers/mercado-pago/sdk-types.js';
import type { ConnectionContext, ProviderCard } from '../src/providers/provider.js';
import { startMercadoPagoDouble, type DoubleAccount, type MercadoPagoDouble } from './doubles/mercado-pago/server.js';

let double: MercadoPagoDouble;
let account: DoubleAccount;
beforeAll(async () => {
  double = await startMercadoPagoDouble();
  account = double.account();
});
afterAll(() => double?.close());

/** One call to the double; its answer read as the package's type T (the double builds its answers typed by them). */
async function call<T = Record<string, unknown>>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Omit<T, 'api_response'> }> {
  const res = await fetch(`${double.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${account.access_token}`, 'content-type': 'application/json', ...(method === 'GET' ? {} : { 'x-idempotency-key': randomUUID() }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Omit<T, 'api_response'> };
}

async function authorized(amount = 100): Promise<Omit<PaymentResponse, 'api_response'>> {
  const token = await call<CardTokenResponse>('POST', '/v1/card_tokens', { card_number: '4507990000000002', expiration_month: '12', expiration_year: '2031', security_code: '123' });
  expect(token.status).toBe(201);
  const created = await call<PaymentResponse>('POST', '/v1/payments', {
    transaction_amount: amount,
    token: token.body.id,
    installments: 1,
    payment_method_id: 'visa',
    payer: { email: 'payer@payorch.invalid' },
    capture: false,
  });
  expect(created.status).toBe(201);
  return created.body;
}

describe('the Mercado Pago double', () => {
  it('answers in the package types (compile-checked) and refuses an unknown access token with 401', async () => {
    const token = (await call<CardTokenResponse>('POST', '/v1/card_tokens', { card_number: '4507990000000002', expiration_month: '12', expiration_year: '2031' })).body;
    expect(token).toMatchObject({ first_six_digits: '450799', last_four_digits: '0002', expiration_year: 2031, status: 'active' });
    const p = await authorized();
    const search = (await call<PaymentSearch>('GET', `/v1/payments/search?external_reference=none`)).body;
    expect(search.results).toEqual([]);
    expect(p).toMatchObject({ status: 'authorized', captured: false });
    expect(await call('GET', `/v1/payments/${p.id}`, undefined, { authorization: 'Bearer TEST-unknown' })).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
  });

  it.each([
    ['a write without X-Idempotency-Key', async () => call('POST', '/v1/card_tokens', {}, { 'x-idempotency-key': '' })],
    ['a payment without a payer e-mail', async () => call('POST', '/v1/payments', { transaction_amount: 10, token: 'x', installments: 1, payment_method_id: 'visa' })],
    ['a capture beyond the authorization', async () => call('PUT', `/v1/payments/${(await authorized(50)).id}`, { capture: true, transaction_amount: 50.01 })],
    ['a refund of an authorization (nothing captured)', async () => call('POST', `/v1/payments/${(await authorized(50)).id}/refunds`, { amount: 10 })],
    [
      'a refund beyond what is left',
      async () => {
        const p = await authorized(50);
        await call('PUT', `/v1/payments/${p.id}`, { capture: true, transaction_amount: 30 });
        expect((await call('POST', `/v1/payments/${p.id}/refunds`, { amount: 20 })).status).toBe(201);
        return call('POST', `/v1/payments/${p.id}/refunds`, { amount: 10.01 });
      },
    ],
    [
      'a cancellation of a captured payment',
      async () => {
        const p = await authorized(50);
        await call('PUT', `/v1/payments/${p.id}`, { capture: true });
        return call('PUT', `/v1/payments/${p.id}`, { status: 'cancelled' });
      },
    ],
  ])('refuses %s with 400 and Mercado Pago error body', async (_what, run) => {
    const answer = await run();
    expect(answer).toMatchObject({ status: 400, body: { error: 'bad_request', status: 400 } });
  });

  it('a refund answers a RefundResponse', async () => {
    const p = await authorized(20);
    await call('PUT', `/v1/payments/${p.id}`, { capture: true });
    const refund = (await call<RefundResponse>('POST', `/v1/payments/${p.id}/refunds`, { amount: 5 })).body;
    expect(refund).toMatchObject({ payment_id: p.id, amount: 5, status: 'approved' });
  });
});

describe('the adapter against the double, zero-decimal currency (CLP)', () => {
  const adapter = mercadoPagoConnector.create({
    config: {} as Config,
    log: createLogger('silent', new Writable({ write: (_c, _e, cb) => cb() })),
    baseUrl: undefined,
  });
  const card: ProviderCard = { number: '4507990000000002', holderName: null, expirationMonth: 12, expirationYear: 31, securityCode: '123', brand: 'VISA' };

  it('a CLP purchase and refund: whole pesos out, whole pesos back', async () => {
    const chilean = double.account({ currency: 'CLP' });
    const here = mercadoPagoConnector.create({ config: {} as Config, log: createLogger('silent', new Writable({ write: (_c, _e, cb) => cb() })), baseUrl: double.url });
    const connection: ConnectionContext = { connectionId: randomUUID(), credentials: { ...chilean }, timeoutMs: 2_000 };
    const paid = await here.purchase({ card, amount: '15000', currency: 'CLP', reference: randomUUID(), description: 'CLP', connection });
    expect(paid.outcome).toBe('SUCCEEDED');
    expect(double.payment(paid.providerTransactionId)).toMatchObject({ currency_id: 'CLP', transaction_amount: 15000 });
    const refunded = await here.refund({ providerTransactionId: paid.providerTransactionId, amount: '5000', currency: 'CLP', reference: randomUUID(), connection });
    expect(refunded.outcome).toBe('SUCCEEDED');
    const signed = double.signedNotification('payment', paid.providerTransactionId);
    const parsed = await here.parseConnectionNotification(signed.body, signed.headers, connection);
    // The card payment, still approved after a partial refund (its attempt's outcome), then the refund.
    expect(parsed).toMatchObject({ events: [{ kind: 'ATTEMPT_SETTLED', outcome: 'SUCCEEDED' }, { kind: 'FOLLOW_UP_SETTLED', amount: '5000', outcome: 'CONFIRMED' }] });
  });

  it('no connection: NOT_SENT, nothing reaches Mercado Pago (there is no default account)', async () => {
    await expect(adapter.purchase({ card, amount: '1.00', currency: 'BRL', reference: randomUUID(), description: 'x' })).rejects.toMatchObject({ kind: 'NOT_SENT' });
  });
});
