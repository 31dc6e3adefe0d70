/**
 * Card fingerprints: HMAC-SHA256 of the PAN under a per-organization key derived with HKDF from the
 * vault's fingerprint root key and the organization id. The same card has the same fingerprint within
 * an organization and unrelated fingerprints across organizations; without the key, a fingerprint
 * cannot be brute-forced back to a PAN (a plain hash of a PAN could be, PCI DSS 3.5.1.1).
 */
import { createHmac, hkdfSync } from 'node:crypto';
import type { VaultKey } from '../../keyring/keyring.js';

const SALT = Buffer.from('payorch card fingerprint v1', 'utf8');

export function organizationFingerprintKey(root: VaultKey, organizationId: string): Buffer {
  return Buffer.from(hkdfSync('sha256', root.material, SALT, Buffer.from(`organization:${organizationId}`, 'utf8'), 32));
}

/**
 * Derived keys kept per root key and organization: a payment derived its organization's key twice (the
 * card's fingerprint, the idempotency fingerprint), each HKDF ~2 % of a payment's CPU (issue 26). They are
 * no more secret than the root key this process already holds. Bounded: the oldest organization goes first.
 */
const derived = new WeakMap<VaultKey, Map<string, Buffer>>();
export const FINGERPRINT_KEYS_KEPT = 10_000;

function keyOf(root: VaultKey, organizationId: string): Buffer {
  let keys = derived.get(root);
  if (!keys) derived.set(root, (keys = new Map()));
  let key = keys.get(organizationId);
  if (!key) {
    if (keys.size >= FINGERPRINT_KEYS_KEPT) keys.delete(keys.keys().next().value!);
    keys.set(organizationId, (key = organizationFingerprintKey(root, organizationId)));
  }
  return key;
}

/** 64 hex characters. */
export function cardFingerprint(root: VaultKey, organizationId: string, pan: string): string {
  return createHmac('sha256', keyOf(root, organizationId)).update(pan, 'utf8').digest('hex');
}
