/**
 * The resource layer against a real server: each method returns the data or throws a PayorchError that
 * carries the problem (status, code, messages, errors, request_id). Operations still being built may
 * answer 501: accepted only through expectImplementedOr501.
 */
import { describe, expect, it } from 'vitest';
import { createPayorchClient, evidenceFromBytes, PayorchConnectionError, PayorchError } from '../src/index.js';
import { adminClient, futureExpiry, recorder, sandboxClient, server, unique } from './support/clients.js';
import { expectImplementedOr501 } from './support/not-implemented.js';
import { tinyPdf } from './support/pdf.js';

const rec = recorder();
const payorch = sandboxClient();
payorch.use(rec.middleware);

async function thrown(call: Promise<unknown>): Promise<PayorchError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PayorchError);
  return err as PayorchError;
}

/** The error a call fails with (resolved, to assert on), passing a 501 through for expectImplementedOr501. */
function errorOf(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => 'no error',
    (e: unknown) => (e instanceof PayorchError && e.status === 501 ? Promise.reject(e) : e),
  );
}

describe('customers.create', () => {
  it('returns the created customer', async () => {
    const merchant_customer_id = unique('res');
    const customer = await payorch.customers.create({ merchant_customer_id, email: 'grace@example.com', metadata: [{ key: 'tier', value: 'gold' }] });
    expect(customer).toMatchObject({ merchant_customer_id, email: 'grace@example.com', metadata: [{ key: 'tier', value: 'gold' }] });
  });

  it('throws PayorchError 409 with code, messages, request_id and the problem body', async () => {
    const merchant_customer_id = unique('res-dup');
    const first = await payorch.customers.create({ merchant_customer_id });
    const err = await thrown(payorch.customers.create({ merchant_customer_id }));
    expect(err).toMatchObject({ name: 'PayorchError', status: 409, code: 'CUSTOMER_ID_DUPLICATED', errors: [] });
    expect(err.messages.length).toBeGreaterThan(0);
    expect(err.request_id).toBe(err.response.headers.get('x-request-id'));
    expect(err.problem?.existing_customer_id).toBe(first.id);
    expect(err.message).toContain('409 CUSTOMER_ID_DUPLICATED');
    expect(err.message).toContain(err.request_id);
  });

  it('throws PayorchError 400 with one `errors` entry per invalid field', async () => {
    // @ts-expect-error email must be a string: sent anyway to see the server's answer
    const err = await thrown(payorch.customers.create({ merchant_customer_id: 'x', email: 12 }));
    expect(err).toMatchObject({ status: 400, code: 'INVALID_REQUEST' });
    expect(err.errors.map((e) => e.path)).toEqual(expect.arrayContaining(['/body/merchant_customer_id', '/body/email']));
  });

  it('throws PayorchError 401 INVALID_CREDENTIALS with a wrong key pair', async () => {
    const wrong = createPayorchClient({ baseUrl: server().baseUrl, publicApiKey: 'pk_wrong', privateSecretKey: 'sk_wrong' });
    const err = await thrown(wrong.customers.create({ merchant_customer_id: unique('nope') }));
    expect(err).toMatchObject({ status: 401, code: 'INVALID_CREDENTIALS' });
  });

  it('throws PayorchConnectionError when nothing listens', async () => {
    const nowhere = createPayorchClient({ baseUrl: 'http://127.0.0.1:9/v1', publicApiKey: 'pk', privateSecretKey: 'sk', maxRetries: 0 });
    const err = await nowhere.customers.create({ merchant_customer_id: 'cus-1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PayorchConnectionError);
    expect(err).toMatchObject({ timedOut: false, attempts: 1 });
  });
});

describe('paymentMethods, payments and disputes', () => {
  let customerId: string;
  let vaultedToken: string | undefined;
  let paymentId: string = crypto.randomUUID();
  let chargebackId: string = crypto.randomUUID();

  it('paymentMethods.enroll vaults a card (a generated key), and replays for the caller’s own key', async () => {
    customerId = (await payorch.customers.create({ merchant_customer_id: unique('res-vault') })).id;
    const body = {
      account_id: server().sandbox.account_id,
      country: 'BR' as const,
      type: 'CARD' as const,
      card_data: { number: '4507990000000002', holder_name: 'GRACE HOPPER', security_code: '123', ...futureExpiry() },
    };
    const enrolled = await expectImplementedOr501('enrollPaymentMethod', payorch.paymentMethods.enroll(customerId, body));
    expect(rec.last().headers.get('x-idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
    if (enrolled) {
      expect(enrolled).toMatchObject({ status: 'ENROLLED', card_data: { lfd: '0002' } });
      vaultedToken = enrolled.vaulted_token ?? undefined;
    }

    const idempotencyKey = unique('res-enroll');
    const first = await expectImplementedOr501('enrollPaymentMethod', payorch.paymentMethods.enroll(customerId, body, { idempotencyKey }));
    expect(rec.last().headers.get('x-idempotency-key')).toBe(idempotencyKey);
    if (first) {
      const again = await payorch.paymentMethods.enroll(customerId, body, { idempotencyKey });
      expect(again.vaulted_token).toBe(first.vaulted_token);
      // the same key with another body: 422 IDEMPOTENCY_KEY_REUSED
      const err = await thrown(payorch.paymentMethods.enroll(customerId, { ...body, country: 'MX' }, { idempotencyKey }));
      expect(err).toMatchObject({ status: 422, code: 'IDEMPOTENCY_KEY_REUSED' });
    }
  });

  it('paymentMethods.enroll for an unknown customer throws 404 CUSTOMER_NOT_FOUND', async () => {
    const call = payorch.paymentMethods.enroll(crypto.randomUUID(), { account_id: server().sandbox.account_id, country: 'BR', type: 'CARD', card_data: { number: '4507990000000002', security_code: '123', ...futureExpiry() } });
    const err = await expectImplementedOr501('enrollPaymentMethod', errorOf(call));
    if (err) expect(err).toMatchObject({ status: 404, code: 'CUSTOMER_NOT_FOUND' });
  });

  it('paymentMethods.list returns the customer’s methods', async () => {
    const list = await expectImplementedOr501('listPaymentMethods', payorch.paymentMethods.list(customerId));
    if (list) expect(list.payment_methods.map((m) => m.vaulted_token)).toContain(vaultedToken);
    const page = await expectImplementedOr501('listPaymentMethods', payorch.paymentMethods.list(customerId, { limit: 1 }));
    if (page) expect(page).toMatchObject({ has_more: true });
  });

  it('payments.create processes a payment; payments.retrieve reads it back', async () => {
    const payment = await expectImplementedOr501(
      'createPayment',
      payorch.payments.create({
        account_id: server().sandbox.account_id,
        description: 'Resource layer order',
        country: 'BR',
        merchant_order_id: unique('res-order'),
        amount: { currency: 'BRL', value: 42 },
        customer_payer: { id: customerId },
        payment_method: vaultedToken
          ? { type: 'CARD', vaulted_token: vaultedToken }
          : { type: 'CARD', detail: { card: { card_data: { number: '4507990000000002', holder_name: 'GRACE HOPPER', security_code: '123', ...futureExpiry() } } } },
      }),
    );
    expect(rec.last().headers.get('x-idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
    if (payment) {
      expect(payment.status).toBe('SUCCEEDED');
      paymentId = payment.id;
    }
    const read = await expectImplementedOr501('getPayment', payorch.payments.retrieve(paymentId, { raw_response: true }));
    expect(rec.last().route).toBe('GET /payments/{payment_id}');
    if (read) expect(read).toMatchObject({ id: paymentId, transactions: [expect.objectContaining({ type: 'PURCHASE' })] });
  });

  it('payments.retrieve of an unknown payment throws 404 PAYMENT_NOT_FOUND', async () => {
    const err = await expectImplementedOr501('getPayment', errorOf(payorch.payments.retrieve(crypto.randomUUID())));
    if (err) expect(err).toMatchObject({ status: 404, code: 'PAYMENT_NOT_FOUND' });
  });

  it('disputes.submit and disputes.addEvidence send PDF evidence built with evidenceFromBytes', async () => {
    const injected = await expectImplementedOr501(
      'createSandboxChargeback',
      payorch.POST('/sandbox/payments/{payment_id}/chargebacks', { params: { path: { payment_id: paymentId } }, body: {} }),
      201,
    );
    if (injected) chargebackId = injected.data!.id;

    const evidence = [evidenceFromBytes(tinyPdf(), { file_name: 'receipt.pdf', content_category: 'RECEIPT' })];
    const disputed = await expectImplementedOr501('disputeChargeback', payorch.disputes.submit(paymentId, chargebackId, { evidence }));
    expect(rec.last().headers.get('x-idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
    if (disputed) expect(disputed).toMatchObject({ status: 'IN_DISPUTE', sub_status: 'PENDING_REVIEW', transactions: { id: chargebackId } });

    const more = [evidenceFromBytes(tinyPdf('Signed terms'), { file_name: 'terms.pdf', content_category: 'TERMS_AND_CONDITIONS' })];
    const added = await expectImplementedOr501('addDisputeEvidence', payorch.disputes.addEvidence(paymentId, chargebackId, { evidence: more }, { idempotencyKey: unique('evidence') }));
    expect(rec.last().headers.get('x-idempotency-key')).toMatch(/^evidence-/);
    if (added) expect(added).toMatchObject({ status: 'IN_DISPUTE', sub_status: 'PENDING_REVIEW' });
  });
});

describe('payments.capture, refund, cancelOrRefund and cancel', () => {
  async function authorized(): Promise<{ id: string; authorization: string }> {
    const customer = await payorch.customers.create({ merchant_customer_id: unique('res-auth') });
    const payment = await payorch.payments.create({
      account_id: server().sandbox.account_id,
      description: 'Authorize now, capture later',
      country: 'BR',
      merchant_order_id: unique('res-auth-order'),
      amount: { currency: 'BRL', value: 80 },
      customer_payer: { id: customer.id },
      payment_method: { type: 'CARD', detail: { card: { card_data: { number: '4507990000000002', holder_name: 'GRACE HOPPER', security_code: '123', ...futureExpiry() }, capture: false } } },
    });
    const read = await payorch.payments.retrieve(payment.id);
    expect(read).toMatchObject({ status: 'PENDING', sub_status: 'AUTHORIZED' });
    return { id: payment.id, authorization: read.transactions.find((t) => t.type === 'AUTHORIZE')!.id };
  }

  it('capture, then refund part and cancel-or-refund the rest, each with a generated key', async () => {
    const { id, authorization } = await authorized();
    const captured = await payorch.payments.capture(id, authorization);
    expect(rec.last().route).toBe('POST /payments/{payment_id}/transactions/{transaction_id}/capture');
    expect(rec.last().headers.get('x-idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
    expect(captured).toMatchObject({ status: 'SUCCEEDED', sub_status: 'CAPTURED', amount: { captured: 80 } });
    const capture = captured.transactions.find((t) => t.type === 'CAPTURE')!.id;
    const part = await payorch.payments.refund(id, capture, { amount: { currency: 'BRL', value: 30 } }, { idempotencyKey: unique('refund') });
    expect(rec.last().headers.get('x-idempotency-key')).toMatch(/^refund-/);
    expect(part).toMatchObject({ sub_status: 'PARTIALLY_REFUNDED', amount: { refunded: 30 } });
    const rest = await payorch.payments.cancelOrRefund(id);
    expect(rec.last().headers.get('x-idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
    expect(rest).toMatchObject({ status: 'REFUNDED', amount: { refunded: 80 } });
    const err = await thrown(payorch.payments.refund(id, capture, { amount: { currency: 'BRL', value: 1 } }));
    expect(err).toMatchObject({ status: 409, code: 'INVALID_STATUS' });
  });

  it('cancel voids an authorization; an amount over it is 422 INVALID_AMOUNT', async () => {
    const { id, authorization } = await authorized();
    const err = await thrown(payorch.payments.capture(id, authorization, { amount: { currency: 'BRL', value: 80.01 } }));
    expect(err).toMatchObject({ status: 422, code: 'INVALID_AMOUNT' });
    expect(await payorch.payments.cancel(id, authorization, { reason: 'REQUESTED_BY_CUSTOMER' })).toMatchObject({ status: 'CANCELED', sub_status: 'CANCELED' });
  });
});

describe('admin resources', () => {
  it('organizations.create, accounts.create, apiKeys.create and apiKeys.revoke', async () => {
    const admin = adminClient();
    const org = await admin.organizations.create({ name: 'Resource admin test', pci_certified: true });
    expect(org).toMatchObject({ name: 'Resource admin test', pci_certified: true });
    const account = await admin.accounts.create(org.organization_id, { name: 'Second' });
    expect(account.name).toBe('Second');
    const pair = await admin.apiKeys.create(org.organization_id);
    expect(pair.public_api_key).not.toBe(org.public_api_key);
    await expect(admin.apiKeys.revoke(org.organization_id, pair.public_api_key)).resolves.toBeUndefined();
    const err = await thrown(admin.apiKeys.revoke(crypto.randomUUID(), pair.public_api_key));
    expect(err.status).toBe(404);
  });
});

describe('checkoutSessions, tokens, customerSessions and paymentLinks', () => {
  const card = () => ({ number: '4507990000000002', holder_name: 'MARIA SILVA', security_code: '123', ...futureExpiry() });

  it('a session, its token and the payment with it; a replay throws 409 TOKEN_ALREADY_USED', async () => {
    const session = await payorch.checkoutSessions.create({
      account_id: server().sandbox.account_id, merchant_order_id: unique('order'), payment_description: 'Shoes', country: 'BR', amount: { currency: 'BRL', value: 99 },
    });
    expect(await payorch.checkoutSessions.retrieve(session.checkout_session)).toEqual(session);
    expect((await payorch.checkoutSessions.update(session.checkout_session, { amount: { currency: 'BRL', value: 100 } })).amount.value).toBe(100);
    expect((await payorch.checkoutSessions.paymentMethods(session.checkout_session)).length).toBe(1);
    const token = await payorch.checkoutSessions.createToken(session.checkout_session, { payment_method: { type: 'CARD', card: card() } });
    const body = {
      account_id: session.account_id, description: 'Shoes', country: 'BR' as const, merchant_order_id: session.merchant_order_id, amount: { currency: 'BRL', value: 100 },
      customer_payer: {}, payment_method: { type: 'CARD' as const, token: token.token },
    };
    expect((await payorch.payments.create(body)).status).toBe('SUCCEEDED');
    const err = await thrown(payorch.payments.create(body));
    expect(err).toMatchObject({ status: 409, code: 'TOKEN_ALREADY_USED' });
  });

  it('tokens.create, customerSessions.create and enrollPaymentMethod, paymentLinks.create, retrieve and cancel', async () => {
    expect((await payorch.tokens.create({ account_id: server().sandbox.account_id, card_data: card() })).amount).toBeNull();
    const customer = await payorch.customers.create({ merchant_customer_id: unique('cs') });
    const cs = await payorch.customerSessions.create({ account_id: server().sandbox.account_id, country: 'BR', customer_id: customer.id });
    const method = await payorch.customerSessions.enrollPaymentMethod(cs.customer_session, { account_id: server().sandbox.account_id, payment_method_type: 'CARD', country: 'BR', card_data: card() });
    expect(method.status).toBe('ENROLLED');
    const link = await payorch.paymentLinks.create({ account_id: server().sandbox.account_id, country: 'BR', amount: { currency: 'BRL', value: 5 } });
    expect(await payorch.paymentLinks.retrieve(link.code)).toEqual(link);
    expect((await payorch.paymentLinks.cancel(link.code)).status).toBe('CANCELED');
    const missing = await thrown(payorch.paymentLinks.retrieve(crypto.randomUUID()));
    expect(missing).toMatchObject({ status: 404, code: 'PAYMENT_LINK_NOT_FOUND' });
  });
});
