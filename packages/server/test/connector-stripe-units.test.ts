/**
 * The STRIPE connector without a payorch server: its code table against the failover table and the docs,
 * the double's objects against Stripe's own fixtures, webhook verification and translation (table-driven),
 * provider-side idempotency, follow-ups and lookup at the double, dispute evidence reaching the double,
 * and the double's own strictness. The end-to-end behaviour through the API is connector-stripe.test.ts.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { failoverDecision } from '../src/orchestration/failover.js';
import type { ConnectorEvent } from '../src/providers/connector.js';
import { CONNECTORS } from '../src/providers/connectors.js';
import { NotificationSignatureError, ProviderUnavailableError, type AsyncCharge, type AsyncPayer, type Charge, type ConnectionContext } from '../src/providers/provider.js';
import { RESPONSE_CODES } from '../src/providers/provider-values.js';
import { StripeAdapter } from '../src/providers/stripe/adapter.js';
import { STRIPE_API_VERSION } from '../src/providers/stripe/client.js';
import { STRIPE_CODES, UNKNOWN_DECLINE } from '../src/providers/stripe/codes.js';
import { stripeConnector } from '../src/providers/stripe/index.js';
import { boletoBarcode, fromMinor, toMinor } from '../src/providers/stripe/transformers.js';
import { startStripeDouble, type AsyncSettlement, type StripeDouble } from './doubles/stripe/server.js';

const signedBody = (signed: { body: string; headers: Record<string, string> }) => [signed.body, signed.headers] as const;

const FIXTURES = new URL('../../../../shared/provider-openapi/stripe/fixtures3.json', import.meta.url);
const DOC = new URL('../../../docs/providers/stripe.md', import.meta.url);

/** A connection to the double: secrets made per run (`sk_test_…`, `whsec_…`), a short timeout. */
function connection(timeoutMs = 2_000): ConnectionContext {
  return {
    connectionId: randomUUID(),
    credentials: { secret_key: `sk_test_${randomBytes(12).toString('hex')}`, webhook_secret: `whsec_${randomBytes(16).toString('hex')}` },
    timeoutMs,
  };
}

function charge(c: ConnectionContext, overrides: Partial<Charge> = {}): Charge {
  return {
    card: { number: '4242424242424242', holderName: 'JOHN DOE', expirationMonth: 12, expirationYear: 30, securityCode: '123', brand: 'VISA' },
    amount: '150.50',
    currency: 'BRL',
    reference: randomUUID(),
    paymentId: randomUUID(),
    description: 'Order 1001',
    softDescriptor: 'ACME STORE',
    connection: c,
    ...overrides,
  };
}

describe('the STRIPE code table', () => {
  it('is registered: CONNECTORS holds the STRIPE connector with its credentials and table', () => {
    expect(CONNECTORS.map((c) => c.id)).toContain('STRIPE');
    expect(stripeConnector.credentialFields).toEqual(['secret_key', 'webhook_secret']);
    expect(stripeConnector.codes).toBe(STRIPE_CODES);
  });

  it.each(STRIPE_CODES.map((row) => [row.providerCode, row] as const))('%s: its decision is what failoverDecision makes of it, with a known response code', (_code, row) => {
    expect(failoverDecision({ answered: true, result: { outcome: row.outcome, iso8583ResponseCode: row.iso8583ResponseCode, merchantAdviceCode: row.merchantAdviceCode } })).toBe(row.decision);
    expect(RESPONSE_CODES).toContain(row.responseCode);
  });

  it('has one row per code and a default row for unknown codes', () => {
    const codes = STRIPE_CODES.map((r) => r.providerCode);
    expect(new Set(codes).size).toBe(codes.length);
    expect(codes).toContain(UNKNOWN_DECLINE);
    expect(STRIPE_CODES.find((r) => r.providerCode === UNKNOWN_DECLINE)).toMatchObject({ outcome: 'DECLINED', decision: 'HARD_DECLINE' });
  });

  it("docs/providers/stripe.md names the API version of the installed stripe package (webhook endpoints must use it)", () => {
    expect(STRIPE_API_VERSION).toMatch(/^\d{4}-\d{2}-\d{2}\./);
    expect(readFileSync(DOC, 'utf8')).toContain(`API version \`${STRIPE_API_VERSION}\``);
  });

  it('docs/providers/stripe.md renders the table row by row', () => {
    const text = readFileSync(DOC, 'utf8');
    const start = text.indexOf('<!-- codes:start -->');
    const end = text.indexOf('<!-- codes:end -->');
    expect(start).toBeGreaterThan(0);
    expect(end).toBeGreaterThan(start);
    const rows = text
      .slice(start, end)
      .split('\n')
      .filter((l) => l.startsWith('| `'))
      .map((l) => l.split('|').slice(1, -1).map((cell) => cell.trim().replace(/^`|`$/g, '')));
    expect(rows).toEqual(STRIPE_CODES.map((r) => [r.providerCode, r.outcome, r.responseCode, r.iso8583ResponseCode, r.merchantAdviceCode ?? '—', r.decision, r.message]));
  });
});

describe('amounts in Stripe minor units', () => {
  it.each([
    ['150.5', 'BRL', 15050, '150.5'],
    ['10', 'USD', 1000, '10'],
    ['1500', 'CLP', 1500, '1500'],
    ['1500', 'JPY', 1500, '1500'],
    ['1.234', 'KWD', 1234, '1.234'],
    ['100', 'ISK', 10000, '100'],
    ['2500', 'COP', 250000, '2500'],
  ])('%s %s ↔ %i', (decimal, currency, minor, back) => {
    expect(toMinor(decimal, currency)).toBe(minor);
    expect(fromMinor(minor, currency)).toBe(back);
  });
  it('refuses what Stripe cannot express', () => {
    expect(toMinor('10.5', 'JPY')).toBeUndefined();
    expect(toMinor('1.2345', 'KWD')).toBeUndefined();
  });
});

describe('the STRIPE adapter at the double', () => {
  let double: StripeDouble;
  let adapter: StripeAdapter;
  beforeAll(async () => {
    double = await startStripeDouble();
    adapter = new StripeAdapter({ baseUrl: double.url });
  });
  afterEach(() => double.fault(null));
  afterAll(() => double?.close());

  it('the double answers in the shapes of Stripe fixtures3.json (payment_intent, charge, refund, dispute, file, event)', { skip: !existsSync(FIXTURES) && !process.env.CI }, async () => {
    const fixtures = (JSON.parse(readFileSync(FIXTURES, 'utf8')) as { resources: Record<string, Record<string, unknown>> }).resources;
    const c = connection();
    const approved = await adapter.purchase(charge(c));
    const pi = double.ledger.intents.get(approved.providerTransactionId)!;
    const refund = await adapter.refund({ providerTransactionId: pi.id, amount: '10', currency: 'BRL', reference: randomUUID(), connection: c });
    const disputeId = double.openDispute(pi.id);
    const forwarded = await adapter.forwardDisputeEvidence({
      reference: randomUUID(),
      disputeId: randomUUID(),
      paymentId: randomUUID(),
      chargebackId: disputeId,
      evidence: [pdf('RECEIPT')],
      connection: c,
    });
    expect(forwarded.providerDisputeId).toBe(disputeId);
    const search = await fetch(`${double.url}/v1/payment_intents/search?query=${encodeURIComponent(`metadata['payorch_reference']:'${pi.metadata.payorch_reference}'`)}&expand[0]=data.latest_charge`, {
      headers: { authorization: `Bearer ${c.credentials.secret_key}` },
    });
    const intent = ((await search.json()) as { data: Record<string, unknown>[] }).data[0]!;
    const chargeObject = intent.latest_charge as Record<string, unknown>;
    const event = JSON.parse(double.signedNotification('refund.updated', { refundId: refund.providerTransactionId }, c.credentials.webhook_secret!).body) as Record<string, unknown>;
    const refundObject = (event.data as { object: Record<string, unknown> }).object;
    const disputeEvent = JSON.parse(double.signedNotification('charge.dispute.created', { disputeId }, c.credentials.webhook_secret!).body) as { data: { object: Record<string, unknown> } };
    const upload = double.requests.find((r) => r.path === '/v1/files')!;
    expect(upload).toBeDefined();
    const fileId = [...double.ledger.files.values()].at(-1)!.id;
    const { fileObject } = await import('./doubles/stripe/objects.js');
    const ours: Record<string, Record<string, unknown>> = {
      payment_intent: intent,
      charge: chargeObject,
      refund: refundObject,
      dispute: disputeEvent.data.object,
      file: fileObject(double.ledger.files.get(fileId)!),
      event,
    };
    for (const [name, object] of Object.entries(ours)) {
      const fixture = fixtures[name]!;
      expect(object.object, name).toBe(fixture.object);
      const missing = Object.keys(fixture).filter((k) => !(k in object));
      expect(missing, `${name} lacks Stripe's fields`).toEqual([]);
    }
  });

  it("a retried charge with the same reference is Stripe's first answer: one PaymentIntent, never a second charge", async () => {
    const c = connection();
    const input = charge(c);
    const first = await adapter.purchase(input);
    const again = await adapter.purchase(input);
    expect(first).toMatchObject({ outcome: 'SUCCEEDED', responseCode: 'SUCCEEDED' });
    // The raw answer kept has no intent client_secret (a browser could confirm the intent with it).
    expect(JSON.stringify(first.rawResponse)).not.toContain('client_secret');
    expect(again.providerTransactionId).toBe(first.providerTransactionId);
    expect([...double.ledger.intents.values()].filter((pi) => pi.metadata.payorch_reference === input.reference)).toHaveLength(1);
    const sent = double.requests.filter((r) => r.idempotencyKey === input.reference);
    expect(sent.map((r) => r.replayed)).toEqual([false, true]);
    // What the double logged holds no card number nor security code.
    expect(JSON.stringify(sent)).not.toContain('4242424242424242');
    expect(JSON.stringify(sent)).not.toContain('"cvc"');
    // The same reference with other parameters is refused, never charged.
    const other = await adapter.purchase({ ...input, amount: '99' });
    expect(other).toMatchObject({ outcome: 'ERROR', responseCode: 'PROVIDER_REFERENCE_CLOSED' });
  });

  it('authorize, partial capture, refunds up to the captured amount; amounts enforced by the double', async () => {
    const c = connection();
    const auth = await adapter.authorize(charge(c, { amount: '100' }));
    expect(auth.outcome).toBe('SUCCEEDED');
    expect(auth.authorizationCode).toMatch(/^\d{6}$/);
    const pi = double.ledger.intents.get(auth.providerTransactionId)!;
    expect(pi).toMatchObject({ status: 'requires_capture', amountCapturable: 10000 });
    const follow = (amount: string) => ({ providerTransactionId: pi.id, amount, currency: 'BRL', reference: randomUUID(), connection: c });
    expect((await adapter.capture(follow('60'))).outcome).toBe('SUCCEEDED');
    expect(pi).toMatchObject({ status: 'succeeded', amountReceived: 6000 });
    expect((await adapter.refund(follow('20'))).outcome).toBe('SUCCEEDED');
    expect((await adapter.refund(follow('40'))).outcome).toBe('SUCCEEDED');
    expect(await adapter.refund(follow('1'))).toMatchObject({ outcome: 'DECLINED', responseCode: 'REFUND_DECLINED' });
    expect(await adapter.void(follow('60'))).toMatchObject({ outcome: 'DECLINED', responseCode: 'VOID_DECLINED' });
    expect(await adapter.capture({ ...follow('1'), providerTransactionId: 'pi_unknown' })).toMatchObject({ outcome: 'DECLINED', responseCode: 'TRANSACTION_NOT_FOUND' });
  });

  it('lookup finds each operation by our reference alone: the charge, its capture, its refund, its void; an unknown reference is not found', async () => {
    const c = connection();
    const auth = charge(c);
    const authorized = await adapter.authorize(auth);
    const follow = () => ({ providerTransactionId: authorized.providerTransactionId, amount: '150.5', currency: 'BRL', reference: randomUUID(), connection: c });
    const captureRef = follow();
    await adapter.capture(captureRef);
    const refundRef = follow();
    const refunded = await adapter.refund({ ...refundRef, amount: '50' });
    const secondRef = follow(); // a second refund of the same intent: each keeps its own mark
    const secondRefund = await adapter.refund({ ...secondRef, amount: '10' });
    expect(await adapter.lookup({ reference: secondRef.reference, connection: c })).toMatchObject({ found: true, result: { providerTransactionId: secondRefund.providerTransactionId } });
    expect(await adapter.lookup({ reference: auth.reference, connection: c })).toMatchObject({ found: true, voided: false, result: { outcome: 'SUCCEEDED', providerTransactionId: authorized.providerTransactionId } });
    expect(await adapter.lookup({ reference: captureRef.reference, connection: c })).toMatchObject({ found: true, result: { outcome: 'SUCCEEDED' } });
    expect(await adapter.lookup({ reference: refundRef.reference, connection: c })).toMatchObject({ found: true, result: { outcome: 'SUCCEEDED', providerTransactionId: refunded.providerTransactionId } });
    expect(await adapter.lookup({ reference: randomUUID(), connection: c })).toEqual({ found: false });

    const voidable = charge(c);
    const second = await adapter.authorize(voidable);
    const voidRef = { providerTransactionId: second.providerTransactionId, amount: '150.5', currency: 'BRL', reference: randomUUID(), connection: c };
    expect((await adapter.void(voidRef)).outcome).toBe('SUCCEEDED');
    expect(await adapter.lookup({ reference: voidRef.reference, connection: c })).toMatchObject({ found: true, result: { outcome: 'SUCCEEDED' } });
    expect(await adapter.lookup({ reference: voidable.reference, connection: c })).toMatchObject({ found: true, voided: true, result: { outcome: 'SUCCEEDED' } });

    const declined = charge(c);
    double.fault({ decline: 'insufficient_funds' });
    await adapter.purchase(declined);
    double.fault(null);
    expect(await adapter.lookup({ reference: declined.reference, connection: c })).toMatchObject({ found: true, result: { outcome: 'DECLINED', responseCode: 'INSUFFICIENT_FUNDS' } });
    const declinedAgain = await adapter.purchase(declined); // Stripe replays the stored decline
    expect(declinedAgain).toMatchObject({ outcome: 'DECLINED', responseCode: 'INSUFFICIENT_FUNDS' });
    expect(JSON.stringify(declinedAgain.rawResponse)).not.toContain('client_secret');
  });

  it('a reference lookup did not find is closed: the call arriving late is refused, never charged; asked again, still not found', async () => {
    const c = connection();
    const late = charge(c);
    expect(await adapter.lookup({ reference: late.reference, connection: c })).toEqual({ found: false });
    expect(await adapter.lookup({ reference: late.reference, connection: c })).toEqual({ found: false });
    const arriving = await adapter.purchase(late);
    expect(arriving).toMatchObject({ outcome: 'ERROR', responseCode: 'PROVIDER_REFERENCE_CLOSED' });
    expect([...double.ledger.intents.values()].filter((pi) => pi.metadata.payorch_reference === late.reference)).toEqual([]);
    const placeholders = [...double.ledger.intents.values()].filter((pi) => pi.metadata.payorch_closed_reference === late.reference);
    expect(placeholders.map((pi) => pi.status)).toEqual(['canceled']); // one, never confirmed, cancelled
  });

  it("an operation Stripe's search does not show yet is asked again later, never answered not found", async () => {
    const c = connection();
    const input = charge(c);
    await adapter.purchase(input);
    double.searchLag(60_000);
    try {
      await expect(adapter.lookup({ reference: input.reference, connection: c })).rejects.toMatchObject({ kind: 'BAD_RESPONSE' });
    } finally {
      double.searchLag(0);
    }
    expect(await adapter.lookup({ reference: input.reference, connection: c })).toMatchObject({ found: true, result: { outcome: 'SUCCEEDED' } });
  });

  it.each([
    ['timeout', { mode: 'timeout' } as const, 'TIMEOUT'],
    ['late past the timeout', { mode: 'late', ms: 1_500 } as const, 'TIMEOUT'],
    ['HTTP 500', { mode: 'error' } as const, 'BAD_RESPONSE'],
    ['an answer over 64 KiB', { mode: 'oversized' } as const, 'BAD_RESPONSE'],
  ])('%s → ProviderUnavailableError %s, never a result', async (_name, fault, kind) => {
    double.fault(fault);
    const failure = await adapter.purchase(charge(connection(400))).then(
      () => null,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(ProviderUnavailableError);
    expect((failure as ProviderUnavailableError).kind).toBe(kind);
  });

  it('a connection refused before anything is sent is NOT_SENT; wrong credentials are an ERROR result', async () => {
    const closed = new StripeAdapter({ baseUrl: await closedPortUrl() });
    await expect(closed.purchase(charge(connection()))).rejects.toMatchObject({ kind: 'NOT_SENT' });
    const c = connection();
    double.acceptOnlyKey('sk_test_only_this_key_is_valid');
    try {
      expect(await adapter.purchase(charge(c))).toMatchObject({ outcome: 'ERROR', responseCode: 'PROVIDER_AUTHENTICATION_FAILED' });
    } finally {
      double.acceptOnlyKey(null);
    }
  });

  it('verify: a SetupIntent confirmed with the card; a decline goes through the code table', async () => {
    const c = connection();
    const card = charge(c).card;
    const verified = await adapter.verify({ card, currency: 'BRL', reference: randomUUID(), connection: c });
    expect(verified).toMatchObject({ outcome: 'SUCCEEDED', responseCode: 'SUCCEEDED' });
    expect(double.ledger.setups.get(verified.providerTransactionId)).toMatchObject({ status: 'succeeded', card: { last4: '4242' } });
    double.fault({ decline: 'stolen_card' });
    const refused = await adapter.verify({ card, currency: 'BRL', reference: randomUUID(), connection: c });
    expect(refused).toMatchObject({ outcome: 'DECLINED', responseCode: 'REPORTED_STOLEN', providerTransactionId: expect.stringMatching(/^seti_/) });
  });

  it('Stripe test cards decline as Stripe documents them', async () => {
    const c = connection();
    const answer = async (number: string) => adapter.purchase(charge(c, { card: { ...charge(c).card, number } }));
    expect(await answer('4000000000009995')).toMatchObject({ outcome: 'DECLINED', responseCode: 'INSUFFICIENT_FUNDS', iso8583ResponseCode: '51' });
    expect(await answer('4000000000000127')).toMatchObject({ outcome: 'DECLINED', responseCode: 'INVALID_SECURITY_CODE' });
    expect(await answer('4000000000000119')).toMatchObject({ outcome: 'ERROR', responseCode: 'PROVIDER_ERROR' });
  });

  it('dispute evidence: each document uploaded (multipart, purpose dispute_evidence), the dispute updated and submitted; the same reference again is a duplicate', async () => {
    const c = connection();
    const purchase = await adapter.purchase(charge(c));
    const disputeId = double.openDispute(purchase.providerTransactionId);
    const input = { reference: randomUUID(), disputeId: randomUUID(), paymentId: randomUUID(), chargebackId: disputeId, evidence: [pdf('RECEIPT'), pdf('CUSTOMER_INTERACTION'), pdf('RECEIPT')], connection: c };
    const ack = await adapter.forwardDisputeEvidence(input);
    expect(ack).toEqual({ providerDisputeId: disputeId, duplicate: false });
    const dispute = double.ledger.disputes.get(disputeId)!;
    expect(dispute).toMatchObject({ status: 'under_review', submissionCount: 1 });
    const files = [dispute.evidence.receipt, dispute.evidence.customer_communication, dispute.evidence.uncategorized_file].map((id) => double.ledger.files.get(id!)!);
    expect(files.map((f) => f.sha256)).toEqual(input.evidence.map((d) => d.sha256));
    expect(dispute.evidence.uncategorized_text).toContain(files[0]!.id);
    const uploads = double.requests.filter((r) => r.path === '/v1/files' && r.idempotencyKey?.startsWith(input.reference));
    expect(uploads).toHaveLength(3);
    expect(uploads[0]!.parts!.find((p) => p.name === 'file')).toMatchObject({ filename: input.evidence[0]!.fileName, sha256: input.evidence[0]!.sha256 });

    expect(await adapter.forwardDisputeEvidence(input)).toEqual({ providerDisputeId: disputeId, duplicate: true });
    expect(double.ledger.disputes.get(disputeId)!.submissionCount).toBe(1);
  });

  describe('notifications: verified with the connection webhook_secret first, then translated', () => {
    let c: ConnectionContext;
    let ids: { intentId: string; paymentId: string; reference: string; refundId: string; refundRef: string; disputeId: string };
    beforeAll(async () => {
      c = connection();
      const input = charge(c, { amount: '100' });
      const purchase = await adapter.purchase(input);
      const refundRef = randomUUID();
      const refund = await adapter.refund({ providerTransactionId: purchase.providerTransactionId, amount: '30', currency: 'BRL', reference: refundRef, connection: c });
      ids = { intentId: purchase.providerTransactionId, paymentId: input.paymentId!, reference: input.reference, refundId: refund.providerTransactionId, refundRef, disputeId: double.openDispute(purchase.providerTransactionId, { reason: 'fraudulent' }) };
    });
    const parse = (signed: { body: string; headers: Record<string, string> }, conn = c) => adapter.parseConnectionNotification(signed.body, signed.headers, conn);

    it.each<[string, () => { body: string; headers: Record<string, string> }, (ids: Record<string, string>) => Partial<ConnectorEvent>[]]>([
      ['refund.updated succeeded → FOLLOW_UP_SETTLED CONFIRMED', () => double.signedNotification('refund.updated', { refundId: ids.refundId }, c.credentials.webhook_secret!), (i) => [{ kind: 'FOLLOW_UP_SETTLED', operation: 'REFUND', outcome: 'CONFIRMED', reference: i.refundRef!, providerOperationId: i.refundId!, providerTransactionId: i.intentId!, amount: '30' }]],
      ['refund.created succeeded → FOLLOW_UP_SETTLED CONFIRMED', () => double.signedNotification('refund.created', { refundId: ids.refundId }, c.credentials.webhook_secret!), (i) => [{ kind: 'FOLLOW_UP_SETTLED', outcome: 'CONFIRMED', reference: i.refundRef! }]],
      ['charge.refunded → one FOLLOW_UP_SETTLED per refund', () => double.signedNotification('charge.refunded', { intentId: ids.intentId }, c.credentials.webhook_secret!), (i) => [{ kind: 'FOLLOW_UP_SETTLED', outcome: 'CONFIRMED', reference: i.refundRef! }]],
      ['charge.dispute.created → CHARGEBACK with our payment id', () => double.signedNotification('charge.dispute.created', { disputeId: ids.disputeId }, c.credentials.webhook_secret!), (i) => [{ kind: 'CHARGEBACK', paymentId: i.paymentId!, providerTransactionId: i.intentId!, chargebackId: i.disputeId!, amount: '100', reason: 'FRAUDULENT', reasonCode: '10.4' }]],
      ['an unknown type → no events', () => double.signedNotification('customer.created', {}, c.credentials.webhook_secret!), () => []],
    ])('%s', async (_name, make, expected) => {
      const parsed = await parse(make());
      expect(parsed.events).toHaveLength(expected(ids).length);
      expected(ids).forEach((e, n) => expect(parsed.events[n]).toMatchObject(e));
    });

    it('a refund that fails later → FOLLOW_UP_SETTLED FAILED (refund.failed); a dispute won or lost → DISPUTE_CLOSED', async () => {
      double.settleRefund(ids.refundId, 'failed');
      const failed = await parse(double.signedNotification('refund.failed', { refundId: ids.refundId }, c.credentials.webhook_secret!));
      expect(failed.events).toEqual([expect.objectContaining({ kind: 'FOLLOW_UP_SETTLED', outcome: 'FAILED', reference: ids.refundRef, reason: 'expired_or_canceled_card' })]);
      double.closeDispute(ids.disputeId, 'won');
      const won = await parse(double.signedNotification('charge.dispute.closed', { disputeId: ids.disputeId }, c.credentials.webhook_secret!));
      expect(won.events).toEqual([{ kind: 'DISPUTE_CLOSED', notificationId: expect.any(String), providerTransactionId: ids.intentId, chargebackId: ids.disputeId, outcome: 'WON', reason: 'fraudulent' }]);
      double.closeDispute(ids.disputeId, 'lost');
      expect((await parse(double.signedNotification('charge.dispute.closed', { disputeId: ids.disputeId }, c.credentials.webhook_secret!))).events[0]).toMatchObject({ outcome: 'LOST' });
    });

    it('a re-delivery (same event id) translates to the same events, the same deduplication keys', async () => {
      const eventId = `evt_${randomBytes(8).toString('hex')}`;
      const once = await parse(double.signedNotification('charge.dispute.created', { disputeId: ids.disputeId }, c.credentials.webhook_secret!, { eventId }));
      const twice = await parse(double.signedNotification('charge.dispute.created', { disputeId: ids.disputeId }, c.credentials.webhook_secret!, { eventId }));
      expect(twice.events.map((e) => e.notificationId)).toEqual(once.events.map((e) => e.notificationId));
      expect(once.events[0]!.notificationId).toBe(eventId);
    });

    it.each<[string, () => { body: string; headers: Record<string, string> }]>([
      ['no signature', () => ({ ...double.signedNotification('refund.updated', { refundId: ids.refundId }, c.credentials.webhook_secret!), headers: { 'content-type': 'application/json' } })],
      ['another secret', () => double.signedNotification('refund.updated', { refundId: ids.refundId }, `whsec_${randomBytes(16).toString('hex')}`)],
      ['a stale timestamp (10 minutes old)', () => double.signedNotification('refund.updated', { refundId: ids.refundId }, c.credentials.webhook_secret!, { timestamp: Math.floor(Date.now() / 1000) - 600 })],
      ['a body changed after signing', () => {
        const signed = double.signedNotification('refund.updated', { refundId: ids.refundId }, c.credentials.webhook_secret!);
        return { ...signed, body: signed.body.replace('"amount": 3000', '"amount": 1') };
      }],
    ])('%s → NotificationSignatureError, nothing read', async (_name, make) => {
      const before = double.requests.length;
      await expect(parse(make())).rejects.toBeInstanceOf(NotificationSignatureError);
      expect(double.requests.length).toBe(before);
    });

    it('the sandbox-era single endpoint refuses: Stripe notifications arrive per connection', async () => {
      await expect(adapter.parseNotification()).rejects.toBeInstanceOf(NotificationSignatureError);
    });
  });

  describe('asynchronous methods: PIX, boleto, OXXO', () => {
    let c: ConnectionContext;
    beforeAll(() => {
      c = connection();
    });
    const payer: AsyncPayer = {
      firstName: 'Ana',
      lastName: 'Lima',
      email: 'ana@example.com',
      document: { type: 'CPF', number: '529.982.247-25' },
      address: { line1: 'Rua das Flores, 123', line2: null, neighborhood: 'Bela Vista', city: 'São Paulo', state: 'SP', zipCode: '01310-100', country: 'BR' },
    };
    const asyncCharge = (method: AsyncCharge['method'], overrides: Partial<AsyncCharge> = {}): AsyncCharge => ({
      method,
      amount: '120.50',
      currency: method === 'OXXO' ? 'MXN' : 'BRL',
      country: method === 'OXXO' ? 'MX' : 'BR',
      reference: randomUUID(),
      paymentId: randomUUID(),
      description: 'Order 1001',
      baseUrl: 'http://127.0.0.1:1',
      payer,
      connection: c,
      ...overrides,
    });

    it.each([
      ['PIX', 'QR_CODE'],
      ['BOLETO', 'VOUCHER'],
      ['OXXO', 'VOUCHER'],
    ] as const)('%s: issued (SUCCEEDED) with a %s action from next_action; the same reference again is the same PaymentIntent', async (method, kind) => {
      const input = asyncCharge(method);
      const started = await adapter.startAsyncPayment(input);
      expect(started.result).toMatchObject({ outcome: 'SUCCEEDED', responseCode: 'SUCCEEDED', providerTransactionId: expect.stringMatching(/^pi_/) });
      expect(started.action).toMatchObject({ kind, expiresAt: expect.any(String) });
      expect(Date.parse(started.action!.expiresAt)).toBeGreaterThan(Date.now());
      expect(started.result.rawResponse).not.toHaveProperty('client_secret');
      const again = await adapter.startAsyncPayment(input);
      expect(again.result.providerTransactionId).toBe(started.result.providerTransactionId);
      expect([...double.ledger.intents.values()].filter((pi) => pi.metadata.payorch_reference === input.reference)).toHaveLength(1);
    });

    it.each<[string, Partial<AsyncCharge>, RegExp]>([
      ['a method Stripe does not issue here (BANK_TRANSFER)', { method: 'BANK_TRANSFER' }, /does not issue BANK_TRANSFER/],
      ['PIX in USD', { currency: 'USD' }, /PIX payments in BRL only/],
      ['a boleto without the CPF', { method: 'BOLETO', payer: { ...payer, document: null } }, /customer_payer\.document/],
      ['an OXXO voucher without an e-mail', { method: 'OXXO', currency: 'MXN', payer: { ...payer, email: null } }, /customer_payer\.email/],
    ])('%s: refused before any call (ERROR PROVIDER_REQUEST_REJECTED, no action)', async (_name, overrides, message) => {
      const before = double.requests.length;
      const started = await adapter.startAsyncPayment(asyncCharge(overrides.method ?? 'PIX', overrides));
      expect(started.action).toBeNull();
      expect(started.result).toMatchObject({ outcome: 'ERROR', responseCode: 'PROVIDER_REQUEST_REJECTED', responseMessage: expect.stringMatching(message) });
      expect(double.requests.length).toBe(before);
    });

    it("lookup of an issued PIX by our reference (its answer lost): waiting is no approval (ERROR); paid is the shopper's payment (SUCCEEDED)", async () => {
      const input = asyncCharge('PIX');
      const started = await adapter.startAsyncPayment(input);
      const waiting = await adapter.lookup({ reference: input.reference, connection: c });
      expect(waiting).toMatchObject({ found: true, voided: false, result: { outcome: 'ERROR', responseCode: 'PROVIDER_ERROR', providerTransactionId: started.result.providerTransactionId } });
      double.settleAsync(started.result.providerTransactionId, 'paid');
      expect(await adapter.lookup({ reference: input.reference, connection: c })).toMatchObject({ found: true, voided: false, result: { outcome: 'SUCCEEDED' } });
    });

    it('a boleto: the 44-digit barcode is read from the typed line (and back: the typed line of a barcode gives it again)', () => {
      const barcode = '23791123400000120501234512345678901234567890';
      const typed = `${barcode.slice(0, 4)}${barcode.slice(19, 24)}7${barcode.slice(24, 34)}3${barcode.slice(34, 44)}5${barcode[4]}${barcode.slice(5, 19)}`;
      expect(typed).toHaveLength(47);
      expect(boletoBarcode(typed)).toBe(barcode);
      expect(boletoBarcode('2379.1234')).toBeNull();
    });

    it.each<[string, AsyncSettlement | 'expired-cancel' | 'card', 'payment_intent.succeeded' | 'payment_intent.payment_failed' | 'payment_intent.canceled', Partial<ConnectorEvent> | null]>([
      ['paid → SUCCEEDED', 'paid', 'payment_intent.succeeded', { kind: 'ASYNC_PAYMENT_SETTLED', outcome: 'SUCCEEDED', reason: null }],
      ['an attempt that expired → EXPIRED', 'expired', 'payment_intent.payment_failed', { kind: 'ASYNC_PAYMENT_SETTLED', outcome: 'EXPIRED' }],
      ['an attempt that failed → DECLINED', 'failed', 'payment_intent.payment_failed', { kind: 'ASYNC_PAYMENT_SETTLED', outcome: 'DECLINED' }],
      ['cancelled → CANCELED', 'canceled', 'payment_intent.canceled', { kind: 'ASYNC_PAYMENT_SETTLED', outcome: 'CANCELED', reason: 'requested_by_customer' }],
      ['cancelled by Stripe for its deadline → EXPIRED', 'expired-cancel', 'payment_intent.canceled', { kind: 'ASYNC_PAYMENT_SETTLED', outcome: 'EXPIRED', reason: 'expired' }],
      ["the same event about a card's intent → no event", 'card', 'payment_intent.succeeded', null],
    ])('%s', async (_name, how, type, expected) => {
      const started = await adapter.startAsyncPayment(asyncCharge('OXXO'));
      const pi = double.ledger.intents.get(started.result.providerTransactionId)!;
      if (how === 'expired-cancel') {
        double.settleAsync(pi.id, 'canceled');
        pi.cancellationReason = 'expired';
      } else if (how === 'card') {
        pi.method = 'card';
      } else {
        double.settleAsync(pi.id, how);
      }
      const eventId = `evt_${randomBytes(8).toString('hex')}`;
      const parsed = await adapter.parseConnectionNotification(...signedBody(double.signedNotification(type, { intentId: pi.id }, c.credentials.webhook_secret!, { eventId })), c);
      expect(parsed.events).toHaveLength(expected ? 1 : 0);
      if (expected) expect(parsed.events[0]).toMatchObject({ notificationId: eventId, providerTransactionId: pi.id, ...expected });
    });
  });

  describe("the double's strictness", () => {
    const call = (c: ConnectionContext, path: string, body: string, headers: Record<string, string> = {}) =>
      fetch(`${double.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${c.credentials.secret_key}`, 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });
    it.each([
      ['a missing card', '/v1/payment_intents', 'amount=100&currency=usd&confirm=true', 400, 'parameter_missing'],
      ['a zero amount', '/v1/payment_intents', 'amount=0&currency=usd&confirm=true', 400, 'parameter_invalid_integer'],
      ['an unknown intent', '/v1/payment_intents/pi_nope/capture', '', 404, 'resource_missing'],
      ['an unknown evidence field', '/v1/disputes/dp_nope', 'evidence[nope]=1', 404, 'resource_missing'],
    ])('%s → HTTP %i', async (_name, path, body, status, code) => {
      const res = await call(connection(), path, body);
      expect(res.status).toBe(status);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code);
    });
    it("another account's objects do not exist for a key", async () => {
      const a = connection();
      const approved = await adapter.authorize(charge(a));
      const res = await call(connection(), `/v1/payment_intents/${approved.providerTransactionId}/capture`, '');
      expect(res.status).toBe(404);
    });
    it('a bad API key is 401', async () => {
      const res = await fetch(`${double.url}/v1/payment_intents`, { method: 'POST', headers: { authorization: 'Bearer nope' }, body: '' });
      expect(res.status).toBe(401);
    });
  });
});

/** An address where nothing listens (a port just released). */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

function pdf(category: string) {
  const content = Buffer.from(`%PDF-1.4\n% ${category} ${randomUUID()}\n%%EOF\n`);
  return { id: randomUUID(), fileName: `${category.toLowerCase()}.pdf`, contentType: 'application/pdf', category, sha256: createHash('sha256').update(content).digest('hex'), content };
}
