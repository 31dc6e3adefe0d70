/**
 * Cross-tenant isolation, table-driven over every merchant operation of the spec (docs/design.md §2: "a
 * resource of another organization is answered exactly like a missing one: 404"). Organization A (the
 * sandbox) owns one of everything; organization B calls each operation with A's ids. Every probe that
 * names one of A's ids is sent a second time with those ids swapped for fresh UUIDs: B's answer must
 * be the same status and code, so nothing tells B that A's resource exists. Afterwards A's resources
 * are exactly as they were.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Schemas } from '@payorch/types';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from './support/assertions.js';
import { backends, useServer, type Credentials, type TestServer } from './support/harness.js';
import { authorizedPayment, CARDS, createPayment, enrollCard, evidence, injectChargeback, paymentBody, postDispute, postPayment } from './support/payments.js';
import { cardBody } from './support/vault-fixtures.js';

interface Operation { method: string; path: string; idempotent: boolean; merchant: boolean }
interface SpecOperation { operationId?: string; security?: Record<string, string[]>[]; parameters?: { $ref?: string; name?: string }[] }
const require = createRequire(import.meta.url);
const spec = require('@payorch/types/openapi.json') as { security: Record<string, string[]>[]; paths: Record<string, Record<string, SpecOperation>> };

/** Every operation of the spec by operationId; merchant = secured by the public/private key pair. */
const operations: Record<string, Operation> = {};
for (const [path, item] of Object.entries(spec.paths)) {
  for (const [method, op] of Object.entries(item)) {
    if (typeof op !== 'object' || !op.operationId) continue;
    const merchant = (op.security ?? spec.security).some((req) => Object.keys(req).sort().join() === 'privateSecretKey,publicApiKey');
    const idempotent = (op.parameters ?? []).some((p) => p.$ref === '#/components/parameters/IdempotencyKey' || p.name === 'X-Idempotency-Key');
    operations[op.operationId] = { method: method.toUpperCase(), path, idempotent, merchant };
  }
}
const merchantOperations = Object.keys(operations).filter((id) => operations[id]!.merchant).sort();

/** Organization A's resources: each one a call of B must not reach. */
interface A {
  creds: Credentials;
  merchantCustomerId: string;
  customerId: string;
  token: string;
  paymentKey: string;
  /** SUCCEEDED, paid with the vaulted token: a leaked chargeback injection would answer 201. */
  paid: Schemas['CreatedPayment'];
  /** IN_DISPUTE / RECEIVED: a leaked dispute would answer 200. */
  chargedBack: { payment: Schemas['CreatedPayment']; chargeback: Schemas['Transaction'] };
  /** IN_DISPUTE / PENDING_REVIEW: leaked evidence or a leaked resolution would answer 200. */
  disputed: { payment: Schemas['CreatedPayment']; chargeback: Schemas['Transaction'] };
  endpoint: Schemas['WebhookEndpointCreated'];
  delivery: Schemas['WebhookDelivery'];
  /** PENDING / AUTHORIZED: a leaked capture or cancel would answer 200. */
  authorized: Schemas['CreatedPayment'];
  /** A PIX payment PENDING / PENDING (its QR code issued): a leaked sandbox outcome would answer 200. */
  pending: Schemas['CreatedPayment'];
  /** A's CARD routing and A's connection to SANDBOX_A (every organization starts with both). */
  routingId: string;
  connectionId: string;
  /** An OPEN checkout session and an ACTIVE payment link of A. */
  checkoutSession: string;
  paymentLink: string;
}
/** Organization B's own resources, for probes that mix B's ids with one of A's. */
interface B { creds: Credentials; customerId: string; payment: Schemas['Payment']; endpointId: string; paymentBody: Schemas['CreatePaymentRequest'] }

interface Probe {
  what: string;
  params?: Record<string, string>;
  query?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** A problem (asserted on the foreign ids and on unknown ones alike), or a check of its own. */
  expect: { status: number; code: string } | ((res: Response) => Promise<void>);
}

const json = { 'content-type': 'application/json' };
const ids = (list: { id: string }[]) => list.map((x) => x.id);

/** One row per merchant operation: how B calls it with A's ids, and what B must get. */
const table: Record<string, (a: A, b: B) => Probe[]> = {
  createCustomer: (a) => [
    {
      // A 409 CUSTOMER_ID_DUPLICATED here would hand B A's existing_customer_id.
      what: "A's merchant_customer_id is free in B",
      body: { merchant_customer_id: a.merchantCustomerId },
      expect: async (res) => {
        expect(res.status, await res.clone().text()).toBe(201);
        expect(((await res.json()) as Schemas['Customer']).id).not.toBe(a.customerId);
      },
    },
  ],
  enrollPaymentMethod: (a, b) => [
    { what: "A's customer", params: { customer_id: a.customerId }, body: cardBody(b.creds.account_id), expect: { status: 404, code: 'CUSTOMER_NOT_FOUND' } },
    { what: "B's customer, A's account_id (design §2: 403)", params: { customer_id: b.customerId }, body: cardBody(a.creds.account_id), expect: { status: 403, code: 'INVALID_ACCOUNT_ID' } },
  ],
  listPaymentMethods: (a, b) => [
    { what: "A's customer", params: { customer_id: a.customerId }, expect: { status: 404, code: 'CUSTOMER_NOT_FOUND' } },
    { what: "B's customer, A's vaulted_token as cursor", params: { customer_id: b.customerId }, query: `starting_after=${a.token}`, expect: { status: 400, code: 'INVALID_REQUEST' } },
  ],
  createPayment: (a, b) => {
    const mine = (overrides: Partial<Schemas['CreatePaymentRequest']> = {}) => ({ ...b.paymentBody, merchant_order_id: `ORDER-${randomUUID().slice(0, 8)}`, ...overrides });
    return [
      { what: "A's customer", body: mine({ customer_payer: { id: a.customerId } }), expect: { status: 404, code: 'CUSTOMER_NOT_FOUND' } },
      { what: "A's vaulted_token", body: mine({ payment_method: { type: 'CARD', vaulted_token: a.token } }), expect: { status: 404, code: 'PAYMENT_METHOD_NOT_FOUND' } },
      { what: "A's account_id (design §2: 403)", body: mine({ account_id: a.creds.account_id }), expect: { status: 403, code: 'INVALID_ACCOUNT_ID' } },
      {
        // Keys are scoped to the organization: no replay of A's payment, no 422 IDEMPOTENCY_KEY_REUSED.
        what: "A's X-Idempotency-Key",
        body: mine(),
        headers: { 'x-idempotency-key': a.paymentKey },
        expect: async (res) => {
          expect(res.status, await res.clone().text()).toBe(201);
          expect(res.headers.get('idempotent-replayed')).toBeNull();
          const p = (await res.json()) as Schemas['Payment'];
          expect(p.id).not.toBe(a.paid.id);
          expect(p.customer_payer.id).toBe(b.customerId);
        },
      },
    ];
  },
  getPayment: (a) => [
    { what: "A's payment", params: { payment_id: a.paid.id }, query: 'raw_response=true&transactions_history=true', expect: { status: 404, code: 'PAYMENT_NOT_FOUND' } },
  ],
  disputeChargeback: (a, b) => [
    { what: "A's payment and chargeback", params: { payment_id: a.chargedBack.payment.id, transaction_id: a.chargedBack.chargeback.id }, body: { evidence: [evidence()] }, expect: { status: 404, code: 'PAYMENT_NOT_FOUND' } },
    { what: "B's payment, A's chargeback", params: { payment_id: b.payment.id, transaction_id: a.chargedBack.chargeback.id }, body: { evidence: [evidence()] }, expect: { status: 404, code: 'TRANSACTION_NOT_FOUND' } },
  ],
  addDisputeEvidence: (a, b) => [
    { what: "A's disputed payment and chargeback", params: { payment_id: a.disputed.payment.id, transaction_id: a.disputed.chargeback.id }, body: { evidence: [evidence()] }, expect: { status: 404, code: 'PAYMENT_NOT_FOUND' } },
    { what: "B's payment, A's chargeback", params: { payment_id: b.payment.id, transaction_id: a.disputed.chargeback.id }, body: { evidence: [evidence()] }, expect: { status: 404, code: 'TRANSACTION_NOT_FOUND' } },
  ],
  createSandboxChargeback: (a) => [
    { what: "A's succeeded payment", params: { payment_id: a.paid.id }, body: { reason: 'REQUESTED_BY_CUSTOMER' }, expect: { status: 404, code: 'PAYMENT_NOT_FOUND' } },
  ],
  settleSandboxPendingPayment: (a) => [
    { what: "A's pending PIX payment", params: { payment_id: a.pending.id }, body: { outcome: 'PAY' }, expect: { status: 404, code: 'PAYMENT_NOT_FOUND' } },
  ],
  resolveSandboxDispute: (a) => [
    { what: "A's disputed payment", params: { payment_id: a.disputed.payment.id }, body: { outcome: 'LOST' }, expect: { status: 404, code: 'PAYMENT_NOT_FOUND' } },
  ],
  capturePayment: (a, b) => [
    { what: "A's authorization", params: { payment_id: a.authorized.id, transaction_id: a.authorized.transactions.id }, body: {}, expect: { status: 404, code: 'PAYMENT_NOT_FOUND' } },
    { what: "B's payment, A's authorization", params: { payment_id: b.payment.id, transaction_id: a.authorized.transactions.id }, body: {}, expect: { status: 404, code: 'TRANSACTION_NOT_FOUND' } },
  ],
  cancelPayment: (a, b) => [
    { what: "A's authorization", params: { payment_id: a.authorized.id, transaction_id: a.authorized.transactions.id }, body: {}, expect: { status: 404, code: 'PAYMENT_NOT_FOUND' } },
    { what: "B's payment, A's authorization", params: { payment_id: b.payment.id, transaction_id: a.authorized.transactions.id }, body: {}, expect: { status: 404, code: 'TRANSACTION_NOT_FOUND' } },
  ],
  refundPayment: (a, b) => [
    { what: "A's succeeded payment", params: { payment_id: a.paid.id, transaction_id: a.paid.transactions.id }, body: {}, expect: { status: 404, code: 'PAYMENT_NOT_FOUND' } },
    { what: "B's payment, A's purchase", params: { payment_id: b.payment.id, transaction_id: a.paid.transactions.id }, body: {}, expect: { status: 404, code: 'TRANSACTION_NOT_FOUND' } },
  ],
  cancelOrRefundPayment: (a) => [
    { what: "A's succeeded payment", params: { payment_id: a.paid.id }, body: {}, expect: { status: 404, code: 'PAYMENT_NOT_FOUND' } },
    { what: "A's authorization", params: { payment_id: a.authorized.id }, body: {}, expect: { status: 404, code: 'PAYMENT_NOT_FOUND' } },
  ],
  createWebhookEndpoint: (a) => [
    {
      // Nothing in the body can point at A: the same URL is simply B's own endpoint, with its own secret.
      what: "A's endpoint URL",
      body: { url: a.endpoint.url, events: ['*'] },
      expect: async (res) => {
        expect(res.status, await res.clone().text()).toBe(201);
        const created = (await res.json()) as Schemas['WebhookEndpointCreated'];
        expect(created.id).not.toBe(a.endpoint.id);
        expect(created.secret).not.toBe(a.endpoint.secret);
      },
    },
  ],
  listWebhookEndpoints: (a, b) => [
    {
      what: "B's list holds B's endpoints, none of A's",
      query: 'limit=100',
      expect: async (res) => {
        expect(res.status).toBe(200);
        const list = (await res.json()) as Schemas['WebhookEndpointList'];
        expect(ids(list.webhook_endpoints)).toContain(b.endpointId);
        expect(ids(list.webhook_endpoints)).not.toContain(a.endpoint.id);
      },
    },
    { what: "A's endpoint as cursor", query: `starting_after=${a.endpoint.id}`, expect: { status: 400, code: 'INVALID_REQUEST' } },
  ],
  getWebhookEndpoint: (a) => [{ what: "A's endpoint", params: { webhook_endpoint_id: a.endpoint.id }, expect: { status: 404, code: 'WEBHOOK_ENDPOINT_NOT_FOUND' } }],
  updateWebhookEndpoint: (a) => [
    { what: "A's endpoint", params: { webhook_endpoint_id: a.endpoint.id }, body: { url: 'https://attacker.example.com/steal', events: ['*'] }, expect: { status: 404, code: 'WEBHOOK_ENDPOINT_NOT_FOUND' } },
  ],
  deleteWebhookEndpoint: (a) => [{ what: "A's endpoint", params: { webhook_endpoint_id: a.endpoint.id }, expect: { status: 404, code: 'WEBHOOK_ENDPOINT_NOT_FOUND' } }],
  rotateWebhookEndpointSecret: (a) => [
    { what: "A's endpoint", params: { webhook_endpoint_id: a.endpoint.id }, body: { previous_secret_expires_in: 60 }, expect: { status: 404, code: 'WEBHOOK_ENDPOINT_NOT_FOUND' } },
  ],
  listWebhookDeliveries: (a, b) => [
    { what: "A's endpoint", params: { webhook_endpoint_id: a.endpoint.id }, expect: { status: 404, code: 'WEBHOOK_ENDPOINT_NOT_FOUND' } },
    {
      what: "B's endpoint filtered by A's event",
      params: { webhook_endpoint_id: b.endpointId },
      query: `event_id=${a.delivery.event_id}`,
      expect: async (res) => {
        expect(res.status).toBe(200);
        expect(((await res.json()) as Schemas['WebhookDeliveryList']).deliveries).toEqual([]);
      },
    },
    { what: "B's endpoint, A's delivery as cursor", params: { webhook_endpoint_id: b.endpointId }, query: `starting_after=${a.delivery.id}`, expect: { status: 400, code: 'INVALID_REQUEST' } },
  ],
  // Yuno's view of the same endpoints (/webhooks).
  listWebhooks: (a, b) => [
    {
      what: "B's account: B's endpoints only",
      query: `account_id=${b.creds.account_id}`,
      expect: async (res) => {
        expect(res.status).toBe(200);
        const list = (await res.json()) as Schemas['YunoWebhook'][];
        expect(ids(list)).toContain(b.endpointId);
        expect(ids(list)).not.toContain(a.endpoint.id);
      },
    },
    { what: "A's account", query: `account_id=${a.creds.account_id}`, expect: { status: 403, code: 'INVALID_ACCOUNT_ID' } },
  ],
  createWebhook: (a) => [
    {
      what: "A's account_id",
      body: { account_id: a.creds.account_id, name: 'steal', url: 'https://attacker.example.com/steal', payment_triggers: ['PURCHASE'] },
      expect: { status: 403, code: 'INVALID_ACCOUNT_ID' },
    },
  ],
  getWebhook: (a, b) => [{ what: "A's endpoint", params: { webhook_id: a.endpoint.id }, query: `account_id=${b.creds.account_id}`, expect: { status: 404, code: 'WEBHOOK_ENDPOINT_NOT_FOUND' } }],
  updateWebhook: (a, b) => [
    {
      what: "A's endpoint",
      params: { webhook_id: a.endpoint.id },
      body: { account_id: b.creds.account_id, url: 'https://attacker.example.com/steal', payment_triggers: ['PURCHASE'], api_key: 'stolen' },
      expect: { status: 404, code: 'WEBHOOK_ENDPOINT_NOT_FOUND' },
    },
  ],
  deleteWebhook: (a, b) => [{ what: "A's endpoint", params: { webhook_id: a.endpoint.id }, query: `account_id=${b.creds.account_id}`, expect: { status: 404, code: 'WEBHOOK_ENDPOINT_NOT_FOUND' } }],
  createRouting: (a, b) => [
    {
      what: "A's account and connection",
      body: { account_id: a.creds.account_id, payment_method: 'CARD', name: 'x', default_route: { steps: [{ index: 1, provider_id: 'SANDBOX_A', connection_id: a.connectionId }] } },
      expect: { status: 403, code: 'INVALID_ACCOUNT_ID' },
    },
    {
      // B's own account (a second one would be needed for a 201; its CARD routing exists): A's connection is refused first as unknown.
      what: "B's account, A's connection in a step",
      body: { account_id: b.creds.account_id, payment_method: 'CARD', name: 'x', default_route: { steps: [{ index: 1, provider_id: 'SANDBOX_A', connection_id: a.connectionId }] } },
      expect: { status: 422, code: 'ROUTING_VALIDATION_FAILED' },
    },
  ],
  listRoutings: (a) => [{ what: "A's account", query: `account_id=${a.creds.account_id}`, expect: { status: 403, code: 'INVALID_ACCOUNT_ID' } }],
  getRouting: (a) => [{ what: "A's routing", params: { routing_id: a.routingId }, expect: { status: 404, code: 'ROUTING_NOT_FOUND' } }],
  updateRouting: (a) => [{ what: "A's routing", params: { routing_id: a.routingId }, body: { name: 'taken over' }, expect: { status: 404, code: 'ROUTING_NOT_FOUND' } }],
  listConnections: (a) => [
    {
      what: "B's connections, none of A's",
      expect: async (res) => {
        expect(res.status).toBe(200);
        const list = (await res.json()) as Schemas['ConnectionList'];
        expect(list.map((c) => c.provider_id)).toEqual(['SANDBOX_A', 'SANDBOX_B']);
        expect(list.map((c) => c.connection_id)).not.toContain(a.connectionId);
      },
    },
  ],
  updateConnection: (a) => [{ what: "A's connection", params: { connection_id: a.connectionId }, body: { enabled: false }, expect: { status: 404, code: 'CONNECTION_NOT_FOUND' } }],
  // After listConnections (rows run in this order): B's new connection is B's own; A's connections are in the snapshot compared at the end.
  createConnection: () => [
    {
      what: "a connection B creates is B's",
      body: { provider_id: 'SANDBOX_B', name: 'B second', environment: 'TEST' },
      expect: async (res) => {
        expect(res.status, await res.clone().text()).toBe(201);
        expect(((await res.json()) as Schemas['Connection']).provider_id).toBe('SANDBOX_B');
      },
    },
  ],
  deleteConnection: (a) => [{ what: "A's connection", params: { connection_id: a.connectionId }, expect: { status: 404, code: 'CONNECTION_NOT_FOUND' } }],
  listProviders: () => [
    {
      what: 'the providers the service runs, the same for every organization',
      expect: async (res) => {
        expect(res.status).toBe(200);
        expect(((await res.json()) as Schemas['ProviderList']).map((p) => p.provider_id).slice(0, 2)).toEqual(['SANDBOX_A', 'SANDBOX_B']);
      },
    },
  ],
  getCustomer: (a) => [{ what: "A's customer", params: { customer_id: a.customerId }, expect: { status: 404, code: 'CUSTOMER_NOT_FOUND' } }],
  getCustomerByMerchantCustomerId: (a) => [
    {
      // Never A's customer: 404, or B's own customer of that merchant_customer_id (the createCustomer row makes one).
      what: "A's merchant_customer_id",
      query: `merchant_customer_id=${a.merchantCustomerId}`,
      expect: async (res) => {
        const text = await res.text();
        expect([200, 404], text).toContain(res.status);
        expect(text).not.toContain(a.customerId);
      },
    },
  ],
  listCustomers: (a) => [
    {
      what: "B's customers",
      query: 'limit=100',
      expect: async (res) => {
        const text = await res.text();
        expect(res.status, text).toBe(200);
        expect(text).not.toContain(a.customerId);
      },
    },
    { what: "B's customers, A's customer as cursor", query: `starting_after=${a.customerId}`, expect: { status: 400, code: 'INVALID_REQUEST' } },
  ],
  updateCustomer: (a, b) => [
    { what: "A's customer", params: { customer_id: a.customerId }, body: { email: 'attacker@example.com' }, expect: { status: 404, code: 'CUSTOMER_NOT_FOUND' } },
    {
      // Uniqueness is per organization: never a 409 naming A's customer (a 409 for B's own customer of that
      // merchant_customer_id, which the createCustomer row makes, is B's business).
      what: "B's customer renamed to A's merchant_customer_id",
      params: { customer_id: b.customerId },
      body: { merchant_customer_id: a.merchantCustomerId },
      expect: async (res) => {
        const text = await res.text();
        expect([200, 409], text).toContain(res.status);
        expect(text).not.toContain(a.customerId);
      },
    },
  ],
  getPaymentMethod: (a, b) => [
    { what: "A's customer and card", params: { customer_id: a.customerId, payment_method_id: a.token }, expect: { status: 404, code: 'CUSTOMER_NOT_FOUND' } },
    { what: "B's customer, A's card", params: { customer_id: b.customerId, payment_method_id: a.token }, expect: { status: 404, code: 'PAYMENT_METHOD_NOT_FOUND' } },
  ],
  unenrollPaymentMethod: (a, b) => [
    { what: "A's customer and card", params: { customer_id: a.customerId, payment_method_id: a.token }, expect: { status: 404, code: 'CUSTOMER_NOT_FOUND' } },
    { what: "B's customer, A's card", params: { customer_id: b.customerId, payment_method_id: a.token }, expect: { status: 404, code: 'PAYMENT_METHOD_NOT_FOUND' } },
  ],
  listPayments: (a, b) => [
    {
      what: "B's payments by A's order and customer",
      query: `merchant_order_id=${a.paid.merchant_order_id}&customer_id=${a.customerId}`,
      expect: async (res) => {
        expect(res.status, await res.clone().text()).toBe(200);
        expect(((await res.json()) as Schemas['PaymentList']).payments).toEqual([]);
      },
    },
    {
      what: "B's payments by A's order",
      query: `merchant_order_id=${a.paid.merchant_order_id}&limit=100`,
      expect: async (res) => {
        const text = await res.text();
        expect(res.status, text).toBe(200);
        expect(text).not.toContain(a.paid.id);
        expect(((JSON.parse(text)) as Schemas['PaymentList']).payments.every((p) => p.id !== a.paid.id && p.customer_payer.id === b.customerId)).toBe(true);
      },
    },
    { what: "B's payments, A's payment as cursor", query: `starting_after=${a.paid.id}`, expect: { status: 400, code: 'INVALID_REQUEST' } },
  ],
  listEvents: (a) => [
    {
      what: "B's event log filtered by the type of A's events",
      query: 'type=payment.succeeded&limit=100',
      expect: async (res) => {
        const text = await res.text();
        expect(res.status, text).toBe(200);
        for (const id of [a.delivery.event_id, a.paid.id, a.customerId]) expect(text).not.toContain(id);
      },
    },
    { what: "B's event log, A's event as cursor", query: `starting_after=${a.delivery.event_id}`, expect: { status: 400, code: 'INVALID_REQUEST' } },
  ],
  getEvent: (a) => [{ what: "A's event", params: { event_id: a.delivery.event_id }, expect: { status: 404, code: 'EVENT_NOT_FOUND' } }],
  deleteCustomer: (a) => [{ what: "A's customer", params: { customer_id: a.customerId }, expect: { status: 404, code: 'CUSTOMER_NOT_FOUND' } }],
  getWebhookDelivery: (a, b) => [
    { what: "A's endpoint and delivery", params: { webhook_endpoint_id: a.endpoint.id, delivery_id: a.delivery.id }, expect: { status: 404, code: 'WEBHOOK_ENDPOINT_NOT_FOUND' } },
    { what: "B's endpoint, A's delivery", params: { webhook_endpoint_id: b.endpointId, delivery_id: a.delivery.id }, expect: { status: 404, code: 'WEBHOOK_DELIVERY_NOT_FOUND' } },
  ],
  createCheckoutSession: (a) => [
    {
      what: "A's account",
      body: { account_id: a.creds.account_id, merchant_order_id: 'o-1', payment_description: 'x', country: 'BR', amount: { currency: 'BRL', value: 1 } },
      expect: { status: 403, code: 'INVALID_ACCOUNT_ID' },
    },
    {
      what: "B's account, A's customer",
      body: { account_id: '{B}', merchant_order_id: 'o-1', payment_description: 'x', country: 'BR', amount: { currency: 'BRL', value: 1 }, customer_id: a.customerId },
      expect: { status: 404, code: 'CUSTOMER_NOT_FOUND' },
    },
  ],
  getCheckoutSession: (a) => [{ what: "A's session", params: { checkout_session: a.checkoutSession }, expect: { status: 404, code: 'CHECKOUT_SESSION_NOT_FOUND' } }],
  updateCheckoutSession: (a) => [
    { what: "A's session", params: { checkout_session: a.checkoutSession }, body: { payment_description: 'taken over' }, expect: { status: 404, code: 'CHECKOUT_SESSION_NOT_FOUND' } },
  ],
  listCheckoutPaymentMethods: (a) => [{ what: "A's session", params: { checkout_session: a.checkoutSession }, expect: { status: 404, code: 'CHECKOUT_SESSION_NOT_FOUND' } }],
  createToken: (a) => [
    { what: "A's account", body: { account_id: a.creds.account_id, card_data: cardBody(a.creds.account_id).card_data }, expect: { status: 403, code: 'INVALID_ACCOUNT_ID' } },
  ],
  createPaymentLink: (a) => [
    { what: "A's account", body: { account_id: a.creds.account_id, country: 'BR', amount: { currency: 'BRL', value: 1 } }, expect: { status: 403, code: 'INVALID_ACCOUNT_ID' } },
  ],
  getPaymentLink: (a) => [{ what: "A's link", params: { code: a.paymentLink }, expect: { status: 404, code: 'PAYMENT_LINK_NOT_FOUND' } }],
  cancelPaymentLink: (a) => [{ what: "A's link", params: { code: a.paymentLink }, expect: { status: 404, code: 'PAYMENT_LINK_NOT_FOUND' } }],
  createCustomerSession: (a) => [
    { what: "A's account and customer", body: { account_id: a.creds.account_id, country: 'BR', customer_id: a.customerId }, expect: { status: 403, code: 'INVALID_ACCOUNT_ID' } },
    { what: "B's account, A's customer", body: { account_id: '{B}', country: 'BR', customer_id: a.customerId }, expect: { status: 404, code: 'CUSTOMER_NOT_FOUND' } },
  ],
  redeliverWebhookDelivery: (a, b) => [
    { what: "A's endpoint and delivery", params: { webhook_endpoint_id: a.endpoint.id, delivery_id: a.delivery.id }, expect: { status: 404, code: 'WEBHOOK_ENDPOINT_NOT_FOUND' } },
    { what: "B's endpoint, A's delivery", params: { webhook_endpoint_id: b.endpointId, delivery_id: a.delivery.id }, expect: { status: 404, code: 'WEBHOOK_DELIVERY_NOT_FOUND' } },
  ],
};

/** Everything A can see of its own resources; equal before and after B's calls. */
async function snapshot(t: TestServer, a: A): Promise<Record<string, unknown>> {
  const get = async (path: string) => {
    const res = await t.fetch(path);
    const text = await res.text();
    expect(res.status, `${path}: ${text}`).toBe(200);
    return JSON.parse(text) as unknown;
  };
  return {
    customer: await get(`/customers/${a.customerId}`),
    customerMethods: await get(`/customers/${a.customerId}/payment-methods`),
    paid: await get(`/payments/${a.paid.id}?transactions_history=true`),
    chargedBack: await get(`/payments/${a.chargedBack.payment.id}?transactions_history=true`),
    disputed: await get(`/payments/${a.disputed.payment.id}?transactions_history=true`),
    authorized: await get(`/payments/${a.authorized.id}?transactions_history=true`),
    endpoint: await get(`/webhook-endpoints/${a.endpoint.id}`),
    endpoints: await get('/webhook-endpoints?limit=100'),
    deliveries: await get(`/webhook-endpoints/${a.endpoint.id}/deliveries?limit=100`),
    delivery: await get(`/webhook-endpoints/${a.endpoint.id}/deliveries/${a.delivery.id}`),
    routings: await get(`/routing?account_id=${a.creds.account_id}`),
    connections: await get('/connections'),
    checkoutSession: await get(`/checkout/sessions/${a.checkoutSession}`),
    paymentLink: await get(`/payment-links/${a.paymentLink}`),
  };
}

for (const backend of backends()) {
  describe(`cross-tenant isolation on ${backend}`, () => {
    const t = useServer(backend);
    let a: A;
    let b: B;
    let before: Record<string, unknown>;

    /** B's call of one operation; A's ids swapped for unknown ones when `swap` is given. */
    function call(operationId: string, probe: Probe, swap?: Map<string, string>): Promise<Response> {
      const op = operations[operationId]!;
      const sub = (s: string) => (swap ? [...swap].reduce((acc, [from, to]) => acc.split(from).join(to), s) : s).split('{B}').join(b.creds.account_id);
      const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => probe.params?.[name] ?? `{${name}}`);
      const headers: Record<string, string> = { 'public-api-key': b.creds.public_api_key, 'private-secret-key': b.creds.private_secret_key };
      if (probe.body !== undefined) Object.assign(headers, json);
      // Required headers present, so the answer comes from the ids and not from validation.
      if (op.idempotent) headers['x-idempotency-key'] = randomUUID();
      Object.assign(headers, probe.headers);
      return t.fetch(sub(probe.query ? `${path}?${probe.query}` : path), {
        method: op.method,
        headers,
        body: probe.body === undefined ? undefined : sub(JSON.stringify(probe.body)),
      });
    }

    beforeAll(async () => {
      // Deliveries stay PENDING (nothing is sent), so A's delivery log is stable for the comparison.
      await t.running.deps.services.webhooks.worker.stop();
      // A: the endpoint first, so that A's payments queue deliveries to it.
      const created = await t.fetch('/webhook-endpoints', { method: 'POST', headers: json, body: JSON.stringify({ url: 'https://merchant-a.example.com/hooks', events: ['*'] }) });
      expect(created.status).toBe(201);
      const endpoint = (await created.json()) as Schemas['WebhookEndpointCreated'];
      const merchantCustomerId = `cus-a-${randomUUID()}`;
      const customer = await t.client.POST('/customers', { body: { merchant_customer_id: merchantCustomerId } });
      expect(customer.response.status).toBe(201);
      const customerId = customer.data!.id;
      const token = await enrollCard(t, customerId, CARDS.approved);
      const paymentKey = randomUUID();
      const paidRes = await postPayment(t, paymentBody(t, customerId, { payment_method: { type: 'CARD', vaulted_token: token } }), { key: paymentKey });
      expect(paidRes.status).toBe(201);
      const paid = (await paidRes.json()) as Schemas['CreatedPayment'];
      expect(paid.transactions.type).toBe('PURCHASE');
      const chargedBackPayment = await createPayment(t, {}, customerId);
      const chargedBack = { payment: chargedBackPayment, chargeback: await injectChargeback(t, chargedBackPayment.id) };
      const disputedPayment = await createPayment(t, {}, customerId);
      const disputed = { payment: disputedPayment, chargeback: await injectChargeback(t, disputedPayment.id) };
      expect((await postDispute(t, disputedPayment.id, disputed.chargeback.id, { evidence: [evidence()] })).status).toBe(200);
      // A delivery, found through A's own API.
      const log = (await (await t.fetch(`/webhook-endpoints/${endpoint.id}/deliveries?limit=100`)).json()) as Schemas['WebhookDeliveryList'];
      const delivery = log.deliveries.find((d) => d.resource_id === paid.id);
      expect(delivery, JSON.stringify(log)).toBeDefined();
      const authorized = await authorizedPayment(t, {}, customerId);
      const [routing] = (await (await t.fetch(`/routing?account_id=${t.sandbox.account_id}&payment_method=CARD`)).json()) as Schemas['RoutingList'];
      const [connection] = (await (await t.fetch('/connections')).json()) as Schemas['ConnectionList'];
      const pixRes = await postPayment(t, { ...paymentBody(t, customerId), payment_method: { type: 'PIX' } });
      expect(pixRes.status, await pixRes.clone().text()).toBe(201);
      const pending = (await pixRes.json()) as Schemas['CreatedPayment'];
      expect(pending.status).toBe('PENDING');
      const session = await t.fetch('/checkout/sessions', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ account_id: t.sandbox.account_id, merchant_order_id: 'a-order', payment_description: 'A', country: 'BR', amount: { currency: 'BRL', value: 10 }, customer_id: customerId }),
      });
      expect(session.status).toBe(201);
      const link = await t.fetch('/payment-links', { method: 'POST', headers: json, body: JSON.stringify({ account_id: t.sandbox.account_id, country: 'BR', amount: { currency: 'BRL', value: 10 } }) });
      expect(link.status).toBe(201);
      a = {
        creds: t.sandbox, merchantCustomerId, customerId, token, paymentKey, paid, chargedBack, disputed, endpoint, delivery: delivery!, authorized, pending, routingId: routing!.id, connectionId: connection!.connection_id,
        checkoutSession: ((await session.json()) as Schemas['CheckoutSession']).checkout_session,
        paymentLink: ((await link.json()) as Schemas['PaymentLink']).code,
      };

      // B: PCI certified, with a customer, a payment and an endpoint of its own.
      const creds = await t.createOrganization({ pciCertified: true });
      const asB = { 'public-api-key': creds.public_api_key, 'private-secret-key': creds.private_secret_key };
      const bCustomer = await t.clientFor(creds).POST('/customers', { body: { merchant_customer_id: `cus-b-${randomUUID()}` } });
      expect(bCustomer.response.status).toBe(201);
      const bBody = { ...paymentBody(t, bCustomer.data!.id), account_id: creds.account_id };
      const bPayment = await postPayment(t, bBody, { headers: asB });
      expect(bPayment.status).toBe(201);
      const bEndpoint = await t.fetch('/webhook-endpoints', { method: 'POST', headers: { ...json, ...asB }, body: JSON.stringify({ url: 'https://merchant-b.example.com/hooks', events: ['*'] }) });
      expect(bEndpoint.status).toBe(201);
      b = { creds, customerId: bCustomer.data!.id, payment: (await bPayment.json()) as Schemas['Payment'], endpointId: ((await bEndpoint.json()) as { id: string }).id, paymentBody: bBody };

      before = await snapshot(t, a);
    });

    it('the table has exactly one row per merchant operation of the spec', () => {
      expect(merchantOperations.length).toBeGreaterThanOrEqual(18);
      expect(Object.keys(table).sort()).toEqual(merchantOperations);
    });

    for (const [operationId, row] of Object.entries(table)) {
      it(`${operationId}: B cannot reach A's resources`, async () => {
        const foreign = [a.checkoutSession, a.paymentLink, a.customerId, a.token, a.creds.account_id, a.paid.id, a.chargedBack.payment.id, a.chargedBack.chargeback.id, a.disputed.payment.id, a.disputed.chargeback.id, a.endpoint.id, a.delivery.id, a.delivery.event_id, a.merchantCustomerId, a.authorized.id, a.authorized.transactions.id, a.paid.transactions.id, a.pending.id, a.routingId, a.connectionId];
        for (const probe of row(a, b)) {
          const res = await call(operationId, probe);
          if (typeof probe.expect === 'function') {
            await probe.expect(res);
            continue;
          }
          await expectProblem(res, probe.expect.status, probe.expect.code).catch((e: Error) => {
            throw new Error(`${operationId} (${probe.what}): ${e.message}`);
          });
          // The same request with unknown ids instead of A's: the same answer, so A's existence does not leak.
          const sent = JSON.stringify(probe);
          const swap = new Map(foreign.filter((id) => sent.includes(id)).map((id) => [id, randomUUID()]));
          expect(swap.size, `${operationId} (${probe.what}) names none of A's ids`).toBeGreaterThan(0);
          await expectProblem(await call(operationId, probe, swap), probe.expect.status, probe.expect.code).catch((e: Error) => {
            throw new Error(`${operationId} (${probe.what}, unknown ids): ${e.message}`);
          });
        }
      });
    }

    it("A's resources are unchanged after every row: same payments, transactions, payment methods, endpoint and deliveries", async () => {
      const after = await snapshot(t, a);
      expect(after).toEqual(before);
      expect(after.endpoint).toMatchObject({ url: 'https://merchant-a.example.com/hooks', events: ['*'], enabled: true });
      expect((after.customerMethods as { payment_methods: unknown[] }).payment_methods).toHaveLength(1);
      expect(ids((after.endpoints as Schemas['WebhookEndpointList']).webhook_endpoints)).toEqual([a.endpoint.id]);
      expect(after.disputed).toMatchObject({ status: 'IN_DISPUTE', sub_status: 'PENDING_REVIEW' });
      expect(after.chargedBack).toMatchObject({ status: 'IN_DISPUTE', sub_status: 'RECEIVED' });
      expect(after.paid).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });
      expect(after.authorized).toMatchObject({ status: 'PENDING', sub_status: 'AUTHORIZED' });
      // B's dispute/evidence attempts left no evidence on A's payments.
      const evidenceRows = await t.db.query('SELECT 1 FROM dispute_evidence e JOIN disputes d ON d.id = e.dispute_id WHERE d.payment_id = ANY($1)', [[a.chargedBack.payment.id, a.disputed.payment.id, a.paid.id]]);
      expect(evidenceRows).toHaveLength(1);
    });
  });
}
