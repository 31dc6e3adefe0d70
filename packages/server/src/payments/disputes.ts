/**
 * Disputes (docs/design.md §5, Yuno's lifecycle):
 *   chargeback received  → payment IN_DISPUTE / RECEIVED, chargeback transaction CREATED
 *   dispute (POST)       → payment IN_DISPUTE / PENDING_REVIEW, transaction stays CREATED, evidence stored
 *   more evidence (PATCH)→ allowed while PENDING_REVIEW
 *   outcome WON          → payment back to its status before the chargeback, transaction WON
 *   outcome LOST         → payment CHARGEBACK / LOST, transaction LOST
 * Each step is one database transaction with the payment row locked; evidence leaves through the outbox.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import type { MerchantAuth } from '../context.js';
import type { Queryable } from '../db/database.js';
import { problem } from '../http/problems.js';
import { accountBelongsTo } from '../tenancy/accounts.js';
import { recordChargebackEvent } from './events.js';
import { evidenceHolder } from './evidence-holder.js';
import { checkEvidence, disputeCapProblem } from './evidence.js';
import { toApiPayment, toDisputedPayment } from './mapper.js';
import { enqueueEvidenceForward } from './outbox-topics.js';
import { capturedState } from './refund-state.js';
import { paymentsRepository as repo, type DisputeRow, type PaymentRow, type TransactionRow } from './repository.js';

export type DisputeProblem =
  | ReturnType<typeof problem<'INVALID_ACCOUNT_ID'>>
  | ReturnType<typeof problem<'PAYMENT_NOT_FOUND'>>
  | ReturnType<typeof problem<'TRANSACTION_NOT_FOUND'>>
  | ReturnType<typeof problem<'INVALID_STATUS'>>
  | ReturnType<typeof problem<'INVALID_EVIDENCE'>>;

export type DisputeOutcome = { ok: true; payment: Schemas['DisputedPayment'] } | { ok: false; problem: DisputeProblem };

/**
 * Whether the provider with this id takes evidence after a dispute's first batch (its capabilities'
 * `additionalEvidence`); a provider this service does not describe is given the benefit of the doubt.
 */
export type TakesMoreEvidence = (providerId: string) => boolean;

/**
 * POST (`open`) starts the dispute of a chargeback received; PATCH (`add`) adds evidence to one under
 * review, unless the provider holding the chargeback takes a dispute's evidence once (Stripe, Adyen):
 * accepting it would answer 200 for documents that can never reach the issuer. `db` is the operation's
 * transaction.
 */
export async function submitEvidence(
  db: Queryable,
  merchant: MerchantAuth,
  mode: 'open' | 'add',
  ids: { paymentId: string; transactionId: string },
  body: Schemas['DisputeRequest'],
  takesMoreEvidence: TakesMoreEvidence,
): Promise<DisputeOutcome> {
  if (body.account_id !== undefined && !(await accountBelongsTo(db, body.account_id, merchant.organizationId))) {
    return { ok: false, problem: problem('INVALID_ACCOUNT_ID', 'The account_id is not an account of your organization.') };
  }
  const payment = await repo.findPayment(db, merchant.organizationId, ids.paymentId, { forUpdate: true });
  if (!payment) return { ok: false, problem: problem('PAYMENT_NOT_FOUND', `No payment ${ids.paymentId}.`) };
  const chargeback = await repo.findTransaction(db, payment.id, ids.transactionId);
  if (!chargeback) return { ok: false, problem: problem('TRANSACTION_NOT_FOUND', `Payment ${payment.id} has no transaction ${ids.transactionId}.`) };

  const invalid = (detail: string) => ({ ok: false as const, problem: problem('INVALID_STATUS', detail) });
  if (chargeback.type !== 'CHARGEBACK') return invalid(`Transaction ${chargeback.id} is a ${chargeback.type}; only a CHARGEBACK can be disputed.`);
  if (chargeback.status !== 'CREATED') return invalid(`The chargeback ${chargeback.id} is already decided (${chargeback.status}).`);
  const dispute = await repo.findDisputeByTransaction(db, chargeback.id);
  const state = `${payment.status} / ${payment.sub_status}`;
  if (mode === 'open') {
    if (dispute) return invalid(`The chargeback ${chargeback.id} is already disputed (payment ${state}); add evidence with PATCH.`);
    if (payment.status !== 'IN_DISPUTE' || payment.sub_status !== 'RECEIVED') return invalid(`The payment is ${state}; a dispute needs IN_DISPUTE / RECEIVED.`);
  } else {
    if (!dispute || dispute.status !== 'PENDING_REVIEW') return invalid(`The chargeback ${chargeback.id} has no dispute under review; open one with POST.`);
    if (payment.status !== 'IN_DISPUTE' || payment.sub_status !== 'PENDING_REVIEW') return invalid(`The payment is ${state}; evidence can be added while IN_DISPUTE / PENDING_REVIEW.`);
    const holder = await evidenceHolder(db, payment.id, chargeback.id);
    if (holder?.providerId && !takesMoreEvidence(holder.providerId)) {
      return invalid(`The chargeback ${chargeback.id} is held by ${holder.providerId}, which takes a dispute's evidence once: the POST's documents were submitted and no more can be added.`);
    }
  }

  const checked = checkEvidence(body.evidence);
  // The payment row is locked: concurrent PATCHes of one dispute count against its caps one after another.
  const overCap = checked.ok ? disputeCapProblem(dispute ? await repo.evidenceTotals(db, dispute.id) : { documents: 0, bytes: 0 }, checked.documents) : undefined;
  if (!checked.ok || overCap) {
    const errors = checked.ok ? [overCap!] : checked.errors;
    return {
      ok: false,
      problem: problem('INVALID_EVIDENCE', `The evidence is not acceptable: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}.`, { errors }),
    };
  }

  const disputeId = dispute?.id ?? (await repo.insertDispute(db, { id: randomUUID(), paymentId: payment.id, transactionId: chargeback.id, status: 'PENDING_REVIEW' })).id;
  const evidenceIds: string[] = [];
  for (const doc of checked.documents) {
    const id = randomUUID();
    await repo.insertEvidence(db, {
      id,
      dispute_id: disputeId,
      file_name: doc.fileName,
      content_type: doc.contentType,
      content_category: doc.category,
      sha256: doc.sha256,
      content: doc.content,
    });
    evidenceIds.push(id);
  }
  await enqueueEvidenceForward(db, {
    disputeId,
    paymentId: payment.id,
    transactionId: chargeback.id,
    chargebackId: chargeback.provider_transaction_id,
    evidenceIds,
  });

  let updated;
  if (mode === 'open') {
    updated = await repo.updatePayment(db, payment.id, { status: 'IN_DISPUTE', subStatus: 'PENDING_REVIEW' });
    await repo.insertHistory(db, {
      id: randomUUID(),
      paymentId: payment.id,
      status: 'IN_DISPUTE',
      subStatus: 'PENDING_REVIEW',
      transactionId: chargeback.id,
      transactionStatus: chargeback.status,
      reason: 'EVIDENCE_SUBMITTED',
    });
    await recordChargebackEvent(db, updated, chargeback, 'payment.dispute.submitted');
  } else {
    updated = await repo.touchPayment(db, payment.id);
  }
  return { ok: true, payment: toDisputedPayment(updated, chargeback) };
}

/**
 * The issuer's decision recorded (the payment row locked by the caller): the chargeback WON or LOST, its
 * dispute (if the merchant opened one) resolved, the payment back to its status before the chargeback
 * (WON) or CHARGEBACK / LOST, with history and the payment.dispute.* event. Shared by the sandbox's
 * resolve and the providers' dispute-outcome notifications (a provider may decide a chargeback the
 * merchant never disputed: then there is no dispute row).
 */
export async function decideChargeback(
  tx: Queryable,
  payment: PaymentRow,
  chargeback: TransactionRow,
  dispute: DisputeRow | undefined,
  outcome: 'WON' | 'LOST',
): Promise<PaymentRow> {
  const next = outcome === 'WON' ? await wonState(tx, payment, chargeback) : { status: 'CHARGEBACK', subStatus: 'LOST' };
  const decided = await repo.setTransactionStatus(tx, chargeback.id, outcome);
  if (dispute) await repo.resolveDispute(tx, dispute.id, outcome);
  const updated = await repo.movePayment(tx, payment.id, next, {
    transactionId: chargeback.id,
    transactionStatus: outcome,
    reason: outcome === 'WON' ? 'DISPUTE_WON' : 'DISPUTE_LOST',
  });
  await recordChargebackEvent(tx, updated, decided, outcome === 'WON' ? 'payment.dispute.won' : 'payment.dispute.lost');
  return updated;
}

/**
 * A won dispute gives the payment back its state from before the chargeback, as its amounts are now: a
 * refund approved while the chargeback was open moved money (lifecycle.ts keeps IN_DISPUTE then), so a
 * payment refunded whole ends REFUNDED, not APPROVED (and not chargeable again); a refund or capture the
 * provider reported failed meanwhile (follow-ups.ts undone) gave money back, so the payment ends as that
 * failure leaves one without a dispute: refund-state.ts capturedState, the one rule for both.
 */
async function wonState(tx: Queryable, payment: PaymentRow, chargeback: TransactionRow): Promise<{ status: string; subStatus: string }> {
  const before = { status: chargeback.payment_status_before ?? 'SUCCEEDED', subStatus: chargeback.payment_sub_status_before ?? 'APPROVED' };
  if (before.status !== 'SUCCEEDED' && before.status !== 'REFUNDED') return before;
  const amounts = { captured: payment.amount_captured, refunded: payment.amount_refunded };
  return capturedState(await repo.listTransactions(tx, payment.id), amounts, before.subStatus);
}

export type ResolveOutcome =
  | { ok: true; payment: Schemas['Payment'] }
  | { ok: false; problem: ReturnType<typeof problem<'PAYMENT_NOT_FOUND'>> | ReturnType<typeof problem<'INVALID_STATUS'>> };

/** The issuer's decision on a dispute under review (sandbox: decided by the merchant through the API). */
export async function resolveDispute(db: Queryable, organizationId: string, paymentId: string, outcome: 'WON' | 'LOST'): Promise<ResolveOutcome> {
  return db.transaction(async (tx) => {
    const payment = await repo.findPayment(tx, organizationId, paymentId, { forUpdate: true });
    if (!payment) return { ok: false, problem: problem('PAYMENT_NOT_FOUND', `No payment ${paymentId}.`) };
    const chargeback = await repo.findOpenChargeback(tx, payment.id);
    const dispute = chargeback ? await repo.findDisputeByTransaction(tx, chargeback.id) : undefined;
    if (!chargeback || !dispute || dispute.status !== 'PENDING_REVIEW' || payment.status !== 'IN_DISPUTE' || payment.sub_status !== 'PENDING_REVIEW') {
      return {
        ok: false,
        problem: problem('INVALID_STATUS', `The payment is ${payment.status} / ${payment.sub_status}; only a dispute under review (IN_DISPUTE / PENDING_REVIEW) can be decided.`),
      };
    }
    const updated = await decideChargeback(tx, payment, chargeback, dispute, outcome);
    const transactions = await repo.listTransactions(tx, payment.id);
    return { ok: true, payment: toApiPayment(updated, transactions, null, { rawResponse: false }) };
  });
}
