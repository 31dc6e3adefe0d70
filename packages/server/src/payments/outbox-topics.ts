/**
 * What payments put in the outbox and how each topic is delivered:
 * - `dispute.evidence`: forward a batch of dispute evidence to the provider that holds the chargeback,
 *   through its connection (evidence-holder.ts; a disabled or deleted connection still serves it, as
 *   follow-ups do). The message id is the provider-side idempotency reference, so a re-delivery after a
 *   crash has no second effect. A batch still waiting when the dispute is decided (WON or LOST) is
 *   acknowledged without being sent, and logged. A batch the provider refuses for good
 *   (ProviderRefusedError) is given up, logged as an error, not retried. A dispute's batches go one at a
 *   time, in the order they were submitted (ordering key `dispute:<id>`, outbox/repository.ts claim).
 * - `sandbox.chargeback`: the sandbox acquirer's chargeback notification for test card
 *   4000000000000259, sent after the payment committed and processed through the same path as one
 *   received over HTTP. Its notification id derives from the message id, so a re-delivery is a duplicate.
 */
import { randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../db/database.js';
import type { Logger } from '../platform/logger.js';
import { ProviderRefusedError, type ConnectionContext, type PaymentProvider } from '../providers/provider.js';
import type { UsableConnection } from '../routing/plan.js';
import { evidenceHolder } from './evidence-holder.js';
import { receiveNotification } from './chargebacks.js';
import { outboxRepository } from './outbox/repository.js';
import { DeliveryRefused, type OutboxHandler } from './outbox/worker.js';
import { paymentsRepository as repo } from './repository.js';

export const TOPIC_DISPUTE_EVIDENCE = 'dispute.evidence';
export const TOPIC_SANDBOX_CHARGEBACK = 'sandbox.chargeback';

interface EvidencePayload {
  dispute_id: string;
  payment_id: string;
  transaction_id: string;
  chargeback_id: string | null;
  evidence_ids: string[];
}

interface SandboxChargebackPayload {
  payment_id: string;
  provider_transaction_id: string;
  amount: string;
}

export async function enqueueEvidenceForward(
  db: Queryable,
  p: { disputeId: string; paymentId: string; transactionId: string; chargebackId: string | null; evidenceIds: string[] },
): Promise<string> {
  const id = randomUUID();
  const payload: EvidencePayload = {
    dispute_id: p.disputeId,
    payment_id: p.paymentId,
    transaction_id: p.transactionId,
    chargeback_id: p.chargebackId,
    evidence_ids: p.evidenceIds,
  };
  // One dispute's batches go one at a time, in the order they were submitted.
  await outboxRepository.enqueue(db, { id, topic: TOPIC_DISPUTE_EVIDENCE, payload, orderingKey: `dispute:${p.disputeId}` });
  return id;
}

export async function enqueueSandboxChargeback(db: Queryable, p: { paymentId: string; providerTransactionId: string; amount: string }): Promise<void> {
  const payload: SandboxChargebackPayload = { payment_id: p.paymentId, provider_transaction_id: p.providerTransactionId, amount: p.amount };
  await outboxRepository.enqueue(db, { id: randomUUID(), topic: TOPIC_SANDBOX_CHARGEBACK, payload });
}

/** How the outbox reaches the provider of a chargeback: the registry, and connections opened (credentials). */
export interface EvidenceReach {
  providers: { get(providerId: string): PaymentProvider | undefined };
  openConnection(db: Queryable, organizationId: string, connectionId: string): Promise<UsableConnection | undefined>;
}

/** A provider's definitive refusal of a batch gives the message up (worker.ts DeliveryRefused): sent again, it would be refused again. */
async function forwardOrGiveUp<T>(p: EvidencePayload, forward: () => Promise<T>): Promise<T> {
  try {
    return await forward();
  } catch (err) {
    if (err instanceof ProviderRefusedError) throw new DeliveryRefused(`dispute ${p.dispute_id}: ${err.message}`);
    throw err;
  }
}

export function paymentOutboxHandlers(deps: { db: Database; provider: PaymentProvider | undefined; log: Logger; reach?: EvidenceReach }): Record<string, OutboxHandler> {
  const { db, log } = deps;
  // Outside sandbox mode there is no provider to forward to (messages left by sandbox mode wait, backing off).
  const reach = (): PaymentProvider => {
    if (!deps.provider) throw new Error('no payment provider runs in this service (the sandbox providers exist in sandbox mode only)');
    return deps.provider;
  };
  /**
   * The provider and connection holding the chargeback. A provider this service does not run (a sandbox
   * one outside sandbox mode) throws: the message waits, backing off, as it did before.
   */
  const holderOf = async (p: EvidencePayload): Promise<{ provider: PaymentProvider; connection?: ConnectionContext }> => {
    const holder = deps.reach ? await evidenceHolder(db, p.payment_id, p.transaction_id) : undefined;
    if (!holder?.providerId) return { provider: reach() };
    const provider = deps.reach!.providers.get(holder.providerId);
    if (!provider) throw new Error(`dispute ${p.dispute_id}: the provider ${holder.providerId} that holds the chargeback does not run in this service`);
    const opened = holder.connectionId ? await deps.reach!.openConnection(db, holder.organizationId, holder.connectionId) : undefined;
    if (holder.connectionId && !opened) throw new Error(`dispute ${p.dispute_id}: the connection ${holder.connectionId} that holds the chargeback is gone`);
    return { provider, ...(opened ? { connection: opened.context } : {}) };
  };

  return {
    async [TOPIC_DISPUTE_EVIDENCE](message) {
      const p = message.payload as EvidencePayload;
      // Decided (WON or LOST: the sandbox's resolve or the provider's dispute outcome): the evidence can
      // change nothing any more, and the provider refuses it for a closed case. Acknowledged unsent,
      // its documents left unforwarded, rather than uploaded again and again for ever.
      const dispute = await repo.findDisputeByTransaction(db, p.transaction_id);
      if (dispute && dispute.id === p.dispute_id && dispute.status !== 'PENDING_REVIEW') {
        log.warn(
          { outboxId: message.id, disputeId: p.dispute_id, paymentId: p.payment_id, disputeStatus: dispute.status, documents: p.evidence_ids.length },
          'dispute evidence not forwarded: the dispute was decided before it could be delivered',
        );
        return;
      }
      const { provider, connection } = await holderOf(p);
      const rows = await repo.listEvidence(db, p.dispute_id, p.evidence_ids);
      if (rows.length !== p.evidence_ids.length) throw new Error(`dispute ${p.dispute_id}: ${p.evidence_ids.length - rows.length} evidence documents are missing`);
      const ack = await forwardOrGiveUp(p, () => provider.forwardDisputeEvidence({
        reference: message.id,
        disputeId: p.dispute_id,
        paymentId: p.payment_id,
        chargebackId: p.chargeback_id,
        evidence: rows.map((r) => ({
          id: r.id,
          fileName: r.file_name,
          contentType: r.content_type,
          category: r.content_category,
          sha256: Buffer.from(r.sha256).toString('hex'),
          content: Buffer.from(r.content.buffer, r.content.byteOffset, r.content.byteLength),
        })),
        ...(connection ? { connection } : {}),
      }));
      log.info({ disputeId: p.dispute_id, providerId: provider.id, providerDisputeId: ack.providerDisputeId, duplicate: ack.duplicate, documents: rows.length }, 'dispute evidence forwarded');
      return (tx) => repo.markEvidenceForwarded(tx, p.evidence_ids);
    },

    async [TOPIC_SANDBOX_CHARGEBACK](message) {
      const provider = reach();
      const p = message.payload as SandboxChargebackPayload;
      if (!provider.simulateChargeback) throw new Error(`provider ${provider.id} cannot simulate chargebacks`);
      const signed = await provider.simulateChargeback({
        notificationId: `sbx_ntf_${message.id}`,
        paymentId: p.payment_id,
        providerTransactionId: p.provider_transaction_id,
        amount: p.amount,
        reason: 'REQUESTED_BY_CUSTOMER',
      });
      const outcome = await receiveNotification(db, provider, provider.notificationSource ?? provider.id, signed.rawBody, signed.headers);
      // A refusal (the payment changed meanwhile) is final: retrying would be refused again.
      if (outcome.kind === 'rejected') log.warn({ paymentId: p.payment_id, code: outcome.problem.body.code }, 'sandbox chargeback refused');
    },
  };
}
