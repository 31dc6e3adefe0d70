/**
 * Capture, cancel (void), refund and cancel-or-refund of a payment (docs/design.md §5, Yuno's operations):
 *   PENDING / AUTHORIZED  --capture all-->   SUCCEEDED / CAPTURED            (transaction CAPTURE)
 *                         --capture part-->  SUCCEEDED / PARTIALLY_CAPTURED  (the rest is released)
 *                         --cancel-->        CANCELED / CANCELED             (transaction CANCEL)
 *   SUCCEEDED / *         --refund part-->   SUCCEEDED / PARTIALLY_REFUNDED  (transaction REFUND)
 *                         --refund rest-->   REFUNDED / REFUNDED
 *
 * The provider is never called inside a database transaction. Each operation runs in three phases:
 *   A. one short transaction, payment row locked (queued per payment in memory, payment-lock.ts): the checks (statuses, amounts: 409/422 problems), then
 *      the reservation — the follow-up transaction is inserted PENDING, naming the provider and connection
 *      of the authorization it follows, and the idempotency record is bound to it. What is left counts the
 *      PENDING ones (left to refund = captured − refunded − pending refunds; one capture or void in flight
 *      at a time), so concurrent operations are decided one after another against what is left.
 *   B. the provider call through that connection, reference = the transaction id, outside any transaction.
 *   C. one short transaction, payment locked: the answer settles the transaction (settleFollowUp, shared
 *      with the reconciliation). Approved → the payment changes, history and event as before; refused →
 *      the transaction is kept DECLINED/ERROR, the payment unchanged, 422 PROVIDER_DECLINED. No answer →
 *      the transaction stays PENDING (its amount still reserved) for the reconciliation, 502
 *      PROVIDER_UNAVAILABLE; a retry with the same key learns the settled outcome (followUpOutcome).
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import type { Queryable } from '../db/database.js';
import { problem } from '../http/problems.js';
import type { Lenient } from '../http/lenient-input.js';
import { DEADLINE_GRACE_MS } from '../orchestration/orchestrator.js';
import { logFollowUpAlert, type FollowUpAnswer, type FollowUpReport } from '../orchestration/reconciliation.js';
import { orchestrationRepository as attempts, type AttemptRecord, type AttemptRow } from '../orchestration/repository.js';
import { FIRST_LOOKUP_DELAY_MS, providerDataOf } from '../orchestration/settle.js';
import type { Logger } from '../platform/logger.js';
import type { OrchestrationMetrics } from '../platform/metrics.js';
import { ProviderUnavailableError, type ConnectionContext, type FollowUp, type PaymentProvider, type ProviderResult } from '../providers/provider.js';
import { recordOperationFailedEvent, recordPaymentOutcome } from './events.js';
import { toApiPayment } from './mapper.js';
import { addDecimal, compareDecimal, subtractDecimal, toDecimal } from './money.js';
import { inPaymentTransaction } from './payment-lock.js';
import { refundedState } from './refund-state.js';
import { applyParkedFor } from './provider-notifications/apply.js';
import { refundableMethod } from './async-methods/methods.js';
import { paymentsRepository as repo, type PaymentRow, type TransactionRow } from './repository.js';

export type LifecycleProblem =
  | ReturnType<typeof problem<'PAYMENT_NOT_FOUND'>>
  | ReturnType<typeof problem<'TRANSACTION_NOT_FOUND'>>
  | ReturnType<typeof problem<'INVALID_STATUS'>>
  | ReturnType<typeof problem<'CHARGEBACK_IN_PROCESS'>>
  | ReturnType<typeof problem<'REFUND_NOT_SUPPORTED'>>
  | ReturnType<typeof problem<'INVALID_AMOUNT'>>
  | ReturnType<typeof problem<'PROVIDER_DECLINED'>>
  | ReturnType<typeof problem<'PROVIDER_NOT_AVAILABLE'>>;

export type LifecycleOutcome =
  | { ok: true; payment: Schemas['Payment'] }
  | { ok: false; problem: LifecycleProblem }
  /** The provider did not answer: the transaction stays PENDING until the reconciliation settles it. */
  | { ok: false; unsettled: true; transactionId: string; problem: ReturnType<typeof problem<'PROVIDER_UNAVAILABLE'>> };

/**
 * The provider adapter and connection a follow-up goes through: the authorization's own, read in phase A's
 * transaction `db`. undefined for a provider this service does not run (a sandbox one outside sandbox
 * mode): the operation is refused with 422 PROVIDER_NOT_AVAILABLE and nothing is reserved.
 */
export type ProviderReach = (
  db: Queryable,
  providerId: string | null,
  connectionId: string | null,
) => Promise<{ provider: PaymentProvider; connection?: ConnectionContext } | undefined>;

/** A follow-up's call when its connection names no timeout (a transaction older than connections). */
const DEFAULT_FOLLOW_UP_TIMEOUT_MS = 10_000;

export interface LifecycleContext {
  /** Where each phase opens its own short transaction (the pool in deferred idempotency mode). */
  db: Queryable;
  organizationId: string;
  reach: ProviderReach;
  /** Binds the operation's idempotency record to the reserved transaction, inside phase A's transaction. */
  bind?: (tx: Queryable, resource: string) => Promise<void>;
  /** Stores the settled outcome as the operation's idempotency reply, inside phase C's transaction. */
  complete?: (tx: Queryable, outcome: LifecycleOutcome) => Promise<void>;
  metrics?: OrchestrationMetrics;
  /** Where an answer that met a settled follow-up is reported (logFollowUpAlert). */
  log?: Pick<Logger, 'warn' | 'error'>;
}

/** An amount as lenientInput leaves it (a digit string is a number by then). */
type Amount = Lenient<Schemas['TransactionAmountRequest']>;
type FollowUpType = 'CAPTURE' | 'CANCEL' | 'REFUND';
interface Details {
  /** A capture's industry data (Yuno's airline capture): completes the payment's `additional_data` once the capture is approved. */
  additional_data?: Schemas['AdditionalData'];
  merchant_reference?: string;
  reason?: string;
  description?: string;
}

/** The idempotency resource a follow-up operation is bound to (its recoverer reads followUpOutcome). */
export const followUpResource = (transactionId: string) => `transaction:${transactionId}`;

type Checked<T> = { ok: true; value: T } | { ok: false; problem: LifecycleProblem };
const refuse = (p: LifecycleProblem) => ({ ok: false, problem: p }) as const;
const invalidStatus = (detail: string) => refuse(problem('INVALID_STATUS', detail));
const state = (p: PaymentRow) => `${p.status} / ${p.sub_status}`;
const isUncapturedAuthorization = (p: PaymentRow) => p.status === 'PENDING' && p.sub_status === 'AUTHORIZED';

/** A follow-up reserved by phase A: the PENDING transaction and what phase B sends, to whom. */
interface Reservation {
  transaction: TransactionRow;
  /** The provider's id of the authorization or purchase the operation applies to. */
  providerTransactionId: string;
  currency: string;
  provider: PaymentProvider;
  connection: ConnectionContext | undefined;
  connectionId: string | null;
}

/**
 * The requested amount as exact decimal text, or the problem: the payment's currency only, its
 * minor-unit decimals, at most `limit` (what is left to capture or refund). Absent means `limit`.
 */
function amountWithin(payment: PaymentRow, requested: Amount | undefined, limit: string, what: string): Checked<string> {
  if (requested === undefined) return { ok: true, value: limit };
  const bad = (message: string, path = '/body/amount/value') => refuse(problem('INVALID_AMOUNT', `The amount ${message}.`, { errors: [{ path, message }] }));
  if (requested.currency !== payment.currency) return bad(`must be in the payment's currency ${payment.currency}, not ${requested.currency}`, '/body/amount/currency');
  const checked = toDecimal(requested.value, payment.currency);
  if (!checked.ok) return bad(checked.message);
  if (compareDecimal(checked.decimal, limit) > 0) return bad(`must not exceed ${limit} ${payment.currency}, what is left to ${what}`);
  return { ok: true, value: checked.decimal };
}

/** A capture or void of this authorization already in flight: a second one waits for its outcome. */
function inFlightOnAuthorization(transactions: TransactionRow[]): TransactionRow | undefined {
  return transactions.find((t) => (t.type === 'CAPTURE' || t.type === 'CANCEL') && t.status === 'PENDING');
}

/** The sum of the refunds sent and not answered yet: reserved, so not refundable again. */
function pendingRefunds(transactions: TransactionRow[]): string {
  return transactions.filter((t) => t.type === 'REFUND' && t.status === 'PENDING').reduce((sum, t) => addDecimal(sum, t.amount), '0');
}

/**
 * Phase A's reservation: the follow-up inserted PENDING with the provider and connection of `charged` (the
 * authorization or purchase as the provider knows it), and a deadline — the connection's timeout and a
 * grace — past which the reconciliation takes it over if this request never settles it (a crash).
 */
async function reserve(
  tx: Queryable,
  ctx: LifecycleContext,
  payment: PaymentRow,
  original: TransactionRow,
  charged: TransactionRow,
  t: { type: FollowUpType; amount: string; details: Details },
): Promise<Checked<Reservation>> {
  const connectionId = (await attempts.find(tx, charged.id))?.connection_id ?? null;
  const reached = await ctx.reach(tx, charged.provider_id, connectionId);
  if (!reached) {
    return refuse(
      problem(
        'PROVIDER_NOT_AVAILABLE',
        `The provider ${charged.provider_id ?? '(none)'} that holds transaction ${charged.id} does not run in this service (the sandbox providers exist in sandbox mode only); nothing was changed.`,
      ),
    );
  }
  const { provider, connection } = reached;
  const transaction = await attempts.insertAttempt(tx, {
    id: randomUUID(),
    payment_id: payment.id,
    type: t.type,
    status: 'PENDING',
    category: original.category,
    amount: t.amount,
    provider_id: charged.provider_id,
    payment_method: original.payment_method,
    response_code: null,
    response_message: null,
    reason: t.details.reason ?? null,
    description: t.details.description ?? null,
    merchant_reference: t.details.merchant_reference ?? payment.merchant_order_id,
    provider_data: providerDataOf(charged.provider_id, null),
    raw_response: null,
    provider_transaction_id: null,
    connection_data: charged.connection_data,
    merchant_advice_code: null,
    merchant_advice_code_message: null,
    payment_status_before: payment.status,
    payment_sub_status_before: payment.sub_status,
    connection_id: connectionId!,
    deadlineMs: (connection?.timeoutMs ?? DEFAULT_FOLLOW_UP_TIMEOUT_MS) + DEADLINE_GRACE_MS,
    // A capture's industry data waits on the capture: the payment takes it only once it is approved (apply).
    ...(t.type === 'CAPTURE' && t.details.additional_data ? { additional_data: t.details.additional_data } : {}),
  });
  await ctx.bind?.(tx, followUpResource(transaction.id));
  return { ok: true, value: { transaction, providerTransactionId: charged.provider_transaction_id!, currency: payment.currency, provider, connection, connectionId } };
}

/** Phase A of capture, cancel and refund: the payment (locked) and its named transaction, then `plan`. */
async function reserveOn(
  ctx: LifecycleContext,
  paymentId: string,
  transactionId: string | null,
  plan: (tx: Queryable, payment: PaymentRow, transactions: TransactionRow[], named: TransactionRow | undefined) => Promise<Checked<Reservation>>,
): Promise<Checked<Reservation>> {
  // Queued per payment (payment-lock.ts): a waiter holds no pooled connection.
  return inPaymentTransaction(ctx.db, paymentId, ctx.organizationId, async (tx, locked) => {
    const payment = locked ? locked.payment : await repo.findPayment(tx, ctx.organizationId, paymentId, { forUpdate: true });
    if (!payment) return refuse(problem('PAYMENT_NOT_FOUND', `No payment ${paymentId}.`));
    const transactions = await repo.listTransactions(tx, payment.id);
    const named = transactionId === null ? undefined : transactions.find((t) => t.id === transactionId);
    if (transactionId !== null && !named) return refuse(problem('TRANSACTION_NOT_FOUND', `Payment ${payment.id} has no transaction ${transactionId}.`));
    return plan(tx, payment, transactions, named);
  });
}

function reserveCapture(ctx: LifecycleContext, body: Details & { amount?: Amount }) {
  return async (tx: Queryable, payment: PaymentRow, transactions: TransactionRow[], auth: TransactionRow | undefined): Promise<Checked<Reservation>> => {
    if (auth!.type !== 'AUTHORIZE' || auth!.status !== 'SUCCEEDED') return invalidStatus(`Transaction ${auth!.id} is a ${auth!.type} (${auth!.status}); only a successful AUTHORIZE can be captured.`);
    // One capture per authorization: once captured (in part or whole) the rest was released.
    if (!isUncapturedAuthorization(payment)) return invalidStatus(`The payment is ${state(payment)}; a capture needs PENDING / AUTHORIZED (one capture per authorization).`);
    const busy = inFlightOnAuthorization(transactions);
    if (busy) return invalidStatus(`A ${busy.type} of this authorization (transaction ${busy.id}) is in flight; its outcome decides what is possible next.`);
    const amount = amountWithin(payment, body.amount, auth!.amount, 'capture');
    if (!amount.ok) return amount;
    return reserve(tx, ctx, payment, auth!, auth!, { type: 'CAPTURE', amount: amount.value, details: body });
  };
}

function reserveVoid(ctx: LifecycleContext, body: Details) {
  return async (tx: Queryable, payment: PaymentRow, transactions: TransactionRow[], auth: TransactionRow | undefined): Promise<Checked<Reservation>> => {
    if (auth!.type !== 'AUTHORIZE' || auth!.status !== 'SUCCEEDED') return invalidStatus(`Transaction ${auth!.id} is a ${auth!.type} (${auth!.status}); only a successful AUTHORIZE can be canceled.`);
    if (!isUncapturedAuthorization(payment)) {
      return invalidStatus(`The payment is ${state(payment)}; only an authorization not yet captured (PENDING / AUTHORIZED) can be canceled: refund captured money instead.`);
    }
    const busy = inFlightOnAuthorization(transactions);
    if (busy) return invalidStatus(`A ${busy.type} of this authorization (transaction ${busy.id}) is in flight; its outcome decides what is possible next.`);
    return reserve(tx, ctx, payment, auth!, auth!, { type: 'CANCEL', amount: auth!.amount, details: body });
  };
}

const REFUNDABLE_TYPES = new Set(['PURCHASE', 'AUTHORIZE', 'CAPTURE']);

function reserveRefund(ctx: LifecycleContext, body: Details & { amount?: Amount }) {
  return async (tx: Queryable, payment: PaymentRow, transactions: TransactionRow[], original: TransactionRow | undefined): Promise<Checked<Reservation>> => {
    if (!REFUNDABLE_TYPES.has(original!.type) || original!.status !== 'SUCCEEDED') {
      return invalidStatus(`Transaction ${original!.id} is a ${original!.type} (${original!.status}); refund the payment's successful PURCHASE or CAPTURE.`);
    }
    // Cash handed over at a store (OXXO, boleto) has no account to go back to (async-methods/methods.ts).
    const type = (payment.payment_method as { type?: string } | null)?.type;
    if (!refundableMethod(type)) {
      return refuse(problem('REFUND_NOT_SUPPORTED', `A ${type} payment cannot be refunded through the provider: the shopper paid in cash. Return the money to the shopper another way.`));
    }
    // Money under an open chargeback is the issuer's to decide; refunding it too would pay the customer twice.
    if (payment.status === 'IN_DISPUTE') {
      return refuse(problem('CHARGEBACK_IN_PROCESS', `The payment is ${state(payment)}: a chargeback is open; it can be refunded once the dispute is decided.`));
    }
    const notRefunded = subtractDecimal(payment.amount_captured, payment.amount_refunded);
    if (payment.status !== 'SUCCEEDED' || compareDecimal(notRefunded, '0') <= 0) {
      return invalidStatus(`The payment is ${state(payment)} with ${notRefunded} ${payment.currency} captured and not refunded; a refund needs captured money (SUCCEEDED).`);
    }
    const inFlight = pendingRefunds(transactions);
    const left = subtractDecimal(notRefunded, inFlight);
    if (compareDecimal(left, '0') <= 0) {
      return invalidStatus(`Refunds in flight (${inFlight} ${payment.currency}) hold everything captured and not refunded; their outcome decides whether anything is left.`);
    }
    const amount = amountWithin(payment, body.amount, left, 'refund');
    if (!amount.ok) return amount;
    // The provider knows the card transaction: the purchase, or the authorization that was captured.
    const charged = original!.type === 'CAPTURE' ? (transactions.find((t) => t.type === 'AUTHORIZE' && t.status === 'SUCCEEDED') ?? original!) : original!;
    return reserve(tx, ctx, payment, original!, charged, { type: 'REFUND', amount: amount.value, details: body });
  };
}

const WHAT: Record<FollowUpType, string> = { CAPTURE: 'capture', CANCEL: 'cancellation', REFUND: 'refund' };

/** Phases B and C: the call to the authorization's provider outside any transaction, then its outcome settled. */
async function send(ctx: LifecycleContext, r: Reservation): Promise<LifecycleOutcome> {
  const { transaction: t, provider, connection } = r;
  const input: FollowUp = { providerTransactionId: r.providerTransactionId, amount: t.amount, currency: r.currency, reference: t.id, ...(connection ? { connection } : {}) };
  const operation = t.type === 'CAPTURE' ? 'capture' : t.type === 'CANCEL' ? 'void' : 'refund';
  const labels = { providerId: provider.id, connectionId: r.connectionId ?? 'none', operation };
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  let result: ProviderResult;
  try {
    result = await provider[operation](input);
    ctx.metrics?.providerCall({ ...labels, outcome: result.outcome }, seconds());
  } catch (err) {
    if (!(err instanceof ProviderUnavailableError)) throw err; // a bug: the transaction stays PENDING past its deadline → reconciliation
    ctx.metrics?.providerCall({ ...labels, outcome: err.kind }, seconds());
    // Sent or not, only the provider knows: the reservation holds, and the reconciliation asks it now.
    await attempts.postpone(ctx.db, t.id, FIRST_LOOKUP_DELAY_MS, false);
    return {
      ok: false,
      unsettled: true,
      transactionId: t.id,
      problem: problem(
        'PROVIDER_UNAVAILABLE',
        `The provider ${t.provider_id ?? ''} did not answer the ${WHAT[t.type as FollowUpType]} (${err.kind}); the operation will be settled. Retry with the same X-Idempotency-Key to learn the outcome.`,
        { headers: { 'Retry-After': '5' } },
      ),
    };
  }
  const { outcome, settlement } = await inPaymentTransaction(ctx.db, t.payment_id, null, async (tx, locked) => {
    // The reconciliation (or a notification) may have settled it meanwhile: settleFollowUp weighs this answer against that.
    const settled = await settleFollowUp(tx, t.id, { kind: 'answered', result }, { locked: locked?.payment });
    const reply = (await followUpOutcome(tx, t.id))!;
    await ctx.complete?.(tx, reply);
    return { outcome: reply, settlement: settled };
  });
  logFollowUpAlert(ctx.log, settlement);
  return outcome;
}

/**
 * What settling a follow-up did: SETTLED (it was PENDING: the answer is recorded), LATE_APPLIED (recorded
 * ERROR, the provider's later word says it went through, and the payment could take it), UNCHANGED (it was
 * settled already and the answer agrees, or adds nothing), CONFLICT (the answer contradicts the record and
 * cannot be applied: money may have moved that the payment does not show). `alert` is what to log: an
 * error for a CONFLICT, a warning for LATE_APPLIED (the merchant had been told otherwise; its event follows).
 */
export interface FollowUpSettlement extends FollowUpReport {
  state: 'SETTLED' | 'LATE_APPLIED' | 'UNCHANGED' | 'CONFLICT';
  detail: string | null;
}

/** Who settles: the request's phase C, the reconciliation, a provider's notification. */
export interface SettleOptions {
  /** The payment, locked by the caller already. */
  locked?: PaymentRow | undefined;
  /**
   * A failure is announced (payment.operation.failed): set by the reconciliation, whose settlement the
   * merchant learns of only so (its request was answered 502). The request's own phase C answers 422 instead.
   */
  announceFailure?: boolean;
}

/** The provider's word as recorded on the follow-up (the merchant's reason stays; out of the reconciliation's queue). */
function recordOf(t: TransactionRow, r: ProviderResult | null): AttemptRecord {
  return {
    status: r ? r.outcome : 'ERROR',
    reason: t.reason,
    response_code: r ? r.responseCode : 'NOT_PROCESSED',
    response_message: r ? r.responseMessage : 'The provider has no record of the operation: it never processed it.',
    provider_data: providerDataOf(t.provider_id, r),
    raw_response: r ? r.rawResponse : null,
    provider_transaction_id: r ? r.providerTransactionId : null,
    merchant_advice_code: r ? r.merchantAdviceCode : null,
    merchant_advice_code_message: r ? r.merchantAdviceCodeMessage : null,
    payment_method: null,
  };
}

/**
 * Phase C, also the reconciliation's and a provider notification's: records the provider's word on a
 * PENDING follow-up with the payment locked. An approval changes the payment as the operation says
 * (history and event); anything else keeps the transaction as a DECLINED/ERROR record and releases its
 * reservation (announced as payment.operation.failed when `announceFailure`). A word on a follow-up
 * settled already (the reconciliation, a notification and the request's own phase C can meet) goes to
 * lateAnswer: an approval of one recorded ERROR is applied if the payment can still take it.
 */
export async function settleFollowUp(tx: Queryable, transactionId: string, answer: FollowUpAnswer, options: SettleOptions = {}): Promise<FollowUpSettlement> {
  let payment = options.locked;
  if (!payment) {
    const found = await attempts.find(tx, transactionId);
    if (!found) return { state: 'UNCHANGED', detail: `no transaction ${transactionId}` };
    payment = await repo.lockPaymentById(tx, found.payment_id);
  }
  // Read (again) under the payment's lock: the reconciliation may have settled it meanwhile.
  const t = await attempts.find(tx, transactionId);
  if (!payment || !t) return { state: 'UNCHANGED', detail: `no transaction ${transactionId}` };
  if (t.status !== 'PENDING') return lateAnswer(tx, payment, t, answer);
  const r = answer.kind === 'answered' ? answer.result : null;
  const settled = await attempts.record(tx, t.id, recordOf(t, r), null);
  if (r?.outcome === 'SUCCEEDED') await apply(tx, payment, settled);
  else if (options.announceFailure) await recordOperationFailedEvent(tx, payment, settled);
  await applyParkedForFollowUp(tx, settled);
  return { state: 'SETTLED', detail: null };
}

/** The reconciliation's settlement of a follow-up: as phase C's, and a failure is announced. */
export const settleFollowUpByReconciliation = (tx: Queryable, transactionId: string, answer: FollowUpAnswer) =>
  settleFollowUp(tx, transactionId, answer, { announceFailure: true });

/** A provider notification about this follow-up may have arrived before its answer: it applies now. */
async function applyParkedForFollowUp(tx: Queryable, settled: TransactionRow & { connection_id?: string | null }): Promise<void> {
  if (!settled.connection_id) return;
  const subject = { id: settled.id, paymentId: settled.payment_id, connectionId: settled.connection_id, providerId: settled.provider_transaction_id || null };
  await applyParkedFor(tx, { connectionId: settled.connection_id }, subject);
}

/**
 * A provider's word on a follow-up settled already (the request's answer after the reconciliation's, or
 * the other way round; a notification after either). Agreeing, or a refusal of what is recorded refused:
 * nothing changes. An approval of a follow-up recorded ERROR (NOT_PROCESSED: the provider had no record
 * when reconciliation asked, and its "not found" became final; or an error answer) means money moved: it
 * is applied as an approval is — transaction SUCCEEDED, the payment changed, history and event — if the
 * payment can still take it (the checks phase A makes: a capture or void of an authorization still
 * uncaptured with nothing in flight; a refund within what is captured and neither refunded nor reserved).
 * Otherwise (the amount was refunded again meanwhile: the shopper got it twice), or against a refusal the
 * provider stated (DECLINED), or a refusal of what is recorded approved: left as recorded, a CONFLICT with
 * an error log for an operator (a refusal of an approved one is undone only by the provider's notification
 * that it failed: provider-notifications/follow-ups.ts).
 */
async function lateAnswer(tx: Queryable, payment: PaymentRow, t: TransactionRow, answer: FollowUpAnswer): Promise<FollowUpSettlement> {
  const what = WHAT[t.type as FollowUpType] ?? t.type.toLowerCase();
  const approved = answer.kind === 'answered' && answer.result.outcome === 'SUCCEEDED';
  const recorded = `${t.status}${t.response_code ? ` (${t.response_code})` : ''}`;
  const conflict = (message: string): FollowUpSettlement => ({ state: 'CONFLICT', detail: message, alert: { message, paymentId: payment.id, transactionId: t.id } });
  if (approved === (t.status === 'SUCCEEDED')) return { state: 'UNCHANGED', detail: `the ${what} is recorded ${recorded} already` };
  if (!approved) return conflict(`the provider ${answer.kind === 'not_processed' ? 'has no record of' : 'refused'} a ${what} recorded SUCCEEDED: left as recorded; check it at the provider`);
  if (t.status !== 'ERROR') return conflict(`the provider approved a ${what} it had refused (recorded ${recorded}): left as recorded; check it at the provider`);
  const transactions = await repo.listTransactions(tx, payment.id);
  const why = cannotTake(payment, transactions, t);
  if (why) return conflict(`the provider approved a ${what} recorded ${recorded} after ${why}: money moved that the payment does not show; check it at the provider`);
  const settled = await attempts.record(tx, t.id, recordOf(t, answer.result), null);
  await apply(tx, payment, settled);
  await applyParkedForFollowUp(tx, settled);
  const message = `the provider approved a ${what} recorded ${recorded}: applied late`;
  return { state: 'LATE_APPLIED', detail: message, alert: { message, paymentId: payment.id, transactionId: t.id } };
}

/** Why the payment can no longer take a late approval of `t`, or null when it can (phase A's checks). */
function cannotTake(payment: PaymentRow, transactions: TransactionRow[], t: TransactionRow): string | null {
  if (t.type === 'CAPTURE' || t.type === 'CANCEL') {
    if (!isUncapturedAuthorization(payment)) return `the payment became ${state(payment)}`;
    const busy = inFlightOnAuthorization(transactions);
    return busy ? `another ${busy.type} (transaction ${busy.id}) was sent` : null;
  }
  const room = subtractDecimal(subtractDecimal(payment.amount_captured, payment.amount_refunded), pendingRefunds(transactions));
  return compareDecimal(t.amount, room) > 0 ? `only ${room} ${payment.currency} was left to refund (refunded or reserved again meanwhile)` : null;
}

/**
 * The payment change an approved follow-up makes, with its history entry and event. An approved capture's
 * `additional_data` completes the payment's here, not before: a refused capture changes nothing.
 */
async function apply(tx: Queryable, payment: PaymentRow, t: AttemptRow): Promise<void> {
  let next: { status: string; subStatus: string; captured?: string; refunded?: string };
  let event: 'payment.captured' | 'payment.canceled' | 'payment.refunded';
  if (t.type === 'CAPTURE') {
    if (t.additional_data) await repo.mergeAdditionalData(tx, payment.id, t.additional_data as Record<string, unknown>);
    const auth = (await repo.listTransactions(tx, payment.id)).find((x) => x.type === 'AUTHORIZE' && x.status === 'SUCCEEDED');
    const full = !auth || compareDecimal(t.amount, auth.amount) === 0;
    next = { status: 'SUCCEEDED', subStatus: full ? 'CAPTURED' : 'PARTIALLY_CAPTURED', captured: t.amount };
    event = 'payment.captured';
  } else if (t.type === 'CANCEL') {
    next = { status: 'CANCELED', subStatus: 'CANCELED' };
    event = 'payment.canceled';
  } else {
    const refunded = addDecimal(payment.amount_refunded, t.amount);
    // A refund approved while a chargeback opened meanwhile: the money moved, the dispute keeps the status
    // (and a won dispute counts it: disputes.ts decideChargeback).
    const refundable = payment.status === 'SUCCEEDED' || payment.status === 'REFUNDED';
    next = refundable ? { ...refundedState(payment.amount_captured, refunded), refunded } : { status: payment.status, subStatus: payment.sub_status, refunded };
    event = 'payment.refunded';
  }
  const updated = await repo.movePayment(tx, payment.id, next, { transactionId: t.id, transactionStatus: t.status, reason: t.reason });
  await recordPaymentOutcome(tx, updated, event);
}

/**
 * The reply a follow-up's request gets once it is settled, from the database: the payment after an
 * approval, 422 PROVIDER_DECLINED after a refusal; null while it is PENDING. The request's own phase C
 * and the idempotency recoverer of `transaction:<id>` both answer with it.
 */
export async function followUpOutcome(db: Queryable, transactionId: string): Promise<LifecycleOutcome | null> {
  // One read: the payment with every transaction, this one among them.
  const found = await repo.findPaymentOfTransaction(db, transactionId);
  const t = found?.transactions.find((x) => x.id === transactionId);
  if (!found || !t || t.status === 'PENDING') return null;
  const what = WHAT[t.type as FollowUpType] ?? t.type.toLowerCase();
  if (t.status !== 'SUCCEEDED') {
    const detail =
      t.response_code === 'NOT_PROCESSED'
        ? `The provider did not process the ${what}: it never answered, and has no record of it. The payment is unchanged.`
        : `The provider refused the ${what}: ${t.response_code} (${t.response_message}). The payment is unchanged.`;
    return refuse(problem('PROVIDER_DECLINED', detail, { messages: [`${t.response_code}: ${t.response_message}`] }));
  }
  return { ok: true, payment: toApiPayment(found.payment, found.transactions, null, { rawResponse: false }) };
}

async function run(ctx: LifecycleContext, reserved: Checked<Reservation>): Promise<LifecycleOutcome> {
  if (!reserved.ok) return reserved;
  return send(ctx, reserved.value);
}

export async function capturePayment(ctx: LifecycleContext, paymentId: string, transactionId: string, body: Details & { amount?: Amount }): Promise<LifecycleOutcome> {
  return run(ctx, await reserveOn(ctx, paymentId, transactionId, reserveCapture(ctx, body)));
}

export async function cancelPayment(ctx: LifecycleContext, paymentId: string, transactionId: string, body: Details): Promise<LifecycleOutcome> {
  return run(ctx, await reserveOn(ctx, paymentId, transactionId, reserveVoid(ctx, body)));
}

/**
 * A refund's reason as recorded: Yuno's `REVERSE` (reverse split recipients' funds) is treated as
 * REQUESTED_BY_CUSTOMER (RefundRequest: there are no split recipients), so a refund records that, and a
 * cancel-or-refund that voids records no reason a void cannot have (CancelRequest has no REVERSE).
 */
function refundReason<T extends Details>(body: T): T {
  return body.reason === 'REVERSE' ? { ...body, reason: 'REQUESTED_BY_CUSTOMER' } : body;
}

export async function refundPayment(ctx: LifecycleContext, paymentId: string, transactionId: string, body: Details & { amount?: Amount }): Promise<LifecycleOutcome> {
  return run(ctx, await reserveOn(ctx, paymentId, transactionId, reserveRefund(ctx, refundReason(body))));
}

/** Undoes the payment as its state allows: voids an uncaptured authorization, refunds captured money. */
export async function cancelOrRefundPayment(ctx: LifecycleContext, paymentId: string, given: Details & { amount?: Amount }): Promise<LifecycleOutcome> {
  const body = refundReason(given);
  const reserved = await reserveOn(ctx, paymentId, null, async (tx, payment, transactions) => {
    if (isUncapturedAuthorization(payment)) {
      const auth = transactions.find((t) => t.type === 'AUTHORIZE' && t.status === 'SUCCEEDED');
      if (!auth) return invalidStatus(`The payment is ${state(payment)} without a successful authorization.`);
      // A void releases the whole authorization; an amount, if given, must say so.
      const amount = amountWithin(payment, body.amount, auth.amount, 'cancel');
      if (!amount.ok) return amount;
      if (compareDecimal(amount.value, auth.amount) !== 0) {
        return refuse(
          problem('INVALID_AMOUNT', `An authorization is canceled whole (${auth.amount} ${payment.currency}); capture it first to refund part of it.`, {
            errors: [{ path: '/body/amount/value', message: `must be ${auth.amount} or absent` }],
          }),
        );
      }
      return reserveVoid(ctx, body)(tx, payment, transactions, auth);
    }
    const charged = [...transactions].reverse().find((t) => (t.type === 'CAPTURE' || t.type === 'PURCHASE') && t.status === 'SUCCEEDED');
    if (!charged) return invalidStatus(`The payment is ${state(payment)}: nothing is authorized or captured.`);
    return reserveRefund(ctx, body)(tx, payment, transactions, charged);
  });
  return run(ctx, reserved);
}

/**
 * Deferred idempotency's recoverer for resources 'transaction:<id>' (capture, cancel, refund,
 * cancel-or-refund): the settled reply of the follow-up, or null while it is PENDING (the retry gets 409
 * REQUEST_IN_PROCESS until the reconciliation settles it).
 */
export async function followUpRecoverer(
  db: Queryable,
  target: { organizationId: string; operationId: string; id: string },
): Promise<{ status: number; body?: unknown; headers?: Record<string, string> } | null> {
  const outcome = await followUpOutcome(db, target.id);
  if (!outcome) return null;
  if (outcome.ok) return { status: target.operationId === 'cancelOrRefundPayment' ? 201 : 200, body: outcome.payment };
  return outcome.problem;
}
