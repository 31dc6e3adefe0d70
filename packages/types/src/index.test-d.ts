/** Type tests of the helper types: what handlers and clients are typed with. */
import { describe, expectTypeOf, it } from 'vitest';
import type { OperationReply, OperationRequest, OperationStatus, RequestBody, Schemas, SuccessReply, WebhookEvent, WebhookEventType, webhooks } from './index.js';

describe('@payorch/types helpers', () => {
  it('RequestBody is the JSON body of the operation', () => {
    expectTypeOf<RequestBody<'createCustomer'>>().toEqualTypeOf<Schemas['CreateCustomerRequest']>();
    expectTypeOf<RequestBody<'getPayment'>>().toEqualTypeOf<undefined>();
  });

  it('OperationRequest has path params and headers of the spec', () => {
    expectTypeOf<OperationRequest<'disputeChargeback'>['params']>().toEqualTypeOf<{ payment_id: string; transaction_id: string }>();
    expectTypeOf<OperationRequest<'enrollPaymentMethod'>['headers']>().toHaveProperty('X-Idempotency-Key');
  });

  it('OperationReply is discriminated by status; errors carry the Problem body', () => {
    type R = OperationReply<'getPayment'>;
    expectTypeOf<Extract<R, { status: 200 }>['body']>().toEqualTypeOf<Schemas['Payment']>();
    expectTypeOf<Extract<R, { status: 404 }>['body']>().toEqualTypeOf<Schemas['Problem']>();
    expectTypeOf<Extract<R, { status: 304 }>['body']>().toEqualTypeOf<undefined>();
    expectTypeOf<OperationStatus<'revokeApiKey'>>().toEqualTypeOf<204 | 400 | 401 | 404 | 429 | 500 | 503>();
    expectTypeOf<SuccessReply<'disputeChargeback'>['body']>().toEqualTypeOf<Schemas['DisputedPayment']>();
  });

  it('the two Payment shapes differ where the interface spec says', () => {
    expectTypeOf<Schemas['Payment']['transactions']>().toEqualTypeOf<Schemas['Transaction'][]>();
    expectTypeOf<Schemas['DisputedPayment']['transactions']>().toEqualTypeOf<Schemas['Transaction']>();
  });

  it('WebhookEvent is every event body of the spec, discriminated by type_event', () => {
    // The event types a webhook endpoint subscribes to are exactly the events of the union.
    expectTypeOf<WebhookEventType>().toEqualTypeOf<Schemas['WebhookEventType']>();
    expectTypeOf<WebhookEvent['type_event']>().toEqualTypeOf<Schemas['WebhookEventType']>();
    // Each member is the request body of its webhook in the spec.
    type BodyOf<K extends keyof webhooks> = webhooks[K]['post']['requestBody']['content']['application/json'];
    expectTypeOf<WebhookEvent>().toEqualTypeOf<{ [K in keyof webhooks]: BodyOf<K> }[keyof webhooks]>();
    expectTypeOf<Extract<WebhookEvent, { type_event: 'payment.chargeback' }>>().toEqualTypeOf<Schemas['EventPaymentChargeback']>();
  });
});
