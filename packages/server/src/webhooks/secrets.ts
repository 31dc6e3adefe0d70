/**
 * Webhook signing secrets. Unlike API secrets they must be readable again (every delivery is signed
 * with them), so they are stored sealed with the vault keyring (keyring/secret-box.ts, a purpose
 * of their own). Each row names the vault key id it was sealed under; vault key rotation is followed by
 * re-sealing on start (rewrapSecrets in services.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Sealed } from '../keyring/cipher.js';
import type { Keyring } from '../keyring/keyring.js';
import { createPurposeBox, type SealedValue } from '../keyring/secret-box.js';

/** A new Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export interface SecretBox {
  readonly activeKeyId: string;
  seal(endpointId: string, secretId: string, secret: string): Sealed;
  open(endpointId: string, secretId: string, sealed: SealedValue): string;
  /** Whether a row sealed under this key id should be re-sealed under the active key. */
  isStale(keyId: string): boolean;
}

// Bound to its endpoint and row: a ciphertext copied onto another row does not open.
const context = (endpointId: string, secretId: string) => `payorch:whsec:v1:${endpointId}:${secretId}`;

export function createSecretBox(vaultKeyring: Keyring): SecretBox {
  // The derivation stored secrets were sealed with: never change these two strings.
  const box = createPurposeBox(vaultKeyring, { salt: 'payorch webhook signing secrets v1', info: 'webhook-secret' });
  return {
    activeKeyId: box.activeKeyId,
    seal: (endpointId, secretId, secret) => box.seal(context(endpointId, secretId), secret),
    open: (endpointId, secretId, sealed) => box.open(context(endpointId, secretId), sealed),
    isStale: (keyId) => box.isStale(keyId),
  };
}
