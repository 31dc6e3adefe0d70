/**
 * What a card payment needs of checkout's one-time tokens (checkout/tokens.ts): the claim of `payment_method.token`
 * in the payment's phase A transaction. Declared here so payments imports nothing of checkout: checkout builds
 * on payments (a payment link creates payments, a session's token pays one), never the reverse. Checkout's
 * claimToken implements it, wired once into AppServices (src/services.ts).
 */
import type { Schemas } from '@payorch/types';
import type { AppDeps } from '../context.js';
import type { Queryable } from '../db/database.js';
import type { problem } from '../http/problems.js';
import type { ProviderCard } from '../providers/provider.js';

export type ClaimProblem = ReturnType<typeof problem<'INVALID_STATUS'> | typeof problem<'TOKEN_NOT_FOUND'> | typeof problem<'TOKEN_ALREADY_USED'> | typeof problem<'TOKEN_EXPIRED'> | typeof problem<'TOKEN_MISMATCH'>>;

export interface ClaimedToken {
  card: ProviderCard;
  cardData: Schemas['TokenCardData'];
  checkoutSession: string | null;
  /** Marks the token used by the payment and destroys its sealed card (same transaction as the check). */
  consume(db: Queryable, paymentId: string): Promise<void>;
}

export interface OneTimeTokens {
  /**
   * Checks `token` for a payment in the payment's transaction, locking its row; nothing is written until
   * `consume` is called (once the payment is sure to be inserted in this same transaction).
   */
  claim(
    tx: Queryable,
    deps: AppDeps,
    organizationId: string,
    token: string,
    payment: { accountId: string; currency: string; amount: string; checkoutSession: string | null },
  ): Promise<{ ok: true; value: ClaimedToken } | { ok: false; problem: ClaimProblem }>;
}

declare module '../context.js' {
  interface AppServices {
    /** Checkout's one-time tokens as a payment claims them (payments/one-time-token-port.ts). */
    oneTimeTokens: OneTimeTokens;
  }
}
