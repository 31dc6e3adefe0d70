/**
 * Card fingerprints: HMAC-SHA256 of the PAN under a per-organization key derived with HKDF from the
 * vault's fingerprint root key and the organization id. The same card has the same fingerprint within
 * an organization and unrelated fingerprints across organizations; without the key, a fingerprint
 * cannot be brute-forced back to a PAN (a plain hash of a PAN could be, PCI DSS 3.5.1.1).
 */
import { createHmac, hkdfSync } from 'node:crypto';
import type { VaultKey } from './keyring.js';

const SALT = Buffer.from('payorch card fingerprint v1', 'utf8');

export function organizationFingerprintKey(root: VaultKey, organizationId: string): Buffer {
  return Buffer.from(hkdfSync('sha256', root.material, SALT, Buffer.from(`organization:${organizationId}`, 'utf8'), 32));
}

/** 64 hex characters. */
export function cardFingerprint(root: VaultKey, organizationId: string, pan: string): string {
  return createHmac('sha256', organizationFingerprintKey(root, organizationId)).update(pan, 'utf8').digest('hex');
}
