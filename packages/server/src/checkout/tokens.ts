/**
 * One-time tokens (issue 25 §2; docs/design.md "Checkout"): a card checked like an enrollment's, sealed
 * under the token box (never the security code: it is checked and dropped, as the vault never keeps one),
 * answered as a token that one payment may use within TOKEN_TTL_SECONDS. A checkout session's token is
 * bound to the session's amount, currency and account; a server-made token (POST /tokens) to its account.
 *
 * `claimToken` runs inside the payment's phase A transaction: it locks the token row, checks it, marks it
 * used by the payment and destroys the sealed card in that same transaction, so two concurrent payments
 * with one token cannot both pass (the second waits for the lock, then sees it used), and a payment that
 * is refused after the claim (rolled back) leaves the token usable.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import type { AppDeps } from '../context.js';
import { toIsoMicros, type Queryable } from '../db/database.js';
import { problem, type FieldError } from '../http/problems.js';
import { compareDecimal } from '../payments/money.js';
import type { ClaimedToken, ClaimProblem } from '../payments/one-time-token-port.js';
import { maskedCardData, validateCard, type ValidatedCard } from '../vault/card-validation.js';
import type { PurposeBox } from '../keyring/secret-box.js';
import { linkRefusal, UNPAID_STATUSES } from './link-state.js';
import { checkoutRepository as repo, type SessionRow, type TokenRow } from './repository.js';

// A session with a payment whose status this transaction cannot see yet (PostgreSQL re-reads only the
// locked session row after waiting for its lock, not the payment the other transaction inserted) has a
// payment in flight: taken, like a paid one. Only a payment known to have failed leaves the session open.
const sessionPaid = (s: SessionRow) =>
  s.payment_id !== null && (s.payment_status === null || !(UNPAID_STATUSES as readonly string[]).includes(s.payment_status));

/** A token pays within 10 minutes of its creation. */
export const TOKEN_TTL_SECONDS = 600;

type CardInput = Schemas['TokenCardInput'];
/** What the sealed blob holds: enough to charge the card, never its security code. */
interface SealedCard {
  number: string;
  expiration_month: number;
  expiration_year: number;
  holder_name: string | null;
  brand: string;
}
const cardContext = (organizationId: string, token: string) => `payorch:one-time-token:v1:${organizationId}:${token}`;

/** Checks a card to tokenize; errors name the request's own path to it. */
export function checkCard(card: CardInput, path: string): { ok: true; card: ValidatedCard } | { ok: false; problem: ReturnType<typeof problem<'INVALID_CARD'>> } {
  const checked = validateCard({
    number: card.number,
    expiration_month: card.expiration_month,
    expiration_year: card.expiration_year,
    security_code: card.security_code,
    holder_name: card.holder_name,
    brand: card.brand,
  });
  if (checked.ok) return checked;
  const errors: FieldError[] = checked.errors.map((e) => ({ path: e.path.replace(/^\/body\/card_data/, path), message: e.message }));
  return { ok: false, problem: problem('INVALID_CARD', `The card is not valid: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}.`, { errors }) };
}

/** Seals the card and stores the token (one INSERT; the caller's transaction or the pool). */
export async function mintToken(
  db: Queryable,
  box: PurposeBox,
  card: ValidatedCard,
  binding: { organizationId: string; accountId: string; country: string | null; session: SessionRow | null },
): Promise<TokenRow> {
  const token = randomUUID();
  const secret: SealedCard = {
    number: card.pan,
    expiration_month: card.expirationMonth,
    expiration_year: card.expirationYear,
    holder_name: card.holderName,
    brand: card.brand,
  };
  return repo.insertToken(db, {
    token,
    organization_id: binding.organizationId,
    account_id: binding.accountId,
    checkout_session: binding.session?.id ?? null,
    currency: binding.session?.currency ?? null,
    amount_value: binding.session?.amount_value ?? null,
    country: binding.country,
    card_data: maskedCardData(card) as unknown as Record<string, unknown>,
    sealed: box.seal(cardContext(binding.organizationId, token), JSON.stringify(secret)),
    ttlSeconds: TOKEN_TTL_SECONDS,
  });
}

export function toApiToken(row: TokenRow): Schemas['OneTimeToken'] {
  return {
    token: row.token,
    vaulted_token: null,
    vault_on_success: false,
    type: 'CARD',
    card_data: row.card_data as unknown as Schemas['TokenCardData'],
    customer: null,
    installment: null,
    country: row.country,
    customer_session: null,
    checkout_session: row.checkout_session,
    account_id: row.account_id,
    amount: row.currency !== null && row.amount_value !== null ? { currency: row.currency, value: Number(row.amount_value) } : null,
    expires_at: toIsoMicros(row.expires_at),
  };
}


const TOKEN_PATH = '/body/payment_method/token';
/**
 * Checks `token` for a payment in the payment's transaction, locking its row: it must be this
 * organization's, unused, unexpired, and (a session's token) for exactly this amount, currency and
 * account. Nothing is written until `consume` is called (once the payment is sure to be inserted in
 * this same transaction): a payment refused after the check leaves the token usable. Payments reaches it
 * as its OneTimeTokens port (payments/one-time-token-port.ts, wired in src/services.ts).
 */
export async function claimToken(
  tx: Queryable,
  deps: AppDeps,
  organizationId: string,
  token: string,
  payment: { accountId: string; currency: string; amount: string; checkoutSession: string | null },
): Promise<{ ok: true; value: ClaimedToken } | { ok: false; problem: ClaimProblem }> {
  const row = await repo.lockToken(tx, organizationId, token);
  // Another organization's token is answered exactly like an unknown one.
  if (!row) return { ok: false, problem: problem('TOKEN_NOT_FOUND', `No one-time token ${token}.`, { errors: [{ path: TOKEN_PATH, message: 'is not a token of this organization' }] }) };
  if (row.used_at !== null) {
    return { ok: false, problem: problem('TOKEN_ALREADY_USED', `The one-time token ${token} was used by a payment already; tokenize the card again.`, { errors: [{ path: TOKEN_PATH, message: 'was used already' }] }) };
  }
  if (row.expired || row.card_ciphertext === null) {
    return { ok: false, problem: problem('TOKEN_EXPIRED', `The one-time token ${token} expired; tokenize the card again.`, { errors: [{ path: TOKEN_PATH, message: 'expired' }] }) };
  }
  const mismatch: FieldError[] = [];
  if (row.account_id !== payment.accountId) mismatch.push({ path: '/body/account_id', message: `is not the token's account (${row.account_id})` });
  if (row.currency !== null && row.currency !== payment.currency) mismatch.push({ path: '/body/amount/currency', message: `is not the token's currency (${row.currency})` });
  if (row.amount_value !== null && (row.currency !== payment.currency || compareDecimal(row.amount_value, payment.amount) !== 0)) {
    mismatch.push({ path: '/body/amount/value', message: `is not the amount the token was made for (${Number(row.amount_value)} ${row.currency})` });
  }
  if (payment.checkoutSession !== null && row.checkout_session !== payment.checkoutSession) {
    mismatch.push({ path: '/body/checkout/session', message: 'is not the checkout session of the token' });
  }
  if (mismatch.length === 0 && row.checkout_session !== null) {
    // One paid payment per session (and per one-time link): the session's row, and its link's, are locked
    // so that two tokens of one session cannot both pay, even concurrently.
    const session = await repo.findSession(tx, organizationId, row.checkout_session, true);
    if (session && sessionPaid(session)) {
      return { ok: false, problem: problem('INVALID_STATUS', 'The checkout session of this token is paid already.') };
    }
    const refusal = session?.payment_link_code ? await linkRefusal(tx, organizationId, session.payment_link_code, true) : null;
    if (refusal) return { ok: false, problem: problem('INVALID_STATUS', `This token's payment link takes no payment: ${refusal}.`) };
  }
  if (mismatch.length > 0) {
    return { ok: false, problem: problem('TOKEN_MISMATCH', `The one-time token does not fit this payment: ${mismatch.map((e) => `${e.path} ${e.message}`).join('; ')}.`, { errors: mismatch }) };
  }
  let sealed: SealedCard;
  try {
    sealed = JSON.parse(
      deps.services.tokenBox.open(cardContext(organizationId, token), {
        ciphertext: row.card_ciphertext,
        iv: row.card_iv!,
        tag: row.card_tag!,
        keyId: row.card_key_id!,
      }),
    ) as SealedCard;
  } catch {
    // Sealed under a keyring key retired since (tokens live minutes): as good as expired.
    return { ok: false, problem: problem('TOKEN_EXPIRED', `The one-time token ${token} can no longer be opened; tokenize the card again.`, { errors: [{ path: TOKEN_PATH, message: 'expired' }] }) };
  }
  return {
    ok: true,
    value: {
      card: {
        number: sealed.number,
        holderName: sealed.holder_name,
        expirationMonth: sealed.expiration_month,
        expirationYear: sealed.expiration_year,
        securityCode: null,
        brand: sealed.brand,
      },
      cardData: row.card_data as unknown as Schemas['TokenCardData'],
      checkoutSession: row.checkout_session,
      async consume(db: Queryable, paymentId: string) {
        await repo.consumeToken(db, token, paymentId);
        if (row.checkout_session !== null) await repo.setSessionPayment(db, row.checkout_session, paymentId);
      },
    },
  };
}
