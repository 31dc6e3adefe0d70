/**
 * Payments as orchestration is given them (orchestration/payment-port.ts): the payment lock, the reads
 * and moves of a payment, its outcome event and the vaulted card's record. Wired into the Orchestration
 * services once (src/services.ts); payments' own calls into orchestration/settle.ts pass it too.
 */
import type { PaymentPort } from '../orchestration/payment-port.js';
import { recordPaymentOutcome } from './events.js';
import { lockBeforePayment } from './lock-order.js';
import { inPaymentTransaction } from './payment-lock.js';
import { paymentsRepository } from './repository.js';
import { markVaultedCardUsed } from './vaulted-card.js';

export const paymentPort: PaymentPort = {
  inPaymentTransaction,
  lockPaymentById: (tx, id) => paymentsRepository.lockPaymentById(tx, id),
  async lockPaymentToSettle(tx, id) {
    await lockBeforePayment(tx, { ofPayment: id });
    return paymentsRepository.lockPaymentById(tx, id);
  },
  movePayment: (tx, paymentId, next, because) => paymentsRepository.movePayment(tx, paymentId, next, because),
  updatePayment: (tx, id, change) => paymentsRepository.updatePayment(tx, id, change),
  insertHistory: (tx, h) => paymentsRepository.insertHistory(tx, h),
  recordPaymentOutcome,
  markVaultedCardUsed,
};
