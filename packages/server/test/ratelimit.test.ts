/**
 * Rate limiting per organization: 429 RATE_LIMITED with Retry-After and RateLimit-* headers past the
 * limit, other organizations unaffected, and with the database store the limit holds across instances.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DatabaseRateLimitStore, MemoryRateLimitStore } from '../src/ratelimit/store.js';
import { loadConfig } from '../src/platform/config.js';
import { createLogger } from '../src/platform/logger.js';
import { startServer } from '../src/server.js';
import { expectProblem } from './support/assertions.js';
import { ADMIN_KEY, backends, useServer } from './support/harness.js';
import { inOneWindow } from './support/minute-window.js';
import { vaultKeyOf } from './support/vault-fixtures.js';

/** Fixed windows are per minute: start a burst well inside one. */

for (const backend of backends()) {
  describe(`rate limiting on ${backend}`, () => {
    const t = useServer(backend, { env: { RATE_LIMIT_PER_MINUTE: '5', RATE_LIMIT_STORE: 'database' } });

    it('allows the limit, then answers 429 with Retry-After; other organizations are unaffected', async () => {
      const { statuses, last, remaining } = await inOneWindow(async (attempt) => {
        const statuses: number[] = [];
        const remaining: (string | null)[] = [];
        let last: Response | undefined;
        for (let i = 0; i < 6; i++) {
          last = await t.fetch('/customers', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ merchant_customer_id: `rl-${attempt}-${i}` }) });
          statuses.push(last.status);
          if (i < 5) {
            expect(last.headers.get('ratelimit-limit')).toBe('5');
            remaining.push(last.headers.get('ratelimit-remaining'));
          }
        }
        return { statuses, last: last!, remaining };
      });
      expect(remaining).toEqual(['4', '3', '2', '1', '0']);
      expect(statuses).toEqual([201, 201, 201, 201, 201, 429]);
      await expectProblem(last, 429, 'RATE_LIMITED');
      expect(Number(last.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(last.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      // The rejected request wrote nothing.
      expect(await t.db.query("SELECT 1 FROM customers WHERE merchant_customer_id LIKE 'rl-%-5'")).toHaveLength(0);

      const other = await t.createOrganization();
      const res = await t.clientFor(other).POST('/customers', { body: { merchant_customer_id: 'rl-other' } });
      expect(res.response.status).toBe(201);
    });

    it('with the database store, the limit holds across two instances on one database', async () => {
      const org = await t.createOrganization();
      const config = loadConfig({
        PORT: '0', HOST: '127.0.0.1', SANDBOX: 'false', PUBLIC_BASE_URL: 'https://pay.example.com', ADMIN_API_KEY: ADMIN_KEY, RATE_LIMIT_PER_MINUTE: '5', RATE_LIMIT_STORE: 'database', LOG_LEVEL: 'silent',
        // A second instance shares the first one's vault key, as instances of one deployment do.
        VAULT_ENCRYPTION_KEY: await vaultKeyOf(t),
      });
      const second = await startServer({ config, db: t.db, log: createLogger('silent') });
      try {
        const headers = { 'content-type': 'application/json', 'public-api-key': org.public_api_key, 'private-secret-key': org.private_secret_key };
        // After the second instance started (a start can take seconds on a busy machine), not before it.
        const statuses = await inOneWindow(async (attempt) => {
          const statuses: number[] = [];
          for (let i = 0; i < 6; i++) {
            const base = i % 2 === 0 ? t.baseUrl : `${second.url}/v1`;
            const res = await fetch(`${base}/customers`, { method: 'POST', headers, body: JSON.stringify({ merchant_customer_id: `rl2-${attempt}-${i}` }) });
            statuses.push(res.status);
          }
          return statuses;
        });
        expect(statuses).toEqual([201, 201, 201, 201, 201, 429]);
      } finally {
        await second.close();
      }
    });

    it('the database store counts locally far below the limit, shares its count on flush, and is exact at the limit across instances', async () => {
      const limit = 100;
      const seen = await inOneWindow(async () => {
        const key = `org:${randomUUID()}`;
        // Two instances' stores; the timer never fires during the test, flushes are explicit.
        const [a, b] = [new DatabaseRateLimitStore(t.db, limit, 600_000), new DatabaseRateLimitStore(t.db, limit, 600_000)];
        const shared = async () => (await t.db.query<{ count: number }>('SELECT count FROM rate_limit_windows WHERE bucket = $1', [key]))[0]?.count ?? 0;
        const counts: number[] = [];
        for (let i = 0; i < 40; i++) counts.push((await (i % 2 ? b : a).hit(key, 60)).count);
        const beforeFlush = await shared(); // only each instance's first request of the window wrote
        await Promise.all([a.flush(), b.flush()]);
        const afterFlush = await shared();
        for (let i = 40; i < 130; i++) counts.push((await (i % 2 ? b : a).hit(key, 60)).count);
        await Promise.all([a.flush(), b.flush()]);
        return { counts, beforeFlush, afterFlush, atEnd: await shared() };
      });
      expect(seen.beforeFlush).toBe(2);
      expect(seen.afterFlush).toBe(40);
      expect(seen.counts.filter((c) => c <= limit)).toHaveLength(limit);
      expect(seen.counts.slice(-30).every((c) => c > limit)).toBe(true);
      expect(seen.atEnd).toBe(130);
    });

    it('a request counted while a flush is in flight still sees the flushed requests (no leak under load)', async () => {
      const counts = await inOneWindow(async () => {
        const key = `org:${randomUUID()}`;
        const store = new DatabaseRateLimitStore(t.db, 5, 600_000);
        const first = await store.hit(key, 60); // the window's first request: written
        const second = await store.hit(key, 60); // far below the limit: counted locally
        const flushing = store.flush(); // takes the local count and is writing it…
        const third = await store.hit(key, 60); // …while this one is counted
        await flushing;
        return [first.count, second.count, third.count];
      });
      // Before: the third saw only the written 1 (the flushed one was neither pending nor shared yet) and said 2.
      expect(counts).toEqual([1, 2, 3]);
    });

    it('far below the limit a request is counted at once, without a promise; a window\'s first and those near the limit go to the row', async () => {
      const kinds = await inOneWindow(async () => {
        const key = `org:${randomUUID()}`;
        const store = new DatabaseRateLimitStore(t.db, 6, 600_000);
        const seen: string[] = [];
        for (let i = 0; i < 5; i++) {
          const hit = store.hit(key, 60);
          seen.push(`${hit instanceof Promise ? 'row' : 'local'}:${(await hit).count}`);
        }
        return seen;
      });
      // Issue 26: each promise of a request costs again under the request scope's hooks. At half the limit (3) counting turns exact.
      expect(kinds).toEqual(['row:1', 'local:2', 'row:3', 'row:4', 'row:5']);
      expect(new MemoryRateLimitStore().hit('k', 60)).toEqual({ count: 1, resetAt: expect.any(Number) });
    });
  });
}
