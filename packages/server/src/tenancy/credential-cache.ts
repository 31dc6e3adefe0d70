/**
 * A short-lived cache of active API keys, so a merchant request does not pay a database round trip for
 * its credentials every time (it was one of three sequential queries behind GET /payments/{id}).
 *
 * - Keys that were found are cached with their secret's hash (checked on every request as before).
 * - Unknown public keys are cached as unknown for the same TTL, so a flood of requests with one made-up
 *   key costs one lookup, not one each. A key issued through this instance is forgotten as unknown at
 *   once (it works at once); one issued through another instance works here within the TTL.
 * - Revoking a key through this instance drops it at once; on other instances of the same database it
 *   stops working within the TTL (CREDENTIAL_CACHE_SECONDS, default 5; 0 turns the cache off).
 * - Bounded: the oldest entry goes first past `maxEntries`; unknown keys have their own map, so made-up
 *   keys never push real ones out.
 */
import type { Queryable } from '../db/database.js';
import { tenancyRepository, type ApiKeyRow } from './repository.js';

export class CredentialCache {
  private readonly entries = new Map<string, { key: ApiKeyRow; expiresAt: number }>();
  /** Public keys the database did not know, until when. */
  private readonly unknown = new Map<string, number>();
  /**
   * Lookups under way, by public key: when an entry expires under load, the requests that find it expired
   * share one lookup instead of each making its own (issue 26: paid once per key per TTL, not per request).
   */
  private readonly pending = new Map<string, Promise<ApiKeyRow | undefined>>();
  /**
   * Counts forget() calls: a lookup that began before one may have read a key since revoked (or not yet
   * issued), so it answers its own requests but leaves nothing in the cache for the next ones.
   */
  private forgets = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  /** Synchronous when the answer is cached (nearly every request): no promise for the common case. */
  findActiveApiKey(db: Queryable, publicKey: string): ApiKeyRow | undefined | Promise<ApiKeyRow | undefined> {
    const now = Date.now();
    const hit = this.entries.get(publicKey);
    if (hit && hit.expiresAt > now) return hit.key;
    if ((this.unknown.get(publicKey) ?? 0) > now) return undefined;
    const shared = this.pending.get(publicKey);
    if (shared) return shared;
    const lookup: Promise<ApiKeyRow | undefined> = this.lookUp(db, publicKey, now).finally(() => {
      if (this.pending.get(publicKey) === lookup) this.pending.delete(publicKey);
    });
    this.pending.set(publicKey, lookup);
    return lookup;
  }

  private async lookUp(db: Queryable, publicKey: string, now: number): Promise<ApiKeyRow | undefined> {
    const forgetsBefore = this.forgets;
    const key = await tenancyRepository.findActiveApiKey(db, publicKey);
    if (this.forgets !== forgetsBefore) return key;
    this.entries.delete(publicKey);
    this.unknown.delete(publicKey);
    if (this.ttlMs > 0) {
      if (key) remember(this.entries, publicKey, { key, expiresAt: now + this.ttlMs }, this.maxEntries);
      else remember(this.unknown, publicKey, now + this.ttlMs, this.maxEntries);
    }
    return key;
  }

  /** After a revocation or an issue: the key's state is read afresh on its next request. */
  forget(publicKey: string): void {
    this.forgets++;
    this.entries.delete(publicKey);
    this.unknown.delete(publicKey);
    // A lookup under way may have read the key before the change: it must not be shared any more.
    this.pending.delete(publicKey);
  }
}

function remember<V>(map: Map<string, V>, key: string, value: V, maxEntries: number): void {
  if (map.size >= maxEntries) map.delete(map.keys().next().value!);
  map.set(key, value);
}
