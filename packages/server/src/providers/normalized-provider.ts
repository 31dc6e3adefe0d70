/**
 * The adapter boundary: every provider the registry hands out is wrapped here (registry.ts), so each value
 * a provider reports (codes, messages, ids and references, amounts, statuses, BIN data, the raw answer) is
 * normalized once, for every adapter, before storage, an API answer, a log or a metric label sees it
 * (provider-values.ts says how). A connector added later gets it by construction.
 *
 * A result whose outcome is not one of ours, or an approval without a usable transaction id (its
 * follow-ups could not name it), is not an answer we can act on: BAD_RESPONSE, as an unreadable body is.
 */
import {
  ProviderUnavailableError,
  type ChargebackEvent,
  type DisputeEvidenceAck,
  type PaymentProvider,
  type ProviderCardInfo,
  type ProviderLookup,
  type ProviderResult,
  type ShopperAction,
} from './provider.js';
import {
  ADVICE_CODE,
  cleanText,
  ISO8583_CODE,
  OUTCOMES,
  optionalMessage,
  providerAmount,
  providerMessage,
  providerReference,
  responseCode,
  shortCode,
  token,
} from './provider-values.js';
import { boundedRawAnswer } from './raw-answer.js';
import type { ConnectorEvent } from './connector.js';

const ADAPTER = Symbol('the adapter behind a normalized provider');

/**
 * The adapter behind a normalized provider, for what is outside the PaymentProvider interface (the sandbox's
 * own signing secret); the provider itself when it is not wrapped. Never for provider calls.
 */
export function adapterOf(p: PaymentProvider): PaymentProvider {
  return (p as { [ADAPTER]?: PaymentProvider })[ADAPTER] ?? p;
}

/** The provider with every value it reports normalized (idempotent: a wrapped provider is returned as is). */
export function normalizedProvider(p: PaymentProvider): PaymentProvider {
  if ((p as { [ADAPTER]?: PaymentProvider })[ADAPTER]) return p;
  const result = (r: ProviderResult) => normalizeResult(p.id, r);
  const wrapped: PaymentProvider & { [ADAPTER]: PaymentProvider } = {
    [ADAPTER]: p,
    id: p.id,
    ...(p.notificationSource !== undefined ? { notificationSource: p.notificationSource } : {}),
    ...(p.lookupClosesReference !== undefined ? { lookupClosesReference: p.lookupClosesReference } : {}),
    lookup: async (input) => normalizeLookup(p.id, await p.lookup(input)),
    verify: async (input) => result(await p.verify(input)),
    purchase: async (input) => result(await p.purchase(input)),
    authorize: async (input) => result(await p.authorize(input)),
    capture: async (input) => result(await p.capture(input)),
    void: async (input) => result(await p.void(input)),
    refund: async (input) => result(await p.refund(input)),
    forwardDisputeEvidence: async (input) => normalizeAck(p.id, await p.forwardDisputeEvidence(input)),
    parseNotification: async (rawBody, headers) => normalizeEvent(await p.parseNotification(rawBody, headers)),
    ...(p.parseConnectionNotification
      ? {
          parseConnectionNotification: async (rawBody, headers, connection, query) => {
            const parsed = await p.parseConnectionNotification!(rawBody, headers, connection, query);
            return { ...parsed, events: parsed.events.map(normalizeConnectorEvent) };
          },
        }
      : {}),
    ...(p.simulateChargeback ? { simulateChargeback: p.simulateChargeback.bind(p) } : {}),
    ...(p.simulateAsyncOutcome ? { simulateAsyncOutcome: p.simulateAsyncOutcome.bind(p) } : {}),
    ...(p.startAsyncPayment
      ? {
          startAsyncPayment: async (input) => {
            const started = await p.startAsyncPayment!(input);
            const r = result(started.result);
            // An issued action is what the shopper is shown: one that cannot be shown is no answer at all. A
            // token wallet (GOOGLE_PAY) is the exception: its approval is the payment's, with no action.
            if (input.walletToken) {
              if (started.action) throw bad(p.id, 'an action for a wallet token the provider was to authorize at once');
              return { result: r, action: null };
            }
            if (r.outcome === 'SUCCEEDED' && !started.action) throw bad(p.id, 'an issued payment without the action for the shopper');
            return { result: r, action: r.outcome === 'SUCCEEDED' ? normalizeAction(p.id, started.action!) : null };
          },
        }
      : {}),
    ...(p.startRedirectEnrollment
      ? {
          startRedirectEnrollment: async (input) => {
            const { redirectUrl } = await p.startRedirectEnrollment!(input);
            return { redirectUrl: redirectUrlOf(p.id, redirectUrl) };
          },
        }
      : {}),
  };
  return wrapped;
}

const bad = (providerId: string, what: string) => new ProviderUnavailableError(providerId, 'BAD_RESPONSE', `${providerId} answered ${what}`);

/** Lengths follow the API's fields (Transaction, ProviderData, CardDetail). */
export function normalizeResult(providerId: string, r: ProviderResult): ProviderResult {
  if (!(OUTCOMES as readonly unknown[]).includes(r.outcome)) throw bad(providerId, 'an outcome that is not SUCCEEDED, DECLINED or ERROR');
  const transactionId = providerReference(r.providerTransactionId);
  if (r.outcome === 'SUCCEEDED' && transactionId === null) throw bad(providerId, 'an approval without a usable transaction id');
  const advice = r.merchantAdviceCode === null || r.merchantAdviceCode === undefined ? null : shortCode(r.merchantAdviceCode, ADVICE_CODE);
  return {
    outcome: r.outcome,
    providerTransactionId: transactionId ?? '',
    responseCode: responseCode(r.responseCode),
    responseMessage: providerMessage(r.responseMessage, 255, ''),
    iso8583ResponseCode: shortCode(r.iso8583ResponseCode, ISO8583_CODE),
    iso8583ResponseMessage: providerMessage(r.iso8583ResponseMessage, 255, 'Unknown'),
    merchantAdviceCode: advice,
    merchantAdviceCodeMessage: advice === null ? null : optionalMessage(r.merchantAdviceCodeMessage, 255),
    authorizationCode: token(r.authorizationCode, /^[A-Za-z0-9]{1,12}$/),
    retrievalReferenceNumber: token(r.retrievalReferenceNumber, /^[A-Za-z0-9]{1,24}$/),
    rawResponse: boundedRawAnswer(r.rawResponse),
    ...(r.chargebackFollows === true ? { chargebackFollows: true } : r.chargebackFollows === false ? { chargebackFollows: false } : {}),
    ...(r.cardInfo ? { cardInfo: normalizeCardInfo(r.cardInfo) } : {}),
  };
}

function normalizeCardInfo(c: ProviderCardInfo): ProviderCardInfo {
  return {
    issuerName: optionalMessage(c.issuerName, 255),
    issuerCode: token(c.issuerCode, /^[A-Za-z0-9_-]{1,32}$/),
    countryCode: token(c.countryCode, /^[A-Z]{2}$/),
    category: token(c.category, /^[A-Z0-9_]{1,32}$/),
    type: token(c.type, /^[A-Z0-9_]{1,32}$/),
  };
}

function normalizeLookup(providerId: string, l: ProviderLookup): ProviderLookup {
  if (l.found === false) return { found: false };
  if (l.found !== true) throw bad(providerId, 'a lookup that is neither found nor not found');
  return { found: true, result: normalizeResult(providerId, l.result), voided: l.voided === true };
}

function normalizeAck(providerId: string, ack: DisputeEvidenceAck): DisputeEvidenceAck {
  const id = providerReference(ack.providerDisputeId);
  if (id === null) throw bad(providerId, 'a dispute acknowledgement without a usable id');
  return { providerDisputeId: id, duplicate: ack.duplicate === true };
}

/**
 * A notification's values (its signature is verified already, its body held to the spec's lengths at the
 * HTTP edge): ids kept as references when usable, else as clean text; an amount that is not a decimal is
 * left for chargebacks.ts to refuse (400), never stored as sent.
 */
function normalizeEvent(e: ChargebackEvent): ChargebackEvent {
  const id = providerId;
  return {
    ...e,
    notificationId: id(e.notificationId, 128),
    paymentId: id(e.paymentId, 64),
    providerTransactionId: id(e.providerTransactionId, 255),
    chargebackId: id(e.chargebackId, 255),
    amount: providerAmount(e.amount) ?? 'NaN',
    reason: providerMessage(e.reason, 64, 'OTHER'),
    reasonCode: token(e.reasonCode, /^[A-Za-z0-9._-]{1,16}$/),
    reasonDescription: optionalMessage(e.reasonDescription, 255),
    // What the chargeback keeps and shows as its raw response: the notification held to the bounds and
    // masking of any provider answer (raw-answer.ts: 8 KiB, card numbers, keys and tokens masked), never
    // the body as sent (a dispute carries the shopper's details, a batch every item's).
    rawBody: JSON.stringify(boundedRawAnswer(e.raw)),
  };
}

/** An id a provider sends: kept as a reference when usable, else as clean text of at most `max` characters. */
const providerId = (value: string, max: number) => providerReference(value, max) ?? cleanText(String(value), max);
const optionalId = (value: string | null | undefined, max: number) => (value === null || value === undefined ? null : providerId(value, max) || null);

/**
 * Every event of a connection's notification, normalized as a chargeback's are: ids to references (or
 * clean text), amounts to exact decimals (an unusable one to null: nothing relies on it), reasons to
 * bounded text; a value outside an event's fixed set makes the event unusable (thrown: a connector bug).
 */
export function normalizeConnectorEvent(e: ConnectorEvent): ConnectorEvent {
  switch (e.kind) {
    case 'CHARGEBACK':
      return normalizeEvent(e);
    case 'FOLLOW_UP_SETTLED':
      if (!['CAPTURE', 'REFUND', 'VOID'].includes(e.operation) || !['CONFIRMED', 'FAILED'].includes(e.outcome)) {
        throw new Error(`a FOLLOW_UP_SETTLED event with operation ${String(e.operation)} and outcome ${String(e.outcome)}`);
      }
      return {
        kind: 'FOLLOW_UP_SETTLED',
        notificationId: providerId(e.notificationId, 128),
        operation: e.operation,
        outcome: e.outcome,
        reference: optionalId(e.reference, 64),
        providerOperationId: optionalId(e.providerOperationId, 255),
        providerTransactionId: optionalId(e.providerTransactionId, 255),
        amount: e.amount === null || e.amount === undefined ? null : providerAmount(e.amount),
        reason: optionalMessage(e.reason, 255),
      };
    case 'ASYNC_PAYMENT_SETTLED':
      if (!['SUCCEEDED', 'DECLINED', 'EXPIRED', 'CANCELED'].includes(e.outcome)) throw new Error(`an ASYNC_PAYMENT_SETTLED event with outcome ${String(e.outcome)}`);
      return {
        kind: 'ASYNC_PAYMENT_SETTLED',
        notificationId: providerId(e.notificationId, 128),
        providerTransactionId: providerId(e.providerTransactionId, 255),
        outcome: e.outcome,
        reason: optionalMessage(e.reason, 255),
      };
    case 'ATTEMPT_SETTLED':
      if (e.outcome !== 'SUCCEEDED' && e.outcome !== 'DECLINED') throw new Error(`an ATTEMPT_SETTLED event with outcome ${String(e.outcome)}`);
      return {
        kind: 'ATTEMPT_SETTLED',
        notificationId: providerId(e.notificationId, 128),
        reference: providerId(e.reference, 64),
        providerTransactionId: providerId(e.providerTransactionId, 255),
        outcome: e.outcome,
        reason: optionalMessage(e.reason, 255),
        authorizationCode: optionalId(e.authorizationCode, 32),
      };
    case 'DISPUTE_CLOSED':
      if (e.outcome !== 'WON' && e.outcome !== 'LOST') throw new Error(`a DISPUTE_CLOSED event with outcome ${String(e.outcome)}`);
      return {
        kind: 'DISPUTE_CLOSED',
        notificationId: providerId(e.notificationId, 128),
        providerTransactionId: providerId(e.providerTransactionId, 255),
        chargebackId: providerId(e.chargebackId, 255),
        outcome: e.outcome,
        reason: optionalMessage(e.reason, 255),
      };
  }
}

/** The page a customer is sent to: an http(s) URL of sane length, else the answer is unusable. */
function redirectUrlOf(providerId: string, url: string): string {
  try {
    const parsed = new URL(url);
    if ((parsed.protocol === 'https:' || parsed.protocol === 'http:') && url.length <= 2048) return parsed.href;
  } catch {
    // not a URL
  }
  throw bad(providerId, 'a redirect URL that is not an http(s) URL');
}

/**
 * The action a shopper is shown, held to the API's fields (BankTransferDetail, TicketDetail, WalletDetail):
 * clean bounded text, a real deadline, an http(s) page; anything unusable makes the answer unusable.
 */
function normalizeAction(providerId: string, a: ShopperAction): ShopperAction {
  const expiresAt = Date.parse(a.expiresAt);
  if (!Number.isFinite(expiresAt)) throw bad(providerId, 'an action without a usable deadline');
  const at = new Date(expiresAt).toISOString();
  const text = (v: string, max: number) => providerMessage(v, max, '');
  // References, barcodes and account numbers are long digit runs by nature: checked by shape, not redacted as text is.
  const number = (v: string) => token(v, /^[A-Za-z0-9 .-]{1,255}$/) ?? '';
  switch (a.kind) {
    case 'QR_CODE':
      if (!/^[\x20-\x7e]{1,1024}$/.test(a.qrCode)) throw bad(providerId, 'a QR code payload that is not printable ASCII of at most 1,024 characters');
      return { kind: 'QR_CODE', qrCode: a.qrCode, expiresAt: at, ...(a.pageUrl !== undefined ? { pageUrl: redirectUrlOf(providerId, a.pageUrl) } : {}) };
    case 'BANK_TRANSFER':
      return {
        kind: 'BANK_TRANSFER',
        bankName: text(a.bankName, 255),
        beneficiaryName: text(a.beneficiaryName, 255),
        bankAccount: number(a.bankAccount).slice(0, 64),
        accountType: text(a.accountType, 64),
        reference: number(a.reference),
        expiresAt: at,
      };
    case 'VOUCHER':
      if (!/^\d{4}-\d{2}-\d{2}$/.test(a.dueDate)) throw bad(providerId, 'a voucher without a YYYY-MM-DD due date');
      return {
        kind: 'VOUCHER',
        voucherType: text(a.voucherType, 64),
        reference: number(a.reference),
        barcode: number(a.barcode),
        barcodeFormat: text(a.barcodeFormat, 64),
        dueDate: a.dueDate,
        instruction: text(a.instruction, 4096),
        expiresAt: at,
        ...(a.pageUrl !== undefined ? { pageUrl: redirectUrlOf(providerId, a.pageUrl) } : {}),
      };
    case 'REDIRECT':
      return { kind: 'REDIRECT', redirectUrl: redirectUrlOf(providerId, a.redirectUrl), expiresAt: at };
    default:
      throw bad(providerId, 'an action of an unknown kind');
  }
}
