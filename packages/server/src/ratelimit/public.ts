/**
 * Limits of the unauthenticated checkout surface (the hosted pages /checkout/… and the public-key API
 * routes): anyone may call them, so each request is counted in a few buckets, in order, and refused
 * (429 with Retry-After) at the first bucket past its limit, before any further work:
 *
 *   address:<client>        every hosted page and public-key request of one client address (IPv6 by /64)
 *   hosted-org:<org>        hosted-page requests for one organization's sessions and links
 *   public-key:<key>        public-key API requests made with one key
 *   public-path:<path>      public-key API requests on one checkout or customer session
 *
 * A request refused by an early bucket is not counted in the later ones: one noisy address spends its
 * own budget, not its target organization's; an organization's hosted pages and public key have budgets
 * of their own, apart from the organization's API limit (RATE_LIMIT_PER_MINUTE), so whoever holds a
 * public key (everyone: it is in pages) cannot use up the merchant's server-side requests, and one
 * organization's hammered link limits no other organization. Counters live in the rate-limit store
 * (the database with several instances); a bucket found over its limit is remembered in this instance
 * until its window ends, so a refused request costs no store write.
 */
import type { RateLimitStore } from './store.js';

export interface Bucket {
  key: string;
  /** Requests per window; 0 turns this bucket off. */
  limit: number;
}

export class PublicLimiter {
  private readonly stores = new Map<number, RateLimitStore>();
  private readonly blockedUntil = new Map<string, number>();

  constructor(
    private readonly storeFor: (limit: number) => RateLimitStore,
    private readonly windowSeconds = 60,
    private readonly maxBlocked = 10_000,
  ) {}

  /** Counts the request in each bucket in order; the seconds to wait when one is past its limit, else 0. */
  async hit(...buckets: Bucket[]): Promise<number> {
    return (await this.count(buckets)).wait;
  }

  /** As hit, with each counted bucket's count and window end (by key), for RateLimit-* headers. */
  async count(buckets: Bucket[]): Promise<{ wait: number; counted: Map<string, { count: number; resetAt: number }> }> {
    const now = Date.now();
    const counted = new Map<string, { count: number; resetAt: number }>();
    for (const bucket of buckets) {
      if (bucket.limit <= 0) continue;
      const until = this.blockedUntil.get(bucket.key);
      if (until !== undefined) {
        if (until > now) return { wait: Math.max(1, Math.ceil((until - now) / 1000)), counted };
        this.blockedUntil.delete(bucket.key);
      }
      const { count, resetAt } = await this.store(bucket.limit).hit(bucket.key, this.windowSeconds);
      counted.set(bucket.key, { count, resetAt });
      if (count > bucket.limit) {
        this.block(bucket.key, resetAt);
        return { wait: Math.max(1, Math.ceil((resetAt - Date.now()) / 1000)), counted };
      }
    }
    return { wait: 0, counted };
  }

  private store(limit: number): RateLimitStore {
    let store = this.stores.get(limit);
    if (!store) this.stores.set(limit, (store = this.storeFor(limit)));
    return store;
  }

  private block(key: string, until: number): void {
    // Full: the block first set goes (blocks end in about the order they were set; no scan per block).
    if (this.blockedUntil.size >= this.maxBlocked) this.blockedUntil.delete(this.blockedUntil.keys().next().value!);
    this.blockedUntil.set(key, until);
  }
}
