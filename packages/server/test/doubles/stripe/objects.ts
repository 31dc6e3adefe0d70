/**
 * The double's ledger records and Stripe's API objects made from them, with the top-level fields Stripe's
 * own objects have (test/connector-stripe-units.test.ts compares them with Stripe's fixtures3.json when
 * present). Values are the double's own; fields the double does not model are null / empty as Stripe
 * sends them when unused.
 */

export interface CardRecord {
  last4: string;
  brand: string;
  expMonth: number;
  expYear: number;
  funding: string;
  country: string;
}

export interface IntentRecord {
  id: string;
  owner: string;
  amount: number;
  currency: string;
  captureMethod: 'automatic' | 'manual';
  status: 'requires_payment_method' | 'requires_action' | 'requires_capture' | 'succeeded' | 'canceled';
  amountCapturable: number;
  amountReceived: number;
  description: string | null;
  statementDescriptorSuffix: string | null;
  metadata: Record<string, string>;
  created: number;
  /** The double's own clock, for its search lag. */
  createdMs: number;
  canceledAt: number | null;
  cancellationReason: string | null;
  chargeId: string;
  card: CardRecord;
  lastError: DeclineError | AsyncPaymentError | null;
  /** The payment method type: a card, or an asynchronous method the shopper completes later. */
  method: 'card' | AsyncIntentType;
  /** `requires_action`'s next_action (PIX code, boleto or OXXO voucher), as Stripe shows it. */
  nextAction: Record<string, unknown> | null;
  /** payment_method_options as the intent was created with them (an asynchronous method's deadline). */
  methodOptions: Record<string, unknown> | null;
}

export type AsyncIntentType = 'pix' | 'boleto' | 'oxxo';

/** An asynchronous attempt that failed (not a card decline): Stripe's `last_payment_error` then. */
export interface AsyncPaymentError {
  type: 'invalid_request_error';
  code: string;
  message: string;
}

export interface ChargeRecord {
  id: string;
  intentId: string;
  status: 'succeeded' | 'failed';
  authorizationCode: string | null;
  failureCode: string | null;
  failureMessage: string | null;
  amountCaptured: number;
  amountRefunded: number;
  captured: boolean;
  disputed: boolean;
}

export interface RefundRecord {
  id: string;
  intentId: string;
  chargeId: string;
  amount: number;
  currency: string;
  status: 'pending' | 'succeeded' | 'failed' | 'canceled';
  failureReason: string | null;
  metadata: Record<string, string>;
  created: number;
}

export interface DisputeRecord {
  id: string;
  intentId: string;
  chargeId: string;
  amount: number;
  currency: string;
  reason: string;
  networkReasonCode: string;
  status: 'warning_needs_response' | 'needs_response' | 'under_review' | 'won' | 'lost';
  evidence: Record<string, string | null>;
  submissionCount: number;
  metadata: Record<string, string>;
  created: number;
}

export interface FileRecord {
  id: string;
  owner: string;
  purpose: string;
  filename: string;
  size: number;
  type: string;
  sha256: string;
  created: number;
}

export interface DeclineError {
  type: 'card_error';
  code: string;
  decline_code?: string;
  message: string;
}

const EVIDENCE_FIELDS = [
  'access_activity_log', 'billing_address', 'cancellation_policy', 'cancellation_policy_disclosure', 'cancellation_rebuttal',
  'customer_communication', 'customer_email_address', 'customer_name', 'customer_purchase_ip', 'customer_signature',
  'duplicate_charge_documentation', 'duplicate_charge_explanation', 'duplicate_charge_id', 'product_description', 'receipt',
  'refund_policy', 'refund_policy_disclosure', 'refund_refusal_explanation', 'service_date', 'service_documentation',
  'shipping_address', 'shipping_carrier', 'shipping_date', 'shipping_documentation', 'shipping_tracking_number',
  'uncategorized_file', 'uncategorized_text',
] as const;
export const EVIDENCE_FILE_FIELDS = new Set([
  'cancellation_policy', 'customer_communication', 'customer_signature', 'duplicate_charge_documentation', 'receipt',
  'refund_policy', 'service_documentation', 'shipping_documentation', 'uncategorized_file',
]);
export const EVIDENCE_FIELD_NAMES: ReadonlySet<string> = new Set(EVIDENCE_FIELDS);

export function emptyEvidence(): Record<string, string | null> {
  return Object.fromEntries(EVIDENCE_FIELDS.map((f) => [f, null]));
}

export interface SetupRecord {
  id: string;
  owner: string;
  status: 'succeeded' | 'requires_payment_method';
  card: CardRecord;
  metadata: Record<string, string>;
  lastError: DeclineError | null;
  created: number;
}

export interface Ledger {
  intents: Map<string, IntentRecord>;
  setups: Map<string, SetupRecord>;
  charges: Map<string, ChargeRecord>;
  refunds: Map<string, RefundRecord>;
  disputes: Map<string, DisputeRecord>;
  files: Map<string, FileRecord>;
}

export function paymentIntentObject(pi: IntentRecord, ledger: Ledger, expandCharge: boolean): Record<string, unknown> {
  const charge = ledger.charges.get(pi.chargeId);
  return {
    id: pi.id,
    object: 'payment_intent',
    amount: pi.amount,
    amount_capturable: pi.amountCapturable,
    amount_details: { tip: {} },
    amount_received: pi.amountReceived,
    application: null,
    application_fee_amount: null,
    automatic_payment_methods: pi.method === 'card' ? { allow_redirects: 'never', enabled: true } : null,
    canceled_at: pi.canceledAt,
    cancellation_reason: pi.cancellationReason,
    capture_method: pi.captureMethod,
    client_secret: `${pi.id}_secret_double`,
    confirmation_method: 'automatic',
    created: pi.created,
    currency: pi.currency,
    customer: null,
    customer_account: null,
    description: pi.description,
    excluded_payment_method_types: null,
    last_payment_error: pi.lastError ? { ...pi.lastError, payment_method: paymentMethodObject(pi) } : null,
    latest_charge: expandCharge && charge ? chargeObject(charge, pi, ledger) : pi.chargeId,
    livemode: false,
    managed_payments: null,
    metadata: { ...pi.metadata },
    next_action: pi.status === 'requires_action' ? pi.nextAction : null,
    on_behalf_of: null,
    payment_method: pi.lastError && pi.method === 'card' ? null : `pm_${pi.id.slice(3)}`,
    payment_method_configuration_details: null,
    payment_method_options: pi.method === 'card' ? { card: { request_three_d_secure: 'automatic' } } : { [pi.method]: pi.methodOptions ?? {} },
    payment_method_types: [pi.method],
    processing: null,
    receipt_email: null,
    review: null,
    setup_future_usage: null,
    shipping: null,
    source: null,
    statement_descriptor: null,
    statement_descriptor_suffix: pi.statementDescriptorSuffix,
    status: pi.status,
    transfer_data: null,
    transfer_group: null,
  };
}

function paymentMethodObject(pi: IntentRecord): Record<string, unknown> {
  if (pi.method !== 'card') {
    return { id: `pm_${pi.id.slice(3)}`, object: 'payment_method', type: pi.method, [pi.method]: pi.method === 'boleto' ? { tax_id: '***' } : {}, created: pi.created, livemode: false, metadata: {} };
  }
  return {
    id: `pm_${pi.id.slice(3)}`,
    object: 'payment_method',
    type: 'card',
    card: { brand: pi.card.brand, country: pi.card.country, exp_month: pi.card.expMonth, exp_year: pi.card.expYear, funding: pi.card.funding, last4: pi.card.last4 },
    created: pi.created,
    livemode: false,
    metadata: {},
  };
}

export function chargeObject(c: ChargeRecord, pi: IntentRecord, ledger: Ledger): Record<string, unknown> {
  const refunds = [...ledger.refunds.values()].filter((r) => r.chargeId === c.id).map(refundObject);
  return {
    id: c.id,
    object: 'charge',
    amount: pi.amount,
    amount_captured: c.amountCaptured,
    amount_refunded: c.amountRefunded,
    application: null,
    application_fee: null,
    application_fee_amount: null,
    balance_transaction: c.captured ? `txn_${c.id.slice(3)}` : null,
    billing_details: { address: null, email: null, name: null, phone: null, tax_id: null },
    calculated_statement_descriptor: pi.statementDescriptorSuffix ? `PAYORCH* ${pi.statementDescriptorSuffix}`.slice(0, 22) : 'PAYORCH',
    captured: c.captured,
    created: pi.created,
    currency: pi.currency,
    customer: null,
    description: pi.description,
    disputed: c.disputed,
    failure_balance_transaction: null,
    failure_code: c.failureCode,
    failure_message: c.failureMessage,
    fraud_details: {},
    livemode: false,
    metadata: { ...pi.metadata },
    on_behalf_of: null,
    outcome: {
      advice_code: null,
      network_advice_code: null,
      network_decline_code: null,
      network_status: c.status === 'succeeded' ? 'approved_by_network' : 'declined_by_network',
      reason: c.failureCode,
      risk_level: 'normal',
      seller_message: c.status === 'succeeded' ? 'Payment complete.' : 'The bank declined the payment.',
      type: c.status === 'succeeded' ? 'authorized' : 'issuer_declined',
    },
    paid: c.status === 'succeeded',
    payment_intent: pi.id,
    payment_method: `pm_${pi.id.slice(3)}`,
    payment_method_details: pi.method !== 'card' ? asyncMethodDetails(pi, c) : {
      type: 'card',
      card: {
        authorization_code: c.authorizationCode,
        brand: pi.card.brand,
        checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: 'pass' },
        country: pi.card.country,
        exp_month: pi.card.expMonth,
        exp_year: pi.card.expYear,
        funding: pi.card.funding,
        last4: pi.card.last4,
        network: pi.card.brand,
        network_transaction_id: `${c.id.slice(3, 18)}`,
      },
    },
    receipt_email: null,
    receipt_number: null,
    receipt_url: null,
    refunded: c.amountRefunded > 0 && c.amountRefunded === c.amountCaptured,
    refunds: { object: 'list', data: refunds, has_more: false, url: `/v1/charges/${c.id}/refunds` },
    review: null,
    shipping: null,
    source: null,
    source_transfer: null,
    statement_descriptor: null,
    statement_descriptor_suffix: pi.statementDescriptorSuffix,
    status: c.status,
    transfer_data: null,
    transfer_group: null,
  };
}

/** A paid PIX, boleto or OXXO charge's payment_method_details, in Stripe's shapes. */
function asyncMethodDetails(pi: IntentRecord, c: ChargeRecord): Record<string, unknown> {
  switch (pi.method) {
    case 'pix':
      return { type: 'pix', pix: { bank_transaction_id: `E${c.id.slice(3, 30)}` } };
    case 'boleto':
      return { type: 'boleto', boleto: { tax_id: '***' } };
    default:
      return { type: 'oxxo', oxxo: { number: String((pi.nextAction?.oxxo_display_details as { number?: string } | undefined)?.number ?? '') } };
  }
}

export function refundObject(r: RefundRecord): Record<string, unknown> {
  return {
    id: r.id,
    object: 'refund',
    amount: r.amount,
    balance_transaction: r.status === 'succeeded' ? `txn_${r.id.slice(3)}` : null,
    charge: r.chargeId,
    created: r.created,
    currency: r.currency,
    customer: null,
    customer_account: null,
    destination_details: { type: 'card', card: { type: 'refund' } },
    failure_reason: r.failureReason,
    metadata: { ...r.metadata },
    payment_intent: r.intentId,
    payment_method: null,
    reason: null,
    receipt_number: null,
    source_transfer_reversal: null,
    status: r.status,
    transfer_reversal: null,
  };
}

export function disputeObject(d: DisputeRecord): Record<string, unknown> {
  return {
    id: d.id,
    object: 'dispute',
    amount: d.amount,
    balance_transactions: [],
    charge: d.chargeId,
    created: d.created,
    currency: d.currency,
    enhanced_eligibility_types: [],
    evidence: { ...d.evidence, enhanced_evidence: {} },
    evidence_details: { due_by: d.created + 7 * 86_400, enhanced_eligibility: {}, has_evidence: d.submissionCount > 0, past_due: false, submission_count: d.submissionCount },
    is_charge_refundable: false,
    livemode: false,
    metadata: { ...d.metadata },
    payment_intent: d.intentId,
    payment_method_details: { type: 'card', card: { brand: 'visa', case_type: 'chargeback', network_reason_code: d.networkReasonCode } },
    reason: d.reason,
    status: d.status,
  };
}

export function fileObject(f: FileRecord): Record<string, unknown> {
  return {
    id: f.id,
    object: 'file',
    created: f.created,
    expires_at: null,
    filename: f.filename,
    links: { object: 'list', data: [], has_more: false, url: `/v1/file_links?file=${f.id}` },
    purpose: f.purpose,
    size: f.size,
    title: null,
    type: f.type,
    url: null,
  };
}

export function eventObject(id: string, type: string, object: Record<string, unknown>, created: number, apiVersion: string | null): Record<string, unknown> {
  return {
    id,
    object: 'event',
    api_version: apiVersion,
    created,
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  };
}

export function setupIntentObject(si: SetupRecord): Record<string, unknown> {
  const pm = `pm_${si.id.slice(5)}`;
  return {
    id: si.id,
    object: 'setup_intent',
    application: null,
    automatic_payment_methods: { allow_redirects: 'never', enabled: true },
    cancellation_reason: null,
    client_secret: `${si.id}_secret_double`,
    created: si.created,
    customer: null,
    description: null,
    flow_directions: null,
    last_setup_error: si.lastError,
    latest_attempt: `setatt_${si.id.slice(5)}`,
    livemode: false,
    mandate: null,
    metadata: { ...si.metadata },
    next_action: null,
    on_behalf_of: null,
    payment_method: si.lastError ? null : pm,
    payment_method_options: { card: { request_three_d_secure: 'automatic' } },
    payment_method_types: ['card'],
    single_use_mandate: null,
    status: si.status,
    usage: 'off_session',
  };
}
