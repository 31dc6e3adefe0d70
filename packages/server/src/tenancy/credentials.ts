import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new key pair. Secrets are 256 random bits, so a plain SHA-256 is the right storage hash. */
export function generateKeyPair(): { publicKey: string; secret: string; secretSha256: Buffer } {
  const publicKey = `pk_${randomBytes(18).toString('base64url')}`;
  const secret = `sk_${randomBytes(32).toString('base64url')}`;
  return { publicKey, secret, secretSha256: sha256(secret) };
}

export function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Constant-time comparison of a presented secret with a stored hash. */
export function secretMatches(presented: string, storedSha256: Uint8Array): boolean {
  const candidate = sha256(presented);
  return storedSha256.length === candidate.length && timingSafeEqual(candidate, storedSha256);
}

/** Constant-time string equality (for the admin key). */
export function constantTimeEquals(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}
