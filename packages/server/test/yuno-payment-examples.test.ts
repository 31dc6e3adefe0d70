/**
 * Issue 14 §1 and issue 24 §1/§5: every request example Yuno publishes for POST /v1/payments, sent as
 * published (only the merchant's ids substituted for Yuno's placeholders, and a card's passed expiry moved
 * forward) to a real server on each backend. Each example has its expected outcome below, and each refusal
 * its reason, as docs/guides/yuno-compatibility.md states it; the count of accepted examples is asserted.
 * A card whose expiry has passed is also sent as published: 422 INVALID_CARD naming only the expiry.
 */
import { describe, expect, it } from 'vitest';
import type { Schemas } from '@payorch/types';
import { expectProblem, expectSchema } from './support/assertions.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { createCustomer, enrollCard, postPayment } from './support/payments.js';
import { expired, isPlaceholder, yunoExamples, yunoFilesPresent, type YunoExample } from './support/yuno-examples.js';

type Json = Record<string, unknown>;
const present = yunoFilesPresent();
const examples: YunoExample[] = present ? yunoExamples('create-payment.json', '/payments') : [];
const cardData = (body: Json) => ((((body.payment_method as Json | undefined)?.detail as Json | undefined)?.card as Json | undefined)?.card_data as Json | undefined);

/** A 201 of another method than CARD names the state it starts in (an action shown: PENDING; a wallet token: decided at once). */
type Expected = { status: 201; state?: [status: string, subStatus: string, member: 'bank_transfer' | 'ticket' | 'wallet'] } | { status: 400 | 422; path: string; why: string };
/** What each published example gets; a refusal names the field the answer points at, and why. */
const EXPECTED: Record<string, Expected> = {
  'Example - Placeholders': {
    status: 400,
    path: '/body/payment_method/token',
    why: "pays with a one-time token of Yuno's SDK checkout (payorch has no checkout tokens) and sends callback_url www.example.com (not a URL)",
  },
  // A PIX from the payer's named account (issue 24): its QR code, the account stored as its last four only.
  'Bank Transfer with additional fields': { status: 201, state: ['PENDING', 'PENDING', 'bank_transfer'] },
  'Voucher payment': {
    status: 422,
    path: '/body/payment_method/detail/card/card_data/number',
    why: 'its card number 5067555612342011 fails the Luhn check (it has no customer_payer, which is accepted now)',
  },
  'Card - With card details': { status: 201 },
  'Card – Capture and cancel': { status: 201 },
  'Card - With airline data': { status: 201 },
  'Card - With 3DS direct': { status: 201 },
  'Card - With customer, billing, and shipping details': { status: 201 },
  'Card - With customer, billing, shipping and order items': { status: 201 },
  'Card - With installments': { status: 201 },
  'Card - With authorization': { status: 201 },
  'Card - With device fingerprint': { status: 201 },
  'Card - With vault on success': { status: 201 },
  'Card - With vaulted token': { status: 201 },
  // CASH: the voucher of the payment's country (US: the sandbox's generic cash voucher); callback_url
  // www.example.com is read as https://www.example.com, workflow REDIRECT recorded.
  'Alternative payment method': { status: 201, state: ['PENDING', 'PENDING', 'ticket'] },
  'Card - With shipping, fee and tip amount': { status: 201 },
  // APPLE_PAY without a token: approved by the shopper on the wallet's page.
  'Wallet - Direct': { status: 201, state: ['PENDING', 'PENDING', 'wallet'] },
  // GOOGLE_PAY's token authorized at once by the sandbox, as the test card of its last four (1515: approved).
  'Wallet - Google Pay with card last four': { status: 201, state: ['SUCCEEDED', 'APPROVED', 'wallet'] },
  'Split marketplace': { status: 201 },
  'Card - Create Payment with Subscription': { status: 400, path: '/body/id', why: 'a payment response published as a request example (id, status, transactions…)' },
  'Card - Create Payment for Existing Subscription': { status: 400, path: '/body/id', why: 'a payment response published as a request example (id, status, transactions…)' },
  'Create payment with split': { status: 201 },
  'Card - With external providers data': {
    status: 400,
    path: '/body/description',
    why: 'no description nor merchant_order_id (required by Yuno too), and provider tokens instead of a card',
  },
};
/** Accepted as published: the 14 card examples and, since issue 24, PIX with the payer's account, CASH, APPLE_PAY and GOOGLE_PAY. */
const ACCEPTED = 18;

/** The example with the merchant's own ids where Yuno wrote placeholders (and nothing else changed). */
async function substituted(t: TestServer, e: YunoExample): Promise<Json> {
  const body = structuredClone(e.value);
  body.account_id = t.sandbox.account_id;
  const payer = body.customer_payer as Json | undefined;
  let customerId: string | undefined;
  if (payer && 'id' in payer) {
    customerId = await createCustomer(t);
    payer.id = customerId;
  }
  const pm = (body.payment_method ?? {}) as Json;
  if (isPlaceholder(pm.vaulted_token) && customerId) pm.vaulted_token = await enrollCard(t, customerId);
  return body;
}

/** The same card a few years on, in the form (two or four digits) the example wrote its year. */
function movedForward(card: Json): void {
  const year = new Date().getUTCFullYear() + 2;
  card.expiration_year = Number(card.expiration_year) >= 100 ? year : year % 100;
}

const published = examples.map((e) => [e.name, e] as const);
const withPassedExpiry = examples.filter((e) => {
  const card = cardData(e.value);
  return card !== undefined && expired(card);
});

describe.skipIf(!present)('Yuno payment examples (../shared/yuno-openapi/create-payment.json)', () => {
  it('every published example has an expectation here, and the count accepted is the one the guide states', () => {
    expect(examples.map((e) => e.name).sort()).toEqual(Object.keys(EXPECTED).sort());
    const accepted = Object.values(EXPECTED).filter((x) => x.status === 201).length;
    expect(accepted).toBe(ACCEPTED);
    expect(examples.length).toBe(23);
    // Yuno's examples date from 2024–2025: some cards have expired since, and are moved forward below.
    expect(withPassedExpiry.length).toBeGreaterThanOrEqual(1);
  });

  for (const backend of backends()) {
    describe(`on ${backend}`, () => {
      const t = useServer(backend);

      it.each(published)('%s, sent as published (expiry moved forward)', async (_name, e) => {
        const expected = EXPECTED[e.name]!;
        const body = await substituted(t, e);
        const card = cardData(body);
        if (card && expired(card)) movedForward(card);
        const before = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM payments');
        const res = await postPayment(t, body);
        if (expected.status !== 201) {
          const problem = await expectProblem(res, expected.status, expected.status === 400 ? 'INVALID_REQUEST' : 'INVALID_CARD');
          const errors = problem.errors as { path: string }[];
          expect(errors.map((err) => err.path), `${expected.why}: ${JSON.stringify(errors)}`).toContain(expected.path);
          const after = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM payments');
          expect(after[0]!.n).toBe(before[0]!.n);
          return;
        }
        const text = await res.text();
        expect(res.status, text).toBe(201);
        const p = JSON.parse(text) as Schemas['CreatedPayment'];
        expectSchema('CreatedPayment', p);
        if (expected.state) {
          const [status, subStatus, member] = expected.state;
          expect([p.status, p.sub_status, p.payment_method.type]).toEqual([status, subStatus, (body.payment_method as Json).type]);
          expect(p.payment_method.payment_method_detail[member]).not.toBeNull();
          expect(p.payment_method.payment_method_detail.card).toBeNull();
          // What is card or account data in the request is nowhere in the reply.
          const wallet = (((body.payment_method as Json).detail as Json | undefined)?.wallet ?? {}) as Json;
          const account = ((((body.payment_method as Json).detail as Json | undefined)?.bank_transfer as Json | undefined)?.account ?? {}) as Json;
          for (const secret of [wallet.payment_token, account.number]) {
            if (typeof secret !== 'string') continue;
            expect(text).not.toContain(secret);
            // …nor in any table or log line (the teardown scan).
            t.rememberSecret(secret, 'card or account data of a published example');
          }
          if (body.callback_url === 'www.example.com') expect((await t.db.query<{ u: string }>('SELECT callback_url AS u FROM payments WHERE id = $1', [p.id]))[0]!.u).toBe('https://www.example.com');
          return;
        }
        // What was sent is what was recorded: the payer's inline fields (null ones as absent), the amount
        // as a number, the reference and the card options.
        const sent = (body.customer_payer ?? {}) as Json;
        for (const key of ['first_name', 'last_name', 'email', 'merchant_customer_id', 'ip_address'] as const) {
          if (typeof sent[key] === 'string') expect(p.customer_payer[key]).toBe(sent[key]);
        }
        expect(p.customer_payer.id).toBe((sent.id as string | undefined) ?? null);
        expect(p.amount.value).toBe(Number((body.amount as Json).value));
        if (body.merchant_reference) expect(p.transactions.merchant_reference).toBe(body.merchant_reference);
        const options = (((body.payment_method as Json).detail as Json | undefined)?.card ?? {}) as Json;
        const recorded = p.payment_method.payment_method_detail.card!;
        if (options.installments !== undefined) expect(recorded.installments).toBe(options.installments);
        if (options.capture !== undefined) expect(recorded.capture).toBe(options.capture);
        if (card) expect(recorded.card_data!.expiration_year).toBe(Number(card.expiration_year) % 100);
        const items = ((body.additional_data as Json | undefined)?.order as Json | undefined)?.items as Json[] | undefined;
        if (items) expect((p.additional_data?.order?.items ?? []).map((i) => i.image_url)).toEqual(items.map((i) => i.image_url));
        if ((body.payment_method as Json).vault_on_success === true) expect(p.payment_method.vaulted_token).toMatch(/^[0-9a-f-]{36}$/);
      });

      it.each(withPassedExpiry.map((e) => [e.name, e] as const))('%s, its passed expiry as published → 422 INVALID_CARD naming the expiry', async (_name, e) => {
        const res = await postPayment(t, await substituted(t, e));
        const problem = await expectProblem(res, 422, 'INVALID_CARD');
        const errors = problem.errors as { path: string }[];
        expect(errors.length).toBeGreaterThan(0);
        for (const err of errors) expect(err.path).toMatch(/^\/body\/payment_method\/detail\/card\/card_data\/expiration_(year|month)$/);
      });
    });
  }
});
