/**
 * Payments, disputes, sandbox helpers and provider notifications: HTTP shape only. The rules live in the
 * services (create-payment, retrieve-payment, disputes, chargebacks, sandbox).
 */
import type { Handlers, RequestContext } from '../context.js';
import { ifNoneMatchHits } from '../http/conditional-requests.js';
import { describeFieldErrors, problem } from '../http/problems.js';
import type { Lenient } from '../http/lenient-input.js';
import { UnsettledReply } from '../idempotency/idempotency.js';
import { receiveNotification } from './chargebacks.js';
import { receiveConnectionNotification } from './provider-notifications/receive.js';
import { createPayment, type CreatePaymentInput } from './create-payment.js';
import { resolveDispute, submitEvidence, type TakesMoreEvidence } from './disputes.js';
import { cancelOrRefundPayment, cancelPayment, capturePayment, refundPayment, type LifecycleContext, type LifecycleOutcome } from './lifecycle.js';
import { listPayments } from './list-payments.js';
import { toApiTransaction } from './mapper.js';
import { etagOf, retrievePayment } from './retrieve-payment.js';
import { injectChargeback } from './sandbox.js';
import { settleSandboxPending } from './async-methods/sandbox.js';
import { vaultContext } from '../vault/handlers.js';

/** Query booleans arrive coerced by the validator, or as their text when it could not coerce in place. */
const flag = (v: unknown): boolean => v === true || v === 'true';

/** Header lookup by its lower-case wire name (Node lower-cases incoming header names). */
const header = (headers: object, name: string): string | undefined => (headers as Record<string, string | undefined>)[name.toLowerCase()];

/**
 * What a lifecycle operation needs of its request: the caller's organization, and the provider and
 * connection that hold the authorization (a follow-up never goes anywhere else).
 */
/** The catalogue's word on whether a provider takes evidence after a dispute's first batch (unknown: yes). */
const takesMoreEvidence = (ctx: RequestContext): TakesMoreEvidence => (providerId) =>
  ctx.deps.services.providerCatalogue.get(providerId)?.capabilities.features.additionalEvidence ?? true;

const lifecycleContext = (ctx: RequestContext, status: 200 | 201 = 200): LifecycleContext => {
  const { orchestration } = ctx.deps.services;
  const organizationId = ctx.merchant.organizationId;
  return {
    db: ctx.db,
    organizationId,
    async reach(db, providerId, connectionId) {
      // A provider this service does not run (a sandbox one outside sandbox mode): no reach, a 422.
      const provider = providerId ? orchestration.providers.get(providerId) : undefined;
      if (!provider) return undefined;
      const usable = connectionId ? await orchestration.routing.openConnection(db, organizationId, connectionId) : undefined;
      return { provider, ...(usable ? { connection: usable.context } : {}) };
    },
    bind: (tx, resource) => ctx.idempotency.bind(tx, resource),
    // Phase C's outcome is settled (an answer): its reply is the one lifecycleReply gives.
    complete: async (tx, outcome) => ctx.idempotency.complete?.(tx, lifecycleReply(outcome, status)),
    metrics: orchestration.metrics,
    log: ctx.deps.log,
  };
};

/**
 * The reply of a lifecycle outcome (201 for cancel-or-refund). An unsettled one (the provider did not
 * answer) is answered as it is while its idempotency record waits for the settled reply (UnsettledReply).
 */
function lifecycleReply<S extends 200 | 201>(outcome: LifecycleOutcome, status: S) {
  if (outcome.ok) return { status, body: outcome.payment };
  if ('unsettled' in outcome) throw new UnsettledReply(outcome.problem);
  return outcome.problem;
}

const sandboxOff = (path: string) => problem('NOT_FOUND', `No route ${path}: the server does not run in sandbox mode.`);

export const paymentHandlers = {
  async createPayment({ body }, ctx) {
    // The body as lenientInput left it (digit-string amounts are numbers, the payer's nulls dropped).
    const outcome = await createPayment(ctx.db, ctx.deps, ctx.merchant, body as CreatePaymentInput, vaultContext(ctx), ctx.idempotency);
    return outcome.ok ? { status: 201, body: outcome.payment } : outcome.problem;
  },

  async getPayment({ params, query, headers }, ctx) {
    const flags = { rawResponse: flag(query.raw_response), transactionsHistory: flag(query.transactions_history) };
    const payment = await retrievePayment(ctx.db, ctx.merchant.organizationId, params.payment_id, flags);
    if (!payment) return problem('PAYMENT_NOT_FOUND', `No payment ${params.payment_id}.`);
    const etag = etagOf(payment, flags);
    if (ifNoneMatchHits(header(headers, 'If-None-Match'), etag)) return { status: 304, headers: { ETag: etag } };
    return { status: 200, body: payment, headers: { ETag: etag } };
  },

  async listPayments({ query }, ctx) {
    const r = await listPayments(ctx.db, ctx.merchant.organizationId, {
      ...(query.merchant_order_id !== undefined ? { merchantOrderId: query.merchant_order_id } : {}),
      ...(query.status !== undefined ? { status: query.status } : {}),
      ...(query.customer_id !== undefined ? { customerId: query.customer_id } : {}),
      ...(query.created_gte !== undefined ? { createdGte: query.created_gte } : {}),
      ...(query.created_lt !== undefined ? { createdLt: query.created_lt } : {}),
      limit: Number(query.limit ?? 20),
      ...(query.starting_after !== undefined ? { startingAfter: query.starting_after } : {}),
    });
    return r.kind === 'ok' ? { status: 200, body: r.value } : problem('INVALID_REQUEST', describeFieldErrors(r.errors), { errors: r.errors });
  },

  async disputeChargeback({ params, body }, ctx) {
    const outcome = await submitEvidence(ctx.db, ctx.merchant, 'open', { paymentId: params.payment_id, transactionId: params.transaction_id }, body, takesMoreEvidence(ctx));
    return outcome.ok ? { status: 200, body: outcome.payment } : outcome.problem;
  },

  async addDisputeEvidence({ params, body }, ctx) {
    const outcome = await submitEvidence(ctx.db, ctx.merchant, 'add', { paymentId: params.payment_id, transactionId: params.transaction_id }, body, takesMoreEvidence(ctx));
    return outcome.ok ? { status: 200, body: outcome.payment } : outcome.problem;
  },

  async createSandboxChargeback({ params, body }, ctx) {
    const { provider } = ctx.deps.services;
    if (!ctx.deps.config.sandbox || !provider) return sandboxOff(`POST /v1/sandbox/payments/${params.payment_id}/chargebacks`);
    const outcome = await injectChargeback(ctx.deps.db, provider, ctx.merchant.organizationId, params.payment_id, body);
    return outcome.ok ? { status: 201, body: toApiTransaction(outcome.transaction, { rawResponse: false }) } : outcome.problem;
  },

  async resolveSandboxDispute({ params, body }, ctx) {
    if (!ctx.deps.config.sandbox) return sandboxOff(`POST /v1/sandbox/payments/${params.payment_id}/disputes/resolve`);
    const outcome = await resolveDispute(ctx.db, ctx.merchant.organizationId, params.payment_id, body.outcome);
    return outcome.ok ? { status: 200, body: outcome.payment } : outcome.problem;
  },

  async settleSandboxPendingPayment({ params, body }, ctx) {
    if (!ctx.deps.config.sandbox) return sandboxOff(`POST /v1/sandbox/payments/${params.payment_id}/outcome`);
    const outcome = await settleSandboxPending(ctx.deps, ctx.merchant.organizationId, params.payment_id, body.outcome);
    return outcome.ok ? { status: 200, body: outcome.payment } : outcome.problem;
  },

  async capturePayment({ params, body }, ctx) {
    return lifecycleReply(await capturePayment(lifecycleContext(ctx), params.payment_id, params.transaction_id, body as Lenient<typeof body>), 200);
  },

  async cancelPayment({ params, body }, ctx) {
    return lifecycleReply(await cancelPayment(lifecycleContext(ctx), params.payment_id, params.transaction_id, body), 200);
  },

  async refundPayment({ params, body }, ctx) {
    return lifecycleReply(await refundPayment(lifecycleContext(ctx), params.payment_id, params.transaction_id, body as Lenient<typeof body>), 200);
  },

  async cancelOrRefundPayment({ params, body }, ctx) {
    return lifecycleReply(await cancelOrRefundPayment(lifecycleContext(ctx, 201), params.payment_id, body as Lenient<typeof body>), 201);
  },

  async receiveProviderNotification(request, ctx) {
    // The exact bytes the provider signed (kept by the JSON parser for signed requests).
    const raw = (request as { rawBody?: Buffer }).rawBody;
    const { provider } = ctx.deps.services;
    // Outside sandbox mode no provider sends notifications here (the sandbox's do not exist).
    if (!provider) return problem('NOT_FOUND', `No provider ${request.params.provider_id} sends notifications here.`);
    const outcome = await receiveNotification(ctx.db, provider, request.params.provider_id, raw?.toString('utf8'), {
      'webhook-id': header(request.headers, 'webhook-id'),
      'webhook-timestamp': header(request.headers, 'webhook-timestamp'),
      'webhook-signature': header(request.headers, 'webhook-signature'),
    });
    if (outcome.kind === 'rejected') return outcome.problem;
    return { status: 200, body: { received: true, duplicate: outcome.kind === 'duplicate' } };
  },

  async receiveConnectionNotification(request, ctx) {
    const { db, services, log } = ctx.deps;
    const raw = (request as { rawBody?: Buffer }).rawBody;
    // Every header as received: each provider signs in its own (Stripe-Signature, x-signature, …).
    const headers = (request as { headers: Record<string, string | undefined> }).headers;
    const outcome = await receiveConnectionNotification(
      { db, providers: services.providers, connectionBox: services.connectionBox, log },
      request.params.connection_id,
      raw?.toString('utf8'),
      headers,
      request.query,
    );
    // One answer for an unknown connection and a bad signature: which connection ids exist is not told.
    if (outcome.kind === 'unauthorized') return problem('INVALID_CREDENTIALS', 'The notification is not signed for this connection, or its signature is wrong or outside the accepted time window.');
    const ack = outcome.acknowledgement;
    return { status: 200, body: ack?.body ?? '', ...(ack ? { headers: { 'Content-Type': ack.contentType } } : {}) };
  },
} satisfies Partial<Handlers>;
