/**
 * Type tests of the handler contract (vitest typecheck): the handler map must cover every operation,
 * and a handler may only return the statuses and bodies its operation documents. Each
 * @ts-expect-error fails this file if the line ever compiles.
 */
import type { OperationReply, OperationRequest } from '@payorch/types';
import { describe, expectTypeOf, it } from 'vitest';
import type { Handlers } from '../src/context.js';
import { handlers } from '../src/handlers.js';

describe('the handler map', () => {
  it('implements every operation of the spec', () => {
    expectTypeOf(handlers).toExtend<Handlers>();
  });

  it('a missing operation fails the conformance check', () => {
    const { createCustomer: _removed, ...incomplete } = handlers;
    // @ts-expect-error createCustomer is missing
    const check: Handlers = incomplete;
    void check;
  });

  it('a wrong response field type fails the conformance check', () => {
    const broken = {
      ...handlers,
      async createCustomer() {
        return { status: 201 as const, body: { id: 42 } };
      },
    };
    // @ts-expect-error body.id must be a string (and the other Customer fields are missing)
    const check: Handlers = broken;
    void check;
  });

  it('an undocumented status fails the conformance check', () => {
    const broken = {
      ...handlers,
      async getHealth() {
        return { status: 418 as const, body: { status: 'ok' as const } };
      },
    };
    // @ts-expect-error getHealth documents only 200
    const check: Handlers = broken;
    void check;
  });
});

describe('per-operation request and reply types', () => {
  it('requests carry typed path params, query and body', () => {
    expectTypeOf<OperationRequest<'getPayment'>['params']>().toEqualTypeOf<{ payment_id: string }>();
    expectTypeOf<OperationRequest<'getPayment'>['query']>().toHaveProperty('raw_response');
    expectTypeOf<OperationRequest<'createCustomer'>['body']['merchant_customer_id']>().toEqualTypeOf<string>();
  });

  it('replies are a union discriminated on status', () => {
    type R = OperationReply<'createCustomer'>;
    expectTypeOf<Extract<R, { status: 201 }>['body']['id']>().toEqualTypeOf<string>();
    expectTypeOf<Extract<R, { status: 409 }>['body']['code']>().toEqualTypeOf<string>();
    expectTypeOf<R['status']>().toEqualTypeOf<201 | 400 | 401 | 409 | 413 | 415 | 429 | 500 | 503>();
  });
});
