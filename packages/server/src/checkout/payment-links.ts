/**
 * Payment links (issue 25 §5): a page payorch hosts (`checkout_url`) where a shopper pays the link's amount
 * through the hosted card form. The page (served by the hosted form's routes) uses the functions at the
 * end: `linkPage` reads what a visit shows (a visit writes nothing), `openLinkCheckout` makes a checkout
 * session of the link when the shopper submits a card (its tokens are bound to the link's amount), and
 * `payLink` pays with a one-time token of that session through createPayment, like any payment. One-time links take one live payment (checked under the link's row lock in the token claim).
 */
import type { Lenient } from '../http/lenient-input.js';
import type { CreatePaymentInput } from '../payments/create-payment.js';
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import type { AppDeps, MerchantAuth } from '../context.js';
import type { Queryable } from '../db/database.js';
import { problem } from '../http/problems.js';
import type { Logger } from '../platform/logger.js';
import { createPayment, type CreatePaymentOutcome } from '../payments/create-payment.js';
import { checkAmountAt } from '../payments/money.js';
import { tenancyRepository } from '../tenancy/repository.js';
import { linkRefusal, linkStatus, toApiLink } from './link-state.js';
import { checkoutRepository as repo } from './repository.js';
import { createSession, toApiSession } from './sessions.js';
import { accountBelongsTo } from '../tenancy/accounts.js';

export const linkNotFound = (code: string) => problem('PAYMENT_LINK_NOT_FOUND', `No payment link ${code}.`);

export async function createLink(
  db: Queryable,
  organizationId: string,
  body: Lenient<Schemas['PaymentLinkCreateRequest']>,
  baseUrl: string,
): Promise<
  | { ok: true; link: Schemas['PaymentLink'] }
  | { ok: false; problem: ReturnType<typeof problem<'INVALID_REQUEST'> | typeof problem<'INVALID_ACCOUNT_ID'>> }
> {
  const amount = checkAmountAt(body.amount, '/body/amount');
  if (!amount.ok) {
    const { error } = amount;
    return { ok: false, problem: problem('INVALID_REQUEST', `The amount is invalid: ${error.path} ${error.message}.`, { errors: [error] }) };
  }
  const start = body.availability?.start_at;
  const finish = body.availability?.finish_at;
  // A window already past (Yuno's own example has one), or one that ends before it starts, is accepted as
  // the schema allows it: such a link is EXPIRED (link-state.ts), never payable.
  if (!(await accountBelongsTo(db, body.account_id, organizationId))) {
    return { ok: false, problem: problem('INVALID_ACCOUNT_ID', 'The account_id is not an account of your organization.') };
  }
  const code = randomUUID();
  const row = await repo.insertLink(db, {
    code,
    organization_id: organizationId,
    account_id: body.account_id,
    country: body.country,
    description: body.description ?? null,
    merchant_order_id: body.merchant_order_id ?? null,
    currency: body.amount.currency,
    amount_value: amount.decimal,
    capture: body.capture ?? true,
    one_time_use: body.one_time_use ?? true,
    callback_url: body.callback_url ?? null,
    metadata: body.metadata ?? null,
    checkout_url: `${baseUrl}/checkout/links/${code}`,
    start_at: start ?? null,
    finish_at: finish ?? null,
  });
  return { ok: true, link: toApiLink(row) };
}

export async function getLink(db: Queryable, organizationId: string, code: string): Promise<Schemas['PaymentLink'] | undefined> {
  const row = await repo.findLink(db, organizationId, code);
  return row ? toApiLink(row) : undefined;
}

export async function cancelLink(
  db: Queryable,
  organizationId: string,
  code: string,
): Promise<{ ok: true; link: Schemas['PaymentLink'] } | { ok: false; problem: ReturnType<typeof problem<'PAYMENT_LINK_NOT_FOUND'> | typeof problem<'INVALID_STATUS'>> }> {
  return db.transaction(async (tx) => {
    const row = await repo.findLink(tx, organizationId, code, true);
    if (!row) return { ok: false, problem: linkNotFound(code) };
    const status = linkStatus(row);
    if (status === 'CANCELED') return { ok: true, link: toApiLink(row) };
    if (status !== 'ACTIVE') return { ok: false, problem: problem('INVALID_STATUS', `The payment link is ${status}; only an ACTIVE link can be canceled.`) };
    await repo.cancelLink(tx, code);
    return { ok: true, link: toApiLink((await repo.findLink(tx, organizationId, code))!) };
  });
}

// ---- For the link's hosted page (addressed by the code alone: the code is the capability) ----

/** What the hosted page shows and tokenizes with, or why it refuses. */
export type LinkPage =
  | { ok: true; link: Schemas['PaymentLink']; publicApiKey: string; merchantName: string | null }
  | { ok: false; reason: 'NOT_FOUND' | 'CANCELED' | 'EXPIRED' | 'PAID' | 'NOT_STARTED' | 'IN_PROCESS'; link?: Schemas['PaymentLink'] };

export type LinkCheckout = (LinkPage & { ok: false }) | (LinkPage & { ok: true; session: Schemas['CheckoutSession'] });

/**
 * What a visit of the link's page reads (it writes nothing): the link, whether it takes a payment now,
 * and the organization's public key the page's card form tokenizes with.
 */
export async function linkPage(db: Queryable, code: string): Promise<LinkPage> {
  const row = await repo.findLinkByCode(db, code);
  if (!row) return { ok: false, reason: 'NOT_FOUND' };
  const link = toApiLink(row);
  const status = linkStatus(row);
  if (status !== 'ACTIVE') return { ok: false, reason: status, link };
  if (row.not_started) return { ok: false, reason: 'NOT_STARTED', link };
  if (await linkRefusal(db, row.organization_id, code, false)) return { ok: false, reason: 'IN_PROCESS', link };
  const publicApiKey = await tenancyRepository.newestActivePublicKey(db, row.organization_id);
  if (!publicApiKey) return { ok: false, reason: 'NOT_FOUND' };
  const org = await tenancyRepository.findOrganization(db, row.organization_id);
  return { ok: true, link, publicApiKey, merchantName: org?.name ?? null };
}

/**
 * A new checkout session of the link (its tokens are bound to the link's amount), when a shopper
 * submits a card on the link's page (served on `pageOrigin`), not per visit: a visit must cost no
 * write. Refuses a link that takes no payment now.
 */
export async function openLinkCheckout(db: Queryable, code: string, pageOrigin: string): Promise<LinkCheckout> {
  const page = await linkPage(db, code);
  if (!page.ok) return page;
  const row = (await repo.findLinkByCode(db, code))!;
  const created = await createSession(
    db,
    row.organization_id,
    {
      account_id: row.account_id,
      merchant_order_id: row.merchant_order_id ?? row.code,
      payment_description: row.description ?? 'Payment',
      country: row.country as Schemas['CheckoutSessionCreateRequest']['country'],
      amount: { currency: row.currency, value: Number(row.amount_value) },
      ...(row.callback_url ? { callback_url: row.callback_url } : {}),
      allowed_origins: [pageOrigin],
      workflow: 'CHECKOUT',
    },
    code,
  );
  if (!created.ok) return { ok: false, reason: 'NOT_FOUND' };
  return { ...page, session: toApiSession(created.session) };
}

/**
 * Pays the link with a one-time token of one of its checkout sessions (from the page's card form). The
 * payment is an ordinary one (createPayment: routing, failover, events); the token claim refuses a link
 * that takes no payment any more (409 INVALID_STATUS) and a token of another session or link.
 */
export async function payLink(
  deps: AppDeps,
  code: string,
  pay: { checkoutSession: string; token: string },
  context: { baseUrl: string; log: Logger },
): Promise<{ ok: true; payment: Schemas['CreatedPayment'] } | { ok: false; problem: Exclude<CreatePaymentOutcome, { ok: true }>['problem'] | ReturnType<typeof problem<'PAYMENT_LINK_NOT_FOUND'>> }> {
  const row = await repo.findLinkByCode(deps.db, code);
  if (!row) return { ok: false, problem: linkNotFound(code) };
  const session = await repo.findSession(deps.db, row.organization_id, pay.checkoutSession);
  if (!session || session.payment_link_code !== code) return { ok: false, problem: linkNotFound(code) };
  // The page acts for the link's merchant; the card came through payorch's own form.
  const merchant: MerchantAuth = { organizationId: row.organization_id, pciCertified: false, publicKey: '' };
  const input: CreatePaymentInput = {
    account_id: row.account_id,
    description: row.description ?? 'Payment link',
    country: row.country as Schemas['CreatePaymentRequest']['country'],
    merchant_order_id: row.merchant_order_id ?? row.code,
    amount: { currency: row.currency, value: Number(row.amount_value) },
    customer_payer: {},
    workflow: 'SDK_CHECKOUT',
    checkout: { session: session.id },
    payment_method: { type: 'CARD', token: pay.token, ...(row.capture ? {} : { detail: { card: { capture: false } } }) },
    ...(row.metadata ? { metadata: row.metadata as Schemas['Metadata'] } : {}),
  };
  const outcome = await createPayment(deps.db, deps, merchant, input, {
    db: deps.db,
    vault: deps.services.vault,
    provider: deps.services.provider,
    organizationId: row.organization_id,
    pciCertified: false,
    baseUrl: context.baseUrl,
    log: context.log,
  });
  return outcome;
}
