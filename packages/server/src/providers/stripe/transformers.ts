/**
 * Our calls → Stripe request parameters, and Stripe's objects → ProviderResult. No I/O here (adapter.ts
 * calls Stripe); everything Stripe-shaped that the flow does not need stays in this file.
 */
import { createHash } from 'node:crypto';
import type Stripe from 'stripe';
import type { CodeMapping } from '../connector.js';
import type { Charge, ProviderCard, ProviderResult } from '../provider.js';
import { codeRow as codeRowOf } from './codes.js';

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
 * zero-decimal list, and the three-decimal currencies. ISO's zero-decimal ISK, and COP (0 in money.ts),
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
    const preferred = EVIDENCE_FIELD[f.category] ?? 'uncategorized_file';
    const field = fields[preferred] === undefined ? preferred : SPARE_FIELDS.find((s) => fields[s] === undefined);
    if (field === undefined) throw new Error('stripe: more evidence documents than Stripe has evidence fields');
    fields[field] = f.fileId;
  }
  fields.uncategorized_text = files.map((f) => `${f.fileId}: ${f.category} (${f.fileName})`).join('\n').slice(0, 20_000);
  return fields;
}
