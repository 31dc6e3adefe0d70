/**
 * The checkout domain's long-lived service: the box that seals a one-time token's card. Its key is
 * derived from the vault keyring for this purpose only (keyring/secret-box.ts), so a token's
 * ciphertext never shares a key with a vaulted card or any other secret. Tokens live minutes: one sealed
 * under a key retired since simply no longer opens and is answered as expired.
 */
import type { Keyring } from '../keyring/keyring.js';
import { createPurposeBox, type PurposeBox } from '../keyring/secret-box.js';

declare module '../context.js' {
  interface AppServices {
    /** Seals and opens one-time tokens' cards (checkout/tokens.ts). */
    tokenBox: PurposeBox;
  }
}

export function buildCheckoutServices(keyring: Keyring): { tokenBox: PurposeBox } {
  return { tokenBox: createPurposeBox(keyring, { salt: 'payorch one-time token card v1', info: 'one-time-token' }) };
}
