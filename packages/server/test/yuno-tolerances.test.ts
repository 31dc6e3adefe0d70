/**
 * Issue 24 §1: the tolerances Yuno's examples need (http/lenient-input.ts, docs/guides/yuno-compatibility.md),
 * and the strictness around them. Each row is one request to a real server; a tolerated value is recorded as
 * its normal form, everything else stays a 400 naming the field, with nothing written.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Schemas } from '@payorch/types';
import { expectProblem } from './support/assertions.js';
import { backends, useServer } from './support/harness.js';
import { CARDS, authorizedPayment, cardTransactionId, createCustomer, paymentBody, postLifecycle, postPayment } from './support/payments.js';

type Json = Record<string, unknown>;
const nextYear = new Date().getUTCFullYear() + 2;

/** A change to a valid payment body, and what the server must answer. */
const PAYMENT_ROWS: { name: string; change: (b: Json) => void; status: 201 | 400; path?: string; then?: (p: Schemas['CreatedPayment']) => void }[] = [
  { name: 'amount as a string of digits', change: (b) => ((b.amount as Json).value = '20000'), status: 201, then: (p) => expect(p.amount.value).toBe(20000) },
  { name: 'amount as a decimal string', change: (b) => ((b.amount as Json).value = '200.50'), status: 400, path: '/body/amount/value' },
  { name: 'amount as a string of zeros', change: (b) => ((b.amount as Json).value = '000'), status: 400, path: '/body/amount/value' },
  { name: 'amount as a string with a sign', change: (b) => ((b.amount as Json).value = '-5'), status: 400, path: '/body/amount/value' },
  { name: 'amount as twelve digits', change: (b) => ((b.amount as Json).value = '100000000000'), status: 400, path: '/body/amount/value' },
  { name: 'amount as a boolean', change: (b) => ((b.amount as Json).value = true), status: 400, path: '/body/amount/value' },
  {
    name: 'payer ip_address null',
    change: (b) => ((b.customer_payer as Json).ip_address = null),
    status: 201,
    then: (p) => expect(p.customer_payer.ip_address).toBeNull(),
  },
  { name: 'payer email null (the customer’s own stays)', change: (b) => ((b.customer_payer as Json).email = null), status: 201, then: (p) => expect(p.customer_payer.email).toBe('john.doe@example.com') },
  { name: 'description null (required: not tolerated)', change: (b) => (b.description = null), status: 400, path: '/body/description' },
  { name: 'payer id null (not tolerated)', change: (b) => ((b.customer_payer as Json).id = null), status: 400, path: '/body/customer_payer/id' },
  {
    name: 'no customer_payer',
    change: (b) => delete b.customer_payer,
    status: 201,
    then: (p) => {
      expect(p.customer_payer.id).toBeNull();
      expect(p.customer_payer.email).toBeNull();
    },
  },
  {
    name: 'four-digit expiration_year',
    change: (b) => (((((b.payment_method as Json).detail as Json).card as Json).card_data as Json).expiration_year = nextYear),
    status: 201,
    then: (p) => expect(p.payment_method.payment_method_detail.card!.card_data!.expiration_year).toBe(nextYear % 100),
  },
  { name: 'three-digit expiration_year', change: (b) => (((((b.payment_method as Json).detail as Json).card as Json).card_data as Json).expiration_year = 203), status: 400, path: '/body/payment_method/detail/card/card_data/expiration_year' },
  { name: 'expiration_year 2100', change: (b) => (((((b.payment_method as Json).detail as Json).card as Json).card_data as Json).expiration_year = 2100), status: 400, path: '/body/payment_method/detail/card/card_data/expiration_year' },
  {
    name: 'order items with Yuno’s url and image_url',
    change: (b) => (b.additional_data = { order: { items: [{ id: 'SKU-1', name: 'Skirt', quantity: 1, unit_amount: 48, url: 'https://shop.example/skirt', image_url: 'https://cdn.example/skirt.jpg' }] } }),
    status: 201,
    then: (p) => expect(p.additional_data?.order?.items?.[0]).toMatchObject({ url: 'https://shop.example/skirt', image_url: 'https://cdn.example/skirt.jpg' }),
  },
  { name: 'an order item member Yuno does not have', change: (b) => (b.additional_data = { order: { items: [{ id: 'SKU-1', colour: 'red' }] } }), status: 400, path: '/body/additional_data/order/items/0/colour' },
  {
    name: 'a payer document with its country',
    change: (b) => ((b.customer_payer as Json).document = { document_type: 'PASSPORT', document_number: 'X1234567', country: 'US' }),
    status: 201,
    then: (p) => expect(p.customer_payer.document).toMatchObject({ country: 'US' }),
  },
  { name: 'callback_url without a scheme (www.example.com)', change: (b) => (b.callback_url = 'www.example.com'), status: 201, then: (p) => expect(p.callback_url).toBe('https://www.example.com') },
  {
    name: 'callback_url without a scheme, with a path and a query',
    change: (b) => (b.callback_url = 'shop.example.com/return?order=42'),
    status: 201,
    then: (p) => expect(p.callback_url).toBe('https://shop.example.com/return?order=42'),
  },
  { name: 'callback_url an absolute URL (unchanged)', change: (b) => (b.callback_url = 'http://shop.example.com/r'), status: 201, then: (p) => expect(p.callback_url).toBe('http://shop.example.com/r') },
  { name: 'callback_url a single word (not a host)', change: (b) => (b.callback_url = 'localhost'), status: 400, path: '/body/callback_url' },
  {
    name: 'callback_url without a scheme, with a port',
    change: (b) => (b.callback_url = 'shop.example.com:8443/return'),
    status: 201,
    then: (p) => expect(p.callback_url).toBe('https://shop.example.com:8443/return'),
  },

  { name: 'callback_url with spaces', change: (b) => (b.callback_url = 'www.example.com/a b'), status: 400, path: '/body/callback_url' },
  { name: 'workflow REDIRECT (recorded)', change: (b) => (b.workflow = 'REDIRECT'), status: 201, then: (p) => expect(p.workflow).toBe('REDIRECT') },
  { name: 'a document country that is no country', change: (b) => ((b.customer_payer as Json).document = { document_number: 'X1234567', country: 'XX' }), status: 400, path: '/body/customer_payer/document/country' },
];

for (const backend of backends()) {
  describe(`Yuno's tolerances on ${backend}`, () => {
    const t = useServer(backend);

    it.each(PAYMENT_ROWS.map((r) => [r.name, r] as const))('create payment, %s', async (_name, row) => {
      const body = paymentBody(t, await createCustomer(t), { card: CARDS.approved }) as unknown as Json;
      row.change(body);
      const before = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM payments');
      const res = await postPayment(t, body);
      if (row.status === 400) {
        const problem = await expectProblem(res, 400, 'INVALID_REQUEST');
        expect((problem.errors as { path: string }[]).map((e) => e.path)).toContain(row.path);
        const after = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM payments');
        expect(after[0]!.n).toBe(before[0]!.n);
        return;
      }
      const text = await res.text();
      expect(res.status, text).toBe(201);
      row.then?.(JSON.parse(text) as Schemas['CreatedPayment']);
    });

    it('the same idempotency key with 20000 and "20000" is the same request (replayed, not a conflict)', async () => {
      const body = paymentBody(t, await createCustomer(t), { amount: { currency: 'BRL', value: 150 } }) as unknown as Json;
      const key = randomUUID();
      const first = await postPayment(t, body, { key });
      expect(first.status).toBe(201);
      const firstBody = (await first.json()) as { id: string };
      (body.amount as Json).value = '150';
      const again = await postPayment(t, body, { key });
      expect(again.status, await again.clone().text()).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(((await again.json()) as { id: string }).id).toBe(firstBody.id);
    });

    it('capture: a digit-string amount and additional_data (Yuno’s airline capture) are taken and recorded', async () => {
      const payment = await authorizedPayment(t, { amount: { currency: 'USD', value: 300 } });
      const txn = await cardTransactionId(t, payment.id);
      const airline = { pnr: 'ABC123', passengers: [{ first_name: 'JOHN', document: { document_number: '123456789', document_type: 'PASSPORT', country: 'US' } }] };
      const res = await postLifecycle(t, payment.id, 'capture', { amount: { currency: 'USD', value: '200' }, additional_data: { airline } }, { transactionId: txn });
      const text = await res.text();
      expect(res.status, text).toBe(200);
      const p = JSON.parse(text) as Schemas['Payment'];
      expect(p.amount.captured).toBe(200);
      expect(p.additional_data?.airline).toMatchObject(airline);
      const bad = await postLifecycle(t, payment.id, 'refund', { amount: { currency: 'USD', value: '1e2' } }, { transactionId: txn });
      const problem = await expectProblem(bad, 400, 'INVALID_REQUEST');
      expect((problem.errors as { path: string }[]).map((e) => e.path)).toContain('/body/amount/value');
    });

    it.each([
      [2030 + (nextYear > 2030 ? nextYear - 2030 : 0), 201],
      [nextYear % 100, 201],
      [1999, 400],
      [100, 400],
    ] as const)('enrollment with expiration_year %s → %s', async (year, status) => {
      const customerId = await createCustomer(t);
      const res = await t.fetch(`/customers/${customerId}/payment-methods`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() },
        body: JSON.stringify({
          account_id: t.sandbox.account_id,
          country: 'BR',
          type: 'CARD',
          card_data: { number: CARDS.approved, holder_name: 'JOAO SILVA', expiration_month: 12, expiration_year: year, security_code: '123' },
        }),
      });
      const text = await res.text();
      expect(res.status, text).toBe(status);
      if (status === 201) expect((JSON.parse(text) as Schemas['EnrolledPaymentMethod']).card_data!.expiration_year).toBe(year % 100);
      else expect(text).toContain('/body/card_data/expiration_year');
    });

    /** Every other request that takes a callback_url, with a port in it. */
    const CALLBACK_TAKERS: { name: string; send: (url: string) => Promise<Response> }[] = [
      { name: 'POST /checkout/sessions', send: (url) => post('/checkout/sessions', { account_id: t.sandbox.account_id, merchant_order_id: 'o-1', payment_description: 'Shoes', country: 'BR', amount: { currency: 'BRL', value: 10 }, callback_url: url }) },
      {
        name: 'PATCH /checkout/sessions/{id}',
        send: async (url) => {
          const created = await post('/checkout/sessions', { account_id: t.sandbox.account_id, merchant_order_id: 'o-2', payment_description: 'Shoes', country: 'BR', amount: { currency: 'BRL', value: 10 } });
          expect(created.status).toBe(201);
          const { id } = (await created.json()) as { id: string };
          return t.fetch(`/checkout/sessions/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ callback_url: url }) });
        },
      },
      { name: 'POST /customers/sessions', send: async (url) => post('/customers/sessions', { account_id: t.sandbox.account_id, country: 'BR', customer_id: await createCustomer(t), callback_url: url }) },
      { name: 'POST /payment-links', send: (url) => post('/payment-links', { account_id: t.sandbox.account_id, country: 'BR', amount: { currency: 'BRL', value: 10 }, callback_url: url }) },
      {
        name: 'POST /customers/{id}/payment-methods',
        send: async (url) =>
          t.fetch(`/customers/${await createCustomer(t)}/payment-methods`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() },
            body: JSON.stringify({ account_id: t.sandbox.account_id, country: 'BR', type: 'ACH_ENROLLMENT', callback_url: url }),
          }),
      },
    ];
    const post = (path: string, body: unknown) => t.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    it.each(CALLBACK_TAKERS.map((taker) => [taker.name, taker] as const))('%s takes an https callback_url', async (_name, taker) => {
      const res = await taker.send('https://shop.example.com:8443/return?o=1');
      const text = await res.text();
      expect(res.status, text).toBeLessThan(300);
      expect(JSON.parse(text)).toMatchObject({ callback_url: 'https://shop.example.com:8443/return?o=1' });
    });

    /** Every other place a card is taken, each with the path of its card in the request. */
    const CARD_TAKERS: { name: string; path: string; send: (card: Json) => Promise<Response> }[] = [
      {
        name: 'POST /tokens',
        path: '/body/card_data/expiration_year',
        send: (card) => t.fetch('/tokens', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ account_id: t.sandbox.account_id, country: 'BR', card_data: card }) }),
      },
      {
        name: 'a checkout session’s token',
        path: '/body/payment_method/card/expiration_year',
        send: async (card) => {
          const created = await t.fetch('/checkout/sessions', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ account_id: t.sandbox.account_id, merchant_order_id: `order-${randomUUID().slice(0, 8)}`, payment_description: 'Shoes', country: 'BR', amount: { currency: 'BRL', value: 10 } }),
          });
          expect(created.status).toBe(201);
          const session = (await created.json()) as { id: string };
          return t.fetch(`/checkout/sessions/${session.id}/token`, {
            method: 'POST',
            credentials_: false,
            headers: { 'content-type': 'application/json', 'public-api-key': t.sandbox.public_api_key },
            body: JSON.stringify({ payment_method: { type: 'CARD', card } }),
          });
        },
      },
      {
        name: 'a customer session’s enrollment',
        path: '/body/card_data/expiration_year',
        send: async (card) => {
          const customerId = await createCustomer(t);
          const created = await t.fetch('/customers/sessions', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ account_id: t.sandbox.account_id, country: 'BR', customer_id: customerId }),
          });
          expect(created.status).toBe(201);
          const session = (await created.json()) as { customer_session: string };
          return t.fetch(`/customers/sessions/${session.customer_session}/payment-methods`, {
            method: 'POST',
            credentials_: false,
            headers: { 'content-type': 'application/json', 'public-api-key': t.sandbox.public_api_key },
            body: JSON.stringify({ account_id: t.sandbox.account_id, payment_method_type: 'CARD', country: 'BR', card_data: card }),
          });
        },
      },
    ];
    it.each(CARD_TAKERS.flatMap((taker) => ([[nextYear, 201], [nextYear % 100, 201], [100, 400], [2100, 400]] as const).map(([year, status]) => [taker.name, year, status, taker] as const)))(
      '%s with expiration_year %s → %s (as an enrollment takes it)',
      async (_name, year, status, taker) => {
        const res = await taker.send({ number: CARDS.approved, holder_name: 'JOAO SILVA', expiration_month: 12, expiration_year: year, security_code: '123' });
        const text = await res.text();
        expect(res.status, text).toBe(status);
        if (status === 201) expect((JSON.parse(text) as { card_data: { expiration_year: number } }).card_data.expiration_year).toBe(year % 100);
        else expect(text).toContain(taker.path);
      },
    );
  });
}
