/** HTTP shape of the checkout domain: checkout sessions, one-time tokens, customer sessions, payment links. */
import type { Handlers } from '../context.js';
import { cancelLink, createLink, getLink, linkNotFound } from './payment-links.js';
import { checkoutRepository as repo } from './repository.js';
import { createServerToken, createSession, createSessionToken, notFound, sessionPaymentMethods, toApiSession, updateSession } from './sessions.js';
import { createCustomerSession, enrollThroughSession } from './customer-sessions.js';

export const checkoutHandlers = {
  async createCheckoutSession({ body }, ctx) {
    const r = await createSession(ctx.db, ctx.merchant.organizationId, body);
    return r.ok ? { status: 201, body: toApiSession(r.session) } : r.problem;
  },

  async getCheckoutSession({ params }, ctx) {
    const row = await repo.findSession(ctx.db, ctx.merchant.organizationId, params.checkout_session);
    return row ? { status: 200, body: toApiSession(row) } : notFound(params.checkout_session);
  },

  async updateCheckoutSession({ params, body }, ctx) {
    const r = await updateSession(ctx.db, ctx.merchant.organizationId, params.checkout_session, body);
    return r.ok ? { status: 200, body: toApiSession(r.session) } : r.problem;
  },

  async listCheckoutPaymentMethods({ params }, ctx) {
    const row = await repo.findSession(ctx.db, ctx.merchant.organizationId, params.checkout_session);
    if (!row) return notFound(params.checkout_session);
    return { status: 200, body: await sessionPaymentMethods(ctx.db, ctx.deps, ctx.merchant.organizationId, row, ctx.baseUrl) };
  },

  async createCheckoutToken({ params, body }, ctx) {
    const r = await createSessionToken(ctx.db, ctx.deps, ctx.merchant, params.checkout_session, body);
    return r.ok ? { status: 201, body: r.token } : r.problem;
  },

  async createToken({ body }, ctx) {
    const r = await createServerToken(ctx.db, ctx.deps, ctx.merchant, body);
    return r.ok ? { status: 201, body: r.token } : r.problem;
  },

  async createPaymentLink({ body }, ctx) {
    const r = await createLink(ctx.db, ctx.merchant.organizationId, body, ctx.baseUrl);
    return r.ok ? { status: 201, body: r.link } : r.problem;
  },

  async getPaymentLink({ params }, ctx) {
    const link = await getLink(ctx.db, ctx.merchant.organizationId, params.code);
    return link ? { status: 200, body: link } : linkNotFound(params.code);
  },

  async cancelPaymentLink({ params }, ctx) {
    const r = await cancelLink(ctx.db, ctx.merchant.organizationId, params.code);
    return r.ok ? { status: 200, body: r.link } : r.problem;
  },

  async createCustomerSession({ body }, ctx) {
    const r = await createCustomerSession(ctx.db, ctx.merchant.organizationId, body);
    return r.ok ? { status: 201, body: r.session } : r.problem;
  },

  async enrollCustomerSessionPaymentMethod({ params, body }, ctx) {
    const r = await enrollThroughSession(ctx.db, ctx.deps, ctx.merchant, params.customer_session, body, { baseUrl: ctx.baseUrl, log: ctx.log });
    return r.ok ? { status: 201, body: r.method } : r.problem;
  },
} satisfies Partial<Handlers>;
