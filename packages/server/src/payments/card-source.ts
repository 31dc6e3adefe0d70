/**
 * Where the card of a payment comes from: raw card data (PCI-certified organizations only, checked like
 * the vault checks an enrollment) or a card vaulted for the paying customer. Either way the result is the
 * in-memory card for the provider plus the masked data the payment records.
 */
import type { Schemas } from '@payorch/types';
import type { AppDeps, MerchantAuth } from '../context.js';
import type { Queryable } from '../db/database.js';
import { problem, type FieldError } from '../http/problems.js';
import type { ProviderCard } from '../providers/provider.js';
import { maskedCardData, validateCard } from '../vault/card-validation.js';
import { loadVaultedCard } from './vaulted-card.js';

/** Masked card data known before the provider answers (issuer data comes from the provider or vault). */
export type KnownCardData = Schemas['PaymentCardData'];

export interface ResolvedCard {
  card: ProviderCard;
  cardData: KnownCardData;
  vaultedToken: string | null;
  storedCredentials: Schemas['StoredCredentials'];
}

export type CardSourceProblem = ReturnType<
  typeof problem<'PCI_CERTIFICATION_REQUIRED'> | typeof problem<'INVALID_CARD'> | typeof problem<'PAYMENT_METHOD_NOT_FOUND'>
>;

export const RAW_CARD_PATH = '/body/payment_method/detail/card/card_data';

export async function resolveCard(
  db: Queryable,
  deps: AppDeps,
  merchant: MerchantAuth,
  customerId: string | null,
  method: Schemas['CreatePaymentMethod'],
): Promise<{ ok: true; value: ResolvedCard } | { ok: false; problem: CardSourceProblem }> {
  const raw = method.detail?.card?.card_data;
  // createPayment has checked that exactly one of vaulted_token and card_data is given.
  if (raw !== undefined) {
    if (!merchant.pciCertified) {
      return {
        ok: false,
        problem: problem('PCI_CERTIFICATION_REQUIRED', 'Raw card data needs a PCI-certified organization; pay with a vaulted_token instead.'),
      };
    }
    const checked = validateCard({
      number: raw.number,
      holder_name: raw.holder_name,
      expiration_month: raw.expiration_month,
      expiration_year: raw.expiration_year,
      security_code: raw.security_code,
      brand: raw.brand,
    });
    if (!checked.ok) {
      // The vault names its own request's fields; here the card sits under payment_method.detail.card.
      const errors: FieldError[] = checked.errors.map((e) => ({ path: e.path.replace(/^\/body\/card_data/, RAW_CARD_PATH), message: e.message }));
      return { ok: false, problem: problem('INVALID_CARD', `The card is not valid: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}.`, { errors }) };
    }
    const c = checked.card;
    return {
      ok: true,
      value: {
        card: {
          number: c.pan,
          holderName: c.holderName,
          expirationMonth: c.expirationMonth,
          expirationYear: c.expirationYear,
          securityCode: raw.security_code,
          brand: c.brand,
        },
        cardData: { ...maskedCardData(c), fingerprint: deps.services.vault.fingerprint(merchant.organizationId, c.pan) },
        vaultedToken: null,
        storedCredentials: { reason: null, usage: null, subscription_agreement_id: null, network_transaction_id: null },
      },
    };
  }

  const token = method.vaulted_token!;
  // createPayment refuses a vaulted_token without a customer before getting here.
  const vaulted = customerId === null ? undefined : await loadVaultedCard(db, deps, merchant.organizationId, customerId, token);
  if (!vaulted) {
    return { ok: false, problem: problem('PAYMENT_METHOD_NOT_FOUND', `No payment method with vaulted_token ${token} for this customer.`) };
  }
  return { ok: true, value: vaulted };
}
