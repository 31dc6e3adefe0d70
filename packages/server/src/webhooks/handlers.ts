/** HTTP shape of the webhook-endpoints API; the rules live in service.ts. */
import type { Handlers, RequestContext } from '../context.js';
import { describeFieldErrors, problem, type FieldError } from '../http/problems.js';
import { getEvent, listEvents } from './event-log.js';
import * as service from './service.js';
import * as yuno from './yuno-view.js';

const invalid = (errors: FieldError[]) => problem('INVALID_REQUEST', describeFieldErrors(errors), { errors });
const endpointNotFound = (id: string) => problem('WEBHOOK_ENDPOINT_NOT_FOUND', `No webhook endpoint ${id}.`);
const deliveryNotFound = (id: string) => problem('WEBHOOK_DELIVERY_NOT_FOUND', `No webhook delivery ${id} for this endpoint.`);
const rules = (ctx: RequestContext) => ctx.deps.services.webhooks.rules;
const unknownAccount = () => problem('INVALID_ACCOUNT_ID', 'The account_id is not an account of your organization.');
const webhookNotFound = (id: string) => problem('WEBHOOK_ENDPOINT_NOT_FOUND', `No webhook ${id}.`);

export const webhookHandlers = {
  async createWebhookEndpoint({ body }, ctx) {
    const r = await service.createEndpoint(ctx.db, rules(ctx), ctx.merchant.organizationId, body);
    if (r.kind === 'invalid') return invalid(r.errors);
    if (r.kind === 'conflict') return problem('WEBHOOK_ENDPOINT_LIMIT_REACHED', r.detail);
    if (r.kind !== 'ok') throw new Error(`unexpected result ${r.kind}`);
    return { status: 201, body: r.value };
  },

  async listWebhookEndpoints({ query }, ctx) {
    const r = await service.listEndpoints(ctx.db, ctx.merchant.organizationId, query.limit ?? 20, query.starting_after);
    if (r.kind === 'invalid') return invalid(r.errors);
    if (r.kind !== 'ok') throw new Error(`unexpected result ${r.kind}`);
    return { status: 200, body: r.value };
  },

  async getWebhookEndpoint({ params }, ctx) {
    const r = await service.getEndpoint(ctx.db, ctx.merchant.organizationId, params.webhook_endpoint_id);
    return r.kind === 'ok' ? { status: 200, body: r.value } : endpointNotFound(params.webhook_endpoint_id);
  },

  async updateWebhookEndpoint({ params, body }, ctx) {
    const r = await service.updateEndpoint(ctx.db, rules(ctx), ctx.merchant.organizationId, params.webhook_endpoint_id, body);
    if (r.kind === 'invalid') return invalid(r.errors);
    return r.kind === 'ok' ? { status: 200, body: r.value } : endpointNotFound(params.webhook_endpoint_id);
  },

  async deleteWebhookEndpoint({ params }, ctx) {
    const r = await service.deleteEndpoint(ctx.db, ctx.merchant.organizationId, params.webhook_endpoint_id);
    return r.kind === 'ok' ? { status: 204 } : endpointNotFound(params.webhook_endpoint_id);
  },

  async rotateWebhookEndpointSecret({ params, body }, ctx) {
    const overlap = body?.previous_secret_expires_in ?? service.DEFAULT_SECRET_OVERLAP_SECONDS;
    const r = await service.rotateSecret(ctx.db, rules(ctx), ctx.merchant.organizationId, params.webhook_endpoint_id, overlap);
    return r.kind === 'ok' ? { status: 200, body: r.value } : endpointNotFound(params.webhook_endpoint_id);
  },

  async listWebhookDeliveries({ params, query }, ctx) {
    const r = await service.listDeliveries(ctx.db, ctx.merchant.organizationId, params.webhook_endpoint_id, {
      eventId: query.event_id,
      status: query.status,
      limit: query.limit ?? 20,
      startingAfter: query.starting_after,
    });
    if (r.kind === 'invalid') return invalid(r.errors);
    return r.kind === 'ok' ? { status: 200, body: r.value } : endpointNotFound(params.webhook_endpoint_id);
  },

  async getWebhookDelivery({ params }, ctx) {
    const r = await service.getDelivery(ctx.db, ctx.merchant.organizationId, params.webhook_endpoint_id, params.delivery_id);
    if (r.kind === 'ok') return { status: 200, body: r.value };
    return r.kind === 'no-endpoint' ? endpointNotFound(params.webhook_endpoint_id) : deliveryNotFound(params.delivery_id);
  },

  async redeliverWebhookDelivery({ params }, ctx) {
    const r = await service.redeliver(ctx.db, rules(ctx), ctx.merchant.organizationId, params.webhook_endpoint_id, params.delivery_id);
    if (r.kind === 'ok') return { status: 202, body: r.value };
    if (r.kind === 'conflict') return problem('INVALID_STATUS', r.detail);
    return r.kind === 'no-endpoint' ? endpointNotFound(params.webhook_endpoint_id) : deliveryNotFound(params.delivery_id);
  },

  // ---- Yuno's view of the same endpoints (yuno-view.ts)

  async listWebhooks({ query }, ctx) {
    const r = await yuno.listWebhooks(ctx.db, ctx.merchant.organizationId, query.account_id, query.state);
    if (r.kind === 'unknown-account') return unknownAccount();
    if (r.kind !== 'ok') throw new Error(`unexpected result ${r.kind}`);
    return { status: 200, body: r.value };
  },

  async createWebhook({ body }, ctx) {
    const r = await yuno.createWebhook(ctx.db, rules(ctx), ctx.merchant.organizationId, body);
    switch (r.kind) {
      case 'ok': return { status: 201, body: r.value };
      case 'invalid': return invalid(r.errors);
      case 'unknown-account': return unknownAccount();
      case 'name-taken': return problem('WEBHOOK_ALREADY_EXISTS', r.detail);
      case 'limit': return problem('WEBHOOK_ENDPOINT_LIMIT_REACHED', r.detail);
      default: throw new Error(`unexpected result ${r.kind}`);
    }
  },

  async getWebhook({ params, query }, ctx) {
    const r = await yuno.getWebhook(ctx.db, ctx.merchant.organizationId, query.account_id, params.webhook_id);
    if (r.kind === 'ok') return { status: 200, body: r.value };
    return r.kind === 'unknown-account' ? unknownAccount() : webhookNotFound(params.webhook_id);
  },

  async updateWebhook({ params, body }, ctx) {
    const r = await yuno.updateWebhook(ctx.db, rules(ctx), ctx.merchant.organizationId, params.webhook_id, body);
    switch (r.kind) {
      case 'ok': return { status: 200, body: r.value };
      case 'invalid': return invalid(r.errors);
      case 'unknown-account': return unknownAccount();
      case 'name-taken': return problem('WEBHOOK_ALREADY_EXISTS', r.detail);
      case 'not-found': return webhookNotFound(params.webhook_id);
      default: throw new Error(`unexpected result ${r.kind}`);
    }
  },

  async deleteWebhook({ params, query }, ctx) {
    const r = await yuno.deleteWebhook(ctx.db, ctx.merchant.organizationId, query.account_id, params.webhook_id);
    if (r.kind === 'ok') return { status: 200, body: r.value };
    return r.kind === 'unknown-account' ? unknownAccount() : webhookNotFound(params.webhook_id);
  },

  async listEvents({ query }, ctx) {
    const r = await listEvents(ctx.db, ctx.merchant.organizationId, {
      ...(query.type !== undefined ? { type: query.type } : {}),
      ...(query.created_gte !== undefined ? { createdGte: query.created_gte } : {}),
      ...(query.created_lt !== undefined ? { createdLt: query.created_lt } : {}),
      limit: Number(query.limit ?? 20),
      ...(query.starting_after !== undefined ? { startingAfter: query.starting_after } : {}),
    });
    return r.kind === 'ok' ? { status: 200, body: r.value } : invalid(r.errors);
  },

  async getEvent({ params }, ctx) {
    const event = await getEvent(ctx.db, ctx.merchant.organizationId, params.event_id);
    return event ? { status: 200, body: event } : problem('EVENT_NOT_FOUND', `No event ${params.event_id} (events are kept 30 days).`);
  },
} satisfies Partial<Handlers>;
