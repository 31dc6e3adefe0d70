/**
 * The Mercado Pago adapter: PaymentProvider & ConnectionNotifications over Mercado Pago's Payments API
 * (client.ts for why the transport is ours and the contract the `mercadopago` package's).
 *
 * Every call names its connection (access token, timeout): there is no default account. Our reference goes
 * out as X-Idempotency-Key (Mercado Pago answers a repeated key with the first answer and never charges
 * twice) and, on a charge, as external_reference (lookup searches by it).
 *
 * PIX and boleto payments take one call (payment_method_id pix / bolbradesco): Mercado Pago answers them
 * `pending` with the QR code or the boleto, and its `payment` notification ends them.
 *
 * Card payments take two calls: the card becomes a card token (POST /v1/card_tokens, as Mercado Pago's
 * own checkout does in the browser), then the payment is created with that token. Declines are results
 * (codes.ts); an answer that is not a final word (a payment still in process) is an unknown outcome, as a
 * timeout is: the attempt stays pending and reconciliation asks again by reference.
 */
import type { ConnectionNotifications, ParsedNotification } from '../connector.js';
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
  type FollowUpLookup,
  type PaymentProvider,
  type ProviderCard,
  type ProviderLookup,
  type ProviderResult,
} from '../provider.js';
import { precheckAsyncCharge } from '../async-precheck.js';
import { MERCADO_PAGO, MERCADO_PAGO_PUBLIC_API, mercadoPagoCall, mercadoPagoError, type MercadoPagoRequest } from './client.js';
import { parseMercadoPagoNotification } from './notifications.js';
import type { CardTokenResponse, PaymentResponse, PaymentSearch, RefundResponse } from './sdk-types.js';
import {
  approvedResult,
  asyncLookupResult,
  asyncPaymentBody,
  asyncStartOf,
  cardTokenBody,
  errorResult,
  isUndecided,
  MERCADO_PAGO_ASYNC_METHODS,
  missingBoletoPayer,
  paymentBody,
  paymentResult,
  refundResult,
  refusedFollowUp,
  withoutEnvelope,
} from './transformers.js';

export interface MercadoPagoAdapterOptions {
  /** Where Mercado Pago is reached (MERCADO_PAGO_API_URL; tests: the double); its public API otherwise. */
  baseUrl: string | undefined;
}

/** How many follow-ups this process remembers for lookup (see `sent`). */
const REMEMBERED_FOLLOW_UPS = 10_000;

export class MercadoPagoAdapter implements PaymentProvider, ConnectionNotifications {
  readonly id = MERCADO_PAGO;
  private readonly baseUrl: string;
  /**
   * Follow-ups sent by this process, by reference: Mercado Pago keeps no merchant reference on a capture,
   * cancellation or refund, so a lookup of one sends it again under the same idempotency key. Callers that
   * know the operation pass it (lookup's `followUp`) and need no memory; this covers those that do not.
   */
  private readonly sent = new Map<string, FollowUpLookup>();

  constructor(options: MercadoPagoAdapterOptions) {
    this.baseUrl = (options.baseUrl ?? MERCADO_PAGO_PUBLIC_API).replace(/\/+$/, '');
  }

  private call<T>(connection: ConnectionContext | undefined, request: MercadoPagoRequest): Promise<T> {
    return mercadoPagoCall<T>(this.baseUrl, required(connection), request);
  }

  purchase(input: Charge): Promise<ProviderResult> {
    return this.charge(input, true);
  }

  authorize(input: Charge): Promise<ProviderResult> {
    return this.charge(input, false);
  }

  private async charge(input: Charge, capture: boolean): Promise<ProviderResult> {
    let token: CardTokenResponse;
    try {
      token = await this.cardToken(input.connection, input.card, input.reference);
    } catch (err) {
      return this.errorAnswer(err);
    }
    let payment: PaymentResponse;
    try {
      payment = await this.call<PaymentResponse>(input.connection, {
        method: 'POST',
        path: '/v1/payments',
        body: paymentBody(input, token.id!, capture),
        idempotencyKey: input.reference,
      });
    } catch (err) {
      return this.errorAnswer(err);
    }
    return settled(withoutEnvelope(payment));
  }

  /**
   * PIX and boleto: one POST /v1/payments with the method's payment_method_id (transformers.ts
   * asyncPaymentBody), X-Idempotency-Key = our reference. Mercado Pago answers `pending` with the QR code or
   * the boleto; its `payment` notification ends the pending payment (notifications.ts). A method, currency
   * or payer it would refuse is answered here, before any call.
   */
  async startAsyncPayment(input: AsyncCharge): Promise<AsyncStart> {
    const checked = precheckAsyncCharge({ id: this.id, name: 'Mercado Pago' }, MERCADO_PAGO_ASYNC_METHODS, input, (method, payer) =>
      method === 'BOLETO' ? missingBoletoPayer(payer) : null,
    );
    if (!checked.ok) return { result: rejected(checked.reason), action: null };
    const method = checked.method;
    let payment: PaymentResponse;
    try {
      payment = await this.call<PaymentResponse>(input.connection, { method: 'POST', path: '/v1/payments', body: asyncPaymentBody(input, method), idempotencyKey: input.reference });
    } catch (err) {
      return { result: this.errorAnswer(err), action: null };
    }
    return asyncStartOf(withoutEnvelope(payment), method);
  }

  /** The card as a one-time token (never stored; its id is all the payment call carries). */
  private async cardToken(connection: ConnectionContext | undefined, card: ProviderCard, reference: string): Promise<CardTokenResponse> {
    const token = await this.call<CardTokenResponse>(connection, { method: 'POST', path: '/v1/card_tokens', body: cardTokenBody(card), idempotencyKey: `${reference}:card_token` });
    if (typeof token.id !== 'string' || token.id === '') throw new ProviderUnavailableError(MERCADO_PAGO, 'BAD_RESPONSE', 'MERCADO_PAGO answered a card token without an id');
    return token;
  }

  /** A 4xx is a result (the code table's error rows); anything else (no usable answer) is thrown on. */
  private errorAnswer(err: unknown): ProviderResult {
    const mp = mercadoPagoError(err);
    if (!mp) throw err;
    return errorResult(mp.error || (mp.status === 401 ? 'unauthorized' : undefined), { status: mp.status, error: mp.error, message: mp.message });
  }

  private remember(input: FollowUp, operation: FollowUpLookup['operation']): void {
    if (this.sent.size >= REMEMBERED_FOLLOW_UPS) this.sent.delete(this.sent.keys().next().value!);
    this.sent.set(input.reference, { operation, providerTransactionId: input.providerTransactionId, amount: input.amount, currency: input.currency });
  }

  async capture(input: FollowUp): Promise<ProviderResult> {
    this.remember(input, 'CAPTURE');
    return this.followUp(input, 'CAPTURE_DECLINED', { capture: true, transaction_amount: Number(input.amount) }, (p) => p.status === 'approved' && p.captured !== false);
  }

  /**
   * Cancels an authorization. Mercado Pago cannot cancel a captured payment (reconciliation voids late
   * approvals, which may be purchases): then the reversal is a refund of the whole amount, under its own
   * idempotency key derived from our reference.
   */
  async void(input: FollowUp): Promise<ProviderResult> {
    this.remember(input, 'VOID');
    const cancelled = await this.followUp(input, 'VOID_DECLINED', { status: 'cancelled' }, (p) => p.status === 'cancelled');
    if (cancelled.outcome === 'SUCCEEDED' || cancelled.responseCode !== 'VOID_DECLINED') return cancelled;
    let payment: PaymentResponse;
    try {
      payment = withoutEnvelope(await this.call<PaymentResponse>(input.connection, { method: 'GET', path: `/v1/payments/${encodeURIComponent(input.providerTransactionId)}` }));
    } catch (err) {
      if (mercadoPagoError(err)) return cancelled;
      throw err;
    }
    if (payment.status === 'refunded') return approvedResult(String(payment.id ?? input.providerTransactionId), payment as unknown as Record<string, unknown>);
    if (payment.status !== 'approved' || payment.captured !== true) return cancelled;
    const refund = await this.refundCall({ ...input, amount: String(payment.transaction_amount ?? input.amount), reference: `${input.reference}:reversal` }, undefined);
    return refund.outcome === 'SUCCEEDED' ? { ...refund, providerTransactionId: String(payment.id ?? input.providerTransactionId) } : { ...refund, responseCode: 'VOID_DECLINED' };
  }

  /** PUT /v1/payments/{id} (capture, cancel): the payment's new state says whether it went through. */
  private async followUp(input: FollowUp, refusedCode: string, body: Record<string, unknown>, done: (p: PaymentResponse) => boolean): Promise<ProviderResult> {
    let payment: PaymentResponse;
    try {
      payment = withoutEnvelope(await this.call<PaymentResponse>(input.connection, { method: 'PUT', path: `/v1/payments/${encodeURIComponent(input.providerTransactionId)}`, body, idempotencyKey: input.reference }));
    } catch (err) {
      return this.followUpRefused(err, refusedCode);
    }
    const raw = payment as unknown as Record<string, unknown>;
    return done(payment) ? approvedResult(String(payment.id ?? input.providerTransactionId), raw) : refusedFollowUp(refusedCode, 'Mercado Pago did not apply the operation', raw);
  }

  async refund(input: FollowUp): Promise<ProviderResult> {
    this.remember(input, 'REFUND');
    return this.refundCall(input, Number(input.amount));
  }

  /** POST /v1/payments/{id}/refunds; `amount` undefined refunds what is left. */
  private async refundCall(input: FollowUp, amount: number | undefined): Promise<ProviderResult> {
    let refund: RefundResponse;
    try {
      refund = withoutEnvelope(
        await this.call<RefundResponse>(input.connection, {
          method: 'POST',
          path: `/v1/payments/${encodeURIComponent(input.providerTransactionId)}/refunds`,
          body: amount === undefined ? {} : { amount },
          idempotencyKey: input.reference,
        }),
      );
    } catch (err) {
      return this.followUpRefused(err, 'REFUND_DECLINED');
    }
    return refundResult(refund);
  }

  /** A follow-up's 4xx: an unknown payment, refused credentials, or Mercado Pago's refusal (nothing moved). */
  private followUpRefused(err: unknown, refusedCode: string): ProviderResult {
    const mp = mercadoPagoError(err);
    if (!mp) throw err;
    const raw = { status: mp.status, error: mp.error, message: mp.message };
    if (mp.status === 401) return errorResult('unauthorized', raw);
    if (mp.status === 404) return refusedFollowUp('TRANSACTION_NOT_FOUND', 'Mercado Pago has no such payment', raw);
    return refusedFollowUp(refusedCode, 'Mercado Pago refused the operation', raw);
  }

  /**
   * Reconciliation. A charge: the payment whose external_reference is our reference (GET
   * /v1/payments/search); none means it never arrived. A follow-up (named by the caller, or sent by this
   * process): the same operation again under the same X-Idempotency-Key, which Mercado Pago answers with
   * what it did the first time (or does now, once). See docs/providers/mercado-pago.md "Limits".
   */
  async lookup(input: { reference: string; connection?: ConnectionContext; followUp?: FollowUpLookup }): Promise<ProviderLookup> {
    const followUp = input.followUp ?? this.sent.get(input.reference);
    if (followUp) {
      const call: FollowUp = { providerTransactionId: followUp.providerTransactionId, amount: followUp.amount, currency: followUp.currency, reference: input.reference, ...(input.connection ? { connection: input.connection } : {}) };
      const result = followUp.operation === 'CAPTURE' ? await this.capture(call) : followUp.operation === 'VOID' ? await this.void(call) : await this.refund(call);
      return { found: true, result, voided: false };
    }
    let found: PaymentSearch;
    try {
      found = await this.call<PaymentSearch>(input.connection, {
        method: 'GET',
        path: `/v1/payments/search?external_reference=${encodeURIComponent(input.reference)}&sort=date_created&criteria=desc`,
      });
    } catch (err) {
      const mp = mercadoPagoError(err);
      if (mp) throw new ProviderUnavailableError(MERCADO_PAGO, 'BAD_RESPONSE', `MERCADO_PAGO refused the search (HTTP ${mp.status})`);
      throw err;
    }
    const payment = (found.results ?? []).find((r) => r.external_reference === input.reference);
    if (!payment) return { found: false };
    // A PIX or boleto request whose issue's answer was lost: paid is an approval; anything else (still
    // pending, cancelled, expired, rejected) a request nobody was shown, never paid.
    const asyncSettled = asyncLookupResult(payment);
    if (asyncSettled) return { found: true, result: asyncSettled, voided: false };
    if (isUndecided(payment.status)) throw undecided();
    return { found: true, result: paymentResult(payment), voided: payment.status === 'cancelled' };
  }

  /** Zero-amount verification is not offered by Mercado Pago's Payments API: answered as the sandbox answers an unsupported call. */
  async verify(): Promise<ProviderResult> {
    return { ...errorResult(undefined, {}), responseCode: 'PROVIDER_REQUEST_REJECTED', responseMessage: 'Mercado Pago offers no zero-amount card verification' };
  }

  /**
   * Evidence goes to the chargeback's documentation (POST /v1/chargebacks/{id}/documentation, multipart,
   * one `files[]` part per document), with our reference as idempotency key: a re-delivery is answered, not
   * stored twice. A 4xx refusal is definitive (ProviderRefusedError: the outbox gives the batch up) when its
   * status is (provider.ts isDefinitiveRefusal: 400, e.g. a chargeback closed, past its documentation deadline or
   * needing none; 404, no such chargeback for this account; 422); 401, 403, 429, a 5xx or no answer are retried.
   */
  async forwardDisputeEvidence(input: DisputeEvidenceForward): Promise<DisputeEvidenceAck> {
    if (!input.chargebackId) throw new Error('MERCADO_PAGO evidence needs the chargeback id');
    const form = new FormData();
    for (const doc of input.evidence) form.append('files[]', new Blob([new Uint8Array(doc.content)], { type: doc.contentType }), doc.fileName);
    let answer: { duplicate?: boolean };
    try {
      answer = await this.call<{ duplicate?: boolean }>(input.connection, {
        method: 'POST',
        path: `/v1/chargebacks/${encodeURIComponent(input.chargebackId)}/documentation`,
        form,
        idempotencyKey: input.reference,
      });
    } catch (err) {
      const mp = mercadoPagoError(err);
      if (!mp) throw err;
      const error = /^\w{1,40}$/.test(mp.error ?? '') ? ` ${mp.error}` : '';
      throw evidenceRefusal(MERCADO_PAGO, `MERCADO_PAGO refused the evidence (HTTP ${mp.status}${error})`, isDefinitiveRefusal(mp.status));
    }
    return { providerDisputeId: input.chargebackId, duplicate: answer.duplicate === true };
  }

  async parseNotification(): Promise<ChargebackEvent> {
    throw new NotificationSignatureError('Mercado Pago notifications arrive at /v1/provider-notifications/{connection_id}');
  }

  parseConnectionNotification(rawBody: string, headers: Readonly<Record<string, string | undefined>>, connection: ConnectionContext): Promise<ParsedNotification> {
    return parseMercadoPagoNotification(rawBody, headers, connection, {
      get: <T>(path: string) => this.call<T>(connection, { method: 'GET', path }),
    });
  }
}

function required(connection: ConnectionContext | undefined): ConnectionContext {
  if (!connection) throw new ProviderUnavailableError(MERCADO_PAGO, 'NOT_SENT', 'MERCADO_PAGO calls need a connection (no default account)');
  return connection;
}

/** A request refused before it was sent (nothing reached Mercado Pago): an error the route may move on from. */
function rejected(message: string): ProviderResult {
  return { ...errorResult('bad_request', {}), responseMessage: message };
}

const undecided = () => new ProviderUnavailableError(MERCADO_PAGO, 'BAD_RESPONSE', 'MERCADO_PAGO has not decided the payment yet (in process)');

/** A created payment's answer: a final status is a result; one still in process is an unknown outcome. */
function settled(payment: PaymentResponse): ProviderResult {
  if (isUndecided(payment.status)) throw undecided();
  return paymentResult(payment);
}
