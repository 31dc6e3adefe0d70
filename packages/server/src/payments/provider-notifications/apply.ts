/**
 * Applying the events of a verified provider notification (connector.ts ConnectorEvent), each in ONE
 * database transaction with its payment locked, recorded by (connection, notification id) in that same
 * transaction: a re-delivery finds the record and changes nothing twice.
 *
 * What an event is about is found through the connection that was notified, never by an id the body
 * names alone (a payment id in a body is not trusted): the charge by the provider's transaction id, a
 * follow-up by our reference or the provider's operation id, a chargeback by the provider's chargeback id,
 * a card attempt's late outcome (ATTEMPT_SETTLED) by our reference among the connection's attempts.
 * So an event about another organization's payment (or another connection's) finds nothing.
 *
 * Out of order: an outcome whose subject is not recorded yet is PARKED (kept with what it waits for) and
 * applied in the transaction that records that subject — a follow-up's answer (settleFollowUp calls
 * applyParkedFor) or a chargeback (below). A chargeback for a charge this connection never made is IGNORED.
 */
import type { Queryable } from '../../db/database.js';
import type { ConnectorEvent } from '../../providers/connector.js';
import type { PaymentProvider } from '../../providers/provider.js';
import { applyChargeback, Rejected } from '../chargebacks.js';
import { decideChargeback } from '../disputes.js';
import { inPaymentTransaction } from '../payment-lock.js';
import { paymentsRepository as repo } from '../repository.js';
import { settleAttemptByNotification } from './attempts.js';
import { settleByNotification } from './follow-ups.js';
import { asyncPaymentsRepository } from '../async-methods/repository.js';
import { settleAsyncPayment } from '../async-methods/settle.js';
import { notificationsRepository as notifications, type NotificationState, type Target } from './repository.js';

/** The connection a notification came through, once its signature was verified. */
export interface NotifiedConnection {
  connectionId: string;
  organizationId: string;
  /** The connection's provider (its label goes on a chargeback transaction). */
  provider: PaymentProvider;
}

export interface Applied {
  state: Exclude<NotificationState, 'PARKED'>;
  /** Why it was ignored or left unchanged, for the record and the log. */
  detail: string | null;
  /** Money left where it should not be (a late approval's reversal failed): logged as an error. */
  alert?: { message: string; paymentId: string; transactionId: string };
}

export interface EventResult {
  notificationId: string;
  kind: ConnectorEvent['kind'];
  state: NotificationState | 'DUPLICATE';
  detail: string | null;
  alert?: Applied['alert'];
}

/** What the event is about, read without a lock (the payment is locked before anything is decided). */
function locate(db: Queryable, connectionId: string, e: ConnectorEvent): Promise<Target | undefined> {
  switch (e.kind) {
    case 'CHARGEBACK':
      return notifications.findCharge(db, connectionId, e.providerTransactionId);
    case 'FOLLOW_UP_SETTLED':
      return locateFollowUp(db, connectionId, e);
    case 'DISPUTE_CLOSED':
      return notifications.findChargeback(db, connectionId, e.chargebackId);
    case 'ASYNC_PAYMENT_SETTLED':
      return asyncPaymentsRepository.findIssued(db, connectionId, e.providerTransactionId);
    case 'ATTEMPT_SETTLED':
      return notifications.findAttempt(db, connectionId, e.reference);
  }
}

/**
 * A capture, cancel or refund of ours; else, for a cancel or refund naming the provider's transaction, the
 * reversal of a late approval (orchestration/reversals.ts), which is no transaction of its own: its attempt.
 */
async function locateFollowUp(db: Queryable, connectionId: string, e: Extract<ConnectorEvent, { kind: 'FOLLOW_UP_SETTLED' }>): Promise<Target | undefined> {
  const followUp = e.reference === null && e.providerOperationId === null ? undefined : await notifications.findFollowUp(db, connectionId, e.reference, e.providerOperationId);
  if (followUp || e.operation === 'CAPTURE' || e.providerTransactionId === null) return followUp;
  return notifications.findReversedLateApproval(db, connectionId, e.providerTransactionId);
}

/** What a not-yet-recorded subject will be known by, for an event that may wait for it. */
function awaited(e: ConnectorEvent): { awaitsReference: string | null; awaitsProviderId: string | null } | undefined {
  if (e.kind === 'FOLLOW_UP_SETTLED' && (e.reference !== null || e.providerOperationId !== null)) return { awaitsReference: e.reference, awaitsProviderId: e.providerOperationId };
  if (e.kind === 'DISPUTE_CLOSED') return { awaitsReference: null, awaitsProviderId: e.chargebackId };
  return undefined;
}

export async function applyConnectorEvent(db: Queryable, via: NotifiedConnection, event: ConnectorEvent): Promise<EventResult> {
  const result = (state: EventResult['state'], detail: string | null = null, alert?: Applied['alert']): EventResult => ({
    notificationId: event.notificationId,
    kind: event.kind,
    state,
    detail,
    ...(alert ? { alert } : {}),
  });
  const target = await locate(db, via.connectionId, event);
  if (target) {
    // An attempt's outcome may settle the payment, recording its vaulted card's use: the card is locked first (lock-order.ts).
    return inPaymentTransaction(db, target.payment_id, via.organizationId, async (tx) => {
      if (!(await notifications.record(tx, { connectionId: via.connectionId, event, state: 'APPLIED' }))) return result('DUPLICATE');
      const applied = await applyTo(tx, via, event, target);
      if (applied.state !== 'APPLIED') await notifications.settle(tx, via.connectionId, event.notificationId, applied.state, applied.detail);
      return result(applied.state, applied.detail, applied.alert);
    }, event.kind === 'ATTEMPT_SETTLED' ? { ofPayment: target.payment_id } : undefined);
  }
  const waits = awaited(event);
  if (!waits) {
    const detail = 'no charge of this connection has this provider transaction id';
    const fresh = await db.transaction((tx) => notifications.record(tx, { connectionId: via.connectionId, event, state: 'IGNORED', detail }));
    return fresh ? result('IGNORED', detail) : result('DUPLICATE');
  }
  const fresh = await db.transaction((tx) => notifications.record(tx, { connectionId: via.connectionId, event, state: 'PARKED', ...waits }));
  if (!fresh) return result('DUPLICATE');
  // The subject may have been recorded between the lookup and the park (its own transaction found nothing
  // parked yet): look once more, and apply what waits for it now.
  const landed = await locate(db, via.connectionId, event);
  if (!landed) return result('PARKED');
  const applied = await inPaymentTransaction(
    db,
    landed.payment_id,
    via.organizationId,
    (tx) => applyParkedFor(tx, via, { id: landed.id, paymentId: landed.payment_id, connectionId: via.connectionId, providerId: waits.awaitsProviderId }),
    { ofPayment: landed.payment_id },
  );
  return applied.find((r) => r.notificationId === event.notificationId) ?? result('PARKED');
}

/** One event on its subject, inside the payment's transaction. */
async function applyTo(tx: Queryable, via: Pick<NotifiedConnection, 'connectionId'> & { provider?: PaymentProvider }, e: ConnectorEvent, target: Target): Promise<Applied> {
  switch (e.kind) {
    case 'CHARGEBACK': {
      if (await notifications.findChargeback(tx, via.connectionId, e.chargebackId)) return { state: 'UNCHANGED', detail: `chargeback ${e.chargebackId} is recorded already` };
      if (!via.provider) throw new Error('a chargeback is applied only as it arrives');
      let chargeback;
      try {
        // The payment is the charge's, found through this connection: whatever payment id the body names is not used.
        ({ transaction: chargeback } = await applyChargeback(tx, via.provider, { ...e, paymentId: target.payment_id }, { connectionId: via.connectionId }));
      } catch (err) {
        // Refused before anything was written (the payment's state or the amount): acknowledged, kept as IGNORED.
        if (err instanceof Rejected) return { state: 'IGNORED', detail: err.problem.body.detail ?? err.problem.body.code };
        throw err;
      }
      await applyParkedFor(tx, via, { id: chargeback.id, paymentId: target.payment_id, connectionId: via.connectionId, providerId: e.chargebackId });
      return { state: 'APPLIED', detail: null };
    }
    case 'FOLLOW_UP_SETTLED':
      return settleByNotification(tx, e, target.id);
    case 'ASYNC_PAYMENT_SETTLED':
      return settleAsyncPayment(tx, target.payment_id, target.id, e.outcome, e.reason);
    case 'ATTEMPT_SETTLED':
      return settleAttemptByNotification(tx, e, target.id);
    case 'DISPUTE_CLOSED': {
      const payment = (await repo.lockPaymentById(tx, target.payment_id))!;
      const chargeback = (await repo.findTransaction(tx, payment.id, target.id))!;
      if (chargeback.status === e.outcome) return { state: 'UNCHANGED', detail: null };
      if (chargeback.status !== 'CREATED') return { state: 'IGNORED', detail: `chargeback ${chargeback.id} was decided already (${chargeback.status})` };
      if (payment.status !== 'IN_DISPUTE') return { state: 'IGNORED', detail: `payment ${payment.id} is ${payment.status} / ${payment.sub_status}, not IN_DISPUTE` };
      await decideChargeback(tx, payment, chargeback, await repo.findDisputeByTransaction(tx, chargeback.id), e.outcome);
      return { state: 'APPLIED', detail: null };
    }
  }
}

/**
 * Applies, in the caller's transaction (the payment locked), the parked events of `connectionId` that
 * wait for this transaction: our id, or the provider's id once known. Called where a subject lands.
 */
export async function applyParkedFor(
  tx: Queryable,
  via: Pick<NotifiedConnection, 'connectionId'> & { provider?: PaymentProvider },
  subject: { id: string; paymentId: string; connectionId: string; providerId: string | null },
): Promise<EventResult[]> {
  if (via.connectionId !== subject.connectionId) return [];
  const results: EventResult[] = [];
  for (const row of await notifications.parkedFor(tx, subject.connectionId, subject.id, subject.providerId)) {
    const applied = await applyTo(tx, via, row.event, { id: subject.id, payment_id: subject.paymentId });
    await notifications.settle(tx, subject.connectionId, row.notification_id, applied.state, applied.detail);
    results.push({ notificationId: row.notification_id, kind: row.event.kind, state: applied.state, detail: applied.detail, ...(applied.alert ? { alert: applied.alert } : {}) });
  }
  return results;
}
