/**
 * The ADYEN adapter: PaymentProvider over Adyen's Checkout API v72 (payments, captures, cancels, refunds) and
 * Disputes API v30 (evidence), through `@adyen/api-library`. One SDK Client per call, built from the call's
 * connection (its api_key, TEST or LIVE by live_url_prefix, its timeout) over our bounded transport
 * (http-client.ts); the SDK never retries. Our reference goes out as the Idempotency-Key and as the
 * merchant reference, so a retried call never charges twice and Adyen's stored answer can be asked for again.
 *
 * PIX, boleto and OXXO take one POST /payments each (`paymentMethod.type` pix / boletobancario / oxxo): Adyen
 * answers `Pending` or `PresentToShopper` with the QR code or the voucher as `action`, and its AUTHORISATION
 * (or OFFER_CLOSED) notification ends the pending payment (notifications.ts).
 */
import adyen from '@adyen/api-library';
import { createHash } from 'node:crypto';
import type { ConnectionNotifications, ConnectorDeps, ParsedNotification } from '../connector.js';
import {
  NotificationSignatureError,
  ProviderRefusedError,
  ProviderUndecidedError,
  ProviderUnavailableError,
  evidenceRefusal,
  isDefinitiveRefusal,
  type AsyncCharge,
  type AsyncStart,
  type Charge,
  type ConnectionContext,
  type DisputeEvidenceAck,
  type DisputeEvidenceForward,
  type FollowUp,
  type PaymentProvider,
  type ProviderCard,
  type ProviderEvent,
  type ProviderLookup,
  type ProviderResult,
} from '../provider.js';
import { precheckAsyncCharge } from '../async-precheck.js';
import { AdyenHttpError, BoundedAdyenHttpClient } from './http-client.js';
import { parseAdyenNotification } from './notifications.js';
import {
  ADYEN_ASYNC_METHODS,
  asyncLookupResult,
  asyncPaymentRequest,
  asyncStartOf,
  cardPaymentRequest,
  isUndecidedCard,
  lookupReplayRequest,
  missingAdyenPayerData,
  modificationResult,
  paymentResult,
  refusedRequest,
  toMinorUnits,
} from './transformers.js';

const { Client, CheckoutAPI, DisputesAPI, EnvironmentEnum } = adyen;

export const ADYEN = 'ADYEN';

/** The SDK services of one call, with its transport (whose lastBody is the call's raw answer). */
interface CallClients {
  checkout: InstanceType<typeof CheckoutAPI>;
  disputes: InstanceType<typeof DisputesAPI>;
  http: BoundedAdyenHttpClient;
  merchantAccount: string;
}

export class AdyenAdapter implements PaymentProvider, ConnectionNotifications {
  readonly id = ADYEN;

  constructor(private readonly deps: ConnectorDeps) {}

  verify(input: { card: ProviderCard; currency: string | null; reference: string; connection?: ConnectionContext }): Promise<ProviderResult> {
    // Adyen takes a zero-value authorisation as a card verification (nothing is held, nothing to cancel).
    return this.charge({ card: input.card, amount: '0', currency: input.currency ?? 'EUR', reference: input.reference, description: 'verify', ...(input.connection ? { connection: input.connection } : {}) }, false);
  }
  purchase(input: Charge): Promise<ProviderResult> {
    return this.charge(input, true);
  }
  authorize(input: Charge): Promise<ProviderResult> {
    return this.charge(input, false);
  }

  /**
   * PIX, boleto and OXXO: one POST /payments with the method's `paymentMethod.type` (transformers.ts
   * asyncPaymentRequest), Idempotency-Key = our reference. Adyen answers `Pending` (PIX) or `PresentToShopper`
   * (vouchers) with the code or voucher in `action`; the payment then waits for Adyen's AUTHORISATION or
   * OFFER_CLOSED notification. A method, currency or payer Adyen would refuse is answered here, before any call.
   */
  async startAsyncPayment(input: AsyncCharge): Promise<AsyncStart> {
    const checked = precheckAsyncCharge({ id: this.id, name: 'Adyen' }, ADYEN_ASYNC_METHODS, input, missingAdyenPayerData);
    if (!checked.ok) return { result: rejected(checked.reason), action: null };
    const method = checked.method;
    const value = toMinorUnits(input.amount, input.currency);
    if (value === null) return { result: rejected(`${input.amount} ${input.currency} cannot be sent in Adyen's minor units`), action: null };
    const c = this.clients(input.connection);
    try {
      const answer = await c.checkout.PaymentsApi.payments(asyncPaymentRequest(input, method, { merchantAccount: c.merchantAccount, value, returnUrl: this.returnUrl() }), { idempotencyKey: input.reference });
      return asyncStartOf(answer, c.http.lastBody ?? {}, method);
    } catch (err) {
      if (err instanceof AdyenHttpError) return { result: refusedRequest(err.status, err.body, 'CHARGE'), action: null };
      throw asUnavailable(this.id, err);
    }
  }

  async capture(input: FollowUp): Promise<ProviderResult> {
    return this.modify(input, 'CAPTURE', (c, value) =>
      c.checkout.ModificationsApi.captureAuthorisedPayment(
        input.providerTransactionId,
        { merchantAccount: c.merchantAccount, amount: { currency: input.currency, value }, reference: input.reference },
        { idempotencyKey: input.reference },
      ),
    );
  }

  /**
   * Adyen's reversal (/reversals, "cancel or refund"): it cancels an authorisation not captured yet and refunds
   * a captured one. A void is asked of an uncaptured authorization by the API, but reconciliation also voids a
   * late approval that may be a purchase (captured at once): one call serves both.
   */
  async void(input: FollowUp): Promise<ProviderResult> {
    return this.modify(input, 'VOID', (c) =>
      c.checkout.ModificationsApi.refundOrCancelPayment(
        input.providerTransactionId,
        { merchantAccount: c.merchantAccount, reference: input.reference },
        { idempotencyKey: input.reference },
      ),
    );
  }

  async refund(input: FollowUp): Promise<ProviderResult> {
    return this.modify(input, 'REFUND', (c, value) =>
      c.checkout.ModificationsApi.refundCapturedPayment(
        input.providerTransactionId,
        { merchantAccount: c.merchantAccount, amount: { currency: input.currency, value }, reference: input.reference },
        { idempotencyKey: input.reference },
      ),
    );
  }

  /**
   * Adyen has no API to read a payment or a modification by our reference (Checkout v72 has no GET of a
   * payment; its reports and notifications are not per-call answers). What it has is idempotency: a request
   * sent again under an Idempotency-Key it already processed is answered with the first answer, whatever the
   * endpoint (keys are unique per company account). So the lookup replays POST /payments under our reference
   * with NO card data:
   * - Adyen processed the reference: its stored answer comes back (a payment's resultCode, or a modification's
   *   `status: received`): found.
   * - It has not (yet): the card-less body cannot charge anything; Adyen refuses it as invalid (HTTP 422): not
   *   found. Not final: the first request may still be on its way or in progress (this lookup closes nothing,
   *   `lookupClosesReference` is false), so reconciliation asks again until its settle window has passed.
   * - The key's first request is still being processed (errorCode 704, "request already processed or in
   *   progress"): no answer yet, never "not found" (ProviderUnavailableError: asked again later).
   * - Its stored answer is a card payment Adyen has not decided (Received, Pending): no answer yet either.
   * A payment cancelled since is not reported as voided (the stored answer is the first one): reconciliation
   * only asks for operations whose answer never arrived, which the orchestrator has not cancelled.
   * A PIX, boleto or OXXO request comes back as its first answer too (Pending / PresentToShopper with its
   * action): a request nobody was shown, hence never paid: no approval (transformers.ts asyncLookupResult).
   */
  async lookup(input: { reference: string; connection?: ConnectionContext }): Promise<ProviderLookup> {
    const c = this.clients(input.connection);
    try {
      const answer = await c.checkout.PaymentsApi.payments(lookupReplayRequest(input.reference, c.merchantAccount, this.returnUrl()), { idempotencyKey: input.reference });
      const raw = c.http.lastBody ?? {};
      if (raw.status === 'received' && raw.paymentPspReference !== undefined) return { found: true, result: modificationResult(raw, raw), voided: false };
      const waiting = asyncLookupResult(raw);
      if (waiting) return { found: true, result: waiting, voided: false };
      if (isUndecidedCard(answer.resultCode)) throw undecided(this.id, answer.resultCode);
      return { found: true, result: paymentResult(answer, raw), voided: false };
    } catch (err) {
      if (err instanceof AdyenHttpError && isInProgress(err)) throw new ProviderUnavailableError(this.id, 'BAD_RESPONSE', `${this.id} is still processing the reference (idempotency in progress)`);
      if (err instanceof AdyenHttpError && (err.status === 422 || err.status === 400)) return { found: false };
      if (err instanceof AdyenHttpError) throw new ProviderUnavailableError(this.id, 'BAD_RESPONSE', `${this.id} lookup answered HTTP ${err.status}`);
      throw asUnavailable(this.id, err);
    }
  }

  /**
   * Disputes API: the dispute's applicable defense reasons (the first one Adyen lists is used), every document
   * supplied under one of that reason's document types (required types first), then the defense itself.
   * Each call carries an Idempotency-Key derived from our reference, so a re-delivery repeats nothing.
   * Adyen's refusal is definitive (ProviderRefusedError: the outbox gives the batch up) when it answers a step
   * with `disputeServiceResult.success: false` (its answer for a dispute it does not know or that takes no defense:
   * closed, already defended, past its deadline) or HTTP 400 / 422 (the Disputes API's bad request and validation
   * error), except its idempotency answer "still in progress" (errorCode 704). 401, 403, a 404 (no such endpoint:
   * the Disputes API answers an unknown dispute with success false), 429, a 5xx or no answer are retried.
   */
  async forwardDisputeEvidence(input: DisputeEvidenceForward): Promise<DisputeEvidenceAck> {
    if (!input.chargebackId) throw new Error('ADYEN evidence needs the dispute pspReference (the chargeback id)');
    return this.forwardWith(this.clients(input.connection), input);
  }

  private async forwardWith(c: CallClients, input: DisputeEvidenceForward): Promise<DisputeEvidenceAck> {
    const dispute = { merchantAccountCode: c.merchantAccount, disputePspReference: input.chargebackId! };
    const key = (step: string) => `${createHash('sha256').update(input.reference).digest('hex').slice(0, 40)}-${step}`;
    try {
      const api = c.disputes.DisputesApi;
      const reasons = await api.retrieveApplicableDefenseReasons(dispute, { idempotencyKey: key('reasons') });
      if (reasons.disputeServiceResult?.success === false) throw refusedStep(this.id, 'the defense reasons');
      const reason = reasons.defenseReasons?.[0];
      if (!reason) throw new ProviderUnavailableError(this.id, 'BAD_RESPONSE', `${this.id} listed no defense reason for the dispute`);
      const order = { Required: 0, OneOrMore: 1, Optional: 2 } as Record<string, number>;
      const types = [...(reason.defenseDocumentTypes ?? [])].sort((a, b) => (order[a.requirementLevel] ?? 3) - (order[b.requirementLevel] ?? 3));
      if (types.length === 0) throw new ProviderUnavailableError(this.id, 'BAD_RESPONSE', `${this.id} listed no document type for the defense reason`);
      const supplied = await api.supplyDefenseDocument(
        {
          ...dispute,
          defenseDocuments: input.evidence.map((doc, i) => ({
            defenseDocumentTypeCode: types[i % types.length]!.defenseDocumentTypeCode,
            contentType: doc.contentType,
            content: doc.content.toString('base64'),
          })),
        },
        { idempotencyKey: key('documents') },
      );
      if (supplied.disputeServiceResult?.success === false) throw refusedStep(this.id, 'the defense documents');
      if (!supplied.disputeServiceResult?.success) throw new ProviderUnavailableError(this.id, 'BAD_RESPONSE', `${this.id} did not accept the defense documents`);
      const defended = await api.defendDispute({ ...dispute, defenseReasonCode: reason.defenseReasonCode }, { idempotencyKey: key('defend') });
      if (defended.disputeServiceResult?.success === false) throw refusedStep(this.id, 'the defense');
      if (!defended.disputeServiceResult?.success) throw new ProviderUnavailableError(this.id, 'BAD_RESPONSE', `${this.id} did not accept the defense`);
      return { providerDisputeId: input.chargebackId!, duplicate: false };
    } catch (err) {
      if (err instanceof ProviderRefusedError) throw err;
      if (err instanceof AdyenHttpError) {
        const code = /^\w{1,16}$/.test(String(err.body?.errorCode ?? '')) ? ` errorCode ${String(err.body!.errorCode)}` : '';
        throw evidenceRefusal(this.id, `${this.id} refused the evidence (HTTP ${err.status}${code})`, err.status !== 404 && isDefinitiveRefusal(err.status) && !isInProgress(err));
      }
      throw asUnavailable(this.id, err);
    }
  }

  async parseConnectionNotification(rawBody: string, _headers: Readonly<Record<string, string | undefined>>, connection: ConnectionContext): Promise<ParsedNotification> {
    return parseAdyenNotification(rawBody, connection);
  }

  parseNotification(): Promise<ProviderEvent> {
    return Promise.reject(new NotificationSignatureError('Adyen notifications arrive at /v1/provider-notifications/{connection_id}, verified with that connection'));
  }

  private async charge(input: Charge, capture: boolean): Promise<ProviderResult> {
    const value = toMinorUnits(input.amount, input.currency);
    if (value === null) return refusedRequest(422, { message: `${input.amount} ${input.currency} cannot be sent in Adyen's minor units` }, 'CHARGE');
    const c = this.clients(input.connection);
    try {
      const answer = await c.checkout.PaymentsApi.payments(
        cardPaymentRequest(input, { merchantAccount: c.merchantAccount, value, capture, returnUrl: this.returnUrl() }),
        { idempotencyKey: input.reference },
      );
      // Received / Pending: not a final answer (it may still be authorised): an unknown outcome, as a timeout.
      if (isUndecidedCard(answer.resultCode)) throw undecided(this.id, answer.resultCode);
      return paymentResult(answer, c.http.lastBody ?? {});
    } catch (err) {
      if (err instanceof AdyenHttpError) return refusedRequest(err.status, err.body, 'CHARGE');
      throw asUnavailable(this.id, err);
    }
  }

  private async modify(input: FollowUp, operation: 'CAPTURE' | 'VOID' | 'REFUND', call: (c: CallClients, value: number) => Promise<unknown>): Promise<ProviderResult> {
    const value = toMinorUnits(input.amount, input.currency);
    if (value === null) return refusedRequest(422, { message: `${input.amount} ${input.currency} cannot be sent in Adyen's minor units` }, operation);
    const c = this.clients(input.connection);
    try {
      await call(c, value);
      const raw = c.http.lastBody ?? {};
      return modificationResult(raw, raw);
    } catch (err) {
      if (err instanceof AdyenHttpError) return refusedRequest(err.status, err.body, operation);
      throw asUnavailable(this.id, err);
    }
  }

  /** The SDK for one call: the connection's key and merchant account, TEST or LIVE (live_url_prefix), our transport. */
  private clients(connection: ConnectionContext | undefined): CallClients {
    if (!connection) throw new ProviderUnavailableError(this.id, 'NOT_SENT', `${this.id} calls go through a connection; none was given`);
    const { api_key: apiKey, merchant_account: merchantAccount, live_url_prefix: livePrefix } = connection.credentials;
    if (!apiKey || !merchantAccount) throw new ProviderUnavailableError(this.id, 'NOT_SENT', `${this.id} connection ${connection.connectionId} lacks api_key or merchant_account`);
    const http = new BoundedAdyenHttpClient(this.id, connection.timeoutMs, this.deps.baseUrl);
    const client = new Client(
      new adyen.Config({
        apiKey,
        environment: livePrefix ? EnvironmentEnum.LIVE : EnvironmentEnum.TEST,
        ...(livePrefix ? { liveEndpointUrlPrefix: livePrefix } : {}),
        connectionTimeoutMillis: connection.timeoutMs,
      }),
      http,
    );
    return { checkout: new CheckoutAPI(client), disputes: new DisputesAPI(client), http, merchantAccount };
  }

  /** Required by Adyen's schema on every payment; a card payment without 3-D Secure never sends the shopper there. */
  private returnUrl(): string {
    return `${this.deps.config.publicBaseUrl ?? 'https://localhost'}/`;
  }
}

/** A card payment Adyen has not decided (Received, Pending): no answer yet; reconciliation asks again. */
function undecided(providerId: string, resultCode: unknown): ProviderUndecidedError {
  return new ProviderUndecidedError(providerId, `${providerId} has not decided the card payment yet (resultCode ${String(resultCode)})`);
}

/** A Disputes API step Adyen answered `success: false` (its errorMessage is its own words, kept out of ours: they reach logs). */
function refusedStep(providerId: string, step: string): ProviderRefusedError {
  return new ProviderRefusedError(providerId, `${providerId} refused ${step} (disputeServiceResult success false)`);
}

/** Adyen's idempotency answer for a key whose first request it has not finished (errorCode 704): not a "not found". */
function isInProgress(err: AdyenHttpError): boolean {
  return String(err.body?.errorCode ?? '') === '704';
}

/** A request refused before it was sent (nothing reached Adyen): an error the route may move on from. */
function rejected(message: string): ProviderResult {
  return { ...refusedRequest(422, { message }, 'CHARGE'), responseMessage: message, rawResponse: {} };
}

/** Anything the SDK threw that is not an answer: ours pass through; anything else is an unreadable answer. */
function asUnavailable(providerId: string, err: unknown): ProviderUnavailableError {
  if (err instanceof ProviderUnavailableError) return err;
  // Our words only (an SDK error's message can quote a body): this reaches logs.
  return new ProviderUnavailableError(providerId, 'BAD_RESPONSE', `${providerId} call failed in the SDK (${(err as { name?: string })?.name ?? 'error'})`);
}
