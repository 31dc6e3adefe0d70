/**
 * Webhook endpoints API contract, against a real server and database: registration (with the signing
 * secret shown once, stored encrypted), list/get/update/delete, secret rotation, the delivery log and
 * redelivery, tenancy, and each bad input naming its field. Delivery itself: webhooks-delivery.test.ts.
 */
import type { Schemas } from '@payorch/types';
import { beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../src/webhooks/events.js';
import { EVENT_TYPES } from '../src/webhooks/event-types.js';
import { expectProblem, expectSchema } from './support/assertions.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import spec from '@payorch/types/openapi.json' with { type: 'json' };

const examples = (spec as unknown as { components: { examples: Record<string, { value: unknown }> } }).components.examples;
const payment = examples.PaymentCreated!.value as Schemas['Payment'];
const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const json = { 'content-type': 'application/json' };

async function create(t: TestServer, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Schemas['WebhookEndpointCreated']> {
  const res = await t.fetch('/webhook-endpoints', { method: 'POST', headers: { ...json, ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  expect(res.status, text).toBe(201);
  return JSON.parse(text) as Schemas['WebhookEndpointCreated'];
}

const badCreates: { name: string; body: unknown; field: string }[] = [
  { name: 'missing url', body: { events: ['*'] }, field: '/body/url' },
  { name: 'missing events', body: { url: 'https://merchant.example.com/hooks' }, field: '/body/events' },
  { name: 'url not a URL', body: { url: 'not a url', events: ['*'] }, field: '/body/url' },
  { name: 'url ftp', body: { url: 'ftp://merchant.example.com/hooks', events: ['*'] }, field: '/body/url' },
  { name: 'plain http to a public host (sandbox too)', body: { url: 'http://merchant.example.com/hooks', events: ['*'] }, field: '/body/url' },
  { name: 'plain http to a private address', body: { url: 'http://10.0.0.7/hooks', events: ['*'] }, field: '/body/url' },
  { name: 'https to a private address', body: { url: 'https://192.168.1.20/hooks', events: ['*'] }, field: '/body/url' },
  { name: 'https to the metadata address', body: { url: 'https://169.254.169.254/latest', events: ['*'] }, field: '/body/url' },
  { name: 'credentials in the url', body: { url: 'https://user:pw@merchant.example.com/hooks', events: ['*'] }, field: '/body/url' },
  { name: 'fragment in the url', body: { url: 'https://merchant.example.com/hooks#x', events: ['*'] }, field: '/body/url' },
  { name: 'url over 2048 characters', body: { url: `https://merchant.example.com/${'a'.repeat(2040)}`, events: ['*'] }, field: '/body/url' },
  { name: 'events empty', body: { url: 'https://merchant.example.com/hooks', events: [] }, field: '/body/events' },
  { name: 'unknown event type', body: { url: 'https://merchant.example.com/hooks', events: ['payment.voided'] }, field: '/body/events/0' },
  { name: 'duplicate event type', body: { url: 'https://merchant.example.com/hooks', events: ['payment.succeeded', 'payment.succeeded'] }, field: '/body/events' },
  { name: 'events not an array', body: { url: 'https://merchant.example.com/hooks', events: '*' }, field: '/body/events' },
  { name: 'description too long', body: { url: 'https://merchant.example.com/hooks', events: ['*'], description: 'd'.repeat(256) }, field: '/body/description' },
  { name: 'enabled not a boolean', body: { url: 'https://merchant.example.com/hooks', events: ['*'], enabled: 'yes' }, field: '/body/enabled' },
  { name: 'unknown field', body: { url: 'https://merchant.example.com/hooks', events: ['*'], secret: 'whsec_x' }, field: '/body/secret' },
];

for (const backend of backends()) {
  describe(`webhook endpoints API on ${backend}`, () => {
    const t = useServer(backend);

    beforeAll(async () => {
      // Nothing is delivered here; keep the server's background worker out of the way.
      await t.running.deps.services.webhooks.worker.stop();
    });

    it('201: registers an endpoint and shows its whsec_ secret once; the secret is stored encrypted and never logged', async () => {
      const created = await create(t, { url: 'https://merchant.example.com/payorch/hooks', events: ['payment.succeeded', 'payment.chargeback'], description: 'Orders' });
      expectSchema('WebhookEndpointCreated', created);
      expect(created).toMatchObject({ url: 'https://merchant.example.com/payorch/hooks', events: ['payment.succeeded', 'payment.chargeback'], enabled: true, description: 'Orders' });
      expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(created.secret.slice(6), 'base64')).toHaveLength(32);
      expect(created.created_at).toMatch(ISO_MICROS);

      const got = await t.fetch(`/webhook-endpoints/${created.id}`);
      expect(got.status).toBe(200);
      const endpoint = (await got.json()) as Record<string, unknown>;
      expectSchema('WebhookEndpoint', endpoint);
      expect(endpoint).not.toHaveProperty('secret');

      const rows = await t.db.query<{ ciphertext: Uint8Array; key_id: string }>('SELECT ciphertext, key_id FROM webhook_endpoint_secrets WHERE endpoint_id = $1', [created.id]);
      expect(rows).toHaveLength(1);
      const stored = Buffer.from(rows[0]!.ciphertext);
      expect(stored.includes(Buffer.from(created.secret))).toBe(false);
      expect(stored.includes(Buffer.from(created.secret.slice(6), 'base64'))).toBe(false);
      expect(t.logs.join('\n')).not.toContain(created.secret.slice(6));
    });

    it('201: events ["*", …] is stored as ["*"]; enabled may start false; http to loopback is accepted in sandbox mode', async () => {
      const all = await create(t, { url: 'https://merchant.example.com/all', events: ['*', 'payment.declined'] });
      expect(all.events).toEqual(['*']);
      const off = await create(t, { url: 'http://127.0.0.1:9/hooks', events: ['enrollment.enrolled'], enabled: false });
      expect(off.enabled).toBe(false);
      expect(off.description).toBeNull();
      await create(t, { url: 'http://localhost:9/hooks', events: ['*'] });
      await create(t, { url: 'http://[::1]:9/hooks', events: ['*'] });
    });

    it('every event type the service records can be subscribed to by name (the spec\'s two lists agree)', async () => {
      const enums = spec.components.schemas as unknown as Record<string, { enum: string[] }>;
      expect(enums.WebhookEventSubscription!.enum).toEqual(['*', ...enums.WebhookEventType!.enum]);
      expect([...EVENT_TYPES].sort()).toEqual([...enums.WebhookEventType!.enum].sort());
      const each = await create(t, { url: 'https://merchant.example.com/each', events: [...EVENT_TYPES] });
      expect([...each.events].sort()).toEqual([...EVENT_TYPES].sort());
      expect((await t.fetch(`/webhook-endpoints/${each.id}`, { method: 'DELETE' })).status).toBe(204); // the organization's 16 endpoints are shared by this file
    });

    it.each(badCreates)('400 names the field: $name', async ({ body, field }) => {
      const before = await t.db.query('SELECT count(*)::int AS n FROM webhook_endpoints');
      const res = await t.fetch('/webhook-endpoints', { method: 'POST', headers: json, body: JSON.stringify(body) });
      const problem = await expectProblem(res, 400, 'INVALID_REQUEST');
      expect((problem.errors as { path: string }[]).map((e) => e.path)).toContain(field);
      expect(await t.db.query('SELECT count(*)::int AS n FROM webhook_endpoints')).toEqual(before);
    });

    it('401 without credentials; 415 not JSON', async () => {
      await expectProblem(await t.fetch('/webhook-endpoints', { credentials_: false }), 401, 'INVALID_CREDENTIALS');
      const body = JSON.stringify({ url: 'https://merchant.example.com/x', events: ['*'] });
      await expectProblem(await t.fetch('/webhook-endpoints', { method: 'POST', headers: json, body, credentials_: false }), 401, 'INVALID_CREDENTIALS');
      await expectProblem(await t.fetch('/webhook-endpoints', { method: 'POST', headers: { 'content-type': 'text/plain' }, body }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('a walk that deletes each endpoint as it goes still reaches every one (a deleted cursor continues)', async () => {
      const org = await t.createOrganization();
      const headers = { ...json, 'public-api-key': org.public_api_key, 'private-secret-key': org.private_secret_key };
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await t.fetch('/webhook-endpoints', { method: 'POST', headers, body: JSON.stringify({ url: `https://walk.example.com/h-${i}`, events: ['*'] }) });
        expect(res.status).toBe(201);
        ids.push(((await res.json()) as { id: string }).id);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res = await t.fetch(`/webhook-endpoints?limit=1${cursor ? `&starting_after=${cursor}` : ''}`, { headers });
        const text = await res.text();
        expect(res.status, text).toBe(200);
        const page = JSON.parse(text) as Schemas['WebhookEndpointList'];
        for (const e of page.webhook_endpoints) {
          seen.push(e.id);
          expect((await t.fetch(`/webhook-endpoints/${e.id}`, { method: 'DELETE', headers })).status).toBe(204);
        }
        cursor = page.has_more ? page.next_cursor! : null;
      } while (cursor);
      expect(seen).toEqual([...ids].reverse());
    });

    it('list: newest first, paged with limit / starting_after, no secrets; a foreign cursor is 400', async () => {
      const other = await t.createOrganization();
      const mine = [];
      for (let i = 0; i < 3; i++) mine.push(await create(t, { url: `https://merchant.example.com/page-${i}`, events: ['*'] }, {}));
      const first = await t.fetch('/webhook-endpoints?limit=2');
      expect(first.status).toBe(200);
      const page1 = (await first.json()) as Schemas['WebhookEndpointList'];
      expectSchema('WebhookEndpointList', page1);
      expect(page1.webhook_endpoints.map((e) => e.id)).toEqual([mine[2]!.id, mine[1]!.id]);
      expect(page1.has_more).toBe(true);
      expect(JSON.stringify(page1)).not.toContain('whsec_');
      const page2 = (await (await t.fetch(`/webhook-endpoints?limit=2&starting_after=${page1.next_cursor}`)).json()) as Schemas['WebhookEndpointList'];
      expect(page2.webhook_endpoints[0]!.id).toBe(mine[0]!.id);

      const theirs = await t.fetch('/webhook-endpoints', {
        method: 'POST',
        headers: { ...json, 'public-api-key': other.public_api_key, 'private-secret-key': other.private_secret_key },
        body: JSON.stringify({ url: 'https://other.example.com/hooks', events: ['*'] }),
      });
      const theirId = ((await theirs.json()) as { id: string }).id;
      const all = (await (await t.fetch('/webhook-endpoints?limit=100')).json()) as Schemas['WebhookEndpointList'];
      expect(all.webhook_endpoints.map((e) => e.id)).not.toContain(theirId);
      await expectProblem(await t.fetch(`/webhook-endpoints?starting_after=${theirId}`), 400, 'INVALID_REQUEST');
      await expectProblem(await t.fetch('/webhook-endpoints?limit=0'), 400, 'INVALID_REQUEST');
      await expectProblem(await t.fetch('/webhook-endpoints?limit=101'), 400, 'INVALID_REQUEST');
      // Another organization's endpoint is "not found", everywhere.
      await expectProblem(await t.fetch(`/webhook-endpoints/${theirId}`), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
      await expectProblem(await t.fetch(`/webhook-endpoints/${theirId}`, { method: 'DELETE' }), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
      await expectProblem(await t.fetch(`/webhook-endpoints/${theirId}/rotate-secret`, { method: 'POST' }), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
      await expectProblem(await t.fetch(`/webhook-endpoints/${theirId}/deliveries`), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
    });

    it('404 for an unknown id; 400 for an id of the wrong length', async () => {
      await expectProblem(await t.fetch('/webhook-endpoints/00000000-0000-4000-8000-000000000000'), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
      await expectProblem(await t.fetch('/webhook-endpoints/short'), 400, 'INVALID_REQUEST');
    });

    it('PATCH changes url, events, description and enabled; fields left out stay; bad input changes nothing', async () => {
      const e = await create(t, { url: 'https://merchant.example.com/v1', events: ['payment.succeeded'], description: 'before' });
      const patch = (body: unknown) => t.fetch(`/webhook-endpoints/${e.id}`, { method: 'PATCH', headers: json, body: JSON.stringify(body) });
      const res = await patch({ url: 'https://merchant.example.com/v2', events: ['payment.declined', 'payment.dispute.lost'], enabled: false });
      expect(res.status).toBe(200);
      const changed = (await res.json()) as Schemas['WebhookEndpoint'];
      expectSchema('WebhookEndpoint', changed);
      expect(changed).toMatchObject({ url: 'https://merchant.example.com/v2', events: ['payment.declined', 'payment.dispute.lost'], enabled: false, description: 'before' });
      expect(changed.updated_at > changed.created_at).toBe(true);
      const cleared = (await (await patch({ description: null, enabled: true })).json()) as Schemas['WebhookEndpoint'];
      expect(cleared).toMatchObject({ description: null, enabled: true, url: 'https://merchant.example.com/v2' });

      await expectProblem(await patch({}), 400, 'INVALID_REQUEST');
      const bad = await expectProblem(await patch({ url: 'http://merchant.example.com/v3' }), 400, 'INVALID_REQUEST');
      expect((bad.errors as { path: string }[])[0]!.path).toBe('/body/url');
      await expectProblem(await patch({ events: ['nope'] }), 400, 'INVALID_REQUEST');
      await expectProblem(await patch({ secret: 'x' }), 400, 'INVALID_REQUEST');
      const after = (await (await t.fetch(`/webhook-endpoints/${e.id}`)).json()) as Schemas['WebhookEndpoint'];
      expect(after).toEqual(cleared);
      await expectProblem(
        await t.fetch('/webhook-endpoints/00000000-0000-4000-8000-000000000000', { method: 'PATCH', headers: json, body: JSON.stringify({ enabled: false }) }),
        404,
        'WEBHOOK_ENDPOINT_NOT_FOUND',
      );
    });

    it('DELETE: 204, then gone (404, not listed), its pending deliveries canceled and its secrets destroyed', async () => {
      const e = await create(t, { url: 'https://merchant.example.com/doomed', events: ['*'] });
      await t.db.transaction((tx) =>
        recordEvent(tx, { organizationId: t.sandbox.organization_id, accountId: t.sandbox.account_id, type: 'payment.succeeded', data: { payment }, resourceId: payment.id }),
      );
      const del = await t.fetch(`/webhook-endpoints/${e.id}`, { method: 'DELETE' });
      expect(del.status).toBe(204);
      expect(await del.text()).toBe('');
      await expectProblem(await t.fetch(`/webhook-endpoints/${e.id}`), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
      await expectProblem(await t.fetch(`/webhook-endpoints/${e.id}`, { method: 'DELETE' }), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
      const list = (await (await t.fetch('/webhook-endpoints?limit=100')).json()) as Schemas['WebhookEndpointList'];
      expect(list.webhook_endpoints.map((x) => x.id)).not.toContain(e.id);
      expect(await t.db.query('SELECT status FROM webhook_deliveries WHERE endpoint_id = $1', [e.id])).toEqual([{ status: 'CANCELED' }]);
      expect(await t.db.query('SELECT 1 FROM webhook_endpoint_secrets WHERE endpoint_id = $1', [e.id])).toHaveLength(0);
    });

    it('rotate-secret: a new secret; the previous one expires after the overlap (default 24 h, or as asked)', async () => {
      const e = await create(t, { url: 'https://merchant.example.com/rotate', events: ['*'] });
      const before = Date.now();
      const res = await t.fetch(`/webhook-endpoints/${e.id}/rotate-secret`, { method: 'POST' });
      expect(res.status).toBe(200);
      const rotated = (await res.json()) as Schemas['WebhookSecretRotated'];
      expectSchema('WebhookSecretRotated', rotated);
      expect(rotated.webhook_endpoint_id).toBe(e.id);
      expect(rotated.secret).toMatch(/^whsec_/);
      expect(rotated.secret).not.toBe(e.secret);
      const expires = Date.parse(rotated.previous_secret_expires_at);
      expect(expires - before).toBeGreaterThanOrEqual(86_400_000 - 1_000);
      expect(expires - Date.now()).toBeLessThanOrEqual(86_400_000 + 1_000);

      const short = await t.fetch(`/webhook-endpoints/${e.id}/rotate-secret`, { method: 'POST', headers: json, body: JSON.stringify({ previous_secret_expires_in: 60 }) });
      expect(short.status).toBe(200);
      const second = (await short.json()) as Schemas['WebhookSecretRotated'];
      expect(Date.parse(second.previous_secret_expires_at) - Date.now()).toBeLessThanOrEqual(61_000);
      // Three secrets exist; none outlives the newest overlap; exactly one is current.
      const rows = await t.db.query<{ expires_at: string | null }>('SELECT expires_at FROM webhook_endpoint_secrets WHERE endpoint_id = $1', [e.id]);
      expect(rows).toHaveLength(3);
      expect(rows.filter((r) => r.expires_at === null)).toHaveLength(1);
      for (const r of rows.filter((r) => r.expires_at !== null)) expect(Date.parse(r.expires_at!.replace(' ', 'T').replace(/\+00$/, 'Z'))).toBeLessThanOrEqual(Date.parse(second.previous_secret_expires_at) + 1);
      expect(t.logs.join('\n')).not.toContain(second.secret.slice(6));

      await expectProblem(
        await t.fetch(`/webhook-endpoints/${e.id}/rotate-secret`, { method: 'POST', headers: json, body: JSON.stringify({ previous_secret_expires_in: 604_801 }) }),
        400,
        'INVALID_REQUEST',
      );
      await expectProblem(
        await t.fetch(`/webhook-endpoints/${e.id}/rotate-secret`, { method: 'POST', headers: json, body: JSON.stringify({ overlap: 1 }) }),
        400,
        'INVALID_REQUEST',
      );
    });

    it('the delivery log: list (filters, paging), one delivery, 404s; redelivery (202), 409 while disabled', async () => {
      const e = await create(t, { url: 'http://127.0.0.1:9/log', events: ['payment.succeeded', 'payment.declined'] });
      const ids: string[] = [];
      for (const type of ['payment.succeeded', 'payment.declined', 'payment.chargeback'] as const) {
        const data = type === 'payment.chargeback' ? { payment, transaction: examples.ChargebackTransaction!.value as Schemas['Transaction'] } : { payment };
        const { eventId } = await t.db.transaction((tx) =>
          recordEvent(tx, { organizationId: t.sandbox.organization_id, accountId: t.sandbox.account_id, type, data: data as never, resourceId: `res-${type}` }),
        );
        ids.push(eventId);
      }
      const res = await t.fetch(`/webhook-endpoints/${e.id}/deliveries`);
      expect(res.status).toBe(200);
      const list = (await res.json()) as Schemas['WebhookDeliveryList'];
      expectSchema('WebhookDeliveryList', list);
      // Not subscribed to payment.chargeback: two deliveries, newest first, nothing attempted yet.
      expect(list.deliveries.map((d) => d.event_id)).toEqual([ids[1], ids[0]]);
      expect(list.deliveries[0]).toMatchObject({ status: 'PENDING', attempt_count: 0, attempts: [], delivered_at: null, event_type: 'payment.declined', resource_id: 'res-payment.declined' });
      expect(list.deliveries[0]!.next_attempt_at).toMatch(ISO_MICROS);

      const byEvent = (await (await t.fetch(`/webhook-endpoints/${e.id}/deliveries?event_id=${ids[0]}`)).json()) as Schemas['WebhookDeliveryList'];
      expect(byEvent.deliveries.map((d) => d.event_id)).toEqual([ids[0]]);
      const delivered = (await (await t.fetch(`/webhook-endpoints/${e.id}/deliveries?status=DELIVERED`)).json()) as Schemas['WebhookDeliveryList'];
      expect(delivered.deliveries).toEqual([]);
      const paged = (await (await t.fetch(`/webhook-endpoints/${e.id}/deliveries?limit=1`)).json()) as Schemas['WebhookDeliveryList'];
      expect(paged).toMatchObject({ has_more: true, next_cursor: list.deliveries[0]!.id });
      const rest = (await (await t.fetch(`/webhook-endpoints/${e.id}/deliveries?limit=1&starting_after=${paged.next_cursor}`)).json()) as Schemas['WebhookDeliveryList'];
      expect(rest.deliveries.map((d) => d.id)).toEqual([list.deliveries[1]!.id]);
      await expectProblem(await t.fetch(`/webhook-endpoints/${e.id}/deliveries?status=LOST`), 400, 'INVALID_REQUEST');
      await expectProblem(await t.fetch(`/webhook-endpoints/${e.id}/deliveries?event_id=nope`), 400, 'INVALID_REQUEST');
      await expectProblem(await t.fetch(`/webhook-endpoints/${e.id}/deliveries?starting_after=00000000-0000-4000-8000-000000000000`), 400, 'INVALID_REQUEST');

      const one = await t.fetch(`/webhook-endpoints/${e.id}/deliveries/${list.deliveries[1]!.id}`);
      expect(one.status).toBe(200);
      const delivery = (await one.json()) as Schemas['WebhookDelivery'];
      expectSchema('WebhookDelivery', delivery);
      expect(delivery.event_id).toBe(ids[0]);
      await expectProblem(await t.fetch(`/webhook-endpoints/${e.id}/deliveries/00000000-0000-4000-8000-000000000000`), 404, 'WEBHOOK_DELIVERY_NOT_FOUND');
      const other = await create(t, { url: 'https://merchant.example.com/other', events: ['*'] });
      // A delivery is only found under its own endpoint.
      await expectProblem(await t.fetch(`/webhook-endpoints/${other.id}/deliveries/${delivery.id}`), 404, 'WEBHOOK_DELIVERY_NOT_FOUND');
      await expectProblem(await t.fetch(`/webhook-endpoints/00000000-0000-4000-8000-000000000000/deliveries/${delivery.id}`), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');

      const redeliver = await t.fetch(`/webhook-endpoints/${e.id}/deliveries/${delivery.id}/redeliver`, { method: 'POST' });
      expect(redeliver.status).toBe(202);
      const queued = (await redeliver.json()) as Schemas['WebhookDelivery'];
      expectSchema('WebhookDelivery', queued);
      expect(queued.status).toBe('PENDING');
      await expectProblem(await t.fetch(`/webhook-endpoints/${other.id}/deliveries/${delivery.id}/redeliver`, { method: 'POST' }), 404, 'WEBHOOK_DELIVERY_NOT_FOUND');

      await t.fetch(`/webhook-endpoints/${e.id}`, { method: 'PATCH', headers: json, body: JSON.stringify({ enabled: false }) });
      await expectProblem(await t.fetch(`/webhook-endpoints/${e.id}/deliveries/${delivery.id}/redeliver`, { method: 'POST' }), 409, 'INVALID_STATUS');
    });

    it('recordEvent queues one delivery per enabled, subscribed endpoint of the organization only, in the caller\'s transaction', async () => {
      const other = await t.createOrganization();
      const subscribed = await create(t, { url: 'https://merchant.example.com/sub', events: ['enrollment.declined'] });
      const star = await create(t, { url: 'https://merchant.example.com/star', events: ['*'] });
      const notSubscribed = await create(t, { url: 'https://merchant.example.com/nosub', events: ['enrollment.enrolled'] });
      const disabled = await create(t, { url: 'https://merchant.example.com/off', events: ['*'], enabled: false });
      const theirs = await t.fetch('/webhook-endpoints', {
        method: 'POST',
        headers: { ...json, 'public-api-key': other.public_api_key, 'private-secret-key': other.private_secret_key },
        body: JSON.stringify({ url: 'https://other.example.com/hooks', events: ['*'] }),
      });
      const theirId = ((await theirs.json()) as { id: string }).id;
      const data = { customer_id: '7c2f4a8e-5b1d-4f7a-9c3e-2d6b8a1f0e94', payment_method: examples.EnrolledAchPending!.value as Schemas['EnrolledPaymentMethod'] };
      const event = { organizationId: t.sandbox.organization_id, accountId: null, type: 'enrollment.declined' as const, data, resourceId: 'vt-declined-1' };

      // A rolled-back transaction leaves no event and no delivery.
      await expect(
        t.db.transaction(async (tx) => {
          await recordEvent(tx, event);
          throw new Error('the state change failed');
        }),
      ).rejects.toThrow('the state change failed');
      expect(await t.db.query('SELECT 1 FROM webhook_events WHERE resource_id = $1', ['vt-declined-1'])).toHaveLength(0);

      const { eventId, deliveries } = await t.db.transaction((tx) => recordEvent(tx, event));
      expect(deliveries).toBeGreaterThanOrEqual(2);
      const rows = await t.db.query<{ endpoint_id: string }>('SELECT endpoint_id FROM webhook_deliveries WHERE event_id = $1', [eventId]);
      const endpoints = rows.map((r) => r.endpoint_id);
      expect(endpoints).toContain(subscribed.id);
      expect(endpoints).toContain(star.id);
      expect(endpoints).not.toContain(notSubscribed.id);
      expect(endpoints).not.toContain(disabled.id);
      expect(endpoints).not.toContain(theirId);
      expect(rows).toHaveLength(deliveries);
    });
  });
}
