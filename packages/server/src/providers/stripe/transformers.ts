/**
 * Our calls → Stripe request parameters, and Stripe's objects → ProviderResult. No I/O here (adapter.ts
 * calls Stripe); everything Stripe-shaped that the flow does not need stays in this file.
 */
import { createHash } from 'node:crypto';
import type Stripe from 'stripe';
import type { CodeMapping } from '../connector.js';
import type { AsyncCharge, AsyncMethodType, AsyncPayer, AsyncStart, Charge, ProviderCard, ProviderResult, ShopperAction } from '../provider.js';
import { boletoBarcode } from '../boleto.js';
import { codeRow as codeRowOf } from './codes.js';
import { ownEntry } from '../../platform/own-entry.js';

export { boletoBarcode };

/** Metadata keys we write on Stripe's objects: how lookup (search) and notifications find our operations. */
export const META = {
  /** A charge's (and a refund's own) reference. */
  reference: 'payorch_reference',
  paymentId: 'payorch_payment_id',
  /** On the placeholder intent that closes a reference lookup did not find (adapter.ts closeReference). */
  closedReference: 'payorch_closed_reference',
} as const;

export type FollowUpKind = 'capture' | 'void' | 'refund';

/**
 * The intent's metadata key marking one follow-up, named after its reference (a hash: Stripe keys hold at
 * most 40 characters and no brackets), its value the follow-up's kind. One key per follow-up, so marks of
 * follow-ups in flight together never overwrite each other (Stripe keeps at most 50 keys per object).
 */
export function operationKey(reference: string): string {
  return `payorch_op_${createHash('sha256').update(reference).digest('hex').slice(0, 24)}`;
}

/**
 * Stripe's exponent per currency, where it differs from 2 (https://docs.stripe.com/currencies): its
 * zero-decimal list, and the three-decimal currencies. ISO's zero-decimal ISK, and COP (0 in minor-units.ts),
 * are two-decimal at Stripe; MGA is zero-decimal at Stripe though ISO gives it 2.
 */
const STRIPE_EXPONENT: Readonly<Record<string, number>> = {
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, JPY: 0, KMF: 0, KRW: 0, MGA: 0, PYG: 0, RWF: 0, UGX: 0, VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, JOD: 3, KWD: 3, OMR: 3, TND: 3,
};

export function stripeExponent(currency: string): number {
  return STRIPE_EXPONENT[currency.toUpperCase()] ?? 2;
}

/** Our decimal string in major units → Stripe's integer in its minor units; undefined when not representable (too many decimals). */
export function toMinor(amount: string, currency: string): number | undefined {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(amount);
  if (!m) return undefined;
  const exponent = stripeExponent(currency);
  const decimals = (m[2] ?? '').replace(/0+$/, '');
  if (decimals.length > exponent) return undefined;
  const value = Number(`${m[1]}${decimals.padEnd(exponent, '0')}`);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** Stripe's integer in minor units → our decimal string in major units, with at most the currency's ISO decimals. */
export function fromMinor(value: number, currency: string): string {
  const exponent = stripeExponent(currency);
  const digits = String(Math.abs(Math.trunc(value))).padStart(exponent + 1, '0');
  const whole = exponent === 0 ? digits : digits.slice(0, -exponent);
  const fraction = exponent === 0 ? '' : digits.slice(-exponent).replace(/0+$/, '');
  const text = fraction === '' ? whole : `${whole}.${fraction}`;
  // ISO may have fewer decimals than Stripe (ISK): Stripe's amounts in them end in zeros, dropped here.
  return text.replace(/^0+(?=\d)/, '');
}

/**
 * A PaymentIntent created and confirmed in one call with the card itself (raw card data: payorch holds
 * the card in its vault, which is the PCI-certified integration Stripe requires for it). Manual capture
 * for an authorization. Our reference and payment id go in metadata (lookup searches them).
 */
export function paymentIntentParams(input: Charge, capture: boolean, amount: number): Stripe.PaymentIntentCreateParams {
  const card = cardFields(input.card);
  const suffix = input.softDescriptor ? statementSuffix(input.softDescriptor) : null;
  return {
    amount,
    currency: input.currency.toLowerCase(),
    confirm: true,
    capture_method: capture ? 'automatic' : 'manual',
    // Only the card given below is tried; never a redirect (so no return_url): a 3-D Secure challenge comes back as requires_action.
    automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
    // Stripe's typings leave raw card fields out (most integrations must not send them); the API takes them.
    payment_method_data: {
      type: 'card',
      card,
      ...(input.card.holderName ? { billing_details: { name: input.card.holderName } } : {}),
    } as unknown as Stripe.PaymentIntentCreateParams.PaymentMethodData,
    description: input.description.slice(0, 1000),
    ...(suffix ? { statement_descriptor_suffix: suffix } : {}),
    metadata: { [META.reference]: input.reference, ...(input.paymentId ? { [META.paymentId]: input.paymentId } : {}) },
    expand: ['latest_charge'],
  };
}

/** A SetupIntent confirmed with the card: Stripe's zero-amount verification (nothing charged, no mandate kept by us). */
export function setupIntentParams(card: ProviderCard, reference: string): Stripe.SetupIntentCreateParams {
  return {
    confirm: true,
    usage: 'off_session',
    automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
    payment_method_data: {
      type: 'card',
      card: cardFields(card),
      ...(card.holderName ? { billing_details: { name: card.holderName } } : {}),
    } as unknown as Stripe.SetupIntentCreateParams.PaymentMethodData,
    metadata: { [META.reference]: reference },
  };
}

export function setupIntentResult(si: Stripe.SetupIntent): ProviderResult {
  const raw = rawOf(si);
  if (si.status === 'succeeded') return { outcome: 'SUCCEEDED', providerTransactionId: si.id, ...APPROVED, ...base, rawResponse: raw };
  const row = si.last_setup_error ? codeRowOf(si.last_setup_error) : si.status === 'requires_action' ? codeRowOf({ decline_code: 'authentication_required' }) : null;
  return { ...(row ? rowResult(row) : refused('ERROR', 'PROVIDER_ERROR', `Stripe left the verification ${si.status}`)), providerTransactionId: si.id, rawResponse: raw };
}

function cardFields(card: ProviderCard) {
  return {
    number: card.number,
    exp_month: card.expirationMonth,
    exp_year: 2000 + card.expirationYear,
    ...(card.securityCode ? { cvc: card.securityCode } : {}),
  };
}

/** Stripe's suffix: at most 22 characters, at least one letter, none of < > \ ' " *. */
function statementSuffix(text: string): string | null {
  const cleaned = text.replace(/[<>\\'"*]/g, '').trim().slice(0, 22);
  return /[A-Za-z]/.test(cleaned) ? cleaned : null;
}

/**
 * An object of Stripe's as the raw answer we keep, without an intent's `client_secret` (it lets a browser
 * confirm the intent: not ours to store), also when the intent is nested in an error.
 */
export function rawOf(object: object): Record<string, unknown> {
  const { client_secret: _secret, ...rest } = object as Record<string, unknown>;
  for (const nested of ['payment_intent', 'setup_intent']) {
    const inner = rest[nested];
    if (typeof inner === 'object' && inner !== null) rest[nested] = rawOf(inner);
  }
  return rest;
}

const base = {
  merchantAdviceCodeMessage: null,
  authorizationCode: null,
  retrievalReferenceNumber: null,
} as const;

const APPROVED = { responseCode: 'SUCCEEDED', responseMessage: 'Approved', iso8583ResponseCode: '00', iso8583ResponseMessage: 'Approved', merchantAdviceCode: null } as const;

/** A PaymentIntent after a charge: approved when it succeeded or waits for capture; otherwise what its last error says. */
export function paymentIntentResult(pi: Stripe.PaymentIntent): ProviderResult {
  if (pi.status === 'succeeded' || pi.status === 'requires_capture') {
    const charge = typeof pi.latest_charge === 'object' && pi.latest_charge !== null ? pi.latest_charge : null;
    const card = charge?.payment_method_details?.card;
    return {
      outcome: 'SUCCEEDED',
      providerTransactionId: pi.id,
      ...APPROVED,
      ...base,
      authorizationCode: card?.authorization_code ?? null,
      ...(card
        ? {
            cardInfo: {
              issuerName: null,
              issuerCode: null,
              countryCode: card.country ?? null,
              category: null,
              type: card.funding ? card.funding.toUpperCase() : null,
            },
          }
        : {}),
      rawResponse: rawOf(pi),
    };
  }
  // A PIX, boleto or OXXO intent still waiting (found by reconciliation after its issue's answer was lost):
  // a request nobody was shown, never an approval; the same for one whose attempt failed or expired.
  const asyncType = pi.payment_method_types?.find((t) => STRIPE_ASYNC_TYPES.has(t));
  if (asyncType) {
    return { ...refused('ERROR', 'PROVIDER_ERROR', `Stripe's ${asyncType} payment request is ${pi.status}: never shown to the shopper, never paid`), providerTransactionId: pi.id, rawResponse: rawOf(pi) };
  }
  // Not approved and no card error thrown: a decline kept on the intent, a 3-D Secure challenge we cannot
  // answer (requires_action), or a state we do not expect (processing, canceled).
  const error = pi.last_payment_error;
  const row = error ? rowResult(codeRowOf(error)) : pi.status === 'requires_action' ? rowResult(codeRowOf({ decline_code: 'authentication_required' })) : null;
  return {
    ...(row ?? refused('ERROR', 'PROVIDER_ERROR', `Stripe left the payment ${pi.status}`)),
    providerTransactionId: pi.id,
    rawResponse: rawOf(pi),
  };
}

/** A row of the code table as a result (no transaction id yet: the caller sets it). */
export function rowResult(row: CodeMapping): Omit<ProviderResult, 'providerTransactionId' | 'rawResponse'> {
  return {
    outcome: row.outcome,
    responseCode: row.responseCode,
    responseMessage: row.message,
    iso8583ResponseCode: row.iso8583ResponseCode,
    iso8583ResponseMessage: row.message,
    merchantAdviceCode: row.merchantAdviceCode,
    ...base,
  };
}

/** A call Stripe refused that is not a card decline (unknown object, wrong state, bad credentials). */
export function refused(outcome: 'DECLINED' | 'ERROR', responseCode: string, message: string): Omit<ProviderResult, 'providerTransactionId' | 'rawResponse'> {
  return {
    outcome,
    responseCode,
    responseMessage: message,
    iso8583ResponseCode: outcome === 'ERROR' ? '96' : '12',
    iso8583ResponseMessage: outcome === 'ERROR' ? 'System malfunction' : 'Invalid transaction',
    merchantAdviceCode: null,
    ...base,
  };
}

/** A capture or void: approved when the intent reached the state asked for. */
export function followUpResult(pi: Stripe.PaymentIntent, wanted: 'succeeded' | 'canceled', declinedCode: string): ProviderResult {
  if (pi.status === wanted) return { outcome: 'SUCCEEDED', providerTransactionId: pi.id, ...APPROVED, ...base, rawResponse: rawOf(pi) };
  return { ...refused('DECLINED', declinedCode, `Stripe left the payment ${pi.status}`), providerTransactionId: pi.id, rawResponse: rawOf(pi) };
}

/**
 * A refund: `succeeded`, and `pending` too (Stripe refunds cards asynchronously; `refund.updated` /
 * `refund.failed` notifications confirm or undo it, FOLLOW_UP_SETTLED). `failed` / `canceled`: declined.
 */
export function refundResult(refund: Stripe.Refund): ProviderResult {
  const raw = rawOf(refund);
  if (refund.status === 'succeeded' || refund.status === 'pending' || refund.status === 'requires_action') {
    return { outcome: 'SUCCEEDED', providerTransactionId: refund.id, ...APPROVED, ...base, rawResponse: raw };
  }
  return { ...refused('DECLINED', 'REFUND_DECLINED', `Stripe's refund is ${refund.status ?? 'unknown'}${refund.failure_reason ? `: ${refund.failure_reason}` : ''}`), providerTransactionId: refund.id, rawResponse: raw };
}

/** Stripe's dispute reason → the chargeback reasons of our flow (providers/sandbox/chargeback-reasons.ts). */
export function chargebackReason(reason: string): string {
  switch (reason) {
    case 'fraudulent':
    case 'unrecognized':
      return 'FRAUDULENT';
    case 'duplicate':
      return 'DUPLICATE';
    case 'credit_not_processed':
      return 'CREDIT_NOT_PROCESSED';
    case 'product_not_received':
      return 'PRODUCT_NOT_RECEIVED';
    case 'subscription_canceled':
    case 'customer_initiated':
      return 'REQUESTED_BY_CUSTOMER';
    default:
      return 'OTHER';
  }
}

/** Our evidence categories → Stripe's evidence file fields (each holds one file). */
export const EVIDENCE_FIELD: Readonly<Record<string, string>> = {
  CANCEL_POLICY: 'cancellation_policy',
  CUSTOMER_INTERACTION: 'customer_communication',
  PROOF_OF_AUTHENTICITY: 'customer_signature',
  PROOF_OF_DELIVERY: 'shipping_documentation',
  PROOF_OF_SERVICE: 'service_documentation',
  SERVICE_AGREEMENT: 'service_documentation',
  RECEIPT: 'receipt',
  REFUND_POLICY: 'refund_policy',
  TERMS_AND_CONDITIONS: 'refund_policy',
  PAYMENT_DETAIL: 'uncategorized_file',
  OTHERS: 'uncategorized_file',
};
/** Where a document goes when its field is taken: the remaining file fields, in this order. */
const SPARE_FIELDS = ['uncategorized_file', 'duplicate_charge_documentation', 'receipt', 'customer_communication', 'service_documentation', 'shipping_documentation', 'refund_policy', 'cancellation_policy', 'customer_signature'];

/** The dispute's evidence: one file per field (its category's, else a spare one), and a text naming every file. */
export function evidenceFields(files: readonly { fileId: string; category: string; fileName: string }[]): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const f of files) {
    const preferred = ownEntry(EVIDENCE_FIELD, f.category) ?? 'uncategorized_file';
    const field = fields[preferred] === undefined ? preferred : SPARE_FIELDS.find((s) => fields[s] === undefined);
    if (field === undefined) throw new Error('stripe: more evidence documents than Stripe has evidence fields');
    fields[field] = f.fileId;
  }
  fields.uncategorized_text = files.map((f) => `${f.fileId}: ${f.category} (${f.fileName})`).join('\n').slice(0, 20_000);
  return fields;
}

/**
 * The asynchronous methods Stripe serves for payorch, by our type: Stripe's payment method type, the only
 * currency Stripe takes for it, and the country whose clock its due date is read in.
 */
export const STRIPE_ASYNC_METHODS = {
  PIX: { type: 'pix', currency: 'BRL', timeZone: 'America/Sao_Paulo' },
  BOLETO: { type: 'boleto', currency: 'BRL', timeZone: 'America/Sao_Paulo' },
  OXXO: { type: 'oxxo', currency: 'MXN', timeZone: 'America/Mexico_City' },
} as const satisfies Partial<Record<AsyncMethodType, { type: string; currency: string; timeZone: string }>>;
export type StripeAsyncMethod = keyof typeof STRIPE_ASYNC_METHODS;
/** Stripe's payment method types of those methods (notifications.ts: which PaymentIntents end a pending payment). */
export const STRIPE_ASYNC_TYPES: ReadonlySet<string> = new Set(Object.values(STRIPE_ASYNC_METHODS).map((m) => m.type));

/** How long the shopper has, as the sandbox acquirers give it: a PIX code 30 minutes, a voucher three days. */
export const PIX_EXPIRES_AFTER_SECONDS = 1_800;
export const VOUCHER_EXPIRES_AFTER_DAYS = 3;

/**
 * What the method needs of the payer that the payment does not name, or null: a boleto names the payer,
 * their CPF/CNPJ and a billing address; an OXXO voucher the payer's name and e-mail (Stripe refuses the
 * PaymentIntent without them). Checked before the call, so the merchant reads which field is missing.
 */
export function missingPayerData(method: StripeAsyncMethod, payer: AsyncPayer | undefined): string | null {
  if (method === 'PIX') return null;
  const missing: string[] = [];
  if (!payerName(payer)) missing.push('customer_payer.first_name / last_name');
  if (!payer?.email) missing.push('customer_payer.email');
  if (method === 'BOLETO') {
    if (!payer?.document) missing.push('customer_payer.document (the CPF or CNPJ)');
    const a = payer?.address;
    if (!a || !a.city || !a.state || !a.zipCode) missing.push('customer_payer.billing_address (address_line_1, city, state, zip_code)');
  }
  return missing.length > 0 ? missing.join(', ') : null;
}

const payerName = (payer: AsyncPayer | undefined) => [payer?.firstName, payer?.lastName].filter(Boolean).join(' ').trim();

/**
 * A PaymentIntent for an asynchronous method, created and confirmed in one call with
 * `payment_method_data[type]` (pix, boleto, oxxo) and only that type allowed (`allowed_payment_method_types`): Stripe answers
 * `requires_action` with the shopper's action in `next_action`. Our reference and payment id go in
 * metadata, as for a card. The payer's details go only where the method requires them.
 */
export function asyncIntentParams(input: AsyncCharge, method: StripeAsyncMethod, amount: number): Stripe.PaymentIntentCreateParams {
  const type = STRIPE_ASYNC_METHODS[method].type;
  const payer = input.payer;
  const billing =
    method === 'PIX'
      ? undefined
      : {
          name: payerName(payer),
          email: payer!.email!,
          ...(method === 'BOLETO' && payer?.address
            ? {
                address: {
                  line1: payer.address.line1,
                  ...(payer.address.line2 ? { line2: payer.address.line2 } : {}),
                  city: payer.address.city!,
                  state: payer.address.state!,
                  postal_code: payer.address.zipCode!,
                  country: payer.address.country ?? 'BR',
                },
              }
            : {}),
        };
  const options: Stripe.PaymentIntentCreateParams.PaymentMethodOptions =
    method === 'PIX'
      ? { pix: { expires_after_seconds: PIX_EXPIRES_AFTER_SECONDS } }
      : method === 'BOLETO'
        ? { boleto: { expires_after_days: VOUCHER_EXPIRES_AFTER_DAYS } }
        : { oxxo: { expires_after_days: VOUCHER_EXPIRES_AFTER_DAYS } };
  return {
    amount,
    currency: input.currency.toLowerCase(),
    confirm: true,
    allowed_payment_method_types: [type],
    payment_method_data: {
      type,
      ...(billing ? { billing_details: billing } : {}),
      ...(method === 'BOLETO' ? { boleto: { tax_id: payer!.document!.number.replace(/\D/g, '') } } : {}),
    } as Stripe.PaymentIntentCreateParams.PaymentMethodData,
    payment_method_options: options,
    description: input.description.slice(0, 1000),
    metadata: { [META.reference]: input.reference, [META.paymentId]: input.paymentId },
  };
}

/**
 * Stripe's answer to an asynchronous PaymentIntent: `requires_action` with the method's display action is
 * an issued payment (SUCCEEDED, the action for the shopper); anything else is what paymentIntentResult
 * makes of it (a refusal, or a state we do not expect).
 */
export function asyncStartOf(pi: Stripe.PaymentIntent, method: StripeAsyncMethod): AsyncStart {
  const action = pi.status === 'requires_action' ? shopperActionOf(pi, method) : null;
  if (!action) {
    const result = paymentIntentResult(pi);
    // `requires_action` without the display we asked for (a 3-D Secure-like step): not an action we can show.
    return { result: result.outcome === 'SUCCEEDED' ? { ...result, ...refused('ERROR', 'PROVIDER_ERROR', `Stripe left the ${method} payment ${pi.status} without its ${STRIPE_ASYNC_METHODS[method].type} details`) } : result, action: null };
  }
  return {
    result: { outcome: 'SUCCEEDED', providerTransactionId: pi.id, ...ISSUED, ...base, rawResponse: rawOf(pi) },
    action,
  };
}

const ISSUED = { responseCode: 'SUCCEEDED', responseMessage: 'Payment request issued: waiting for the shopper', iso8583ResponseCode: '00', iso8583ResponseMessage: 'Approved', merchantAdviceCode: null } as const;

function shopperActionOf(pi: Stripe.PaymentIntent, method: StripeAsyncMethod): ShopperAction | null {
  const next = pi.next_action;
  const zone = STRIPE_ASYNC_METHODS[method].timeZone;
  switch (method) {
    case 'PIX': {
      const pix = next?.pix_display_qr_code;
      if (!pix?.data || typeof pix.expires_at !== 'number') return null;
      return { kind: 'QR_CODE', qrCode: pix.data, expiresAt: isoOf(pix.expires_at), ...(pix.hosted_instructions_url ? { pageUrl: pix.hosted_instructions_url } : {}) };
    }
    case 'BOLETO': {
      const boleto = next?.boleto_display_details;
      if (!boleto?.number || typeof boleto.expires_at !== 'number') return null;
      return {
        kind: 'VOUCHER',
        voucherType: 'BOLETO',
        reference: boleto.number,
        barcode: boletoBarcode(boleto.number) ?? '',
        barcodeFormat: boletoBarcode(boleto.number) ? 'ITF' : '',
        dueDate: dateIn(boleto.expires_at, zone),
        instruction: 'Pay the boleto at a bank, a lottery outlet or in your bank app before its due date.',
        expiresAt: isoOf(boleto.expires_at),
        ...(boleto.hosted_voucher_url ? { pageUrl: boleto.hosted_voucher_url } : {}),
      };
    }
    case 'OXXO': {
      const oxxo = next?.oxxo_display_details;
      if (!oxxo?.number || typeof oxxo.expires_after !== 'number') return null;
      return {
        kind: 'VOUCHER',
        voucherType: 'OXXO',
        reference: oxxo.number,
        barcode: '',
        barcodeFormat: '',
        dueDate: dateIn(oxxo.expires_after, zone),
        instruction: 'Pay in cash at any OXXO store, showing the voucher or its reference number, before its due date.',
        expiresAt: isoOf(oxxo.expires_after),
        ...(oxxo.hosted_voucher_url ? { pageUrl: oxxo.hosted_voucher_url } : {}),
      };
    }
  }
}

const isoOf = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();

/** The calendar day (YYYY-MM-DD) of an instant on the clock of `timeZone`. */
function dateIn(unixSeconds: number, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(unixSeconds * 1000));
}

/**
 * A PaymentIntent of an asynchronous method that ended at Stripe, as our pending payment's outcome, from the
 * webhook event that reports it; null when the event is not about one (a card's intent: its own answer was
 * final) or says nothing final.
 *   payment_intent.succeeded → SUCCEEDED (the shopper paid);
 *   payment_intent.payment_failed → EXPIRED when Stripe says the attempt expired (the code or voucher was
 *     not paid in time), DECLINED otherwise;
 *   payment_intent.canceled → EXPIRED when Stripe cancelled it for its deadline, CANCELED otherwise.
 */
export function asyncOutcomeOf(type: string, pi: Stripe.PaymentIntent): { outcome: 'SUCCEEDED' | 'DECLINED' | 'EXPIRED' | 'CANCELED'; reason: string | null } | null {
  if (!pi.payment_method_types?.some((t) => STRIPE_ASYNC_TYPES.has(t))) return null;
  switch (type) {
    case 'payment_intent.succeeded':
      return { outcome: 'SUCCEEDED', reason: null };
    case 'payment_intent.payment_failed': {
      const error = pi.last_payment_error;
      const expired = error?.code === 'payment_intent_payment_attempt_expired';
      return { outcome: expired ? 'EXPIRED' : 'DECLINED', reason: error?.message ?? error?.code ?? null };
    }
    case 'payment_intent.canceled': {
      const reason = pi.cancellation_reason ?? null;
      return { outcome: reason === 'expired' ? 'EXPIRED' : 'CANCELED', reason };
    }
    default:
      return null;
  }
}
