/**
 * The event log (GET /v1/events, GET /v1/events/{event_id}): every webhook event of the organization,
 * newest first, whether or not an endpoint got it; filtered by type and created range, paged with a
 * cursor; events older than 30 days are not answered.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { describe, expect, it } from 'vitest';
import { recordEvent } from '../src/webhooks/index.js';
import { envelopeJson } from '../src/webhooks/events.js';
import { expectProblem, expectSchema } from './support/assertions.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { createCustomer, createPayment, enrollCard, getPayment } from './support/payments.js';

const list = async (t: TestServer, query: string) => {
  const res = await t.fetch(`/events?${query}`);
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const body = JSON.parse(text) as Schemas['EventList'];
  expectSchema('EventList', body);
  return body;
};

for (const backend of backends()) {
  describe(`event log on ${backend}`, () => {
    const t = useServer(backend);

    it('lists events newest first with no endpoint at all, pages with starting_after, filters by type and created range', async () => {
      const start = new Date().toISOString();
      const customerId = await createCustomer(t);
      const tokens = [await enrollCard(t, customerId), await enrollCard(t, customerId)];
      for (const token of tokens) {
        const res = await t.fetch(`/customers/${customerId}/payment-methods/${token}/unenroll`, { method: 'POST', headers: { 'x-idempotency-key': randomUUID() } });
        expect(res.status).toBe(200);
      }
      const unenrolled = await list(t, `type=enrollment.unenrolled&created_gte=${encodeURIComponent(start)}`);
      expect(unenrolled.events.map((e) => (e.type_event === 'enrollment.unenrolled' ? e.data.payment_method.vaulted_token : e.type_event))).toEqual([...tokens].reverse());
      expect(unenrolled).toMatchObject({ has_more: false, next_cursor: null });
      for (const e of unenrolled.events) expect(e).toMatchObject({ type: 'enrollment', type_event: 'enrollment.unenrolled', account_id: t.sandbox.account_id, version: 1 });

      // Page by page: one event a page, the same events in the same order.
      const first = await list(t, `type=enrollment.unenrolled&created_gte=${encodeURIComponent(start)}&limit=1`);
      expect(first.has_more).toBe(true);
      const second = await list(t, `type=enrollment.unenrolled&created_gte=${encodeURIComponent(start)}&limit=1&starting_after=${first.next_cursor}`);
      expect([...first.events, ...second.events]).toEqual(unenrolled.events);
      expect(second.has_more).toBe(false);

      // Each one by id, exactly as listed.
      for (const e of unenrolled.events) {
        const { data, response } = await t.client.GET('/events/{event_id}', { params: { path: { event_id: e.id } } });
        expect(response.status).toBe(200);
        expectSchema('Event', data);
        expect(data).toEqual(e);
      }
      // A created range that ends before them holds none of them.
      const before = await list(t, `type=enrollment.unenrolled&created_lt=${encodeURIComponent(start)}&limit=100`);
      expect(before.events.map((e) => e.id)).not.toContain(unenrolled.events[0]!.id);
    });

    it('an event older than 30 days is not answered; unknown ids are 404 EVENT_NOT_FOUND; a foreign cursor is 400', async () => {
      const { eventId } = await t.db.transaction((tx) =>
        recordEvent(tx, { organizationId: t.sandbox.organization_id, accountId: null, type: 'enrollment.unenrolled', data: { customer_id: randomUUID(), payment_method: {} } as never, resourceId: `old-${randomUUID().slice(0, 8)}` }),
      );
      expect((await t.fetch(`/events/${eventId}`)).status).toBe(200);
      await t.db.query("UPDATE webhook_events SET created_at = clock_timestamp() - interval '31 days' WHERE id = $1", [eventId]);
      await expectProblem(await t.fetch(`/events/${eventId}`), 404, 'EVENT_NOT_FOUND');
      expect((await list(t, 'limit=100')).events.map((e) => e.id)).not.toContain(eventId);
      await expectProblem(await t.fetch(`/events/${randomUUID()}`), 404, 'EVENT_NOT_FOUND');
      await expectProblem(await t.fetch(`/events?starting_after=${eventId}`), 400, 'INVALID_REQUEST');
    });

    it('a payment event recorded before 2.3.0 (no routing_rules) is answered and delivered in today\'s shape', async () => {
      const created = await createPayment(t);
      const { routing_rules, ...asRecordedBy220 } = await getPayment(t, created.id);
      expect(routing_rules).toBeDefined();
      const { eventId } = await t.db.transaction((tx) =>
        recordEvent(tx, { organizationId: t.sandbox.organization_id, accountId: t.sandbox.account_id, type: 'payment.succeeded', data: { payment: asRecordedBy220 } as never, resourceId: created.id }),
      );
      const preRouting = { smart_routing: false, monitors: false, condition: { id: 0, name: null, description: null } };
      // Through GET /events/{id} (the test server validates responses against the spec) and the list.
      const res = await t.fetch(`/events/${eventId}`);
      const one = (await res.json()) as Schemas['Event'];
      expect(res.status).toBe(200);
      expectSchema('Event', one);
      expect(one.type_event === 'payment.succeeded' && one.data.payment.routing_rules).toEqual(preRouting);
      expect((await list(t, 'type=payment.succeeded&limit=100')).events.find((e) => e.id === eventId)).toEqual(one);
      // As a webhook delivery sends it.
      const [row] = await t.db.query<{ data: unknown; created_at: string }>('SELECT data, created_at FROM webhook_events WHERE id = $1', [eventId]);
      const delivered = JSON.parse(envelopeJson({ id: eventId, type: 'payment.succeeded', accountId: t.sandbox.account_id, data: row!.data, createdAt: row!.created_at }, 0));
      expect(delivered.data.payment.routing_rules).toEqual(preRouting);
      // The stored event is left as it was recorded.
      expect(JSON.stringify(row!.data)).not.toContain('routing_rules');
    });

    it('400 for a bad type, limit or created bound', async () => {
      for (const q of ['type=payment.exploded', 'limit=0', 'limit=101', 'created_gte=yesterday']) {
        await expectProblem(await t.fetch(`/events?${q}`), 400, 'INVALID_REQUEST');
      }
    });
  });
}
