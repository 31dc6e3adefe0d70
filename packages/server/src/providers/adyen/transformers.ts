/**
 * Our calls ↔ Adyen Checkout v72 shapes, apart from the flow (adapter.ts): amounts (our decimal major units ↔
 * Adyen's minor units, by Adyen's own exponents), the /payments request for a card (raw card fields: the
 * merchant is PCI certified, as the orchestrator requires for card data), and Adyen's answers → ProviderResult
 * through the code table (codes.ts).
 */
import type { Types } from '@adyen/api-library';
import { minorUnits } from '../../payments/money.js';
import type { Charge, ProviderResult } from '../provider.js';
import { adviceOf, codeRow } from './codes.js';

type PaymentRequest = Types.checkout.PaymentRequest;
type PaymentResponse = Types.checkout.PaymentResponse;

/**
 * Where Adyen's minor units differ from ISO 4217 as money.ts holds it (Adyen's "Currency codes" page: its
 * table is what Adyen reads amounts by). CLP and ISK carry two decimals at Adyen, CVE and IDR none; COP two
 * (money.ts treats COP as zero-decimal, as the Colombian acquirers do).
 */
const ADYEN_EXPONENTS: Readonly<Record<string, number>> = { CLP: 2, ISK: 2, COP: 2, CVE: 0, IDR: 0 };

export function adyenExponent(currency: string): number | undefined {
  return ADYEN_EXPONENTS[currency] ?? minorUnits(currency);
}

/** A decimal string in major units → Adyen's integer minor units; null when it cannot be said exactly. */
export function toMinorUnits(amount: string, currency: string): number | null {
  const exponent = adyenExponent(currency);
  const m = /^(\d{1,15})(?:\.(\d{1,8}))?$/.exec(amount);
  if (exponent === undefined || !m) return null;
  const fraction = (m[2] ?? '').replace(/0+$/, '');
  if (fraction.length > exponent) return null; // e.g. IDR 10.50: Adyen takes IDR without decimals
  const value = Number(`${m[1]}${fraction.padEnd(exponent, '0')}`);
  return Number.isSafeInteger(value) ? value : null;
}

/** Adyen's minor units → our decimal string in major units. */
export function fromMinorUnits(value: number, currency: string): string {
  const exponent = adyenExponent(currency) ?? 2;
  const digits = String(Math.abs(Math.trunc(value))).padStart(exponent + 1, '0');
  const whole = exponent === 0 ? digits : digits.slice(0, -exponent);
  const fraction = exponent === 0 ? '' : digits.slice(-exponent).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}

/**
 * POST /payments for a card. `capture`: a purchase is captured at once (captureDelayHours 0, whatever the
 * merchant account's default delay); an authorization is held for a later capture (additionalData
 * manualCapture). Our reference is the merchant reference (and, sent by the adapter, the Idempotency-Key).
 */
export function cardPaymentRequest(input: Charge, opts: { merchantAccount: string; value: number; capture: boolean; returnUrl: string }): PaymentRequest {
  const card = input.card;
  return {
    merchantAccount: opts.merchantAccount,
    reference: input.reference,
    amount: { currency: input.currency, value: opts.value },
    paymentMethod: {
      type: 'scheme',
      number: card.number,
      expiryMonth: String(card.expirationMonth).padStart(2, '0'),
      expiryYear: String(2000 + card.expirationYear),
      ...(card.securityCode ? { cvc: card.securityCode } : {}),
      ...(card.holderName ? { holderName: card.holderName } : {}),
    } as PaymentRequest['paymentMethod'],
    shopperInteraction: 'Ecommerce' as PaymentRequest['shopperInteraction'],
    // Required by the schema for every payment; a card payment without 3-D Secure never redirects to it.
    returnUrl: opts.returnUrl,
    ...(opts.capture ? { captureDelayHours: 0 } : { additionalData: { manualCapture: 'true' } }),
    ...(statement(input.softDescriptor) ? { shopperStatement: statement(input.softDescriptor)! } : {}),
    ...(input.paymentId ? { metadata: { payorch_payment_id: input.paymentId } } : {}),
  };
}

/**
 * The soft descriptor as Adyen takes a shopper statement: its allowed characters only (letters, digits, spaces
 * and . , ' _ - ? + * /), at most the 22 characters banks show.
 */
function statement(text: string | null | undefined): string | null {
  const cleaned = (text ?? '').replace(/[^a-zA-Z0-9 .,'_\-?+*/]/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 22).trim();
  return cleaned === '' ? null : cleaned;
}

/**
 * The lookup's replay (adapter.ts lookup): POST /payments under the same Idempotency-Key with NO card data.
 * When Adyen processed the key, it answers the stored first answer; when it never saw it, this body cannot
 * charge anything (no card number: Adyen refuses it as invalid, which the lookup reads as "not processed").
 */
export function lookupReplayRequest(reference: string, merchantAccount: string, returnUrl: string): PaymentRequest {
  return {
    merchantAccount,
    reference,
    amount: { currency: 'EUR', value: 0 },
    paymentMethod: { type: 'scheme' } as PaymentRequest['paymentMethod'],
    returnUrl,
  };
}

const APPROVED = { iso8583ResponseCode: '00', iso8583ResponseMessage: 'Approved', responseCode: 'SUCCEEDED' } as const;

/** Adyen's /payments answer → our result, through the code table for anything but Authorised. */
export function paymentResult(res: PaymentResponse, raw: Record<string, unknown>): ProviderResult {
  const extra = (res.additionalData ?? {}) as Record<string, string | undefined>;
  const base = {
    providerTransactionId: res.pspReference ?? '',
    authorizationCode: extra.authCode ?? null,
    retrievalReferenceNumber: extra.retrievalReferenceNumber ?? null,
    rawResponse: raw,
    ...(extra.cardIssuingCountry || extra.fundingSource
      ? { cardInfo: { issuerName: null, issuerCode: null, countryCode: extra.cardIssuingCountry ?? null, category: null, type: extra.fundingSource ?? null } }
      : {}),
  };
  const resultCode = String(res.resultCode ?? '');
  if (resultCode === 'Authorised') {
    return { ...base, outcome: 'SUCCEEDED', ...APPROVED, responseMessage: 'Authorised', merchantAdviceCode: null, merchantAdviceCodeMessage: null };
  }
  // Refused and Cancelled are refusals; Error, and any state this connector does not drive (3-D Secure
  // actions, Pending, Received, PartiallyAuthorised: it never asks for them), is an error of the code table.
  const kind = resultCode === 'Refused' || resultCode === 'Cancelled' ? 'refusal' : 'error';
  const adviceText = extra.merchantAdviceCode ?? null;
  const row = codeRow(res.refusalReasonCode, kind, adviceOf(adviceText));
  return {
    ...base,
    outcome: row.outcome,
    responseCode: row.responseCode,
    responseMessage: kind === 'error' && !res.refusalReasonCode && resultCode !== 'Error' ? `Adyen answered resultCode ${resultCode}, which this connector does not drive` : row.message,
    iso8583ResponseCode: row.iso8583ResponseCode,
    iso8583ResponseMessage: res.refusalReason ?? resultCode,
    merchantAdviceCode: row.merchantAdviceCode,
    merchantAdviceCodeMessage: row.merchantAdviceCode !== null ? (adviceText ?? row.message) : null,
  };
}

/**
 * A modification's answer (captures, cancels, refunds): `status: received` means Adyen accepted it; the
 * CAPTURE / CANCELLATION / REFUND notification (or CAPTURE_FAILED / REFUND_FAILED) says later whether it went
 * through. The result's transaction id stays the payment's pspReference (what later modifications name); the
 * modification's own pspReference is in the raw answer.
 */
export function modificationResult(res: { status?: unknown; paymentPspReference?: unknown; pspReference?: unknown }, raw: Record<string, unknown>): ProviderResult {
  const accepted = res.status === 'received';
  // The merchant account is the connection's configuration, not the operation's: not kept with the answer.
  const { merchantAccount: _account, ...kept } = raw;
  return {
    outcome: accepted ? 'SUCCEEDED' : 'ERROR',
    providerTransactionId: String(res.paymentPspReference ?? ''),
    ...(accepted ? APPROVED : { responseCode: 'PROVIDER_ERROR', iso8583ResponseCode: '96', iso8583ResponseMessage: 'System malfunction' }),
    responseMessage: accepted ? 'Received by Adyen; its notification confirms it' : `Adyen answered status ${String(res.status)}`,
    merchantAdviceCode: null,
    merchantAdviceCodeMessage: null,
    authorizationCode: null,
    retrievalReferenceNumber: null,
    rawResponse: kept,
  };
}

/** A call Adyen refused at the HTTP level (4xx, ServiceError body): nothing was done at Adyen. */
export function refusedRequest(
  status: number,
  body: Record<string, unknown> | null,
  operation: 'CHARGE' | 'CAPTURE' | 'VOID' | 'REFUND',
): ProviderResult {
  const raw = body ?? { status };
  const base = { providerTransactionId: '', merchantAdviceCode: null, merchantAdviceCodeMessage: null, authorizationCode: null, retrievalReferenceNumber: null, rawResponse: raw };
  const text = typeof body?.message === 'string' ? body.message : `HTTP ${status}`;
  if (status === 401 || status === 403) {
    return { ...base, outcome: 'ERROR', responseCode: 'PROVIDER_AUTHENTICATION_FAILED', responseMessage: 'Adyen refused the connection credentials', iso8583ResponseCode: '96', iso8583ResponseMessage: 'System malfunction' };
  }
  if (operation !== 'CHARGE' && (status === 404 || status === 422)) {
    // A modification Adyen will not make (unknown payment, an amount over what is left): a decline of the operation.
    const code = operation === 'CAPTURE' ? 'CAPTURE_DECLINED' : operation === 'VOID' ? 'VOID_DECLINED' : 'REFUND_DECLINED';
    return { ...base, outcome: 'DECLINED', responseCode: status === 404 ? 'TRANSACTION_NOT_FOUND' : code, responseMessage: text, iso8583ResponseCode: '12', iso8583ResponseMessage: 'Invalid transaction' };
  }
  return { ...base, outcome: 'ERROR', responseCode: 'PROVIDER_REQUEST_REJECTED', responseMessage: `Adyen rejected the request: ${text}`, iso8583ResponseCode: '30', iso8583ResponseMessage: 'Format error' };
}
