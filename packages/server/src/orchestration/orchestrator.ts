/**
 * The payment orchestrator (docs/design.md "Orchestration"): walks a payment's route, one provider attempt
 * at a time, with every provider call outside any database transaction.
 *
 *   Phase A (the caller's short transaction): the payment and attempt 1 (PENDING, naming provider and
 *     connection, reference = its id, a deadline) are recorded, the idempotency record bound. Commit.
 *   Phase B: the call, through the attempt's connection and its timeout; card data only in memory.
 *   Phase C (one short transaction, payment row locked): the answer is recorded on the attempt and the
 *     failover table decides: approved → the payment takes it; hard decline → DECLINED, nobody else is
 *     asked; soft failure or unknown outcome → the next step's attempt is inserted in the same transaction,
 *     committed, and called (phase B again); no step left → ERROR / DECLINED, or PENDING / IN_PROCESS while
 *     an earlier attempt's outcome is unknown (reconciliation decides: it may have been charged there).
 *
 * Steps whose connection's circuit is open are skipped (circuit-breaker.ts); when every step of a route is
 * open, the one whose cool-down ends first is tried anyway as its probe rather than refusing the payment.
 */
import type { Database, Queryable } from '../db/database.js';
import type { PaymentRow, PaymentWithTransactions } from '../db/payment-rows.js';
import type { OrchestrationMetrics, ProviderCallOutcome } from '../platform/metrics.js';
import { ProviderUndecidedError, ProviderUnavailableError, type Charge, type PaymentProvider, type ProviderResult } from '../providers/provider.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { PaymentFacts, RoutePlan, RouteStep, UsableConnection } from '../routing/plan.js';
import type { CallHealth, CircuitBreaker } from './circuit-breaker.js';
import { failoverDecision, failoverReason, movesOn, type AttemptAnswer } from './failover.js';
import type { PaymentPort } from './payment-port.js';
import { orchestrationRepository as repo, type AttemptRow } from './repository.js';
import { answeredRecord, concludeWithoutApproval, isUndecided, NOTIFIED_APPROVAL, unansweredRecord } from './settle.js';

/** What the orchestrator needs from routing (routing/service.ts, routing/connections.ts). */
export interface RoutingPort {
  planRoute(db: Queryable, organizationId: string, facts: PaymentFacts): Promise<RoutePlan | null>;
  /** The connection ready for a call (credentials opened), or undefined when the organization has none such. */
  openConnection(db: Queryable, organizationId: string, connectionId: string): Promise<UsableConnection | undefined>;
  /** The payment's `routing_rules` for a plan. */
  routingRulesOf(plan: RoutePlan): unknown;
}

export interface Orchestration {
  db: Database;
  routing: RoutingPort;
  providers: ProviderRegistry;
  breaker: CircuitBreaker;
  metrics: OrchestrationMetrics;
  /** The payment lock, reads and moves, its outcome event, the vaulted card's record (payments/orchestration-port.ts). */
  payments: PaymentPort;
}

/** Time past a call's timeout before its attempt counts as abandoned (its caller died) and is reconciled. */
export const DEADLINE_GRACE_MS = 5_000;

/** A step ready to be called: where it is in the route, its connection, and whether it is its circuit's probe. */
export interface ChosenStep {
  position: number;
  step: RouteStep;
  connection: UsableConnection;
}

/**
 * The next step to call after `after` (a position in the route; -1 before the first): the first whose
 * connection exists, is enabled and whose circuit admits a call. When nothing has been tried yet and
 * every usable step is open, the one whose cool-down ends first (its probe). null: none left.
 */
export async function nextStep(o: Orchestration, db: Queryable, organizationId: string, steps: readonly RouteStep[], after: number): Promise<ChosenStep | null> {
  const usable: ChosenStep[] = [];
  for (let position = after + 1; position < steps.length; position++) {
    const step = steps[position]!;
    const connection = await o.routing.openConnection(db, organizationId, step.connectionId);
    if (!connection || !connection.enabled || !o.providers.get(step.providerId)) continue;
    const chosen = { position, step, connection };
    if (o.breaker.admit(step.connectionId, step.providerId) !== 'SKIP') return chosen;
    usable.push(chosen);
  }
  if (after >= 0 || usable.length === 0) return null;
  return usable[o.breaker.forceProbe(usable.map((c) => ({ connectionId: c.step.connectionId, providerId: c.step.providerId })))]!;
}

/** One payment's walk along its route, from the attempt phase A recorded. */
export interface ChargeRoute {
  organizationId: string;
  paymentId: string;
  /** PURCHASE (capture) or AUTHORIZE. */
  capture: boolean;
  /** The charge without its per-attempt reference and connection. Card data: memory only. */
  charge: Omit<Charge, 'reference' | 'connection'>;
  steps: readonly RouteStep[];
  current: ChosenStep;
  attempt: AttemptRow;
  /** Inserts the next attempt (PENDING) for a step, in phase C's transaction. */
  newAttempt(tx: Queryable, chosen: ChosenStep): Promise<AttemptRow>;
  /** The payment's method as recorded with this answer (authorization code…); the transaction's is derived from it. */
  methodWith(result: ProviderResult | null): { payment: unknown; transaction: unknown };
  /**
   * The payment takes an approval (vault_on_success, events, the vault's record), in phase C's transaction:
   * the payment with its transactions as they are once it is taken (settle.ts takeApproval), for `conclude`.
   */
  approve(tx: Queryable, payment: PaymentRow, attempt: AttemptRow, result: ProviderResult): Promise<PaymentWithTransactions>;
  /**
   * Phase C, first thing once the payment is locked: the route's in-memory method learns what was redacted in
   * the payment's row since phase A (a shred: its customer deleted or its card unenrolled during the call), so
   * nothing written from memory afterwards (attempts, the payment's method, its event, the stored reply)
   * carries it again. A shred still running waits for this lock and redacts what this transaction writes.
   */
  settling?(payment: PaymentRow): void;
  /** The vaulted card the payment uses, if any (a decline is recorded on it). */
  vaultedToken: string | null;
  /**
   * The customer `approve` enrolls the card for (vault_on_success), if any: phase C locks it, and the
   * vaulted card, before the payment (payments/lock-order.ts), as a deletion or an unenroll does.
   */
  enrollsFor?: string | null;
  /**
   * The route is over: in the same phase C transaction, what the request answers is built and stored (its
   * idempotency reply), so the outcome and the reply are one commit. `approved`: the payment as `approve`
   * left it, when the route ended by an approval (the reply needs no read of its own then).
   */
  conclude?(tx: Queryable, approved: PaymentWithTransactions | null): Promise<void>;
}

/** Phases B and C until the route is decided (or waits for reconciliation). */
export async function runRoute(o: Orchestration, route: ChargeRoute): Promise<void> {
  let { current, attempt } = route;
  for (;;) {
    const answer = await call(o, route, current, attempt);
    // Queued per payment (payments/payment-lock.ts): phase C waits in memory, not on a pooled connection.
    const next = await o.payments.inPaymentTransaction(o.db, route.paymentId, null, async (tx, locked) => {
      const settled = await settleAnswer(o, tx, route, current, attempt, answer, locked?.payment);
      if (settled.then === 'next') return settled;
      await route.conclude?.(tx, settled.approved);
      return null;
    }, { customerId: route.enrollsFor ?? null, vaultedToken: route.vaultedToken });
    if (!next) return;
    o.metrics.failover({ fromProviderId: current.step.providerId, toProviderId: next.chosen.step.providerId, reason: failoverReason(answer) });
    current = next.chosen;
    attempt = next.attempt;
  }
}

/** Phase B: the call, outside any transaction. Never throws for the provider's failures: they are answers too. */
async function call(o: Orchestration, route: ChargeRoute, chosen: ChosenStep, attempt: AttemptRow): Promise<AttemptAnswer & { result?: ProviderResult }> {
  const provider = o.providers.get(chosen.step.providerId) as PaymentProvider;
  const input: Charge = { ...route.charge, reference: attempt.id, paymentId: route.paymentId, connection: chosen.connection.context };
  const started = performance.now();
  let answer: AttemptAnswer & { result?: ProviderResult };
  try {
    const result = route.capture ? await provider.purchase(input) : await provider.authorize(input);
    answer = { answered: true, result };
  } catch (err) {
    if (!(err instanceof ProviderUnavailableError)) throw err; // a bug: the attempt stays PENDING past its deadline → reconciliation
    answer = { answered: false, kind: err.kind, ...(err instanceof ProviderUndecidedError ? { undecided: true as const } : {}) };
  }
  const outcome: ProviderCallOutcome = answer.answered ? answer.result.outcome : answer.kind;
  const labels = { providerId: chosen.step.providerId, connectionId: chosen.step.connectionId };
  o.metrics.providerCall({ ...labels, operation: route.capture ? 'purchase' : 'authorize', outcome }, (performance.now() - started) / 1000);
  o.breaker.record(labels.connectionId, labels.providerId, healthOf(answer));
  return answer;
}

/**
 * What a call says about its connection's health: answers are health, whatever the issuer decided, and so is
 * an answer that the provider has not decided yet.
 */
export function healthOf(answer: AttemptAnswer): CallHealth {
  if (answer.answered) return answer.result.outcome === 'ERROR' ? 'FAILURE' : 'SUCCESS';
  if (answer.undecided) return 'SUCCESS';
  return answer.kind === 'BAD_RESPONSE' ? 'FAILURE' : 'NO_ANSWER';
}

/** What phase C decided: call the next attempt, or the route is over (by an approval: the payment as it left it). */
type Settled = { then: 'next'; chosen: ChosenStep; attempt: AttemptRow } | { then: 'over'; approved: PaymentWithTransactions | null };
const OVER: Settled = { then: 'over', approved: null };

/** Phase C. Returns the next attempt to call, or that the route is over. */
async function settleAnswer(
  o: Orchestration,
  tx: Queryable,
  route: ChargeRoute,
  current: ChosenStep,
  attempt: AttemptRow,
  answer: AttemptAnswer & { result?: ProviderResult },
  /** The payment as the lock read it, when it did. */
  locked?: PaymentRow,
): Promise<Settled> {
  const payment = locked ?? (await o.payments.lockPaymentById(tx, route.paymentId))!;
  route.settling?.(payment);
  // The payment's attempts in one read: this one's state, and (for an approval) whether another was taken.
  const others = await repo.transactionsOf(tx, route.paymentId);
  const recorded = others.find((t) => t.id === attempt.id);
  // Reconciliation got here first (the call outlived its deadline), or the provider's notification did (an
  // approval left for reconciliation to settle: NOTIFIED_APPROVAL): its word stands, and it concludes the payment.
  if (!recorded || recorded.status !== 'PENDING' || recorded.reason === NOTIFIED_APPROVAL) return OVER;
  const result = answer.answered ? answer.result : null;
  const method = route.methodWith(result);

  if (answer.answered) {
    const decision = failoverDecision(answer);
    if (decision === 'APPROVED') {
      if (!isUndecided(payment) || others.some((t) => t.id !== attempt.id && t.status === 'SUCCEEDED' && (t.type === 'PURCHASE' || t.type === 'AUTHORIZE'))) {
        // Approved after the payment was decided without it (reconciliation took another approval):
        // left PENDING and due now, so reconciliation finds the approval and voids it at the provider.
        await repo.record(tx, attempt.id, { ...answeredRecord(attempt, answer.result, method.transaction), status: 'PENDING' }, 0);
        return OVER;
      }
      const approved = await repo.record(tx, attempt.id, answeredRecord(attempt, answer.result, method.transaction), null);
      return { then: 'over', approved: await route.approve(tx, payment, approved, answer.result) };
    }
    await repo.record(tx, attempt.id, answeredRecord(attempt, answer.result, method.transaction), null);
    if (decision === 'HARD_DECLINE') {
      await concludeWithoutApproval(o.payments, tx, payment, route.vaultedToken, method.payment);
      return OVER;
    }
  } else {
    const { record, reconcileInMs } = unansweredRecord(attempt, answer.kind);
    await repo.record(tx, attempt.id, record, reconcileInMs);
  }
  if (!movesOn(failoverDecision(answer))) return OVER;

  const chosen = await nextStep(o, tx, route.organizationId, route.steps, current.position);
  if (!chosen) {
    await concludeWithoutApproval(o.payments, tx, payment, route.vaultedToken, method.payment);
    return OVER;
  }
  return { then: 'next', chosen, attempt: await route.newAttempt(tx, chosen) };
}
