/**
 * A connection's provider credentials at rest: sealed with the vault keyring (a purpose of its own,
 * bound to the connection id, so a ciphertext copied onto another row does not open). They are opened
 * only to make a provider call (connections.ts), never returned by the API.
 */
import type { Sealed } from '../keyring/cipher.js';
import type { Keyring } from '../keyring/keyring.js';
import { createPurposeBox, type SealedValue } from '../keyring/secret-box.js';

export interface ConnectionBox {
  readonly activeKeyId: string;
  seal(connectionId: string, credentials: Readonly<Record<string, string>>): Sealed;
  open(connectionId: string, sealed: SealedValue): Record<string, string>;
  /** Whether credentials sealed under this key id should be re-sealed under the active key. */
  isStale(keyId: string): boolean;
}

const context = (connectionId: string) => `payorch:connection-credentials:v1:${connectionId}`;

export function createConnectionBox(vaultKeyring: Keyring): ConnectionBox {
  // The derivation stored credentials were sealed with: never change these two strings.
  const box = createPurposeBox(vaultKeyring, { salt: 'payorch provider connection credentials v1', info: 'connection-credentials' });
  return {
    activeKeyId: box.activeKeyId,
    seal: (connectionId, credentials) => box.seal(context(connectionId), JSON.stringify(credentials)),
    open: (connectionId, sealed) => JSON.parse(box.open(context(connectionId), sealed)) as Record<string, string>,
    isStale: (keyId) => box.isStale(keyId),
  };
}
