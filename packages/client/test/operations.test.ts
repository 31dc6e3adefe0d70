/**
 * Every operation of the spec through the raw typed client (`client.GET/POST/PATCH/DELETE`) against a
 * real server: statuses, `{ data, error, response }` shapes, credentials and idempotency headers.
 * The last test checks that this file exercised every operation the spec declares.
 * Operations still being built may answer 501: accepted only through expectImplementedOr501.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createPayorchClient, evidenceFromBytes, verifyWebhook, WebhookVerificationError, type Schemas } from '../src/index.js';
import { adminClient, futureExpiry, recorder, sandboxClient, server, specOperations, unique } from './support/clients.js';
import { expectEventDeliveredOrNotYetEmitted, expectImplementedOr501 } from './support/not-implemented.js';
import { startReceiver } from './support/receiver.js';
import { tinyPdf } from './support/pdf.js';

const rec = recorder();
const client = sandboxClient();
client.use(rec.middleware);
const admin = adminClient();
admin.use(rec.middleware);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('health', () => {
  it('getHealth: GET /healthz answers ok without credentials', async () => {
    const { data, error, response } = await client.GET('/healthz');
    expect(error).toBeUndefined();
    expect(response.status).toBe(200);
    expect(data).toEqual({ status: 'ok' });
  });

  it('getReadiness: GET /readyz reports the database', async () => {
    const { data, response } = await client.GET('/readyz');
    expect(response.status).toBe(200);
    expect(data).toEqual({ status: 'ok', database: 'ok' });
  });
});

describe('admin API (createPayorchAdminClient)', () => {
  let org: Schemas['OrganizationCreated'];

  it('createOrganization: 201 with a key pair that works on the merchant API', async () => {
    const { data, error, response } = await admin.POST('/admin/organizations', { body: { name: 'Client test merchant', pci_certified: false } });
    expect(error).toBeUndefined();
    expect(response.status).toBe(201);
    expect(data).toMatchObject({ name: 'Client test merchant', pci_certified: false, organization_id: expect.stringMatching(UUID) });
    org = data!;
    expect(rec.last().headers.get('admin-api-key')).toBe(server().adminApiKey);

    const merchant = createPayorchClient({ baseUrl: server().baseUrl, publicApiKey: org.public_api_key, privateSecretKey: org.private_secret_key });
    const created = await merchant.POST('/customers', { body: { merchant_customer_id: unique('org-customer') } });
    expect(created.response.status).toBe(201);
  });

  it('createOrganization with a wrong admin key: 401, error narrowed to the Problem', async () => {
    const { createPayorchAdminClient } = await import('../src/index.js');
    const wrong = createPayorchAdminClient({ baseUrl: server().baseUrl, adminApiKey: 'not-the-admin-key-0123456789abcdef' });
    const { data, error, response } = await wrong.POST('/admin/organizations', { body: { name: 'Nope' } });
    expect(data).toBeUndefined();
    expect(response.status).toBe(401);
    expect(error).toMatchObject({ status: 401, code: 'INVALID_CREDENTIALS', request_id: response.headers.get('x-request-id') });
  });

  it('createAccount: 201 with a new account id', async () => {
    const { data, response } = await admin.POST('/admin/organizations/{organization_id}/accounts', {
      params: { path: { organization_id: org.organization_id } },
      body: { name: 'Second account' },
    });
    expect(response.status).toBe(201);
    expect(data).toMatchObject({ name: 'Second account', account_id: expect.stringMatching(UUID) });
    expect(data!.account_id).not.toBe(org.account_id);
  });

  it('createApiKey then revokeApiKey: the new pair works until it is revoked (204), then 401', async () => {
    const issued = await admin.POST('/admin/organizations/{organization_id}/api-keys', { params: { path: { organization_id: org.organization_id } } });
    expect(issued.response.status).toBe(201);
    const pair = issued.data!;
    const merchant = createPayorchClient({ baseUrl: server().baseUrl, publicApiKey: pair.public_api_key, privateSecretKey: pair.private_secret_key });
    expect((await merchant.POST('/customers', { body: { merchant_customer_id: unique('rotated') } })).response.status).toBe(201);

    const revoked = await admin.DELETE('/admin/organizations/{organization_id}/api-keys/{public_api_key}', {
      params: { path: { organization_id: org.organization_id, public_api_key: pair.public_api_key } },
    });
    expect(revoked.response.status).toBe(204);
    expect(revoked.data).toBeUndefined();

    const refused = await merchant.POST('/customers', { body: { merchant_customer_id: unique('revoked') } });
    expect(refused.response.status).toBe(401);
    expect(refused.error?.code).toBe('INVALID_CREDENTIALS');
  });
});

describe('customers', () => {
  it('createCustomer: 201 with the credentials headers on the request', async () => {
    const merchant_customer_id = unique('cus');
    const { data, error, response } = await client.POST('/customers', {
      body: { merchant_customer_id, first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', country: 'BR' },
    });
    expect(error).toBeUndefined();
    expect(response.status).toBe(201);
    expect(data).toMatchObject({ id: expect.stringMatching(UUID), merchant_customer_id, first_name: 'Ada', country: 'BR' });
    const sent = rec.last().headers;
    expect(sent.get('public-api-key')).toBe(server().sandbox.public_api_key);
    expect(sent.get('private-secret-key')).toBe(server().sandbox.private_secret_key);
    // createCustomer does not declare X-Idempotency-Key: none is added.
    expect(sent.has('x-idempotency-key')).toBe(false);
  });

  it('createCustomer twice: 409 CUSTOMER_ID_DUPLICATED with existing_customer_id', async () => {
    const merchant_customer_id = unique('dup');
    const first = await client.POST('/customers', { body: { merchant_customer_id } });
    const second = await client.POST('/customers', { body: { merchant_customer_id } });
    expect(second.response.status).toBe(409);
    expect(second.error).toMatchObject({ code: 'CUSTOMER_ID_DUPLICATED', existing_customer_id: first.data!.id });
  });

  it('createCustomer with a body the spec refuses: 400 INVALID_REQUEST naming the field', async () => {
    // @ts-expect-error merchant_customer_id must be a string (sent anyway to see the server's answer)
    const { error, response } = await client.POST('/customers', { body: { merchant_customer_id: 42 } });
    expect(response.status).toBe(400);
    expect(error?.code).toBe('INVALID_REQUEST');
    expect(error?.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path: '/body/merchant_customer_id' })]));
  });
});

describe('vault, payments and disputes (one flow, in order)', () => {
  let customerId: string;
  let vaultedToken: string | undefined;
  let paymentId: string = crypto.randomUUID(); // replaced by the created payment's id once createPayment works
  let chargebackId: string = crypto.randomUUID();
  let etag: string | null = null;
  const evidence = [evidenceFromBytes(tinyPdf(), { file_name: 'receipt.pdf', content_category: 'RECEIPT' })];

  it('enrollPaymentMethod: a generated X-Idempotency-Key, a vaulted card without its number', async () => {
    const customer = await client.POST('/customers', { body: { merchant_customer_id: unique('vault') } });
    customerId = customer.data!.id;
    const result = await expectImplementedOr501(
      'enrollPaymentMethod',
      client.POST('/customers/{customer_id}/payment-methods', {
        params: { path: { customer_id: customerId } },
        body: {
          account_id: server().sandbox.account_id,
          country: 'BR',
          type: 'CARD',
          card_data: { number: '4507990000000002', holder_name: 'ADA LOVELACE', security_code: '123', ...futureExpiry() },
        },
      }),
      201,
    );
    const key = rec.last().headers.get('x-idempotency-key');
    expect(key).toMatch(UUID);
    if (result) {
      expect(result.data).toMatchObject({ status: 'ENROLLED', type: 'CARD', idempotency_key: key, card_data: { lfd: '0002' } });
      expect(JSON.stringify(result.data)).not.toContain('4507990000000002');
      vaultedToken = result.data!.vaulted_token ?? undefined;
    }
  });

  it('enrollPaymentMethod with the caller’s own key: sent unchanged, a retry replays the stored answer', async () => {
    const key = unique('enroll-key');
    const call = () =>
      client.POST('/customers/{customer_id}/payment-methods', {
        params: { path: { customer_id: customerId }, header: { 'X-Idempotency-Key': key } },
        body: { account_id: server().sandbox.account_id, country: 'BR', type: 'CARD', card_data: { number: '5252440000000002', security_code: '123', ...futureExpiry() } },
      });
    const first = await expectImplementedOr501('enrollPaymentMethod', call(), 201);
    expect(rec.last().headers.get('x-idempotency-key')).toBe(key);
    if (first) {
      const again = await call();
      expect(again.response.status).toBe(201);
      expect(again.response.headers.get('idempotent-replayed')).toBe('true');
      expect(again.data!.vaulted_token).toBe(first.data!.vaulted_token);
    }
  });

  it('listPaymentMethods: the customer’s methods, newest first', async () => {
    const result = await expectImplementedOr501(
      'listPaymentMethods',
      client.GET('/customers/{customer_id}/payment-methods', { params: { path: { customer_id: customerId } } }),
      200,
    );
    if (result) {
      expect(result.data!.payment_methods.length).toBe(2);
      expect(result.data!.payment_methods.map((m) => m.vaulted_token)).toContain(vaultedToken);
    }
    const paged = await expectImplementedOr501(
      'listPaymentMethods',
      client.GET('/customers/{customer_id}/payment-methods', { params: { path: { customer_id: customerId }, query: { limit: 1 } } }),
      200,
    );
    if (paged) expect(paged.data).toMatchObject({ has_more: true, payment_methods: [expect.any(Object)] });
  });

  it('createPayment: 201 SUCCEEDED, with a generated idempotency key', async () => {
    const payment_method: Schemas['CreatePaymentRequest']['payment_method'] = vaultedToken
      ? { type: 'CARD', vaulted_token: vaultedToken }
      : { type: 'CARD', detail: { card: { card_data: { number: '4507990000000002', holder_name: 'ADA LOVELACE', security_code: '123', ...futureExpiry() } } } };
    const result = await expectImplementedOr501(
      'createPayment',
      client.POST('/payments', {
        body: {
          account_id: server().sandbox.account_id,
          description: 'Client test order',
          country: 'BR',
          merchant_order_id: unique('order'),
          amount: { currency: 'BRL', value: 150.5 },
          customer_payer: { id: customerId },
          payment_method,
          workflow: 'DIRECT',
        },
      }),
      201,
    );
    expect(rec.last().headers.get('x-idempotency-key')).toMatch(UUID);
    if (result) {
      expect(result.data).toMatchObject({ status: 'SUCCEEDED', amount: { value: 150.5, currency: 'BRL' } });
      paymentId = result.data!.id;
    }
  });

  it('getPayment: 200 with transactions and an ETag; If-None-Match answers 304', async () => {
    const result = await expectImplementedOr501(
      'getPayment',
      client.GET('/payments/{payment_id}', { params: { path: { payment_id: paymentId }, query: { transactions_history: true } } }),
      200,
    );
    if (result) {
      expect(result.data).toMatchObject({ id: paymentId, transactions: [expect.objectContaining({ type: 'PURCHASE' })] });
      etag = result.response.headers.get('etag');
      expect(etag).toBeTruthy();
      const unchanged = await client.GET('/payments/{payment_id}', {
        params: { path: { payment_id: paymentId }, query: { transactions_history: true }, header: { 'If-None-Match': etag! } },
      });
      expect(unchanged.response.status).toBe(304);
    }
  });

  it('createSandboxChargeback: 201 a CHARGEBACK transaction', async () => {
    const result = await expectImplementedOr501(
      'createSandboxChargeback',
      client.POST('/sandbox/payments/{payment_id}/chargebacks', { params: { path: { payment_id: paymentId } }, body: { reason: 'REQUESTED_BY_CUSTOMER' } }),
      201,
    );
    if (result) {
      expect(result.data).toMatchObject({ type: 'CHARGEBACK', status: 'CREATED', reason: 'REQUESTED_BY_CUSTOMER' });
      chargebackId = result.data!.id;
    }
  });

  it('disputeChargeback: 200 IN_DISPUTE / PENDING_REVIEW with the chargeback as `transactions`', async () => {
    const result = await expectImplementedOr501(
      'disputeChargeback',
      client.POST('/payments/{payment_id}/transactions/{transaction_id}/dispute', {
        params: { path: { payment_id: paymentId, transaction_id: chargebackId } },
        body: { account_id: server().sandbox.account_id, evidence },
      }),
      200,
    );
    expect(rec.last().headers.get('x-idempotency-key')).toMatch(UUID);
    if (result) {
      expect(result.data).toMatchObject({ id: paymentId, status: 'IN_DISPUTE', sub_status: 'PENDING_REVIEW', transactions: { id: chargebackId, type: 'CHARGEBACK' } });
    }
  });

  it('addDisputeEvidence: PATCH adds evidence while PENDING_REVIEW', async () => {
    const result = await expectImplementedOr501(
      'addDisputeEvidence',
      client.PATCH('/payments/{payment_id}/transactions/{transaction_id}/dispute', {
        params: { path: { payment_id: paymentId, transaction_id: chargebackId } },
        body: { evidence: [evidenceFromBytes(tinyPdf('Proof of delivery'), { file_name: 'delivery.pdf', content_category: 'PROOF_OF_DELIVERY' })] },
      }),
      200,
    );
    expect(rec.last().route).toBe('PATCH /payments/{payment_id}/transactions/{transaction_id}/dispute');
    expect(rec.last().headers.get('x-idempotency-key')).toMatch(UUID);
    if (result) expect(result.data).toMatchObject({ status: 'IN_DISPUTE', sub_status: 'PENDING_REVIEW' });
  });

  it('resolveSandboxDispute: WON returns the payment to SUCCEEDED', async () => {
    const result = await expectImplementedOr501(
      'resolveSandboxDispute',
      client.POST('/sandbox/payments/{payment_id}/disputes/resolve', { params: { path: { payment_id: paymentId } }, body: { outcome: 'WON' } }),
      200,
    );
    if (result) {
      expect(result.data).toMatchObject({ id: paymentId, status: 'SUCCEEDED' });
      const after = await client.GET('/payments/{payment_id}', { params: { path: { payment_id: paymentId }, header: { 'If-None-Match': etag ?? '"x"' } } });
      expect(after.response.status).toBe(200);
    }
  });
});

describe('asynchronous payment methods', () => {
  it('settleSandboxPendingPayment: a PIX payment PENDING with its QR code, then paid → SUCCEEDED', async () => {
    const created = await client.POST('/payments', {
      body: {
        account_id: server().sandbox.account_id,
        description: 'Client PIX order',
        country: 'BR',
        merchant_order_id: unique('pix-order'),
        amount: { currency: 'BRL', value: 42 },
        customer_payer: { first_name: 'Ana' },
        payment_method: { type: 'PIX' },
      },
    });
    expect(created.response.status).toBe(201);
    expect(created.data).toMatchObject({ status: 'PENDING', sub_status: 'PENDING' });
    expect(created.data!.payment_method.payment_method_detail.bank_transfer!.qr_code).toMatch(/^000201/);
    const paid = await client.POST('/sandbox/payments/{payment_id}/outcome', { params: { path: { payment_id: created.data!.id } }, body: { outcome: 'PAY' } });
    expect(paid.response.status).toBe(200);
    expect(paid.data).toMatchObject({ id: created.data!.id, status: 'SUCCEEDED', sub_status: 'APPROVED' });
    const again = await client.POST('/sandbox/payments/{payment_id}/outcome', { params: { path: { payment_id: created.data!.id } }, body: { outcome: 'PAY' } });
    expect(again.error).toMatchObject({ status: 409, code: 'INVALID_STATUS' });
  });
});

describe('payment lifecycle: capture, cancel, refund, cancel-or-refund', () => {
  /** An authorization only (capture: false) and its AUTHORIZE transaction, through the raw client. */
  async function authorized(value = 60): Promise<{ paymentId: string; transactionId: string }> {
    const customer = await client.POST('/customers', { body: { merchant_customer_id: unique('lifecycle') } });
    const created = await client.POST('/payments', {
      body: {
        account_id: server().sandbox.account_id,
        description: 'Client lifecycle order',
        country: 'BR',
        merchant_order_id: unique('lifecycle-order'),
        amount: { currency: 'BRL', value },
        customer_payer: { id: customer.data!.id },
        payment_method: { type: 'CARD', detail: { card: { card_data: { number: '4507990000000002', holder_name: 'ADA LOVELACE', security_code: '123', ...futureExpiry() }, capture: false } } },
      } as never,
    });
    expect(created.response.status).toBe(201);
    const read = await client.GET('/payments/{payment_id}', { params: { path: { payment_id: (created.data as { id: string }).id } } });
    return { paymentId: read.data!.id, transactionId: read.data!.transactions.find((t) => t.type === 'AUTHORIZE')!.id };
  }

  it('capturePayment 200 and refundPayment 200, then cancelOrRefundPayment 201; keys generated', async () => {
    const { paymentId, transactionId } = await authorized();
    const captured = await client.POST('/payments/{payment_id}/transactions/{transaction_id}/capture', {
      params: { path: { payment_id: paymentId, transaction_id: transactionId } },
      body: { amount: { currency: 'BRL', value: 50 } },
    });
    expect(captured.response.status).toBe(200);
    expect(rec.last().headers.get('x-idempotency-key')).toMatch(UUID);
    expect(captured.data).toMatchObject({ status: 'SUCCEEDED', sub_status: 'PARTIALLY_CAPTURED' });
    const capture = captured.data!.transactions.find((t) => t.type === 'CAPTURE')!.id;
    const refunded = await client.POST('/payments/{payment_id}/transactions/{transaction_id}/refund', {
      params: { path: { payment_id: paymentId, transaction_id: capture } },
      body: { amount: { currency: 'BRL', value: 10 } },
    });
    expect(refunded.response.status).toBe(200);
    expect(refunded.data).toMatchObject({ sub_status: 'PARTIALLY_REFUNDED', amount: { refunded: 10 } });
    const rest = await client.POST('/payments/{payment_id}/cancel-or-refund', { params: { path: { payment_id: paymentId } }, body: {} });
    expect(rest.response.status).toBe(201);
    expect(rest.data).toMatchObject({ status: 'REFUNDED', amount: { refunded: 50 } });
  });

  it('cancelPayment 200; a second cancel is a 409 INVALID_STATUS problem', async () => {
    const { paymentId, transactionId } = await authorized();
    const path = { payment_id: paymentId, transaction_id: transactionId };
    const canceled = await client.POST('/payments/{payment_id}/transactions/{transaction_id}/cancel', { params: { path }, body: {} });
    expect(canceled.response.status).toBe(200);
    expect(canceled.data).toMatchObject({ status: 'CANCELED', sub_status: 'CANCELED' });
    const again = await client.POST('/payments/{payment_id}/transactions/{transaction_id}/cancel', { params: { path }, body: {} });
    expect(again.response.status).toBe(409);
    expect(again.error).toMatchObject({ code: 'INVALID_STATUS' });
  });
});

describe('provider notifications', () => {
  it('receiveProviderNotification with a wrong signature: 401, nothing written', async () => {
    const result = await expectImplementedOr501(
      'receiveProviderNotification',
      client.POST('/providers/{provider_id}/notifications', {
        params: {
          path: { provider_id: 'sandbox' },
          header: { 'webhook-id': unique('msg'), 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,bm90LWEtc2lnbmF0dXJl' },
        },
        body: {
          id: unique('evt'),
          type: 'CHARGEBACK',
          created_at: new Date().toISOString(),
          data: { payment_id: crypto.randomUUID(), provider_transaction_id: 'prov-1', amount: 10, reason: 'REQUESTED_BY_CUSTOMER' },
        },
      }),
      401,
    );
    if (result) expect(result.error?.code).toBe('INVALID_CREDENTIALS');
  });

  it('receiveConnectionNotification without a valid signature (or for a connection that does not exist): 401, nothing written', async () => {
    const result = await expectImplementedOr501(
      'receiveConnectionNotification',
      client.POST('/provider-notifications/{connection_id}', {
        params: { path: { connection_id: crypto.randomUUID() } },
        body: { id: unique('evt'), type: 'charge.refunded', data: { object: { id: 'ch_1' } } },
      }),
      401,
    );
    if (result) expect(result.error?.code).toBe('INVALID_CREDENTIALS');
  });
});

describe('webhook endpoints and verifyWebhook on real deliveries', () => {
  // An organization of its own, so no other test's events reach this receiver.
  let hooks: ReturnType<typeof createPayorchClient>;
  let accountId: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let endpoint: Schemas['WebhookEndpointCreated'];
  let deliveryId: string | undefined;
  let firstSecret: string;
  afterAll(async () => receiver?.close());

  it('createWebhookEndpoint: 201 with a whsec_ signing secret', async () => {
    const org = (await admin.POST('/admin/organizations', { body: { name: 'Webhook receiver', pci_certified: true } })).data!;
    hooks = createPayorchClient({ baseUrl: server().baseUrl, publicApiKey: org.public_api_key, privateSecretKey: org.private_secret_key });
    hooks.use(rec.middleware);
    accountId = org.account_id;
    receiver = await startReceiver();
    const { data, response } = await hooks.POST('/webhook-endpoints', { body: { url: receiver.url, events: ['*'], description: 'client tests' } });
    expect(response.status).toBe(201);
    expect(data).toMatchObject({ url: receiver.url, events: ['*'], enabled: true, secret: expect.stringMatching(/^whsec_/) });
    endpoint = data!;
    firstSecret = endpoint.secret;
  });

  it('listWebhookEndpoints and getWebhookEndpoint: without the secret', async () => {
    const list = await hooks.GET('/webhook-endpoints', { params: { query: { limit: 100 } } });
    expect(list.response.status).toBe(200);
    expect(list.data!.webhook_endpoints.map((e) => e.id)).toContain(endpoint.id);
    const one = await hooks.GET('/webhook-endpoints/{webhook_endpoint_id}', { params: { path: { webhook_endpoint_id: endpoint.id } } });
    expect(one.response.status).toBe(200);
    expect(one.data).toMatchObject({ id: endpoint.id, url: receiver.url });
    expect(one.data).not.toHaveProperty('secret');
  });

  it('a payment’s event arrives signed: verifyWebhook accepts it with the endpoint’s secret', async () => {
    const customer = await hooks.POST('/customers', { body: { merchant_customer_id: unique('hook') } });
    const payment = await expectImplementedOr501(
      'createPayment',
      hooks.POST('/payments', {
        body: {
          account_id: accountId,
          description: 'Webhook test order',
          country: 'BR',
          merchant_order_id: unique('hook-order'),
          amount: { currency: 'BRL', value: 12 },
          customer_payer: { id: customer.data!.id },
          payment_method: { type: 'CARD', detail: { card: { card_data: { number: '4507990000000002', holder_name: 'ADA', security_code: '123', ...futureExpiry() } } } },
        },
      }),
      201,
    );
    // Events are recorded in the payment's transaction: if one was, its delivery is listed already.
    const queued = await hooks.GET('/webhook-endpoints/{webhook_endpoint_id}/deliveries', { params: { path: { webhook_endpoint_id: endpoint.id } } });
    expect(queued.response.status).toBe(200);
    const delivery = payment && queued.data!.deliveries.length > 0 ? await receiver.nth(1, 30_000) : undefined;
    if (!expectEventDeliveredOrNotYetEmitted(delivery, 'payment.succeeded')) return;
    const event = await verifyWebhook(delivery.body, delivery.headers, endpoint.secret);
    expect(event).toMatchObject({ type_event: 'payment.succeeded', data: { payment: { id: payment!.data!.id } } });
    await expect(verifyWebhook(delivery.body.replace('succeeded', 'declined'), delivery.headers, endpoint.secret)).rejects.toThrow(WebhookVerificationError);

    // The receiver has the request before the server has its answer and records DELIVERED: read until it did.
    for (const deadline = Date.now() + 30_000; deliveryId === undefined && Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
      const deliveries = await hooks.GET('/webhook-endpoints/{webhook_endpoint_id}/deliveries', {
        params: { path: { webhook_endpoint_id: endpoint.id }, query: { status: 'DELIVERED' } },
      });
      expect(deliveries.response.status).toBe(200);
      deliveryId = deliveries.data!.deliveries.find((d) => d.event_id === delivery.headers['webhook-id'])?.id;
    }
    expect(deliveryId).toBeDefined();
  }, 120_000);

  it('listWebhookDeliveries: 200 (a page of the delivery log)', async () => {
    const { data, response } = await hooks.GET('/webhook-endpoints/{webhook_endpoint_id}/deliveries', { params: { path: { webhook_endpoint_id: endpoint.id }, query: { limit: 10 } } });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ deliveries: expect.any(Array), has_more: expect.any(Boolean) });
  });

  it('rotateWebhookEndpointSecret: during the overlap a redelivery verifies with the old and the new secret', async () => {
    const { data, response } = await hooks.POST('/webhook-endpoints/{webhook_endpoint_id}/rotate-secret', {
      params: { path: { webhook_endpoint_id: endpoint.id } },
      body: { previous_secret_expires_in: 3600 },
    });
    expect(response.status).toBe(200);
    expect(data!.secret).toMatch(/^whsec_/);
    expect(data!.secret).not.toBe(firstSecret);
    if (!deliveryId) return; // no event to redeliver (see the previous test)
    const redelivered = await hooks.POST('/webhook-endpoints/{webhook_endpoint_id}/deliveries/{delivery_id}/redeliver', {
      params: { path: { webhook_endpoint_id: endpoint.id, delivery_id: deliveryId } },
    });
    expect(redelivered.response.status).toBe(202);
    const again = await receiver.nth(2, 30_000);
    expect(again).toBeDefined();
    expect(String(again!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    await expect(verifyWebhook(again!.body, again!.headers, firstSecret)).resolves.toBeTruthy();
    await expect(verifyWebhook(again!.body, again!.headers, data!.secret)).resolves.toBeTruthy();

    const one = await hooks.GET('/webhook-endpoints/{webhook_endpoint_id}/deliveries/{delivery_id}', {
      params: { path: { webhook_endpoint_id: endpoint.id, delivery_id: deliveryId } },
    });
    expect(one.response.status).toBe(200);
    expect(one.data!.attempts.length).toBeGreaterThanOrEqual(1);
  }, 120_000);

  it('getWebhookDelivery and redeliverWebhookDelivery of an unknown delivery: 404 WEBHOOK_DELIVERY_NOT_FOUND', async () => {
    const path = { webhook_endpoint_id: endpoint.id, delivery_id: crypto.randomUUID() };
    const got = await hooks.GET('/webhook-endpoints/{webhook_endpoint_id}/deliveries/{delivery_id}', { params: { path } });
    expect(got.response.status).toBe(404);
    expect(got.error?.code).toBe('WEBHOOK_DELIVERY_NOT_FOUND');
    const redone = await hooks.POST('/webhook-endpoints/{webhook_endpoint_id}/deliveries/{delivery_id}/redeliver', { params: { path } });
    expect(redone.response.status).toBe(404);
    expect(redone.error?.code).toBe('WEBHOOK_DELIVERY_NOT_FOUND');
  });

  it('updateWebhookEndpoint: disabling it', async () => {
    const { data, response } = await hooks.PATCH('/webhook-endpoints/{webhook_endpoint_id}', {
      params: { path: { webhook_endpoint_id: endpoint.id } },
      body: { enabled: false, description: 'paused' },
    });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ id: endpoint.id, enabled: false, description: 'paused' });
  });

  it('deleteWebhookEndpoint: 204, then 404 WEBHOOK_ENDPOINT_NOT_FOUND', async () => {
    const path = { webhook_endpoint_id: endpoint.id };
    const deleted = await hooks.DELETE('/webhook-endpoints/{webhook_endpoint_id}', { params: { path } });
    expect(deleted.response.status).toBe(204);
    const gone = await hooks.GET('/webhook-endpoints/{webhook_endpoint_id}', { params: { path } });
    expect(gone.response.status).toBe(404);
    expect(gone.error?.code).toBe('WEBHOOK_ENDPOINT_NOT_FOUND');
  });
});

describe('managing what was created (issue 15), through the resource methods', () => {
  it('getCustomer, getCustomerByMerchantCustomerId, updateCustomer, deleteCustomer', async () => {
    const created = await client.customers.create({ merchant_customer_id: unique('mng-op') });
    expect(await client.customers.retrieve(created.id)).toEqual(created);
    expect(rec.last().route).toBe('GET /customers/{customer_id}');
    expect(await client.customers.retrieveByMerchantCustomerId(created.merchant_customer_id)).toEqual(created);
    expect(rec.last().route).toBe('GET /customers');
    const { etag } = await client.customers.retrieveWithEtag(created.id);
    expect(await client.customers.update(created.id, { first_name: 'Ada' }, { ifMatch: etag })).toMatchObject({ first_name: 'Ada' });
    expect(rec.last().headers.get('if-match')).toBe(etag);
    await client.customers.delete(created.id);
    expect(rec.last().route).toBe('DELETE /customers/{customer_id}');
  });

  it('getPaymentMethod, unenrollPaymentMethod (a generated idempotency key), listPayments, listCustomers, listEvents, getEvent', async () => {
    const customer = await client.customers.create({ merchant_customer_id: unique('mng-op-pm') });
    const card = await client.paymentMethods.enroll(customer.id, {
      account_id: server().sandbox.account_id,
      country: 'BR',
      type: 'CARD',
      card_data: { number: '4507990000000002', holder_name: 'JOAO SILVA', security_code: '123', ...futureExpiry() },
    });
    expect(await client.paymentMethods.retrieve(customer.id, card.vaulted_token!)).toEqual(card);
    expect((await client.paymentMethods.unenroll(customer.id, card.vaulted_token!)).status).toBe('UNENROLLED');
    expect(rec.last().headers.get('x-idempotency-key')).toMatch(UUID);
    expect((await client.payments.list({ customer_id: customer.id })).payments).toEqual([]);
    const customers = await client.customers.list({ limit: 1 });
    expect(customers.customers).toHaveLength(1);
    expect(customers.has_more).toBe(true);
    const events = await client.events.list({ type: 'enrollment.unenrolled', limit: 1 });
    expect(events.events).toHaveLength(1);
    expect((await client.events.retrieve(events.events[0]!.id)).id).toBe(events.events[0]!.id);
  });
});

describe('routing and connections', () => {
  it('listConnections, updateConnection, listRoutings, getRouting, updateRouting, createRouting (generated key), createConnection, listProviders, deleteConnection', async () => {
    const org = (await admin.POST('/admin/organizations', { body: { name: 'Routing merchant', pci_certified: false } })).data!;
    const own = createPayorchClient({ baseUrl: server().baseUrl, publicApiKey: org.public_api_key, privateSecretKey: org.private_secret_key });
    own.use(rec.middleware);
    const connections = await own.GET('/connections');
    expect(connections.response.status).toBe(200);
    const [a, b] = connections.data!;
    expect([a!.provider_id, b!.provider_id]).toEqual(['SANDBOX_A', 'SANDBOX_B']);
    const patched = await own.PATCH('/connections/{connection_id}', { params: { path: { connection_id: b!.connection_id } }, body: { name: 'B, renamed' } });
    expect(patched.data).toMatchObject({ name: 'B, renamed', enabled: true });

    const list = await own.GET('/routing', { params: { query: { account_id: org.account_id } } });
    expect(list.response.status).toBe(200);
    const routing = list.data![0]!;
    const one = await own.GET('/routing/{routing_id}', { params: { path: { routing_id: routing.id } } });
    expect(one.data).toEqual(routing);
    const renamed = await own.PATCH('/routing/{routing_id}', { params: { path: { routing_id: routing.id } }, body: { name: 'Cards' } });
    expect(renamed.data).toMatchObject({ id: routing.id, name: 'Cards' });

    const account = (await admin.POST('/admin/organizations/{organization_id}/accounts', {
      params: { path: { organization_id: org.organization_id } },
      body: { name: 'Without routing', default_routing: false },
    })).data!;
    const created = await own.POST('/routing', {
      body: { account_id: account.account_id, payment_method: 'CARD', name: 'B only', default_route: { steps: [{ index: 1, provider_id: 'SANDBOX_B', connection_id: b!.connection_id }] } },
    });
    expect(created.response.status).toBe(201);
    expect(rec.last().headers.get('x-idempotency-key')).toMatch(UUID);
    const invalid = await own.PATCH('/routing/{routing_id}', {
      params: { path: { routing_id: created.data!.id } },
      body: { default_route: { steps: [{ index: 1, provider_id: 'SANDBOX_A', connection_id: b!.connection_id }] } },
    });
    expect(invalid.response.status).toBe(422);
    expect(invalid.error).toMatchObject({ code: 'ROUTING_VALIDATION_FAILED', errors: [{ path: 'default_route.steps[0].provider_id' }] });

    // createConnection (generated key), listProviders, deleteConnection: in use → 409, unused → 204.
    const providers = await own.GET('/providers');
    expect(providers.response.status).toBe(200);
    expect(providers.data!.map((p) => p.provider_id).slice(0, 2)).toEqual(['SANDBOX_A', 'SANDBOX_B']);
    const made = await own.POST('/connections', { body: { provider_id: 'SANDBOX_A', name: 'A, second', environment: 'TEST' } });
    expect(made.response.status).toBe(201);
    expect(rec.last().headers.get('x-idempotency-key')).toMatch(UUID);
    expect(made.data).toMatchObject({ provider_id: 'SANDBOX_A', environment: 'TEST', enabled: true });
    const inUse = await own.DELETE('/connections/{connection_id}', { params: { path: { connection_id: b!.connection_id } } });
    expect(inUse.response.status).toBe(409);
    expect(inUse.error).toMatchObject({ code: 'CONNECTION_IN_USE' });
    const removed = await own.DELETE('/connections/{connection_id}', { params: { path: { connection_id: made.data!.connection_id } } });
    expect(removed.response.status).toBe(204);
  });
});

describe('checkout sessions, one-time tokens, customer sessions and payment links', () => {
  const card = () => ({ number: '4507990000000002', holder_name: 'MARIA SILVA', security_code: '123', ...futureExpiry() });

  it('createCheckoutSession, getCheckoutSession, updateCheckoutSession, listCheckoutPaymentMethods, createCheckoutToken; the token pays once', async () => {
    const created = await client.POST('/checkout/sessions', {
      body: { account_id: server().sandbox.account_id, merchant_order_id: unique('order'), payment_description: 'Shoes', country: 'BR', amount: { currency: 'BRL', value: 150.5 }, allowed_origins: ['https://shop.example'] },
    });
    expect(created.response.status).toBe(201);
    const session = created.data!;
    expect(session).toMatchObject({ checkout_session: expect.stringMatching(UUID), status: 'OPEN', allowed_origins: ['https://shop.example'] });
    const read = await client.GET('/checkout/sessions/{checkout_session}', { params: { path: { checkout_session: session.checkout_session } } });
    expect(read.data).toEqual(session);
    const updated = await client.PATCH('/checkout/sessions/{checkout_session}', { params: { path: { checkout_session: session.checkout_session } }, body: { payment_description: 'Red shoes' } });
    expect(updated.data).toMatchObject({ payment_description: 'Red shoes' });
    const methods = await client.GET('/checkout/sessions/{checkout_session}/payment-methods', { params: { path: { checkout_session: session.checkout_session } } });
    expect(methods.data!.map((m) => m.type)).toEqual(['CARD']);

    // The browser's call: the public key alone.
    const browser = createPayorchClient({ baseUrl: server().baseUrl, publicApiKey: server().sandbox.public_api_key, privateSecretKey: 'not-sent' });
    browser.use({ onRequest: ({ request }) => { request.headers.delete('private-secret-key'); return request; } });
    browser.use(rec.middleware);
    const token = await browser.POST('/checkout/sessions/{checkout_session}/token', {
      params: { path: { checkout_session: session.checkout_session } },
      body: { payment_method: { type: 'CARD', card: card() } },
    });
    expect(token.response.status).toBe(201);
    expect(rec.last().headers.get('private-secret-key')).toBeNull();
    expect(token.data).toMatchObject({ token: expect.stringMatching(UUID), amount: { currency: 'BRL', value: 150.5 }, card_data: { lfd: '0002' } });

    const pay = () =>
      client.POST('/payments', {
        body: {
          account_id: session.account_id, description: 'Shoes', country: 'BR', merchant_order_id: session.merchant_order_id, amount: { currency: 'BRL', value: 150.5 },
          customer_payer: {}, workflow: 'SDK_CHECKOUT', checkout: { session: session.checkout_session }, payment_method: { type: 'CARD', token: token.data!.token },
        },
      });
    expect((await pay()).data).toMatchObject({ status: 'SUCCEEDED' });
    const replay = await pay();
    expect(replay.response.status).toBe(409);
    expect(replay.error).toMatchObject({ code: 'TOKEN_ALREADY_USED' });
  });

  it('createToken (PCI-certified server), createCustomerSession and enrollCustomerSessionPaymentMethod', async () => {
    const token = await client.POST('/tokens', { body: { account_id: server().sandbox.account_id, card_data: card() } });
    expect(token.response.status).toBe(201);
    expect(token.data).toMatchObject({ checkout_session: null, amount: null });

    const customer = await client.POST('/customers', { body: { merchant_customer_id: unique('cs') } });
    const cs = await client.POST('/customers/sessions', { body: { account_id: server().sandbox.account_id, country: 'BR', customer_id: customer.data!.id } });
    expect(cs.response.status).toBe(201);
    const enrolled = await client.POST('/customers/sessions/{customer_session}/payment-methods', {
      params: { path: { customer_session: cs.data!.customer_session } },
      body: { account_id: server().sandbox.account_id, payment_method_type: 'CARD', country: 'BR', card_data: card() },
    });
    expect(enrolled.response.status).toBe(201);
    expect(enrolled.data).toMatchObject({ status: 'ENROLLED', type: 'CARD' });
  });

  it('createPaymentLink, getPaymentLink, cancelPaymentLink', async () => {
    const link = await client.POST('/payment-links', { body: { account_id: server().sandbox.account_id, country: 'BR', description: 'Invoice', amount: { currency: 'BRL', value: 250 } } });
    expect(link.response.status).toBe(201);
    expect(link.data).toMatchObject({ status: 'ACTIVE', checkout_url: expect.stringContaining(`/checkout/links/${link.data!.code}`) });
    const read = await client.GET('/payment-links/{code}', { params: { path: { code: link.data!.code } } });
    expect(read.data).toEqual(link.data);
    const canceled = await client.POST('/payment-links/{code}/cancel', { params: { path: { code: link.data!.code } } });
    expect(canceled.data).toMatchObject({ status: 'CANCELED' });
  });
});

describe("Yuno's webhook management (/webhooks): the webhook endpoints in Yuno's shape", () => {
  it('createWebhook, listWebhooks, getWebhook, updateWebhook, deleteWebhook', async () => {
    const org = (await admin.POST('/admin/organizations', { body: { name: 'Yuno webhooks', pci_certified: false } })).data!;
    const yuno = createPayorchClient({ baseUrl: server().baseUrl, publicApiKey: org.public_api_key, privateSecretKey: org.private_secret_key });
    yuno.use(rec.middleware);
    const account_id = org.account_id;
    const created = await yuno.POST('/webhooks', {
      body: { account_id, name: 'Payments listener', url: 'https://merchant.example.com/yuno', payment_triggers: ['CAPTURE', 'REFUND'], api_key: 'listener-key' },
    });
    expect(created.response.status).toBe(201);
    expect(created.data).toMatchObject({ name: 'Payments listener', state: 'ACTIVE', api_key: '***', payment_triggers: ['CAPTURE', 'REFUND'] });
    const id = created.data!.id;

    const listed = await yuno.GET('/webhooks', { params: { query: { account_id } } });
    expect(listed.response.status).toBe(200);
    expect(listed.data!.map((w) => w.id)).toEqual([id]);
    const one = await yuno.GET('/webhooks/{webhook_id}', { params: { path: { webhook_id: id }, query: { account_id } } });
    expect(one.data).toEqual(created.data);

    const updated = await yuno.PATCH('/webhooks/{webhook_id}', { params: { path: { webhook_id: id } }, body: { account_id, state: 'INACTIVE' } });
    expect(updated.response.status).toBe(200);
    expect(updated.data).toMatchObject({ id, state: 'INACTIVE' });

    const deleted = await yuno.DELETE('/webhooks/{webhook_id}', { params: { path: { webhook_id: id }, query: { account_id } } });
    expect(deleted.response.status).toBe(200);
    expect((await yuno.GET('/webhooks/{webhook_id}', { params: { path: { webhook_id: id }, query: { account_id } } })).response.status).toBe(404);
  });
});

describe('coverage', () => {
  it('exercised every operation of the spec', () => {
    const exercised = new Set(rec.calls.map((c) => c.route));
    const missing = [...specOperations()].filter(([route]) => !exercised.has(route)).map(([route, id]) => `${id} (${route})`);
    expect(missing).toEqual([]);
  });
});
