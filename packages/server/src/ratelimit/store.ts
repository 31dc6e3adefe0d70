/**
 * Rate limiting per organization: a fixed window counter behind a small store interface, so it can be
 * kept in the process (one instance, e.g. PGlite) or in the database (any number of instances on one
 * PostgreSQL, where a per-process count would multiply the limit by the instance count).
 */
import type { Queryable } from '../db/database.js';

export interface RateLimitHit {
  count: number;
  resetAt: number;
}

export interface RateLimitStore {
  /**
   * Counts one request of `key` in the current window; returns the count so far and the window's end.
   * Synchronously when the answer is known here (the common case), so a request that is far below its
   * limit pays no promise for it (issue 26: every promise costs again under the request scope's hooks).
   */
  hit(key: string, windowSeconds: number): RateLimitHit | Promise<RateLimitHit>;
}

const windowOf = (now: number, windowSeconds: number) => Math.floor(now / 1000 / windowSeconds);

/** Keys one window of a MemoryRateLimitStore holds; a new key past it evicts the window's oldest one. */
export const MEMORY_STORE_MAX_KEYS = 100_000;

/**
 * Counters in the process, one map per window (per window length): a new window replaces the old map
 * whole, so a hit costs O(1) however many keys the window saw, and a past window's keys go at once. A
 * window holds at most `maxKeys` keys; a key it does not hold yet, once it is full, evicts the key first
 * counted in it. The memory stays bounded, and nobody's count is shared with strangers': a shared bucket
 * for the keys past the bound let whoever filled the window (100,000 IPv6 /64s) have every later shopper,
 * of any organization, refused on a first request, and a merchant's one failed authentication block its
 * address. What eviction gives away is bounded too: the evicted key (usually the filler's own, the
 * oldest) starts again from 0, a budget of one key's limit bought with `maxKeys` requests.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly windows = new Map<number, { window: number; counts: Map<string, number> }>();

  constructor(private readonly maxKeys = MEMORY_STORE_MAX_KEYS) {}

  hit(key: string, windowSeconds: number): RateLimitHit {
    const window = windowOf(Date.now(), windowSeconds);
    let slot = this.windows.get(windowSeconds);
    if (!slot || slot.window !== window) this.windows.set(windowSeconds, (slot = { window, counts: new Map() }));
    const counts = slot.counts;
    const seen = counts.get(key);
    if (seen === undefined && counts.size >= this.maxKeys) counts.delete(counts.keys().next().value!);
    const count = (seen ?? 0) + 1;
    counts.set(key, count);
    return { count, resetAt: (window + 1) * windowSeconds * 1000 };
  }

  /** Keys counted in the current windows: bounded by maxKeys per window length. */
  get size(): number {
    let size = 0;
    for (const slot of this.windows.values()) size += slot.counts.size;
    return size;
  }
}

/**
 * Counters in the database, shared by every instance, without a database write per request: while an
 * organization is far below its limit (under half of it) this instance counts locally and adds its
 * count to the shared row every `flushMs`; from half the limit on, and on an organization's first
 * request in a window, requests add themselves (with anything pending) to the row and read the total,
 * so the decision at the limit is exact up to other instances' last unflushed interval.
 *
 * One key never takes more than one pooled connection of this instance: while a key's write is in
 * flight, its next requests wait in memory (holding no connection) and go to the row together in the
 * next write, each answered with its own place in the total. These writes run before the request's
 * organization scope is set (db/organization-gate.ts lets them through), so without this one
 * organization's burst on its own row (held by a slow write, or locked) would take every connection of
 * the pool from the others. And once this instance knows a key is at its limit for the window (a row
 * only grows within it), it answers "over the limit" until the window ends without writing at all.
 */
type Waiter = { resolve: (hit: RateLimitHit) => void; reject: (err: unknown) => void };
interface Counter {
  window: number;
  windowSeconds: number;
  /** The row's count when last read. */
  shared: number;
  /** Counted here and answered, not sent yet. */
  pending: number;
  /** Being sent by a flush. */
  inFlight: number;
  /** Being sent by the key's write (requests and pending), not yet in `shared`. */
  writing: number;
  /** Requests waiting for the key's next write. */
  queued: Waiter[];
}

export class DatabaseRateLimitStore implements RateLimitStore {
  private readonly counters = new Map<string, Counter>();
  private flushTimer: NodeJS.Timeout | undefined;
  private lastPurge = 0;
  /** The counter count at which a new key first sweeps past windows' idle counters (doubles with what stays). */
  private sweepAt: number;

  constructor(
    private readonly db: Queryable,
    private readonly limit: number,
    private readonly flushMs = 100,
    private readonly sweepFrom = 10_000,
  ) {
    this.sweepAt = sweepFrom;
  }

  /** Counters held in this process (for tests and metrics). */
  get size(): number {
    return this.counters.size;
  }

  hit(key: string, windowSeconds: number): RateLimitHit | Promise<RateLimitHit> {
    const now = Date.now();
    const window = windowOf(now, windowSeconds);
    const resetAt = (window + 1) * windowSeconds * 1000;
    let counter = this.counters.get(key);
    if (!counter || counter.window !== window) {
      // Keys seen once a window (rotating client addresses) never leave anything pending, so no flush would
      // drop them: new keys sweep instead, amortized (the threshold doubles with what stays).
      if (!counter && this.counters.size >= this.sweepAt) this.sweep(now);
      counter = { window, windowSeconds, shared: 0, pending: 0, inFlight: 0, writing: 0, queued: [] };
      this.counters.set(key, counter);
      return this.hitShared(key, counter, now, resetAt);
    }
    // Everything this instance knows was counted in the window (a flush in flight has taken its requests
    // out of `pending` but not yet into `shared`: they still count).
    const known = counter.shared + counter.inFlight + counter.pending + counter.writing + counter.queued.length;
    // At the limit already: this request is over it whatever the row says now, and so is every later one
    // of the window. Answered here, with no write.
    if (known >= this.limit) return { count: known + 1, resetAt };
    if (known + 1 < this.limit / 2) {
      counter.pending += 1;
      this.flushTimer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
      return { count: known + 1, resetAt };
    }
    return this.hitShared(key, counter, now, resetAt);
  }

  /** Adds this request (with anything pending) to the shared row and reads the total: in the key's one write at a time. */
  private hitShared(key: string, counter: Counter, now: number, resetAt: number): Promise<RateLimitHit> {
    return new Promise<RateLimitHit>((resolve, reject) => {
      counter.queued.push({ resolve, reject });
      if (counter.writing === 0 && counter.queued.length === 1) void this.write(key, counter, now, resetAt);
    });
  }

  /** The key's writes, one after the other, each taking every request queued meanwhile. */
  private async write(key: string, counter: Counter, now: number, resetAt: number): Promise<void> {
    while (counter.queued.length > 0) {
      const batch = counter.queued.splice(0);
      const pending = counter.pending;
      const add = pending + batch.length;
      counter.pending = 0;
      counter.writing = add;
      // What this instance knows was counted, should the row not show an in-flight flush yet.
      const known = counter.shared + counter.inFlight + add;
      try {
        const total = await this.add(key, counter.window, add);
        counter.shared = Math.max(counter.shared, total);
        counter.writing = 0;
        const last = Math.max(total, known);
        batch.forEach((waiter, i) => waiter.resolve({ count: last - batch.length + 1 + i, resetAt }));
      } catch (err) {
        // Not counted: the requests fail (500), what was counted here stays pending.
        counter.writing = 0;
        counter.pending += pending;
        for (const waiter of batch) waiter.reject(err);
      }
    }
    // Counted locally while the write was in flight (a flush skips a key that is writing).
    if (counter.pending > 0) this.flushTimer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
    try {
      await this.purgeOldWindows(now, counter.window);
    } catch {
      // Garbage only: the next purge takes it.
    }
  }

  /** Adds the locally counted requests to the shared rows (errors keep them pending for the next try). */
  async flush(): Promise<void> {
    this.flushTimer = undefined;
    for (const [key, counter] of this.counters) {
      const add = counter.pending;
      // A key with a write of its own in flight sends its pending requests with it.
      if (add === 0 || counter.writing > 0 || counter.queued.length > 0) continue;
      counter.pending = 0;
      counter.inFlight += add;
      try {
        const total = await this.add(key, counter.window, add);
        counter.shared = Math.max(counter.shared, total);
      } catch {
        counter.pending += add;
      } finally {
        counter.inFlight -= add;
      }
    }
    this.sweep(Date.now());
  }

  /** Drops the counters of past windows with nothing left to send or answer. */
  private sweep(now: number): void {
    for (const [key, c] of this.counters) {
      if (c.pending === 0 && c.inFlight === 0 && c.writing === 0 && c.queued.length === 0 && c.window < windowOf(now, c.windowSeconds)) this.counters.delete(key);
    }
    this.sweepAt = Math.max(this.sweepFrom, 2 * this.counters.size);
  }

  private async add(key: string, window: number, count: number): Promise<number> {
    const rows = await this.db.query<{ count: number }>(
      `INSERT INTO rate_limit_windows (bucket, window_index, count) VALUES ($1, $2, $3)
       ON CONFLICT (bucket, window_index) DO UPDATE SET count = rate_limit_windows.count + EXCLUDED.count
       RETURNING count`,
      [key, window, count],
    );
    return rows[0]!.count;
  }

  // Old windows are garbage; drop them now and then rather than on every request.
  private async purgeOldWindows(now: number, window: number): Promise<void> {
    if (now - this.lastPurge <= 60_000) return;
    this.lastPurge = now;
    await this.db.query('DELETE FROM rate_limit_windows WHERE window_index < $1', [window - 1]);
  }
}
