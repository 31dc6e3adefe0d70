/**
 * The reconciliation worker (docs/design.md "Reconciliation"): settles every provider transaction whose
 * outcome is unknown — an attempt whose call timed out or broke, one whose caller died mid-call (PENDING
 * past its deadline), and the lifecycle's follow-ups (capture, cancel, refund) in the same state.
 *
 * Claims take what is due (a lease: several instances share the queue, FOR UPDATE SKIP LOCKED), fairly
 * across organizations (at most `perOrganization` claimed at once over every instance, round robin: see
 * repository.claimDue), into this instance's `concurrency` slots; each claimed transaction is worked in its
 * slot, concurrently with the others (a payment's own transactions one after the other, in creation
 * order), and a slot is refilled as soon as it frees. The worker asks each provider `lookup(reference)`
 * OUTSIDE any transaction, waiting at most the service's PROVIDER_LOOKUP_TIMEOUT_MS (never the
 * connection's merchant-set timeout_ms), then settles in a short transaction with the payment locked:
 * A payment whose last attempt in flight settles without an approval ends DECLINED / ERROR. An approval is
 * only taken once no other attempt of its payment is in flight (the route's own phase C decides first).
 * Lookups that fail back off exponentially per transaction (the count is stored on it and taken at claim
 * time, so a lookup that never reports backs off too). So one organization whose lookups hang holds at
 * most its cap of slots for one lookup timeout each, then waits out its back-off, and everyone else's
 * transactions are looked up as if it were not there. The backlog (count, oldest age) goes to metrics.
 */
import type { Queryable } from '../db/database.js';
import { reserveOf } from '../db/fair-claim.js';
import type { Logger } from '../platform/logger.js';
import { ProviderUnavailableError, type ConnectionContext, type FollowUpLookup, type PaymentProvider, type ProviderLookup, type ProviderResult } from '../providers/provider.js';
import type { Orchestration } from './orchestrator.js';
import { orchestrationRepository as repo, type DueTransaction } from './repository.js';
import { reversalReference } from './reversals.js';
import { isAttempt, knownApprovalOf, NOT_FOUND_SETTLE_MS, reversedRecord, settleFoundOutcome, type FoundDecision } from './settle.js';

/** A follow-up transaction's type → the operation a provider's lookup is told (FollowUpLookup). */
const FOLLOW_UP_OPERATIONS: Readonly<Record<string, FollowUpLookup['operation']>> = { CAPTURE: 'CAPTURE', CANCEL: 'VOID', REFUND: 'REFUND' };

/** A provider's word on a lifecycle follow-up, for its settlement (payments/lifecycle.ts settleFollowUp). */
export type FollowUpAnswer = { kind: 'answered'; result: ProviderResult } | { kind: 'not_processed' };
/** What settling a follow-up reports (payments/lifecycle.ts FollowUpSettlement): its state and what to log. */
export interface FollowUpReport {
  state: string;
  alert?: { message: string; paymentId: string; transactionId: string };
}

/** Settles a follow-up; its report's alert is logged (logFollowUpAlert). */
export type FollowUpSettler = (tx: Queryable, transactionId: string, answer: FollowUpAnswer) => Promise<FollowUpReport | void>;

/**
 * A follow-up settlement's alert, logged once its transaction committed: an error when the answer
 * contradicts a record it cannot change (CONFLICT), a warning when it applied an approval of a follow-up
 * recorded as not done. Shared by the request's phase C and the reconciliation.
 */
export function logFollowUpAlert(log: Pick<Logger, 'warn' | 'error'> | undefined, report: FollowUpReport | void, context: Record<string, unknown> = {}): void {
  if (!report?.alert || !log) return;
  const about = { ...context, paymentId: report.alert.paymentId, transactionId: report.alert.transactionId };
  if (report.state === 'CONFLICT') log.error(about, report.alert.message);
  else log.warn(about, report.alert.message);
}

export interface ReconciliationOptions {
  orchestration: Orchestration;
  log: Logger;
  /** Wait between claims when nothing was due. */
  intervalMs: number;
  /**
   * How long a reconciliation call to a provider (lookup, void of a late approval) waits for its answer:
   * the service's bound (PROVIDER_LOOKUP_TIMEOUT_MS), whatever timeout_ms the merchant gave the connection.
   */
  lookupTimeoutMs: number;
  /** Transactions worked at once on this instance (default 8). */
  concurrency?: number;
  /** Transactions of one organization claimed at once, over every instance (default 4). */
  perOrganization?: number;
  /** How long a claimed transaction stays with this worker before another may take it (default 4 lookup timeouts + 10 s: 30 s). */
  leaseMs?: number;
  /** A follow-up PENDING without a reconcile time is due this long after it was created (its call's longest timeout and more). */
  followUpGraceMs?: number;
  /**
   * How long after a transaction's creation a "not found" lookup is final at a provider whose lookup does
   * not close the reference (default NOT_FOUND_SETTLE_MS, 15 minutes; config RECONCILIATION_NOT_FOUND_SETTLE_MS).
   */
  notFoundSettleMs?: number;
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** Settles a follow-up (capture, cancel, refund); without it follow-ups are left to a later version. */
  settleFollowUp?: FollowUpSettler;
}

export interface ReconciliationResult {
  /** Transactions settled by this call's claims. */
  settled: number;
  /** Transactions asked again later (lookup or void failed, or the payment's route still running). */
  postponed: number;
}

type Step = 'settled' | 'postponed';

export const DEFAULT_RECONCILIATION_CONCURRENCY = 8;
export const DEFAULT_RECONCILIATION_PER_ORGANIZATION = 4;

export class ReconciliationWorker {
  private timer: NodeJS.Timeout | undefined;
  private started = false;
  /** Claims never overlap within an instance (the free slots they fill are counted here). */
  private filling: Promise<unknown> = Promise.resolve();
  /** Work in the slots: one promise per payment claimed, `busy` transactions in all. */
  private readonly inFlight = new Set<Promise<Step[]>>();
  private busy = 0;
  private readonly concurrency: number;
  private readonly perOrganization: number;
  private readonly leaseMs: number;
  private readonly followUpGraceMs: number;
  private readonly notFoundSettleMs: number;
  private readonly baseBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly lookupTimeoutMs: number;

  constructor(private readonly options: ReconciliationOptions) {
    this.lookupTimeoutMs = options.lookupTimeoutMs;
    this.concurrency = options.concurrency ?? DEFAULT_RECONCILIATION_CONCURRENCY;
    this.perOrganization = options.perOrganization ?? DEFAULT_RECONCILIATION_PER_ORGANIZATION;
    // Two transactions of one payment, each a lookup and a void within the lookup timeout, and room to
    // record them. Short, because a dead instance's claims count against their organization's cap until then.
    this.leaseMs = options.leaseMs ?? 4 * this.lookupTimeoutMs + 10_000;
    this.followUpGraceMs = options.followUpGraceMs ?? 90_000;
    this.notFoundSettleMs = options.notFoundSettleMs ?? NOT_FOUND_SETTLE_MS;
    this.baseBackoffMs = options.baseBackoffMs ?? 1_000;
    this.maxBackoffMs = options.maxBackoffMs ?? 5 * 60_000;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.schedule(this.options.intervalMs);
  }

  /** Stops claiming and waits for the work in the slots to end (each call within the lookup timeout). */
  async stop(): Promise<void> {
    this.started = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.filling.catch(() => undefined);
    await Promise.all([...this.inFlight].map((w) => w.catch(() => undefined)));
  }

  /**
   * Claims what is due into the free slots and resolves once that work is done (tests and tooling call
   * it). Claims never overlap; a call does not wait for slots an earlier call still holds.
   */
  async runOnce(): Promise<ReconciliationResult> {
    const claimed = await this.fill();
    const steps = (await Promise.all(claimed)).flat();
    await this.reportBacklog();
    return { settled: steps.filter((s) => s === 'settled').length, postponed: steps.filter((s) => s === 'postponed').length };
  }

  /** Claims until nothing is due and no slot is busy (or `maxPasses`): what a test waits for after a crash. */
  async drain(maxPasses = 50): Promise<void> {
    for (let i = 0; i < maxPasses; i++) {
      const r = await this.runOnce();
      if (r.settled + r.postponed > 0) continue;
      if (this.inFlight.size === 0) return;
      await Promise.race([...this.inFlight].map((w) => w.catch(() => undefined)));
    }
  }

  private schedule(delayMs: number): void {
    if (!this.started) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), delayMs);
    this.timer.unref();
  }

  /** The background loop: fill the free slots; each slot that frees asks for a refill at once. */
  private async tick(): Promise<void> {
    this.timer = undefined;
    try {
      const claimed = await this.fill();
      for (const work of claimed) void work.then(() => this.schedule(0), () => this.schedule(0));
      if (claimed.length === 0) await this.reportBacklog();
    } catch (err) {
      this.options.log.error({ err }, 'reconciliation claim failed');
    }
    if (!this.timer) this.schedule(this.options.intervalMs); // unless a slot that freed meanwhile asked for a refill
  }

  private fill(): Promise<Promise<Step[]>[]> {
    const run = this.filling.catch(() => undefined).then(() => this.claimAndStart());
    this.filling = run;
    return run;
  }

  private async claimAndStart(): Promise<Promise<Step[]>[]> {
    const free = this.concurrency - this.busy;
    if (free <= 0) return [];
    const o = this.options.orchestration;
    const due = await o.db.transaction((tx) =>
      repo.claimDue(tx, { limit: free, leaseMs: this.leaseMs, followUpGraceMs: this.followUpGraceMs, perOrganization: this.perOrganization, reserve: reserveOf(this.concurrency) }),
    );
    // A payment's transactions one after the other, in creation order (claimDue's): its earlier approval is taken first.
    const byPayment = new Map<string, DueTransaction[]>();
    for (const t of due) byPayment.set(t.payment_id, [...(byPayment.get(t.payment_id) ?? []), t]);
    return [...byPayment.values()].map((group) => {
      this.busy += group.length;
      const work: Promise<Step[]> = this.workThrough(group).finally(() => {
        this.busy -= group.length;
        this.inFlight.delete(work);
      });
      this.inFlight.add(work);
      return work;
    });
  }

  private async workThrough(group: DueTransaction[]): Promise<Step[]> {
    const steps: Step[] = [];
    for (const t of group) {
      try {
        steps.push(await this.reconcile(t));
      } catch (err) {
        this.options.log.error({ err, transactionId: t.id }, 'reconciliation of a transaction failed');
        await repo.backOff(this.options.orchestration.db, t.id, this.backoff).catch(() => undefined);
        steps.push('postponed');
      }
    }
    return steps;
  }

  private async reportBacklog(): Promise<void> {
    const o = this.options.orchestration;
    const backlog = await repo.backlog(o.db, this.followUpGraceMs);
    o.metrics.reconciliationBacklog(backlog.count, backlog.oldestAgeSeconds);
  }

  private get backoff(): { baseMs: number; maxMs: number } {
    return { baseMs: this.baseBackoffMs, maxMs: this.maxBackoffMs };
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
      await repo.postpone(o.db, t.id, this.maxBackoffMs, true);
      return 'postponed';
    }
    const opened = t.connection_id ? await o.routing.openConnection(o.db, t.organization_id, t.connection_id) : undefined;
    // The connection's credentials, with the service's timeout: its timeout_ms is the merchant's to set.
    const connection: ConnectionContext | undefined = opened ? { ...opened.context, timeoutMs: this.lookupTimeoutMs } : undefined;
    // An approval already recorded (notified, or found before and its reversal failed) is settled from its
    // record, never looked up (settle.ts knownApprovalOf).
    const known = isAttempt(t) ? knownApprovalOf(t) : null;
    if (known) return this.settleAttempt(t, provider, { found: true, result: known, voided: false }, connection);
    const lookupOf = provider.lookup?.bind(provider);
    if (!lookupOf) throw new Error(`provider ${provider.id} cannot be asked for an operation's outcome`);
    // A follow-up is looked up with what it was sent for: a provider that cannot search follow-ups by our
    // reference (Mercado Pago) sends it again under the same idempotency key; the others ignore it.
    const followUp = isAttempt(t) ? undefined : await this.followUpOf(t);
    const lookup = await this.ask(provider, t, 'lookup', () => lookupOf({ reference: t.id, ...(connection ? { connection } : {}), ...(followUp ? { followUp } : {}) }));
    if (!lookup) {
      await repo.backOff(o.db, t.id, this.backoff);
      return 'postponed';
    }
    if (!lookup.found && !this.notFoundIsFinal(provider, t)) {
      // "Not found" at a provider that keeps the reference open may be "not yet" (a lagging search, a
      // payment still processing): asked again, the transaction PENDING; whatever its payment did meanwhile stands.
      this.options.log.info({ transactionId: t.id, providerId: provider.id }, 'the provider shows nothing under the reference yet; asked again until the settle window has passed');
      await repo.backOff(o.db, t.id, this.backoff);
      return 'postponed';
    }
    if (!isAttempt(t)) {
      const answer: FollowUpAnswer = lookup.found ? { kind: 'answered', result: lookup.result } : { kind: 'not_processed' };
      const settlement = await o.db.transaction((tx) => this.options.settleFollowUp!(tx, t.id, answer));
      // Settled meanwhile (the request's own answer, a notification): a contradicting answer is reported.
      logFollowUpAlert(this.options.log, settlement, { providerId: provider.id });
      return 'settled';
    }
    return this.settleAttempt(t, provider, lookup, connection);
  }

  /**
   * Whether "not found" means "never": at once where the lookup closed the reference at the provider;
   * elsewhere once the settle window since the transaction's creation has passed (a call sent then and still
   * unknown to the provider is taken as lost).
   */
  private notFoundIsFinal(provider: PaymentProvider, t: DueTransaction): boolean {
    if (provider.lookupClosesReference === true) return true;
    const created = Date.parse(t.created_at);
    return Number.isFinite(created) && Date.now() - created >= this.notFoundSettleMs;
  }

  /** The operation, target, amount and currency of a follow-up (lookup's `followUp`); undefined when its target is not found. */
  private async followUpOf(t: DueTransaction): Promise<FollowUpLookup | undefined> {
    const operation = FOLLOW_UP_OPERATIONS[t.type];
    const target = operation ? await repo.followUpTarget(this.options.orchestration.db, t.id) : undefined;
    if (!operation || !target) return undefined;
    return { operation, providerTransactionId: target.provider_transaction_id, amount: t.amount, currency: target.currency };
  }

  private async settleAttempt(t: DueTransaction, provider: PaymentProvider, lookup: ProviderLookup, connection: ConnectionContext | undefined): Promise<Step> {
    const o = this.options.orchestration;
    const decision = await o.db.transaction(async (tx): Promise<FoundDecision> => {
      const payment = (await o.payments.lockPaymentToSettle(tx, t.payment_id))!;
      const current = await repo.find(tx, t.id);
      if (!current || current.status !== 'PENDING') return { then: 'done' }; // settled meanwhile (its call's phase C)
      return settleFoundOutcome(o.payments, tx, payment, current, lookup);
    });
    if (decision.then === 'done') return 'settled';
    if (decision.then === 'wait') {
      await repo.postpone(o.db, t.id, this.baseBackoffMs, true);
      return 'postponed';
    }
    // The payment succeeded elsewhere or ended: the late approval is voided at its provider, under the
    // reference of this reversal (a new one after each reversal the provider reported failed: reversals.ts).
    const { payment, approval, failedBefore } = decision;
    const voided = await this.ask(provider, t, 'void', () =>
      provider.void({
        providerTransactionId: approval.providerTransactionId,
        amount: t.amount,
        currency: payment.currency,
        reference: reversalReference(t.id, failedBefore),
        ...(connection ? { connection } : {}),
      }),
    );
    if (!voided || voided.outcome !== 'SUCCEEDED') {
      if (voided) this.options.log.error({ transactionId: t.id, responseCode: voided.responseCode }, 'the provider refused to void a late approval');
      await repo.backOff(o.db, t.id, this.backoff);
      return 'postponed';
    }
    await o.db.transaction(async (tx) => {
      await o.payments.lockPaymentById(tx, t.payment_id);
      const current = await repo.find(tx, t.id);
      // Accepted by the provider: reversed. Its later notification may still say the reversal failed
      // (payments/provider-notifications/reversals.ts), which makes the attempt PENDING here again.
      if (current?.status === 'PENDING' && current.reversals_failed === failedBefore) await repo.record(tx, t.id, reversedRecord(t, approval), null);
    });
    return 'settled';
  }

  /**
   * A call to the provider for reconciliation, measured; null when the provider could not be asked now.
   * Cut at the lookup timeout even if the adapter does not honour the one it was given (then TIMEOUT).
   */
  private async ask<T>(provider: PaymentProvider, t: DueTransaction, operation: string, run: () => Promise<T>): Promise<T | null> {
    const o = this.options.orchestration;
    const started = performance.now();
    const labels = { providerId: provider.id, connectionId: t.connection_id ?? 'none', operation };
    try {
      const out = await withinDeadline(run(), this.lookupTimeoutMs, () => new ProviderUnavailableError(provider.id, 'TIMEOUT', `${provider.id} did not answer the ${operation} in time`));
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

/** The call's outcome, or `late()` thrown once `ms` have passed (the call itself is left to end on its own). */
function withinDeadline<T>(call: Promise<T>, ms: number, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), ms);
    timer.unref();
  });
  call.catch(() => undefined); // abandoned past the deadline: its failure is nobody's to handle
  return Promise.race([call, deadline]).finally(() => clearTimeout(timer));
}

export { derivedReference } from './reversals.js';
