import type { Handlers } from '../context.js';
import { problem } from '../http/problems.js';
import { createCustomer } from './service.js';

export const customerHandlers = {
  async createCustomer({ body }, ctx) {
    const result = await createCustomer(ctx.db, ctx.merchant.organizationId, body);
    if (result.kind === 'duplicate') {
      return problem('CUSTOMER_ID_DUPLICATED', `A customer with merchant_customer_id "${body.merchant_customer_id}" already exists.`, {
        existing_customer_id: result.existingId,
      });
    }
    return { status: 201, body: result.customer };
  },
} satisfies Partial<Handlers>;
