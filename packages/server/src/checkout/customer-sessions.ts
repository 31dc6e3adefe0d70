/**
 * Customer sessions (issue 25 §4): the merchant's server opens one for a customer; the hosted card form
 * enrolls the shopper's card for that customer through it with the public key alone, so the card never
 * passes through the merchant. The enrollment is the vault's own (same checks, sealing, record and event);
 * it needs no PCI certification of the merchant because the card came through payorch's page.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import type { AppDeps, MerchantAuth } from '../context.js';
import { toIsoMicros, type Queryable } from '../db/database.js';
import { customersRepository } from '../customers/repository.js';
import { problem } from '../http/problems.js';
import type { Logger } from '../platform/logger.js';
import { accountBelongsTo } from '../tenancy/accounts.js';
import { enrollPaymentMethod, type EnrollProblem } from '../vault/service.js';
import { checkoutRepository as repo, type CustomerSessionRow } from './repository.js';
import { checkCard } from './tokens.js';

/** A customer session lasts an hour. */
export const CUSTOMER_SESSION_TTL_SECONDS = 3600;

export function toApiCustomerSession(row: CustomerSessionRow): Schemas['CustomerSession'] {
  return {
    customer_session: row.id,
    customer_id: row.customer_id,
    account_id: row.account_id,
    country: row.country,
    callback_url: row.callback_url,
    checkout_id: row.checkout_id,
    allowed_origins: row.allowed_origins,
    created_at: toIsoMicros(row.created_at),
    expires_at: toIsoMicros(row.expires_at),
  };
}

export async function createCustomerSession(
  db: Queryable,
  organizationId: string,
  body: Schemas['CustomerSessionCreateRequest'],
): Promise<
  | { ok: true; session: Schemas['CustomerSession'] }
  | { ok: false; problem: ReturnType<typeof problem<'INVALID_ACCOUNT_ID'> | typeof problem<'CUSTOMER_NOT_FOUND'>> }
> {
  if (!(await accountBelongsTo(db, body.account_id, organizationId))) {
    return { ok: false, problem: problem('INVALID_ACCOUNT_ID', 'The account_id is not an account of your organization.') };
  }
  if (!(await customersRepository.find(db, organizationId, body.customer_id))) {
    return { ok: false, problem: problem('CUSTOMER_NOT_FOUND', `No customer ${body.customer_id}.`) };
  }
  const row = await repo.insertCustomerSession(db, {
    id: randomUUID(),
    organization_id: organizationId,
    account_id: body.account_id,
    customer_id: body.customer_id,
    country: body.country,
    callback_url: body.callback_url ?? null,
    checkout_id: body.checkout_id ?? null,
    allowed_origins: body.allowed_origins ?? [],
    ttlSeconds: CUSTOMER_SESSION_TTL_SECONDS,
  });
  return { ok: true, session: toApiCustomerSession(row) };
}

/** The session if it is this organization's and still open (an expired one is answered as unknown). */
export async function findOpenCustomerSession(db: Queryable, organizationId: string, id: string): Promise<CustomerSessionRow | undefined> {
  const row = await repo.findCustomerSession(db, organizationId, id);
  return row && !row.expired ? row : undefined;
}

export async function enrollThroughSession(
  db: Queryable,
  deps: AppDeps,
  merchant: MerchantAuth,
  sessionId: string,
  body: Schemas['CustomerSessionEnrollRequest'],
  context: { baseUrl: string; log: Logger },
): Promise<
  | { ok: true; method: Schemas['EnrolledPaymentMethod'] }
  | { ok: false; problem: EnrollProblem | ReturnType<typeof problem<'CUSTOMER_SESSION_NOT_FOUND'> | typeof problem<'INVALID_ACCOUNT_ID'> | typeof problem<'INVALID_STATUS'>> }
> {
  const session = await findOpenCustomerSession(db, merchant.organizationId, sessionId);
  if (!session) return { ok: false, problem: problem('CUSTOMER_SESSION_NOT_FOUND', `No open customer session ${sessionId}.`) };
  if (body.account_id !== session.account_id) {
    return { ok: false, problem: problem('INVALID_ACCOUNT_ID', "The account_id is not the customer session's account.") };
  }
  // The card is checked with this request's own paths before the vault sees it.
  const checked = checkCard(body.card_data, '/body/card_data');
  if (!checked.ok) return checked;
  // A session enrolls a bounded number of cards (each one is a provider call and a stored card).
  const max = deps.config.checkoutSessionMaxCards;
  if (!(await repo.takeSessionCard(db, 'customer', merchant.organizationId, session.id, max))) {
    return { ok: false, problem: problem('INVALID_STATUS', `The customer session took its ${max} cards; create a new customer session.`) };
  }
  const enrolled = await enrollPaymentMethod(
    {
      db,
      vault: deps.services.vault,
      provider: deps.services.provider,
      organizationId: merchant.organizationId,
      pciCertified: true,
      baseUrl: context.baseUrl,
      log: context.log,
    },
    session.customer_id,
    null,
    {
      account_id: session.account_id,
      country: body.country,
      type: 'CARD',
      card_data: {
        number: body.card_data.number,
        holder_name: body.card_data.holder_name,
        expiration_month: body.card_data.expiration_month,
        expiration_year: body.card_data.expiration_year,
        ...(body.card_data.security_code !== undefined ? { security_code: body.card_data.security_code } : {}),
        ...(body.card_data.brand !== undefined ? { brand: body.card_data.brand } : {}),
      },
    } as Schemas['EnrollPaymentMethodRequest'],
  );
  return enrolled.ok ? { ok: true, method: enrolled.method } : { ok: false, problem: enrolled.problem };
}
