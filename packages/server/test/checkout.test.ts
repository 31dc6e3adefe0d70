/**
 * Checkout without the card on the merchant's servers (issue 25; docs/guides/checkout.md): checkout
 * sessions, one-time tokens made with the public key alone, payments with them, server tokens, customer
 * sessions and payment links. One server per backend; the sensitive-data scan at teardown checks that no
 * card number or security code was left in any table or log line.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { describe, expect, it } from 'vitest';
import { openLinkCheckout, payLink } from '../src/checkout/payment-links.js';
import { RetentionJob } from '../src/retention/job.js';
import { expectProblem, expectSchema } from './support/assertions.js';
import { backends, useServer, type Credentials, type TestServer } from './support/harness.js';
import { CARDS, createCustomer, getPayment, postPayment, rawCard } from './support/payments.js';

const json = { 'content-type': 'application/json' };

function sessionBody(t: TestServer, overrides: Partial<Schemas['CheckoutSessionCreateRequest']> = {}): Schemas['CheckoutSessionCreateRequest'] {
  return {
    account_id: t.sandbox.account_id,
    merchant_order_id: `order-${randomUUID().slice(0, 8)}`,
    payment_description: 'Running shoes',
    country: 'BR',
    amount: { currency: 'BRL', value: 150.5 },
    allowed_origins: ['https://shop.example'],
    ...overrides,
  };
}

async function createSession(t: TestServer, overrides: Partial<Schemas['CheckoutSessionCreateRequest']> = {}, creds?: Credentials): Promise<Schemas['CheckoutSession']> {
  const res = await t.fetch('/checkout/sessions', {
    method: 'POST',
    headers: { ...json, ...(creds ? { 'public-api-key': creds.public_api_key, 'private-secret-key': creds.private_secret_key } : {}) },
    body: JSON.stringify(sessionBody(t, { ...(creds ? { account_id: creds.account_id } : {}), ...overrides })),
  });
  const text = await res.text();
  expect(res.status, text).toBe(201);
  return JSON.parse(text) as Schemas['CheckoutSession'];
}

/** What the hosted form does: the card, with the public key alone (no secret key sent). */
function tokenize(t: TestServer, sessionId: string, publicKey = t.sandbox.public_api_key, card: string = CARDS.approved): Promise<Response> {
  const c = rawCard(card);
  return t.fetch(`/checkout/sessions/${sessionId}/token`, {
    method: 'POST',
    credentials_: false,
    headers: { ...json, 'public-api-key': publicKey },
    body: JSON.stringify({ payment_method: { type: 'CARD', card: { number: c.number, expiration_month: c.expiration_month, expiration_year: c.expiration_year, security_code: c.security_code, holder_name: c.holder_name } } }),
  });
}

async function tokenFor(t: TestServer, sessionId: string, publicKey?: string, card?: string): Promise<Schemas['OneTimeToken']> {
  const res = await tokenize(t, sessionId, publicKey, card);
  const text = await res.text();
  expect(res.status, text).toBe(201);
  return JSON.parse(text) as Schemas['OneTimeToken'];
}

/** The merchant's server pays with the token, in Yuno's shape (SDK_CHECKOUT, checkout.session). */
function payBody(t: TestServer, session: Schemas['CheckoutSession'], token: string, overrides: Partial<Schemas['CreatePaymentRequest']> = {}): Schemas['CreatePaymentRequest'] {
  return {
    account_id: session.account_id,
    description: session.payment_description,
    country: session.country as Schemas['CreatePaymentRequest']['country'],
    merchant_order_id: session.merchant_order_id,
    amount: { currency: session.amount.currency, value: session.amount.value },
    customer_payer: {},
    workflow: 'SDK_CHECKOUT',
    checkout: { session: session.checkout_session },
    payment_method: { type: 'CARD', token },
    ...overrides,
  };
}

async function paymentsOfOrder(t: TestServer, merchantOrderId: string, creds?: Credentials): Promise<Schemas['Payment'][]> {
  const res = await t.fetch(`/payments?merchant_order_id=${merchantOrderId}`, {
    ...(creds ? { headers: { 'public-api-key': creds.public_api_key, 'private-secret-key': creds.private_secret_key } } : {}),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as Schemas['PaymentList']).payments;
}

for (const backend of backends()) {
  describe(`checkout (${backend})`, () => {
    const t = useServer(backend);

    it('creates, reads, updates a session and lists what can pay it', async () => {
      const customerId = await createCustomer(t);
      const session = await createSession(t, { customer_id: customerId, metadata: [{ key: 'cart', value: 'c-1' }] });
      expectSchema('CheckoutSession', session);
      expect(session).toMatchObject({ checkout_session: session.id, status: 'OPEN', used: false, amount: { currency: 'BRL', value: 150.5 }, allowed_origins: ['https://shop.example'], workflow: 'SDK_CHECKOUT' });
      expect(Date.parse(session.expires_at) - Date.parse(session.created_at)).toBe(24 * 3600 * 1000);

      const read = await t.fetch(`/checkout/sessions/${session.id}`);
      expect(await read.json()).toEqual(session);

      const patched = await t.fetch(`/checkout/sessions/${session.id}`, { method: 'PATCH', headers: json, body: JSON.stringify({ amount: { currency: 'BRL', value: 170 } }) });
      expect(patched.status).toBe(200);
      expect(((await patched.json()) as Schemas['CheckoutSession']).amount).toEqual({ currency: 'BRL', value: 170 });

      const methods = await t.fetch(`/checkout/sessions/${session.id}/payment-methods`);
      expect(methods.status).toBe(200);
      const list = (await methods.json()) as Schemas['CheckoutPaymentMethodList'];
      expect(list.map((m) => [m.type, m.vaulted_token, m.checkout.sdk_required_action])).toEqual([['CARD', null, true]]);

      // An account of another organization, or an unknown session.
      const other = await t.createOrganization();
      const foreign = await t.fetch('/checkout/sessions', { method: 'POST', headers: json, body: JSON.stringify(sessionBody(t, { account_id: other.account_id })) });
      await expectProblem(foreign, 403, 'INVALID_ACCOUNT_ID');
      await expectProblem(await t.fetch(`/checkout/sessions/${randomUUID()}`), 404, 'CHECKOUT_SESSION_NOT_FOUND');
      const otherReads = await t.fetch(`/checkout/sessions/${session.id}`, { headers: { 'public-api-key': other.public_api_key, 'private-secret-key': other.private_secret_key } });
      await expectProblem(otherReads, 404, 'CHECKOUT_SESSION_NOT_FOUND');
      const moved = await t.fetch(`/checkout/sessions/${session.id}`, { method: 'PATCH', headers: json, body: JSON.stringify({ account_id: other.account_id }) });
      await expectProblem(moved, 403, 'INVALID_ACCOUNT_ID');
    });

    it('a currency no provider serves: nothing to pay with', async () => {
      const session = await createSession(t, { amount: { currency: 'JPY', value: 1000 }, country: 'JP' });
      const methods = await t.fetch(`/checkout/sessions/${session.id}/payment-methods`);
      const list = (await methods.json()) as unknown[];
      // Whatever the sandbox serves, the list follows the routing: the same planning a payment does.
      const pay = await postPayment(t, payBody(t, session, (await tokenFor(t, session.id)).token));
      if (list.length === 0) await expectProblem(pay, 422, 'NO_ROUTE');
      else expect(pay.status).toBe(201);
    });

    it('the public key alone makes a token and nothing else', async () => {
      const session = await createSession(t);
      const token = await tokenFor(t, session.id);
      expectSchema('OneTimeToken', token);
      expect(token).toMatchObject({ checkout_session: session.id, account_id: t.sandbox.account_id, amount: { currency: 'BRL', value: 150.5 }, vaulted_token: null, type: 'CARD' });
      expect(token.card_data).toMatchObject({ iin: '45079900', lfd: '0002', brand: 'VISA', fingerprint: null });
      expect(JSON.stringify(token)).not.toContain(CARDS.approved);
      const ttl = Date.parse(token.expires_at) - Date.now();
      expect(ttl).toBeGreaterThan(8 * 60_000);
      expect(ttl).toBeLessThanOrEqual(10 * 60_000);

      const publicOnly = { 'public-api-key': t.sandbox.public_api_key };
      const calls: [string, string, unknown?][] = [
        ['POST', '/checkout/sessions', sessionBody(t)],
        ['GET', `/checkout/sessions/${session.id}`],
        ['GET', `/checkout/sessions/${session.id}/payment-methods`],
        ['POST', '/tokens', { account_id: t.sandbox.account_id, card_data: rawCard(CARDS.approved) }],
        ['POST', '/payments', payBody(t, session, token.token)],
        ['GET', '/customers/list'],
        ['POST', '/payment-links', { account_id: t.sandbox.account_id, country: 'BR', amount: { currency: 'BRL', value: 10 } }],
        ['POST', '/customers/sessions', { account_id: t.sandbox.account_id, country: 'BR', customer_id: randomUUID() }],
      ];
      for (const [method, path, body] of calls) {
        const res = await t.fetch(path, {
          method,
          credentials_: false,
          headers: { ...publicOnly, ...json, 'x-idempotency-key': randomUUID() },
          ...(body ? { body: JSON.stringify(body) } : {}),
        });
        await expectProblem(res, 401, 'INVALID_CREDENTIALS');
      }
      // Unknown or revoked public keys make nothing; a secret key is not needed but may be sent.
      await expectProblem(await tokenize(t, session.id, `pk_${randomUUID()}`), 401, 'INVALID_CREDENTIALS');
      const withSecret = await t.fetch(`/checkout/sessions/${session.id}/token`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ payment_method: { type: 'CARD', card: { ...rawCard(CARDS.approved), security_code: '123' } } }),
      });
      expect(withSecret.status).toBe(201);
      // Another organization's public key cannot tokenize for this session (it is not theirs).
      const other = await t.createOrganization();
      await expectProblem(await tokenize(t, session.id, other.public_api_key), 404, 'CHECKOUT_SESSION_NOT_FOUND');
      // The card is checked before anything is made.
      await expectProblem(await tokenize(t, session.id, undefined, '4507990000000003'), 422, 'INVALID_CARD');
    });

    it('pays once with a token: the session is PAID, a replay moves no money', async () => {
      const session = await createSession(t);
      const { token } = await tokenFor(t, session.id);
      const res = await postPayment(t, payBody(t, session, token));
      const text = await res.text();
      expect(res.status, text).toBe(201);
      const payment = JSON.parse(text) as Schemas['CreatedPayment'];
      expect(payment).toMatchObject({ status: 'SUCCEEDED', workflow: 'SDK_CHECKOUT', checkout: { session: session.id } });
      expect(payment.payment_method.payment_method_detail?.card?.card_data).toMatchObject({ iin: '45079900', lfd: '0002', brand: 'VISA' });

      const after = (await (await t.fetch(`/checkout/sessions/${session.id}`)).json()) as Schemas['CheckoutSession'];
      expect(after).toMatchObject({ status: 'PAID', used: true, payment_id: payment.id });
      // The sealed card is gone from the row in the payment's own transaction.
      // So is the holder's name (the payment keeps its own copy): the row keeps what tells a replay it was used.
      const [row] = await t.db.query<{ card_ciphertext: unknown; payment_id: string; card_data: Record<string, unknown> }>('SELECT card_ciphertext, payment_id, card_data FROM one_time_tokens WHERE token = $1', [token]);
      expect(row).toMatchObject({ card_ciphertext: null, payment_id: payment.id, card_data: { lfd: '0002' } });
      expect(row!.card_data).not.toHaveProperty('holder_name');

      await expectProblem(await postPayment(t, payBody(t, session, token)), 409, 'TOKEN_ALREADY_USED');
      expect(await paymentsOfOrder(t, session.merchant_order_id)).toHaveLength(1);
      // A paid session takes no new card, and cannot change.
      await expectProblem(await tokenize(t, session.id), 409, 'INVALID_STATUS');
      await expectProblem(await t.fetch(`/checkout/sessions/${session.id}`, { method: 'PATCH', headers: json, body: JSON.stringify({ payment_description: 'x' }) }), 409, 'INVALID_STATUS');
    });

    it('concurrent payments with one token: exactly one goes through', async () => {
      const session = await createSession(t);
      const { token } = await tokenFor(t, session.id);
      const answers = await Promise.all(Array.from({ length: 6 }, () => postPayment(t, payBody(t, session, token))));
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
      for (const r of answers.filter((a) => a.status === 409)) await expectProblem(r, 409, 'TOKEN_ALREADY_USED');
      expect(await paymentsOfOrder(t, session.merchant_order_id)).toHaveLength(1);
    });

    it('two tokens of one session cannot both pay it, even concurrently', async () => {
      const session = await createSession(t);
      const tokens = await Promise.all([tokenFor(t, session.id), tokenFor(t, session.id), tokenFor(t, session.id)]);
      const answers = await Promise.all(tokens.map((k) => postPayment(t, payBody(t, session, k.token))));
      expect(answers.map((r) => r.status).sort()).toEqual([201, 409, 409]);
      for (const r of answers.filter((a) => a.status === 409)) await expectProblem(r, 409, 'INVALID_STATUS');
      expect(await paymentsOfOrder(t, session.merchant_order_id)).toHaveLength(1);
    });

    it.each([
      ['a different amount', { amount: { currency: 'BRL', value: 150.51 } }, '/body/amount/value'],
      ['a different currency', { amount: { currency: 'USD', value: 150.5 } }, '/body/amount/currency'],
      ['another checkout session', { checkout: { session: randomUUID() } }, '/body/checkout/session'],
    ] as const)('refuses the token for %s (422 TOKEN_MISMATCH, nothing written, the token still works)', async (_what, overrides, path) => {
      const session = await createSession(t);
      const { token } = await tokenFor(t, session.id);
      const problem = await expectProblem(await postPayment(t, payBody(t, session, token, overrides as Partial<Schemas['CreatePaymentRequest']>)), 422, 'TOKEN_MISMATCH');
      expect((problem.errors as { path: string }[]).map((e) => e.path)).toContain(path);
      expect(await paymentsOfOrder(t, session.merchant_order_id)).toHaveLength(0);
      expect((await postPayment(t, payBody(t, session, token))).status).toBe(201);
    });

    it("refuses another organization's token as unknown (404), and an expired one (422)", async () => {
      const session = await createSession(t);
      const { token } = await tokenFor(t, session.id);
      const other = await t.createOrganization();
      const res = await postPayment(t, payBody(t, session, token, { account_id: other.account_id }), {
        headers: { 'public-api-key': other.public_api_key, 'private-secret-key': other.private_secret_key },
      });
      await expectProblem(res, 404, 'TOKEN_NOT_FOUND');
      await expectProblem(await postPayment(t, payBody(t, session, randomUUID())), 404, 'TOKEN_NOT_FOUND');
      expect(await paymentsOfOrder(t, session.merchant_order_id, other)).toHaveLength(0);

      await t.db.query("UPDATE one_time_tokens SET expires_at = clock_timestamp() - interval '1 second' WHERE token = $1", [token]);
      await expectProblem(await postPayment(t, payBody(t, session, token)), 422, 'TOKEN_EXPIRED');
      expect(await paymentsOfOrder(t, session.merchant_order_id)).toHaveLength(0);
      // The retention run destroys the sealed card of a token that expired unused, and the holder's name;
      // the row stays masked.
      const report = await new RetentionJob({ db: t.db, log: t.running.deps.log, pauseMs: 0 }).runOnce();
      expect(report.expiredTokens).toBeGreaterThanOrEqual(1);
      const [row] = await t.db.query<{ card_ciphertext: unknown; card_data: { lfd: string } }>('SELECT card_ciphertext, card_data FROM one_time_tokens WHERE token = $1', [token]);
      expect(row).toMatchObject({ card_ciphertext: null, card_data: { lfd: '0002' } });
      expect(row!.card_data).not.toHaveProperty('holder_name');
      await expectProblem(await postPayment(t, payBody(t, session, token)), 422, 'TOKEN_EXPIRED');
    });

    it('a declined card leaves the session open for another card', async () => {
      const session = await createSession(t);
      const declined = await postPayment(t, payBody(t, session, (await tokenFor(t, session.id, undefined, CARDS.declined)).token));
      expect(((await declined.json()) as Schemas['CreatedPayment']).status).toBe('DECLINED');
      expect(((await (await t.fetch(`/checkout/sessions/${session.id}`)).json()) as Schemas['CheckoutSession']).status).toBe('OPEN');
      const paid = await postPayment(t, payBody(t, session, (await tokenFor(t, session.id)).token));
      expect(((await paid.json()) as Schemas['CreatedPayment']).status).toBe('SUCCEEDED');
    });

    it('vault_on_success with a token enrolls the card for the customer', async () => {
      const customerId = await createCustomer(t);
      const session = await createSession(t, { customer_id: customerId });
      const { token } = await tokenFor(t, session.id);
      const res = await postPayment(t, payBody(t, session, token, { customer_payer: { id: customerId }, payment_method: { type: 'CARD', token, vault_on_success: true } }));
      const payment = (await res.json()) as Schemas['CreatedPayment'];
      expect(payment.status).toBe('SUCCEEDED');
      const vaulted = payment.payment_method.vaulted_token;
      expect(vaulted).toEqual(expect.any(String));
      const methods = (await (await t.fetch(`/checkout/sessions/${session.id}/payment-methods`)).json()) as Schemas['CheckoutPaymentMethodList'];
      expect(methods.map((m) => m.vaulted_token)).toEqual([null, vaulted]);
    });

    it('POST /tokens: PCI-certified servers only; the token pays any amount on its account', async () => {
      const res = await t.fetch('/tokens', { method: 'POST', headers: json, body: JSON.stringify({ account_id: t.sandbox.account_id, country: 'BR', card_data: rawCard(CARDS.approved) }) });
      const text = await res.text();
      expect(res.status, text).toBe(201);
      const token = JSON.parse(text) as Schemas['OneTimeToken'];
      expect(token).toMatchObject({ checkout_session: null, amount: null });
      const body = { ...payBody(t, { account_id: t.sandbox.account_id, payment_description: 'x', country: 'BR', merchant_order_id: `o-${randomUUID().slice(0, 8)}`, amount: { currency: 'BRL', value: 99 } } as Schemas['CheckoutSession'], token.token), workflow: 'DIRECT' as const };
      delete (body as Partial<typeof body>).checkout;
      const paid = await postPayment(t, body);
      expect(paid.status).toBe(201);
      await expectProblem(await postPayment(t, body), 409, 'TOKEN_ALREADY_USED');

      const notPci = await t.createOrganization({ pciCertified: false });
      const refused = await t.fetch('/tokens', {
        method: 'POST',
        headers: { ...json, 'public-api-key': notPci.public_api_key, 'private-secret-key': notPci.private_secret_key },
        body: JSON.stringify({ account_id: notPci.account_id, card_data: rawCard(CARDS.approved) }),
      });
      await expectProblem(refused, 403, 'PCI_CERTIFICATION_REQUIRED');
    });

    it('a customer session enrolls a card with the public key alone, for a merchant without PCI certification', async () => {
      const merchant = await t.createOrganization({ pciCertified: false });
      const secretHeaders = { 'public-api-key': merchant.public_api_key, 'private-secret-key': merchant.private_secret_key };
      const customerId = await createCustomer(t, t.clientFor(merchant));
      const created = await t.fetch('/customers/sessions', {
        method: 'POST',
        headers: { ...json, ...secretHeaders },
        body: JSON.stringify({ account_id: merchant.account_id, country: 'BR', customer_id: customerId, allowed_origins: ['https://shop.example'] }),
      });
      expect(created.status).toBe(201);
      const session = (await created.json()) as Schemas['CustomerSession'];
      expectSchema('CustomerSession', session);

      const enroll = (id: string) =>
        t.fetch(`/customers/sessions/${id}/payment-methods`, {
          method: 'POST',
          credentials_: false,
          headers: { ...json, 'public-api-key': merchant.public_api_key },
          body: JSON.stringify({ account_id: merchant.account_id, payment_method_type: 'CARD', country: 'BR', card_data: rawCard(CARDS.approved) }),
        });
      const res = await enroll(session.customer_session);
      const text = await res.text();
      expect(res.status, text).toBe(201);
      const method = JSON.parse(text) as Schemas['EnrolledPaymentMethod'];
      expect(method).toMatchObject({ status: 'ENROLLED', type: 'CARD' });

      // The merchant pays with the vaulted card as usual.
      const pay = await t.fetch('/payments', {
        method: 'POST',
        headers: { ...json, ...secretHeaders, 'x-idempotency-key': randomUUID() },
        body: JSON.stringify({
          account_id: merchant.account_id, description: 'Subscription', country: 'BR', merchant_order_id: 'sub-1', amount: { currency: 'BRL', value: 30 },
          customer_payer: { id: customerId }, payment_method: { type: 'CARD', vaulted_token: method.vaulted_token },
        }),
      });
      expect(pay.status).toBe(201);

      const badCard = await t.fetch(`/customers/sessions/${session.customer_session}/payment-methods`, {
        method: 'POST',
        credentials_: false,
        headers: { ...json, 'public-api-key': merchant.public_api_key },
        body: JSON.stringify({ account_id: merchant.account_id, payment_method_type: 'CARD', country: 'BR', card_data: rawCard('4507990000000003') }),
      });
      await expectProblem(badCard, 422, 'INVALID_CARD');
      await expectProblem(await enroll(randomUUID()), 404, 'CUSTOMER_SESSION_NOT_FOUND');
      await t.db.query("UPDATE customer_sessions SET expires_at = clock_timestamp() - interval '1 second' WHERE id = $1", [session.customer_session]);
      await expectProblem(await enroll(session.customer_session), 404, 'CUSTOMER_SESSION_NOT_FOUND');
    });

    it('a payment link: created ACTIVE, paid through a checkout session of its page, then PAID with its event', async () => {
      const create = await t.fetch('/payment-links', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ account_id: t.sandbox.account_id, description: 'Invoice 118', country: 'BR', merchant_order_id: `inv-${randomUUID().slice(0, 6)}`, amount: { currency: 'BRL', value: 250 }, payment_method_types: ['CARD'] }),
      });
      const text = await create.text();
      expect(create.status, text).toBe(201);
      const link = JSON.parse(text) as Schemas['PaymentLink'];
      expectSchema('PaymentLink', link);
      expect(link).toMatchObject({ status: 'ACTIVE', one_time_use: true, payments_number: 0, payments: null });
      expect(link.checkout_url).toMatch(new RegExp(`/checkout/links/${link.code}$`));

      const deps = t.running.deps;
      const opened = await openLinkCheckout(deps.db, link.code, 'https://payorch.example');
      if (!opened.ok) throw new Error(`link refused: ${opened.reason}`);
      expect(opened.session).toMatchObject({ amount: { currency: 'BRL', value: 250 }, allowed_origins: ['https://payorch.example'] });
      expect(opened.publicApiKey).toBe(t.sandbox.public_api_key);
      const { token } = await tokenFor(t, opened.session.checkout_session, opened.publicApiKey);
      const paid = await payLink(deps, link.code, { checkoutSession: opened.session.checkout_session, token }, { baseUrl: 'https://payorch.example', log: deps.log });
      if (!paid.ok) throw new Error(`payLink refused: ${JSON.stringify(paid.problem.body)}`);
      expect(paid.payment.status).toBe('SUCCEEDED');

      const after = (await (await t.fetch(`/payment-links/${link.code}`)).json()) as Schemas['PaymentLink'];
      expect(after).toMatchObject({ status: 'PAID', payments_number: 1, payments: [paid.payment.id] });
      const events = (await (await t.fetch('/events?type=payment_link.paid')).json()) as Schemas['EventList'];
      expect(events.events.map((e) => (e.data as unknown as { payment_id: string }).payment_id)).toContain(paid.payment.id);
      expect((await getPayment(t, paid.payment.id)).merchant_order_id).toBe(link.merchant_order_id);

      // A paid one-time link takes nothing more, and cannot be canceled.
      expect(await openLinkCheckout(deps.db, link.code, 'https://payorch.example')).toMatchObject({ ok: false, reason: 'PAID' });
      await expectProblem(await tokenize(t, opened.session.checkout_session), 409, 'INVALID_STATUS');
      await expectProblem(await t.fetch(`/payment-links/${link.code}/cancel`, { method: 'POST' }), 409, 'INVALID_STATUS');
    });

    it('a canceled link refuses its page; cancel twice answers it unchanged; unknown links are 404', async () => {
      const create = await t.fetch('/payment-links', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ account_id: t.sandbox.account_id, country: 'BR', amount: { currency: 'BRL', value: 10 }, one_time_use: false }),
      });
      const link = (await create.json()) as Schemas['PaymentLink'];
      const deps = t.running.deps;
      const opened = await openLinkCheckout(deps.db, link.code, 'https://payorch.example');
      expect(opened.ok).toBe(true);
      const canceled = await t.fetch(`/payment-links/${link.code}/cancel`, { method: 'POST' });
      expect(((await canceled.json()) as Schemas['PaymentLink']).status).toBe('CANCELED');
      const twice = await t.fetch(`/payment-links/${link.code}/cancel`, { method: 'POST' });
      expect(twice.status).toBe(200);
      expect(await openLinkCheckout(deps.db, link.code, 'https://payorch.example')).toMatchObject({ ok: false, reason: 'CANCELED' });
      // A session opened before the cancel cannot pay any more.
      if (!opened.ok) throw new Error('opened');
      const { token } = await tokenFor(t, opened.session.checkout_session);
      const paid = await payLink(deps, link.code, { checkoutSession: opened.session.checkout_session, token }, { baseUrl: 'https://payorch.example', log: deps.log });
      expect(paid.ok).toBe(false);
      if (!paid.ok) expect(paid.problem.body.code).toBe('INVALID_STATUS');
      await expectProblem(await t.fetch(`/payment-links/${randomUUID()}`), 404, 'PAYMENT_LINK_NOT_FOUND');
      await expectProblem(await t.fetch(`/payment-links/${randomUUID()}/cancel`, { method: 'POST' }), 404, 'PAYMENT_LINK_NOT_FOUND');
      const past = await t.fetch('/payment-links', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ account_id: t.sandbox.account_id, country: 'BR', amount: { currency: 'BRL', value: 10 }, availability: { finish_at: '2020-01-01T00:00:00Z' } }),
      });
      expect(((await past.json()) as Schemas['PaymentLink']).status).toBe('EXPIRED');
      const window = { start_at: '2020-01-01T00:00:00Z', finish_at: '2020-02-01T00:00:00Z' };
      const expired = await t.fetch('/payment-links', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ account_id: t.sandbox.account_id, country: 'BR', amount: { currency: 'BRL', value: 10 }, availability: window }),
      });
      const expiredLink = (await expired.json()) as Schemas['PaymentLink'];
      expect(expiredLink.status).toBe('EXPIRED');
      expect(await openLinkCheckout(deps.db, expiredLink.code, 'https://payorch.example')).toMatchObject({ ok: false, reason: 'EXPIRED' });
    });
  });
}
