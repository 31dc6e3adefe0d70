/**
 * The provider (acquirer) adapter interface. Domain code talks to providers only through this; the
 * sandbox adapters (./sandbox: SANDBOX_A, SANDBOX_B, each over HTTP to its acquirer) implement it. A provider answers declines as results,
 * never as exceptions: a throw means the provider could not be reached (→ 5xx or a retry).
 */

import type { ConnectionNotifications } from './connector.js';

/** Card data handed to a provider. Lives only in memory for the duration of one call. */
export interface ProviderCard {
  number: string;
  holderName: string | null;
  expirationMonth: number;
  /** Two digits, as the API takes it. */
  expirationYear: number;
  securityCode: string | null;
  brand: string;
}

export type ProviderOutcome = 'SUCCEEDED' | 'DECLINED' | 'ERROR';

/**
 * The merchant's connection a call goes through (routing/connections): which credentials the provider
 * sees and how long we wait for its answer. Credentials are opened from their sealed form for the call
 * only and never logged.
 */
export interface ConnectionContext {
  connectionId: string;
  credentials: Readonly<Record<string, string>>;
  /** The connection's timeout: past it the call is abandoned and its outcome is unknown. */
  timeoutMs: number;
  /**
   * The provider environment the credentials belong to (POST /v1/connections; checked against the
   * credentials there: routing/credential-rules.ts). Absent where a connection is made up (tests, defaults): TEST.
   */
  environment?: 'TEST' | 'LIVE';
}

/** Every UnavailableKind, in a fixed order (metric labels are taken from fixed lists only). */
export const UNAVAILABLE_KINDS = ['NOT_SENT', 'TIMEOUT', 'CONNECTION_CUT', 'BAD_RESPONSE'] as const;

/** Why a provider call produced no answer. */
export type UnavailableKind =
  /** Nothing reached the provider (connection refused, DNS, TLS): it certainly did not act. */
  | 'NOT_SENT'
  /** Sent, and no answer within the connection's timeout: the provider may have acted. */
  | 'TIMEOUT'
  /** Sent, and the connection broke before a full answer: the provider may have acted. */
  | 'CONNECTION_CUT'
  /** An answer we cannot read (HTTP 5xx, malformed body): the provider may have acted. */
  | 'BAD_RESPONSE';

/**
 * A provider call without a usable answer. Declines are results, never this error. When
 * `maybeProcessed` is true the outcome is unknown and only a lookup by reference settles it.
 */
export class ProviderUnavailableError extends Error {
  readonly maybeProcessed: boolean;
  constructor(
    readonly providerId: string,
    readonly kind: UnavailableKind,
    message: string,
  ) {
    super(message);
    this.name = 'ProviderUnavailableError';
    this.maybeProcessed = kind !== 'NOT_SENT';
  }
}

/**
 * The provider answered, but has not decided (Adyen's card `Received` / `Pending`): the outcome is as unknown
 * as after an unreadable answer (kind BAD_RESPONSE: reconciliation asks again), yet the provider is working,
 * so the call does not count against its connection's health (orchestrator.ts healthOf): five such answers in
 * a row would otherwise open its circuit and skip a healthy provider for a cool-down.
 */
export class ProviderUndecidedError extends ProviderUnavailableError {
  constructor(providerId: string, message: string) {
    super(providerId, 'BAD_RESPONSE', message);
    this.name = 'ProviderUndecidedError';
  }
}

/**
 * The provider answered and refused a request that moves no money (dispute evidence) for good: the request
 * itself is wrong for it (HTTP 400/404/422, e.g. a dispute that takes no more evidence), so sending it again is
 * refused again. Not an answer we could not read (ProviderUnavailableError), nor credentials or a rate
 * limit (401, 403, 429: those may pass later). Connectors build it with evidenceRefusal below.
 */
export class ProviderRefusedError extends Error {
  constructor(
    readonly providerId: string,
    message: string,
  ) {
    super(message);
    this.name = 'ProviderRefusedError';
  }
}

/**
 * The HTTP statuses by which a provider refuses an evidence call for good, shared by the connectors: 400 (a
 * request it will not take: malformed, or not in the dispute's state, e.g. closed or already defended), 404 (no
 * such dispute or chargeback) and 422 (a validation error). Anything else stays retryable: 401 and 403
 * (credentials, permissions: fixed later), 408, 409 and 429 (may pass later), a 5xx, a timeout or a cut
 * connection (no answer: ProviderUnavailableError before this is asked).
 */
export function isDefinitiveRefusal(status: number): boolean {
  return status === 400 || status === 404 || status === 422;
}

/**
 * The error for an evidence call the provider answered with a refusal: ProviderRefusedError when `definitive`
 * (the outbox gives the batch up, logged as an error), else ProviderUnavailableError BAD_RESPONSE (retried with
 * backoff). Each connector decides `definitive` from isDefinitiveRefusal and what its answer says besides (Stripe:
 * an invalid_request_error; Adyen: not its "still in progress" idempotency answer; a Disputes API result
 * `success: false`).
 */
export function evidenceRefusal(providerId: string, message: string, definitive: boolean): ProviderRefusedError | ProviderUnavailableError {
  return definitive ? new ProviderRefusedError(providerId, message) : new ProviderUnavailableError(providerId, 'BAD_RESPONSE', message);
}

/** What a provider knows about an operation we sent it, asked by our reference (reconciliation). */
export type ProviderLookup =
  /**
   * The provider shows no operation under this reference now. Final (it never processed it, and refuses it
   * if it arrives late) only where the provider's `lookupClosesReference` is true; elsewhere it may only
   * mean "not yet" (a search that lags, a payment still processing): see reconciliation.ts.
   */
  | { found: false }
  /** The provider's answer for the reference; `voided` once an approval was voided or reversed. */
  | { found: true; result: ProviderResult; voided: boolean };

export interface ProviderResult {
  outcome: ProviderOutcome;
  providerTransactionId: string;
  /** Our normalized code, e.g. SUCCEEDED, INSUFFICIENT_FUNDS, DO_NOT_HONOR, REPORTED_STOLEN. */
  responseCode: string;
  responseMessage: string;
  iso8583ResponseCode: string;
  iso8583ResponseMessage: string;
  merchantAdviceCode: string | null;
  merchantAdviceCodeMessage: string | null;
  authorizationCode: string | null;
  retrievalReferenceNumber: string | null;
  /**
   * The provider's answer (stored for raw_response=true). Adapters hand it over as received; the adapter
   * boundary (normalized-provider.ts) keeps a bounded, redacted copy only. Never holds a PAN.
   */
  rawResponse: Record<string, unknown>;
  /** Sandbox only: this card receives a chargeback right after a successful purchase. */
  chargebackFollows?: boolean;
  /** BIN data of the card, when the provider reports it. */
  cardInfo?: ProviderCardInfo;
}

/** What the issuer knows about the card (BIN data), when the provider reports it. */
export interface ProviderCardInfo {
  issuerName: string | null;
  issuerCode: string | null;
  countryCode: string | null;
  category: string | null;
  type: string | null;
}

/** The Standard Webhooks headers of a signed provider notification. */
export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** A provider notification once its signature is verified, translated to our terms. */
export interface ChargebackEvent {
  kind: 'CHARGEBACK';
  /** The provider's notification id (deduplication key). */
  notificationId: string;
  paymentId: string;
  /** The provider's id of the original purchase. */
  providerTransactionId: string;
  /** The provider's id of the chargeback itself. */
  chargebackId: string;
  /** Decimal string in major units, exactly as sent. */
  amount: string;
  reason: string;
  reasonCode: string | null;
  reasonDescription: string | null;
  /** The notification body, parsed. */
  raw: Record<string, unknown>;
  /**
   * The notification body: as received from the adapter; bounded and masked by normalized-provider.ts
   * before it is stored as the chargeback's raw response.
   */
  rawBody: string;
}

export type ProviderEvent = ChargebackEvent;

/** A notification whose signature is missing, wrong or stale: nothing may be written. */
export class NotificationSignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotificationSignatureError';
  }
}

/** One evidence document handed to the provider. */
export interface ForwardedEvidence {
  id: string;
  fileName: string;
  contentType: string;
  category: string;
  /** Hex SHA-256 of `content`. */
  sha256: string;
  content: Buffer;
}

export interface DisputeEvidenceForward {
  /** Idempotency reference: forwarding the same reference again has no second effect at the provider. */
  reference: string;
  disputeId: string;
  paymentId: string;
  /** The provider's id of the chargeback being disputed. */
  chargebackId: string | null;
  evidence: ForwardedEvidence[];
  /** The connection that holds the chargeback (real providers need its credentials; the sandbox ignores it). */
  connection?: ConnectionContext;
}

export interface DisputeEvidenceAck {
  /** The provider's id of the dispute case. */
  providerDisputeId: string;
  /** True when the provider had already received this reference (a re-delivery). */
  duplicate: boolean;
}

export interface PaymentProvider {
  /** The provider as the API names it: SANDBOX_A, SANDBOX_B (routing steps' provider_id). */
  readonly id: string;
  /**
   * The provider id its notifications arrive under (POST /v1/providers/{id}/notifications), when it is
   * not `id`: both sandbox acquirers' notifications arrive as `sandbox`.
   */
  readonly notificationSource?: string;
  /**
   * True when a lookup that answers `{found: false}` also closes the reference at the provider, so that a
   * call still on its way is refused when it arrives (Stripe's closeReference, the sandbox acquirers'
   * tombstone): "not found" is then final at once. Absent or false (Mercado Pago, Adyen): "not found" may
   * only mean "not yet", and reconciliation takes it as final only once the settle window since the
   * operation was sent has passed (orchestration/settle.ts NOT_FOUND_SETTLE_MS), asking again until then.
   */
  readonly lookupClosesReference?: boolean;
  /**
   * What the provider did with the operation we sent under `reference` (our idempotency reference for
   * that call). Throws ProviderUnavailableError when the provider cannot be asked now.
   */
  lookup(input: { reference: string; connection?: ConnectionContext; followUp?: FollowUpLookup }): Promise<ProviderLookup>;
  /** A zero-amount verification of a card (enrollment `verify`). */
  verify(input: { card: ProviderCard; currency: string | null; reference: string; connection?: ConnectionContext }): Promise<ProviderResult>;
  /**
   * An authorization with capture. `amount` is a decimal string in major units; `softDescriptor` the
   * merchant's text for the cardholder's statement, when given.
   */
  purchase(input: Charge): Promise<ProviderResult>;
  /** An authorization only (`capture: false`): the money is held until capture or void. */
  authorize(input: Charge): Promise<ProviderResult>;
  /** Captures (part of) an authorization; what is not captured is released. */
  capture(input: FollowUp): Promise<ProviderResult>;
  /** Voids an uncaptured authorization. */
  void(input: FollowUp): Promise<ProviderResult>;
  /** Refunds (part of) captured money; may be called several times up to the captured amount. */
  refund(input: FollowUp): Promise<ProviderResult>;
  /**
   * Hands dispute evidence to the provider (who sends it on to the issuer). Resolves once the provider
   * acknowledged it; throws when it could not be reached (the caller retries with the same reference).
   */
  forwardDisputeEvidence(input: DisputeEvidenceForward): Promise<DisputeEvidenceAck>;
  /**
   * Verifies a notification's signature over the raw body and translates it; throws
   * NotificationSignatureError for a missing, wrong or stale signature.
   */
  parseNotification(rawBody: string, headers: Partial<WebhookHeaders>): Promise<ProviderEvent>;
  /**
   * Real providers (connector.ts): notifications arrive per connection (POST
   * /v1/provider-notifications/{connection_id}) and are verified with that connection's secret.
   */
  parseConnectionNotification?: ConnectionNotifications['parseConnectionNotification'];
  /**
   * Sandbox only: the signed notification this provider would send when the issuer charges a payment
   * back. The caller feeds it through the same path as one received over HTTP.
   */
  simulateChargeback?(input: SimulatedChargeback): Promise<{ rawBody: string; headers: WebhookHeaders }>;
  /**
   * Starts a non-card enrollment (ACH, wallet) that the customer completes on the provider's page and
   * resolves with that page's address. Absent when the provider cannot enroll non-card methods: the
   * enrollment is then refused (422 PAYMENT_METHOD_TYPE_NOT_SUPPORTED), never approved without the provider.
   */
  readonly startRedirectEnrollment?: (input: RedirectEnrollment) => Promise<{ redirectUrl: string }>;
  /**
   * Asynchronous payment methods (payments/async-methods/): issues the action the shopper must take (a PIX
   * QR code, a transfer instruction, a cash voucher, a wallet's page). An outcome SUCCEEDED means the
   * action was issued and the payment now waits for the shopper; the provider's notification ends it
   * (ASYNC_PAYMENT_SETTLED). Absent when the provider serves none of these methods.
   */
  startAsyncPayment?(input: AsyncCharge): Promise<AsyncStart>;
  /**
   * Sandbox only: the provider settles a pending payment as the shopper (or its own deadline) would, and
   * hands back the signed notification it sends; the caller feeds it through the notifications path.
   */
  simulateAsyncOutcome?(input: SimulatedAsyncOutcome): Promise<{ rawBody: string; headers: WebhookHeaders }>;
}

/** The asynchronous payment methods (the create request's payment_method.type besides CARD). */
export const ASYNC_METHOD_TYPES = ['PIX', 'BANK_TRANSFER', 'OXXO', 'BOLETO', 'PAYPAL', 'MERCADO_PAGO_WALLET', 'CASH', 'APPLE_PAY', 'GOOGLE_PAY'] as const;
export type AsyncMethodType = (typeof ASYNC_METHOD_TYPES)[number];

/** A payment the shopper completes later; `reference` is the idempotency reference, as for a Charge. */
export interface AsyncCharge {
  method: AsyncMethodType;
  /** Decimal string in major units. */
  amount: string;
  currency: string;
  country: string;
  reference: string;
  paymentId: string;
  description: string;
  /** Public origin of this service (where the sandbox serves a wallet's approval page). */
  baseUrl: string;
  /** PIX / BANK_TRANSFER: the payer's own account, when the merchant named it (never logged, never stored in full). */
  payerAccount?: PayerBankAccount;
  /**
   * GOOGLE_PAY: the wallet's payment token (card data: passed to the provider only) and the card's last
   * four. The provider authorizes it at once: its answer is the payment's outcome, with no action.
   */
  walletToken?: { paymentToken: string; lastFour: string };
  /**
   * The payer as the payment records it (customer_payer, over the enrolled customer's own fields): what a
   * provider needs to issue some vouchers (a boleto names the payer, their CPF/CNPJ and address; an OXXO
   * voucher the payer's name and e-mail). Each adapter sends only what its method requires.
   */
  payer?: AsyncPayer;
  connection?: ConnectionContext;
}

/** The payer of an asynchronous payment, as far as the request (or the enrolled customer) names it. */
export interface AsyncPayer {
  firstName: string | null;
  lastName: string | null;
  email: string | null;
  /** The payer's document (a CPF or CNPJ in Brazil). */
  document: { type: string | null; number: string } | null;
  address: {
    line1: string;
    line2: string | null;
    neighborhood: string | null;
    city: string | null;
    state: string | null;
    zipCode: string | null;
    country: string | null;
  } | null;
}

/** The payer's bank account of a PIX or a transfer (Yuno's payment_method.detail.bank_transfer). */
export interface PayerBankAccount {
  bankCode: string | null;
  branch: string | null;
  branchDigit: string | null;
  country: string | null;
  accountNumber: string | null;
  accountDigit: string | null;
  accountType: string | null;
  mandateId: string | null;
}

/** What the shopper must do, as the provider issued it; `expiresAt` (ISO 8601) is when it stops being payable. */
export type ShopperAction =
  /** `pageUrl`: the provider's own page showing the code, when it hosts one (Stripe, Mercado Pago). */
  | { kind: 'QR_CODE'; qrCode: string; expiresAt: string; pageUrl?: string }
  | { kind: 'BANK_TRANSFER'; bankName: string; beneficiaryName: string; bankAccount: string; accountType: string; reference: string; expiresAt: string }
  /** `pageUrl`: the provider's printable voucher, when it hosts one. */
  | { kind: 'VOUCHER'; voucherType: string; reference: string; barcode: string; barcodeFormat: string; dueDate: string; instruction: string; expiresAt: string; pageUrl?: string }
  | { kind: 'REDIRECT'; redirectUrl: string; expiresAt: string };

/** The provider's answer to startAsyncPayment: `action` with an issued (SUCCEEDED) result, null otherwise. */
export interface AsyncStart {
  result: ProviderResult;
  action: ShopperAction | null;
}

export interface SimulatedAsyncOutcome {
  /** The provider's id of the pending payment (the attempt's provider_transaction_id). */
  providerTransactionId: string;
  outcome: 'PAY' | 'DECLINE' | 'EXPIRE' | 'CANCEL';
  connection?: ConnectionContext;
}

/**
 * A charge (purchase or authorization). `reference` is our idempotency reference for this one call
 * (the attempt's transaction id): the provider answers a repeated reference with its first answer and
 * never charges twice. `paymentId` ties the provider's records (and chargebacks) to the payment.
 */
export interface Charge {
  card: ProviderCard;
  /** Decimal string in major units. */
  amount: string;
  currency: string;
  reference: string;
  paymentId?: string;
  description: string;
  softDescriptor?: string | null;
  connection?: ConnectionContext;
}

/**
 * An operation on an earlier transaction of the provider (capture, void, refund). A DECLINED or ERROR
 * outcome means the provider refused it: nothing moved.
 */
export interface FollowUp {
  /** The provider's id of the authorization or purchase the operation applies to. */
  providerTransactionId: string;
  /** Decimal string in major units. */
  amount: string;
  currency: string;
  /** Our transaction id: the provider's idempotency reference for this operation. */
  reference: string;
  connection?: ConnectionContext;
}

/**
 * What a follow-up's reference was sent for, when the caller knows it (reconciliation of a capture, void or
 * refund). A provider that cannot search follow-ups by our reference (Mercado Pago) sends the same operation
 * again under the same idempotency key: the provider answers with what it did the first time, or does it now,
 * once.
 */
export interface FollowUpLookup {
  operation: 'CAPTURE' | 'VOID' | 'REFUND';
  /** The provider's id of the authorization or purchase the operation applied to. */
  providerTransactionId: string;
  /** Decimal string in major units. */
  amount: string;
  currency: string;
}

export interface RedirectEnrollment {
  /** Our record's token (the provider's reference for the enrollment). */
  vaultedToken: string;
  type: string;
  country: string;
  /** Public origin of this service (where the sandbox provider serves its page). */
  baseUrl: string;
}

export interface SimulatedChargeback {
  /** Deterministic when given (a re-sent notification keeps its id, so it is deduplicated). */
  notificationId?: string;
  paymentId: string;
  providerTransactionId: string;
  /** Decimal string in major units. */
  amount: string;
  reason: string;
}
