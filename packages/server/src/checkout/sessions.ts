/**
 * Checkout sessions (issue 25 §1): what a shopper will pay, created by the merchant's server; the hosted
 * card form (or a browser holding the public key) makes one-time tokens for it. A session is OPEN until a
 * payment with one of its tokens did not end declined (PAID: a declined card leaves it open for another),
 * and takes no token after `expires_at` (EXPIRED, decided at read).
 */
import type { Lenient } from '../http/lenient-input.js';
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import type { AppDeps, MerchantAuth } from '../context.js';
import { toIsoMicros, type Queryable } from '../db/database.js';
import { customersRepository } from '../customers/repository.js';
import { problem, type FieldError } from '../http/problems.js';
import { nextStep } from '../orchestration/orchestrator.js';
import { checkAmountAt } from '../payments/money.js';
import { accountBelongsTo } from '../tenancy/accounts.js';
import { listPaymentMethods } from '../vault/service.js';
import { UNPAID_STATUSES } from './link-state.js';
import { checkoutRepository as repo, type SessionChanges, type SessionRow } from './repository.js';
import { checkCard, mintToken, toApiToken } from './tokens.js';

/** A session takes tokens for 24 hours. */
export const SESSION_TTL_SECONDS = 24 * 3600;
const UNPAID = new Set<string>(UNPAID_STATUSES);

export function sessionStatus(row: SessionRow): 'OPEN' | 'PAID' | 'EXPIRED' {
  if (row.payment_status !== null && !UNPAID.has(row.payment_status)) return 'PAID';
  return row.expired ? 'EXPIRED' : 'OPEN';
}

export function toApiSession(row: SessionRow): Schemas['CheckoutSession'] {
  const installments = (row.installments ?? null) as { plan_id?: string | null; plan?: { installment: number; rate: number }[] | null } | null;
  return {
    id: row.id,
    checkout_session: row.id,
    account_id: row.account_id,
    merchant_order_id: row.merchant_order_id,
    payment_description: row.payment_description,
    country: row.country,
    amount: { currency: row.currency, value: Number(row.amount_value) },
    alternative_amount: (row.alternative_amount ?? null) as Schemas['CheckoutSession']['alternative_amount'],
    customer_id: row.customer_id,
    callback_url: row.callback_url,
    metadata: (row.metadata ?? null) as Schemas['CheckoutSession']['metadata'],
    workflow: row.workflow as Schemas['CheckoutSession']['workflow'],
    installments: { plan_id: installments?.plan_id ?? null, plan: installments?.plan ?? null },
    recurring_payment: (row.recurring_payment ?? null) as Schemas['CheckoutSession']['recurring_payment'],
    checkout_id: row.checkout_id,
    allowed_origins: row.allowed_origins,
    used: row.payment_id !== null,
    status: sessionStatus(row),
    payment_id: row.payment_id,
    created_at: toIsoMicros(row.created_at),
    updated_at: toIsoMicros(row.updated_at),
    expires_at: toIsoMicros(row.expires_at),
  };
}

type Invalid = ReturnType<typeof problem<'INVALID_REQUEST'>>;
const invalid = (errors: FieldError[]): Invalid => problem('INVALID_REQUEST', `The request is invalid: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}.`, { errors });

function amountOf(amount: { currency: string; value: number }, path: string): { ok: true; decimal: string } | { ok: false; problem: Invalid } {
  const checked = checkAmountAt(amount, path);
  return checked.ok ? checked : { ok: false, problem: invalid([checked.error]) };
}

export type CreateSessionProblem = Invalid | ReturnType<typeof problem<'INVALID_ACCOUNT_ID'> | typeof problem<'CUSTOMER_NOT_FOUND'>>;

export async function createSession(
  db: Queryable,
  organizationId: string,
  body: Lenient<Schemas['CheckoutSessionCreateRequest']>,
  link: string | null = null,
): Promise<{ ok: true; session: SessionRow } | { ok: false; problem: CreateSessionProblem }> {
  const amount = amountOf(body.amount, '/body/amount');
  if (!amount.ok) return amount;
  if (body.alternative_amount) {
    const alt = amountOf(body.alternative_amount, '/body/alternative_amount');
    if (!alt.ok) return alt;
  }
  if (!(await accountBelongsTo(db, body.account_id, organizationId))) {
    return { ok: false, problem: problem('INVALID_ACCOUNT_ID', 'The account_id is not an account of your organization.') };
  }
  if (body.customer_id !== undefined && !(await customersRepository.find(db, organizationId, body.customer_id))) {
    return { ok: false, problem: problem('CUSTOMER_NOT_FOUND', `No customer ${body.customer_id}.`) };
  }
  const session = await repo.insertSession(db, {
    id: randomUUID(),
    organization_id: organizationId,
    account_id: body.account_id,
    merchant_order_id: body.merchant_order_id,
    payment_description: body.payment_description,
    country: body.country,
    currency: body.amount.currency,
    amount_value: amount.decimal,
    alternative_amount: body.alternative_amount ?? null,
    customer_id: body.customer_id ?? null,
    callback_url: body.callback_url ?? null,
    metadata: body.metadata ?? null,
    workflow: body.workflow ?? 'SDK_CHECKOUT',
    installments: body.installments ?? null,
    recurring_payment: body.recurring_payment ?? null,
    checkout_id: body.checkout_id ?? null,
    allowed_origins: body.allowed_origins ?? [],
    payment_link_code: link,
    ttlSeconds: SESSION_TTL_SECONDS,
  });
  return { ok: true, session };
}

export type UpdateSessionProblem =
  | CreateSessionProblem
  | ReturnType<typeof problem<'CHECKOUT_SESSION_NOT_FOUND'> | typeof problem<'INVALID_STATUS'>>;

export async function updateSession(
  db: Queryable,
  organizationId: string,
  id: string,
  body: Lenient<Schemas['CheckoutSessionUpdateRequest']>,
): Promise<{ ok: true; session: SessionRow } | { ok: false; problem: UpdateSessionProblem }> {
  return db.transaction(async (tx) => {
    const row = await repo.findSession(tx, organizationId, id, true);
    if (!row) return { ok: false, problem: notFound(id) };
    const status = sessionStatus(row);
    if (status !== 'OPEN') return { ok: false, problem: problem('INVALID_STATUS', `The checkout session is ${status}; it can no longer change.`) };
    if (row.payment_link_code !== null) return { ok: false, problem: problem('INVALID_STATUS', 'The checkout session belongs to a payment link; change the link instead.') };
    if (body.account_id !== undefined && body.account_id !== row.account_id) {
      return { ok: false, problem: problem('INVALID_ACCOUNT_ID', `A checkout session cannot move to another account (it is ${row.account_id}).`) };
    }
    const changes: SessionChanges = {};
    if (body.amount) {
      const amount = amountOf(body.amount, '/body/amount');
      if (!amount.ok) return amount;
      changes.amount_value = amount.decimal;
      changes.currency = body.amount.currency;
    }
    if (body.alternative_amount) {
      const alt = amountOf(body.alternative_amount, '/body/alternative_amount');
      if (!alt.ok) return alt;
      changes.alternative_amount = body.alternative_amount;
    }
    if (body.customer_id !== undefined && !(await customersRepository.find(tx, organizationId, body.customer_id))) {
      return { ok: false, problem: problem('CUSTOMER_NOT_FOUND', `No customer ${body.customer_id}.`) };
    }
    for (const field of ['merchant_order_id', 'payment_description', 'country', 'customer_id', 'callback_url', 'metadata', 'workflow', 'installments', 'allowed_origins'] as const) {
      if (body[field] !== undefined) (changes as Record<string, unknown>)[field] = body[field];
    }
    return { ok: true, session: await repo.updateSession(tx, organizationId, id, changes) };
  });
}

export const notFound = (id: string) => problem('CHECKOUT_SESSION_NOT_FOUND', `No checkout session ${id}.`);

/** The methods the session can be paid with: a new card if the routing can serve it, then the customer's enrolled cards. */
export async function sessionPaymentMethods(
  db: Queryable,
  deps: AppDeps,
  organizationId: string,
  row: SessionRow,
  baseUrl: string,
): Promise<Schemas['CheckoutPaymentMethodList']> {
  const o = deps.services.orchestration;
  const plan = await o.routing.planRoute(db, organizationId, {
    accountId: row.account_id,
    paymentMethod: 'CARD',
    country: row.country,
    currency: row.currency,
    amount: row.amount_value,
    brand: null,
    iin: null,
    metadata: (row.metadata as Schemas['Metadata'] | null) ?? [],
  });
  const routable = plan !== null && plan !== undefined && (await nextStep(o, db, organizationId, plan.steps, -1)) !== null;
  if (!routable) return [];
  const checkout = (sdkRequiredAction: boolean) => ({ session: row.id, sdk_required_action: sdkRequiredAction, conditions: { enabled: true, rules: null } });
  const methods: Schemas['CheckoutPaymentMethodList'] = [
    {
      name: 'Card',
      vaulted_token: null,
      description: 'Card',
      type: 'CARD',
      category: 'CARD',
      icon: null,
      last_successfully_used: null,
      last_successfully_used_at: null,
      preferred: false,
      checkout: checkout(true),
      card_data: null,
    },
  ];
  if (row.customer_id !== null) {
    const listed = await listPaymentMethods(db, organizationId, row.customer_id, {}, baseUrl);
    const cards = listed.ok ? listed.list.payment_methods.filter((m) => m.type === 'CARD' && m.status === 'ENROLLED').slice(0, 100) : [];
    for (const m of cards) {
      const c = m.card_data;
      methods.push({
        name: m.name ?? 'Card',
        vaulted_token: m.vaulted_token,
        description: m.description ?? m.name ?? 'Card',
        type: 'CARD',
        category: 'CARD',
        icon: m.icon ?? null,
        last_successfully_used: m.last_successfully_used ?? null,
        last_successfully_used_at: m.last_successfully_used_at ?? null,
        preferred: m.preferred ?? false,
        checkout: checkout(false),
        card_data: c
          ? {
              holder_name: c.holder_name ?? null,
              iin: c.iin ?? null,
              lfd: c.lfd ?? null,
              number_length: c.number_length ?? null,
              security_code_length: c.security_code_length ?? null,
              brand: c.brand ?? null,
              type: c.type ?? null,
              category: c.category ?? null,
              issuer_name: c.issuer_name ?? null,
              issuer_code: c.issuer_code ?? null,
              fingerprint: null,
              country_code: c.country_code ?? null,
              expiration_month: c.expiration_month ?? null,
              expiration_year: c.expiration_year ?? null,
            }
          : null,
      });
    }
  }
  return methods;
}

export type SessionTokenProblem =
  | ReturnType<typeof problem<'CHECKOUT_SESSION_NOT_FOUND'> | typeof problem<'INVALID_STATUS'> | typeof problem<'INVALID_CARD'> | typeof problem<'INVALID_ACCOUNT_ID'>>
  | Invalid;

/** POST /checkout/sessions/{id}/token (public key): a token for an OPEN session of the key's organization. */
export async function createSessionToken(
  db: Queryable,
  deps: AppDeps,
  merchant: MerchantAuth,
  sessionId: string,
  body: Schemas['CheckoutTokenRequest'],
): Promise<{ ok: true; token: Schemas['OneTimeToken'] } | { ok: false; problem: SessionTokenProblem }> {
  const row = await repo.findSession(db, merchant.organizationId, sessionId);
  if (!row) return { ok: false, problem: notFound(sessionId) };
  const status = sessionStatus(row);
  if (status !== 'OPEN') return { ok: false, problem: problem('INVALID_STATUS', `The checkout session is ${status}; it takes no more cards.`) };
  if (body.account_id !== undefined && body.account_id !== row.account_id) {
    return { ok: false, problem: problem('INVALID_ACCOUNT_ID', `The account_id is not the checkout session's account.`) };
  }
  const card = body.payment_method.card;
  if (body.card_data !== undefined && JSON.stringify(sortedCard(body.card_data)) !== JSON.stringify(sortedCard(card))) {
    return { ok: false, problem: invalid([{ path: '/body/card_data', message: 'is not the card of payment_method.card' }]) };
  }
  const checked = checkCard(card, '/body/payment_method/card');
  if (!checked.ok) return checked;
  // A session takes a bounded number of cards: whoever holds the public key cannot grow the tokens without end.
  const max = deps.config.checkoutSessionMaxCards;
  if (!(await repo.takeSessionCard(db, 'checkout', merchant.organizationId, row.id, max))) {
    return { ok: false, problem: problem('INVALID_STATUS', `The checkout session took its ${max} cards; create a new checkout session.`) };
  }
  const token = await mintToken(db, deps.services.tokenBox, checked.card, {
    organizationId: merchant.organizationId,
    accountId: row.account_id,
    country: row.country,
    session: row,
  });
  return { ok: true, token: toApiToken(token) };
}

const sortedCard = (c: Schemas['TokenCardInput']) => Object.fromEntries(Object.entries(c).sort(([a], [b]) => a.localeCompare(b)));

/** POST /tokens (secret key, PCI-certified organizations): a token bound to its account only. */
export async function createServerToken(
  db: Queryable,
  deps: AppDeps,
  merchant: MerchantAuth,
  body: Schemas['CreateTokenRequest'],
): Promise<
  | { ok: true; token: Schemas['OneTimeToken'] }
  | { ok: false; problem: ReturnType<typeof problem<'PCI_CERTIFICATION_REQUIRED'> | typeof problem<'INVALID_ACCOUNT_ID'> | typeof problem<'INVALID_CARD'>> }
> {
  if (!merchant.pciCertified) {
    return { ok: false, problem: problem('PCI_CERTIFICATION_REQUIRED', 'Sending card data from your servers needs a PCI-certified organization; tokenize in the shopper\'s browser with a checkout session instead.') };
  }
  if (!(await accountBelongsTo(db, body.account_id, merchant.organizationId))) {
    return { ok: false, problem: problem('INVALID_ACCOUNT_ID', 'The account_id is not an account of your organization.') };
  }
  const checked = checkCard(body.card_data, '/body/card_data');
  if (!checked.ok) return checked;
  const token = await mintToken(db, deps.services.tokenBox, checked.card, {
    organizationId: merchant.organizationId,
    accountId: body.account_id,
    country: body.country ?? null,
    session: null,
  });
  return { ok: true, token: toApiToken(token) };
}
