/**
 * What every new payment shares, whatever its method (cards in create-payment.ts, the asynchronous
 * methods in async-methods/create.ts): the checks of its amount, account and customer, and its row as
 * phase A inserts it (CREATED, with the routing decision).
 */
import type { Schemas } from '@payorch/types';
import type { CustomerRow } from '../customers/repository.js';
import { customersRepository } from '../customers/repository.js';
import type { Queryable } from '../db/database.js';
import { problem, type FieldError } from '../http/problems.js';
import { accountBelongsTo } from '../tenancy/accounts.js';
import type { CreatePaymentInput } from './create-payment.js';
import { checkAmountAt } from './money.js';
import { payerOf } from './payer.js';
import type { NewPaymentRow } from './repository.js';

export type NewPaymentChecks =
  | { ok: true; amount: string; customer: CustomerRow | undefined }
  | { ok: false; problem: ReturnType<typeof problem<'INVALID_REQUEST'>> | ReturnType<typeof problem<'INVALID_ACCOUNT_ID'>> | ReturnType<typeof problem<'CUSTOMER_NOT_FOUND'>> };

/**
 * The amount in the currency's decimals (and each marketplace share's, in the payment's currency), the
 * account of this organization, the customer if one is named.
 */
export async function checkNewPayment(db: Queryable, organizationId: string, input: CreatePaymentInput): Promise<NewPaymentChecks> {
  const amount = checkAmountAt(input.amount, '/body/amount');
  const errors: FieldError[] = amount.ok ? [] : [amount.error];
  (input.split_marketplace ?? []).forEach((split, i) => {
    if (split.amount === undefined) return;
    const path = `/body/split_marketplace/${i}/amount`;
    const share = checkAmountAt(split.amount, path);
    if (!share.ok) errors.push(share.error);
    else if (split.amount.currency !== input.amount.currency) errors.push({ path: `${path}/currency`, message: `must be the payment's currency, ${input.amount.currency}` });
  });
  if (!amount.ok || errors.length > 0) {
    return { ok: false, problem: problem('INVALID_REQUEST', `The amount is invalid: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}.`, { errors }) };
  }
  if (!(await accountBelongsTo(db, input.account_id, organizationId))) {
    return { ok: false, problem: problem('INVALID_ACCOUNT_ID', 'The account_id is not an account of your organization.') };
  }
  const customerId = input.customer_payer?.id;
  // Locked for share until phase A commits: a deletion of the customer either came first (404 here) or waits
  // and then shreds the card copies of this payment too (vault/shred.ts; phase C keeps what it cleared).
  const customer = customerId === undefined ? undefined : await customersRepository.findForShare(db, organizationId, customerId);
  if (customerId !== undefined && !customer) return { ok: false, problem: problem('CUSTOMER_NOT_FOUND', `No customer ${customerId}.`) };
  return { ok: true, amount: amount.decimal, customer };
}

/** The new payment's row: CREATED, the request as given, its method as stored and the routing decision (written with it, one statement). */
export function newPaymentRow(p: {
  id: string;
  organizationId: string;
  input: CreatePaymentInput;
  customer: CustomerRow | undefined;
  amount: string;
  paymentMethod: Schemas['PaymentMethod'];
  /** The routing's account of its decision (orchestrator's RoutingPort.routingRulesOf). */
  routingRules: unknown;
  /** What the method keeps of its request besides the common members (async-methods: the payer's account, a wallet's last four). */
  moreDetails?: Record<string, unknown>;
}): NewPaymentRow & { routing_rules: unknown } {
  const { input } = p;
  return {
    id: p.id,
    organization_id: p.organizationId,
    account_id: input.account_id,
    customer_id: p.customer?.id ?? null,
    description: input.description,
    country: input.country,
    merchant_order_id: input.merchant_order_id,
    status: 'CREATED',
    sub_status: 'CREATED',
    currency: input.amount.currency,
    amount_value: p.amount,
    workflow: input.workflow ?? 'DIRECT',
    callback_url: input.callback_url ?? null,
    metadata: input.metadata ?? [],
    additional_data: input.additional_data ?? null,
    customer_payer: payerOf(p.customer, input.customer_payer ?? {}),
    payment_method: p.paymentMethod,
    request_details: { checkout: input.checkout ?? null, fraud_screening: input.fraud_screening ?? null, split_marketplace: input.split_marketplace ?? null, ...p.moreDetails },
    routing_rules: p.routingRules,
  };
}
