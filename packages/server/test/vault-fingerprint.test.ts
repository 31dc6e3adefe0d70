/**
 * Card fingerprints (vault/crypto/fingerprint.ts): HMAC-SHA256 of the PAN under the organization's key
 * derived with HKDF from the root key. The derived keys are kept per root key and organization; what is
 * kept must never change a fingerprint: the same as deriving afresh, per organization, per root key, and
 * after the oldest kept keys were let go.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cardFingerprint, FINGERPRINT_KEYS_KEPT, organizationFingerprintKey } from '../src/vault/crypto/fingerprint.js';

const PAN = '4111111111111111';
const fresh = (root: { id: string; material: Buffer }, org: string, pan: string) => createHmac('sha256', organizationFingerprintKey(root, org)).update(pan, 'utf8').digest('hex');

describe('card fingerprints with kept organization keys', () => {
  const root = { id: 'k1', material: randomBytes(32) };

  it('equal to a fresh derivation, on the first and the later calls; 64 hex characters', () => {
    const first = cardFingerprint(root, 'org_a', PAN);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(first).toBe(fresh(root, 'org_a', PAN));
    expect(cardFingerprint(root, 'org_a', PAN)).toBe(first);
    expect(cardFingerprint(root, 'org_a', '5555555555554444')).toBe(fresh(root, 'org_a', '5555555555554444'));
  });

  it('unrelated across organizations and across root keys, whatever was kept before', () => {
    const other = { id: 'k2', material: randomBytes(32) };
    const a = cardFingerprint(root, 'org_a', PAN);
    const b = cardFingerprint(root, 'org_b', PAN);
    const a2 = cardFingerprint(other, 'org_a', PAN);
    expect(new Set([a, b, a2]).size).toBe(3);
    expect(a2).toBe(fresh(other, 'org_a', PAN));
  });

  it('past the bound the oldest keys go and every fingerprint is still the fresh one', () => {
    const bounded = { id: 'k3', material: randomBytes(32) };
    const firstOrg = cardFingerprint(bounded, 'org_0', PAN);
    for (let i = 1; i <= FINGERPRINT_KEYS_KEPT + 5; i++) cardFingerprint(bounded, `org_${i}`, PAN);
    expect(cardFingerprint(bounded, 'org_0', PAN)).toBe(firstOrg);
    expect(cardFingerprint(bounded, `org_${FINGERPRINT_KEYS_KEPT + 5}`, PAN)).toBe(fresh(bounded, `org_${FINGERPRINT_KEYS_KEPT + 5}`, PAN));
  });
});
