/**
 * `payment_method.vault_on_success` (issue 14 §1): a raw card that has just paid successfully is enrolled
 * for the paying customer, exactly as POST /customers/{id}/payment-methods would enroll it (same checks,
 * same sealing, same enrollment.enrolled event), inside the payment's transaction. The card was already
 * validated for the payment, so the enrollment cannot refuse it; if it does anyway, the payment stands
 * and keeps no vaulted_token.
 */
import type { CreatePaymentInput } from './create-payment.js';
import type { Schemas } from '@payorch/types';
import type { Logger } from '../platform/logger.js';
import type { ProviderCard, ProviderCardInfo } from '../providers/provider.js';
import { enrollPaymentMethod, type VaultContext } from '../vault/service.js';

/** What the enrollment needs besides the payment's transaction: who asks, and the public base address. */
export type VaultOnSuccessContext = VaultContext & { log: Logger };

/** `cardInfo`: the BIN data the payment's provider reported, so the vaulted card shows its issuer as the payment does. */
export async function vaultOnSuccess(
  ctx: VaultOnSuccessContext,
  customerId: string,
  input: CreatePaymentInput,
  cardInfo?: ProviderCardInfo,
  /** The card of a one-time token (the request has no card_data then); its security code is not kept. */
  tokenCard?: ProviderCard,
): Promise<string | null> {
  const given = input.payment_method.detail?.card?.card_data;
  const raw = given ?? (tokenCard ? {
    number: tokenCard.number,
    holder_name: tokenCard.holderName ?? undefined,
    expiration_month: tokenCard.expirationMonth,
    expiration_year: tokenCard.expirationYear,
    security_code: undefined,
  } : undefined);
  if (!raw) return null;
  const enrolled = await enrollPaymentMethod(ctx, customerId, null, {
    account_id: input.account_id,
    country: input.country,
    type: 'CARD',
    card_data: {
      number: raw.number,
      holder_name: raw.holder_name,
      expiration_month: raw.expiration_month,
      expiration_year: raw.expiration_year,
      security_code: raw.security_code,
    },
  } as Schemas['EnrollPaymentMethodRequest'], cardInfo);
  if (!enrolled.ok) {
    ctx.log.warn({ code: enrolled.problem.body.code }, 'vault_on_success: the card could not be enrolled');
    return null;
  }
  return enrolled.method.vaulted_token;
}
