/**
 * Our calls ↔ Mercado Pago's shapes (typed by the `mercadopago` package, sdk-types.ts). Amounts: Mercado
 * Pago takes and answers `transaction_amount` / `amount` as a JSON number in MAJOR units; ours are decimal
 * strings, so the conversion is only Number(...) out and a fixed-decimals rendering back (the currency's
 * ISO minor units: CLP and COP have none).
 */
import { minorUnits } from '../../payments/money.js';
import type { CodeMapping } from '../connector.js';
import type { Charge, ProviderCard, ProviderResult } from '../provider.js';
import { errorRow, rejectionRow } from './codes.js';
import type { CardTokenCreateBody, PaymentCreateRequest, PaymentResponse, PaymentSearchResult, RefundResponse } from './sdk-types.js';

/**
 * Mercado Pago requires a payer e-mail on card payments; the Charge carries none (no personal data goes to
 * providers it does not need). A fixed placeholder of a reserved domain, derived from nothing personal.
 */
export const PLACEHOLDER_PAYER_EMAIL = 'payer@payorch.invalid';

/** Mercado Pago's payment_method_id of our card brands (its ids for credit cards). */
const PAYMENT_METHOD_OF_BRAND: Readonly<Record<string, string>> = {
  VISA: 'visa',
  MASTERCARD: 'master',
  AMEX: 'amex',
  ELO: 'elo',
  HIPERCARD: 'hipercard',
  DINERS: 'diners',
  NARANJA: 'naranja',
  MAESTRO: 'maestro',
};

export function paymentMethodOf(brand: string): string {
  return PAYMENT_METHOD_OF_BRAND[brand.toUpperCase()] ?? brand.toLowerCase().replace(/[^a-z0-9_]/g, '');
}

/** The card as POST /v1/card_tokens takes it (the year in four digits). */
export function cardTokenBody(card: ProviderCard): CardTokenCreateBody & { cardholder?: { name: string } } {
  return {
    card_number: card.number,
    expiration_month: String(card.expirationMonth),
    expiration_year: String(2000 + card.expirationYear),
    ...(card.securityCode ? { security_code: card.securityCode } : {}),
    ...(card.holderName ? { cardholder: { name: card.holderName } } : {}),
  };
}

/** POST /v1/payments for a card token: `capture: false` holds the money (authorize). */
export function paymentBody(charge: Charge, token: string, capture: boolean): PaymentCreateRequest {
  return {
    transaction_amount: Number(charge.amount),
    token,
    installments: 1,
    payment_method_id: paymentMethodOf(charge.card.brand),
    description: charge.description.slice(0, 256),
    external_reference: charge.reference,
    capture,
    binary_mode: true,
    payer: { email: PLACEHOLDER_PAYER_EMAIL },
    // Ties Mercado Pago's records (and its chargebacks) to our payment: notifications.ts reads it back.
    metadata: { payorch_reference: charge.reference, ...(charge.paymentId ? { payorch_payment_id: charge.paymentId } : {}) },
    ...(charge.softDescriptor ? { statement_descriptor: charge.softDescriptor.slice(0, 22) } : {}),
  };
}

/** A Mercado Pago amount (a JSON number in major units) as our decimal text for the currency. */
export function decimalOf(amount: number, currency: string): string {
  return amount.toFixed(minorUnits(currency) ?? 2);
}

const ISO_MESSAGE: Readonly<Record<string, string>> = {
  '00': 'Approved',
  '01': 'Refer to card issuer',
  '05': 'Do not honor',
  '12': 'Invalid transaction',
  '14': 'Invalid card number',
  '30': 'Format error',
  '51': 'Insufficient funds',
  '54': 'Expired card',
  '57': 'Transaction not permitted to cardholder',
  '59': 'Suspected fraud',
  '62': 'Restricted card',
  '75': 'Allowable number of tries exceeded',
  '94': 'Duplicate transmission',
  '96': 'System malfunction',
  N7: 'Decline for CVV2 failure',
};

type Raw = Record<string, unknown>;

function base(outcome: ProviderResult['outcome'], id: string, code: string, message: string, iso: string, advice: string | null, raw: Raw): ProviderResult {
  return {
    outcome,
    providerTransactionId: id,
    responseCode: code,
    responseMessage: message,
    iso8583ResponseCode: iso,
    iso8583ResponseMessage: ISO_MESSAGE[iso] ?? 'Unknown',
    merchantAdviceCode: advice,
    merchantAdviceCodeMessage: advice === '03' ? 'Do not try again' : null,
    authorizationCode: null,
    retrievalReferenceNumber: null,
    rawResponse: raw,
  };
}

export function rowResult(row: CodeMapping, id: string, raw: Raw): ProviderResult {
  return base(row.outcome, id, row.responseCode, row.message, row.iso8583ResponseCode, row.merchantAdviceCode, raw);
}

export function approvedResult(id: string, raw: Raw, authorizationCode?: string | null): ProviderResult {
  return { ...base('SUCCEEDED', id, 'SUCCEEDED', 'Approved', '00', null, raw), authorizationCode: authorizationCode ?? null };
}

/** A follow-up Mercado Pago refused (an HTTP 4xx on capture, cancel or refund): nothing moved. */
export function refusedFollowUp(responseCode: string, message: string, raw: Raw): ProviderResult {
  return base('DECLINED', '', responseCode, message, '12', null, raw);
}

/** Payment statuses that are not a final word yet (the money may still move either way). */
const UNDECIDED = new Set(['pending', 'in_process', 'in_mediation']);
export const isUndecided = (status: string | undefined) => status === undefined || UNDECIDED.has(status);

/**
 * A payment's answer as a charge result. `approved` (captured) and `authorized` (held) are approvals;
 * `rejected` goes through the code table by status_detail; a payment cancelled, refunded or charged back
 * was approved once (lookup says whether it was voided). Undecided statuses are not a result: the caller
 * treats them as an unknown outcome (see adapter.ts).
 */
export function paymentResult(p: PaymentResponse | PaymentSearchResult): ProviderResult {
  const id = p.id === undefined ? '' : String(p.id);
  const raw = p as unknown as Raw;
  if (p.status === 'rejected') return rowResult(rejectionRow(p.status_detail), id, raw);
  if (p.status === 'approved' || p.status === 'authorized' || p.status === 'cancelled' || p.status === 'refunded' || p.status === 'charged_back') {
    return approvedResult(id, raw, p.authorization_code);
  }
  return rowResult(errorRow(undefined), id, raw);
}

/** A 4xx error answer of a charge as a result (the code table's error rows, by the body's `error`). */
export function errorResult(error: string | undefined, raw: Raw): ProviderResult {
  return rowResult(errorRow(error), '', raw);
}

/** A refund's answer: accepted (approved, or still in process: its notification settles it) or refused. */
export function refundResult(r: RefundResponse): ProviderResult {
  const raw = r as unknown as Raw;
  const id = r.id === undefined ? '' : String(r.id);
  if (r.status === 'rejected' || r.status === 'cancelled') return refusedFollowUp('REFUND_DECLINED', 'Mercado Pago refused the refund', raw);
  return approvedResult(id, raw);
}

/** Our copy of an answer for rawResponse: the SDK envelope (api_response) is ours, not the provider's. */
export function withoutEnvelope<T extends object>(answer: T): T {
  const { api_response: _envelope, ...rest } = answer as T & { api_response?: unknown };
  return rest as T;
}
