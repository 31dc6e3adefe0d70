/**
 * Real resources made through the API, so examples and fuzzed requests can name ids that exist:
 * customers, enrolled cards, payments (sandbox cards 4507990000000002, 4000000000000259), chargebacks,
 * disputes under review, admin organizations and key pairs. Every call goes through `send`, so it is
 * conformance-checked and counted in the coverage table like any other request.
 *
 * When an operation a fixture needs answers 501, the fixture throws `Blocked`: the dependent replay is
 * reported as blocked (report-only mode) instead of failing.
 */
import { expect } from 'vitest';
import { freshKey, send, type Exchange, type Req, type Target } from './exchange.js';
import { operation, type SpecOperation } from './spec-model.js';

export class Blocked extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'Blocked';
  }
}

/**
 * An example for a provider this build does not run (a connector not in CONNECTORS): left out of the
 * replay, not a failure; the operation's other examples still replay.
 */
export class ProviderNotRun extends Blocked {}

/** A small but real PDF (header and trailer, as the evidence check wants). */
export const PDF_BASE64 = Buffer.from('%PDF-1.4\n1 0 obj <</Type /Catalog>> endobj\ntrailer <</Root 1 0 R>>\n%%EOF\n').toString('base64');

/** Two-digit expiry year three years ahead. */
const EXPIRY_YEAR = (new Date().getUTCFullYear() + 3) % 100;

export interface PaymentFixture {
  id: string;
  customerId: string;
  providerTransactionId: string | null;
  /** The card transaction (PURCHASE, or AUTHORIZE with `capture: false`). */
  transactionId: string;
}

export class Fixtures {
  private n = 0;
  private org: Promise<{ organization_id: string; account_id: string }> | undefined;

  constructor(
    readonly target: Target,
    readonly accountId: string,
    /** A local HTTP receiver: webhook endpoints made here never point at the internet. */
    readonly receiverUrl: string,
    /** The organization of the target's credentials (for admin calls on it, such as a new account). */
    readonly organizationId?: string,
  ) {}

  /** Calls an operation that must succeed; Blocked if it is not implemented. */
  async call(operationId: string, req: Req): Promise<Exchange> {
    const op = operation(operationId);
    const ex = await send(this.target, op, req);
    if (ex.notImplemented) throw new Blocked(`needs ${operationId}, which answers 501`);
    expect(op.success, `fixture ${operationId} answered ${ex.status}: ${ex.text.slice(0, 500)}`).toContain(ex.status);
    return ex;
  }

  /** An OPEN checkout session of the target's account (150.5 BRL). */
  async checkoutSession(): Promise<string> {
    const ex = await this.call('createCheckoutSession', {
      body: { account_id: this.accountId, merchant_order_id: `conf-${freshKey()}`, payment_description: 'Conformance', country: 'BR', amount: { currency: 'BRL', value: 150.5 } },
    });
    return (ex.body as { checkout_session: string }).checkout_session;
  }

  /** An ACTIVE payment link of the target's account. */
  async paymentLink(body: Record<string, unknown> = {}): Promise<string> {
    const ex = await this.call('createPaymentLink', { body: { account_id: this.accountId, country: 'BR', amount: { currency: 'BRL', value: 10 }, ...body } });
    return (ex.body as { code: string }).code;
  }

  /** An open customer session for a new customer. */
  async customerSession(): Promise<string> {
    const ex = await this.call('createCustomerSession', { body: { account_id: this.accountId, country: 'BR', customer_id: await this.customer() } });
    return (ex.body as { customer_session: string }).customer_session;
  }

  async customer(): Promise<string> {
    const ex = await this.call('createCustomer', { body: { merchant_customer_id: `conf-fixture-${process.pid}-${++this.n}-${Date.now()}` } });
    return (ex.body as { id: string }).id;
  }

  /** A card enrolled for the customer; its vaulted_token. */
  async card(customerId: string, number = '4507990000000002'): Promise<string> {
    const ex = await this.call('enrollPaymentMethod', {
      params: { customer_id: customerId },
      body: {
        account_id: this.accountId,
        country: 'BR',
        type: 'CARD',
        card_data: { number, holder_name: 'JOAO SILVA', expiration_month: 12, expiration_year: EXPIRY_YEAR, security_code: '123' },
      },
    });
    return (ex.body as { vaulted_token: string }).vaulted_token;
  }

  /** A payment by raw card data (the sandbox organization is PCI certified), so it needs no vault. */
  async payment({ card = '4507990000000002', amount = 150.5, capture = true } = {}): Promise<PaymentFixture> {
    const customerId = await this.customer();
    const ex = await this.call('createPayment', {
      body: {
        account_id: this.accountId,
        description: 'Conformance fixture',
        country: 'BR',
        merchant_order_id: `conf-order-${++this.n}`,
        amount: { currency: 'BRL', value: amount },
        customer_payer: { id: customerId },
        payment_method: {
          type: 'CARD',
          detail: { card: { card_data: { number: card, holder_name: 'JOAO SILVA', expiration_month: 12, expiration_year: EXPIRY_YEAR, security_code: '123' }, ...(capture ? {} : { capture }) } },
        },
        workflow: 'DIRECT',
      },
    });
    // The create response carries the card transaction itself under `transactions`.
    const payment = ex.body as { id: string; transactions?: { id: string; provider_data?: { transaction_id?: string | null } | null } };
    return { id: payment.id, customerId, providerTransactionId: payment.transactions?.provider_data?.transaction_id ?? null, transactionId: payment.transactions!.id };
  }

  /** A PIX payment waiting for the shopper (PENDING / PENDING, its QR code issued). */
  async pendingPix(): Promise<string> {
    const ex = await this.call('createPayment', {
      body: {
        account_id: this.accountId,
        description: 'Conformance PIX fixture',
        country: 'BR',
        merchant_order_id: `conf-pix-${++this.n}`,
        amount: { currency: 'BRL', value: 42 },
        customer_payer: { first_name: 'Ana' },
        payment_method: { type: 'PIX' },
        workflow: 'DIRECT',
      },
    });
    return (ex.body as { id: string }).id;
  }

  /** A payment IN_DISPUTE / RECEIVED and its CHARGEBACK transaction. */
  async chargeback(): Promise<{ paymentId: string; transactionId: string }> {
    const payment = await this.payment();
    try {
      const ex = await this.call('createSandboxChargeback', { params: { payment_id: payment.id }, body: {} });
      return { paymentId: payment.id, transactionId: (ex.body as { id: string }).id };
    } catch (err) {
      if (!(err instanceof Blocked)) throw err;
    }
    // Without the sandbox operation: the card that always receives a chargeback after paying.
    const other = await this.payment({ card: '4000000000000259' });
    const ex = await this.call('getPayment', { params: { payment_id: other.id } });
    const tx = (ex.body as { transactions: { id: string; type: string }[] }).transactions.find((t) => t.type === 'CHARGEBACK');
    if (!tx) throw new Blocked('needs createSandboxChargeback (501), and card 4000000000000259 got no chargeback');
    return { paymentId: other.id, transactionId: tx.id };
  }

  /** A chargeback disputed with one PDF: the payment is IN_DISPUTE / PENDING_REVIEW. */
  async disputed(): Promise<{ paymentId: string; transactionId: string }> {
    const cb = await this.chargeback();
    await this.call('disputeChargeback', {
      params: { payment_id: cb.paymentId, transaction_id: cb.transactionId },
      body: { evidence: [{ content_type: 'application/pdf', file_name: 'receipt.pdf', content_category: 'RECEIPT', content: PDF_BASE64 }] },
    });
    return cb;
  }

  /** An organization made through the admin API (shared by the admin operations' fixtures). */
  organization(): Promise<{ organization_id: string; account_id: string }> {
    this.org ??= this.call('createOrganization', { body: { name: 'Conformance fixture org', pci_certified: false } }).then(
      (ex) => ex.body as { organization_id: string; account_id: string },
    );
    return this.org;
  }

  async apiKey(organizationId: string): Promise<string> {
    const ex = await this.call('createApiKey', { params: { organization_id: organizationId } });
    return (ex.body as { public_api_key: string }).public_api_key;
  }

  /** A new account of the target's organization without routing (`default_routing: false`): createRouting can make its CARD routing. */
  async bareAccount(): Promise<string> {
    if (!this.organizationId) throw new Blocked('no organization id given to the fixtures');
    const ex = await this.call('createAccount', { params: { organization_id: this.organizationId }, body: { name: `Conformance bare ${++this.n}`, default_routing: false } });
    return (ex.body as { account_id: string }).account_id;
  }

  /** The organization's connection id for each provider id. */
  async connections(): Promise<Record<string, string>> {
    const ex = await this.call('listConnections', {});
    return Object.fromEntries((ex.body as { provider_id: string; connection_id: string }[]).map((c) => [c.provider_id, c.connection_id]));
  }

  /** The routing every account starts with (the target account's CARD routing). */
  async routing(): Promise<string> {
    const ex = await this.call('listRoutings', { query: { account_id: this.accountId } });
    const first = (ex.body as { id: string }[])[0];
    if (!first) throw new Blocked('the account has no routing');
    return first.id;
  }

  /** A webhook endpoint (every event type) that delivers to the local receiver. */
  async webhookEndpoint(): Promise<string> {
    const ex = await this.call('createWebhookEndpoint', { body: { url: `${this.receiverUrl}/fixture-${++this.n}`, events: ['*'] } });
    return (ex.body as { id: string }).id;
  }

  /** A delivery of a payment.succeeded event to a new endpoint. */
  async delivery(): Promise<{ endpointId: string; deliveryId: string }> {
    const endpointId = await this.webhookEndpoint();
    await this.payment();
    // Deliveries are written with the event, in the payment's transaction; a short wait covers a lag.
    for (let i = 0; i < 10; i++) {
      const ex = await this.call('listWebhookDeliveries', { params: { webhook_endpoint_id: endpointId } });
      const first = (ex.body as { deliveries: { id: string }[] }).deliveries[0];
      if (first) return { endpointId, deliveryId: first.id };
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Blocked('a payment made no webhook delivery (no operation emits payment.succeeded yet)');
  }
}

// ---------------------------------------------------------------------------------------------
// Filling an example's ids with real ones

/** Replaces the values at these dot-joined JSON paths ('account_id', 'customer_payer.id') where present. */
export function fillIds(value: unknown, ids: Record<string, unknown>, path: string[] = []): unknown {
  if (Array.isArray(value)) return value.map((v, i) => fillIds(v, ids, [...path, String(i)]));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([k, v]) => {
      const here = [...path, k].join('.');
      return [k, ids[here] !== undefined ? ids[here] : fillIds(v, ids, [...path, k])];
    }),
  );
}

type Prepare = (fx: Fixtures, example: unknown) => Promise<Req>;

/** Every route step's connection_id replaced by the organization's connection to the step's provider. */
function withConnections(value: unknown, byProvider: Record<string, string>): unknown {
  if (Array.isArray(value)) return value.map((v) => withConnections(v, byProvider));
  if (value === null || typeof value !== 'object') return value;
  const o = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, withConnections(v, byProvider)]));
  if (typeof o.provider_id === 'string' && typeof o.connection_id === 'string' && byProvider[o.provider_id]) o.connection_id = byProvider[o.provider_id];
  return o;
}

const withAccount = (fx: Fixtures, example: unknown, more: Record<string, unknown> = {}) => fillIds(example, { account_id: fx.accountId, ...more });

/**
 * What each operation's examples need to succeed (state, not just ids). An operation not listed gets
 * the generic preparation below; add an entry here when a new operation needs more.
 */
export const PREPARE: Record<string, Prepare> = {
  createCheckoutSession: async (fx, ex) => ({ body: withAccount(fx, ex, { customer_id: await fx.customer() }) }),
  createCustomerSession: async (fx, ex) => ({ body: withAccount(fx, ex, { customer_id: await fx.customer() }) }),
  // The token endpoint takes the session's own account (or none).
  createCheckoutToken: async (fx, ex) => ({ params: { checkout_session: await fx.checkoutSession() }, body: withAccount(fx, ex) }),
  enrollPaymentMethod: async (fx, ex) => ({ params: { customer_id: await fx.customer() }, body: withAccount(fx, ex) }),
  listPaymentMethods: async (fx) => ({ params: { customer_id: await fx.customer() } }),
  createPayment: async (fx, ex) => {
    const customerId = await fx.customer();
    const token = await fx.card(customerId);
    return { body: withAccount(fx, ex, { 'customer_payer.id': customerId, 'payment_method.vaulted_token': token }) };
  },
  getPayment: async (fx) => ({ params: { payment_id: (await fx.payment()).id } }),
  getPaymentMethod: async (fx) => {
    const customerId = await fx.customer();
    return { params: { customer_id: customerId, payment_method_id: await fx.card(customerId) } };
  },
  unenrollPaymentMethod: async (fx) => {
    const customerId = await fx.customer();
    return { params: { customer_id: customerId, payment_method_id: await fx.card(customerId) } };
  },
  getEvent: async (fx) => {
    await fx.payment();
    const ex = await fx.call('listEvents', { query: { limit: '1' } });
    const first = (ex.body as { events: { id: string }[] }).events[0];
    if (!first) throw new Blocked('a payment recorded no event');
    return { params: { event_id: first.id } };
  },
  getCustomerByMerchantCustomerId: async (fx) => {
    const ex = await fx.call('getCustomer', { params: { customer_id: await fx.customer() } });
    return { query: { merchant_customer_id: (ex.body as { merchant_customer_id: string }).merchant_customer_id } };
  },
  disputeChargeback: async (fx, ex) => {
    const cb = await fx.chargeback();
    return { params: { payment_id: cb.paymentId, transaction_id: cb.transactionId }, body: withAccount(fx, ex) };
  },
  addDisputeEvidence: async (fx, ex) => {
    const cb = await fx.disputed();
    return { params: { payment_id: cb.paymentId, transaction_id: cb.transactionId }, body: withAccount(fx, ex) };
  },
  createSandboxChargeback: async (fx, ex) => {
    const amount = (ex as { amount?: number } | undefined)?.amount ?? 150.5;
    return { params: { payment_id: (await fx.payment({ amount: Math.max(150.5, amount) })).id }, body: ex };
  },
  capturePayment: async (fx, ex) => {
    const p = await fx.payment({ capture: false });
    return { params: { payment_id: p.id, transaction_id: p.transactionId }, body: ex };
  },
  cancelPayment: async (fx, ex) => {
    const p = await fx.payment({ capture: false });
    return { params: { payment_id: p.id, transaction_id: p.transactionId }, body: ex };
  },
  refundPayment: async (fx, ex) => {
    const p = await fx.payment();
    return { params: { payment_id: p.id, transaction_id: p.transactionId }, body: ex };
  },
  cancelOrRefundPayment: async (fx, ex) => ({ params: { payment_id: (await fx.payment()).id }, body: ex }),
  resolveSandboxDispute: async (fx, ex) => ({ params: { payment_id: (await fx.disputed()).paymentId }, body: ex }),
  settleSandboxPendingPayment: async (fx, ex) => ({ params: { payment_id: await fx.pendingPix() }, body: ex }),
  receiveProviderNotification: async (fx, ex) => {
    const payment = await fx.payment();
    return {
      params: { provider_id: 'sandbox' },
      body: fillIds(ex, { id: `ntf_conf_${freshKey()}`, 'data.payment_id': payment.id, 'data.provider_transaction_id': payment.providerTransactionId ?? undefined }),
    };
  },
  revokeApiKey: async (fx) => {
    const org = await fx.organization();
    return { params: { organization_id: org.organization_id, public_api_key: await fx.apiKey(org.organization_id) } };
  },
  createWebhookEndpoint: async (fx, ex) => ({ body: fillIds(ex, { url: `${fx.receiverUrl}/replay` }) }),
  // A new account (every account starts with a CARD routing) and the organization's real connections.
  createRouting: async (fx, ex) => ({ body: withConnections(fillIds(ex, { account_id: await fx.bareAccount() }), await fx.connections()) }),
  listRoutings: async (fx) => ({ query: { account_id: fx.accountId } }),
  updateRouting: async (fx, ex) => ({ params: { routing_id: await fx.routing() }, body: withConnections(ex, await fx.connections()) }),
  // An example to a provider the service does not run cannot be created (422 PROVIDER_NOT_AVAILABLE): the
  // real connectors' examples replay once their connectors are in CONNECTORS (src/providers/connectors.ts).
  createConnection: async (fx, ex) => {
    const providerId = (ex as { provider_id: string }).provider_id;
    const running = ((await fx.call('listProviders', {})).body as { provider_id: string }[]).map((p) => p.provider_id);
    if (!running.includes(providerId)) throw new ProviderNotRun(`the example's provider ${providerId} is not run by this service (its connector is not in CONNECTORS)`);
    return { body: ex };
  },
  // A connection of its own (a routing's connection is in use: 409).
  deleteConnection: async (fx) => {
    const made = await fx.call('createConnection', { body: { provider_id: 'SANDBOX_A', name: `Conformance ${freshKey()}`, environment: 'TEST' } });
    return { params: { connection_id: (made.body as { connection_id: string }).connection_id } };
  },
  updateWebhookEndpoint: async (fx, ex) => ({ params: { webhook_endpoint_id: await fx.webhookEndpoint() }, body: fillIds(ex, { url: `${fx.receiverUrl}/replay-updated` }) }),
  // Yuno's view of the webhook endpoints (/webhooks): the account in the query or body, a unique name per replay (its repeat is 409 WEBHOOK_ALREADY_EXISTS).
  listWebhooks: async (fx) => ({ query: { account_id: fx.accountId } }),
  createWebhook: async (fx, ex) => ({ body: withAccount(fx, ex, { url: `${fx.receiverUrl}/yuno-replay`, name: `Conformance ${freshKey()}` }) }),
  getWebhook: async (fx) => ({ params: { webhook_id: await fx.webhookEndpoint() }, query: { account_id: fx.accountId } }),
  updateWebhook: async (fx, ex) => ({ params: { webhook_id: await fx.webhookEndpoint() }, body: withAccount(fx, ex) }),
  deleteWebhook: async (fx) => ({ params: { webhook_id: await fx.webhookEndpoint() }, query: { account_id: fx.accountId } }),
  getWebhookDelivery: async (fx) => {
    const d = await fx.delivery();
    return { params: { webhook_endpoint_id: d.endpointId, delivery_id: d.deliveryId } };
  },
  redeliverWebhookDelivery: async (fx) => {
    const d = await fx.delivery();
    return { params: { webhook_endpoint_id: d.endpointId, delivery_id: d.deliveryId } };
  },
};

/**
 * Requests that must get 409 INVALID_STATUS because of the resource's state (given the request that
 * just succeeded). Other operations reach their 409 by repeating the replayed request.
 */
export const CONFLICT: Record<string, (fx: Fixtures, example: unknown, done: Req) => Promise<Req>> = {
  // Evidence can only be added to a dispute under review; a fresh chargeback is not disputed yet.
  addDisputeEvidence: async (fx, ex) => {
    const cb = await fx.chargeback();
    return { params: { payment_id: cb.paymentId, transaction_id: cb.transactionId }, body: withAccount(fx, ex) };
  },
  // A second chargeback (a new notification id) for a payment already in dispute.
  receiveProviderNotification: async (_fx, _ex, done) => ({ ...done, body: fillIds(done.body, { id: `ntf_conf_${freshKey()}` }) }),
  // A capture or a cancel of a purchase (already captured), a refund of an authorization (nothing captured).
  capturePayment: async (fx, ex) => {
    const p = await fx.payment();
    return { params: { payment_id: p.id, transaction_id: p.transactionId }, body: ex };
  },
  cancelPayment: async (fx, ex) => {
    const p = await fx.payment();
    return { params: { payment_id: p.id, transaction_id: p.transactionId }, body: ex };
  },
  refundPayment: async (fx, ex) => {
    const p = await fx.payment({ capture: false });
    return { params: { payment_id: p.id, transaction_id: p.transactionId }, body: ex };
  },
  // Nothing to cancel or refund on a declined payment.
  cancelOrRefundPayment: async (fx, ex) => ({ params: { payment_id: (await fx.payment({ card: '4000000000000002' })).id }, body: ex }),
  // A link whose window is over is EXPIRED: it cannot be canceled.
  cancelPaymentLink: async (fx) => ({ params: { code: await fx.paymentLink({ availability: { start_at: '2020-01-01T00:00:00Z', finish_at: '2020-02-01T00:00:00Z' } }) } }),
  // No redelivery to a disabled endpoint.
  redeliverWebhookDelivery: async (fx, _ex, done) => {
    await fx.call('updateWebhookEndpoint', { params: { webhook_endpoint_id: done.params!.webhook_endpoint_id! }, body: { enabled: false } });
    return done;
  },
};

/** Body members that name another resource: an unknown id there is a 404. */
export const REFERENCES = ['customer_payer.id', 'payment_method.vaulted_token', 'payment_method.token', 'data.payment_id', 'customer_id'];

/** Path parameters by name, for operations without an entry in PREPARE. */
const PATH_FIXTURES: Record<string, (fx: Fixtures) => Promise<string>> = {
  customer_id: (fx) => fx.customer(),
  payment_id: async (fx) => (await fx.payment()).id,
  organization_id: async (fx) => (await fx.organization()).organization_id,
  provider_id: async () => 'sandbox',
  webhook_endpoint_id: (fx) => fx.webhookEndpoint(),
  webhook_id: (fx) => fx.webhookEndpoint(),
  routing_id: (fx) => fx.routing(),
  connection_id: async (fx) => (await fx.connections()).SANDBOX_A!,
  checkout_session: (fx) => fx.checkoutSession(),
  code: (fx) => fx.paymentLink(),
  customer_session: (fx) => fx.customerSession(),
};

export async function prepareRequest(op: SpecOperation, fx: Fixtures, example: unknown): Promise<Req> {
  const specific = PREPARE[op.operationId];
  if (specific) return specific(fx, example);
  const params: Record<string, string> = {};
  for (const p of op.params.filter((x) => x.in === 'path')) {
    const make = PATH_FIXTURES[p.name];
    if (!make) throw new Blocked(`no fixture for path parameter {${p.name}}: add one to PREPARE in test/conformance/support/fixtures.ts`);
    params[p.name] = await make(fx);
  }
  return { params, body: example === undefined ? undefined : withAccount(fx, example) };
}
