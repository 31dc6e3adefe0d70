/**
 * A payment link's state, shared by the link's operations, the token claim (a payment through the link)
 * and the approval hook (onPaymentApproved: orchestration/settle.ts runs it in every approval's transaction,
 * handed over at start by src/services.ts, as orchestration imports nothing of checkout). PAID and EXPIRED
 * are decided at read (migration 0026).
 */
import type { Schemas } from '@payorch/types';
import { toIsoMicros, type Queryable } from '../db/database.js';
import type { PaymentRow } from '../payments/repository.js';
import { recordEvent } from '../webhooks/index.js';
import { checkoutRepository as repo, type LinkRow } from './repository.js';

/** Payment statuses that mean the shopper has not paid (another card may be tried). */
export const UNPAID_STATUSES = ['DECLINED', 'ERROR', 'REJECTED', 'EXPIRED', 'FRAUD'] as const;

export type LinkStatus = Schemas['PaymentLink']['status'];

export function linkStatus(row: LinkRow): LinkStatus {
  if (row.status === 'CANCELED') return 'CANCELED';
  if (row.one_time_use && row.payments_number > 0) return 'PAID';
  return row.finished ? 'EXPIRED' : 'ACTIVE';
}

export function toApiLink(row: LinkRow): Schemas['PaymentLink'] {
  return {
    id: row.code,
    code: row.code,
    account_id: row.account_id,
    country: row.country,
    description: row.description,
    merchant_order_id: row.merchant_order_id,
    amount: { currency: row.currency, value: Number(row.amount_value) },
    capture: row.capture,
    status: linkStatus(row),
    availability: { start_at: toIsoMicros(row.start_at), finish_at: toIsoMicros(row.finish_at) },
    payment_method_types: ['CARD'],
    one_time_use: row.one_time_use,
    callback_url: row.callback_url,
    metadata: (row.metadata ?? null) as Schemas['PaymentLink']['metadata'],
    checkout_url: row.checkout_url,
    payments_number: row.payments_number,
    payments: row.payments.length > 0 ? row.payments : null,
    created_at: toIsoMicros(row.created_at),
    updated_at: toIsoMicros(row.updated_at),
  };
}

/**
 * Why the link takes no payment now, or null when it does. With `lock`, the link's row is locked until the
 * transaction ends: two payments through a one-time link are decided one after the other.
 */
export async function linkRefusal(db: Queryable, organizationId: string, code: string, lock: boolean): Promise<string | null> {
  const row = await repo.findLink(db, organizationId, code, lock);
  if (!row) return 'the payment link does not exist';
  const status = linkStatus(row);
  if (status !== 'ACTIVE') return `the payment link is ${status}`;
  if (row.not_started) return 'the payment link is not available yet';
  if (row.one_time_use && (await repo.linkHasLivePayment(db, code, UNPAID_STATUSES))) return 'the payment link has a payment in process or paid';
  return null;
}

/**
 * In the transaction that approves a payment: when it was made through a payment link, the link records
 * it and `payment_link.paid` is sent with the link as it now is.
 */
export async function onPaymentApproved(tx: Queryable, payment: PaymentRow): Promise<void> {
  const code = await repo.linkOfPayment(tx, payment.id);
  if (!code) return;
  if (!(await repo.addLinkPayment(tx, code, payment.id))) return;
  const row = await repo.findLink(tx, payment.organization_id, code);
  if (!row) return;
  await recordEvent(tx, {
    organizationId: payment.organization_id,
    accountId: payment.account_id,
    type: 'payment_link.paid',
    data: { payment_link: toApiLink(row), payment_id: payment.id },
    resourceId: code,
  });
}
