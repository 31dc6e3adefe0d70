/**
 * Yuno's webhook management API (`/webhooks`, issue 24 §3) as a second view of the webhook endpoints
 * `/webhook-endpoints` manages, against a real server and database on both backends: Yuno's published
 * create and update examples replayed (ids substituted), each view seeing what the other created,
 * changed and deleted, a real payment's event delivered signed (Standard Webhooks and Yuno's headers),
 * bad input refused with nothing changed, and tenancy.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import type { Schemas } from '@payorch/types';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, expectSchema } from './support/assertions.js';
import { backends, useServer, type Credentials, type TestServer } from './support/harness.js';
import { createPayment } from './support/payments.js';
import { YUNO_DIR, yunoFilesPresent } from './support/yuno-examples.js';

type YunoWebhook = Schemas['YunoWebhook'];
const json = { 'content-type': 'application/json' };
const keys = (c: Credentials) => ({ 'public-api-key': c.public_api_key, 'private-secret-key': c.private_secret_key });

/** Yuno's published request examples of manage-webhooks.json (`example` of each request body). */
function yunoWebhookExamples(): { create: Record<string, unknown>; update: Record<string, unknown> } {
  const doc = JSON.parse(readFileSync(resolve(YUNO_DIR, 'manage-webhooks.json'), 'utf8')) as {
    paths: Record<string, Record<string, { requestBody: { content: { 'application/json': { example: Record<string, unknown> } } } }>>;
  };
  return {
    create: doc.paths['/webhooks']!.post!.requestBody.content['application/json'].example,
    update: doc.paths['/webhooks/{webhook_id}']!.patch!.requestBody.content['application/json'].example,
  };
}

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

async function startReceiver(): Promise<{ url: string; received: Received[]; waitFor(n: number): Promise<void>; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/yuno/hooks`,
    received,
    async waitFor(n) {
      // A generous deadline (the worker polls every second); the assertions that follow decide.
      const deadline = Date.now() + 60_000;
      while (received.length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

for (const backend of backends()) {
  describe(`Yuno's webhook management view on ${backend}`, () => {
    const t = useServer(backend);

    /** A fresh organization (its own 16-endpoint cap) and helpers speaking for it. */
    async function org(t: TestServer) {
      const creds = await t.createOrganization();
      const call = (path: string, init: RequestInit = {}) =>
        t.fetch(path, { ...init, headers: { ...json, ...keys(creds), ...((init.headers as Record<string, string>) ?? {}) } });
      const send = (method: string, path: string, body?: unknown) => call(path, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      const createYuno = async (body: Record<string, unknown>): Promise<YunoWebhook> => {
        const res = await send('POST', '/webhooks', { account_id: creds.account_id, ...body });
        const text = await res.text();
        expect(res.status, text).toBe(201);
        const webhook = JSON.parse(text) as YunoWebhook;
        expectSchema('YunoWebhook', webhook);
        return webhook;
      };
      const getYuno = async (id: string): Promise<YunoWebhook> => {
        const res = await send('GET', `/webhooks/${id}?account_id=${creds.account_id}`);
        const text = await res.text();
        expect(res.status, text).toBe(200);
        return JSON.parse(text) as YunoWebhook;
      };
      const getEndpoint = async (id: string): Promise<Schemas['WebhookEndpoint']> => {
        const res = await send('GET', `/webhook-endpoints/${id}`);
        const text = await res.text();
        expect(res.status, text).toBe(200);
        const endpoint = JSON.parse(text) as Schemas['WebhookEndpoint'];
        expectSchema('WebhookEndpoint', endpoint);
        return endpoint;
      };
      return { creds, send, createYuno, getYuno, getEndpoint };
    }

    it.skipIf(!yunoFilesPresent())("Yuno's published create and update examples, ids substituted, are accepted: the webhook examples 2/2", async () => {
      const o = await org(t);
      const { create, update } = yunoWebhookExamples();
      let accepted = 0;

      // As published, with our account; the URL too (its host is public and nothing is sent to it: this organization has no events).
      const res = await o.send('POST', '/webhooks', { ...create, account_id: o.creds.account_id });
      const text = await res.text();
      expect(res.status, text).toBe(201);
      accepted++;
      const created = JSON.parse(text) as YunoWebhook;
      expectSchema('YunoWebhook', created);
      expect(created).toMatchObject({
        account_id: o.creds.account_id,
        name: create.name,
        url: create.url,
        state: 'ACTIVE',
        api_key: '***',
        secret: '***',
        hmac_client_secret: '***',
        oauth2_client_secret: null,
        enrollment_triggers: create.enrollment_triggers,
        payment_triggers: create.payment_triggers,
        subscription_triggers: create.subscription_triggers,
        renewal_days: create.renewal_days,
      });
      // Subscriptions have no payorch event: kept and reported, and the endpoint gets the events the others map to.
      expect(created.unsupported_triggers).toEqual((create.subscription_triggers as string[]).map((s) => `subscription_triggers:${s}`));
      expect([...created.events].sort()).toEqual(
        ['enrollment.declined', 'enrollment.enrolled', 'enrollment.unenrolled', 'payment.authorized', 'payment.captured', 'payment.declined', 'payment.failed', 'payment.operation.failed', 'payment.refunded'].sort(),
      );
      for (const secret of [create.api_key, create.secret, create.hmac_client_secret, update.secret] as string[]) t.rememberSecret(secret, 'Yuno webhook header');
      expect(text).not.toContain(create.api_key as string);
      expect(text).not.toContain(create.hmac_client_secret as string);

      const patched = await o.send('PATCH', `/webhooks/${created.id}`, { ...update, account_id: o.creds.account_id });
      const patchedText = await patched.text();
      expect(patched.status, patchedText).toBe(200);
      accepted++;
      const after = JSON.parse(patchedText) as YunoWebhook;
      expectSchema('YunoWebhook', after);
      expect(after).toMatchObject({ id: created.id, state: 'INACTIVE', secret: '***', payment_triggers: create.payment_triggers });
      expect(patchedText).not.toContain(update.secret as string);
      expect(accepted).toBe(2);

      // Stored sealed: no credential row holds its value in clear.
      const rows = await t.db.query<{ kind: string; ciphertext: Uint8Array }>('SELECT kind, ciphertext FROM webhook_endpoint_credentials WHERE endpoint_id = $1 ORDER BY kind', [created.id]);
      expect(rows.map((r) => r.kind)).toEqual(['api_key', 'hmac_client_secret', 'secret']);
      for (const r of rows) for (const v of [create.api_key, create.secret, create.hmac_client_secret, update.secret] as string[]) expect(Buffer.from(r.ciphertext).includes(Buffer.from(v))).toBe(false);
    });

    it('one store, two views: created through /webhooks, listed and read through /webhook-endpoints, and the other way round', async () => {
      const o = await org(t);
      const yuno = await o.createYuno({ name: 'Orders', url: 'https://merchant.example.com/yuno', payment_triggers: ['PURCHASE', 'REFUND'], api_key: `k-${randomUUID()}` });
      expect(yuno.id).toMatch(/^[0-9a-f-]{36}$/);
      const endpoint = await o.getEndpoint(yuno.id);
      expect(endpoint).toMatchObject({ id: yuno.id, url: 'https://merchant.example.com/yuno', description: 'Orders', enabled: true });
      expect(endpoint.events).toEqual(['payment.succeeded', 'payment.declined', 'payment.failed', 'payment.pending', 'payment.expired', 'payment.refunded', 'payment.operation.failed']);
      expect(yuno.events).toEqual(endpoint.events);

      const native = await o.send('POST', '/webhook-endpoints', { url: 'https://merchant.example.com/native', events: ['payment.captured', 'enrollment.unenrolled'], description: 'Ledger' });
      expect(native.status).toBe(201);
      const nativeId = ((await native.json()) as { id: string }).id;
      const seen = await o.getYuno(nativeId);
      expectSchema('YunoWebhook', seen);
      expect(seen).toMatchObject({
        id: nativeId,
        name: 'Ledger',
        state: 'ACTIVE',
        api_key: null,
        secret: null,
        hmac_client_secret: null,
        enrollment_triggers: ['UNENROLL'],
        payment_triggers: ['CAPTURE'],
        report_triggers: [],
        subscription_triggers: [],
        onboarding_triggers: [],
        renewal_days: null,
        events: ['payment.captured', 'enrollment.unenrolled'],
        unsupported_triggers: [],
      });

      const list = await o.send('GET', `/webhooks?account_id=${o.creds.account_id}`);
      expect(list.status).toBe(200);
      const all = (await list.json()) as YunoWebhook[];
      for (const w of all) expectSchema('YunoWebhook', w);
      expect(all.map((w) => w.id)).toEqual([nativeId, yuno.id]);
      const page = (await (await o.send('GET', '/webhook-endpoints')).json()) as Schemas['WebhookEndpointList'];
      expect(page.webhook_endpoints.map((e) => e.id)).toEqual([nativeId, yuno.id]);
      expect(JSON.stringify(all)).not.toContain('whsec_');

      // `*` shows every trigger that has an event.
      const star = await o.send('POST', '/webhook-endpoints', { url: 'https://merchant.example.com/all', events: ['*'] });
      const starView = await o.getYuno(((await star.json()) as { id: string }).id);
      expect(starView.name).toBeNull();
      expect(starView.enrollment_triggers).toEqual(['ENROLL', 'UNENROLL']);
      expect(starView.payment_triggers).toEqual(['AUTHORIZE', 'PURCHASE', 'CAPTURE', 'CANCEL', 'REFUND', 'CHARGEBACK']);
    });

    it('PATCH and DELETE through one view are visible in the other; state filters the list', async () => {
      const o = await org(t);
      const a = await o.createYuno({ name: 'A', url: 'https://merchant.example.com/a', payment_triggers: ['AUTHORIZE'], subscription_triggers: ['CREATE'] });
      const b = await o.createYuno({ name: 'B', url: 'https://merchant.example.com/b', enrollment_triggers: ['ENROLL'] });

      // Yuno view → payorch view.
      const patched = await o.send('PATCH', `/webhooks/${a.id}`, { account_id: o.creds.account_id, state: 'INACTIVE', name: 'A2', payment_triggers: ['CAPTURE', 'CANCEL'], url: 'https://merchant.example.com/a2' });
      expect(patched.status, await patched.clone().text()).toBe(200);
      expect(await o.getEndpoint(a.id)).toMatchObject({
        enabled: false,
        description: 'A2',
        url: 'https://merchant.example.com/a2',
        events: ['payment.captured', 'payment.operation.failed', 'payment.canceled'],
      });
      expect((await o.getYuno(a.id)).subscription_triggers).toEqual(['CREATE']);
      const inactive = (await (await o.send('GET', `/webhooks?account_id=${o.creds.account_id}&state=INACTIVE`)).json()) as YunoWebhook[];
      expect(inactive.map((w) => w.id)).toEqual([a.id]);
      const active = (await (await o.send('GET', `/webhooks?account_id=${o.creds.account_id}&state=ACTIVE`)).json()) as YunoWebhook[];
      expect(active.map((w) => w.id)).toEqual([b.id]);

      // payorch view → Yuno view: new events replace the Yuno lists (derived again from events).
      const native = await o.send('PATCH', `/webhook-endpoints/${a.id}`, { enabled: true, events: ['payment.refunded'], description: 'A3' });
      expect(native.status).toBe(200);
      expect(await o.getYuno(a.id)).toMatchObject({ state: 'ACTIVE', name: 'A3', payment_triggers: ['REFUND'], subscription_triggers: [], unsupported_triggers: [] });

      // DELETE through the Yuno view answers the webhook as it was; both views then say 404.
      const deleted = await o.send('DELETE', `/webhooks/${a.id}?account_id=${o.creds.account_id}`);
      expect(deleted.status).toBe(200);
      const gone = (await deleted.json()) as YunoWebhook;
      expectSchema('YunoWebhook', gone);
      expect(gone).toMatchObject({ id: a.id, name: 'A3' });
      await expectProblem(await o.send('GET', `/webhook-endpoints/${a.id}`), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
      await expectProblem(await o.send('GET', `/webhooks/${a.id}?account_id=${o.creds.account_id}`), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');

      // DELETE through the payorch view; its Yuno headers go with it.
      await o.send('PATCH', `/webhooks/${b.id}`, { account_id: o.creds.account_id, api_key: 'to-be-destroyed' });
      t.rememberSecret('to-be-destroyed', 'Yuno webhook header');
      expect((await o.send('DELETE', `/webhook-endpoints/${b.id}`)).status).toBe(204);
      await expectProblem(await o.send('GET', `/webhooks/${b.id}?account_id=${o.creds.account_id}`), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
      await expectProblem(await o.send('PATCH', `/webhooks/${b.id}`, { account_id: o.creds.account_id, state: 'ACTIVE' }), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
      expect(await t.db.query('SELECT 1 FROM webhook_endpoint_credentials WHERE endpoint_id = $1', [b.id])).toHaveLength(0);
      expect(await (await o.send('GET', `/webhooks?account_id=${o.creds.account_id}`)).json()).toEqual([]);
    });

    it('renewal_days: kept with CLOSE_TO_RENEWAL, removed by clear_renewal_days or by a subscription list without it', async () => {
      const o = await org(t);
      const w = await o.createYuno({ name: 'Renewals', url: 'https://merchant.example.com/r', payment_triggers: ['PURCHASE'], subscription_triggers: ['CLOSE_TO_RENEWAL'], renewal_days: 7 });
      expect(w).toMatchObject({ renewal_days: 7, unsupported_triggers: ['subscription_triggers:CLOSE_TO_RENEWAL'] });
      const a = o.creds.account_id;
      const cleared = (await (await o.send('PATCH', `/webhooks/${w.id}`, { account_id: a, clear_renewal_days: true })).json()) as YunoWebhook;
      expect(cleared).toMatchObject({ renewal_days: null, subscription_triggers: ['CLOSE_TO_RENEWAL'] });
      const again = (await (await o.send('PATCH', `/webhooks/${w.id}`, { account_id: a, renewal_days: 3 })).json()) as YunoWebhook;
      expect(again.renewal_days).toBe(3);
      const dropped = (await (await o.send('PATCH', `/webhooks/${w.id}`, { account_id: a, subscription_triggers: ['CREATE'] })).json()) as YunoWebhook;
      expect(dropped).toMatchObject({ renewal_days: null, subscription_triggers: ['CREATE'], events: ['payment.succeeded', 'payment.declined', 'payment.failed', 'payment.pending', 'payment.expired'] });
    });

    describe('delivery', () => {
      let receiver: Awaited<ReturnType<typeof startReceiver>>;
      beforeAll(async () => {
        receiver = await startReceiver();
      });
      afterAll(() => receiver.close());

      it("a real payment's event reaches an endpoint created through /webhooks signed: Standard Webhooks, x-hmac-signature, x-api-key, x-secret", async () => {
        const apiKey = `key-${randomUUID()}`;
        const headerSecret = `sec-${randomUUID()}`;
        const hmacKey = `hmac-${randomUUID()}`;
        for (const s of [apiKey, headerSecret, hmacKey]) t.rememberSecret(s, 'Yuno webhook header');
        const res = await t.fetch('/webhooks', {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ account_id: t.sandbox.account_id, name: 'Payments', url: receiver.url, payment_triggers: ['PURCHASE'], api_key: apiKey, secret: headerSecret, hmac_client_secret: hmacKey }),
        });
        expect(res.status, await res.clone().text()).toBe(201);
        const webhook = (await res.json()) as YunoWebhook;
        // The Standard Webhooks secret is never in the Yuno view; rotating it through /webhook-endpoints shows the new one.
        const rotated = await t.fetch(`/webhook-endpoints/${webhook.id}/rotate-secret`, { method: 'POST', headers: json, body: JSON.stringify({ previous_secret_expires_in: 0 }) });
        expect(rotated.status).toBe(200);
        const { secret: whsec } = (await rotated.json()) as Schemas['WebhookSecretRotated'];

        const payment = await createPayment(t);
        await receiver.waitFor(1);
        expect(receiver.received).toHaveLength(1);
        const [got] = receiver.received;
        const envelope = JSON.parse(got!.body) as { type_event: string; data: { payment: { id: string } } };
        expect(envelope.type_event).toBe('payment.succeeded');
        expect(envelope.data.payment.id).toBe(payment.id);

        const h = got!.headers;
        expect(() => new Webhook(whsec).verify(got!.body, { 'webhook-id': h['webhook-id'] as string, 'webhook-timestamp': h['webhook-timestamp'] as string, 'webhook-signature': h['webhook-signature'] as string })).not.toThrow();
        expect(h['x-hmac-signature']).toBe(createHmac('sha256', hmacKey).update(got!.body).digest('base64'));
        expect(h['x-api-key']).toBe(apiKey);
        expect(h['x-secret']).toBe(headerSecret);
        expect(t.logs.join('\n')).not.toContain(hmacKey);
      });
    });

    const badCreates: { name: string; body: Record<string, unknown>; field: string }[] = [
      { name: 'no name', body: { url: 'https://merchant.example.com/x', payment_triggers: ['PURCHASE'] }, field: '/body/name' },
      { name: 'no triggers at all', body: { name: 'n', url: 'https://merchant.example.com/x' }, field: '/body/payment_triggers' },
      { name: 'empty trigger lists', body: { name: 'n', url: 'https://merchant.example.com/x', payment_triggers: [], enrollment_triggers: [] }, field: '/body/payment_triggers' },
      { name: 'only triggers without a payorch event', body: { name: 'n', url: 'https://merchant.example.com/x', report_triggers: ['UPDATE'], payment_triggers: ['VERIFY'] }, field: '/body/payment_triggers' },
      { name: 'unknown trigger', body: { name: 'n', url: 'https://merchant.example.com/x', payment_triggers: ['SETTLE'] }, field: '/body/payment_triggers/0' },
      { name: 'renewal_days without CLOSE_TO_RENEWAL', body: { name: 'n', url: 'https://merchant.example.com/x', payment_triggers: ['PURCHASE'], renewal_days: 3 }, field: '/body/renewal_days' },
      { name: 'renewal_days 0', body: { name: 'n', url: 'https://merchant.example.com/x', payment_triggers: ['PURCHASE'], subscription_triggers: ['CLOSE_TO_RENEWAL'], renewal_days: 0 }, field: '/body/renewal_days' },
      { name: 'OAuth2 (not supported)', body: { name: 'n', url: 'https://merchant.example.com/x', payment_triggers: ['PURCHASE'], oauth2_client_id: 'c' }, field: '/body/oauth2_client_id' },
      { name: 'a private address', body: { name: 'n', url: 'https://10.1.2.3/x', payment_triggers: ['PURCHASE'] }, field: '/body/url' },
      { name: 'plain http to a public host', body: { name: 'n', url: 'http://merchant.example.com/x', payment_triggers: ['PURCHASE'] }, field: '/body/url' },
      { name: 'a header value with a line break', body: { name: 'n', url: 'https://merchant.example.com/x', payment_triggers: ['PURCHASE'], api_key: 'a\r\nb' }, field: '/body/api_key' },
      { name: 'a secret over 255 characters', body: { name: 'n', url: 'https://merchant.example.com/x', payment_triggers: ['PURCHASE'], secret: 's'.repeat(256) }, field: '/body/secret' },
      { name: 'a name over 255 characters', body: { name: 'n'.repeat(256), url: 'https://merchant.example.com/x', payment_triggers: ['PURCHASE'] }, field: '/body/name' },
    ];

    it('400 problem+json naming the field, nothing stored: every bad creation', async () => {
      const o = await org(t);
      for (const { name, body, field } of badCreates) {
        const res = await o.send('POST', '/webhooks', { account_id: o.creds.account_id, ...body });
        const problem = await expectProblem(res, 400, 'INVALID_REQUEST');
        expect((problem.errors as { path: string }[]).map((e) => e.path), name).toContain(field);
      }
      await expectProblem(await o.send('POST', '/webhooks', { name: 'n', url: 'https://merchant.example.com/x', payment_triggers: ['PURCHASE'] }), 400, 'INVALID_REQUEST');
      expect(await t.db.query('SELECT 1 FROM webhook_endpoints WHERE organization_id = $1', [o.creds.organization_id])).toHaveLength(0);
    });

    it('400 on a bad update changes nothing; 409 for a name taken; 403 for another account', async () => {
      const o = await org(t);
      const w = await o.createYuno({ name: 'Kept', url: 'https://merchant.example.com/kept', payment_triggers: ['PURCHASE'], api_key: 'original-key' });
      await o.createYuno({ name: 'Other', url: 'https://merchant.example.com/other', payment_triggers: ['REFUND'] });
      const before = await o.getYuno(w.id);
      const credentials = await t.db.query('SELECT kind, ciphertext FROM webhook_endpoint_credentials WHERE endpoint_id = $1', [w.id]);
      const badPatches: { body: Record<string, unknown>; field: string }[] = [
        { body: { state: 'PAUSED', api_key: 'new-key' }, field: '/body/state' },
        { body: { payment_triggers: [], name: 'Renamed' }, field: '/body/payment_triggers' },
        { body: { renewal_days: 2, clear_renewal_days: true }, field: '/body/clear_renewal_days' },
        { body: { renewal_days: 2, state: 'INACTIVE' }, field: '/body/renewal_days' },
        { body: { url: 'ftp://merchant.example.com/x', state: 'INACTIVE' }, field: '/body/url' },
        { body: { url: 'https://169.254.169.254/latest' }, field: '/body/url' },
        { body: { oauth2_scope: 'x' }, field: '/body/oauth2_scope' },
      ];
      for (const { body, field } of badPatches) {
        const problem = await expectProblem(await o.send('PATCH', `/webhooks/${w.id}`, { account_id: o.creds.account_id, ...body }), 400, 'INVALID_REQUEST');
        expect((problem.errors as { path: string }[]).map((e) => e.path), JSON.stringify(body)).toContain(field);
      }
      await expectProblem(await o.send('PATCH', `/webhooks/${w.id}`, { state: 'INACTIVE' }), 400, 'INVALID_REQUEST');
      const conflict = await expectProblem(await o.send('PATCH', `/webhooks/${w.id}`, { account_id: o.creds.account_id, name: 'Other', state: 'INACTIVE' }), 409, 'WEBHOOK_ALREADY_EXISTS');
      expect(conflict.detail).toContain('Other');
      await expectProblem(await o.send('POST', '/webhooks', { account_id: o.creds.account_id, name: 'Kept', url: 'https://merchant.example.com/k2', payment_triggers: ['PURCHASE'] }), 409, 'WEBHOOK_ALREADY_EXISTS');

      const stranger = await t.createOrganization();
      await expectProblem(await o.send('GET', `/webhooks?account_id=${stranger.account_id}`), 403, 'INVALID_ACCOUNT_ID');
      await expectProblem(await o.send('PATCH', `/webhooks/${w.id}`, { account_id: stranger.account_id, state: 'INACTIVE' }), 403, 'INVALID_ACCOUNT_ID');
      await expectProblem(await o.send('POST', '/webhooks', { account_id: stranger.account_id, name: 'x', url: 'https://merchant.example.com/x', payment_triggers: ['PURCHASE'] }), 403, 'INVALID_ACCOUNT_ID');

      expect(await o.getYuno(w.id)).toEqual(before);
      expect(await t.db.query('SELECT kind, ciphertext FROM webhook_endpoint_credentials WHERE endpoint_id = $1', [w.id])).toEqual(credentials);
      expect(await t.db.query('SELECT 1 FROM webhook_endpoints WHERE organization_id = $1', [o.creds.organization_id])).toHaveLength(2);
    });

    it("another organization's webhook is 404 on every operation, and stays as it was; so is an id that is not one", async () => {
      const mine = await org(t);
      const theirs = await org(t);
      const w = await theirs.createYuno({ name: 'Theirs', url: 'https://other.example.com/x', payment_triggers: ['PURCHASE'] });
      const a = mine.creds.account_id;
      for (const id of [w.id, '12345']) {
        await expectProblem(await mine.send('GET', `/webhooks/${id}?account_id=${a}`), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
        await expectProblem(await mine.send('PATCH', `/webhooks/${id}`, { account_id: a, state: 'INACTIVE' }), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
        await expectProblem(await mine.send('DELETE', `/webhooks/${id}?account_id=${a}`), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
      }
      expect(await (await mine.send('GET', `/webhooks?account_id=${a}`)).json()).toEqual([]);
      expect(await theirs.getYuno(w.id)).toEqual(w);
      await expectProblem(await t.fetch(`/webhooks?account_id=${a}`, { credentials_: false }), 401, 'INVALID_CREDENTIALS');
    });
  });
}
