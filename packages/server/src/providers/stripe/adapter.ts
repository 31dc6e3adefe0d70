/**
 * The STRIPE adapter: PaymentProvider over Stripe's PaymentIntents API through the official SDK (client.ts).
 *
 * - purchase / authorize: one PaymentIntent created and confirmed with the card (capture_method manual for
 *   an authorization); Idempotency-Key = our reference, so a retried call returns Stripe's first answer.
 * - startAsyncPayment (PIX, boleto, OXXO): a PaymentIntent confirmed with `payment_method_data[type]`; its
 *   `next_action` is the shopper's action, and the `payment_intent.*` webhooks end the pending payment.
 * - capture (amount_to_capture), void (cancel), refund (refunds.create, several up to the captured amount).
 * - verify: a SetupIntent confirmed with the card (zero amount).
 * - lookup(reference): PaymentIntent search on the metadata we write: the charge's reference at creation,
 *   each follow-up's mark on its intent just before the follow-up is sent (transformers.ts operationKey),
 *   so reconciliation finds every operation by our reference alone; a reference not found is closed at
 *   Stripe first (closeReference), so a call arriving late is refused.
 * - forwardDisputeEvidence: files.create (purpose dispute_evidence) per document, then disputes.update.
 * - notifications per connection (notifications.ts).
 */
import { createHash } from 'node:crypto';
import type Stripe from 'stripe';
import type { ConnectionNotifications, ConnectorDeps } from '../connector.js';
import {
  NotificationSignatureError,
  ProviderUnavailableError,
  evidenceRefusal,
  isDefinitiveRefusal,
  type AsyncCharge,
  type AsyncStart,
  type Charge,
  type ChargebackEvent,
  type ConnectionContext,
  type DisputeEvidenceAck,
  type DisputeEvidenceForward,
  type FollowUp,
  type PaymentProvider,
  type ProviderCard,
  type ProviderLookup,
  type ProviderResult,
} from '../provider.js';
import { precheckAsyncCharge } from '../async-precheck.js';
import { callStripe, STRIPE, stripeClient, type StripeFailure } from './client.js';
import { codeRow } from './codes.js';
import { parseStripeNotification } from './notifications.js';
import {
  asyncIntentParams,
  asyncStartOf,
  evidenceFields,
  missingPayerData,
  STRIPE_ASYNC_METHODS,
  followUpResult,
  META,
  operationKey,
  paymentIntentParams,
  paymentIntentResult,
  refundResult,
  refused,
  rowResult,
  setupIntentParams,
  setupIntentResult,
  toMinor,
  type FollowUpKind,
} from './transformers.js';

export class StripeAdapter implements PaymentProvider, ConnectionNotifications {
  readonly id = STRIPE;
  /** A reference lookup does not find is closed at Stripe first (closeReference): "not found" is final. */
  readonly lookupClosesReference = true;

  constructor(private readonly deps: Pick<ConnectorDeps, 'baseUrl'>) {}

  private client(connection: ConnectionContext | undefined): Stripe {
    if (!connection) throw new ProviderUnavailableError(STRIPE, 'NOT_SENT', 'a STRIPE call needs a connection (its credentials)');
    return stripeClient(connection, this.deps.baseUrl);
  }

  purchase(input: Charge): Promise<ProviderResult> {
    return this.charge(input, true);
  }

  authorize(input: Charge): Promise<ProviderResult> {
    return this.charge(input, false);
  }

  /**
   * Zero-amount verification: a SetupIntent confirmed with the card (Stripe checks it with the issuer and
   * keeps no charge). Declines come back as card errors, through the same code table.
   */
  async verify(input: { card: ProviderCard; currency: string | null; reference: string; connection?: ConnectionContext }): Promise<ProviderResult> {
    const stripe = this.client(input.connection);
    const answer = await callStripe(() => stripe.setupIntents.create(setupIntentParams(input.card, input.reference), { idempotencyKey: input.reference }));
    if (answer.ok) return setupIntentResult(answer.value);
    return this.failureResult(answer.failure, 'DECLINED');
  }

  private async charge(input: Charge, capture: boolean): Promise<ProviderResult> {
    const amount = toMinor(input.amount, input.currency);
    if (amount === undefined) return notRepresentable(input.amount, input.currency);
    const stripe = this.client(input.connection);
    const answer = await callStripe(() => stripe.paymentIntents.create(paymentIntentParams(input, capture, amount), { idempotencyKey: input.reference }));
    if (answer.ok) return paymentIntentResult(answer.value);
    return this.failureResult(answer.failure, 'DECLINED');
  }

  /**
   * PIX, boleto and OXXO: one PaymentIntent created and confirmed with `payment_method_data[type]`
   * (transformers.ts asyncIntentParams), Idempotency-Key = our reference. Stripe answers `requires_action`
   * with the code or voucher in `next_action`; the payment then waits for the `payment_intent.*` webhook
   * (notifications.ts). A method, currency or payer Stripe would refuse is answered here, before any call.
   */
  async startAsyncPayment(input: AsyncCharge): Promise<AsyncStart> {
    const checked = precheckAsyncCharge({ id: this.id, name: 'Stripe' }, STRIPE_ASYNC_METHODS, input, missingPayerData);
    if (!checked.ok) return { result: rejected(checked.reason), action: null };
    const method = checked.method;
    const amount = toMinor(input.amount, input.currency);
    if (amount === undefined) return { result: notRepresentable(input.amount, input.currency), action: null };
    const stripe = this.client(input.connection);
    const answer = await callStripe(() => stripe.paymentIntents.create(asyncIntentParams(input, method, amount), { idempotencyKey: input.reference }));
    if (answer.ok) return asyncStartOf(answer.value, method);
    return { result: this.failureResult(answer.failure, 'DECLINED'), action: null };
  }

  async capture(input: FollowUp): Promise<ProviderResult> {
    const amount = toMinor(input.amount, input.currency);
    if (amount === undefined) return notRepresentable(input.amount, input.currency);
    const stripe = this.client(input.connection);
    const marked = await this.mark(stripe, input, 'capture');
    if (marked) return marked;
    const answer = await callStripe(() => stripe.paymentIntents.capture(input.providerTransactionId, { amount_to_capture: amount }, { idempotencyKey: input.reference }));
    return answer.ok ? followUpResult(answer.value, 'succeeded', 'CAPTURE_DECLINED') : this.failureResult(answer.failure, 'CAPTURE_DECLINED', input.providerTransactionId);
  }

  /**
   * Cancels an authorization. Stripe cannot cancel a captured PaymentIntent (`payment_intent_unexpected_state`),
   * and reconciliation reverses late approvals through void, purchases included: a captured intent is then
   * refunded whole, under an idempotency key of its own derived from our reference (a retried reversal
   * finds the same refund), as Mercado Pago's void does. The API's cancel only reaches authorizations.
   */
  async void(input: FollowUp): Promise<ProviderResult> {
    const stripe = this.client(input.connection);
    const marked = await this.mark(stripe, input, 'void');
    if (marked) return marked;
    const answer = await callStripe(() => stripe.paymentIntents.cancel(input.providerTransactionId, {}, { idempotencyKey: input.reference }));
    if (answer.ok) return followUpResult(answer.value, 'canceled', 'VOID_DECLINED');
    const refused = this.failureResult(answer.failure, 'VOID_DECLINED', input.providerTransactionId);
    if (answer.failure.kind !== 'refused' || answer.failure.code !== 'payment_intent_unexpected_state') return refused;
    const intent = await callStripe(() => stripe.paymentIntents.retrieve(input.providerTransactionId));
    if (!intent.ok || intent.value.status !== 'succeeded') return refused;
    const reversal = `${input.reference}:reversal`;
    const refund = await callStripe(() =>
      stripe.refunds.create({ payment_intent: input.providerTransactionId, metadata: { [META.reference]: reversal } }, { idempotencyKey: reversal }),
    );
    if (!refund.ok) return this.failureResult(refund.failure, 'VOID_DECLINED', input.providerTransactionId);
    const result = refundResult(refund.value);
    return result.outcome === 'SUCCEEDED' ? { ...result, providerTransactionId: input.providerTransactionId } : { ...result, responseCode: 'VOID_DECLINED' };
  }

  async refund(input: FollowUp): Promise<ProviderResult> {
    const amount = toMinor(input.amount, input.currency);
    if (amount === undefined) return notRepresentable(input.amount, input.currency);
    const stripe = this.client(input.connection);
    const marked = await this.mark(stripe, input, 'refund');
    if (marked) return marked;
    const answer = await callStripe(() =>
      stripe.refunds.create({ payment_intent: input.providerTransactionId, amount, metadata: { [META.reference]: input.reference } }, { idempotencyKey: input.reference }),
    );
    return answer.ok ? refundResult(answer.value) : this.failureResult(answer.failure, 'REFUND_DECLINED', input.providerTransactionId);
  }

  /**
   * Writes a follow-up's reference on its intent BEFORE the follow-up is sent (capture, cancel and refund
   * take no searchable mark of their own): lookup's search then finds the intent by the reference, and
   * a follow-up whose call never happened has no idempotency key used at Stripe. A refusal of the mark is
   * the follow-up's answer.
   */
  private async mark(stripe: Stripe, input: FollowUp, kind: FollowUpKind): Promise<ProviderResult | null> {
    const answer = await callStripe(() =>
      stripe.paymentIntents.update(input.providerTransactionId, { metadata: { [operationKey(input.reference)]: kind } }, { idempotencyKey: `${input.reference}:mark` }),
    );
    if (answer.ok) return null;
    const declined = kind === 'capture' ? 'CAPTURE_DECLINED' : kind === 'void' ? 'VOID_DECLINED' : 'REFUND_DECLINED';
    return this.failureResult(answer.failure, declined, input.providerTransactionId);
  }

  /**
   * Closes a reference that lookup did not find, so that a call still on its way cannot act later: a
   * placeholder PaymentIntent is created under the reference's Idempotency-Key (never confirmed, so
   * nothing is charged; then cancelled), and Stripe refuses any later request with that key and other
   * parameters (idempotency_error). 'used': the key had been used already (an operation exists that the
   * search does not show yet, or a refusal Stripe stored), and the caller must not answer "not found".
   */
  private async closeReference(stripe: Stripe, reference: string): Promise<'closed' | 'used'> {
    const placeholder = await callStripe(() =>
      stripe.paymentIntents.create(
        {
          amount: 100,
          currency: 'usd',
          automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
          description: 'payorch reconciliation: reference closed (never confirmed, nothing charged)',
          metadata: { [META.closedReference]: reference },
        },
        { idempotencyKey: reference },
      ),
    );
    if (!placeholder.ok) {
      if (placeholder.failure.kind === 'refused' && placeholder.failure.type === 'idempotency_error') return 'used';
      throw new ProviderUnavailableError(STRIPE, 'BAD_RESPONSE', `STRIPE refused to close a reference (${describe(placeholder.failure)})`);
    }
    if (placeholder.value.status !== 'canceled') {
      // Tidiness only (an unconfirmed intent moves no money): a failure here changes nothing.
      await callStripe(() => stripe.paymentIntents.cancel(placeholder.value.id, { cancellation_reason: 'abandoned' })).catch(() => undefined);
    }
    return 'closed';
  }

  /** "Not found", once the reference is closed; a reference already used means the search lags: asked again later. */
  private async notFound(stripe: Stripe, reference: string, marked: boolean): Promise<ProviderLookup> {
    const closed = await this.closeReference(stripe, reference);
    // Marked follow-ups: their intent was found and shows no effect, so a used key is a refusal Stripe stored.
    if (closed === 'used' && !marked) throw new ProviderUnavailableError(STRIPE, 'BAD_RESPONSE', 'STRIPE knows the reference but its search does not show it yet');
    return { found: false };
  }

  /**
   * Finds the operation sent under `reference` (PaymentIntent search on our metadata). Not found: the
   * reference is closed first (closeReference), so a call still on its way is refused when it arrives,
   * and a reference Stripe already knows (its search is eventually consistent: an intent is searchable
   * within about a minute) is asked again later rather than answered "not found".
   */
  async lookup(input: { reference: string; connection?: ConnectionContext }): Promise<ProviderLookup> {
    const stripe = this.client(input.connection);
    const ref = input.reference.replace(/['\\]/g, '');
    const opKey = operationKey(input.reference);
    const query = [`metadata['${META.reference}']:'${ref}'`, ...(['capture', 'void', 'refund'] as const).map((kind) => `metadata['${opKey}']:'${kind}'`)].join(' OR ');
    const answer = await callStripe(() => stripe.paymentIntents.search({ query, limit: 10, expand: ['data.latest_charge'] }));
    if (!answer.ok) throw new ProviderUnavailableError(STRIPE, 'BAD_RESPONSE', `STRIPE search refused (HTTP ${answer.failure.kind === 'refused' ? answer.failure.status : 402})`);
    const pi = answer.value.data[0];
    if (!pi) return this.notFound(stripe, input.reference, false);
    const meta = pi.metadata ?? {};
    if (meta[META.reference] === input.reference) {
      // The charge itself: an approval, or its decline; voided when an authorization was cancelled since.
      if (pi.status === 'canceled') {
        const charge = typeof pi.latest_charge === 'object' ? pi.latest_charge : null;
        const wasAuthorized = charge?.status === 'succeeded';
        return wasAuthorized
          ? { found: true, result: paymentIntentResult({ ...pi, status: 'requires_capture' }), voided: true }
          : { found: true, result: paymentIntentResult(pi), voided: false };
      }
      return { found: true, result: paymentIntentResult(pi), voided: false };
    }
    const kind = meta[opKey];
    if (kind === 'capture') {
      return pi.status === 'succeeded' ? { found: true, result: followUpResult(pi, 'succeeded', 'CAPTURE_DECLINED'), voided: false } : this.notFound(stripe, input.reference, true);
    }
    if (kind === 'void') {
      return pi.status === 'canceled' ? { found: true, result: followUpResult(pi, 'canceled', 'VOID_DECLINED'), voided: false } : this.notFound(stripe, input.reference, true);
    }
    if (kind !== 'refund') return this.notFound(stripe, input.reference, false);
    // A refund: marked on the intent before it was sent; the refund itself carries the reference.
    const refunds = await callStripe(() => stripe.refunds.list({ payment_intent: pi.id, limit: 100 }));
    if (!refunds.ok) throw new ProviderUnavailableError(STRIPE, 'BAD_RESPONSE', 'STRIPE refund list refused');
    const refund = refunds.value.data.find((r) => r.metadata?.[META.reference] === input.reference);
    return refund ? { found: true, result: refundResult(refund), voided: false } : this.notFound(stripe, input.reference, true);
  }

  /**
   * Uploads each document (files.create, purpose dispute_evidence), then updates the dispute with them and
   * submits it. Idempotent by `reference`: the uploads and the update carry keys derived from it, and
   * Stripe's `Idempotent-Replayed` header says the update was a re-delivery.
   */
  async forwardDisputeEvidence(input: DisputeEvidenceForward): Promise<DisputeEvidenceAck> {
    if (!input.chargebackId) throw new Error('stripe: evidence needs the dispute id (the chargeback id Stripe sent)');
    for (const doc of input.evidence) {
      if (createHash('sha256').update(doc.content).digest('hex') !== doc.sha256) throw new Error(`stripe: evidence ${doc.id} does not match its SHA-256`);
    }
    const stripe = this.client(input.connection);
    const files: { fileId: string; category: string; fileName: string }[] = [];
    for (const doc of input.evidence) {
      const uploaded = await callStripe(() =>
        stripe.files.create({ purpose: 'dispute_evidence', file: { data: doc.content, name: doc.fileName, type: doc.contentType } }, { idempotencyKey: `${input.reference}:${doc.id}` }),
      );
      if (!uploaded.ok) throw stripeEvidenceRefusal(`stripe: the evidence upload was refused (${describe(uploaded.failure)})`, uploaded.failure);
      files.push({ fileId: uploaded.value.id, category: doc.category, fileName: doc.fileName });
    }
    const updated = await callStripe(() =>
      stripe.disputes.update(
        input.chargebackId!,
        { evidence: evidenceFields(files) as Stripe.DisputeUpdateParams.Evidence, metadata: { [META.reference]: input.reference, [META.paymentId]: input.paymentId }, submit: true },
        { idempotencyKey: input.reference },
      ),
    );
    if (!updated.ok) throw stripeEvidenceRefusal(`stripe: the dispute update was refused (${describe(updated.failure)})`, updated.failure);
    // lastResponse is the fetch Response (a Headers instance) with the fetch client, a plain record with Node's.
    const headers = updated.value.lastResponse?.headers as unknown;
    const replayed = (headers instanceof Headers ? headers.get('idempotent-replayed') : (headers as Record<string, string> | undefined)?.['idempotent-replayed']) === 'true';
    return { providerDisputeId: updated.value.id, duplicate: replayed };
  }

  parseNotification(): Promise<ChargebackEvent> {
    return Promise.reject(new NotificationSignatureError('STRIPE notifications arrive at /v1/provider-notifications/{connection_id}'));
  }

  parseConnectionNotification(rawBody: string, headers: Readonly<Record<string, string | undefined>>, connection: ConnectionContext) {
    return parseStripeNotification(rawBody, headers, connection, {
      retrievePaymentIntent: async (id, c) => {
        const stripe = this.client(c);
        const answer = await callStripe(() => stripe.paymentIntents.retrieve(id));
        if (!answer.ok) throw new ProviderUnavailableError(STRIPE, 'BAD_RESPONSE', `STRIPE could not read the disputed payment (${describe(answer.failure)})`);
        return answer.value;
      },
    });
  }

  /** A Stripe refusal as a result: card errors through the code table, anything else by what it says. */
  private failureResult(failure: StripeFailure, declinedCode: string, providerTransactionId = ''): ProviderResult {
    if (failure.kind === 'card') {
      return { ...rowResult(codeRow({ decline_code: failure.declineCode, code: failure.code })), providerTransactionId: failure.paymentIntentId ?? providerTransactionId, rawResponse: failure.raw };
    }
    const raw = failure.raw;
    if (failure.status === 401 || failure.status === 403) return { ...refused('ERROR', 'PROVIDER_AUTHENTICATION_FAILED', 'Stripe refused the connection credentials'), providerTransactionId, rawResponse: raw };
    if (failure.status === 429) return { ...rowResult(codeRow({ code: 'rate_limit' })), providerTransactionId, rawResponse: raw };
    if (failure.type === 'idempotency_error') return { ...refused('ERROR', 'PROVIDER_REFERENCE_CLOSED', 'Stripe refused a reference already used with other parameters'), providerTransactionId, rawResponse: raw };
    if (failure.code === 'resource_missing') return { ...refused('DECLINED', 'TRANSACTION_NOT_FOUND', 'Stripe has no such payment'), providerTransactionId, rawResponse: raw };
    if (declinedCode === 'DECLINED') return { ...refused('ERROR', 'PROVIDER_REQUEST_REJECTED', `Stripe rejected the request (${failure.code ?? failure.type})`), providerTransactionId, rawResponse: raw };
    return { ...refused('DECLINED', declinedCode, `Stripe refused it (${failure.code ?? failure.type})`), providerTransactionId, rawResponse: raw };
  }
}

/** A request refused before it was sent (nothing reached Stripe): an error the route may move on from. */
function rejected(message: string): ProviderResult {
  return { ...refused('ERROR', 'PROVIDER_REQUEST_REJECTED', message), providerTransactionId: '', rawResponse: {} };
}

function notRepresentable(amount: string, currency: string): ProviderResult {
  return { ...refused('ERROR', 'PROVIDER_REQUEST_REJECTED', `${amount} ${currency} cannot be expressed in Stripe's minor units`), providerTransactionId: '', rawResponse: {} };
}

/**
 * Evidence Stripe refused: for good (ProviderRefusedError: the outbox gives the batch up, logged as an error)
 * when the request itself is wrong for Stripe (a definitive status, provider.ts isDefinitiveRefusal, of an
 * invalid_request_error, e.g. a dispute already submitted: Stripe takes a dispute's evidence once); otherwise
 * an error retried later.
 */
function stripeEvidenceRefusal(message: string, f: StripeFailure): Error {
  return evidenceRefusal(STRIPE, message, f.kind === 'refused' && isDefinitiveRefusal(f.status) && f.type === 'invalid_request_error');
}

const describe = (f: StripeFailure) => (f.kind === 'card' ? (f.declineCode ?? f.code ?? 'card_error') : `HTTP ${f.status} ${f.code ?? f.type}`);
