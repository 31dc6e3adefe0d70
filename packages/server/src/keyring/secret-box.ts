/**
 * Sealing secrets that must be readable again (signing secrets, wrapped keys): AES-256-GCM under keys
 * derived with HKDF from each key of the vault keyring, one derivation per purpose, so ciphertexts of
 * different purposes (and the vault's own card ciphertexts) never share a key. Each sealed value names
 * the vault key id it was sealed under and is bound to a context (its row) by the GCM tag, so a
 * ciphertext copied onto another row does not open. Rotation: values sealed under an older key are
 * re-sealed under the active one at start (see `isStale`), after which the old key can be retired.
 */
import { hkdfSync } from 'node:crypto';
import { open, seal, type Sealed } from './cipher.js';
import type { Keyring, VaultKey } from './keyring.js';

export interface SealedValue {
  ciphertext: Uint8Array;
  iv: Uint8Array;
  tag: Uint8Array;
  keyId: string;
}

export interface PurposeBox {
  readonly activeKeyId: string;
  seal(context: string, secret: string): Sealed;
  /** Throws VaultDecryptionError when the key is missing or the value does not authenticate. */
  open(context: string, sealed: SealedValue): string;
  /** Whether a value sealed under this key id should be re-sealed under the active key. */
  isStale(keyId: string): boolean;
}

/** `salt` and `info` name the purpose; never reuse a pair for another kind of secret. */
export function createPurposeBox(vaultKeyring: Keyring, purpose: { salt: string; info: string }): PurposeBox {
  const salt = Buffer.from(purpose.salt, 'utf8');
  const info = Buffer.from(purpose.info, 'utf8');
  const derive = (key: VaultKey): VaultKey => ({ id: key.id, material: Buffer.from(hkdfSync('sha256', key.material, salt, info, 32)) });
  const keys = vaultKeyring.keys.map(derive);
  const ring: Keyring = { active: keys[0]!, keys, byId: new Map(keys.map((k) => [k.id, k])), source: vaultKeyring.source };
  return {
    activeKeyId: ring.active.id,
    seal: (context, secret) => seal(ring.active, secret, context),
    open: (context, sealed) => open(ring, sealed, context),
    isStale: (keyId) => keyId !== ring.active.id,
  };
}
