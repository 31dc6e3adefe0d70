/**
 * Rate limiting per organization: a fixed window counter behind a small store interface, so it can be
 * kept in the process (one instance, e.g. PGlite) or in the database (any number of instances on one
 * PostgreSQL, where a per-process count would multiply the limit by the instance count).
 */
import type { Queryable } from '../db/database.js';

export interface RateLimitStore {
  /** Counts one request of `key` in the current window; returns the count so far and the window's end. */
  hit(key: string, windowSeconds: number): Promise<{ count: number; resetAt: number }>;
}

const windowOf = (now: number, windowSeconds: number) => Math.floor(now / 1000 / windowSeconds);

export class MemoryRateLimitStore implements RateLimitStore {
  private readonly windows = new Map<string, { window: number; count: number }>();

  async hit(key: string, windowSeconds: number) {
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

export class DatabaseRateLimitStore implements RateLimitStore {
  private lastPurge = 0;

  constructor(private readonly db: Queryable) {}

  async hit(key: string, windowSeconds: number) {
    const now = Date.now();
    const window = windowOf(now, windowSeconds);
    const rows = await this.db.query<{ count: number }>(
      `INSERT INTO rate_limit_windows (bucket, window_index, count) VALUES ($1, $2, 1)
       ON CONFLICT (bucket, window_index) DO UPDATE SET count = rate_limit_windows.count + 1
       RETURNING count`,
      [key, window],
    );
    // Old windows are garbage; drop them now and then rather than on every request.
    if (now - this.lastPurge > 60_000) {
      this.lastPurge = now;
      await this.db.query('DELETE FROM rate_limit_windows WHERE window_index < $1', [window - 1]);
    }
    return { count: rows[0]!.count, resetAt: (window + 1) * windowSeconds * 1000 };
  }
}
