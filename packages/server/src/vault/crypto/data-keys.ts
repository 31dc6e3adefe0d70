/**
 * Per-record data keys (envelope encryption). Each vaulted method's secrets are sealed under a random
 * 256-bit key of its own; that key is stored wrapped by a purpose key derived from the vault keyring, in its
 * own row (payment_method_keys). Deleting that row is what shreds the method: every copy of its ciphertext
 * (dead row versions, WAL, backups) then needs a key that no longer exists anywhere the keyring can reach,
 * except in copies of the key row itself made before the deletion (see docs/design.md, card vault security).
 */
import { randomBytes } from 'node:crypto';
import { open, seal, type Sealed } from '../../keyring/cipher.js';
import type { Keyring, VaultKey } from '../../keyring/keyring.js';
import { createPurposeBox, type SealedValue } from '../../keyring/secret-box.js';

/** The *_key_id a column sealed under its record's data key names (a keyring id has no colon). */
export const RECORD_KEY_ID = 'record-key:v1';

export const newDataKey = (): VaultKey => ({ id: RECORD_KEY_ID, material: randomBytes(32) });

const ringOf = (key: VaultKey): Keyring => ({ active: key, keys: [key], byId: new Map([[key.id, key]]), source: 'environment' });

export const sealWithDataKey = (key: VaultKey, plaintext: string, aad: string): Sealed => seal(key, plaintext, aad);
export const openWithDataKey = (key: VaultKey, sealed: SealedValue, aad: string): string => open(ringOf(key), sealed, aad);

/** Bound to the organization and the method's id: a wrapped key copied onto another row does not open. */
const wrapContext = (organizationId: string, paymentMethodId: string) => `payorch:data-key:v1:${organizationId}:${paymentMethodId}`;

export interface DataKeyWrapper {
  wrap(organizationId: string, paymentMethodId: string, key: VaultKey): Sealed;
  /** Throws VaultDecryptionError when the keyring lacks the key or the value does not authenticate. */
  unwrap(organizationId: string, paymentMethodId: string, wrapped: SealedValue): VaultKey;
  /** Whether a key wrapped under this keyring key id should be re-wrapped under the active one. */
  isStale(keyId: string): boolean;
}

export function createDataKeyWrapper(keyring: Keyring): DataKeyWrapper {
  // A purpose of its own: never the key that seals anything else.
  const box = createPurposeBox(keyring, { salt: 'payorch vault data key wrapping v1', info: 'payment-method' });
  return {
    wrap: (org, id, key) => box.seal(wrapContext(org, id), key.material.toString('base64')),
    unwrap: (org, id, wrapped) => ({ id: RECORD_KEY_ID, material: Buffer.from(box.open(wrapContext(org, id), wrapped), 'base64') }),
    isStale: (keyId) => box.isStale(keyId),
  };
}
