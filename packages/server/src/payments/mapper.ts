/**
 * Storage rows → the API's payment shapes: the retrieval shape (Payment, `transactions` an array) and
 * the dispute shape (DisputedPayment, `transactions` the single chargeback). Amounts leave NUMERIC here.
 */
import type { Schemas } from '@payorch/types';
import { toAmount, toIsoMicros } from '../db/database.js';
import type { CustomerRow } from '../customers/repository.js';
import { PRE_ROUTING_RULES } from '../webhooks/index.js';
import type { HistoryRow, PaymentRow, TransactionRow } from './repository.js';

type Payment = Schemas['Payment'];
type Transaction = Schemas['Transaction'];

/**
 * Methods stored before the asynchronous methods (issue 24) have no `ticket` or `wallet` detail: shown as
 * null, as the contract lists every member.
 */
function withDetailMembers(method: unknown, member: 'detail' | 'payment_method_detail'): unknown {
  const m = method as Record<string, Record<string, unknown> | null> | null;
  const detail = m?.[member];
  if (!m || !detail || ('ticket' in detail && 'wallet' in detail)) return method;
  return { ...m, [member]: { ticket: null, wallet: null, ...detail } };
}

export interface MapOptions {
  /** Fill provider_data.raw_response (getPayment `raw_response=true`). */
  rawResponse: boolean;
}

export function toApiTransaction(row: TransactionRow, options: MapOptions): Transaction {
  const providerData = row.provider_data as Omit<Schemas['ProviderData'], 'raw_response'>;
  return {
    id: row.id,
    type: row.type as Transaction['type'],
    status: row.status as Transaction['status'],
    category: row.category,
    amount: toAmount(row.amount),
    provider_id: row.provider_id,
    payment_method: withDetailMembers(row.payment_method, 'detail') as Schemas['TransactionPaymentMethod'],
    response_code: row.response_code,
    response_message: row.response_message,
    reason: row.reason,
    description: row.description,
    merchant_reference: row.merchant_reference,
    provider_data: { ...providerData, raw_response: options.rawResponse ? ((row.raw_response ?? null) as Record<string, unknown> | null) : null },
    connection_data: row.connection_data as Schemas['ConnectionData'],
    three_d_secure_action_required: null,
    merchant_advice_code: row.merchant_advice_code,
    merchant_advice_code_message: row.merchant_advice_code_message,
    created_at: toIsoMicros(row.created_at),
    updated_at: toIsoMicros(row.updated_at),
  };
}

export function toApiHistory(row: HistoryRow): Schemas['PaymentHistoryEntry'] {
  return {
    id: row.id,
    created_at: toIsoMicros(row.created_at),
    status: row.status as Schemas['PaymentStatus'],
    sub_status: row.sub_status,
    transaction_id: row.transaction_id,
    transaction_status: row.transaction_status as Schemas['TransactionStatus'] | null,
    reason: row.reason,
  };
}

/** The fields the retrieval and the dispute shapes share. */
function commonFields(p: PaymentRow) {
  return {
    id: p.id,
    account_id: p.account_id,
    description: p.description,
    country: p.country as Payment['country'],
    status: p.status as Payment['status'],
    sub_status: p.sub_status,
    merchant_order_id: p.merchant_order_id,
    created_at: toIsoMicros(p.created_at),
    updated_at: toIsoMicros(p.updated_at),
    amount: {
      captured: toAmount(p.amount_captured),
      currency: p.currency,
      currency_conversion: null,
      refunded: toAmount(p.amount_refunded),
      value: toAmount(p.amount_value),
    },
    // A checkout session only when the merchant named one (request_details.checkout.session).
    checkout: checkoutOf(p),
    payment_method: withDetailMembers(p.payment_method, 'payment_method_detail') as Schemas['PaymentMethod'],
    customer_payer: p.customer_payer as Schemas['CustomerPayer'],
    additional_data: (p.additional_data ?? null) as Payment['additional_data'],
    callback_url: p.callback_url,
    workflow: p.workflow as Payment['workflow'],
    metadata: (p.metadata ?? []) as Schemas['Metadata'],
  };
}

function checkoutOf(p: PaymentRow): Payment['checkout'] {
  const session = (p.request_details as { checkout?: { session?: string } | null } | null)?.checkout?.session;
  return session ? { session, sdk_action_required: false } : null;
}


/** How the payment was routed (orchestration stores routing/service.ts's routingRulesOf at creation). */
// A payment stored before routing existed has none: PRE_ROUTING_RULES, as its events of that time get.
const routingRulesOf = (p: PaymentRow): Schemas['PaymentRoutingRules'] => (p.routing_rules as Schemas['PaymentRoutingRules'] | null | undefined) ?? PRE_ROUTING_RULES;

/**
 * Yuno's create shape (POST /payments): the transaction the request made under `transactions`, every
 * transaction of the payment under `transactions_history` (as Yuno's create response lists them).
 */
export function toCreatedPayment(p: PaymentRow, made: TransactionRow, transactions: TransactionRow[]): Schemas['CreatedPayment'] {
  const split = (p.request_details as { split_marketplace?: Record<string, unknown>[] | null } | null)?.split_marketplace;
  return {
    ...commonFields(p),
    transactions: toApiTransaction(made, { rawResponse: false }),
    transactions_history: transactions.map((t) => toApiTransaction(t, { rawResponse: false })),
    split_marketplace: split ?? [],
    // The sandbox runs no fraud screening.
    fraud_screening: null,
    payment_link_id: '',
    subscription_code: null,
    routing_rules: routingRulesOf(p),
    simplified_mode: false,
  };
}

/** The retrieval shape; `history` null unless transactions_history=true. */
export function toApiPayment(p: PaymentRow, transactions: TransactionRow[], history: HistoryRow[] | null, options: MapOptions): Payment {
  return {
    ...commonFields(p),
    taxes: p.taxes ?? null,
    transactions: transactions.map((t) => toApiTransaction(t, options)),
    transactions_history: history ? history.map(toApiHistory) : null,
    split: [],
    routing_rules: routingRulesOf(p),
  };
}

/** The dispute shape (interface spec 4.1): the chargeback alone under `transactions`. */
export function toDisputedPayment(p: PaymentRow, chargeback: TransactionRow): Schemas['DisputedPayment'] {
  return {
    ...commonFields(p),
    transactions: toApiTransaction(chargeback, { rawResponse: false }),
    transactions_history: null,
    split_marketplace: [],
    fraud_screening: null,
    payment_link_id: '',
    subscription_code: null,
    routing_rules: routingRulesOf(p),
    simplified_mode: false,
  };
}

/** The payer as recorded on the payment: the customer at that moment; device data was not given. */
export function customerPayerSnapshot(c: CustomerRow): Schemas['CustomerPayer'] {
  return {
    id: c.id,
    merchant_customer_id: c.merchant_customer_id,
    first_name: c.first_name,
    last_name: c.last_name,
    gender: c.gender,
    date_of_birth: c.date_of_birth,
    email: c.email,
    nationality: c.nationality,
    ip_address: null,
    device_fingerprint: null,
    device_fingerprints: [],
    browser_info: null,
    document: (c.document ?? null) as Schemas['CustomerPayer']['document'],
    phone: (c.phone ?? null) as Schemas['CustomerPayer']['phone'],
    billing_address: (c.billing_address ?? null) as Schemas['CustomerPayer']['billing_address'],
    shipping_address: (c.shipping_address ?? null) as Schemas['CustomerPayer']['shipping_address'],
    merchant_customer_created_at: toIsoMicros(c.merchant_customer_created_at),
    geolocation: null,
  };
}

/** The method of a payment as a transaction shows it (`detail` instead of `payment_method_detail`). */
export function transactionMethodOf(m: Schemas['PaymentMethod']): Schemas['TransactionPaymentMethod'] {
  const { payment_method_detail, ...rest } = m;
  return { ...rest, detail: payment_method_detail };
}
