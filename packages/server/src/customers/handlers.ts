import type { Handlers } from '../context.js';
import { ifNoneMatchHits } from '../http/conditional-requests.js';
import { describeFieldErrors, problem } from '../http/problems.js';
import { createCustomer, deleteCustomer, getCustomer, listCustomers, updateCustomer } from './service.js';

/** Header lookup by its lower-case wire name (Node lower-cases incoming header names). */
const header = (headers: object, name: string): string | undefined => (headers as Record<string, string | undefined>)[name.toLowerCase()];

const notFound = (id: string) => problem('CUSTOMER_NOT_FOUND', `No customer with id ${id}.`);
const duplicated = (merchantCustomerId: string, existingId: string) =>
  problem('CUSTOMER_ID_DUPLICATED', `A customer with merchant_customer_id "${merchantCustomerId}" already exists.`, {
    existing_customer_id: existingId,
  });

export const customerHandlers = {
  async createCustomer({ body }, ctx) {
    const result = await createCustomer(ctx.db, ctx.merchant.organizationId, body);
    if (result.kind === 'duplicate') return duplicated(body.merchant_customer_id, result.existingId);
    return { status: 201, body: result.customer };
  },

  async getCustomer({ params, headers }, ctx) {
    const found = await getCustomer(ctx.db, ctx.merchant.organizationId, { id: params.customer_id });
    if (!found) return notFound(params.customer_id);
    if (ifNoneMatchHits(header(headers, 'If-None-Match'), found.etag)) return { status: 304, headers: { ETag: found.etag } };
    return { status: 200, body: found.customer, headers: { ETag: found.etag } };
  },

  async getCustomerByMerchantCustomerId({ query }, ctx) {
    const found = await getCustomer(ctx.db, ctx.merchant.organizationId, { merchantCustomerId: query.merchant_customer_id });
    if (!found) return problem('CUSTOMER_NOT_FOUND', `No customer with merchant_customer_id "${query.merchant_customer_id}".`);
    return { status: 200, body: found.customer, headers: { ETag: found.etag } };
  },

  async listCustomers({ query }, ctx) {
    const r = await listCustomers(ctx.db, ctx.merchant.organizationId, {
      ...(query.created_gte !== undefined ? { createdGte: query.created_gte } : {}),
      ...(query.created_lt !== undefined ? { createdLt: query.created_lt } : {}),
      limit: Number(query.limit ?? 20),
      ...(query.starting_after !== undefined ? { startingAfter: query.starting_after } : {}),
    });
    return r.kind === 'ok' ? { status: 200, body: r.value } : problem('INVALID_REQUEST', describeFieldErrors(r.errors), { errors: r.errors });
  },

  async updateCustomer({ params, body, headers }, ctx) {
    const result = await updateCustomer(ctx.db, ctx.merchant.organizationId, params.customer_id, body, header(headers, 'If-Match'));
    switch (result.kind) {
      case 'not_found':
        return notFound(params.customer_id);
      case 'stale':
        return problem('PRECONDITION_FAILED', 'The customer changed since the ETag given in If-Match; read it again and retry.');
      case 'duplicate':
        return duplicated(body.merchant_customer_id ?? '', result.existingId);
      case 'updated':
        return { status: 200, body: result.customer, headers: { ETag: result.etag } };
    }
  },

  async deleteCustomer({ params }, ctx) {
    const paymentMethods = ctx.deps.services.customerPaymentMethods;
    if (!(await deleteCustomer(ctx.db, paymentMethods, ctx.merchant.organizationId, params.customer_id, ctx.baseUrl))) return notFound(params.customer_id);
    // The destroyed data keys' dead row versions still unwrap with the keyring until pruned: prune them now.
    ctx.afterCommit(() => paymentMethods.pruneDestroyedKeys(ctx.deps.db, ctx.log));
    return { status: 202 };
  },
} satisfies Partial<Handlers>;
