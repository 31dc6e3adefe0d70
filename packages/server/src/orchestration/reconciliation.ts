/**
 * The reconciliation worker (docs/design.md "Reconciliation"): settles every provider transaction whose
 * outcome is unknown — an attempt whose call timed out or broke, one whose caller died mid-call (PENDING
 * past its deadline), and the lifecycle's follow-ups (capture, cancel, refund) in the same state.
 *
 * Each pass claims what is due (a lease: several instances share the queue, FOR UPDATE SKIP LOCKED), asks
 * each provider `lookup(reference)` OUTSIDE any transaction, then settles in a short transaction with the
 * payment locked:
 *   - not found: the attempt never reached the provider (and it will refuse the reference from now on):
 *     ERROR, nothing charged;
 *   - declined / error: recorded as the provider answered;
 *   - approved, and the payment is still undecided with no other approval: the payment takes it
 *     (SUCCEEDED through that provider, history and event as usual);
 *   - approved while the payment succeeded elsewhere or ended: the approval is VOIDED at the provider
 *     (outside the transaction, idempotent reference) and recorded CANCELED / LATE_APPROVAL_REVERSED.
 * A payment whose last attempt in flight settles without an approval ends DECLINED / ERROR. An approval is
 * only taken once no other attempt of its payment is in flight (the route's own phase C decides first).
 * Lookups that fail back off exponentially. The backlog (count, oldest age) goes to metrics after each pass.
 */
import { createHash } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import { paymentsRepository as payments, type PaymentRow } from '../payments/repository.js';
import type { Logger } from '../platform/logger.js';
import { ProviderUnavailableError, type PaymentProvider, type ProviderLookup, type ProviderResult } from '../providers/provider.js';
import type { Orchestration } from './orchestrator.js';
import { orchestrationRepository as repo, type DueTransaction } from './repository.js';
import {
  answeredRecord,
  concludeWithoutApproval,
  isAttempt,
  isUndecided,
  notProcessedRecord,
  reversedRecord,
  takeApproval,
  withAuthorization,
} from './settle.js';

/** A provider's word on a lifecycle follow-up, for its settlement (payments/lifecycle.ts settleFollowUp). */
export type FollowUpAnswer = { kind: 'answered'; result: ProviderResult } | { kind: 'not_processed' };
export type FollowUpSettler = (tx: Queryable, transactionId: string, answer: FollowUpAnswer) => Promise<void>;

export interface ReconciliationOptions {
  orchestration: Orchestration;
  log: Logger;
  /** Wait between passes when nothing was due. */
  intervalMs: number;
  batchSize?: number;
  /** How long a claimed transaction stays with this worker before another may take it. */
  leaseMs?: number;
  /** A follow-up PENDING without a reconcile time is due this long after it was created (its call's longest timeout and more). */
  followUpGraceMs?: number;
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** Settles a follow-up (capture, cancel, refund); without it follow-ups are left to a later version. */
  settleFollowUp?: FollowUpSettler;
}

export interface ReconciliationResult {
  /** Transactions settled in this pass. */
  settled: number;
  /** Transactions asked again later (lookup or void failed, or the payment's route still running). */
  postponed: number;
}

type Step = 'settled' | 'postponed';

export class ReconciliationWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<ReconciliationResult> | undefined;
  private started = false;
  private readonly batchSize: number;
  private readonly leaseMs: number;
  private readonly followUpGraceMs: number;
  private readonly baseBackoffMs: number;
  private readonly maxBackoffMs: number;

  constructor(private readonly options: ReconciliationOptions) {
    this.batchSize = options.batchSize ?? 20;
    this.leaseMs = options.leaseMs ?? 60_000;
    this.followUpGraceMs = options.followUpGraceMs ?? 90_000;
    this.baseBackoffMs = options.baseBackoffMs ?? 1_000;
    this.maxBackoffMs = options.maxBackoffMs ?? 5 * 60_000;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.schedule(this.options.intervalMs);
  }

  async stop(): Promise<void> {
    this.started = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** One pass over what is due now (tests and tooling call it directly); passes never overlap. */
  runOnce(): Promise<ReconciliationResult> {
    const pass = (this.running ?? Promise.resolve()).catch(() => undefined).then(() => this.pass());
    this.running = pass;
    void pass.catch(() => undefined).finally(() => {
      if (this.running === pass) this.running = undefined;
    });
    return pass;
  }

  /** Passes until nothing is due (or `maxPasses`): what a test waits for after a crash. */
  async drain(maxPasses = 50): Promise<void> {
    for (let i = 0; i < maxPasses; i++) {
      const r = await this.runOnce();
      if (r.settled + r.postponed === 0) return;
    }
  }

  private schedule(delayMs: number): void {
    if (!this.started) return;
    this.timer = setTimeout(() => {
      this.runOnce().then(
        (r) => this.schedule(r.settled > 0 ? 0 : this.options.intervalMs),
        (err: unknown) => {
          this.options.log.error({ err }, 'reconciliation pass failed');
          this.schedule(this.options.intervalMs);
        },
      );
    }, delayMs);
    this.timer.unref();
  }

  private async pass(): Promise<ReconciliationResult> {
    const { orchestration: o, log } = this.options;
    const due = await repo.claimDue(o.db, this.batchSize, this.leaseMs, this.followUpGraceMs);
    const result: ReconciliationResult = { settled: 0, postponed: 0 };
    for (const t of due) {
      let step: Step;
      try {
        step = await this.reconcile(t);
      } catch (err) {
        log.error({ err, transactionId: t.id }, 'reconciliation of a transaction failed');
        await repo.postpone(o.db, t.id, this.backoff(t), true).catch(() => undefined);
        step = 'postponed';
      }
      result[step] += 1;
    }
    const backlog = await repo.backlog(o.db, this.followUpGraceMs);
    o.metrics.reconciliationBacklog(backlog.count, backlog.oldestAgeSeconds);
    return result;
  }

  private backoff(t: DueTransaction): number {
    return Math.min(this.baseBackoffMs * 2 ** Math.min(t.reconcile_attempts, 20), this.maxBackoffMs);
  }

  private async reconcile(t: DueTransaction): Promise<Step> {
    const o = this.options.orchestration;
    const provider = t.provider_id ? o.providers.get(t.provider_id) : undefined;
    if (!provider) {
      // A provider this service does not run (a sandbox one outside sandbox mode): it cannot be asked. The
      // attempt stays PENDING, asked again at the longest back-off, in case the service runs it again.
      this.options.log.warn(
        { event: 'reconciliation_provider_not_available', transactionId: t.id, providerId: t.provider_id },
        'reconciliation cannot ask a provider this service does not run (the sandbox providers exist in sandbox mode only); the transaction stays pending',
      );
      await repo.postpone(o.db, t.id, this.maxBackoffMs, true);
      return 'postponed';
    }
    if (!isAttempt(t) && !this.options.settleFollowUp) {
      await repo.postpone(o.db, t.id, this.maxBackoffMs, false);
      return 'postponed';
    }
    const connection = t.connection_id ? await o.routing.openConnection(o.db, t.organization_id, t.connection_id) : undefined;
    const lookupOf = provider.lookup?.bind(provider);
    if (!lookupOf) throw new Error(`provider ${provider.id} cannot be asked for an operation's outcome`);
    const lookup = await this.ask(provider, t, 'lookup', () => lookupOf({ reference: t.id, ...(connection ? { connection: connection.context } : {}) }));
    if (!lookup) {
      await repo.postpone(o.db, t.id, this.backoff(t), true);
      return 'postponed';
    }
    if (!isAttempt(t)) {
      const answer: FollowUpAnswer = lookup.found ? { kind: 'answered', result: lookup.result } : { kind: 'not_processed' };
      await o.db.transaction((tx) => this.options.settleFollowUp!(tx, t.id, answer));
      return 'settled';
    }
    return this.settleAttempt(t, provider, lookup, connection?.context);
  }

  private async settleAttempt(t: DueTransaction, provider: PaymentProvider, lookup: ProviderLookup, connection: Parameters<PaymentProvider['void']>[0]['connection']): Promise<Step> {
    const o = this.options.orchestration;
    type Decision = { then: 'done' } | { then: 'wait' } | { then: 'void'; payment: PaymentRow; approval: ProviderResult };
    const decision = await o.db.transaction(async (tx): Promise<Decision> => {
      const payment = (await payments.lockPaymentById(tx, t.payment_id))!;
      const current = await repo.find(tx, t.id);
      if (!current || current.status !== 'PENDING') return { then: 'done' }; // settled meanwhile (its call's phase C)
      if (!lookup.found) {
        await repo.record(tx, t.id, notProcessedRecord(t), null);
        await concludeWithoutApproval(tx, payment, vaultedTokenOf(payment));
        return { then: 'done' };
      }
      const r = lookup.result;
      if (lookup.voided || r.outcome !== 'SUCCEEDED') {
        await repo.record(tx, t.id, lookup.voided && r.outcome === 'SUCCEEDED' ? reversedRecord(t, r) : answeredRecord(t, r), null);
        await concludeWithoutApproval(tx, payment, vaultedTokenOf(payment));
        return { then: 'done' };
      }
      const attempts = (await repo.transactionsOf(tx, t.payment_id)).filter((a) => isAttempt(a) && a.id !== t.id);
      // The payment's route is still running (another attempt's call is in flight): it decides first.
      if (attempts.some((a) => a.in_flight)) return { then: 'wait' };
      if (isUndecided(payment) && !attempts.some((a) => a.status === 'SUCCEEDED')) {
        const paymentMethod = withAuthorization(payment.payment_method, r);
        const approved = await repo.record(tx, t.id, answeredRecord(t, r, withAuthorization(current.payment_method, r)), null);
        await takeApproval(tx, payment, approved, paymentMethod, vaultedTokenOf(payment));
        return { then: 'done' };
      }
      return { then: 'void', payment, approval: r };
    });
    if (decision.then === 'done') return 'settled';
    if (decision.then === 'wait') {
      await repo.postpone(o.db, t.id, this.baseBackoffMs, false);
      return 'postponed';
    }
    // The payment succeeded elsewhere or ended: the late approval is voided at its provider.
    const { payment, approval } = decision;
    const voided = await this.ask(provider, t, 'void', () =>
      provider.void({
        providerTransactionId: approval.providerTransactionId,
        amount: t.amount,
        currency: payment.currency,
        reference: derivedReference('void', t.id),
        ...(connection ? { connection } : {}),
      }),
    );
    if (!voided || voided.outcome !== 'SUCCEEDED') {
      if (voided) this.options.log.error({ transactionId: t.id, responseCode: voided.responseCode }, 'the provider refused to void a late approval');
      await repo.postpone(o.db, t.id, this.backoff(t), true);
      return 'postponed';
    }
    await o.db.transaction(async (tx) => {
      await payments.lockPaymentById(tx, t.payment_id);
      const current = await repo.find(tx, t.id);
      if (current?.status === 'PENDING') await repo.record(tx, t.id, reversedRecord(t, approval), null);
    });
    return 'settled';
  }

  /** A call to the provider for reconciliation, measured; null when the provider could not be asked now. */
  private async ask<T>(provider: PaymentProvider, t: DueTransaction, operation: string, run: () => Promise<T>): Promise<T | null> {
    const o = this.options.orchestration;
    const started = performance.now();
    const labels = { providerId: provider.id, connectionId: t.connection_id ?? 'none', operation };
    try {
      const out = await run();
      const outcome = (out as { outcome?: ProviderResult['outcome'] }).outcome ?? 'SUCCEEDED';
      o.metrics.providerCall({ ...labels, outcome }, (performance.now() - started) / 1000);
      return out;
    } catch (err) {
      if (!(err instanceof ProviderUnavailableError)) throw err;
      o.metrics.providerCall({ ...labels, outcome: err.kind }, (performance.now() - started) / 1000);
      this.options.log.warn({ transactionId: t.id, providerId: provider.id, kind: err.kind, operation }, 'reconciliation could not reach the provider');
      return null;
    }
  }
}

const vaultedTokenOf = (p: PaymentRow) => (p.payment_method as { vaulted_token?: string | null } | null)?.vaulted_token ?? null;

/** A stable idempotency reference (UUID-shaped) for an operation derived from a transaction: the same on every retry. */
export function derivedReference(purpose: string, transactionId: string): string {
  const h = createHash('sha256').update(`${purpose}:${transactionId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
