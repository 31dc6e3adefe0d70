/**
 * createPayment and getPayment contract tests against a real server and database: every documented
 * status, the sandbox acquirer's test cards, money rules, the retrieval shape, raw_response,
 * transactions_history, ETag / If-None-Match, and tenancy (another organization's payment is a 404).
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { describe, expect, it } from 'vitest';
import { expectProblem, expectSchema } from './support/assertions.js';
import { backends, useServer } from './support/harness.js';
import { CARDS, createCustomer, createPayment, enrollCard, getPayment, injectChargeback, paymentBody, postLifecycle, postPayment, rawCard } from './support/payments.js';

const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

const PAYMENT_FIELDS = [
  'id', 'account_id', 'description', 'country', 'status', 'sub_status', 'merchant_order_id', 'created_at', 'updated_at', 'amount',
  'checkout', 'payment_method', 'customer_payer', 'additional_data', 'taxes', 'transactions', 'transactions_history', 'split',
  'callback_url', 'workflow', 'metadata', 'routing_rules',
].sort();

/** Yuno's create shape: no taxes or split; the create-only members instead. */
const CREATED_FIELDS = [
  'id', 'account_id', 'description', 'country', 'status', 'sub_status', 'merchant_order_id', 'created_at', 'updated_at', 'amount',
  'checkout', 'payment_method', 'customer_payer', 'additional_data', 'transactions', 'transactions_history', 'split_marketplace',
  'callback_url', 'workflow', 'metadata', 'fraud_screening', 'payment_link_id', 'subscription_code', 'routing_rules', 'simplified_mode',
].sort();

const additionalData = {
  airline: {
    pnr: 'ABC123',
    type: null,
    legs: [
      {
        order: 1,
        departure_airport: 'GRU',
        arrival_airport: 'JFK',
        departure_datetime: '2026-12-01T22:00:00.000000Z',
        carrier_code: 'LA',
        flight_number: '8180',
        base_fare: 1200.5,
        base_fare_currency: 'BRL',
      },
    ],
    passengers: [{ id: 'P1', first_name: 'John', last_name: 'Doe', type: 'A' }],
  },
  order: {
    shipping_amount: 0,
    fee_amount: 1.5,
    items: [{ id: 'SKU-1001', name: 'Blue T-shirt', quantity: 2, unit_amount: 75.25, category: 'Apparel', brand: 'Acme', sku_code: 'TS-BLU-M' }],
    sales_channel: 'WEB',
  },
  seller_details: { name: 'Acme Store', website: 'https://acme.example.com', country: 'BR', merchant_category_code: '5651' },
} as unknown as Schemas['AdditionalData'];

/** Test cards of docs/design.md §5 and what each must produce. */
const cardOutcomes = [
  { card: CARDS.approved, status: 'SUCCEEDED', sub: 'APPROVED', tx: 'SUCCEEDED', code: 'SUCCEEDED', iso: '00', captured: 150.5 },
  { card: CARDS.approvedMastercard, status: 'SUCCEEDED', sub: 'APPROVED', tx: 'SUCCEEDED', code: 'SUCCEEDED', iso: '00', captured: 150.5 },
  { card: CARDS.insufficientFunds, status: 'DECLINED', sub: 'DECLINED', tx: 'DECLINED', code: 'INSUFFICIENT_FUNDS', iso: '51', captured: 0 },
  { card: CARDS.declinedByBank, status: 'DECLINED', sub: 'DECLINED', tx: 'DECLINED', code: 'DECLINED_BY_BANK', iso: '05', captured: 0 },
  // Do not honor with merchant advice 02 ("try again later") is a soft decline: SANDBOX_B approves it (failover).
  { card: CARDS.doNotHonor, status: 'SUCCEEDED', sub: 'APPROVED', tx: 'SUCCEEDED', code: 'SUCCEEDED', iso: '00', captured: 150.5 },
  { card: CARDS.invalidSecurityCode, status: 'DECLINED', sub: 'DECLINED', tx: 'DECLINED', code: 'INVALID_SECURITY_CODE', iso: 'N7', captured: 0 },
  { card: CARDS.invalidCardData, status: 'DECLINED', sub: 'DECLINED', tx: 'DECLINED', code: 'INVALID_CARD_DATA', iso: '14', captured: 0 },
  { card: CARDS.stolen, status: 'DECLINED', sub: 'DECLINED', tx: 'DECLINED', code: 'REPORTED_STOLEN', iso: '43', captured: 0 },
  // A provider error at SANDBOX_A moves on to SANDBOX_B, which approves (test/orchestration.test.ts).
  { card: CARDS.providerError, status: 'SUCCEEDED', sub: 'APPROVED', tx: 'SUCCEEDED', code: 'SUCCEEDED', iso: '00', captured: 150.5 },
  { card: CARDS.declined, status: 'DECLINED', sub: 'DECLINED', tx: 'DECLINED', code: 'DECLINED', iso: '05', captured: 0 },
  { card: '4111111111111111', status: 'SUCCEEDED', sub: 'APPROVED', tx: 'SUCCEEDED', code: 'SUCCEEDED', iso: '00', captured: 150.5 },
];

for (const backend of backends()) {
  describe(`createPayment on ${backend}`, () => {
    const t = useServer(backend);

    it('201: a raw-card payment succeeds with every field of Yuno’s create shape', async () => {
      const customerId = await createCustomer(t);
      const body = paymentBody(t, customerId, {
        callback_url: 'https://shop.example.com/return',
        metadata: [{ key: 'channel', value: 'web' }],
        additional_data: additionalData,
        workflow: 'DIRECT',
      });
      const res = await postPayment(t, body);
      expect(res.status).toBe(201);
      const p = (await res.json()) as Schemas['CreatedPayment'];
      expectSchema('CreatedPayment', p);
      expect(Object.keys(p).sort()).toEqual(CREATED_FIELDS);
      expect(p).toMatchObject({
        account_id: t.sandbox.account_id,
        description: body.description,
        country: 'BR',
        status: 'SUCCEEDED',
        sub_status: 'APPROVED',
        merchant_order_id: body.merchant_order_id,
        amount: { value: 150.5, currency: 'BRL', captured: 150.5, refunded: 0, currency_conversion: null },
        checkout: null,
        callback_url: 'https://shop.example.com/return',
        workflow: 'DIRECT',
        metadata: [{ key: 'channel', value: 'web' }],
        additional_data: additionalData,
        split_marketplace: [],
        fraud_screening: null,
        payment_link_id: '',
        subscription_code: null,
        // The sandbox organization's CARD routing, default route (SANDBOX_A then SANDBOX_B); circuit breakers apply.
        routing_rules: { smart_routing: false, monitors: true, condition: { id: 0, name: 'Default route' } },
        simplified_mode: false,
      });
      expect(p.created_at).toMatch(ISO_MICROS);
      expect(p.updated_at).toMatch(ISO_MICROS);
      expect(p.customer_payer).toMatchObject({ id: customerId, first_name: 'John', last_name: 'Doe', email: 'john.doe@example.com', device_fingerprints: [] });
      const card = p.payment_method.payment_method_detail.card!;
      expect(p.payment_method).toMatchObject({ type: 'CARD', vaulted_token: null, vault_on_success: false });
      expect(p.payment_method.payment_method_detail.bank_transfer).toBeNull();
      expect(card).toMatchObject({ verify: false, capture: true, installments: 1 });
      expect(card.authorization_code).toMatch(/^\d{6}$/);
      expect(card.retrieval_reference_number).toMatch(/^\d{12}$/);
      expect(card.card_data).toMatchObject({
        holder_name: 'JOHN DOE', iin: '45079900', lfd: '0002', number_length: 16, security_code_length: 3, brand: 'VISA',
        issuer_name: 'Sandbox Bank', expiration_month: 12,
      });
      expect(card.card_data.fingerprint).toMatch(/^[A-Za-z0-9_-]{16,128}$/);
      // `transactions` is the transaction just made; `transactions_history` every transaction so far.
      const tx = p.transactions;
      expect(p.transactions_history).toEqual([tx]);
      expect(tx).toMatchObject({
        type: 'PURCHASE', status: 'SUCCEEDED', category: 'CARD', amount: 150.5, provider_id: 'SANDBOX_A', response_code: 'SUCCEEDED',
        reason: null, merchant_reference: body.merchant_order_id, three_d_secure_action_required: null,
        connection_data: { id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'SANDBOX_A sandbox' },
      });
      expect(tx.payment_method.detail).toEqual(p.payment_method.payment_method_detail);
      expect(tx.provider_data).toMatchObject({ id: 'SANDBOX_A', status: 'APPROVED', iso8583_response_code: '00', raw_response: null });
      expect(tx.provider_data.transaction_id).toMatch(/^sbx_txn_/);
      // Neither the PAN nor the security code anywhere: response, logs, stored rows.
      const stored = await t.db.query('SELECT p.*, t.* FROM payments p JOIN payment_transactions t ON t.payment_id = p.id WHERE p.id = $1', [p.id]);
      for (const text of [JSON.stringify(p), t.logs.join('\n'), JSON.stringify(stored)]) {
        expect(text).not.toContain(CARDS.approved);
        expect(text).not.toMatch(/security_code"\s*:\s*"123"/);
      }
    });

    it.each(cardOutcomes)('201: test card $card → $status / $sub ($code)', async ({ card, status, sub, tx, code, iso, captured }) => {
      const p = await createPayment(t, { card });
      expect(p).toMatchObject({ status, sub_status: sub, amount: { captured, refunded: 0, value: 150.5 } });
      expect(p.transactions).toMatchObject({ status: tx, response_code: code, provider_data: { iso8583_response_code: iso } });
      if (status !== 'SUCCEEDED') {
        expect(p.payment_method.payment_method_detail.card!.authorization_code).toBeNull();
        expect(p.transactions.provider_data.merchant_advice_code === null || /^\d\d$/.test(p.transactions.provider_data.merchant_advice_code!)).toBe(true);
      }
    });

    it('201: a decline keeps the merchant advice code of the acquirer', async () => {
      const p = await createPayment(t, { card: CARDS.insufficientFunds });
      expect(p.transactions).toMatchObject({ merchant_advice_code: '01', merchant_advice_code_message: 'New account information available' });
    });

    it('201: amounts are exact: 0.1 + 0.2 style values and zero-decimal currencies', async () => {
      const a = await createPayment(t, { amount: { currency: 'BRL', value: 0.3 } });
      expect(a.amount).toMatchObject({ value: 0.3, captured: 0.3 });
      const b = await createPayment(t, { amount: { currency: 'CLP', value: 15000 } });
      expect(b.amount).toMatchObject({ value: 15000, currency: 'CLP' });
      const c = await createPayment(t, { amount: { currency: 'KWD', value: 12.345 } });
      expect(c.amount.value).toBe(12.345);
      const rows = await t.db.query<{ amount_value: string }>('SELECT amount_value::text AS amount_value FROM payments WHERE id = $1', [c.id]);
      expect(rows[0]!.amount_value).toBe('12.345');
    });

    it('201 replayed: the same key and body answer the stored payment; another body is 422 IDEMPOTENCY_KEY_REUSED', async () => {
      const body = paymentBody(t, await createCustomer(t));
      const key = randomUUID();
      const first = await postPayment(t, body, { key });
      expect(first.status).toBe(201);
      const again = await postPayment(t, body, { key });
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await again.json()).toEqual(await first.json());
      const count = await t.db.query('SELECT 1 FROM payments WHERE merchant_order_id = $1', [body.merchant_order_id]);
      expect(count).toHaveLength(1);
      await expectProblem(await postPayment(t, { ...body, description: 'changed' }, { key }), 422, 'IDEMPOTENCY_KEY_REUSED');
    });

    const badInputs: { name: string; mutate: (b: Record<string, unknown>) => unknown; field: string }[] = [
      { name: 'missing account_id', mutate: ({ account_id: _a, ...b }) => b, field: '/body/account_id' },
      { name: 'missing amount', mutate: ({ amount: _a, ...b }) => b, field: '/body/amount' },
      { name: 'amount.value zero', mutate: (b) => ({ ...b, amount: { currency: 'BRL', value: 0 } }), field: '/body/amount/value' },
      { name: 'amount.value negative', mutate: (b) => ({ ...b, amount: { currency: 'BRL', value: -5 } }), field: '/body/amount/value' },
      { name: 'amount.value a string', mutate: (b) => ({ ...b, amount: { currency: 'BRL', value: '150.5' } }), field: '/body/amount/value' },
      { name: 'amount.value too large', mutate: (b) => ({ ...b, amount: { currency: 'BRL', value: 1e15 } }), field: '/body/amount/value' },
      { name: 'three decimals in BRL', mutate: (b) => ({ ...b, amount: { currency: 'BRL', value: 10.005 } }), field: '/body/amount/value' },
      { name: 'decimals in CLP', mutate: (b) => ({ ...b, amount: { currency: 'CLP', value: 100.5 } }), field: '/body/amount/value' },
      { name: 'decimals in COP', mutate: (b) => ({ ...b, amount: { currency: 'COP', value: 1000.1 } }), field: '/body/amount/value' },
      { name: 'decimals in JPY', mutate: (b) => ({ ...b, amount: { currency: 'JPY', value: 1.5 } }), field: '/body/amount/value' },
      { name: 'four decimals in KWD', mutate: (b) => ({ ...b, amount: { currency: 'KWD', value: 1.2345 } }), field: '/body/amount/value' },
      { name: 'currency not ISO 4217', mutate: (b) => ({ ...b, amount: { currency: 'XYZ', value: 10 } }), field: '/body/amount/currency' },
      { name: 'currency lowercase', mutate: (b) => ({ ...b, amount: { currency: 'brl', value: 10 } }), field: '/body/amount/currency' },
      { name: 'country not ISO 3166', mutate: (b) => ({ ...b, country: 'XX' }), field: '/body/country' },
      { name: 'customer_payer.id not a uuid', mutate: (b) => ({ ...b, customer_payer: { id: 'abc' } }), field: '/body/customer_payer/id' },
      { name: 'payment_method.type SPEI (not a type payorch takes)', mutate: (b) => ({ ...b, payment_method: { type: 'SPEI', vaulted_token: randomUUID() } }), field: '/body/payment_method/type' },
      // Without vaulted_token the card must be in detail.card.card_data; with it, card_data is refused.
      { name: 'neither vaulted_token nor detail', mutate: (b) => ({ ...b, payment_method: { type: 'CARD' } }), field: '/body/payment_method/detail/card/card_data' },
      { name: 'detail.card options without card_data or vaulted_token', mutate: (b) => ({ ...b, payment_method: { type: 'CARD', detail: { card: { capture: false } } } }), field: '/body/payment_method/detail/card/card_data' },
      {
        name: 'vaulted_token with detail.card.card_data',
        mutate: (b) => ({ ...b, payment_method: { type: 'CARD', vaulted_token: randomUUID(), detail: { card: { capture: false, card_data: rawCard(CARDS.approved) } } } }),
        field: '/body/payment_method/detail/card/card_data',
      },
      { name: 'card number with spaces', mutate: (b) => ({ ...b, payment_method: { type: 'CARD', detail: { card: { card_data: rawCard('4507 9900 0000 0002') } } } }), field: '/body/payment_method/detail/card/card_data/number' },
      { name: 'expiration_month 13', mutate: (b) => ({ ...b, payment_method: { type: 'CARD', detail: { card: { card_data: rawCard(CARDS.approved, { expiration_month: 13 }) } } } }), field: '/body/payment_method/detail/card/card_data/expiration_month' },
      // Two or four digits (issue 24: Yuno's enrollment writes YYYY); a year outside 2000–2099 in four digits is refused.
      { name: 'expiration_year 1999', mutate: (b) => ({ ...b, payment_method: { type: 'CARD', detail: { card: { card_data: rawCard(CARDS.approved, { expiration_year: 1999 }) } } } }), field: '/body/payment_method/detail/card/card_data/expiration_year' },
      { name: 'unknown field', mutate: (b) => ({ ...b, amout: 1 }), field: '/body/amout' },
      { name: 'unknown field in additional_data', mutate: (b) => ({ ...b, additional_data: { hotel: {} } }), field: '/body/additional_data/hotel' },
      { name: 'transportations not null', mutate: (b) => ({ ...b, additional_data: { transportations: [] } }), field: '/body/additional_data/transportations' },
      { name: 'metadata over 50 entries', mutate: (b) => ({ ...b, metadata: Array.from({ length: 51 }, (_, i) => ({ key: `k${i}`, value: 'v' })) }), field: '/body/metadata' },
      { name: 'callback_url not a URL', mutate: (b) => ({ ...b, callback_url: 'not a url' }), field: '/body/callback_url' },
      // A marketplace share's amount is checked as the payment's, and is in the payment's currency.
      { name: 'split amount with three decimals in BRL', mutate: (b) => ({ ...b, split_marketplace: [{ type: 'PURCHASE', amount: { currency: 'BRL', value: 10.005 } }] }), field: '/body/split_marketplace/0/amount/value' },
      {
        name: 'split amount in a code that is no currency',
        mutate: (b) => ({ ...b, split_marketplace: [{ type: 'PURCHASE', amount: { currency: 'BRL', value: 10 } }, { type: 'COMMISSION', amount: { currency: 'XYZ', value: 1 } }] }),
        field: '/body/split_marketplace/1/amount/currency',
      },
      { name: 'split amount in another currency than the payment', mutate: (b) => ({ ...b, split_marketplace: [{ type: 'PURCHASE', amount: { currency: 'USD', value: 10 } }] }), field: '/body/split_marketplace/0/amount/currency' },
    ];

    it.each(badInputs)('400 names the field: $name', async ({ mutate, field }) => {
      const body = mutate(paymentBody(t, randomUUID()) as unknown as Record<string, unknown>);
      const problem = await expectProblem(await postPayment(t, body), 400, 'INVALID_REQUEST');
      expect((problem.errors as { path: string }[]).map((e) => e.path)).toContain(field);
    });

    it('400: missing X-Idempotency-Key; malformed JSON', async () => {
      const body = JSON.stringify(paymentBody(t, await createCustomer(t)));
      const res = await t.fetch('/payments', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const problem = await expectProblem(res, 400, 'INVALID_REQUEST');
      expect(JSON.stringify(problem.errors)).toMatch(/x-idempotency-key/i);
      const bad = await t.fetch('/payments', { method: 'POST', headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() }, body: '{"amount":' });
      await expectProblem(bad, 400, 'INVALID_REQUEST');
    });

    it('a refused request writes nothing (no payment, no history)', async () => {
      const before = await t.db.query<{ n: number }>('SELECT count(*)::int8 AS n FROM payments');
      await expectProblem(await postPayment(t, paymentBody(t, await createCustomer(t), { amount: { currency: 'CLP', value: 1.5 } })), 400, 'INVALID_REQUEST');
      await expectProblem(await postPayment(t, paymentBody(t, randomUUID())), 404, 'CUSTOMER_NOT_FOUND');
      const after = await t.db.query<{ n: number }>('SELECT count(*)::int8 AS n FROM payments');
      expect(after[0]!.n).toBe(before[0]!.n);
    });

    it('401: no credentials or a wrong secret', async () => {
      const body = JSON.stringify(paymentBody(t, randomUUID()));
      const headers = { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() };
      await expectProblem(await t.fetch('/payments', { method: 'POST', headers, body, credentials_: false }), 401, 'INVALID_CREDENTIALS');
      await expectProblem(await t.fetch('/payments', { method: 'POST', headers: { ...headers, 'private-secret-key': 'sk_wrong' }, body }), 401, 'INVALID_CREDENTIALS');
    });

    it('403 INVALID_ACCOUNT_ID: an account of another organization', async () => {
      const other = await t.createOrganization();
      const res = await postPayment(t, paymentBody(t, await createCustomer(t), { account_id: other.account_id }));
      await expectProblem(res, 403, 'INVALID_ACCOUNT_ID');
    });

    it('403 PCI_CERTIFICATION_REQUIRED: raw card data from a non-PCI organization', async () => {
      const other = await t.createOrganization({ pciCertified: false });
      const client = t.clientFor(other);
      const customerId = await createCustomer(t, client);
      const res = await t.fetch('/payments', {
        method: 'POST',
        headers: {
          'content-type': 'application/json', 'x-idempotency-key': randomUUID(),
          'public-api-key': other.public_api_key, 'private-secret-key': other.private_secret_key,
        },
        body: JSON.stringify({ ...paymentBody(t, customerId), account_id: other.account_id }),
      });
      await expectProblem(res, 403, 'PCI_CERTIFICATION_REQUIRED');
    });

    it('404 CUSTOMER_NOT_FOUND: unknown customer, or one of another organization', async () => {
      await expectProblem(await postPayment(t, paymentBody(t, randomUUID())), 404, 'CUSTOMER_NOT_FOUND');
      const other = await t.createOrganization();
      const theirs = await createCustomer(t, t.clientFor(other));
      await expectProblem(await postPayment(t, paymentBody(t, theirs)), 404, 'CUSTOMER_NOT_FOUND');
    });

    it('201: a vaulted card of the customer; credential-on-file FIRST then USED; the vault records the use', async () => {
      const customerId = await createCustomer(t);
      const token = await enrollCard(t, customerId, CARDS.approvedMastercard);
      const first = await createPayment(t, { payment_method: { type: 'CARD', vaulted_token: token } }, customerId);
      expectSchema('CreatedPayment', first);
      expect(first).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED', payment_method: { vaulted_token: token, type: 'CARD' } });
      const card = first.payment_method.payment_method_detail.card!;
      expect(card.card_data).toMatchObject({ holder_name: 'JOAO SILVA', iin: '52524400', lfd: '0002', brand: 'MASTERCARD', number_length: 16 });
      expect(card.stored_credentials).toMatchObject({ reason: 'CARD_ON_FILE', usage: 'FIRST' });
      expect(first.transactions.payment_method).toMatchObject({ vaulted_token: token });
      const second = await createPayment(t, { payment_method: { type: 'CARD', vaulted_token: token } }, customerId);
      expect(second.payment_method.payment_method_detail.card!.stored_credentials.usage).toBe('USED');
      const list = await t.fetch(`/customers/${customerId}/payment-methods`);
      const methods = ((await list.json()) as { payment_methods: { vaulted_token: string; last_successfully_used: boolean | null }[] }).payment_methods;
      expect(methods.find((m) => m.vaulted_token === token)?.last_successfully_used).toBe(true);
      expect(JSON.stringify([first, second])).not.toContain(CARDS.approvedMastercard);
    });

    it('201: a vaulted card with detail.card options (Yuno\'s {vaulted_token, detail: {card: {capture: false}}}): authorized, then captured', async () => {
      const customerId = await createCustomer(t);
      const token = await enrollCard(t, customerId, CARDS.approvedMastercard);
      const options = { capture: false, installments: 3, soft_descriptor: 'PAYORCH SHOP', stored_credentials: { reason: 'SUBSCRIPTION', usage: 'USED' } } as const;
      const authorized = await createPayment(t, { payment_method: { type: 'CARD', vaulted_token: token, detail: { card: options } } }, customerId);
      expectSchema('CreatedPayment', authorized);
      expect(authorized).toMatchObject({ status: 'PENDING', sub_status: 'AUTHORIZED', amount: { captured: 0 }, payment_method: { vaulted_token: token } });
      expect(authorized.transactions).toMatchObject({ type: 'AUTHORIZE', status: 'SUCCEEDED' });
      const card = authorized.payment_method.payment_method_detail.card!;
      expect(card).toMatchObject({ capture: false, installments: 3, soft_descriptor: 'PAYORCH SHOP', stored_credentials: { reason: 'SUBSCRIPTION', usage: 'USED' } });
      // The card is the vaulted one.
      expect(card.card_data).toMatchObject({ iin: '52524400', lfd: '0002', brand: 'MASTERCARD' });
      const res = await postLifecycle(t, authorized.id, 'capture', {}, { transactionId: authorized.transactions.id });
      const text = await res.text();
      expect(res.status, text).toBe(200);
      const captured = JSON.parse(text) as Schemas['Payment'];
      expect(captured).toMatchObject({ status: 'SUCCEEDED', sub_status: 'CAPTURED', amount: { captured: captured.amount.value } });
      expect(captured.transactions.map((x) => [x.type, x.status])).toEqual([['AUTHORIZE', 'SUCCEEDED'], ['CAPTURE', 'SUCCEEDED']]);
    });

    it('vault_on_success: the card vaulted from a payment shows the issuer data the payment\'s provider reported', async () => {
      const customerId = await createCustomer(t);
      const p = await createPayment(t, { payment_method: { type: 'CARD', vault_on_success: true, detail: { card: { card_data: rawCard(CARDS.approved) } } } }, customerId);
      const token = p.payment_method.vaulted_token!;
      expect(token).toMatch(/^[0-9a-f-]{36}$/);
      const res = await t.fetch(`/customers/${customerId}/payment-methods/${token}`);
      expect(res.status).toBe(200);
      const m = (await res.json()) as Schemas['EnrolledPaymentMethod'];
      const paid = p.payment_method.payment_method_detail.card!.card_data;
      expect(m.card_data).toMatchObject({
        holder_name: paid.holder_name,
        issuer_name: paid.issuer_name,
        country_code: paid.country_code,
        category: paid.category,
        type: paid.type,
      });
      expect(m.card_data!.country_code).not.toBeNull();
      expect(m.verify).toBeNull();
    });

    it('400 with a vaulted_token and card_data changes nothing: no payment is recorded', async () => {
      const customerId = await createCustomer(t);
      const token = await enrollCard(t, customerId);
      const before = await t.db.query('SELECT id FROM payments');
      const res = await postPayment(t, paymentBody(t, customerId, { payment_method: { type: 'CARD', vaulted_token: token, detail: { card: { card_data: rawCard(CARDS.approved) } } } }));
      const problem = await expectProblem(res, 400, 'INVALID_REQUEST');
      expect(JSON.stringify(problem)).toContain('/body/payment_method/detail/card/card_data');
      expect(await t.db.query('SELECT id FROM payments')).toHaveLength(before.length);
    });

    it('201 DECLINED with a vaulted card that declines', async () => {
      const customerId = await createCustomer(t);
      const token = await enrollCard(t, customerId, CARDS.declinedByBank);
      const p = await createPayment(t, { payment_method: { type: 'CARD', vaulted_token: token } }, customerId);
      expect(p).toMatchObject({ status: 'DECLINED', sub_status: 'DECLINED', amount: { captured: 0 } });
    });

    it('404 PAYMENT_METHOD_NOT_FOUND: a token of another customer, or of another organization', async () => {
      const owner = await createCustomer(t);
      const token = await enrollCard(t, owner);
      const stranger = await createCustomer(t);
      await expectProblem(await postPayment(t, paymentBody(t, stranger, { payment_method: { type: 'CARD', vaulted_token: token } })), 404, 'PAYMENT_METHOD_NOT_FOUND');
      const other = await t.createOrganization({ pciCertified: true });
      const theirCustomer = await createCustomer(t, t.clientFor(other));
      const res = await t.fetch('/payments', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID(), 'public-api-key': other.public_api_key, 'private-secret-key': other.private_secret_key },
        body: JSON.stringify({ ...paymentBody(t, theirCustomer, { payment_method: { type: 'CARD', vaulted_token: token } }), account_id: other.account_id }),
      });
      await expectProblem(res, 404, 'PAYMENT_METHOD_NOT_FOUND');
    });

    it('404 PAYMENT_METHOD_NOT_FOUND: an unknown vaulted_token', async () => {
      const body = paymentBody(t, await createCustomer(t), { payment_method: { type: 'CARD', vaulted_token: randomUUID() } });
      await expectProblem(await postPayment(t, body), 404, 'PAYMENT_METHOD_NOT_FOUND');
    });

    it('409 REQUEST_IN_PROCESS or a replay: 5 simultaneous requests with one key make one payment', async () => {
      const body = paymentBody(t, await createCustomer(t));
      const key = randomUUID();
      const results = await Promise.all(Array.from({ length: 5 }, () => postPayment(t, body, { key })));
      for (const res of results) {
        if (res.status === 409) {
          await expectProblem(res, 409, 'REQUEST_IN_PROCESS');
          expect(res.headers.get('retry-after')).toBe('1');
        } else {
          expect(res.status).toBe(201);
        }
      }
      const rows = await t.db.query('SELECT 1 FROM payments WHERE merchant_order_id = $1', [body.merchant_order_id]);
      expect(rows).toHaveLength(1);
    });

    it('413: body over 100 KB', async () => {
      const body = { ...paymentBody(t, await createCustomer(t)), description: 'x'.repeat(200_000) };
      await expectProblem(await postPayment(t, body), 413, 'PAYLOAD_TOO_LARGE');
    });

    it('415: body not JSON', async () => {
      const res = await t.fetch('/payments', { method: 'POST', headers: { 'content-type': 'text/plain', 'x-idempotency-key': randomUUID() }, body: 'amount=1' });
      await expectProblem(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    const invalidCards: { name: string; card: Schemas['CreatePaymentCardData']; field: string }[] = [
      { name: 'fails Luhn', card: rawCard('4507990000000003'), field: '/body/payment_method/detail/card/card_data/number' },
      { name: 'unknown brand', card: rawCard('9999999999999995'), field: '/body/payment_method/detail/card/card_data/number' },
      { name: 'brand mismatch', card: rawCard(CARDS.approved, { brand: 'MASTERCARD' }), field: '/body/payment_method/detail/card/card_data/brand' },
      { name: 'expired', card: rawCard(CARDS.approved, { expiration_month: 1, expiration_year: 20 }), field: '/body/payment_method/detail/card/card_data/expiration_year' },
      { name: '4-digit CVV on a Visa', card: rawCard(CARDS.approved, { security_code: '1234' }), field: '/body/payment_method/detail/card/card_data/security_code' },
      { name: '3-digit CVV on an Amex', card: rawCard('378282246310005', { security_code: '123' }), field: '/body/payment_method/detail/card/card_data/security_code' },
    ];

    it.each(invalidCards)('422 INVALID_CARD names the field: $name', async ({ card, field }) => {
      const body = paymentBody(t, await createCustomer(t), { payment_method: { type: 'CARD', detail: { card: { card_data: card } } } });
      const res = await postPayment(t, body);
      const text = await res.clone().text();
      const problem = await expectProblem(res, 422, 'INVALID_CARD');
      expect((problem.errors as { path: string }[]).map((e) => e.path)).toContain(field);
      expect(text).not.toContain(card.number);
    });

    it('the card 4000000000000259 succeeds, then receives a chargeback by itself', async () => {
      const p = await createPayment(t, { card: CARDS.chargebackFollows });
      expect(p).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });
      await t.running.deps.services.payments.outbox.runOnce();
      const after = await getPayment(t, p.id, '?transactions_history=true');
      expect(after).toMatchObject({ status: 'IN_DISPUTE', sub_status: 'RECEIVED' });
      expect(after.transactions.map((x) => [x.type, x.status])).toEqual([['PURCHASE', 'SUCCEEDED'], ['CHARGEBACK', 'CREATED']]);
      expect(after.transactions[1]).toMatchObject({ reason: 'REQUESTED_BY_CUSTOMER', amount: 150.5 });
      expect(after.transactions_history!.map((h) => `${h.status}/${h.sub_status}`)).toEqual(['CREATED/CREATED', 'SUCCEEDED/APPROVED', 'IN_DISPUTE/RECEIVED']);
    });
  });

  describe(`getPayment on ${backend}`, () => {
    const t = useServer(backend);

    it('200: the retrieval shape, transactions an array, history null, raw_response null by default', async () => {
      const created = await createPayment(t, { additional_data: additionalData, metadata: [{ key: 'a', value: 'b' }] });
      const res = await t.fetch(`/payments/${created.id}`);
      expect(res.status).toBe(200);
      const p = (await res.json()) as Schemas['Payment'];
      expectSchema('Payment', p);
      expect(Object.keys(p).sort()).toEqual(PAYMENT_FIELDS);
      expect(p.transactions_history).toBeNull();
      expect(p.transactions[0]!.provider_data.raw_response).toBeNull();
      // The same payment as the create response, in the retrieval shape (routing_rules included).
      expect(p.transactions).toEqual([created.transactions]);
      const { transactions: _t, transactions_history: _h, split_marketplace: _s, fraud_screening: _f, payment_link_id: _l, subscription_code: _c, simplified_mode: _m, ...shared } = created;
      expect(shared.routing_rules).toMatchObject({ condition: { id: 0 } });
      expect(p).toMatchObject(shared);
      expect(res.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]+"$/);
    });

    it('raw_response=true fills provider_data.raw_response with what the provider sent (masked card only)', async () => {
      const created = await createPayment(t);
      const p = await getPayment(t, created.id, '?raw_response=true');
      const raw = p.transactions[0]!.provider_data.raw_response!;
      // The provider's reference of a call is the attempt's transaction id (each attempt its own).
      expect(raw).toMatchObject({ id: p.transactions[0]!.provider_data.transaction_id, type: 'PURCHASE', status: 'APPROVED', reference: p.transactions[0]!.id });
      expect(raw.card).toMatchObject({ bin: '450799', last4: '0002' });
      expect(JSON.stringify(raw)).not.toContain(CARDS.approved);
      const off = await getPayment(t, created.id, '?raw_response=false');
      expect(off.transactions[0]!.provider_data.raw_response).toBeNull();
    });

    it('transactions_history=true: every status change, oldest first', async () => {
      const declined = await createPayment(t, { card: CARDS.insufficientFunds });
      const p = await getPayment(t, declined.id, '?transactions_history=true');
      expectSchema('Payment', p);
      expect(p.transactions_history!.map((h) => [h.status, h.sub_status, h.transaction_status, h.reason])).toEqual([
        ['CREATED', 'CREATED', null, null],
        ['DECLINED', 'DECLINED', 'DECLINED', 'INSUFFICIENT_FUNDS'],
      ]);
      expect(p.transactions_history![1]!.transaction_id).toBe(p.transactions[0]!.id);
      for (const h of p.transactions_history!) expect(h.created_at).toMatch(ISO_MICROS);
    });

    it.each(['1', 'yes', 'TRUE', '', 'truee'])('400: raw_response=%s and transactions_history=%s are not booleans', async (value) => {
      const created = await createPayment(t);
      const a = await expectProblem(await t.fetch(`/payments/${created.id}?raw_response=${value}`), 400, 'INVALID_REQUEST');
      expect(JSON.stringify(a.errors)).toContain('raw_response');
      const b = await expectProblem(await t.fetch(`/payments/${created.id}?transactions_history=${value}`), 400, 'INVALID_REQUEST');
      expect(JSON.stringify(b.errors)).toContain('transactions_history');
    });

    it('400: an unknown query parameter; a payment_id shorter than 36 characters', async () => {
      const created = await createPayment(t);
      await expectProblem(await t.fetch(`/payments/${created.id}?expand=all`), 400, 'INVALID_REQUEST');
      await expectProblem(await t.fetch('/payments/short-id'), 400, 'INVALID_REQUEST');
    });

    it('ETag: strong, stable while unchanged, different per variant; If-None-Match → 304', async () => {
      const created = await createPayment(t);
      const a = await t.fetch(`/payments/${created.id}`);
      const etag = a.headers.get('etag')!;
      expect(etag).not.toMatch(/^W\//);
      expect((await t.fetch(`/payments/${created.id}`)).headers.get('etag')).toBe(etag);
      const variant = await t.fetch(`/payments/${created.id}?raw_response=true`);
      expect(variant.headers.get('etag')).not.toBe(etag);

      const notModified = await t.fetch(`/payments/${created.id}`, { headers: { 'if-none-match': etag } });
      expect(notModified.status).toBe(304);
      expect(notModified.headers.get('etag')).toBe(etag);
      expect(await notModified.text()).toBe('');
      expect((await t.fetch(`/payments/${created.id}`, { headers: { 'if-none-match': `"other", ${etag}` } })).status).toBe(304);
      expect((await t.fetch(`/payments/${created.id}`, { headers: { 'if-none-match': '*' } })).status).toBe(304);
      // Another variant's tag does not match this one.
      expect((await t.fetch(`/payments/${created.id}?raw_response=true`, { headers: { 'if-none-match': etag } })).status).toBe(200);

      // A change (chargeback) changes the tag: the old one no longer matches.
      await injectChargeback(t, created.id);
      const changed = await t.fetch(`/payments/${created.id}`, { headers: { 'if-none-match': etag } });
      expect(changed.status).toBe(200);
      expect(changed.headers.get('etag')).not.toBe(etag);
    });

    it('401: no credentials', async () => {
      const created = await createPayment(t);
      await expectProblem(await t.fetch(`/payments/${created.id}`, { credentials_: false }), 401, 'INVALID_CREDENTIALS');
    });

    it('404 PAYMENT_NOT_FOUND: unknown id, or a payment of another organization', async () => {
      await expectProblem(await t.fetch(`/payments/${randomUUID()}`), 404, 'PAYMENT_NOT_FOUND');
      const created = await createPayment(t);
      const other = await t.createOrganization();
      const res = await t.fetch(`/payments/${created.id}`, { headers: { 'public-api-key': other.public_api_key, 'private-secret-key': other.private_secret_key } });
      await expectProblem(res, 404, 'PAYMENT_NOT_FOUND');
    });

    it('405 with Allow on the payment path', async () => {
      const created = await createPayment(t);
      const res = await t.fetch(`/payments/${created.id}`, { method: 'DELETE' });
      await expectProblem(res, 405, 'UNSUPPORTED_METHOD');
      expect(res.headers.get('allow')).toBe('GET');
    });
  });
}
