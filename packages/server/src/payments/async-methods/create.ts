/**
 * POST /v1/payments for an asynchronous method (PIX, BANK_TRANSFER, OXXO, BOLETO, CASH, PAYPAL,
 * MERCADO_PAGO_WALLET, APPLE_PAY, and the token wallet GOOGLE_PAY), in the card flow's phases
 * (docs/design.md §5a), never calling a provider inside a transaction:
 *
 *   A (one short transaction): the checks, the route of the method's routing (routing is per payment
 *     method), the payment CREATED and attempt 1 (PURCHASE, PENDING, naming provider and connection, its
 *     reference its id), the idempotency binding.
 *   B: the provider issues the shopper's action (startAsyncPayment), outside any transaction.
 *   C (one short transaction, payment locked): issued → the attempt waits (CREATED) and the payment is
 *     PENDING / PENDING with the action under payment_method.payment_method_detail, its deadline stored for
 *     the expiry worker, event payment.pending. Declined → as a card decline (hard: DECLINED, soft: next
 *     step). No answer → the attempt is ERROR and the next step is tried.
 *
 * A token wallet (GOOGLE_PAY, `immediate`) has no action: the provider authorizes its token at once, like a
 * card. Approved → SUCCEEDED / APPROVED with payment.succeeded (takeApproval, as a card purchase); declined
 * → as a card decline. A call without an answer may have charged it: the attempt stays PENDING for
 * reconciliation (the payment PENDING / IN_PROCESS) and no other provider is asked.
 *
 * What the request carries for the provider only (the payer's account number of a PIX, a wallet's payment
 * token) stays in memory for the calls of this request: the payment stores the last four digits.
 *
 * Failover happens only before the shopper was shown an action: an unanswered issue showed nobody
 * anything, so a payment request the provider may have made unseen is never paid and expires there; once
 * an action is shown, the route stops and only the provider's notification (or the deadline) ends the
 * payment (settle.ts). The reply is read back from the database, as a retry recovers it.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import type { AppDeps, MerchantAuth } from '../../context.js';
import type { Queryable } from '../../db/database.js';
import { problem } from '../../http/problems.js';
import { NO_BINDING, type IdempotencyBinding } from '../../idempotency/idempotency.js';
import { DEADLINE_GRACE_MS, healthOf, nextStep, type ChosenStep, type Orchestration } from '../../orchestration/orchestrator.js';
import { failoverDecision, failoverReason, movesOn } from '../../orchestration/failover.js';
import { orchestrationRepository, type AttemptRow } from '../../orchestration/repository.js';
import { answeredRecord, concludeWithoutApproval, providerDataOf, takeApproval, unansweredRecord } from '../../orchestration/settle.js';
import { paymentPort } from '../orchestration-port.js';
import { linkBase } from '../../platform/config.js';
import { ProviderUnavailableError, type AsyncCharge, type AsyncMethodType, type AsyncPayer, type AsyncStart, type ProviderResult, type UnavailableKind } from '../../providers/provider.js';
import type { RouteStep } from '../../routing/plan.js';
import { recordEvent } from '../../webhooks/index.js';
import type { CreatePaymentOutcome } from '../create-payment.js';
import { createdPaymentOf } from '../created-reply.js';
import { toApiPayment, transactionMethodOf } from '../mapper.js';
import { inPaymentTransaction } from '../payment-lock.js';
import { checkNewPayment, newPaymentRow } from '../new-payment.js';
import { payerOf } from '../payer.js';
import type { CreatePaymentInput } from '../create-payment.js';
import { paymentsRepository as payments, type PaymentRow } from '../repository.js';
import { asyncPaymentMethod } from './detail.js';
import { ASYNC_METHODS, ATTEMPT_WAITING, WAITING } from './methods.js';
import { asyncPaymentsRepository as repo } from './repository.js';

/** The members a card payment may carry and an asynchronous one may not: the shopper's action is its method. */
const CARD_ONLY = ['vaulted_token', 'token', 'vault_on_success'] as const;
const DETAIL_MEMBERS = ['card', 'bank_transfer', 'wallet'] as const;

type Refusal = Exclude<CreatePaymentOutcome, { ok: true }>;
const refuse = (path: string, message: string, detail: string): Refusal => ({
  ok: false,
  problem: problem('INVALID_REQUEST', detail, { errors: [{ path, message }] }),
});

/** What `type` may carry besides itself: the card sources are for cards, each detail member for its types. */
function checkMembers(input: CreatePaymentInput, type: AsyncMethodType): Refusal | null {
  const m = input.payment_method;
  // vault_on_success defaults to false (the validator fills it in): only `true` asks for a card's behaviour.
  const given = CARD_ONLY.find((member) => (member === 'vault_on_success' ? m[member] === true : m[member] !== undefined));
  if (given) return refuse(`/body/payment_method/${given}`, `is not allowed with type ${type}`, `payment_method.${given} is for cards only: a ${type} payment takes only payment_method.type.`);
  const allowed = ASYNC_METHODS[type].detail;
  const detail = m.detail ?? {};
  for (const member of DETAIL_MEMBERS) {
    if (detail[member] !== undefined && member !== allowed) {
      return refuse(`/body/payment_method/detail/${member}`, `is not allowed with type ${type}`, `payment_method.detail.${member} does not go with a ${type} payment.`);
    }
  }
  if (allowed === 'wallet' && detail.wallet === undefined) {
    return refuse('/body/payment_method/detail/wallet', `is required with type ${type}`, `A ${type} payment is made with the wallet's payment token: give payment_method.detail.wallet.`);
  }
  // Apple Pay without a token is approved on the wallet's page: detail.card may only say what Yuno's
  // example says (verify: false) and the defaults (capture: true); a card, a verification or an
  // authorization-only wallet payment is not something the wallet's page does.
  const card = detail.card as Record<string, unknown> | undefined;
  if (allowed === 'card' && card) {
    const allowedValue: Record<string, unknown> = { verify: false, capture: true };
    const member = Object.keys(card).find((k) => !(k in allowedValue) || card[k] !== allowedValue[k]);
    if (member) {
      return refuse(`/body/payment_method/detail/card/${member}`, `is not allowed with type ${type}`, `A ${type} payment is approved by the shopper on the wallet's page: payment_method.detail.card may only carry verify: false.`);
    }
  }
  return null;
}

/** The payer's account as the provider gets it (in memory only). */
function payerAccountOf(input: CreatePaymentInput): AsyncCharge['payerAccount'] {
  const b = input.payment_method.detail?.bank_transfer;
  if (!b) return undefined;
  return {
    bankCode: b.code ?? null,
    branch: b.branch ?? null,
    branchDigit: b.branch_digit ?? null,
    country: b.country ?? null,
    accountNumber: b.account?.number ?? null,
    accountDigit: b.account?.digit ?? null,
    accountType: b.account?.type ?? null,
    mandateId: b.mandate?.id ?? null,
  };
}

/** The payer as a provider may need it for a voucher (the payment records the same payer: customer_payer). */
function asyncPayerOf(p: Schemas['CustomerPayer']): AsyncPayer {
  const a = p.billing_address;
  return {
    firstName: p.first_name ?? null,
    lastName: p.last_name ?? null,
    email: p.email ?? null,
    document: p.document?.document_number ? { type: p.document.document_type ?? null, number: p.document.document_number } : null,
    address: a?.address_line_1
      ? {
          line1: a.address_line_1,
          line2: a.address_line_2 ?? null,
          neighborhood: a.neighborhood ?? null,
          city: a.city ?? null,
          state: a.state ?? null,
          zipCode: a.zip_code ?? null,
          country: a.country ?? null,
        }
      : null,
  };
}

/**
 * What the payment keeps of the method's request detail: the payer's account without its number (the last
 * four only) nor its check digit, and of a wallet's token only the card's last four.
 */
function storedDetailOf(input: CreatePaymentInput): Record<string, unknown> {
  const d = input.payment_method.detail;
  const stored: Record<string, unknown> = {};
  if (d?.bank_transfer) {
    const { account, ...rest } = d.bank_transfer;
    stored.payer_bank_account = { ...rest, account: account ? { number_last_four: account.number.slice(-4), type: account.type ?? null } : null };
  }
  if (d?.wallet) stored.wallet = { card_last_four: d.wallet.card_data.lfd };
  return stored;
}

export async function createAsyncPayment(
  db: Queryable,
  deps: AppDeps,
  merchant: MerchantAuth,
  input: CreatePaymentInput,
  type: AsyncMethodType,
  binding: IdempotencyBinding = NO_BINDING,
): Promise<CreatePaymentOutcome> {
  const o = deps.services.orchestration;
  const started = await db.transaction((tx) => start(tx, o, merchant, input, type, binding));
  if (!started.ok) return started;
  await walk(o, { ...started.walk, baseUrl: linkBase(deps.config) });
  const payment = await createdPaymentOf(db, merchant.organizationId, started.walk.paymentId, { settledOnly: false });
  return { ok: true, payment: payment! };
}

interface Walk {
  organizationId: string;
  paymentId: string;
  type: AsyncMethodType;
  amount: string;
  currency: string;
  country: string;
  description: string;
  merchantReference: string;
  steps: readonly RouteStep[];
  current: ChosenStep;
  attempt: AttemptRow;
  /** For the provider only, never stored: the payer's account, a wallet's token. */
  forProvider: Pick<AsyncCharge, 'payerAccount' | 'walletToken' | 'payer'>;
}

/** The next step whose provider issues asynchronous payments (a routing only names providers that serve the method). */
async function nextAsyncStep(o: Orchestration, db: Queryable, organizationId: string, steps: readonly RouteStep[], after: number): Promise<ChosenStep | null> {
  for (let position = after; ; ) {
    const chosen = await nextStep(o, db, organizationId, steps, position);
    if (!chosen || o.providers.get(chosen.step.providerId)?.startAsyncPayment) return chosen;
    position = chosen.position;
  }
}

const newAttempt = (tx: Queryable, w: Pick<Walk, 'paymentId' | 'type' | 'amount' | 'description' | 'merchantReference'>, chosen: ChosenStep) =>
  orchestrationRepository.insertAttempt(tx, {
    id: randomUUID(),
    payment_id: w.paymentId,
    type: 'PURCHASE',
    status: 'PENDING',
    category: ASYNC_METHODS[w.type].category,
    amount: w.amount,
    provider_id: chosen.step.providerId,
    payment_method: transactionMethodOf(asyncPaymentMethod(w.type, null)),
    response_code: null,
    response_message: null,
    reason: null,
    description: w.description,
    merchant_reference: w.merchantReference,
    provider_data: providerDataOf(chosen.step.providerId, null),
    raw_response: null,
    provider_transaction_id: null,
    connection_data: { id: chosen.connection.connectionId, name: chosen.connection.name },
    merchant_advice_code: null,
    merchant_advice_code_message: null,
    payment_status_before: null,
    payment_sub_status_before: null,
    connection_id: chosen.connection.connectionId,
    deadlineMs: chosen.connection.context.timeoutMs + DEADLINE_GRACE_MS,
  });

/** Phase A. */
async function start(
  db: Queryable,
  o: Orchestration,
  merchant: MerchantAuth,
  input: CreatePaymentInput,
  type: AsyncMethodType,
  binding: IdempotencyBinding,
): Promise<Exclude<CreatePaymentOutcome, { ok: true }> | { ok: true; walk: Walk }> {
  const refused = checkMembers(input, type);
  if (refused) return refused;
  const checked = await checkNewPayment(db, merchant.organizationId, input);
  if (!checked.ok) return checked;
  const { amount, customer } = checked;

  const plan = await o.routing.planRoute(db, merchant.organizationId, {
    accountId: input.account_id,
    paymentMethod: type,
    country: input.country,
    currency: input.amount.currency,
    amount,
    brand: null,
    iin: null,
    metadata: input.metadata ?? [],
  });
  const first = plan ? await nextAsyncStep(o, db, merchant.organizationId, plan.steps, -1) : null;
  if (!plan || !first) {
    return {
      ok: false,
      problem: problem('NO_ROUTE', `No route for this payment: account ${input.account_id} has no ${type} routing with an enabled connection to a provider that serves it (GET /v1/routing, GET /v1/providers).`),
    };
  }

  const paymentId = randomUUID();
  await payments.insertPayment(
    db,
    newPaymentRow({ id: paymentId, organizationId: merchant.organizationId, input, customer, amount, paymentMethod: asyncPaymentMethod(type, null), routingRules: o.routing.routingRulesOf(plan), moreDetails: storedDetailOf(input) }),
  );
  await binding.bind(db, `payment:${paymentId}`);
  const walk = {
    organizationId: merchant.organizationId,
    paymentId,
    type,
    amount,
    currency: input.amount.currency,
    country: input.country,
    description: input.description,
    merchantReference: input.merchant_reference ?? input.merchant_order_id,
    steps: plan.steps,
    current: first,
    forProvider: {
      payerAccount: payerAccountOf(input),
      walletToken: input.payment_method.detail?.wallet
        ? { paymentToken: input.payment_method.detail.wallet.payment_token, lastFour: input.payment_method.detail.wallet.card_data.lfd }
        : undefined,
      payer: asyncPayerOf(payerOf(customer, input.customer_payer ?? {})),
    },
  };
  return { ok: true, walk: { ...walk, attempt: await newAttempt(db, walk, first) } };
}

type Answer = { answered: true; result: ProviderResult; started: AsyncStart } | { answered: false; kind: UnavailableKind };

/** Phases B and C until an action is shown or the route ends. */
async function walk(o: Orchestration, w: Walk & { baseUrl: string }): Promise<void> {
  let { current, attempt } = w;
  for (;;) {
    const answer = await issue(o, w, current, attempt);
    const next = await inPaymentTransaction(o.db, w.paymentId, null, (tx) => settleIssue(o, tx, w, current, attempt, answer));
    if (!next) return;
    o.metrics.failover({ fromProviderId: current.step.providerId, toProviderId: next.chosen.step.providerId, reason: failoverReason(answer) });
    current = next.chosen;
    attempt = next.attempt;
  }
}

/** Phase B: the provider issues the action. Its failures are answers too. */
async function issue(o: Orchestration, w: Walk & { baseUrl: string }, chosen: ChosenStep, attempt: AttemptRow): Promise<Answer> {
  const provider = o.providers.get(chosen.step.providerId)!;
  const labels = { providerId: chosen.step.providerId, connectionId: chosen.step.connectionId };
  const startedAt = performance.now();
  let answer: Answer;
  try {
    const started = await provider.startAsyncPayment!({
      method: w.type,
      amount: w.amount,
      currency: w.currency,
      country: w.country,
      reference: attempt.id,
      paymentId: w.paymentId,
      description: w.description,
      baseUrl: w.baseUrl,
      ...(w.forProvider.payerAccount ? { payerAccount: w.forProvider.payerAccount } : {}),
      ...(w.forProvider.walletToken ? { walletToken: w.forProvider.walletToken } : {}),
      ...(w.forProvider.payer ? { payer: w.forProvider.payer } : {}),
      connection: chosen.connection.context,
    });
    answer = { answered: true, result: started.result, started };
  } catch (err) {
    if (!(err instanceof ProviderUnavailableError)) throw err;
    answer = { answered: false, kind: err.kind };
  }
  o.metrics.providerCall({ ...labels, operation: 'purchase', outcome: answer.answered ? answer.result.outcome : answer.kind }, (performance.now() - startedAt) / 1000);
  o.breaker.record(labels.connectionId, labels.providerId, healthOf(answer));
  return answer;
}

/** Phase C. Returns the next attempt to call, or null when the route is over (an action shown, or nothing left). */
async function settleIssue(o: Orchestration, tx: Queryable, w: Walk, current: ChosenStep, attempt: AttemptRow, answer: Answer): Promise<{ chosen: ChosenStep; attempt: AttemptRow } | null> {
  const payment = (await payments.lockPaymentById(tx, w.paymentId))!;
  const recorded = await orchestrationRepository.find(tx, attempt.id);
  // Reconciliation got here first (this call outlived its deadline): its word stands.
  if (!recorded || recorded.status !== 'PENDING') return null;

  if (answer.answered) {
    const action = answer.started.action;
    const method = asyncPaymentMethod(w.type, action);
    const decision = failoverDecision(answer);
    if (decision === 'APPROVED' && action) {
      await orchestrationRepository.record(tx, attempt.id, { ...answeredRecord(attempt, answer.result, transactionMethodOf(method)), status: ATTEMPT_WAITING }, null);
      await waitForShopper(tx, payment, attempt.id, method, action.expiresAt);
      return null;
    }
    const answered = await orchestrationRepository.record(tx, attempt.id, answeredRecord(attempt, answer.result, transactionMethodOf(method)), null);
    if (decision === 'APPROVED' && ASYNC_METHODS[w.type].immediate) {
      // A token wallet authorized at once: as a card purchase approved (SUCCEEDED / APPROVED, payment.succeeded).
      await takeApproval(paymentPort, tx, payment, answered, method, null);
      return null;
    }
    if (decision === 'HARD_DECLINE') {
      await concludeWithoutApproval(paymentPort, tx, payment, null);
      return null;
    }
  } else if (ASYNC_METHODS[w.type].immediate && answer.kind !== 'NOT_SENT') {
    // A token may have been charged by a call that did not answer: reconciliation asks the provider by
    // reference, and no other provider is asked meanwhile (PENDING / IN_PROCESS, as a card's).
    const { record, reconcileInMs } = unansweredRecord(attempt, answer.kind);
    await orchestrationRepository.record(tx, attempt.id, record, reconcileInMs);
    await concludeWithoutApproval(paymentPort, tx, payment, null);
    return null;
  } else {
    // Nobody was shown an action: whatever the provider may have made of the call is never paid, and expires there.
    await orchestrationRepository.record(
      tx,
      attempt.id,
      {
        status: 'ERROR',
        reason: null,
        response_code: `PROVIDER_${answer.kind}`,
        response_message: 'No usable answer from the provider: the shopper was shown nothing, the next provider is tried',
        provider_data: providerDataOf(attempt.provider_id, null),
        raw_response: null,
        provider_transaction_id: null,
        merchant_advice_code: null,
        merchant_advice_code_message: null,
        payment_method: null,
      },
      null,
    );
  }
  if (!movesOn(failoverDecision(answer)) && answer.answered) {
    await concludeWithoutApproval(paymentPort, tx, payment, null);
    return null;
  }
  const chosen = await nextAsyncStep(o, tx, w.organizationId, w.steps, current.position);
  if (!chosen) {
    await concludeWithoutApproval(paymentPort, tx, payment, null);
    return null;
  }
  return { chosen, attempt: await newAttempt(tx, w, chosen) };
}

/** The payment waits for the shopper: PENDING / PENDING with the action, its deadline, history and payment.pending. */
async function waitForShopper(tx: Queryable, payment: PaymentRow, attemptId: string, method: Schemas['PaymentMethod'], expiresAt: string): Promise<void> {
  const waiting = await payments.updatePayment(tx, payment.id, { ...WAITING, paymentMethod: method });
  await repo.setDeadline(tx, payment.id, expiresAt);
  await payments.insertHistory(tx, { id: randomUUID(), paymentId: payment.id, ...WAITING, transactionId: attemptId, transactionStatus: ATTEMPT_WAITING, reason: null });
  await recordEvent(tx, {
    organizationId: waiting.organization_id,
    accountId: waiting.account_id,
    type: 'payment.pending',
    data: { payment: toApiPayment(waiting, await payments.listTransactions(tx, waiting.id), null, { rawResponse: false }) },
    resourceId: waiting.id,
  });
}
