/**
 * createPayment (docs/design.md §5 and "Orchestration"): checks the request, records the payment and its
 * first provider attempt (phase A, one short transaction, bound to the request's idempotency record), then
 * walks the payment's route (orchestration/orchestrator.ts: each provider call outside any transaction,
 * failover on soft failures, one attempt per provider tried). The reply is read back from the database, as a
 * retry recovers it. Every provider outcome is a 201 (the payment exists): SUCCEEDED / APPROVED,
 * PENDING / AUTHORIZED (capture: false), DECLINED, ERROR, or PENDING / IN_PROCESS while an attempt's outcome
 * is unknown (reconciliation settles it).
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import type { AppDeps, MerchantAuth } from '../context.js';
import type { Queryable } from '../db/database.js';
import type { Lenient, NullAsAbsent } from '../http/lenient-input.js';
import { problem } from '../http/problems.js';
import { NO_BINDING, type IdempotencyBinding } from '../idempotency/idempotency.js';
import { DEADLINE_GRACE_MS, nextStep, runRoute, type ChargeRoute, type ChosenStep } from '../orchestration/orchestrator.js';
import { orchestrationRepository } from '../orchestration/repository.js';
import { providerDataOf, takeApproval } from '../orchestration/settle.js';
import { paymentPort } from './orchestration-port.js';
import type { ProviderResult } from '../providers/provider.js';
import { RAW_CARD_PATH, resolveCard, type CardSourceProblem, type ResolvedCard } from './card-source.js';
import { transactionMethodOf } from './mapper.js';
import { createdPaymentFrom, createdPaymentOf } from './created-reply.js';
import { enqueueSandboxChargeback } from './outbox-topics.js';
import { paymentsRepository as repo } from './repository.js';
import { checkNewPayment, newPaymentRow } from './new-payment.js';
import { vaultOnSuccess, type VaultOnSuccessContext } from './vault-on-success.js';
import { createAsyncPayment } from './async-methods/create.js';
import { keepRedactions } from '../vault/shred.js';
import { isAsyncMethod } from './async-methods/methods.js';

type Request = Schemas['CreatePaymentRequest'];
/** The payer as lenientInput leaves it (http/lenient-input.ts): its text members absent, never null. */
export type PayerInput = NullAsAbsent<NonNullable<Request['customer_payer']>>;
/** POST /payments's body once lenientInput ran: the amount a number, the payer's nulls dropped. */
export type CreatePaymentInput = Lenient<Omit<Request, 'customer_payer'>> & { customer_payer?: PayerInput };
import type { ClaimedToken, ClaimProblem } from './one-time-token-port.js';

const TOKEN_PATH = '/body/payment_method/token';

/** A one-time token's card as a payment records it (masked data, fingerprint as for raw card data). */
function tokenCard(deps: AppDeps, organizationId: string, claimed: ClaimedToken): ResolvedCard {
  const c = claimed.cardData;
  return {
    card: claimed.card,
    cardData: {
      holder_name: c.holder_name,
      iin: c.iin ?? claimed.card.number.slice(0, 6),
      lfd: c.lfd ?? claimed.card.number.slice(-4),
      number_length: c.number_length ?? claimed.card.number.length,
      security_code_length: c.security_code_length ?? 3,
      brand: claimed.card.brand,
      issuer_name: null,
      issuer_code: null,
      country_code: null,
      category: null,
      type: null,
      fingerprint: deps.services.vault.fingerprint(organizationId, claimed.card.number),
      expiration_month: claimed.card.expirationMonth,
      expiration_year: claimed.card.expirationYear,
    },
    vaultedToken: null,
    storedCredentials: { reason: null, usage: null, subscription_agreement_id: null, network_transaction_id: null },
  };
}

export type CreatePaymentOutcome =
  | { ok: true; payment: Schemas['CreatedPayment'] }
  | {
      ok: false;
      problem:
        | CardSourceProblem
        | ReturnType<typeof problem<'INVALID_REQUEST'>>
        | ReturnType<typeof problem<'INVALID_ACCOUNT_ID'>>
        | ReturnType<typeof problem<'CUSTOMER_NOT_FOUND'>>
        | ReturnType<typeof problem<'NO_ROUTE'>>
        | ClaimProblem;
    };

/** No routing applies to the payment, or every step of its route is disabled: nothing can be tried. */
const noRoute = (accountId: string) =>
  problem('NO_ROUTE', `No route for this payment: account ${accountId} has no CARD routing with an enabled connection to a provider this service runs (GET /v1/routing, GET /v1/connections).`);

/**
 * Runs in idempotency's deferred mode: `db` is the pool (or a caller's transaction, where each step
 * becomes a savepoint), the payment is bound to the request's idempotency record in phase A's transaction.
 */
export async function createPayment(
  db: Queryable,
  deps: AppDeps,
  merchant: MerchantAuth,
  input: CreatePaymentInput,
  request: VaultOnSuccessContext,
  binding: IdempotencyBinding = NO_BINDING,
): Promise<CreatePaymentOutcome> {
  // PIX, transfers, vouchers, wallets: the shopper pays later (async-methods/).
  const type = input.payment_method.type;
  if (isAsyncMethod(type)) return createAsyncPayment(db, deps, merchant, input, type, binding);
  const o = deps.services.orchestration;
  const started = await db.transaction((tx) => startPayment(tx, deps, merchant, input, request, binding));
  if (!started.ok) return started;
  // The reply is built in phase C's transaction and stored there as the key's reply (one commit for both).
  let answer: Schemas['CreatedPayment'] | null = null;
  await runRoute(o, {
    ...started.route,
    async conclude(tx, approved) {
      // An approval left the payment as its event shows it: the reply is built from that read.
      answer = approved
        ? createdPaymentFrom(approved, { settledOnly: false })
        : await createdPaymentOf(tx, merchant.organizationId, started.route.paymentId, { settledOnly: false });
      if (answer) await binding.complete?.(tx, { status: 201, body: answer });
    },
  });
  const payment = answer ?? (await createdPaymentOf(db, merchant.organizationId, started.route.paymentId, { settledOnly: false }));
  return { ok: true, payment: payment! };
}

/** Phase A: the checks, the route, the payment and its first attempt; nothing is called yet. */
async function startPayment(
  db: Queryable,
  deps: AppDeps,
  merchant: MerchantAuth,
  input: CreatePaymentInput,
  request: VaultOnSuccessContext,
  binding: IdempotencyBinding,
): Promise<Exclude<CreatePaymentOutcome, { ok: true }> | { ok: true; route: ChargeRoute }> {
  const method = input.payment_method;
  // A card's detail is `card`: the payer's bank account and a wallet's token are for their own types.
  const foreign = (['bank_transfer', 'wallet'] as const).find((member) => method.detail?.[member] !== undefined);
  if (foreign) {
    return {
      ok: false,
      problem: problem('INVALID_REQUEST', `payment_method.detail.${foreign} does not go with a CARD payment.`, {
        errors: [{ path: `/body/payment_method/detail/${foreign}`, message: 'is not allowed with type CARD' }],
      }),
    };
  }
  // One card source: the vaulted card, or raw card data. With a vaulted_token, detail.card carries only the
  // processing options (Yuno sends `{vaulted_token, detail: {card: {capture: false}}}`).
  const rawCard = method.detail?.card?.card_data;
  if (method.token !== undefined && (method.vaulted_token !== undefined || rawCard !== undefined)) {
    return {
      ok: false,
      problem: problem('INVALID_REQUEST', 'Give one card source: payment_method.token alone, without vaulted_token or detail.card.card_data.', {
        errors: [{ path: TOKEN_PATH, message: 'cannot be combined with vaulted_token or card_data; the token is the card' }],
      }),
    };
  }
  if (method.vaulted_token !== undefined && rawCard !== undefined) {
    return {
      ok: false,
      problem: problem('INVALID_REQUEST', 'Give either payment_method.vaulted_token or payment_method.detail.card.card_data, not both.', {
        errors: [{ path: RAW_CARD_PATH, message: 'cannot be combined with vaulted_token; the vaulted card is the card' }],
      }),
    };
  }
  if (method.vaulted_token === undefined && rawCard === undefined && method.token === undefined) {
    return {
      ok: false,
      problem: problem('INVALID_REQUEST', 'Give payment_method.vaulted_token, payment_method.token or the card in payment_method.detail.card.card_data.', {
        errors: [{ path: RAW_CARD_PATH, message: 'is required without vaulted_token or token' }],
      }),
    };
  }
  // A vaulted card belongs to a customer, and a card vaulted on success needs one to belong to.
  const customerId = input.customer_payer?.id;
  const needsCustomer = method.vaulted_token !== undefined ? 'vaulted_token' : method.vault_on_success === true ? 'vault_on_success' : null;
  if (customerId === undefined && needsCustomer) {
    return {
      ok: false,
      problem: problem('INVALID_REQUEST', `payment_method.${needsCustomer} needs an enrolled customer: give customer_payer.id.`, {
        errors: [{ path: '/body/customer_payer/id', message: `is required with payment_method.${needsCustomer}` }],
      }),
    };
  }
  const checked = await checkNewPayment(db, merchant.organizationId, input);
  if (!checked.ok) return checked;
  const { amount, customer } = checked;

  // A one-time token is checked (and its row locked) here, and consumed below once the payment is certain.
  const claimed =
    method.token === undefined
      ? undefined
      : await deps.services.oneTimeTokens.claim(db, deps, merchant.organizationId, method.token, {
          accountId: input.account_id,
          currency: input.amount.currency,
          amount,
          checkoutSession: input.checkout?.session ?? null,
        });
  if (claimed && !claimed.ok) return { ok: false, problem: claimed.problem };
  const resolved = claimed ? { ok: true as const, value: tokenCard(deps, merchant.organizationId, claimed.value) } : await resolveCard(db, deps, merchant, customer?.id ?? null, method);
  if (!resolved.ok) return { ok: false, problem: resolved.problem };
  const source = resolved.value;
  const o = deps.services.orchestration;

  const plan = await o.routing.planRoute(db, merchant.organizationId, {
    accountId: input.account_id,
    paymentMethod: 'CARD',
    country: input.country,
    currency: input.amount.currency,
    amount,
    brand: source.cardData.brand ?? null,
    iin: source.cardData.iin ?? null,
    metadata: input.metadata ?? [],
  });
  const first = plan ? await nextStep(o, db, merchant.organizationId, plan.steps, -1) : null;
  if (!plan || !first) return { ok: false, problem: noRoute(input.account_id) };

  const paymentId = randomUUID();
  await repo.insertPayment(
    db,
    newPaymentRow({ id: paymentId, organizationId: merchant.organizationId, input, customer, amount, paymentMethod: paymentMethodOf(source, null, method), routingRules: o.routing.routingRulesOf(plan) }),
  );
  await binding.bind(db, `payment:${paymentId}`);
  if (claimed?.ok) await claimed.value.consume(db, paymentId);

  // `detail.card.capture: false` authorizes only; capture or cancel come later (lifecycle.ts).
  const capture = method.detail?.card?.capture !== false;
  const methodWith = (result: ProviderResult | null) => {
    const payment = paymentMethodOf(source, result, method);
    return { payment, transaction: transactionMethodOf(payment) };
  };
  const newAttempt = (tx: Queryable, chosen: ChosenStep) =>
    orchestrationRepository.insertAttempt(tx, {
      id: randomUUID(),
      payment_id: paymentId,
      type: capture ? 'PURCHASE' : 'AUTHORIZE',
      status: 'PENDING',
      category: 'CARD',
      amount,
      provider_id: chosen.step.providerId,
      payment_method: methodWith(null).transaction,
      response_code: null,
      response_message: null,
      reason: null,
      description: input.description,
      merchant_reference: input.merchant_reference ?? input.merchant_order_id,
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

  const route: ChargeRoute = {
    organizationId: merchant.organizationId,
    paymentId,
    capture,
    // The card lives in this object only, for the calls of this request.
    charge: {
      card: source.card,
      amount,
      currency: input.amount.currency,
      description: input.description,
      softDescriptor: method.detail?.card?.soft_descriptor ?? null,
    },
    steps: plan.steps,
    current: first,
    attempt: await newAttempt(db, first),
    newAttempt,
    methodWith,
    vaultedToken: source.vaultedToken,
    enrollsFor: method.vault_on_success === true && customer ? customer.id : null,
    settling(payment) {
      // Shredded during the call (customer deleted, card unenrolled): the holder name and fingerprint stay cleared.
      keepRedactions(payment.payment_method, source.cardData);
    },
    async approve(tx, payment, attempt, result) {
      // vault_on_success: the card just charged (or authorized) successfully is enrolled for the customer.
      // A token's card came through payorch's own form: enrolling it needs no PCI certification of the merchant.
      const vaulted =
        method.vault_on_success === true && customer
          ? await vaultOnSuccess({ ...request, db: tx, ...(claimed ? { pciCertified: true } : {}) }, customer.id, input, result.cardInfo, claimed?.ok ? source.card : undefined)
          : null;
      const paymentMethod = paymentMethodOf(vaulted ? { ...source, vaultedToken: vaulted } : source, result, method);
      // Only a one-time token's payment can pay a link (checkout): without one, the link is not looked up.
      const approved = await takeApproval(paymentPort, tx, payment, attempt, paymentMethod, source.vaultedToken, { mayPayLink: claimed !== undefined });
      // Sandbox test card 4000000000000259: the issuer charges it back right after; the provider's
      // notification arrives asynchronously, after this payment is committed.
      if (result.chargebackFollows && capture) {
        await enqueueSandboxChargeback(tx, { paymentId, providerTransactionId: result.providerTransactionId, amount });
      }
      return approved;
    },
  };
  return { ok: true, route };
}

/** The payment's method as recorded: masked card data plus what the provider answered. */
function paymentMethodOf(source: ResolvedCard, result: ProviderResult | null, requested: Schemas['CreatePaymentMethod']): Schemas['PaymentMethod'] {
  const card = requested.detail?.card;
  const info = result?.cardInfo;
  const cardData: Schemas['PaymentCardData'] = {
    ...source.cardData,
    issuer_name: source.cardData.issuer_name ?? info?.issuerName ?? null,
    issuer_code: source.cardData.issuer_code ?? info?.issuerCode ?? null,
    country_code: source.cardData.country_code ?? info?.countryCode ?? null,
    category: source.cardData.category ?? info?.category ?? null,
    type: source.cardData.type ?? info?.type ?? null,
  };
  return {
    vaulted_token: source.vaultedToken,
    type: 'CARD',
    vault_on_success: requested.vault_on_success ?? false,
    token: null,
    parent_payment_method_type: null,
    payment_method_detail: {
      card: {
        verify: card?.verify ?? false,
        capture: card?.capture ?? true,
        installments: card?.installments ?? 1,
        installments_plan_id: null,
        first_installment_deferral: card?.first_installment_deferral ?? 0,
        installments_type: null,
        installment_amount: null,
        installments_total_amount: null,
        soft_descriptor: card?.soft_descriptor ?? null,
        authorization_code: result?.authorizationCode ?? null,
        retrieval_reference_number: result?.retrievalReferenceNumber ?? null,
        voucher: null,
        card_data: cardData,
        // What the merchant says about a card it keeps wins over what the vault infers.
        stored_credentials: card?.stored_credentials ? { ...source.storedCredentials, ...card.stored_credentials } : source.storedCredentials,
      },
      bank_transfer: null,
      ticket: null,
      wallet: null,
    },
  };
}
