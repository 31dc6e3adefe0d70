/**
 * A short-lived cache of active API keys, so a merchant request does not pay a database round trip for
 * its credentials every time (it was one of three sequential queries behind GET /payments/{id}).
 *
 * - Only keys that were found are cached (with their secret's hash, checked on every request as before):
 *   an unknown key always asks the database, so a newly issued key works at once.
 * - Revoking a key through this instance drops it at once; on other instances of the same database it
 *   stops working within the TTL (CREDENTIAL_CACHE_SECONDS, default 5; 0 turns the cache off).
 * - Bounded: the oldest entry goes first past `maxEntries`.
 */
import type { Queryable } from '../db/database.js';
import { tenancyRepository, type ApiKeyRow } from './repository.js';

export class CredentialCache {
  private readonly entries = new Map<string, { key: ApiKeyRow; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  async findActiveApiKey(db: Queryable, publicKey: string): Promise<ApiKeyRow | undefined> {
    const now = Date.now();
    const hit = this.entries.get(publicKey);
    if (hit && hit.expiresAt > now) return hit.key;
    const key = await tenancyRepository.findActiveApiKey(db, publicKey);
    this.entries.delete(publicKey);
    if (key && this.ttlMs > 0) {
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(publicKey, { key, expiresAt: now + this.ttlMs });
    }
    return key;
  }

  /** After a revocation: the key is refused from the next request on. */
  forget(publicKey: string): void {
    this.entries.delete(publicKey);
  }
}
