/**
 * The retention job: events (with their deliveries and attempts) past 30 days and expired idempotency
 * records are removed in small batches; everything younger stays; two instances running it at once
 * remove each row once and neither fails.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RetentionJob } from '../src/retention/job.js';
import { recordEvent } from '../src/webhooks/index.js';
import { backends, useServer, type TestServer } from './support/harness.js';

async function event(t: TestServer, ageDays: number): Promise<string> {
  const { eventId } = await t.db.transaction((tx) =>
    recordEvent(tx, { organizationId: t.sandbox.organization_id, accountId: null, type: 'enrollment.unenrolled', data: { customer_id: randomUUID(), payment_method: {} } as never, resourceId: `ret-${randomUUID().slice(0, 8)}` }),
  );
  await t.db.query("UPDATE webhook_events SET created_at = clock_timestamp() - make_interval(days => $2) WHERE id = $1", [eventId, ageDays]);
  return eventId;
}

async function idempotencyKey(t: TestServer, expiredHoursAgo: number): Promise<string> {
  const key = `ret-${randomUUID()}`;
  await t.db.query(
    `INSERT INTO idempotency_keys (organization_id, idempotency_key, fingerprint, operation_id, status_code, expires_at)
     VALUES ($1, $2, 'f', 'createPayment', 201, clock_timestamp() - make_interval(hours => $3))`,
    [t.sandbox.organization_id, key, expiredHoursAgo],
  );
  return key;
}

const count = async (t: TestServer, sql: string, ids: string[]) => Number((await t.db.query<{ n: string }>(sql, [ids]))[0]!.n);

for (const backend of backends()) {
  describe(`retention on ${backend}`, () => {
    const t = useServer(backend);

    it('removes old events with their deliveries and expired idempotency keys in batches, keeps the rest; two jobs at once agree', async () => {
      // An endpoint subscribed to the type, so the old events have deliveries that must go with them.
      const endpoint = await t.fetch('/webhook-endpoints', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: 'https://merchant.example.com/ret', events: ['enrollment.unenrolled'] }) });
      expect(endpoint.status).toBe(201);
      await t.running.deps.services.webhooks.worker.stop();
      const old = await Promise.all(Array.from({ length: 7 }, () => event(t, 31)));
      const young = await Promise.all([event(t, 29), event(t, 0)]);
      const expiredKeys = await Promise.all(Array.from({ length: 5 }, () => idempotencyKey(t, 1)));
      const liveKeys = await Promise.all([idempotencyKey(t, -23)]);
      expect(await count(t, 'SELECT count(*) AS n FROM webhook_deliveries WHERE event_id = ANY($1)', old)).toBe(7);

      const job = () => new RetentionJob({ db: t.db, log: t.running.deps.log, batchSize: 2, pauseMs: 0 });
      const [a, b] = await Promise.all([job().runOnce(), job().runOnce()]);
      expect(a.events + b.events).toBe(7);
      expect(a.idempotencyKeys + b.idempotencyKeys).toBe(5);

      expect(await count(t, 'SELECT count(*) AS n FROM webhook_events WHERE id = ANY($1)', old)).toBe(0);
      expect(await count(t, 'SELECT count(*) AS n FROM webhook_deliveries WHERE event_id = ANY($1)', old)).toBe(0);
      expect(await count(t, 'SELECT count(*) AS n FROM webhook_events WHERE id = ANY($1)', young)).toBe(2);
      expect(await count(t, 'SELECT count(*) AS n FROM idempotency_keys WHERE idempotency_key = ANY($1)', expiredKeys)).toBe(0);
      expect(await count(t, 'SELECT count(*) AS n FROM idempotency_keys WHERE idempotency_key = ANY($1)', liveKeys)).toBe(1);
      // The young events are still served.
      for (const id of young) expect((await t.fetch(`/events/${id}`)).status).toBe(200);
      // Nothing left to do.
      expect(await job().runOnce()).toEqual({ events: 0, idempotencyKeys: 0, expiredTokens: 0, unpaidLinkSessions: 0 });
    });
  });
}
