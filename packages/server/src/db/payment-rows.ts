/**
 * Storage shapes of the payments and payment_transactions tables, as their SQL returns them: shared by
 * payments (which owns both tables) and orchestration (which records provider attempts on
 * payment_transactions and decides from a payment's state), so neither imports the other's repository
 * for them. Types only: the SQL stays in each domain's repository.ts.
 */

export interface PaymentRow {
  id: string;
  organization_id: string;
  account_id: string;
  /** null: the payer was given inline, without an enrolled customer. */
  customer_id: string | null;
  description: string;
  country: string;
  merchant_order_id: string;
  status: string;
  sub_status: string;
  currency: string;
  amount_value: string;
  amount_captured: string;
  amount_refunded: string;
  workflow: string;
  callback_url: string | null;
  metadata: unknown;
  additional_data: unknown;
  customer_payer: unknown;
  payment_method: unknown;
  taxes: unknown;
  /** Request fields stored as given (checkout, fraud_screening, split_marketplace). */
  request_details: unknown;
  /** How the payment was routed (PaymentRoutingRules), null for payments made before routing. */
  routing_rules?: unknown;
  created_at: string;
  updated_at: string;
}

export interface TransactionRow {
  id: string;
  payment_id: string;
  type: string;
  status: string;
  category: string;
  amount: string;
  provider_id: string | null;
  payment_method: unknown;
  response_code: string | null;
  response_message: string | null;
  reason: string | null;
  description: string | null;
  merchant_reference: string | null;
  provider_data: unknown;
  raw_response: unknown;
  provider_transaction_id: string | null;
  connection_data: unknown;
  merchant_advice_code: string | null;
  merchant_advice_code_message: string | null;
  payment_status_before: string | null;
  payment_sub_status_before: string | null;
  created_at: string;
  updated_at: string;
}

export type NewTransactionRow = Omit<TransactionRow, 'created_at' | 'updated_at'>;

/** A payment with its transactions (in creation order), as one read returns them. */
export interface PaymentWithTransactions {
  payment: PaymentRow;
  transactions: TransactionRow[];
}
