/**
 * createPayment (docs/design.md §5): checks the request, charges the card through the provider synchronously
 * and records what happened, all in the operation's one transaction (with its idempotency record).
 * The provider's answer decides the state: SUCCEEDED / APPROVED (captured), DECLINED / DECLINED, or
 * ERROR / ERROR when the provider answered that it could not process the payment — all 201, because
 * the payment exists and the provider did answer. An unreachable provider throws: 5xx, nothing stored.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import type { AppDeps, MerchantAuth } from '../context.js';
import type { Queryable } from '../db/database.js';
import { customersRepository } from '../customers/repository.js';
import { problem } from '../http/problems.js';
import type { ProviderResult } from '../providers/provider.js';
import { tenancyRepository } from '../tenancy/repository.js';
import { RAW_CARD_PATH, resolveCard, type CardSourceProblem, type ResolvedCard } from './card-source.js';
import { toCreatedPayment, transactionMethodOf } from './mapper.js';
import { toDecimal } from './money.js';
import { recordPaymentOutcome } from './events.js';
import { enqueueSandboxChargeback } from './outbox-topics.js';
import { connectionDataOf, providerDataOf, providerLabel } from './provider-data.js';
import { paymentsRepository as repo } from './repository.js';
import { markVaultedCardUsed } from './vaulted-card.js';
import { payerOf } from './payer.js';
import { vaultOnSuccess, type VaultOnSuccessContext } from './vault-on-success.js';

export type CreatePaymentOutcome =
  | { ok: true; payment: Schemas['CreatedPayment'] }
  | {
      ok: false;
      problem:
        | CardSourceProblem
        | ReturnType<typeof problem<'INVALID_REQUEST'>>
        | ReturnType<typeof problem<'INVALID_ACCOUNT_ID'>>
        | ReturnType<typeof problem<'CUSTOMER_NOT_FOUND'>>;
    };

/** Payment status / sub_status and transaction status for each provider outcome. */
const OUTCOME_STATES = {
  SUCCEEDED: { status: 'SUCCEEDED', subStatus: 'APPROVED', transaction: 'SUCCEEDED' },
  DECLINED: { status: 'DECLINED', subStatus: 'DECLINED', transaction: 'DECLINED' },
  ERROR: { status: 'ERROR', subStatus: 'ERROR', transaction: 'ERROR' },
} as const;

/** A successful authorization without capture. */
const AUTHORIZED_STATES = { status: 'PENDING', subStatus: 'AUTHORIZED', transaction: 'SUCCEEDED' } as const;

export async function createPayment(
  db: Queryable,
  deps: AppDeps,
  merchant: MerchantAuth,
  input: Schemas['CreatePaymentRequest'],
  request: VaultOnSuccessContext,
): Promise<CreatePaymentOutcome> {
  const method = input.payment_method;
  // One card source: the vaulted card, or raw card data. With a vaulted_token, detail.card carries only the
  // processing options (Yuno sends `{vaulted_token, detail: {card: {capture: false}}}`).
  const rawCard = method.detail?.card.card_data;
  if (method.vaulted_token !== undefined && rawCard !== undefined) {
    return {
      ok: false,
      problem: problem('INVALID_REQUEST', 'Give either payment_method.vaulted_token or payment_method.detail.card.card_data, not both.', {
        errors: [{ path: RAW_CARD_PATH, message: 'cannot be combined with vaulted_token; the vaulted card is the card' }],
      }),
    };
  }
  if (method.vaulted_token === undefined && rawCard === undefined) {
    return {
      ok: false,
      problem: problem('INVALID_REQUEST', 'Give payment_method.vaulted_token or the card in payment_method.detail.card.card_data.', {
        errors: [{ path: RAW_CARD_PATH, message: 'is required without vaulted_token' }],
      }),
    };
  }
  // A vaulted card belongs to a customer, and a card vaulted on success needs one to belong to.
  const customerId = input.customer_payer.id;
  const needsCustomer = method.vaulted_token !== undefined ? 'vaulted_token' : method.vault_on_success === true ? 'vault_on_success' : null;
  if (customerId === undefined && needsCustomer) {
    return {
      ok: false,
      problem: problem('INVALID_REQUEST', `payment_method.${needsCustomer} needs an enrolled customer: give customer_payer.id.`, {
        errors: [{ path: '/body/customer_payer/id', message: `is required with payment_method.${needsCustomer}` }],
      }),
    };
  }
  const amount = toDecimal(input.amount.value, input.amount.currency);
  if (!amount.ok) {
    const path = /ISO 4217/.test(amount.message) ? '/body/amount/currency' : '/body/amount/value';
    return { ok: false, problem: problem('INVALID_REQUEST', `The amount is invalid: ${path} ${amount.message}.`, { errors: [{ path, message: amount.message }] }) };
  }
  if (!(await tenancyRepository.accountBelongsTo(db, input.account_id, merchant.organizationId))) {
    return { ok: false, problem: problem('INVALID_ACCOUNT_ID', 'The account_id is not an account of your organization.') };
  }
  const customer = customerId === undefined ? undefined : await customersRepository.find(db, merchant.organizationId, customerId);
  if (customerId !== undefined && !customer) return { ok: false, problem: problem('CUSTOMER_NOT_FOUND', `No customer ${customerId}.`) };

  const resolved = await resolveCard(db, deps, merchant, customer?.id ?? null, method);
  if (!resolved.ok) return { ok: false, problem: resolved.problem };
  const source = resolved.value;
  const provider = deps.services.provider;

  const paymentId = randomUUID();
  await repo.insertPayment(db, {
    id: paymentId,
    organization_id: merchant.organizationId,
    account_id: input.account_id,
    customer_id: customer?.id ?? null,
    description: input.description,
    country: input.country,
    merchant_order_id: input.merchant_order_id,
    status: 'CREATED',
    sub_status: 'CREATED',
    currency: input.amount.currency,
    amount_value: amount.decimal,
    workflow: input.workflow ?? 'DIRECT',
    callback_url: input.callback_url ?? null,
    metadata: input.metadata ?? [],
    additional_data: input.additional_data ?? null,
    customer_payer: payerOf(customer, input.customer_payer),
    payment_method: paymentMethodOf(source, null, method),
    request_details: {
      checkout: input.checkout ?? null,
      fraud_screening: input.fraud_screening ?? null,
      split_marketplace: input.split_marketplace ?? null,
    },
  });
  await repo.insertHistory(db, { id: randomUUID(), paymentId, status: 'CREATED', subStatus: 'CREATED', transactionId: null, transactionStatus: null, reason: null });

  // The payment id is the provider reference: the provider can tie its records (and chargebacks) to it.
  // `detail.card.capture: false` authorizes only; capture or cancel come later (lifecycle.ts).
  const capture = method.detail?.card.capture !== false;
  const call = {
    card: source.card,
    amount: amount.decimal,
    currency: input.amount.currency,
    reference: paymentId,
    paymentId,
    description: input.description,
    softDescriptor: method.detail?.card.soft_descriptor ?? null,
  };
  const result = capture ? await provider.purchase(call) : await provider.authorize(call);
  const states = result.outcome === 'SUCCEEDED' && !capture ? AUTHORIZED_STATES : OUTCOME_STATES[result.outcome];
  // vault_on_success: the card just charged (or authorized) successfully is enrolled for the customer.
  const vaulted = result.outcome === 'SUCCEEDED' && method.vault_on_success === true && customer ? await vaultOnSuccess(request, customer.id, input, result.cardInfo) : null;
  const paymentMethod = paymentMethodOf(vaulted ? { ...source, vaultedToken: vaulted } : source, result, method);

  const purchase = await repo.insertTransaction(db, {
    id: randomUUID(),
    payment_id: paymentId,
    type: capture ? 'PURCHASE' : 'AUTHORIZE',
    status: states.transaction,
    category: 'CARD',
    amount: amount.decimal,
    provider_id: providerLabel(provider),
    payment_method: transactionMethodOf(paymentMethod),
    response_code: result.responseCode,
    response_message: result.responseMessage,
    reason: null,
    description: input.description,
    merchant_reference: input.merchant_reference ?? input.merchant_order_id,
    provider_data: providerDataOf(provider, result),
    raw_response: result.rawResponse,
    provider_transaction_id: result.providerTransactionId,
    connection_data: connectionDataOf(provider),
    merchant_advice_code: result.merchantAdviceCode,
    merchant_advice_code_message: result.merchantAdviceCodeMessage,
    payment_status_before: null,
    payment_sub_status_before: null,
  });
  const payment = await repo.updatePayment(db, paymentId, {
    status: states.status,
    subStatus: states.subStatus,
    paymentMethod,
    // Captured in the same step as the authorization (capture: true); nothing otherwise.
    captured: result.outcome === 'SUCCEEDED' && capture ? amount.decimal : '0',
  });
  await repo.insertHistory(db, {
    id: randomUUID(),
    paymentId,
    status: states.status,
    subStatus: states.subStatus,
    transactionId: purchase.id,
    transactionStatus: states.transaction,
    reason: result.outcome === 'SUCCEEDED' ? null : result.responseCode,
  });

  if (result.outcome !== 'ERROR') {
    await recordPaymentOutcome(db, payment, result.outcome !== 'SUCCEEDED' ? 'payment.declined' : capture ? 'payment.succeeded' : 'payment.authorized');
  }
  // The vault records how its card fared (an ERROR is the provider's failure, not the card's).
  if (source.vaultedToken && result.outcome !== 'ERROR') await markVaultedCardUsed(db, source.vaultedToken, result.outcome === 'SUCCEEDED');
  if (result.outcome === 'SUCCEEDED') {
    // Sandbox test card 4000000000000259: the issuer charges it back right after; the provider's
    // notification arrives asynchronously, after this payment is committed.
    if (result.chargebackFollows && capture) {
      await enqueueSandboxChargeback(db, { paymentId, providerTransactionId: result.providerTransactionId, amount: amount.decimal });
    }
  }

  return { ok: true, payment: toCreatedPayment(payment, purchase, [purchase]) };
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
    },
  };
}
