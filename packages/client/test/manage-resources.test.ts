/**
 * The resource methods of issue 15 against a real server: customers (retrieve, by merchant id, update
 * with If-Match, delete), payment methods (retrieve, unenroll), payments and events (lists), webhook
 * endpoints and deliveries, the sandbox helpers; and auto-pagination with `for await`.
 */
import { describe, expect, it } from 'vitest';
import { createPayorchClient, PayorchError } from '../src/index.js';
import { adminClient, futureExpiry, sandboxClient, server, unique } from './support/clients.js';

const payorch = sandboxClient();

async function failure(call: Promise<unknown>): Promise<PayorchError> {
  const err = await call.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(PayorchError);
  return err as PayorchError;
}

async function cardFor(customerId: string, number = '4507990000000002') {
  return payorch.paymentMethods.enroll(customerId, {
    account_id: server().sandbox.account_id,
    country: 'BR',
    type: 'CARD',
    card_data: { number, holder_name: 'JOAO SILVA', security_code: '123', ...futureExpiry() },
  });
}

describe('customers', () => {
  it('list: newest first, for await walks every page, deleted customers left out, another organization sees none', async () => {
    // A fresh organization: the list is exactly the customers made here.
    const org = await adminClient().organizations.create({ name: 'List test merchant', pci_certified: false });
    const own = createPayorchClient({ baseUrl: server().baseUrl, publicApiKey: org.public_api_key, privateSecretKey: org.private_secret_key });
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await own.customers.create({ merchant_customer_id: unique('mng-list') })).id);
    await own.customers.delete(made[2]!);
    const live = [made[4], made[3], made[1], made[0]];

    // Two a page: two pages walked by for await, every live customer once, newest first.
    const walked: string[] = [];
    for await (const c of own.customers.list({ limit: 2 })) walked.push(c.id);
    expect(walked).toEqual(live);
    // Awaited, the same call is the first page; its cursor gives the next one.
    const first = await own.customers.list({ limit: 2 });
    expect(first).toMatchObject({ has_more: true, next_cursor: made[3] });
    const second = await own.customers.list({ limit: 2, starting_after: first.next_cursor! });
    expect(second).toMatchObject({ has_more: false, next_cursor: null });
    expect(second.customers.map((c) => c.id)).toEqual([made[1], made[0]]);
    expect((await own.customers.list({ created_gte: new Date(Date.now() + 60_000).toISOString() })).customers).toEqual([]);

    for await (const c of payorch.customers.list({ limit: 100 })) expect(made).not.toContain(c.id);
    expect(await failure(own.customers.list({ limit: 101 }))).toMatchObject({ status: 400, code: 'INVALID_REQUEST' });

    // Deleting while walking: each page's cursor is deleted by then, and the walk still reaches every one.
    const deleted: string[] = [];
    for await (const c of own.customers.list({ limit: 1 })) {
      await own.customers.delete(c.id);
      deleted.push(c.id);
    }
    expect(deleted).toEqual(live);
    expect(await own.customers.list()).toEqual({ customers: [], has_more: false, next_cursor: null });
  });

  it('retrieve, retrieveByMerchantCustomerId, update with ifMatch (412 when stale), delete', async () => {
    const created = await payorch.customers.create({ merchant_customer_id: unique('mng'), email: 'ada@example.com' });
    expect(await payorch.customers.retrieve(created.id)).toEqual(created);
    expect(await payorch.customers.retrieveByMerchantCustomerId(created.merchant_customer_id)).toEqual(created);
    const { etag } = await payorch.customers.retrieveWithEtag(created.id);
    const updated = await payorch.customers.update(created.id, { email: null, first_name: 'Ada' }, { ifMatch: etag });
    expect(updated).toMatchObject({ email: null, first_name: 'Ada' });
    const stale = await failure(payorch.customers.update(created.id, { first_name: 'Grace' }, { ifMatch: etag }));
    expect(stale).toMatchObject({ status: 412, code: 'PRECONDITION_FAILED' });
    await payorch.customers.delete(created.id);
    expect(await failure(payorch.customers.retrieve(created.id))).toMatchObject({ status: 404, code: 'CUSTOMER_NOT_FOUND' });
  });
});

describe('payment methods, payments and events', () => {
  it('retrieve and unenroll a card; for await walks every page of a list', async () => {
    const customer = await payorch.customers.create({ merchant_customer_id: unique('mng-pm') });
    const cards = [await cardFor(customer.id), await cardFor(customer.id), await cardFor(customer.id)];
    expect(await payorch.paymentMethods.retrieve(customer.id, cards[0]!.vaulted_token!)).toEqual(cards[0]);
    const unenrolled = await payorch.paymentMethods.unenroll(customer.id, cards[0]!.vaulted_token!);
    expect(unenrolled.status).toBe('UNENROLLED');

    // One item a page: three pages, every method once, newest first.
    const walked: string[] = [];
    for await (const m of payorch.paymentMethods.list(customer.id, { limit: 1 })) walked.push(m.vaulted_token!);
    expect(walked).toEqual(cards.map((c) => c.vaulted_token).reverse());
    // Awaited, the same call is the first page.
    const first = await payorch.paymentMethods.list(customer.id, { limit: 1 });
    expect(first).toMatchObject({ has_more: true });

    const events: string[] = [];
    for await (const e of payorch.events.list({ type: 'enrollment.unenrolled', limit: 1 })) {
      events.push(e.id);
      if (events.length === 3) break;
    }
    expect(events.length).toBeGreaterThan(0);
    expect((await payorch.events.retrieve(events[0]!)).type_event).toBe('enrollment.unenrolled');
  });

  it('payments.list by merchant_order_id; the sandbox helpers; webhook endpoints and deliveries', async () => {
    const customer = await payorch.customers.create({ merchant_customer_id: unique('mng-pay') });
    const card = await cardFor(customer.id);
    const account_id = server().sandbox.account_id;
    const endpoint = await payorch.webhookEndpoints.create({ url: 'https://merchant.example.com/hooks', events: ['payment.succeeded'] });
    const order = unique('ORDER');
    const payment = await payorch.payments.create({
      account_id,
      description: 'Manage resources',
      country: 'BR',
      merchant_order_id: order,
      amount: { currency: 'BRL', value: 150.5 },
      customer_payer: { id: customer.id },
      payment_method: { type: 'CARD', vaulted_token: card.vaulted_token! },
      workflow: 'DIRECT',
    });
    const found: string[] = [];
    for await (const p of payorch.payments.list({ merchant_order_id: order })) found.push(p.id);
    expect(found).toEqual([payment.id]);

    const chargeback = await payorch.sandbox.createChargeback(payment.id);
    expect(chargeback.type).toBe('CHARGEBACK');

    expect(await payorch.webhookEndpoints.retrieve(endpoint.id)).toMatchObject({ id: endpoint.id });
    const listed: string[] = [];
    for await (const e of payorch.webhookEndpoints.list({ limit: 1 })) listed.push(e.id);
    expect(listed).toContain(endpoint.id);
    const deliveries = await payorch.webhookDeliveries.list(endpoint.id);
    const delivery = deliveries.deliveries.find((d) => d.resource_id === payment.id)!;
    expect(delivery).toBeDefined();
    expect((await payorch.webhookDeliveries.retrieve(endpoint.id, delivery.id)).id).toBe(delivery.id);
    expect((await payorch.webhookEndpoints.update(endpoint.id, { enabled: false })).enabled).toBe(false);
    expect(await failure(payorch.webhookDeliveries.redeliver(endpoint.id, delivery.id))).toMatchObject({ status: 409 });
    await payorch.webhookEndpoints.delete(endpoint.id);
    expect(await failure(payorch.webhookEndpoints.retrieve(endpoint.id))).toMatchObject({ status: 404 });
  });
});

describe("webhooks (Yuno's view of the webhook endpoints)", () => {
  it('create, list, retrieve, update, delete; the same endpoint through webhookEndpoints; 409 for a name taken', async () => {
    // A fresh organization: its list is exactly the webhooks made here.
    const org = await adminClient().organizations.create({ name: 'Yuno webhooks merchant', pci_certified: false });
    const own = createPayorchClient({ baseUrl: server().baseUrl, publicApiKey: org.public_api_key, privateSecretKey: org.private_secret_key });
    const account_id = org.account_id;
    const made = await own.webhooks.create({
      account_id,
      name: 'Orders',
      url: 'https://merchant.example.com/yuno-hooks',
      payment_triggers: ['PURCHASE'],
      report_triggers: ['UPDATE'],
      secret: 'client-test-header-secret',
    });
    expect(made).toMatchObject({ name: 'Orders', state: 'ACTIVE', secret: '***', api_key: null, unsupported_triggers: ['report_triggers:UPDATE'] });
    expect(made.events).toEqual(['payment.succeeded', 'payment.declined', 'payment.failed', 'payment.pending', 'payment.expired']);
    expect(await own.webhookEndpoints.retrieve(made.id)).toMatchObject({ id: made.id, description: 'Orders', events: made.events });
    expect((await own.webhooks.list({ account_id })).map((w) => w.id)).toEqual([made.id]);
    expect(await own.webhooks.list({ account_id, state: 'INACTIVE' })).toEqual([]);
    expect(await own.webhooks.retrieve(made.id, account_id)).toEqual(made);
    const paused = await own.webhooks.update(made.id, { account_id, state: 'INACTIVE', enrollment_triggers: ['UNENROLL'] });
    expect(paused).toMatchObject({ state: 'INACTIVE', enrollment_triggers: ['UNENROLL'] });
    expect((await own.webhookEndpoints.retrieve(made.id)).enabled).toBe(false);
    expect(await failure(own.webhooks.create({ account_id, name: 'Orders', url: 'https://merchant.example.com/x', payment_triggers: ['REFUND'] }))).toMatchObject({
      status: 409,
      code: 'WEBHOOK_ALREADY_EXISTS',
    });
    expect((await own.webhooks.delete(made.id, account_id)).id).toBe(made.id);
    expect(await failure(own.webhooks.retrieve(made.id, account_id))).toMatchObject({ status: 404 });
    expect(await failure(own.webhookEndpoints.retrieve(made.id))).toMatchObject({ status: 404 });
  });
});

describe('routing and connections', () => {
  it('connections.list/update/create/delete, providers.list, routing.list/retrieve/update, and routing.create for an account without routing', async () => {
    const org = await adminClient().organizations.create({ name: 'Routing test merchant', pci_certified: false });
    const own = createPayorchClient({ baseUrl: server().baseUrl, publicApiKey: org.public_api_key, privateSecretKey: org.private_secret_key });
    const connections = await own.connections.list();
    expect(connections.map((c) => c.provider_id)).toEqual(['SANDBOX_A', 'SANDBOX_B']);
    const [a, b] = connections;
    expect(await own.connections.update(a!.connection_id, { timeout_ms: 5000 })).toMatchObject({ connection_id: a!.connection_id, timeout_ms: 5000, enabled: true });

    const [routing] = await own.routing.list({ account_id: org.account_id });
    expect(routing!.default_route.steps.map((s) => s.connection_id)).toEqual([a!.connection_id, b!.connection_id]);
    expect(await own.routing.retrieve(routing!.id)).toEqual(routing);
    const reversed = await own.routing.update(routing!.id, {
      default_route: { steps: [{ index: 1, provider_id: 'SANDBOX_B', connection_id: b!.connection_id }, { index: 2, provider_id: 'SANDBOX_A', connection_id: a!.connection_id }] },
    });
    expect(reversed.default_route.steps[0]!.provider_id).toBe('SANDBOX_B');

    const body = { account_id: org.account_id, payment_method: 'CARD' as const, name: 'Mine', default_route: { steps: [{ index: 1, provider_id: 'SANDBOX_A', connection_id: a!.connection_id }] } };
    expect((await failure(own.routing.create(body))).code).toBe('ROUTING_ALREADY_EXISTS');
    const account = await adminClient().accounts.create(org.organization_id, { name: 'No routing yet', default_routing: false });
    expect(await own.routing.list({ account_id: account.account_id })).toEqual([]);
    const created = await own.routing.create({ ...body, account_id: account.account_id });
    expect(created).toMatchObject({ account_id: account.account_id, payment_method: 'CARD', name: 'Mine', condition_sets: [], warnings: [] });
    expect((await failure(own.routing.retrieve('r_00000000-0000-4000-8000-000000000000'))).code).toBe('ROUTING_NOT_FOUND');
    expect((await failure(payorch.routing.retrieve(created.id))).code).toBe('ROUTING_NOT_FOUND');

    // A connection made and removed through the resource layer; the providers it may name.
    expect((await own.providers.list()).map((p) => p.provider_id)).toContain('SANDBOX_B');
    const second = await own.connections.create({ provider_id: 'SANDBOX_B', name: 'B, second', environment: 'TEST' });
    expect(second).toMatchObject({ provider_id: 'SANDBOX_B', environment: 'TEST' });
    expect((await failure(own.connections.delete(a!.connection_id))).code).toBe('CONNECTION_IN_USE');
    await own.connections.delete(second.connection_id);
    expect((await own.connections.list()).map((c) => c.connection_id)).not.toContain(second.connection_id);
  });
});
