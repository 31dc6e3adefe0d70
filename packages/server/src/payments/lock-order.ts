/**
 * The one row-lock order of customers, their payment methods and their payments. A transaction that locks
 * rows of several of these tables (a lock taken by an UPDATE, a DELETE or SELECT … FOR …) takes them in
 * this order, parents first:
 *
 *   customers → payment_methods (→ payment_method_keys) → payments → payment_transactions → webhook_events → idempotency_keys
 *
 * Two transactions that took two of these rows in opposite orders would wait for each other: PostgreSQL
 * aborts one of them (40P01), a DELETE or an unenroll answering 500, or a payment's phase C dying with the
 * charge taken at the provider. Who takes what:
 *
 * - a customer's deletion (customers/service.ts, vault/shred.ts): the customer (UPDATE), its methods
 *   (UPDATE), their keys, then its payments, their transactions, events and stored replies (FOR UPDATE);
 * - an unenroll (vault/unenroll.ts): the method, then the payments made with it and their copies;
 * - an enrollment (vault/service.ts persist): the customer (FOR SHARE), then the new method;
 * - a payment's phase A (new-payment.ts, vault/service.ts loadCardForPayment): the customer (FOR SHARE),
 *   the vaulted method (FOR SHARE), then the new payment;
 * - a transaction that settles a payment (its phase C, reconciliation, a provider's notification) may
 *   enroll its card for its customer (vault_on_success: the customer FOR SHARE) or record the vaulted
 *   card's use (an UPDATE of the method): it locks those first (`lockBeforePayment`), then the payment
 *   (payment-lock.ts, or `lockPaymentToSettle`). The method is locked as the UPDATE will (FOR NO KEY
 *   UPDATE), not FOR SHARE: two settlements of one card each holding it for share would both wait to update it.
 *
 * Transactions that lock one payment and none of its parents (captures, refunds, disputes…) need nothing here.
 */
import type { Queryable } from '../db/database.js';

/** What a payment's settlement may write besides the payment (ids known to the caller). */
export interface PaymentParents {
  /** The customer a vault_on_success enrollment is for. */
  customerId?: string | null;
  /** The vaulted card the payment was made with (its use is recorded). */
  vaultedToken?: string | null;
}

/** The payment's own vaulted method, as its row names it (the caller does not know it). */
export type ParentsOf = { ofPayment: string };

/** Locks, in this module's order, what a transaction about to lock a payment will write besides it. */
export async function lockBeforePayment(tx: Queryable, parents: PaymentParents | ParentsOf): Promise<void> {
  if ('ofPayment' in parents) {
    // Read unlocked: a payment's vaulted token is set at its creation (vault_on_success writes one only
    // with the approval that decides the payment, after which nothing records the card's use).
    await tx.query(
      `SELECT 1 FROM payment_methods WHERE vaulted_token = (SELECT payment_method->>'vaulted_token' FROM payments WHERE id = $1) FOR NO KEY UPDATE`,
      [parents.ofPayment],
    );
    return;
  }
  if (parents.customerId) await tx.query('SELECT 1 FROM customers WHERE id = $1 FOR SHARE', [parents.customerId]);
  if (parents.vaultedToken) await tx.query('SELECT 1 FROM payment_methods WHERE vaulted_token = $1 FOR NO KEY UPDATE', [parents.vaultedToken]);
}
