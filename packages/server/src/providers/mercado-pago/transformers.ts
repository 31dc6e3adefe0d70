/**
 * Our calls ↔ Mercado Pago's shapes (typed by the `mercadopago` package, sdk-types.ts). Amounts: Mercado
 * Pago takes and answers `transaction_amount` / `amount` as a JSON number in MAJOR units; ours are decimal
 * strings, so the conversion is only Number(...) out and a fixed-decimals rendering back (the currency's
 * ISO minor units: CLP and COP have none).
 */
import { minorUnits } from '../minor-units.js';
import type { CodeMapping } from '../connector.js';
import type { AsyncCharge, AsyncMethodType, AsyncPayer, AsyncStart, Charge, ProviderCard, ProviderResult } from '../provider.js';
import { errorRow, rejectionRow } from './codes.js';
import type { CardTokenCreateBody, PaymentCreateRequest, PaymentResponse, PaymentSearchResult, RefundResponse } from './sdk-types.js';
import { ownEntry } from '../../platform/own-entry.js';

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
  return ownEntry(PAYMENT_METHOD_OF_BRAND, brand.toUpperCase()) ?? brand.toLowerCase().replace(/[^a-z0-9_]/g, '');
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
    iso8583ResponseMessage: ownEntry(ISO_MESSAGE, iso) ?? 'Unknown',
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

/** The asynchronous methods Mercado Pago serves for payorch: its payment_method_id, in Brazil, in reais. */
export const MERCADO_PAGO_ASYNC_METHODS = {
  PIX: { paymentMethodId: 'pix', currency: 'BRL' },
  BOLETO: { paymentMethodId: 'bolbradesco', currency: 'BRL' },
} as const satisfies Partial<Record<AsyncMethodType, { paymentMethodId: string; currency: string }>>;
export type MercadoPagoAsyncMethod = keyof typeof MERCADO_PAGO_ASYNC_METHODS;
/** Their payment_method_ids (notifications.ts: which payments end a pending payment). */
export const MERCADO_PAGO_ASYNC_IDS: ReadonlySet<string> = new Set(Object.values(MERCADO_PAGO_ASYNC_METHODS).map((m) => m.paymentMethodId));

/** As the sandbox acquirers give them: a PIX code 30 minutes, a boleto three days. */
export const PIX_VALIDITY_MS = 30 * 60_000;
export const BOLETO_VALIDITY_MS = 3 * 86_400_000;

const payerName = (payer: AsyncPayer | undefined) => ({ first: payer?.firstName?.trim() ?? '', last: payer?.lastName?.trim() ?? '' });

/**
 * What the method needs of the payer that the payment does not name, or null. A PIX needs an e-mail
 * (Mercado Pago's placeholder is used when none is given, as for cards); a boleto names the payer, their
 * CPF/CNPJ and address (Mercado Pago refuses it without them).
 */
export function missingBoletoPayer(payer: AsyncPayer | undefined): string | null {
  const missing: string[] = [];
  const name = payerName(payer);
  if (!name.first || !name.last) missing.push('customer_payer.first_name and last_name');
  if (!payer?.document) missing.push('customer_payer.document (the CPF or CNPJ)');
  const a = payer?.address;
  if (!a || !a.city || !a.state || !a.zipCode) missing.push('customer_payer.billing_address (address_line_1, city, state, zip_code)');
  return missing.length > 0 ? missing.join(', ') : null;
}

/** "Rua das Flores, 123" → street name and number (Mercado Pago asks for them apart); "S/N" when the line names none. */
export function streetOf(line: string): { street_name: string; street_number: string } {
  const m = /^(.*?)[,\s]+(?:n[º°o.]?\s*)?(\d+[A-Za-z]?)\s*$/i.exec(line.trim());
  return m && m[1]!.trim() ? { street_name: m[1]!.trim(), street_number: m[2]! } : { street_name: line.trim(), street_number: 'S/N' };
}

/** Mercado Pago's date format: local time with its offset and milliseconds (2026-11-26T12:30:00.000-03:00), here in UTC. */
const mercadoPagoDate = (at: Date) => at.toISOString().replace('Z', '+00:00');

/**
 * POST /v1/payments for a PIX (`payment_method_id: pix`) or a boleto (`bolbradesco`): no card token, the
 * deadline as date_of_expiration, our reference as external_reference and in metadata (as a card's). The
 * payer: an e-mail for PIX (the placeholder when the payment names none), the full payer for a boleto.
 */
export function asyncPaymentBody(input: AsyncCharge, method: MercadoPagoAsyncMethod, now = new Date()): PaymentCreateRequest {
  const payer = input.payer;
  const name = payerName(payer);
  const a = payer?.address;
  const expiresAt = new Date(now.getTime() + (method === 'PIX' ? PIX_VALIDITY_MS : BOLETO_VALIDITY_MS));
  return {
    transaction_amount: Number(input.amount),
    payment_method_id: MERCADO_PAGO_ASYNC_METHODS[method].paymentMethodId,
    description: input.description.slice(0, 256),
    external_reference: input.reference,
    date_of_expiration: mercadoPagoDate(expiresAt),
    metadata: { payorch_reference: input.reference, payorch_payment_id: input.paymentId },
    payer:
      method === 'PIX'
        ? { email: payer?.email ?? PLACEHOLDER_PAYER_EMAIL }
        : {
            email: payer?.email ?? PLACEHOLDER_PAYER_EMAIL,
            first_name: name.first,
            last_name: name.last,
            identification: { type: documentType(payer!.document!), number: payer!.document!.number.replace(/\D/g, '') },
            address: { zip_code: a!.zipCode!.replace(/\D/g, ''), ...streetOf(a!.line1), neighborhood: a!.neighborhood ?? a!.city!, city: a!.city!, federal_unit: a!.state! },
          },
  };
}

/** CPF (11 digits) or CNPJ (14), as the payer's document says or its length shows. */
function documentType(document: NonNullable<AsyncPayer['document']>): string {
  const named = document.type?.toUpperCase();
  if (named === 'CPF' || named === 'CNPJ') return named;
  return document.number.replace(/\D/g, '').length === 14 ? 'CNPJ' : 'CPF';
}

/** The payment's own fields for an issued PIX or boleto (the package's types name barcode only under transaction_details). */
type AsyncPaymentAnswer = PaymentResponse & { barcode?: { content?: string } };

/**
 * Mercado Pago's answer to a PIX or boleto payment: `pending` with the code (point_of_interaction's
 * transaction_data.qr_code) or the boleto (barcode, typed line, printable page) and its
 * date_of_expiration is an issued payment; `rejected` goes through the code table; anything else is not an
 * action we can show.
 */
export function asyncStartOf(p: AsyncPaymentAnswer, method: MercadoPagoAsyncMethod): AsyncStart {
  const id = p.id === undefined ? '' : String(p.id);
  // The payer (e-mail, name, CPF) is the payment's own customer_payer already: not kept twice in the raw answer.
  const { payer: _payer, ...raw } = p as unknown as Raw;
  if (p.status !== 'pending') {
    return { result: p.status === 'rejected' ? rowResult(rejectionRow(p.status_detail), id, raw) : rowResult(errorRow(undefined), id, raw), action: null };
  }
  const expiresAt = p.date_of_expiration;
  if (!expiresAt || !Number.isFinite(Date.parse(expiresAt))) return { result: rowResult(errorRow(undefined), id, raw), action: null };
  const issued: ProviderResult = { ...approvedResult(id, raw), responseMessage: 'Payment request issued: waiting for the shopper' };
  if (method === 'PIX') {
    const data = p.point_of_interaction?.transaction_data;
    if (!data?.qr_code) return { result: rowResult(errorRow(undefined), id, raw), action: null };
    return { result: issued, action: { kind: 'QR_CODE', qrCode: data.qr_code, expiresAt, ...(data.ticket_url ? { pageUrl: data.ticket_url } : {}) } };
  }
  const details = p.transaction_details;
  const barcode = details?.barcode?.content ?? p.barcode?.content;
  if (!barcode) return { result: rowResult(errorRow(undefined), id, raw), action: null };
  return {
    result: issued,
    action: {
      kind: 'VOUCHER',
      voucherType: 'BOLETO',
      reference: details?.digitable_line ?? barcode,
      barcode,
      barcodeFormat: 'ITF',
      // The due day as Mercado Pago wrote it (its own offset: Brasília time).
      dueDate: expiresAt.slice(0, 10),
      instruction: 'Pay the boleto at a bank, a lottery outlet or in your bank app before its due date.',
      expiresAt,
      ...(details?.external_resource_url ? { pageUrl: details.external_resource_url } : {}),
    },
  };
}

/**
 * A PIX or boleto payment's final status, as the pending payment's outcome (its `payment` notification);
 * null while it is still pending, or for a payment of another method (a card's answer was final).
 * approved → SUCCEEDED; rejected → DECLINED; cancelled → EXPIRED when Mercado Pago cancelled it at its
 * deadline (status_detail `expired`), CANCELED otherwise; `expired` → EXPIRED.
 */
export function asyncOutcomeOf(p: PaymentResponse): { outcome: 'SUCCEEDED' | 'DECLINED' | 'EXPIRED' | 'CANCELED'; reason: string | null } | null {
  if (!p.payment_method_id || !MERCADO_PAGO_ASYNC_IDS.has(p.payment_method_id)) return null;
  const reason = p.status_detail ?? null;
  switch (p.status) {
    case 'approved':
      return { outcome: 'SUCCEEDED', reason: null };
    case 'rejected':
      return { outcome: 'DECLINED', reason };
    case 'cancelled':
      return { outcome: reason === 'expired' ? 'EXPIRED' : 'CANCELED', reason };
    case 'expired':
      return { outcome: 'EXPIRED', reason };
    default:
      return null;
  }
}

/**
 * Reconciliation's view of a PIX or boleto payment (found by our reference after the answer was
 * lost): approved is the shopper's payment, an approval; any other status is a request nobody was shown
 * (pending, then cancelled or expired at its deadline), never an approval. Null for a card's payment.
 */
export function asyncLookupResult(p: PaymentSearchResult): ProviderResult | null {
  if (!p.payment_method_id || !MERCADO_PAGO_ASYNC_IDS.has(p.payment_method_id)) return null;
  const id = p.id === undefined ? '' : String(p.id);
  const { payer: _payer, ...raw } = p as unknown as Raw;
  if (p.status === 'approved') return approvedResult(id, raw);
  return { ...rowResult(errorRow(undefined), id, raw), responseCode: 'PROVIDER_ERROR', responseMessage: `Mercado Pago's ${p.payment_method_id} payment request is ${p.status ?? 'unknown'}: never shown to the shopper, never paid` };
}
