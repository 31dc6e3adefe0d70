/**
 * AES-256-GCM sealing of vault secrets (the PAN, a bank account's details). A fresh 96-bit IV per
 * message; the 128-bit tag authenticates the ciphertext and its context (AAD: which organization and
 * which vaulted record it belongs to), so a ciphertext copied onto another row does not decrypt.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { Keyring, VaultKey } from './keyring.js';

export interface Sealed {
  ciphertext: Buffer;
  iv: Buffer;
  tag: Buffer;
  keyId: string;
}

export class VaultDecryptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VaultDecryptionError';
  }
}

export function seal(key: VaultKey, plaintext: string, aad: string): Sealed {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key.material, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { ciphertext, iv, tag: cipher.getAuthTag(), keyId: key.id };
}

/** Opens a sealed value with the key its row names; throws VaultDecryptionError (no detail about the data). */
export function open(keyring: Keyring, sealed: { ciphertext: Uint8Array; iv: Uint8Array; tag: Uint8Array; keyId: string }, aad: string): string {
  const key = keyring.byId.get(sealed.keyId);
  if (!key) throw new VaultDecryptionError(`vault key ${sealed.keyId} is not in the keyring`);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.material, Buffer.from(sealed.iv));
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(Buffer.from(sealed.tag));
    return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext)), decipher.final()]).toString('utf8');
  } catch {
    throw new VaultDecryptionError(`a vault record did not authenticate under key ${sealed.keyId}`);
  }
}

/** A key check value: proves which key material an id stands for without revealing it. */
export function keyCheckValue(key: VaultKey): string {
  return createHmac('sha256', key.material).update('payorch vault key check value v1').digest('hex').slice(0, 32);
}
