/**
 * Type tests (run by `vitest run` through tsc): what compiles and what must not. Each `@ts-expect-error`
 * fails the suite if the line after it ever compiles.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { paths } from '@payorch/types';
import {
  createPayorchAdminClient,
  createPayorchClient,
  IDEMPOTENT_ROUTES,
  PayorchError,
  verifyWebhook,
  type IdempotentRoute,
  type PayorchPaths,
  type Problem,
  type Schemas,
  type WebhookEvent,
  type WebhookEventMap,
  type WebhookEventType,
} from '../src/index.js';

const payorch = createPayorchClient({ baseUrl: 'https://api.test/v1', publicApiKey: 'pk', privateSecretKey: 'sk' });
const admin = createPayorchAdminClient({ baseUrl: 'https://api.test/v1', adminApiKey: 'k'.repeat(32) });
const payment_id = '3f9c1b2a-7d4e-4a8b-9c6d-1e2f3a4b5c6d';
// Not annotated as Schemas['CreatePaymentRequest']: openapi-fetch's Writable<> turns the spec's null-only
// `additional_data.order.fulfillment` into `never`, so that annotated type is not assignable to a raw
// POST body (upstream openapi-ts/openapi-typescript#2717). The resource layer accepts it (see below).
const paymentBody = {
  account_id: '5d1e7c2b-3a4f-4e6d-9b8a-7c6d5e4f3a21',
  description: 'order',
  country: 'BR' as const,
  merchant_order_id: 'o-1',
  amount: { currency: 'BRL', value: 10 },
  customer_payer: { id: '7c2f4a8e-5b1d-4f7a-9c3e-2d6b8a1f0e94' },
  payment_method: { type: 'CARD' as const, vaulted_token: '8e0f2b1c-6d4a-4f3e-9b2a-7c5d1e3f9a0b' },
};
const annotatedBody: Schemas['CreatePaymentRequest'] = paymentBody;

describe('paths and methods', () => {
  it('reaches every path of the spec, and only those', () => {
    void payorch.GET('/healthz');
    void payorch.GET('/payments/{payment_id}', { params: { path: { payment_id } } });
    // @ts-expect-error unknown path
    void payorch.GET('/payment/{payment_id}', { params: { path: { payment_id } } });
    // @ts-expect-error the path has no GET
    void payorch.GET('/customers');
    // @ts-expect-error the path has no DELETE
    void payorch.DELETE('/payments/{payment_id}', { params: { path: { payment_id } } });
  });

  it('requires path parameters and types query parameters', () => {
    // @ts-expect-error missing params.path
    void payorch.GET('/payments/{payment_id}');
    // @ts-expect-error wrong path parameter name
    void payorch.GET('/payments/{payment_id}', { params: { path: { id: payment_id } } });
    // @ts-expect-error raw_response is a boolean
    void payorch.GET('/payments/{payment_id}', { params: { path: { payment_id }, query: { raw_response: 'yes' } } });
    void payorch.GET('/payments/{payment_id}', { params: { path: { payment_id }, query: { raw_response: true } } });
  });

  it('the admin client reaches /admin paths only', () => {
    void admin.POST('/admin/organizations', { body: { name: 'Acme' } });
    // @ts-expect-error not an admin path
    void admin.POST('/customers', { body: { merchant_customer_id: 'c-1' } });
  });
});

describe('request bodies', () => {
  it('rejects a wrong body or a missing required field', () => {
    void payorch.POST('/customers', { body: { merchant_customer_id: 'cus-1' } });
    // @ts-expect-error merchant_customer_id is required
    void payorch.POST('/customers', { body: { first_name: 'Ada' } });
    // @ts-expect-error merchant_customer_id is a string
    void payorch.POST('/customers', { body: { merchant_customer_id: 42 } });
    // @ts-expect-error the body is required
    void payorch.POST('/customers', {});
    // @ts-expect-error an enum value outside the spec
    void payorch.POST('/sandbox/payments/{payment_id}/disputes/resolve', { params: { path: { payment_id } }, body: { outcome: 'MAYBE' } });
  });

  it('rejects unknown fields in the resource layer (openapi-fetch’s generic init does not)', () => {
    // @ts-expect-error unknown field
    void payorch.customers.create({ merchant_customer_id: 'cus-1', nickname: 'Ada' });
  });
});

describe('X-Idempotency-Key', () => {
  it('may be omitted where the spec requires it (the client generates one)', () => {
    void payorch.POST('/payments', { body: paymentBody });
    void payorch.POST('/payments', { params: { header: { 'X-Idempotency-Key': 'order-1' } }, body: paymentBody });
    // @ts-expect-error the key is a string
    void payorch.POST('/payments', { params: { header: { 'X-Idempotency-Key': 1 } }, body: paymentBody });
    void payorch.payments.create(annotatedBody, { idempotencyKey: 'order-1' });
  });

  it('PayorchPaths differs from the generated paths only in that header', () => {
    expectTypeOf<PayorchPaths['/customers']>().toEqualTypeOf<paths['/customers']>();
    expectTypeOf<PayorchPaths['/payments/{payment_id}']['get']>().toEqualTypeOf<paths['/payments/{payment_id}']['get']>();
    type Header = NonNullable<PayorchPaths['/payments']['post']['parameters']['header']>;
    expectTypeOf<Header>().toEqualTypeOf<{ 'X-Idempotency-Key'?: string }>();
    expectTypeOf<paths['/payments']['post']['parameters']['header']>().toEqualTypeOf<{ 'X-Idempotency-Key': string }>();
    expectTypeOf<PayorchPaths['/payments']['post']['requestBody']>().toEqualTypeOf<paths['/payments']['post']['requestBody']>();
    expectTypeOf<keyof PayorchPaths>().toEqualTypeOf<keyof paths>();
  });

  it('IDEMPOTENT_ROUTES lists exactly the operations that declare the header', () => {
    expectTypeOf<(typeof IDEMPOTENT_ROUTES)[number]>().toEqualTypeOf<IdempotentRoute>();
  });
});

describe('results', () => {
  it('payments.create answers Yuno’s create shape: `transactions` is the one transaction just made', async () => {
    const created = await payorch.payments.create(annotatedBody, { idempotencyKey: 'order-2' });
    expectTypeOf(created).toEqualTypeOf<Schemas['CreatedPayment']>();
    expectTypeOf(created.transactions.id).toBeString();
    expectTypeOf(created.transactions_history).toBeArray();
  });

  it('narrows { data, error } on either side', async () => {
    const { data, error, response } = await payorch.GET('/payments/{payment_id}', { params: { path: { payment_id } } });
    expectTypeOf(response).toEqualTypeOf<Response>();
    if (error) {
      expectTypeOf(error).toEqualTypeOf<Problem>();
      expectTypeOf(data).toEqualTypeOf<undefined>();
      expectTypeOf(error.code).toBeString();
    } else {
      // toExtend, not toEqualTypeOf: openapi-fetch's Readable<> drops the null-only `fulfillment` key
      // (openapi-typescript#2717); otherwise `data` is the spec's Payment and usable as one.
      expectTypeOf(data).toExtend<Schemas['Payment']>();
      expectTypeOf(data.id).toBeString();
      expectTypeOf(data.transactions).toBeArray();
    }
  });

  it('the dispute answer is the DisputedPayment shape, errors are Problems', async () => {
    const result = await payorch.POST('/payments/{payment_id}/transactions/{transaction_id}/dispute', {
      params: { path: { payment_id, transaction_id: payment_id } },
      body: { evidence: [{ content_type: 'application/pdf', file_name: 'r.pdf', content_category: 'RECEIPT', content: 'JVBERi0=' }] },
    });
    if (result.data) {
      expectTypeOf(result.data.status).toEqualTypeOf<Schemas['DisputedPayment']['status']>();
      expectTypeOf(result.data.transactions.id).toBeString();
    }
    if (result.error) expectTypeOf(result.error).toEqualTypeOf<Problem>();
  });

  it('the resource layer returns the data and throws PayorchError', async () => {
    expectTypeOf(payorch.customers.create({ merchant_customer_id: 'c' })).resolves.toEqualTypeOf<Schemas['Customer']>();
    expectTypeOf(payorch.payments.retrieve(payment_id)).resolves.toEqualTypeOf<Schemas['Payment']>();
    expectTypeOf(payorch.paymentMethods.list('c')).resolves.toEqualTypeOf<Schemas['PaymentMethodList']>();
    expectTypeOf(payorch.disputes.submit(payment_id, payment_id, { evidence: [] })).resolves.toEqualTypeOf<Schemas['DisputedPayment']>();
    expectTypeOf(admin.organizations.create({ name: 'x' })).resolves.toEqualTypeOf<Schemas['OrganizationCreated']>();
    const err = new PayorchError(new Response(null, { status: 404 }), undefined);
    expectTypeOf(err.status).toBeNumber();
    expectTypeOf(err.messages).toEqualTypeOf<string[]>();
    expectTypeOf(err.errors).toEqualTypeOf<{ path: string; message: string }[]>();
    expectTypeOf(err.request_id).toEqualTypeOf<string | undefined>();
    expectTypeOf(err.problem).toEqualTypeOf<Problem | undefined>();
    // @ts-expect-error wrong argument types are caught in the resource layer too
    void payorch.payments.retrieve(payment_id, { raw_response: 'yes' });
  });
});

describe('webhook events', () => {
  it('verifyWebhook returns the union of the spec\'s events', () => {
    expectTypeOf(verifyWebhook('{}', {}, 'whsec_x')).resolves.toEqualTypeOf<WebhookEvent>();
    expectTypeOf<WebhookEventType>().toEqualTypeOf<Schemas['WebhookEventType']>();
  });

  it('a listed or retrieved event (GET /events) is the same union, less the per-delivery retry: no cast', async () => {
    const page = await payorch.events.list();
    const listed = page.events[0]!;
    expectTypeOf(listed).toEqualTypeOf<{ [K in WebhookEventType]: Omit<WebhookEventMap[K], 'retry'> }[WebhookEventType]>();
    expectTypeOf(listed.type_event).toEqualTypeOf<WebhookEventType>();
    // @ts-expect-error `data` differs per event: no `payment` before narrowing
    void listed.data.payment;
    // @ts-expect-error a recorded event is not a delivery: it has no retry count
    void listed.retry;
    if (listed.type_event === 'payment.succeeded') expectTypeOf(listed.data.payment.status).toEqualTypeOf<Schemas['PaymentStatus']>();
    if (listed.type_event === 'enrollment.unenrolled') expectTypeOf(listed.data).toEqualTypeOf<Schemas['EventEnrollmentData']>();
    for await (const event of payorch.events.list({ type: 'payment.refunded' })) {
      if (event.type_event === 'payment.refunded') expectTypeOf(event.data.payment.amount.refunded).toEqualTypeOf<number>();
    }
    const retrieved = await payorch.events.retrieve(listed.id);
    expectTypeOf(retrieved).toEqualTypeOf(listed);
    // The raw openapi-fetch call narrows the same way.
    const raw = await payorch.GET('/events/{event_id}', { params: { path: { event_id: listed.id } } });
    if (raw.data?.type_event === 'payment.succeeded') expectTypeOf(raw.data.data.payment.status).toEqualTypeOf<Schemas['PaymentStatus']>();
  });

  it('narrows by type_event to the event\'s own data', async () => {
    const event = await verifyWebhook('{}', {}, 'whsec_x');
    // @ts-expect-error `data` differs per event: no `payment` before narrowing
    void event.data.payment;
    switch (event.type_event) {
      case 'payment.succeeded':
      case 'payment.declined':
      case 'payment.failed':
      case 'payment.authorized':
      case 'payment.captured':
      case 'payment.canceled':
      case 'payment.refunded':
      case 'payment.pending':
      case 'payment.expired':
        expectTypeOf(event.data.payment).toEqualTypeOf<Schemas['Payment']>();
        break;
      case 'payment.chargeback':
        expectTypeOf(event).toEqualTypeOf<Schemas['EventPaymentChargeback']>();
        // @ts-expect-error an enrollment's data is not a chargeback's
        void event.data.payment_method;
        break;
      case 'enrollment.enrolled':
      case 'enrollment.declined':
      case 'enrollment.unenrolled':
        expectTypeOf(event.type).toEqualTypeOf<'enrollment'>();
        break;
      case 'payment.dispute.submitted':
      case 'payment.dispute.won':
      case 'payment.dispute.lost':
        expectTypeOf(event.type).toEqualTypeOf<'payment'>();
        break;
      case 'payment.operation.failed':
        expectTypeOf(event.data.transaction).toEqualTypeOf<Schemas['Transaction']>();
        break;
      case 'payment_link.paid':
        expectTypeOf(event.type).toEqualTypeOf<'payment_link'>();
        expectTypeOf(event.data.payment_link).toEqualTypeOf<Schemas['PaymentLink']>();
        break;
      default:
        // every event of the spec is handled above
        expectTypeOf(event).toBeNever();
    }
    // @ts-expect-error not an event of the spec
    if (event.type_event === 'payment.voided') return;
  });
});
