/**
 * Webhook signing secrets. Unlike API secrets they must be readable again (every delivery is signed
 * with them), so they are stored encrypted: AES-256-GCM under a key derived with HKDF from each key of
 * the vault's keyring (VAULT_ENCRYPTION_KEY, or the sandbox vault-key.json), with a purpose label of
 * its own so that webhook ciphertexts and card ciphertexts never share a key. Each row names the vault
 * key id it was sealed under; vault key rotation is followed by re-sealing on start (rewrap).
 */
import { hkdfSync, randomBytes } from 'node:crypto';
import { open, seal, type Sealed } from '../vault/crypto/cipher.js';
import type { Keyring, VaultKey } from '../vault/crypto/keyring.js';

const HKDF_SALT = Buffer.from('payorch webhook signing secrets v1', 'utf8');

/** A new Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export interface SecretBox {
  readonly activeKeyId: string;
  seal(endpointId: string, secretId: string, secret: string): Sealed;
  open(endpointId: string, secretId: string, sealed: { ciphertext: Uint8Array; iv: Uint8Array; tag: Uint8Array; keyId: string }): string;
  /** Whether a row sealed under this key id should be re-sealed under the active key. */
  isStale(keyId: string): boolean;
}

function derive(key: VaultKey): VaultKey {
  return { id: key.id, material: Buffer.from(hkdfSync('sha256', key.material, HKDF_SALT, Buffer.from('webhook-secret', 'utf8'), 32)) };
}

// Bound to its endpoint and row: a ciphertext copied onto another row does not open.
const context = (endpointId: string, secretId: string) => `payorch:whsec:v1:${endpointId}:${secretId}`;

export function createSecretBox(vaultKeyring: Keyring): SecretBox {
  const keys = vaultKeyring.keys.map(derive);
  const ring: Keyring = { active: keys[0]!, keys, byId: new Map(keys.map((k) => [k.id, k])), source: vaultKeyring.source };
  return {
    activeKeyId: ring.active.id,
    seal: (endpointId, secretId, secret) => seal(ring.active, secret, context(endpointId, secretId)),
    open: (endpointId, secretId, sealed) => open(ring, sealed, context(endpointId, secretId)),
    isStale: (keyId) => keyId !== ring.active.id,
  };
}
