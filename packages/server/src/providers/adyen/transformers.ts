/**
 * Our calls ↔ Adyen Checkout v72 shapes, apart from the flow (adapter.ts): amounts (our decimal major units ↔
 * Adyen's minor units, by Adyen's own exponents), the /payments request for a card (raw card fields: the
 * merchant is PCI certified, as the orchestrator requires for card data), and Adyen's answers → ProviderResult
 * through the code table (codes.ts).
 */
import type { Types } from '@adyen/api-library';
import { minorUnits } from '../minor-units.js';
import type { AsyncCharge, AsyncMethodType, AsyncPayer, AsyncStart, Charge, ProviderResult, ShopperAction } from '../provider.js';
import { boletoBarcode } from '../boleto.js';
import { adviceOf, codeRow } from './codes.js';

type PaymentRequest = Types.checkout.PaymentRequest;
type PaymentResponse = Types.checkout.PaymentResponse;

/**
 * Where Adyen's minor units differ from ISO 4217 as minor-units.ts holds it (Adyen's "Currency codes" page: its
 * table is what Adyen reads amounts by). CLP and ISK carry two decimals at Adyen, CVE and IDR none; COP two
 * (minor-units.ts treats COP as zero-decimal, as the Colombian acquirers do).
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

/**
 * A card payment Adyen has not decided yet (resultCode Received or Pending with no shopper action asked for):
 * it may still be authorised, so it is no result. The adapter reports it as an unknown outcome (as Mercado
 * Pago's in_process): the attempt stays PENDING for reconciliation, and an approval that follows is reversed
 * if the payment was made elsewhere meanwhile.
 */
export function isUndecidedCard(resultCode: unknown): boolean {
  return resultCode === 'Received' || resultCode === 'Pending';
}

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
  // actions, PartiallyAuthorised: it never asks for them), is an error of the code table. Received and
  // Pending are not final answers: the adapter never hands them here (isUndecidedCard).
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

/**
 * The asynchronous methods Adyen serves for payorch, by our type: Adyen's `paymentMethod.type`, the only
 * currency Adyen takes for it, the shopper's country, and the UTC offset of that country's clock (Adyen writes
 * a voucher's `expiresAt` without one: it is the local time of the method's country; neither country keeps
 * daylight saving time).
 */
export const ADYEN_ASYNC_METHODS = {
  PIX: { type: 'pix', currency: 'BRL', country: 'BR', offset: '-03:00' },
  BOLETO: { type: 'boletobancario', currency: 'BRL', country: 'BR', offset: '-03:00' },
  OXXO: { type: 'oxxo', currency: 'MXN', country: 'MX', offset: '-06:00' },
} as const satisfies Partial<Record<AsyncMethodType, { type: string; currency: string; country: string; offset: string }>>;
export type AdyenAsyncMethod = keyof typeof ADYEN_ASYNC_METHODS;

/**
 * Whether an Adyen `paymentMethod` (as a notification item or an answer names it) is one of these methods:
 * pix, oxxo, boletobancario and its bank variants (boletobancario_santander, …). A card (visa, mc, …) is not.
 */
export function isAdyenAsyncType(paymentMethod: string | undefined): boolean {
  if (!paymentMethod) return false;
  return paymentMethod === 'pix' || paymentMethod === 'oxxo' || paymentMethod === 'boletobancario' || paymentMethod.startsWith('boletobancario_');
}

/** A boleto's due date, as the sandbox acquirers and the other connectors give it: three days. */
export const BOLETO_DUE_AFTER_DAYS = 3;

const payerName = (payer: AsyncPayer | undefined) => ({ firstName: payer?.firstName?.trim() ?? '', lastName: payer?.lastName?.trim() ?? '' });

/**
 * What the method needs of the payer that the payment does not name, or null (checked before the call, so
 * the merchant reads which field is missing): a boleto names the payer (shopperName), their CPF/CNPJ
 * (socialSecurityNumber) and billing address; an OXXO voucher the payer's name and e-mail. A PIX needs none.
 */
export function missingAdyenPayerData(method: AdyenAsyncMethod, payer: AsyncPayer | undefined): string | null {
  if (method === 'PIX') return null;
  const missing: string[] = [];
  const name = payerName(payer);
  if (!name.firstName || !name.lastName) missing.push('customer_payer.first_name and last_name');
  if (method === 'OXXO' && !payer?.email) missing.push('customer_payer.email');
  if (method === 'BOLETO') {
    if (!payer?.document || !/^(\d{11}|\d{14})$/.test(payer.document.number.replace(/\D/g, ''))) missing.push('customer_payer.document (the CPF or CNPJ)');
    const a = payer?.address;
    if (!a || !a.line1 || !a.city || !a.state || !a.zipCode) missing.push('customer_payer.billing_address (address_line_1, city, state, zip_code)');
  }
  return missing.length > 0 ? missing.join(', ') : null;
}

/** "Rua das Flores, 123" → Adyen's street and houseNumberOrName apart; "S/N" (sem número) when the line names none. */
export function adyenStreetOf(line: string): { street: string; houseNumberOrName: string } {
  const m = /^(.*?)[,\s]+(?:n[º°o.]?\s*)?(\d+[A-Za-z]?)\s*$/i.exec(line.trim());
  return m && m[1]!.trim() ? { street: m[1]!.trim(), houseNumberOrName: m[2]! } : { street: line.trim(), houseNumberOrName: 'S/N' };
}

/**
 * POST /payments for a PIX (`paymentMethod.type: pix`), a boleto (`boletobancario`) or an OXXO voucher
 * (`oxxo`), as Adyen's API-only integration of each documents it: the amount in minor units, our reference
 * (and, sent by the adapter, the Idempotency-Key), the shopper's country, and the payer's details only where
 * the method needs them: a boleto's shopperName, socialSecurityNumber (CPF/CNPJ digits), billingAddress and
 * (when given) shopperEmail, with its due date as deliveryDate; an OXXO voucher's shopperName and
 * shopperEmail. A PIX code's validity is the merchant account's (Adyen's `expiresAt` says it).
 */
export function asyncPaymentRequest(
  input: AsyncCharge,
  method: AdyenAsyncMethod,
  opts: { merchantAccount: string; value: number; returnUrl: string; now?: Date },
): PaymentRequest {
  const spec = ADYEN_ASYNC_METHODS[method];
  const payer = input.payer;
  const name = payerName(payer);
  const now = opts.now ?? new Date();
  const request: Record<string, unknown> = {
    merchantAccount: opts.merchantAccount,
    reference: input.reference,
    amount: { currency: input.currency, value: opts.value },
    paymentMethod: { type: spec.type },
    countryCode: spec.country,
    shopperInteraction: 'Ecommerce',
    returnUrl: opts.returnUrl,
    metadata: { payorch_payment_id: input.paymentId },
  };
  if (method !== 'PIX') {
    request.shopperName = { firstName: name.firstName.slice(0, 80), lastName: name.lastName.slice(0, 80) };
    if (payer?.email) request.shopperEmail = payer.email;
  }
  if (method === 'BOLETO') {
    const a = payer!.address!;
    request.socialSecurityNumber = payer!.document!.number.replace(/\D/g, '');
    request.billingAddress = {
      ...adyenStreetOf(a.line1),
      city: a.city!,
      postalCode: a.zipCode!.slice(0, 10),
      stateOrProvince: a.state!.slice(0, 3),
      country: a.country ?? spec.country,
    };
    // Adyen reads a boleto's due date from deliveryDate (its date, on Brasília's clock). The SDK's type is a
    // Date, which it writes as ISO 8601.
    request.deliveryDate = new Date(now.getTime() + BOLETO_DUE_AFTER_DAYS * 86_400_000);
  }
  return request as unknown as PaymentRequest;
}

/** The parts of Adyen's /payments answer an asynchronous method's start reads (the raw JSON, as Adyen sent it). */
interface AsyncAnswer {
  pspReference?: string;
  resultCode?: string;
  refusalReason?: string;
  refusalReasonCode?: string;
  action?: {
    type?: string;
    paymentMethodType?: string;
    qrCodeData?: string;
    url?: string;
    expiresAt?: string;
    reference?: string;
    alternativeReference?: string;
    downloadUrl?: string;
    instructionsUrl?: string;
  };
}

const ISSUED = { responseCode: 'SUCCEEDED', responseMessage: 'Payment request issued: waiting for the shopper', iso8583ResponseCode: '00', iso8583ResponseMessage: 'Approved' } as const;

/**
 * The raw answer as kept: the payer's name and e-mail that a voucher action echoes are the payment's
 * customer_payer already, and the merchant's name the connection's configuration (as a modification's
 * merchantAccount): neither is kept with the attempt.
 */
export function asyncRaw(raw: Record<string, unknown>): Record<string, unknown> {
  const action = raw.action as Record<string, unknown> | undefined;
  if (!action || typeof action !== 'object') return raw;
  const { shopperName: _name, shopperEmail: _email, maskedTelephoneNumber: _phone, merchantName: _merchant, ...kept } = action;
  return { ...raw, action: kept };
}

/**
 * Adyen's answer to a PIX, boleto or OXXO /payments call: `Pending` or `PresentToShopper` with the method's
 * action (`qrCode` for PIX, `voucher` for boleto and OXXO) is an issued payment (SUCCEEDED, the action for
 * the shopper); Refused / Cancelled / Error go through the code table as a card's would; anything else
 * (Authorised at once, an action we did not ask for, no deadline) is not an answer we can show.
 */
export function asyncStartOf(answer: PaymentResponse, rawBody: Record<string, unknown>, method: AdyenAsyncMethod): AsyncStart {
  const raw = asyncRaw(rawBody);
  const a = rawBody as AsyncAnswer;
  const resultCode = String(a.resultCode ?? answer.resultCode ?? '');
  if (resultCode === 'Refused' || resultCode === 'Cancelled' || resultCode === 'Error') return { result: paymentResult(answer, raw), action: null };
  const action = resultCode === 'Pending' || resultCode === 'PresentToShopper' ? shopperActionOf(a, method) : null;
  const base = { providerTransactionId: a.pspReference ?? '', merchantAdviceCode: null, merchantAdviceCodeMessage: null, authorizationCode: null, retrievalReferenceNumber: null, rawResponse: raw };
  if (!action) {
    return {
      result: { ...base, outcome: 'ERROR', responseCode: 'PROVIDER_ERROR', responseMessage: `Adyen answered the ${method} payment ${resultCode || 'without a resultCode'} without its ${ADYEN_ASYNC_METHODS[method].type} action`, iso8583ResponseCode: '96', iso8583ResponseMessage: 'System malfunction' },
      action: null,
    };
  }
  return { result: { ...base, outcome: 'SUCCEEDED', ...ISSUED }, action };
}

function shopperActionOf(a: AsyncAnswer, method: AdyenAsyncMethod): ShopperAction | null {
  const action = a.action;
  const deadline = adyenDeadline(action?.expiresAt, ADYEN_ASYNC_METHODS[method].offset);
  if (!action || !deadline) return null;
  if (method === 'PIX') {
    if (action.type !== 'qrCode' || !action.qrCodeData) return null;
    return { kind: 'QR_CODE', qrCode: action.qrCodeData, expiresAt: deadline.expiresAt, ...(action.url ? { pageUrl: action.url } : {}) };
  }
  if (action.type !== 'voucher' || !action.reference) return null;
  const page = action.downloadUrl ?? action.instructionsUrl;
  if (method === 'BOLETO') {
    // Adyen's reference is the boleto's typed line (linha digitável); its 44-digit barcode is read from it.
    const barcode = boletoBarcode(action.reference);
    return {
      kind: 'VOUCHER',
      voucherType: 'BOLETO',
      reference: action.reference,
      barcode: barcode ?? '',
      barcodeFormat: barcode ? 'ITF' : '',
      dueDate: deadline.dueDate,
      instruction: 'Pay the boleto at a bank, a lottery outlet or in your bank app before its due date.',
      expiresAt: deadline.expiresAt,
      ...(page ? { pageUrl: page } : {}),
    };
  }
  return {
    kind: 'VOUCHER',
    voucherType: 'OXXO',
    reference: action.reference,
    barcode: '',
    barcodeFormat: '',
    dueDate: deadline.dueDate,
    instruction: 'Pay in cash at any OXXO store, showing the voucher or its reference number, before its due date.',
    expiresAt: deadline.expiresAt,
    ...(page ? { pageUrl: page } : {}),
  };
}

/**
 * Adyen's `expiresAt` as an instant and a due day. With an offset (or Z) it is that instant. Without one it is
 * the method country's local time (`offset`); a local midnight without an offset is a date (Adyen writes a
 * voucher's last day as `2026-11-29T00:00:00`): payable through that day, so it ends at the next midnight there.
 */
export function adyenDeadline(expiresAt: string | undefined, offset: string): { expiresAt: string; dueDate: string } | null {
  if (!expiresAt) return null;
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?$/.exec(expiresAt.trim());
  if (!m) return null;
  const [, day, time, zone] = m;
  const at = Date.parse(zone ? expiresAt.trim() : `${day}T${time}${offset}`);
  if (!Number.isFinite(at)) return null;
  if (!zone && /^00:00(?::00(?:\.0+)?)?$/.test(time!)) {
    return { expiresAt: new Date(at + 86_400_000).toISOString(), dueDate: day! };
  }
  // The due day on the method country's clock.
  const hours = Number(offset.slice(0, 3));
  const local = new Date(at + hours * 3_600_000).toISOString().slice(0, 10);
  return { expiresAt: new Date(at).toISOString(), dueDate: local };
}

/**
 * A notification item about a PIX, boleto or OXXO payment, as our pending payment's outcome; null when the
 * item is not about one (a card's AUTHORISATION: its answer came back on the call) or says nothing final.
 *   AUTHORISATION success=true → SUCCEEDED (the shopper paid);
 *   AUTHORISATION success=false → EXPIRED when Adyen's reason says the code or voucher expired, CANCELED when
 *     it says it was cancelled (Adyen's refusal reasons "Cancelled", "Shopper Cancelled"), DECLINED otherwise;
 *   OFFER_CLOSED → EXPIRED (Adyen closes the offer when the shopper did not pay before its expiry).
 */
export function asyncOutcomeOfItem(item: { eventCode: string; success: string; paymentMethod?: string; reason?: string }): { outcome: 'SUCCEEDED' | 'DECLINED' | 'EXPIRED' | 'CANCELED'; reason: string | null } | null {
  if (!isAdyenAsyncType(item.paymentMethod)) return null;
  const reason = item.reason ? item.reason : null;
  if (item.eventCode === 'OFFER_CLOSED') return { outcome: 'EXPIRED', reason: reason ?? 'Offer closed' };
  if (item.eventCode !== 'AUTHORISATION') return null;
  if (item.success === 'true') return { outcome: 'SUCCEEDED', reason: null };
  if (reason && /expir/i.test(reason)) return { outcome: 'EXPIRED', reason };
  if (reason && /cancel/i.test(reason)) return { outcome: 'CANCELED', reason };
  return { outcome: 'DECLINED', reason };
}

/**
 * Reconciliation's view of a PIX, boleto or OXXO request whose issue's answer was lost (the lookup replays the
 * call; Adyen answers its stored first answer): Pending or PresentToShopper is a request nobody was shown,
 * never paid — no approval (ERROR PROVIDER_ERROR), as Stripe's and Mercado Pago's lookups answer a waiting one.
 * Null for any other answer (a card's, or a refusal: the code table reads those).
 */
export function asyncLookupResult(rawBody: Record<string, unknown>): ProviderResult | null {
  const a = rawBody as AsyncAnswer;
  const type = a.action?.paymentMethodType;
  if ((a.resultCode !== 'Pending' && a.resultCode !== 'PresentToShopper') || !a.action) return null;
  return {
    outcome: 'ERROR',
    providerTransactionId: a.pspReference ?? '',
    responseCode: 'PROVIDER_ERROR',
    responseMessage: `Adyen's ${type ?? 'asynchronous'} payment request is ${a.resultCode}: never shown to the shopper, never paid`,
    iso8583ResponseCode: '96',
    iso8583ResponseMessage: 'System malfunction',
    merchantAdviceCode: null,
    merchantAdviceCodeMessage: null,
    authorizationCode: null,
    retrievalReferenceNumber: null,
    rawResponse: asyncRaw(rawBody),
  };
}
