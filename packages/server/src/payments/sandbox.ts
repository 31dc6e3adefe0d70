/**
 * Sandbox-only helpers: inject a chargeback on a payment. It is not a shortcut: the sandbox acquirer
 * builds and signs the notification it would send, and that goes through receiveNotification exactly as
 * one arriving over HTTP (signature, deduplication, state checks).
 */
import type { PaymentProvider } from '../providers/provider.js';
import type { Database } from '../db/database.js';
import { problem } from '../http/problems.js';
import { receiveNotification, type NotificationProblem } from './chargebacks.js';
import { toDecimal } from './money.js';
import { paymentsRepository as repo, type TransactionRow } from './repository.js';

export type SandboxChargebackOutcome =
  | { ok: true; transaction: TransactionRow }
  | { ok: false; problem: NotificationProblem };

export async function injectChargeback(
  db: Database,
  provider: PaymentProvider,
  organizationId: string,
  paymentId: string,
  input: { amount?: number; reason?: string } | undefined,
): Promise<SandboxChargebackOutcome> {
  const payment = await repo.findPayment(db, organizationId, paymentId);
  if (!payment) return { ok: false, problem: problem('PAYMENT_NOT_FOUND', `No payment ${paymentId}.`) };
  const transactions = await repo.listTransactions(db, payment.id);
  const purchase = transactions.find((t) => (t.type === 'PURCHASE' || t.type === 'AUTHORIZE') && t.status === 'SUCCEEDED');
  if (!purchase?.provider_transaction_id || payment.status !== 'SUCCEEDED') {
    return { ok: false, problem: problem('INVALID_STATUS', `The payment is ${payment.status} / ${payment.sub_status}; only a SUCCEEDED payment can be charged back.`) };
  }
  let amount = payment.amount_captured;
  if (input?.amount !== undefined) {
    const checked = toDecimal(input.amount, payment.currency);
    if (!checked.ok) {
      return { ok: false, problem: problem('INVALID_REQUEST', `The amount ${checked.message}.`, { errors: [{ path: '/body/amount', message: checked.message }] }) };
    }
    amount = checked.decimal;
  }
  if (!provider.simulateChargeback) return { ok: false, problem: problem('NOT_FOUND', `The ${provider.id} provider cannot simulate chargebacks.`) };
  const signed = await provider.simulateChargeback({
    paymentId: payment.id,
    providerTransactionId: purchase.provider_transaction_id,
    amount,
    reason: input?.reason ?? 'REQUESTED_BY_CUSTOMER',
  });
  const outcome = await receiveNotification(db, provider, provider.notificationSource ?? provider.id, signed.rawBody, signed.headers);
  if (outcome.kind === 'rejected') {
    // The notification names its own fields; the merchant sent `amount` at the top level.
    const p = outcome.problem;
    if (p.status === 400 && p.body.errors) {
      const errors = p.body.errors.map((e) => ({ ...e, path: e.path.replace(/^\/body\/data\//, '/body/') }));
      return { ok: false, problem: problem('INVALID_REQUEST', p.body.detail ?? 'The request is invalid.', { errors }) };
    }
    return { ok: false, problem: p };
  }
  if (outcome.kind === 'duplicate') throw new Error('a fresh sandbox notification id was reported as a duplicate');
  return { ok: true, transaction: outcome.transaction };
}
