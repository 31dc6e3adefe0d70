/**
 * The ADYEN connector's parts that need no server: the code table (each row's decision is failover.ts's, and
 * docs/providers/adyen.md renders it row by row), amounts in Adyen's minor units, notifications verified and
 * translated (table-driven, signed by the double as Adyen signs), and the double's own strictness (what it
 * refuses, by Adyen's OpenAPI documents).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failoverDecision } from '../src/orchestration/failover.js';
import { adyenConnector } from '../src/providers/adyen/index.js';
import { ADYEN_CODES, adviceOf, codeRow, UNKNOWN_ERROR, UNKNOWN_REFUSAL } from '../src/providers/adyen/codes.js';
import { adyenDeadline, fromMinorUnits, toMinorUnits } from '../src/providers/adyen/transformers.js';
import type { AsyncCharge } from '../src/providers/provider.js';
import type { ConnectorEvent } from '../src/providers/connector.js';
import { CONNECTORS } from '../src/providers/connectors.js';
import { NotificationSignatureError, type ConnectionContext } from '../src/providers/provider.js';
import { RESPONSE_CODES } from '../src/providers/provider-values.js';
import { loadConfig } from '../src/platform/config.js';
import { createLogger } from '../src/platform/logger.js';
import { adyenFilesPresent, adyenSchemas } from './doubles/adyen/schemas.js';
import { ADYEN_TEST_CREDENTIALS, startAdyenDouble, type AdyenDouble, type NotificationTarget } from './doubles/adyen/server.js';

const DOC = readFileSync(new URL('../../../docs/providers/adyen.md', import.meta.url), 'utf8');

describe('ADYEN code table', () => {
  it('is registered once, with its credential fields', () => {
    expect(CONNECTORS.filter((c) => c.id === 'ADYEN')).toEqual([adyenConnector]);
    expect(adyenConnector.credentialFields).toEqual(['api_key', 'merchant_account', 'hmac_key', 'live_url_prefix']);
  });

  it.each(ADYEN_CODES.map((row) => [row.providerCode, row] as const))('row %s: its decision is failoverDecision of its outcome, ISO code and advice', (_code, row) => {
    expect(failoverDecision({ answered: true, result: row })).toBe(row.decision);
    expect(RESPONSE_CODES).toContain(row.responseCode);
  });

  it('docs/providers/adyen.md renders the table row by row, between its markers', () => {
    const table = /<!-- codes:start -->\n([\s\S]*?)\n<!-- codes:end -->/.exec(DOC)![1]!.split('\n').slice(2);
    const rows = table.map((line) => line.split('|').slice(1, -1).map((cell) => cell.trim()));
    expect(rows).toEqual(
      ADYEN_CODES.map((r) => [r.providerCode, r.outcome, r.responseCode, r.iso8583ResponseCode, r.merchantAdviceCode ?? '—', r.decision, r.message]),
    );
  });

  it('picks the code-and-advice row, else the code row with the advice as sent, else the fallbacks', () => {
    expect(codeRow('27', 'refusal', '02').providerCode).toBe('27 + MAC 02');
    expect(codeRow('12', 'refusal', '03')).toMatchObject({ providerCode: '12', merchantAdviceCode: '03' });
    expect(codeRow('12', 'refusal', null)).toMatchObject({ providerCode: '12', merchantAdviceCode: null });
    expect(codeRow('777', 'refusal', null).providerCode).toBe(UNKNOWN_REFUSAL);
    expect(codeRow(undefined, 'error', null).providerCode).toBe(UNKNOWN_ERROR);
    expect(adviceOf('02: Cannot approve at this time, try again later')).toBe('02');
    expect(adviceOf('garbage')).toBeNull();
  });
});

describe('ADYEN amounts in minor units (Adyen exponents)', () => {
  it.each([
    ['150.5', 'EUR', 15050],
    ['0', 'EUR', 0],
    ['1000', 'JPY', 1000],
    ['12000', 'CLP', 1200000],
    ['10', 'IDR', 10],
    ['1.234', 'KWD', 1234],
    ['5', 'ISK', 500],
  ])('%s %s → %d and back', (amount, currency, minor) => {
    expect(toMinorUnits(amount, currency)).toBe(minor);
    expect(fromMinorUnits(minor, currency)).toBe(amount);
  });

  it.each([
    ['10.5', 'IDR'],
    ['1.001', 'EUR'],
    ['10', 'XXX'],
    ['-1', 'EUR'],
  ])('%s %s cannot be sent', (amount, currency) => {
    expect(toMinorUnits(amount, currency)).toBeNull();
  });
});

describe('ADYEN notifications (parseConnectionNotification)', () => {
  let double: AdyenDouble;
  beforeAll(async () => {
    double = await startAdyenDouble();
  });
  afterAll(() => double.close());

  const config = loadConfig({ SANDBOX: 'true', DATA_DIR: '/tmp', LOG_LEVEL: 'silent' });
  const adapter = adyenConnector.create({ config, log: createLogger('silent'), baseUrl: undefined });
  const connection: ConnectionContext = { connectionId: 'c1', credentials: ADYEN_TEST_CREDENTIALS, timeoutMs: 1000 };
  const payment: NotificationTarget = { pspReference: 'QFQTPCQ8HXSKGK82', merchantReference: 'tx-1', value: 1050, currency: 'EUR' };
  const pix: NotificationTarget = { pspReference: 'PIXQ000000000001', merchantReference: 'tx-9', value: 12050, currency: 'BRL' };
  const modification = (psp: string): NotificationTarget => ({ ...payment, pspReference: psp, originalReference: payment.pspReference, merchantReference: 'tx-2' });
  const parse = (body: string, conn = connection) => adapter.parseConnectionNotification(body, { 'content-type': 'application/json' }, conn);

  type Case = [string, string, NotificationTarget, Parameters<AdyenDouble['signedNotification']>[2], Partial<ConnectorEvent>[]];
  const cases: Case[] = [
    ['capture confirmed', 'CAPTURE', modification('CAPT000000000001'), {}, [{ kind: 'FOLLOW_UP_SETTLED', operation: 'CAPTURE', outcome: 'CONFIRMED', reference: 'tx-2', providerOperationId: 'CAPT000000000001', providerTransactionId: payment.pspReference, amount: '10.5' }]],
    ['capture refused at once', 'CAPTURE', modification('CAPT000000000002'), { success: false, reason: 'Insufficient balance' }, [{ operation: 'CAPTURE', outcome: 'FAILED', reason: 'Insufficient balance' }]],
    ['capture failed later', 'CAPTURE_FAILED', modification('CAPT000000000003'), {}, [{ operation: 'CAPTURE', outcome: 'FAILED' }]],
    ['refund confirmed', 'REFUND', modification('REFD000000000001'), {}, [{ operation: 'REFUND', outcome: 'CONFIRMED' }]],
    ['refund failed', 'REFUND_FAILED', modification('REFD000000000002'), {}, [{ operation: 'REFUND', outcome: 'FAILED' }]],
    ['refund returned by the bank', 'REFUNDED_REVERSED', modification('REFD000000000003'), {}, [{ operation: 'REFUND', outcome: 'FAILED' }]],
    ['cancellation', 'CANCELLATION', modification('CANC000000000001'), {}, [{ operation: 'VOID', outcome: 'CONFIRMED' }]],
    ['reversal (our voids)', 'CANCEL_OR_REFUND', modification('CANC000000000002'), { additionalData: { 'modification.action': 'cancel' } }, [{ operation: 'VOID', outcome: 'CONFIRMED' }]],
    ['notification of chargeback', 'NOTIFICATION_OF_CHARGEBACK', modification('DISP000000000001'), { additionalData: { chargebackReasonCode: '10.4', disputeStatus: 'Undefended' }, reason: 'Other Fraud-Card Absent Environment' }, [{ kind: 'CHARGEBACK', chargebackId: 'DISP000000000001', providerTransactionId: payment.pspReference, amount: '10.5', reason: 'FRAUDULENT', reasonCode: '10.4' }]],
    ['chargeback', 'CHARGEBACK', modification('DISP000000000001'), { additionalData: { chargebackReasonCode: '13.1', disputeStatus: 'Undefended' } }, [{ kind: 'CHARGEBACK', chargebackId: 'DISP000000000001', reason: 'PRODUCT_NOT_RECEIVED' }]],
    ['chargeback already lost', 'CHARGEBACK', modification('DISP000000000002'), { additionalData: { disputeStatus: 'Lost' } }, [{ kind: 'DISPUTE_CLOSED', outcome: 'LOST', chargebackId: 'DISP000000000002' }]],
    ['chargeback reversed (won)', 'CHARGEBACK_REVERSED', modification('DISP000000000001'), { additionalData: { disputeStatus: 'Won' } }, [{ kind: 'DISPUTE_CLOSED', outcome: 'WON', chargebackId: 'DISP000000000001', providerTransactionId: payment.pspReference }]],
    // A card's AUTHORISATION decides its attempt (found by our reference): what decides one Adyen answered Pending.
    ['a card authorised', 'AUTHORISATION', payment, { additionalData: { authCode: '123456' } }, [{ kind: 'ATTEMPT_SETTLED', reference: 'tx-1', providerTransactionId: payment.pspReference, outcome: 'SUCCEEDED', reason: null, authorizationCode: '123456' }]],
    ['a card refused', 'AUTHORISATION', payment, { success: false, reason: 'Refused' }, [{ kind: 'ATTEMPT_SETTLED', reference: 'tx-1', outcome: 'DECLINED', reason: 'Refused', authorizationCode: null }]],
    ['a PIX paid', 'AUTHORISATION', pix, { paymentMethod: 'pix' }, [{ kind: 'ASYNC_PAYMENT_SETTLED', providerTransactionId: pix.pspReference, outcome: 'SUCCEEDED', reason: null }]],
    ['a boleto of a bank variant paid', 'AUTHORISATION', pix, { paymentMethod: 'boletobancario_santander' }, [{ kind: 'ASYNC_PAYMENT_SETTLED', outcome: 'SUCCEEDED' }]],
    ['a PIX refused', 'AUTHORISATION', pix, { paymentMethod: 'pix', success: false, reason: 'Refused' }, [{ kind: 'ASYNC_PAYMENT_SETTLED', outcome: 'DECLINED', reason: 'Refused' }]],
    ['a PIX code expired unpaid', 'AUTHORISATION', pix, { paymentMethod: 'pix', success: false, reason: 'Expired' }, [{ kind: 'ASYNC_PAYMENT_SETTLED', outcome: 'EXPIRED', reason: 'Expired' }]],
    ['an OXXO voucher cancelled', 'AUTHORISATION', pix, { paymentMethod: 'oxxo', success: false, reason: 'Shopper Cancelled' }, [{ kind: 'ASYNC_PAYMENT_SETTLED', outcome: 'CANCELED', reason: 'Shopper Cancelled' }]],
    ['an OXXO voucher not paid in time (offer closed)', 'OFFER_CLOSED', pix, { paymentMethod: 'oxxo' }, [{ kind: 'ASYNC_PAYMENT_SETTLED', outcome: 'EXPIRED', reason: 'Offer closed' }]],
    ["a card's offer closed", 'OFFER_CLOSED', payment, {}, []],
    ['a PIX payment captured (Adyen captures these itself)', 'CAPTURE', { ...modification('CAPT000000000010'), originalReference: pix.pspReference }, { paymentMethod: 'pix' }, [{ kind: 'FOLLOW_UP_SETTLED', operation: 'CAPTURE' }]],
    ['an event this connector does not use', 'EXPIRE', payment, {}, []],
  ];

  it.each(cases)('%s (%s) → its events, acknowledged with [accepted]', async (_name, eventCode, target, options, expected) => {
    const { body } = double.signedNotification(eventCode, target, options);
    const parsed = await parse(body);
    expect(parsed.acknowledgement).toEqual({ contentType: 'text/plain', body: '[accepted]' });
    expect(parsed.events).toHaveLength(expected.length);
    expected.forEach((e, i) => expect(parsed.events[i]).toMatchObject(e));
    // A card's AUTHORISATION has an id of its own (CARD_…): the item's paymentMethod, which the HMAC does not cover, says which it is.
    for (const e of parsed.events) expect(e.notificationId).toBe(`${e.kind === 'ATTEMPT_SETTLED' ? 'CARD_' : ''}${eventCode}:${target.pspReference}:${options?.success === false ? 'false' : 'true'}`);
  });

  it('a delivery sent again gives the same events (the same notification ids): applied once by the endpoint', async () => {
    const { body } = double.signedNotification('REFUND', modification('REFD000000000009'));
    expect((await parse(body)).events).toEqual((await parse(body)).events);
  });

  it('an old eventDate is no reason to refuse: Adyen signs no delivery time (there is no stale signature)', async () => {
    const { body } = double.signedNotification('CAPTURE', modification('CAPT000000000009'), { eventDate: '2020-01-01T00:00:00+00:00' });
    expect((await parse(body)).events).toHaveLength(1);
  });

  const refusals: [string, () => string, ConnectionContext?][] = [
    ['signed with another key', () => double.signedNotification('CAPTURE', modification('CAPT1'), { hmacKey: 'AA'.repeat(32) }).body],
    ['without hmacSignature', () => double.signedNotification('CAPTURE', modification('CAPT2'), { hmacKey: null }).body],
    ['its amount changed after signing', () => double.signedNotification('REFUND', modification('REFD1')).body.replace('"value":1050', '"value":105000')],
    ['its event changed after signing', () => double.signedNotification('REFUND_FAILED', modification('REFD2')).body.replace('REFUND_FAILED', 'REFUND')],
    ['not JSON', () => 'notificationItems='],
    ['no items', () => JSON.stringify({ live: 'false', notificationItems: [] })],
    ['an item without the signed fields', () => JSON.stringify({ live: 'false', notificationItems: [{ NotificationRequestItem: { eventCode: 'CAPTURE', additionalData: { hmacSignature: 'x' } } }] })],
    ['a good item beside a forged one', () => {
      const good = JSON.parse(double.signedNotification('CAPTURE', modification('CAPT3')).body) as { notificationItems: unknown[] };
      const bad = JSON.parse(double.signedNotification('REFUND', modification('REFD3'), { hmacKey: 'BB'.repeat(32) }).body) as { notificationItems: unknown[] };
      return JSON.stringify({ live: 'false', notificationItems: [...good.notificationItems, ...bad.notificationItems] });
    }],
    ['a connection without hmac_key', () => double.signedNotification('CAPTURE', modification('CAPT4')).body, { connectionId: 'c2', credentials: { api_key: 'k', merchant_account: 'm' }, timeoutMs: 1000 }],
  ];
  it.each(refusals)('refused (NotificationSignatureError), nothing read: %s', async (_name, body, conn) => {
    await expect(parse(body(), conn)).rejects.toBeInstanceOf(NotificationSignatureError);
  });

  it('a LIVE connection (live_url_prefix) calls the LIVE paths: /checkout/v72 under the prefix host, here the double', async () => {
    const live = adyenConnector.create({ config, log: createLogger('silent'), baseUrl: double.url });
    const reference = 'live-ref-1';
    const result = await live.purchase({
      card: { number: '4111111111111111', holderName: null, expirationMonth: 3, expirationYear: 30, securityCode: '737', brand: 'VISA' },
      amount: '12.34',
      currency: 'EUR',
      reference,
      description: 'live',
      connection: { connectionId: 'live', credentials: { ...ADYEN_TEST_CREDENTIALS, live_url_prefix: '1797a841fbb37ca7-AdyenDemo' }, timeoutMs: 2000 },
    });
    expect(result).toMatchObject({ outcome: 'SUCCEEDED', responseCode: 'SUCCEEDED', iso8583ResponseCode: '00' });
    expect(double.requests.find((r) => r.idempotencyKey === reference)!.path).toBe('/checkout/v72/payments');
    expect(double.paymentByReference(reference)).toMatchObject({ authorised: 1234, captured: 1234 });
  });

  it('verify: a zero-value authorisation, nothing held', async () => {
    const adapterAtDouble = adyenConnector.create({ config, log: createLogger('silent'), baseUrl: double.url });
    const result = await adapterAtDouble.verify({ card: { number: '4111111111111111', holderName: 'A B', expirationMonth: 3, expirationYear: 30, securityCode: '737', brand: 'VISA' }, currency: 'EUR', reference: 'verify-1', connection });
    expect(result.outcome).toBe('SUCCEEDED');
    expect(double.paymentByReference('verify-1')).toMatchObject({ authorised: 0, captured: 0 });
  });

  it('the sandbox-era single endpoint is not where Adyen notifications arrive', async () => {
    await expect(adapter.parseNotification('{}', {})).rejects.toBeInstanceOf(NotificationSignatureError);
  });

  it.skipIf(!adyenFilesPresent())("every notification the double signed matches Adyen's webhook schemas (Webhooks-v1)", () => {
    expect(double.invalidNotifications).toEqual([]);
  });
});

describe.skipIf(!adyenFilesPresent())("the Adyen double judges requests by Adyen's OpenAPI documents", () => {
  let double: AdyenDouble;
  beforeAll(async () => {
    double = await startAdyenDouble();
  });
  afterAll(() => double.close());
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${double.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': ADYEN_TEST_CREDENTIALS.api_key, ...headers }, body: JSON.stringify(body) });
  const payment = (extra: Record<string, unknown> = {}) => ({
    merchantAccount: ADYEN_TEST_CREDENTIALS.merchant_account,
    reference: 'r1',
    amount: { currency: 'EUR', value: 100 },
    paymentMethod: { type: 'scheme', number: '4111111111111111', expiryMonth: '03', expiryYear: '2030', cvc: '737' },
    returnUrl: 'https://example.com/',
    ...extra,
  });

  it.each([
    ['no merchantAccount', { ...payment(), merchantAccount: undefined }],
    ['an amount in major units (a string)', payment({ amount: { currency: 'EUR', value: '1.00' } })],
    ['a currency of four letters', payment({ amount: { currency: 'EURO', value: 100 } })],
    ['no returnUrl', { ...payment(), returnUrl: undefined }],
    ['an unknown member of the amount', payment({ amount: { currency: 'EUR', value: 100, decimals: 2 } })],
  ])('POST /v72/payments with %s: 422 validation, recorded as invalid, nothing processed', async (_name, body) => {
    const before = double.invalidRequests().length;
    const res = await post('/v72/payments', body, { 'idempotency-key': `k-${before}` });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ status: 422, errorType: 'validation' });
    expect(double.invalidRequests()).toHaveLength(before + 1);
    expect(double.payments.size).toBe(0);
  });

  it('a capture with a negative-less but string amount, and a dispute call without its dispute, are invalid too', async () => {
    const before = double.invalidRequests().length;
    expect((await post('/v72/payments/ABC/captures', { merchantAccount: 'm', amount: { currency: 'EUR', value: 'x' } })).status).toBe(422);
    expect((await post('/ca/services/DisputeService/v30/defendDispute', { merchantAccountCode: 'm' })).status).toBe(422);
    expect(double.invalidRequests()).toHaveLength(before + 2);
  });

  it('a valid request with a wrong API key is 401; the card number never stays in its log', async () => {
    expect((await post('/v72/payments', payment(), { 'x-api-key': 'wrong' })).status).toBe(401);
    const ok = await post('/v72/payments', payment({ reference: 'r2' }), { 'idempotency-key': 'key-r2' });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ resultCode: 'Authorised', merchantReference: 'r2' });
    expect(JSON.stringify(double.requests)).not.toContain('4111111111111111');
    expect(JSON.stringify(double.requests)).not.toContain('737');
  });

  it('an Idempotency-Key already processed is answered with the first answer, on any endpoint', async () => {
    const first = await (await post('/v72/payments', payment({ reference: 'r3', additionalData: { manualCapture: 'true' } }), { 'idempotency-key': 'key-r3' })).json() as { pspReference: string };
    const capture = await post(`/v72/payments/${first.pspReference}/captures`, { merchantAccount: ADYEN_TEST_CREDENTIALS.merchant_account, amount: { currency: 'EUR', value: 40 }, reference: 'c1' }, { 'idempotency-key': 'key-c1' });
    expect(capture.status).toBe(201);
    const captureBody = await capture.json();
    const again = await post('/v72/payments', payment({ reference: 'c1' }), { 'idempotency-key': 'key-c1' });
    expect(again.status).toBe(201);
    expect(await again.json()).toEqual(captureBody);
    expect(double.payments.get(first.pspReference)!.captured).toBe(40);
  });
});

describe('the ADYEN adapter: PIX, boleto and OXXO at the double', () => {
  let double: AdyenDouble;
  beforeAll(async () => {
    double = await startAdyenDouble();
  });
  afterAll(() => double.close());

  const config = loadConfig({ SANDBOX: 'true', DATA_DIR: '/tmp', LOG_LEVEL: 'silent' });
  const adapter = () => adyenConnector.create({ config, log: createLogger('silent'), baseUrl: double.url });
  const connection: ConnectionContext = { connectionId: 'c1', credentials: ADYEN_TEST_CREDENTIALS, timeoutMs: 2000 };
  const CPF = '52998224725';
  const payer: NonNullable<AsyncCharge['payer']> = {
    firstName: 'Ana',
    lastName: 'Lima',
    email: 'ana@example.com',
    document: { type: 'CPF', number: '529.982.247-25' },
    address: { line1: 'Rua das Flores, 123', line2: null, neighborhood: 'Bela Vista', city: 'São Paulo', state: 'SP', zipCode: '01310-100', country: 'BR' },
  };
  let n = 0;
  const charge = (method: AsyncCharge['method'], over: Partial<AsyncCharge> = {}): AsyncCharge => ({
    method,
    amount: '120.5',
    currency: method === 'OXXO' ? 'MXN' : 'BRL',
    country: method === 'OXXO' ? 'MX' : 'BR',
    reference: `async-ref-${++n}-${Date.now()}`,
    paymentId: `pay-${n}`,
    description: 'order',
    baseUrl: 'http://127.0.0.1:1',
    payer,
    connection,
    ...over,
  });
  const sent = (reference: string) => double.requests.find((r) => r.idempotencyKey === reference && r.operation === 'payments')!;

  it("PIX: Pending with the qrCode action → issued (SUCCEEDED) with the BR Code, Adyen's QR page and deadline; no payer data sent", async () => {
    const input = charge('PIX');
    const started = await adapter().startAsyncPayment!(input);
    const atAdyen = double.paymentByReference(input.reference)!;
    expect(started.result).toMatchObject({ outcome: 'SUCCEEDED', responseCode: 'SUCCEEDED', providerTransactionId: atAdyen.pspReference });
    const action = atAdyen.action as { qrCodeData: string; url: string; expiresAt: string };
    expect(started.action).toEqual({ kind: 'QR_CODE', qrCode: action.qrCodeData, pageUrl: action.url, expiresAt: new Date(action.expiresAt).toISOString() });
    expect(action.qrCodeData).toMatch(/^000201.*br\.gov\.bcb\.pix.*5406120\.50.*6304[0-9A-F]{4}$/);
    expect(sent(input.reference).body).toEqual({
      merchantAccount: ADYEN_TEST_CREDENTIALS.merchant_account,
      reference: input.reference,
      amount: { currency: 'BRL', value: 12050 },
      paymentMethod: { type: 'pix' },
      countryCode: 'BR',
      shopperInteraction: 'Ecommerce',
      returnUrl: expect.any(String),
      metadata: { payorch_payment_id: input.paymentId },
    });
    expect(double.invalidRequests()).toEqual([]);
  });

  it("BOLETO: shopperName, socialSecurityNumber, billingAddress, shopperEmail and the due date reach Adyen; PresentToShopper's voucher → the typed line, its barcode, the local due day; the payer is not kept in the raw answer", async () => {
    const input = charge('BOLETO');
    const started = await adapter().startAsyncPayment!(input);
    const atAdyen = double.paymentByReference(input.reference)!;
    expect(sent(input.reference).body).toMatchObject({
      paymentMethod: { type: 'boletobancario' },
      shopperName: { firstName: 'Ana', lastName: 'Lima' },
      shopperEmail: 'ana@example.com',
      socialSecurityNumber: CPF,
      billingAddress: { street: 'Rua das Flores', houseNumberOrName: '123', city: 'São Paulo', postalCode: '01310-100', stateOrProvince: 'SP', country: 'BR' },
      deliveryDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
    const action = atAdyen.action as { reference: string; downloadUrl: string; expiresAt: string };
    expect(action.reference).toMatch(/^\d{5}\.\d{5} \d{5}\.\d{6} \d{5}\.\d{6} \d \d{14}$/);
    const d = action.reference.replace(/\D/g, '');
    const day = action.expiresAt.slice(0, 10);
    expect(started.action).toEqual({
      kind: 'VOUCHER',
      voucherType: 'BOLETO',
      reference: action.reference,
      barcode: `${d.slice(0, 4)}${d[32]}${d.slice(33)}${d.slice(4, 9)}${d.slice(10, 20)}${d.slice(21, 31)}`,
      barcodeFormat: 'ITF',
      dueDate: day,
      instruction: expect.any(String),
      // Payable through its last day in Brasília (UTC-3): until the next local midnight.
      expiresAt: new Date(Date.parse(`${day}T00:00:00-03:00`) + 86_400_000).toISOString(),
      pageUrl: action.downloadUrl,
    });
    expect(JSON.stringify(started.result.rawResponse)).not.toContain('ana@example.com');
    expect(JSON.stringify(started.result.rawResponse)).not.toContain('Ana Lima');
    expect(double.invalidRequests()).toEqual([]);
  });

  it('OXXO: shopperName and shopperEmail (no document, no address) in MXN; the voucher reference and its day', async () => {
    const input = charge('OXXO');
    const started = await adapter().startAsyncPayment!(input);
    const body = sent(input.reference).body as Record<string, unknown>;
    expect(body).toMatchObject({ paymentMethod: { type: 'oxxo' }, amount: { currency: 'MXN', value: 12050 }, countryCode: 'MX', shopperName: { firstName: 'Ana', lastName: 'Lima' }, shopperEmail: 'ana@example.com' });
    expect(body).not.toHaveProperty('socialSecurityNumber');
    expect(body).not.toHaveProperty('billingAddress');
    const action = double.paymentByReference(input.reference)!.action as { reference: string; expiresAt: string };
    expect(started.action).toMatchObject({ kind: 'VOUCHER', voucherType: 'OXXO', reference: action.reference, barcode: '', dueDate: action.expiresAt.slice(0, 10) });
    expect(started.result.rawResponse).toMatchObject({ action: { type: 'voucher', reference: action.reference } });
    for (const kept of ['merchantName', 'shopperName', 'shopperEmail']) expect(started.result.rawResponse.action).not.toHaveProperty(kept);
    expect(double.invalidRequests()).toEqual([]);
  });

  it.skipIf(!adyenFilesPresent())("the double's PIX, boleto and OXXO answers, as sent over HTTP, are Checkout's PaymentResponse", async () => {
    for (const method of ['PIX', 'BOLETO', 'OXXO'] as const) {
      const input = charge(method);
      await adapter().startAsyncPayment!(input);
      // The same request again under its key: the double's stored answer, as its body went out.
      const res = await fetch(`${double.url}/v72/payments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': ADYEN_TEST_CREDENTIALS.api_key, 'idempotency-key': input.reference },
        body: JSON.stringify(sent(input.reference).body),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { resultCode: string; action: { type: string } };
      expect([body.resultCode, body.action.type]).toEqual(method === 'PIX' ? ['Pending', 'qrCode'] : ['PresentToShopper', 'voucher']);
      expect(adyenSchemas()!.paymentResponse(body)).toEqual([]);
    }
  });

  it('a reference sent again is answered with the first answer (Idempotency-Key): one payment at Adyen', async () => {
    const input = charge('PIX');
    const first = await adapter().startAsyncPayment!(input);
    const again = await adapter().startAsyncPayment!(input);
    expect(again).toEqual(first);
    expect(double.processedCount(input.reference)).toBe(1);
  });

  it('refused before any call: a method Adyen does not serve here, another currency, a boleto without CPF or address, an OXXO voucher without e-mail', async () => {
    const before = double.requests.length;
    const refusals = [
      charge('PAYPAL'),
      charge('PIX', { currency: 'USD' }),
      charge('OXXO', { currency: 'BRL' }),
      charge('BOLETO', { payer: { ...payer, document: null } }),
      charge('BOLETO', { payer: { ...payer, address: null } }),
      charge('OXXO', { payer: { ...payer, email: null } }),
    ];
    for (const input of refusals) {
      const started = await adapter().startAsyncPayment!(input);
      expect(started).toMatchObject({ action: null, result: { outcome: 'ERROR', responseCode: 'PROVIDER_REQUEST_REJECTED', providerTransactionId: '' } });
    }
    expect((await adapter().startAsyncPayment!(refusals[3]!)).result.responseMessage).toMatch(/customer_payer\.document/);
    expect((await adapter().startAsyncPayment!(refusals[5]!)).result.responseMessage).toMatch(/customer_payer\.email/);
    expect(double.requests.length).toBe(before);
  });

  it('an answer without the action (Authorised at once, or Pending bare) is no issued payment; a Refused one goes through the code table', async () => {
    double.next({ kind: 'resultCode', resultCode: 'Pending' });
    expect(await adapter().startAsyncPayment!(charge('PIX'))).toMatchObject({ action: null, result: { outcome: 'ERROR', responseCode: 'PROVIDER_ERROR' } });
    double.next({ kind: 'refuse', code: '2' });
    expect(await adapter().startAsyncPayment!(charge('PIX'))).toMatchObject({ action: null, result: { outcome: 'DECLINED', responseCode: 'DECLINED_BY_BANK' } });
  });

  it('lookup of an issued PIX by our reference (its answer lost): the replay gets the stored Pending answer, no approval (ERROR PROVIDER_ERROR)', async () => {
    const input = charge('PIX');
    const started = await adapter().startAsyncPayment!(input);
    const found = await adapter().lookup({ reference: input.reference, connection });
    expect(found).toMatchObject({ found: true, voided: false, result: { outcome: 'ERROR', responseCode: 'PROVIDER_ERROR', providerTransactionId: started.result.providerTransactionId } });
    expect(double.processedCount(input.reference)).toBe(1);
  });

  it.each([
    ['2026-11-29T00:00:00', '-03:00', '2026-11-30T03:00:00.000Z', '2026-11-29'],
    ['2026-11-29T00:00:00', '-06:00', '2026-11-30T06:00:00.000Z', '2026-11-29'],
    ['2026-11-29T18:30:00', '-03:00', '2026-11-29T21:30:00.000Z', '2026-11-29'],
    ['2026-11-29T02:00:00Z', '-03:00', '2026-11-29T02:00:00.000Z', '2026-11-28'],
    ['2026-11-29T12:00:00+01:00', '-03:00', '2026-11-29T11:00:00.000Z', '2026-11-29'],
  ])("Adyen's expiresAt %s on a %s clock → %s, due %s", (given, offset, expiresAt, dueDate) => {
    expect(adyenDeadline(given, offset)).toEqual({ expiresAt, dueDate });
  });

  it('an expiresAt that is not a date is no deadline', () => {
    expect(adyenDeadline('tomorrow', '-03:00')).toBeNull();
    expect(adyenDeadline(undefined, '-03:00')).toBeNull();
  });
});
