/**
 * A card vaulted for the paying customer, ready for the provider. The vault owns decryption
 * (vault/service.ts loadCardForPayment); this adapts its answer to what a payment records.
 */
import type { AppDeps } from '../context.js';
import type { Queryable } from '../db/database.js';
import { loadCardForPayment, markUsed } from '../vault/service.js';
import type { ResolvedCard } from './card-source.js';
import { paymentsRepository } from './repository.js';

/** The customer's ENROLLED card by token; undefined when unknown, another customer's or organization's, or unusable. */
export async function loadVaultedCard(
  db: Queryable,
  deps: AppDeps,
  organizationId: string,
  customerId: string,
  vaultedToken: string,
): Promise<ResolvedCard | undefined> {
  const loaded = await loadCardForPayment(db, deps, organizationId, vaultedToken);
  if (!loaded || loaded.method.customerId !== customerId) return undefined;
  // Credential-on-file: the first successful charge of a stored card is FIRST, later ones USED.
  const usedBefore = await paymentsRepository.vaultedTokenCharged(db, organizationId, vaultedToken);
  return {
    card: loaded.card,
    cardData: loaded.method.cardData,
    vaultedToken: loaded.method.vaultedToken,
    storedCredentials: { reason: 'CARD_ON_FILE', usage: usedBefore ? 'USED' : 'FIRST', subscription_agreement_id: null, network_transaction_id: null },
  };
}

/** Records the outcome of a payment with the vaulted card (last_successfully_used…). */
export async function markVaultedCardUsed(db: Queryable, vaultedToken: string, succeeded: boolean): Promise<void> {
  await markUsed(db, vaultedToken, new Date(), succeeded);
}
