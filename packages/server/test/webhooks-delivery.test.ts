/**
 * Webhook delivery end to end, against real receivers on 127.0.0.1 (node:http on port 0; nothing else
 * is ever contacted): signatures verifiable by the `standardwebhooks` library, retries with backoff
 * (driven by an injected clock and schedule), order per resource, at-least-once and never again after
 * a 2xx, the delivery log, redelivery, secret rotation overlap, concurrent workers, lease takeover and
 * surviving a service restart. Events are emitted with recordEvent inside a transaction.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Schemas } from '@payorch/types';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/platform/logger.js';
import { startServer } from '../src/server.js';
import { recordEvent, type NewEvent } from '../src/webhooks/events.js';
import type { EventType } from '../src/webhooks/event-types.js';
import { postWebhook } from '../src/webhooks/http-sender.js';
import { DEFAULT_CLAIM_CAPS, MAX_SIGNING_SECRETS, webhooksRepository } from '../src/webhooks/repository.js';
import { signatureHeaders, verifySignedRequest } from '../src/webhooks/signing.js';
import { endpointUrlProblem, isNonPublicAddress } from '../src/webhooks/url-policy.js';
import { DEFAULT_RETRY_SCHEDULE_MS, DeliveryWorker, type DeliveryWorkerOptions } from '../src/webhooks/worker.js';
import { until } from './support/acquirers.js';
import { expectSchema } from './support/assertions.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import spec from '@payorch/types/openapi.json' with { type: 'json' };

const examples = (spec as unknown as { components: { examples: Record<string, { value: unknown }> } }).components.examples;
const payment = examples.PaymentCreated!.value as Schemas['Payment'];
const chargeback = examples.ChargebackTransaction!.value as Schemas['Transaction'];
const enrolled = examples.EnrolledAchPending!.value as Schemas['EnrolledPaymentMethod'];
const json = { 'content-type': 'application/json' };

// ---- a receiver on loopback

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  status: number | 'hang';
}
type Plan = (n: number, r: Omit<Received, 'status'>) => number | 'hang';

interface Receiver {
  url: string;
  received: Received[];
  plan: Plan;
  close(): Promise<void>;
}

async function startReceiver(plan: Plan = () => 200): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const receiver = { received: [] as Received[], plan } as Receiver;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      const status = receiver.plan(receiver.received.length + 1, r);
      receiver.received.push({ ...r, status });
      if (status === 'hang') return;
      res.writeHead(status, status >= 300 && status < 400 ? { location: 'http://127.0.0.1:1/elsewhere' } : {}).end('ok');
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/payorch/hooks`;
  receiver.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

// ---- helpers

const SCHEDULE = [1_000, 2_000, 4_000];

/**
 * A worker of the test's own on the server's database, with a frozen clock: time stands still at its
 * first reading (after the test's events were recorded) and moves only by advance().
 */
function testWorker(t: TestServer, options: Partial<DeliveryWorkerOptions> = {}) {
  let base: number | undefined;
  let offset = 0;
  const worker = new DeliveryWorker({
    db: t.db,
    log: createLogger('silent'),
    secrets: t.running.deps.services.webhooks.rules.secrets,
    allowLoopback: true,
    clock: () => new Date((base ??= Date.now()) + offset),
    retryScheduleMs: SCHEDULE,
    jitter: 0,
    timeoutMs: 2_000,
    ...options,
  });
  return {
    worker,
    advance(ms: number) {
      offset += ms;
    },
    /** Runs until nothing is due at the current (injected) time. */
    async drain(): Promise<number> {
      let total = 0;
      for (let n = await worker.runOnce(); n > 0; n = await worker.runOnce()) total += n;
      return total;
    },
  };
}

async function createEndpoint(t: TestServer, url: string, events: string[] = ['*']): Promise<Schemas['WebhookEndpointCreated']> {
  const res = await t.fetch('/webhook-endpoints', { method: 'POST', headers: json, body: JSON.stringify({ url, events }) });
  expect(res.status).toBe(201);
  return (await res.json()) as Schemas['WebhookEndpointCreated'];
}

function dataFor(type: EventType): NewEvent['data'] {
  if (type.startsWith('enrollment.')) return { customer_id: '7c2f4a8e-5b1d-4f7a-9c3e-2d6b8a1f0e94', payment_method: enrolled };
  if (type === 'payment.succeeded' || type === 'payment.declined') return { payment };
  return { payment, transaction: chargeback };
}

async function emit(t: TestServer, type: EventType, resourceId: string): Promise<string> {
  const { eventId } = await t.db.transaction((tx) =>
    recordEvent(tx, { organizationId: t.sandbox.organization_id, accountId: t.sandbox.account_id, type, data: dataFor(type) as never, resourceId }),
  );
  return eventId;
}

async function deliveries(t: TestServer, endpointId: string, eventId?: string): Promise<Schemas['WebhookDelivery'][]> {
  const res = await t.fetch(`/webhook-endpoints/${endpointId}/deliveries?limit=100${eventId ? `&event_id=${eventId}` : ''}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as Schemas['WebhookDeliveryList']).deliveries;
}

function verify(secret: string, r: Pick<Received, 'body' | 'headers'>): Record<string, unknown> {
  return new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as Record<string, unknown>;
}

const idOf = (r: Received) => r.headers['webhook-id'] as string;

// ---- pure rules (no database)

describe('webhook URL policy and signature verification', () => {
  it('production: https to public hosts only; sandbox: loopback too (plain http included), never other private addresses', () => {
    expect(endpointUrlProblem('https://merchant.example.com/hooks', false)).toBeUndefined();
    expect(endpointUrlProblem('https://203.0.114.9/hooks', false)).toBeUndefined();
    for (const url of ['http://merchant.example.com/h', 'http://127.0.0.1/h', 'https://127.0.0.1/h', 'https://localhost/h', 'https://10.1.2.3/h', 'https://[::1]/h', 'https://169.254.169.254/latest', 'https://[fd00::1]/h', 'https://192.168.1.1/h', 'https://[::ffff:10.0.0.1]/h']) {
      expect(endpointUrlProblem(url, false), url).toBeDefined();
    }
    for (const url of ['http://127.0.0.1:8080/h', 'http://localhost/h', 'http://[::1]:9/h', 'https://127.0.0.2/h', 'https://merchant.example.com/h']) expect(endpointUrlProblem(url, true), url).toBeUndefined();
    for (const url of ['http://10.0.0.1/h', 'https://10.0.0.1/h', 'https://169.254.169.254/h', 'http://merchant.example.com/h', 'https://u:p@merchant.example.com/h', 'ftp://x.example.com/h']) {
      expect(endpointUrlProblem(url, true), url).toBeDefined();
    }
    expect(isNonPublicAddress('8.8.8.8')).toBe(false);
    expect(isNonPublicAddress('2606:4700::1111')).toBe(false);
    for (const a of ['127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fc00::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1']) {
      expect(isNonPublicAddress(a), a).toBe(true);
    }
  });

  it('sending refuses disallowed addresses before connecting, by literal address and after name resolution', async () => {
    const receiver = await startReceiver();
    try {
      const port = new URL(receiver.url).port;
      const production = { timeoutMs: 2_000, allowLoopback: false };
      expect(await postWebhook(`https://127.0.0.1:${port}/h`, '{}', {}, production)).toMatchObject({ ok: false, statusCode: null, error: 'the endpoint address is not allowed' });
      expect(await postWebhook(`https://localhost:${port}/h`, '{}', {}, production)).toMatchObject({ ok: false, statusCode: null, error: 'request failed: ENOTPUBLIC' });
      expect(await postWebhook(receiver.url, '{}', {}, production)).toMatchObject({ ok: false, error: 'the endpoint address is not allowed' });
      // Sandbox admits loopback, not the rest of the private ranges.
      expect(await postWebhook('https://10.0.0.1:9/h', '{}', {}, { timeoutMs: 2_000, allowLoopback: true })).toMatchObject({ ok: false, error: 'the endpoint address is not allowed' });
      expect(receiver.received).toHaveLength(0);
      expect(await postWebhook(`http://localhost:${port}/h`, '{}', {}, { timeoutMs: 2_000, allowLoopback: true })).toMatchObject({ ok: true, statusCode: 200 });
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it('verifySignedRequest (for inbound notifications): valid, tampered, stale, future, missing, any of several secrets', () => {
    const a = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
    const b = `whsec_${Buffer.alloc(32, 2).toString('base64')}`;
    const now = new Date('2026-11-22T10:00:00Z');
    const body = '{"id":"n1","type":"CHARGEBACK"}';
    const headers = signatureHeaders('msg_1', now, body, [a]);
    expect(verifySignedRequest(body, headers, [a], { now })).toEqual({ ok: true, id: 'msg_1', timestamp: now });
    expect(verifySignedRequest(Buffer.from(body), headers, [b, a], { now })).toMatchObject({ ok: true });
    expect(verifySignedRequest(body, headers, [b], { now })).toMatchObject({ ok: false, reason: 'bad-signature' });
    expect(verifySignedRequest(body.replace('n1', 'n2'), headers, [a], { now })).toMatchObject({ ok: false, reason: 'bad-signature' });
    expect(verifySignedRequest(body, { ...headers, 'webhook-id': 'msg_2' }, [a], { now })).toMatchObject({ ok: false, reason: 'bad-signature' });
    expect(verifySignedRequest(body, headers, [a], { now: new Date(now.getTime() + 301_000) })).toMatchObject({ ok: false, reason: 'stale' });
    expect(verifySignedRequest(body, headers, [a], { now: new Date(now.getTime() - 301_000) })).toMatchObject({ ok: false, reason: 'future' });
    expect(verifySignedRequest(body, headers, [a], { now: new Date(now.getTime() + 299_000) })).toMatchObject({ ok: true });
    expect(verifySignedRequest(body, headers, [a], { now: new Date(now.getTime() + 60_000), toleranceSeconds: 30 })).toMatchObject({ ok: false, reason: 'stale' });
    expect(verifySignedRequest(body, { 'webhook-id': 'msg_1', 'webhook-timestamp': headers['webhook-timestamp'] }, [a], { now })).toMatchObject({ ok: false, reason: 'missing-headers' });
    expect(verifySignedRequest(body, { ...headers, 'webhook-timestamp': '12x' }, [a], { now })).toMatchObject({ ok: false, reason: 'bad-timestamp' });
    // Header names in any case, a second (rotating) signature, an unknown version entry.
    const two = signatureHeaders('msg_1', now, body, [b, a]);
    expect(two['webhook-signature'].split(' ')).toHaveLength(2);
    const mixed = { 'Webhook-Id': 'msg_1', 'WEBHOOK-TIMESTAMP': two['webhook-timestamp'], 'webhook-signature': `v2,abc ${two['webhook-signature']}` };
    expect(verifySignedRequest(body, mixed, [a], { now })).toMatchObject({ ok: true });
  });

  it('the default retry schedule spans about 24 hours', () => {
    const total = DEFAULT_RETRY_SCHEDULE_MS.reduce((s, d) => s + d, 0);
    expect(total).toBeGreaterThan(22 * 3_600_000);
    expect(total).toBeLessThanOrEqual(24 * 3_600_000);
    expect([...DEFAULT_RETRY_SCHEDULE_MS].sort((x, y) => x - y)).toEqual(DEFAULT_RETRY_SCHEDULE_MS);
  });
});

for (const backend of backends()) {
  describe(`webhook delivery on ${backend}`, () => {
    const t = useServer(backend);
    const receivers: Receiver[] = [];
    const receiver = async (plan?: Plan) => {
      const r = await startReceiver(plan);
      receivers.push(r);
      return r;
    };

    beforeAll(async () => {
      // Tests drive their own workers with an injected clock; the server's own worker stays off.
      await t.running.deps.services.webhooks.worker.stop();
    });
    afterEach(async () => {
      // Each test starts from a quiet outbox.
      await t.db.query("UPDATE webhook_deliveries SET status = 'CANCELED' WHERE status = 'PENDING'");
      await t.db.query('UPDATE webhook_endpoints SET enabled = false');
      await Promise.all(receivers.splice(0).map((r) => r.close()));
    });

    it('an event arrives once, signed per Standard Webhooks (verified by the standardwebhooks library), in the documented envelope', async () => {
      const r = await receiver();
      const endpoint = await createEndpoint(t, r.url, ['payment.succeeded']);
      const before = Math.floor(Date.now() / 1000);
      const eventId = await emit(t, 'payment.succeeded', payment.id);
      const w = testWorker(t);
      expect(await w.drain()).toBe(1);
      expect(await w.drain()).toBe(0);

      expect(r.received).toHaveLength(1);
      const got = r.received[0]!;
      expect(got.headers['content-type']).toBe('application/json');
      expect(got.headers['webhook-id']).toBe(eventId);
      expect(Number(got.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(before);
      expect(got.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      const envelope = verify(endpoint.secret, got);
      expectSchema('EventPaymentSucceeded', envelope);
      expect(envelope).toMatchObject({ id: eventId, type: 'payment', type_event: 'payment.succeeded', account_id: t.sandbox.account_id, retry: 0, version: 1 });
      expect((envelope.data as { payment: { id: string } }).payment.id).toBe(payment.id);
      expect(Object.keys(envelope)).toEqual(['id', 'type', 'type_event', 'account_id', 'retry', 'version', 'created_at', 'data']);
      // The same checks through our own verifier (what inbound provider notifications use).
      expect(verifySignedRequest(got.body, got.headers as Record<string, string>, [endpoint.secret])).toMatchObject({ ok: true, id: eventId });

      const [delivery] = await deliveries(t, endpoint.id, eventId);
      expectSchema('WebhookDelivery', delivery);
      expect(delivery).toMatchObject({ status: 'DELIVERED', attempt_count: 1, next_attempt_at: null, event_type: 'payment.succeeded', resource_id: payment.id });
      expect(delivery!.delivered_at).not.toBeNull();
      expect(delivery!.attempts).toEqual([
        { attempt: 1, trigger: 'SCHEDULED', started_at: expect.any(String), status_code: 200, latency_ms: expect.any(Number), error: null, succeeded: true },
      ]);
    });

    it('a tampered body, a wrong secret or a stale timestamp is rejected by the verifier', async () => {
      const r = await receiver();
      const endpoint = await createEndpoint(t, r.url);
      await emit(t, 'payment.declined', 'pay-tamper');
      await testWorker(t).drain();
      const got = r.received[0]!;
      expect(() => verify(endpoint.secret, got)).not.toThrow();
      expect(() => verify(endpoint.secret, { ...got, body: got.body.replace('"retry":0', '"retry":1') })).toThrow(WebhookVerificationError);
      expect(() => verify(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, got)).toThrow(WebhookVerificationError);
      // A stale copy: the same body and id signed (with the right secret) ten minutes ago.
      const stale = signatureHeaders(idOf(got), new Date(Date.now() - 600_000), got.body, [endpoint.secret]);
      expect(() => verify(endpoint.secret, { body: got.body, headers: stale })).toThrow(/too old/);
      const future = signatureHeaders(idOf(got), new Date(Date.now() + 600_000), got.body, [endpoint.secret]);
      expect(() => verify(endpoint.secret, { body: got.body, headers: future })).toThrow(/too new/);
    });

    it('only subscribed, enabled endpoints of the organization receive an event; "*" gets every type', async () => {
      const star = await receiver();
      const declinedOnly = await receiver();
      const disabled = await receiver();
      await createEndpoint(t, star.url, ['*']);
      await createEndpoint(t, declinedOnly.url, ['payment.declined']);
      const off = await createEndpoint(t, disabled.url, ['*']);
      await t.fetch(`/webhook-endpoints/${off.id}`, { method: 'PATCH', headers: json, body: JSON.stringify({ enabled: false }) });
      const types: EventType[] = ['enrollment.enrolled', 'enrollment.declined', 'enrollment.unenrolled', 'payment.succeeded', 'payment.declined', 'payment.chargeback', 'payment.dispute.submitted', 'payment.dispute.won', 'payment.dispute.lost',
        'payment.authorized', 'payment.captured', 'payment.canceled', 'payment.refunded'];
      for (const [i, type] of types.entries()) await emit(t, type, `res-sub-${i}`);
      await testWorker(t).drain();
      expect(star.received.map((x) => (JSON.parse(x.body) as { type_event: string }).type_event).sort()).toEqual([...types].sort());
      for (const x of star.received) {
        const envelope = JSON.parse(x.body) as { type: string; type_event: string };
        expect(envelope.type).toBe(envelope.type_event.split('.')[0]);
        const schema = `Event${envelope.type_event.split('.').map((p) => p[0]!.toUpperCase() + p.slice(1)).join('')}`;
        expectSchema(schema, envelope);
      }
      expect(declinedOnly.received.map((x) => (JSON.parse(x.body) as { type_event: string }).type_event)).toEqual(['payment.declined']);
      expect(disabled.received).toHaveLength(0);
    });

    it('a receiver that fails then recovers gets every event, in order per resource, and never again after answering 2xx', async () => {
      // The first four requests fail (503, 500, timeout, 429), then everything succeeds.
      const failures: (number | 'hang')[] = [503, 500, 'hang', 429];
      const r = await receiver((n) => failures[n - 1] ?? 200);
      const endpoint = await createEndpoint(t, r.url);
      const a = [await emit(t, 'payment.succeeded', 'pay-A'), await emit(t, 'payment.chargeback', 'pay-A'), await emit(t, 'payment.dispute.submitted', 'pay-A'), await emit(t, 'payment.dispute.won', 'pay-A')];
      const b = [await emit(t, 'payment.declined', 'pay-B'), await emit(t, 'payment.dispute.lost', 'pay-B')];
      const w = testWorker(t, { timeoutMs: 300 });
      for (let round = 0; round < 30; round++) {
        await w.drain();
        const pending = await t.db.query("SELECT 1 FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'PENDING'", [endpoint.id]);
        if (pending.length === 0) break;
        w.advance(4_000);
      }
      const acked = new Set<string>();
      const sent = new Map<string, number>();
      for (const x of r.received) {
        const id = idOf(x);
        // Never again after a 2xx.
        expect(acked.has(id), `event ${id} sent again after 2xx`).toBe(false);
        // In order per resource: every earlier event of the resource was acknowledged first.
        for (const list of [a, b]) {
          if (list.includes(id)) for (const earlier of list.slice(0, list.indexOf(id))) expect(acked.has(earlier), `${id} before ${earlier}`).toBe(true);
        }
        // `retry` counts the earlier attempts of this event to this endpoint.
        expect((verify(endpoint.secret, x) as { retry: number }).retry).toBe(sent.get(id) ?? 0);
        sent.set(id, (sent.get(id) ?? 0) + 1);
        if (typeof x.status === 'number' && x.status >= 200 && x.status < 300) acked.add(id);
      }
      // At least once: every event acknowledged exactly once.
      expect([...acked].sort()).toEqual([...a, ...b].sort());
      expect(r.received.filter((x) => x.status === 200)).toHaveLength(6);
      expect(r.received.length).toBe(6 + failures.length);

      const log = await deliveries(t, endpoint.id);
      expect(log.every((d) => d.status === 'DELIVERED')).toBe(true);
      const retried = log.filter((d) => d.attempt_count > 1);
      expect(retried.length).toBeGreaterThan(0);
      const attempts = log.flatMap((d) => d.attempts);
      expect(attempts.filter((x) => !x.succeeded).map((x) => x.status_code).sort()).toEqual([429, 500, 503, null]);
      expect(attempts.find((x) => x.status_code === null)!.error).toBe('no answer within 300 ms');
      expect(attempts.find((x) => x.status_code === null)!.latency_ms).toBeGreaterThanOrEqual(290);
      for (const d of retried) expect(d.attempts.map((x) => x.attempt)).toEqual(d.attempts.map((_, i) => i + 1));
    });

    it('retries follow the backoff schedule, then FAILED; a manual redelivery sends the same webhook-id again', async () => {
      let answer = 500;
      const r = await receiver(() => answer);
      const endpoint = await createEndpoint(t, r.url);
      const eventId = await emit(t, 'payment.chargeback', 'pay-backoff');
      const w = testWorker(t);
      expect(await w.drain()).toBe(1);
      let [d] = await deliveries(t, endpoint.id, eventId);
      expect(d).toMatchObject({ status: 'PENDING', attempt_count: 1 });
      expect(Date.parse(d!.next_attempt_at!) - Date.parse(d!.attempts[0]!.started_at)).toBe(SCHEDULE[0]!);
      w.advance(SCHEDULE[0]! - 1);
      expect(await w.drain()).toBe(0);
      w.advance(1);
      expect(await w.drain()).toBe(1);
      w.advance(SCHEDULE[1]!);
      expect(await w.drain()).toBe(1);
      w.advance(SCHEDULE[2]!);
      expect(await w.drain()).toBe(1);
      [d] = await deliveries(t, endpoint.id, eventId);
      expect(d).toMatchObject({ status: 'FAILED', attempt_count: 4, next_attempt_at: null, delivered_at: null });
      expect(d!.attempts.map((x) => [x.attempt, x.trigger, x.status_code, x.error])).toEqual([
        [1, 'SCHEDULED', 500, 'the endpoint answered 500'],
        [2, 'SCHEDULED', 500, 'the endpoint answered 500'],
        [3, 'SCHEDULED', 500, 'the endpoint answered 500'],
        [4, 'SCHEDULED', 500, 'the endpoint answered 500'],
      ]);
      w.advance(3_600_000);
      expect(await w.drain()).toBe(0);

      answer = 204;
      const redo = await t.fetch(`/webhook-endpoints/${endpoint.id}/deliveries/${d!.id}/redeliver`, { method: 'POST' });
      expect(redo.status).toBe(202);
      expect(await w.drain()).toBe(1);
      [d] = await deliveries(t, endpoint.id, eventId);
      expect(d).toMatchObject({ status: 'DELIVERED', attempt_count: 5 });
      expect(d!.attempts[4]).toMatchObject({ attempt: 5, trigger: 'MANUAL', status_code: 204, succeeded: true });
      expect(r.received.map(idOf)).toEqual(Array(5).fill(eventId));

      // A delivered event can be sent again by hand too: same id (receivers deduplicate), never by the worker alone.
      expect(await w.drain()).toBe(0);
      expect((await t.fetch(`/webhook-endpoints/${endpoint.id}/deliveries/${d!.id}/redeliver`, { method: 'POST' })).status).toBe(202);
      expect(await w.drain()).toBe(1);
      expect(r.received).toHaveLength(6);
      expect(idOf(r.received[5]!)).toBe(eventId);
      expect((JSON.parse(r.received[5]!.body) as { retry: number }).retry).toBe(5);
    });

    it('a redelivery of a delivery in flight keeps its lease: no second attempt at once, the caps hold, and it runs again once the attempt ends', async () => {
      // The first attempts hang (each until the worker's 6 s deadline, far longer than the redeliveries below take); every later request is answered 204.
      const r = await receiver((n) => (n <= DEFAULT_CLAIM_CAPS.perEndpoint ? 'hang' : 204));
      const endpoint = await createEndpoint(t, r.url);
      for (let i = 0; i < 6; i++) await emit(t, 'payment.succeeded', `pay-inflight-${i}`);
      const w = testWorker(t, { timeoutMs: 6_000, pollIntervalMs: 50 });
      w.worker.start();
      try {
        await until(async () => r.received.length >= DEFAULT_CLAIM_CAPS.perEndpoint, 5_000);
        const inFlight = await t.db.query<{ id: string }>(
          `SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'PENDING' AND locked_until > clock_timestamp()`,
          [endpoint.id],
        );
        expect(inFlight).toHaveLength(DEFAULT_CLAIM_CAPS.perEndpoint);
        // The merchant redelivers its hanging deliveries, again and again, while the worker keeps polling.
        for (let round = 0; round < 3; round++) {
          for (const d of inFlight) expect((await t.fetch(`/webhook-endpoints/${endpoint.id}/deliveries/${d.id}/redeliver`, { method: 'POST' })).status).toBe(202);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        // Nothing more was sent while the attempts hang: the per-endpoint cap still counts them.
        expect(r.received).toHaveLength(DEFAULT_CLAIM_CAPS.perEndpoint);
        expect(new Set(r.received.map(idOf)).size).toBe(DEFAULT_CLAIM_CAPS.perEndpoint);
        // Once each hanging attempt ends, the redelivery it was asked for runs (MANUAL), then the other two go.
        await until(async () => (await deliveries(t, endpoint.id)).every((d) => d.status === 'DELIVERED'), 15_000);
        const log = await deliveries(t, endpoint.id);
        expect(log.map((d) => d.status)).toEqual(Array(6).fill('DELIVERED'));
        for (const d of log.filter((x) => inFlight.some((f) => f.id === x.id))) {
          expect(d.attempts.map((a) => [a.trigger, a.status_code, a.error])).toEqual([
            ['SCHEDULED', null, 'no answer within 6000 ms'],
            ['MANUAL', 204, null],
          ]);
        }
        expect(r.received).toHaveLength(DEFAULT_CLAIM_CAPS.perEndpoint * 2 + 2);
      } finally {
        await w.worker.stop();
        // The organization's 16 endpoints are shared by this file's tests.
        await t.fetch(`/webhook-endpoints/${endpoint.id}`, { method: 'DELETE' });
      }
    });

    it('a redelivery asked for during an attempt that never finished (its worker died, the lease expired) still gets a fresh schedule', async () => {
      const r = await receiver(() => 500);
      const endpoint = await createEndpoint(t, r.url);
      try {
        const eventId = await emit(t, 'payment.succeeded', 'pay-worker-died');
        const [d] = await deliveries(t, endpoint.id, eventId);
        // On its last retry, leased by a worker that then died.
        await t.db.query(
          `UPDATE webhook_deliveries SET failures = $2, lease_id = 'dead-worker', locked_until = clock_timestamp() + interval '1 minute', next_attempt_at = clock_timestamp() WHERE id = $1`,
          [d!.id, SCHEDULE.length],
        );
        expect((await t.fetch(`/webhook-endpoints/${endpoint.id}/deliveries/${d!.id}/redeliver`, { method: 'POST' })).status).toBe(202);
        await t.db.query(`UPDATE webhook_deliveries SET locked_until = clock_timestamp() - interval '1 second' WHERE id = $1`, [d!.id]);
        await testWorker(t).worker.runOnce();
        const [after] = await deliveries(t, endpoint.id, eventId);
        // Before: the claim dropped the request with the lease, the old count went on, and one failure made it FAILED.
        expect(after!.status).toBe('PENDING');
        expect(after!.attempts.map((a) => [a.trigger, a.status_code])).toEqual([['MANUAL', 500]]);
        const [row] = await t.db.query<{ failures: number }>('SELECT failures FROM webhook_deliveries WHERE id = $1', [d!.id]);
        expect(row!.failures).toBe(1);
      } finally {
        await t.fetch(`/webhook-endpoints/${endpoint.id}`, { method: 'DELETE' });
      }
    });

    it('redirects are not followed and refused connections are logged failures', async () => {
      const r = await receiver(() => 302);
      const redirected = await createEndpoint(t, r.url);
      const gone = await receiver();
      const closed = await createEndpoint(t, gone.url);
      await gone.close();
      const eventId = await emit(t, 'payment.succeeded', 'pay-redirect');
      await testWorker(t).drain();
      const [viaRedirect] = await deliveries(t, redirected.id, eventId);
      expect(viaRedirect!.attempts[0]).toMatchObject({ status_code: 302, succeeded: false, error: 'the endpoint answered 302' });
      expect(r.received).toHaveLength(1);
      const [refused] = await deliveries(t, closed.id, eventId);
      expect(refused!.attempts[0]).toMatchObject({ status_code: null, succeeded: false, error: 'request failed: ECONNREFUSED' });
      expect(refused!.status).toBe('PENDING');
    });

    it('secret rotation: both secrets sign during the overlap, only the new one after it', async () => {
      const r = await receiver();
      const endpoint = await createEndpoint(t, r.url);
      const res = await t.fetch(`/webhook-endpoints/${endpoint.id}/rotate-secret`, { method: 'POST', headers: json, body: JSON.stringify({ previous_secret_expires_in: 3_600 }) });
      const rotated = (await res.json()) as Schemas['WebhookSecretRotated'];
      const w = testWorker(t);
      await emit(t, 'payment.succeeded', 'pay-rot-1');
      await w.drain();
      const during = r.received[0]!;
      expect((during.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
      expect(() => verify(endpoint.secret, during)).not.toThrow();
      expect(() => verify(rotated.secret, during)).not.toThrow();

      w.advance(3_600_000 + 1_000);
      await emit(t, 'payment.succeeded', 'pay-rot-2');
      await w.drain();
      const after = r.received[1]!;
      expect((after.headers['webhook-signature'] as string).split(' ')).toHaveLength(1);
      expect(() => verify(rotated.secret, after)).not.toThrow();
      expect(() => verify(endpoint.secret, after)).toThrow(WebhookVerificationError);
    });

    it(`repeated rotations within the overlap: at most ${MAX_SIGNING_SECRETS} secrets sign (the current one and the two most recently retired)`, async () => {
      const r = await receiver();
      const endpoint = await createEndpoint(t, r.url);
      const secrets = [endpoint.secret];
      for (let i = 0; i < 5; i++) {
        const res = await t.fetch(`/webhook-endpoints/${endpoint.id}/rotate-secret`, { method: 'POST', headers: json, body: JSON.stringify({ previous_secret_expires_in: 3_600 }) });
        expect(res.status).toBe(200);
        secrets.push(((await res.json()) as Schemas['WebhookSecretRotated']).secret);
      }
      await emit(t, 'payment.succeeded', 'pay-rot-many');
      await testWorker(t).drain();
      const got = r.received[0]!;
      expect((got.headers['webhook-signature'] as string).split(' ')).toHaveLength(MAX_SIGNING_SECRETS);
      for (const secret of secrets.slice(-MAX_SIGNING_SECRETS)) expect(() => verify(secret, got)).not.toThrow();
      for (const secret of secrets.slice(0, -MAX_SIGNING_SECRETS)) expect(() => verify(secret, got)).toThrow(WebhookVerificationError);
      await t.fetch(`/webhook-endpoints/${endpoint.id}`, { method: 'DELETE' });
    });

    it('two workers at once never send one delivery twice (FOR UPDATE SKIP LOCKED)', async () => {
      const r = await receiver();
      await createEndpoint(t, r.url);
      const ids: string[] = [];
      for (let i = 0; i < 24; i++) ids.push(await emit(t, 'payment.succeeded', `pay-par-${i}`));
      const w1 = testWorker(t, { batchSize: 5 });
      const w2 = testWorker(t, { batchSize: 5 });
      for (let round = 0; round < 20; round++) {
        const [n1, n2] = await Promise.all([w1.worker.runOnce(), w2.worker.runOnce()]);
        if (n1 + n2 === 0) break;
      }
      expect(r.received.map(idOf).sort()).toEqual([...ids].sort());
    });

    it('a delivery is due within the millisecond the worker clock reads, though the database stamped it in microseconds', async () => {
      const r = await receiver();
      const endpoint = await createEndpoint(t, r.url);
      const eventId = await emit(t, 'payment.succeeded', 'pay-same-ms');
      const [row] = await t.db.query<{ due: string }>(
        `SELECT to_char(next_attempt_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS due FROM webhook_deliveries WHERE event_id = $1 AND endpoint_id = $2`,
        [eventId, endpoint.id],
      );
      // What a millisecond clock reads at that instant: the due time with its microseconds cut off.
      const clockMs = new Date(`${row!.due.slice(0, 23)}Z`);
      const claim = (now: Date) =>
        t.db.transaction((tx) => webhooksRepository.claimDue(tx, now.toISOString(), 10, `lease-${now.getTime()}`, new Date(now.getTime() + 40_000).toISOString()));
      expect((await claim(new Date(clockMs.getTime() - 1))).map((c) => c.event_id)).not.toContain(eventId);
      expect((await claim(clockMs)).map((c) => c.event_id)).toContain(eventId);
    });

    it('a claim left by a crashed worker is taken over once its lease expires', async () => {
      const r = await receiver();
      const endpoint = await createEndpoint(t, r.url);
      const eventId = await emit(t, 'enrollment.enrolled', 'vt-crash');
      const now = new Date();
      // A worker claimed it and died before sending.
      const claimed = await t.db.transaction((tx) => webhooksRepository.claimDue(tx, now.toISOString(), 10, 'dead-lease', new Date(now.getTime() + 40_000).toISOString()));
      expect(claimed.map((c) => c.event_id)).toContain(eventId);
      const w = testWorker(t);
      expect(await w.drain()).toBe(0);
      w.advance(42_000);
      expect(await w.drain()).toBe(1);
      expect(r.received.map(idOf)).toEqual([eventId]);
      const [d] = await deliveries(t, endpoint.id, eventId);
      expect(d).toMatchObject({ status: 'DELIVERED', attempt_count: 1 });
      expectSchema('EventEnrollmentEnrolled', verify(endpoint.secret, r.received[0]!));
    });

    it('an endpoint disabled with deliveries queued holds them and sends them once enabled again', async () => {
      const r = await receiver();
      const endpoint = await createEndpoint(t, r.url);
      const eventId = await emit(t, 'payment.dispute.lost', 'pay-held');
      await t.fetch(`/webhook-endpoints/${endpoint.id}`, { method: 'PATCH', headers: json, body: JSON.stringify({ enabled: false }) });
      const w = testWorker(t);
      expect(await w.drain()).toBe(0);
      await t.fetch(`/webhook-endpoints/${endpoint.id}`, { method: 'PATCH', headers: json, body: JSON.stringify({ enabled: true }) });
      expect(await w.drain()).toBe(1);
      expect(r.received.map(idOf)).toEqual([eventId]);
    });

    it("a disabled endpoint's held deliveries count neither as due nor as waiting in the queue figures (/metrics)", async () => {
      const r = await receiver();
      const endpoint = await createEndpoint(t, r.url);
      await emit(t, 'payment.succeeded', 'pay-held-stats');
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await webhooksRepository.queueStats(t.db)).toMatchObject({ due: 1, scheduled: 0 });
      expect((await webhooksRepository.queueStats(t.db)).oldestDueSeconds).toBeGreaterThan(0);
      // The merchant's choice: held, not late (the worker does not claim them either).
      await t.fetch(`/webhook-endpoints/${endpoint.id}`, { method: 'PATCH', headers: json, body: JSON.stringify({ enabled: false }) });
      expect(await webhooksRepository.queueStats(t.db)).toEqual({ due: 0, scheduled: 0, oldestDueSeconds: 0 });
      await t.fetch(`/webhook-endpoints/${endpoint.id}`, { method: 'PATCH', headers: json, body: JSON.stringify({ enabled: true }) });
      expect(await webhooksRepository.queueStats(t.db)).toMatchObject({ due: 1, scheduled: 0 });
      expect(await testWorker(t).drain()).toBe(1);
      expect(await webhooksRepository.queueStats(t.db)).toEqual({ due: 0, scheduled: 0, oldestDueSeconds: 0 });
      await t.fetch(`/webhook-endpoints/${endpoint.id}`, { method: 'DELETE' });
    });

    it('nothing secret or from the payload reaches the server log', async () => {
      const r = await receiver();
      const endpoint = await createEndpoint(t, r.url);
      await emit(t, 'payment.succeeded', 'pay-log');
      // The server's own worker logs deliveries: run it once and check its lines.
      await t.running.deps.services.webhooks.worker.runOnce();
      expect(r.received).toHaveLength(1);
      const logs = t.logs.join('\n');
      expect(logs).toContain('webhook delivered');
      expect(logs).not.toContain(endpoint.secret.slice(6));
      expect(logs).not.toContain(payment.description!);
      expect(logs).not.toContain(r.received[0]!.headers['webhook-signature'] as string);
    });
  });

  describe(`webhook secrets across a vault key rotation on ${backend}`, () => {
    const k1 = Buffer.alloc(32, 11).toString('base64');
    const k2 = Buffer.alloc(32, 22).toString('base64');
    const t = useServer(backend, { env: { VAULT_ENCRYPTION_KEY: `k1:${k1}` } });

    it('secrets sealed under an old vault key are re-sealed under the new active key on start, and still sign', async () => {
      await t.running.deps.services.webhooks.worker.stop();
      const receiver = await startReceiver();
      try {
        const endpoint = await createEndpoint(t, receiver.url);
        expect(await t.db.query('SELECT key_id FROM webhook_endpoint_secrets WHERE endpoint_id = $1', [endpoint.id])).toEqual([{ key_id: 'k1' }]);
        const second = await startServer({ config: { ...t.running.deps.config, vaultEncryptionKey: `k2:${k2},k1:${k1}` }, db: t.db, log: createLogger('silent') });
        try {
          await second.deps.services.webhooks.worker.stop();
          expect(await t.db.query('SELECT key_id FROM webhook_endpoint_secrets WHERE endpoint_id = $1', [endpoint.id])).toEqual([{ key_id: 'k2' }]);
          const eventId = await emit(t, 'payment.succeeded', 'pay-rewrap');
          const worker = new DeliveryWorker({ db: t.db, log: createLogger('silent'), secrets: second.deps.services.webhooks.rules.secrets, allowLoopback: true, jitter: 0 });
          expect(await worker.runOnce()).toBe(1);
          expect(receiver.received.map(idOf)).toEqual([eventId]);
          expect(() => verify(endpoint.secret, receiver.received[0]!)).not.toThrow();
        } finally {
          await second.close();
        }
      } finally {
        await receiver.close();
      }
    });
  });

  describe(`webhook delivery across a restart on ${backend}`, () => {
    const t = useServer(backend);
    let receiver: Receiver;
    afterAll(async () => {
      await receiver?.close();
    });

    it('an event recorded before a shutdown is delivered by the next server process', async () => {
      receiver = await startReceiver();
      // The first server never gets to deliver: stop its worker, record, shut it down.
      await t.running.deps.services.webhooks.worker.stop();
      const endpoint = await createEndpoint(t, receiver.url);
      const eventId = await emit(t, 'payment.chargeback', 'pay-restart');
      await t.running.close();
      expect(receiver.received).toHaveLength(0);

      const second = await startServer({ config: t.running.deps.config, db: t.db, log: createLogger('silent') });
      try {
        const deadline = Date.now() + 15_000;
        while (receiver.received.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
        expect(receiver.received.map(idOf)).toEqual([eventId]);
        expectSchema('EventPaymentChargeback', verify(endpoint.secret, receiver.received[0]!));
        // Delivered once; the background worker does not send it again.
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        expect(receiver.received).toHaveLength(1);
        const rows = await t.db.query<{ status: string }>('SELECT status FROM webhook_deliveries WHERE event_id = $1', [eventId]);
        expect(rows).toEqual([{ status: 'DELIVERED' }]);
      } finally {
        await second.close();
      }
    });
  });
}
