/**
 * Merchant webhook events of the vault (enrollment.enrolled / declined / unenrolled), recorded through the
 * webhooks domain in the same transaction as the status they announce.
 */
import type { Queryable } from '../db/database.js';
import { recordEvent } from '../webhooks/index.js';
import { toApiPaymentMethod } from './mapper.js';
import type { PaymentMethodRow } from './repository.js';

/** Records the event for a method that reached ENROLLED or DECLINED; other statuses announce nothing. */
export async function recordEnrollmentOutcome(tx: Queryable, row: PaymentMethodRow, baseUrl: string, now: Date): Promise<void> {
  const type = row.status === 'ENROLLED' ? 'enrollment.enrolled' : row.status === 'DECLINED' ? 'enrollment.declined' : undefined;
  if (!type) return;
  await recordEvent(tx, {
    organizationId: row.organization_id,
    accountId: row.account_id,
    type,
    data: { customer_id: row.customer_id, payment_method: toApiPaymentMethod(row, baseUrl, now) },
    resourceId: row.vaulted_token,
  });
}

/** Records enrollment.unenrolled for a method that just became UNENROLLED (unenrolled, or its customer deleted). */
export async function recordUnenrolled(tx: Queryable, row: PaymentMethodRow, baseUrl: string, now: Date): Promise<void> {
  await recordEvent(tx, {
    organizationId: row.organization_id,
    accountId: row.account_id,
    type: 'enrollment.unenrolled',
    data: { customer_id: row.customer_id, payment_method: toApiPaymentMethod(row, baseUrl, now) },
    resourceId: row.vaulted_token,
  });
}
