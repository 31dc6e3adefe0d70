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

export class MemoryRateLimitStore implements RateLimitStore {
  private readonly windows = new Map<string, { window: number; count: number }>();

  hit(key: string, windowSeconds: number): RateLimitHit {
    const now = Date.now();
    const window = windowOf(now, windowSeconds);
    const current = this.windows.get(key);
    const next = current && current.window === window ? { window, count: current.count + 1 } : { window, count: 1 };
    this.windows.set(key, next);
    if (this.windows.size > 10_000) {
      for (const [k, v] of this.windows) if (v.window < window) this.windows.delete(k);
    }
    return { count: next.count, resetAt: (window + 1) * windowSeconds * 1000 };
  }
}

/**
 * Counters in the database, shared by every instance, without a database write per request: while an
 * organization is far below its limit (under half of it) this instance counts locally and adds its
 * count to the shared row every `flushMs`; from half the limit on, and on an organization's first
 * request in a window, each request adds itself (with anything pending) to the row and reads the total,
 * so the decision at the limit is exact up to other instances' last unflushed interval.
 */
export class DatabaseRateLimitStore implements RateLimitStore {
  /** shared: the row's count when last read; pending: counted here, not sent; inFlight: being sent by a flush. */
  private readonly counters = new Map<string, { window: number; windowSeconds: number; shared: number; pending: number; inFlight: number }>();
  private flushTimer: NodeJS.Timeout | undefined;
  private lastPurge = 0;

  constructor(
    private readonly db: Queryable,
    private readonly limit: number,
    private readonly flushMs = 100,
  ) {}

  hit(key: string, windowSeconds: number): RateLimitHit | Promise<RateLimitHit> {
    const now = Date.now();
    const window = windowOf(now, windowSeconds);
    const resetAt = (window + 1) * windowSeconds * 1000;
    let counter = this.counters.get(key);
    if (!counter || counter.window !== window) {
      counter = { window, windowSeconds, shared: 0, pending: 0, inFlight: 0 };
      this.counters.set(key, counter);
    } else if (counter.shared + counter.inFlight + counter.pending + 1 < this.limit / 2) {
      // A flush in flight has taken its requests out of `pending` but not yet into `shared`: they still count.
      counter.pending += 1;
      this.flushTimer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
      return { count: counter.shared + counter.inFlight + counter.pending, resetAt };
    }
    return this.hitShared(key, counter, now, resetAt);
  }

  /** Adds this request (with anything pending) to the shared row and reads the total. */
  private async hitShared(key: string, counter: { window: number; shared: number; pending: number; inFlight: number }, now: number, resetAt: number): Promise<RateLimitHit> {
    const add = counter.pending + 1;
    counter.pending = 0;
    // What this instance knows was counted, should the row not show an in-flight flush yet.
    const known = counter.shared + counter.inFlight + add;
    const total = await this.add(key, counter.window, add);
    counter.shared = Math.max(counter.shared, total);
    await this.purgeOldWindows(now, counter.window);
    return { count: Math.max(total, known), resetAt };
  }

  /** Adds the locally counted requests to the shared rows (errors keep them pending for the next try). */
  async flush(): Promise<void> {
    this.flushTimer = undefined;
    for (const [key, counter] of this.counters) {
      const add = counter.pending;
      if (add === 0) continue;
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
    const now = Date.now();
    for (const [key, c] of this.counters) if (c.pending === 0 && c.inFlight === 0 && c.window < windowOf(now, c.windowSeconds)) this.counters.delete(key);
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
