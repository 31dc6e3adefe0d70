/**
 * Webhook delivery is fair across organizations: an organization at its endpoint cap whose receivers
 * accept the connection and never answer (a tarpit on 127.0.0.1), with events queued, does not delay
 * another organization's `payment.succeeded` beyond 2 s; the caps on endpoints per organization and on
 * deliveries in flight per endpoint and per organization hold, across several workers on one database.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/platform/logger.js';
import { recordEvent } from '../src/webhooks/events.js';
import { DEFAULT_CLAIM_CAPS } from '../src/webhooks/repository.js';
import { MAX_ENDPOINTS_PER_ORGANIZATION } from '../src/webhooks/service.js';
import { DeliveryWorker } from '../src/webhooks/worker.js';
import { expectProblem } from './support/assertions.js';
import { backends, useServer, type Credentials, type TestServer } from './support/harness.js';
import { createPayment, getPayment } from './support/payments.js';

const json = { 'content-type': 'application/json' };

/** Accepts every request and never answers; counts what is open per path and the most ever open at once. */
async function startTarpit() {
  const sockets = new Set<Socket>();
  const open = new Map<string, number>();
  const tarpit = { requests: 0, openNow: 0, maxOpen: 0, maxOpenPerPath: 0, url: '', close: async () => {} };
  const server: Server = createServer((req) => {
    const path = req.url ?? '';
    tarpit.requests += 1;
    tarpit.openNow += 1;
    tarpit.maxOpen = Math.max(tarpit.maxOpen, tarpit.openNow);
    open.set(path, (open.get(path) ?? 0) + 1);
    tarpit.maxOpenPerPath = Math.max(tarpit.maxOpenPerPath, open.get(path)!);
    req.socket.on('close', () => {
      tarpit.openNow -= 1;
      open.set(path, open.get(path)! - 1);
    });
    req.resume();
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  tarpit.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  tarpit.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return tarpit;
}

/** A receiver that answers 204 and notes when each event arrived. */
async function startReceiver() {
  const arrivals: { type: string; at: number }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      arrivals.push({ type: (JSON.parse(body) as { type_event: string }).type_event, at: Date.now() });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    arrivals,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const auth = (c: Credentials) => ({ 'public-api-key': c.public_api_key, 'private-secret-key': c.private_secret_key });

function register(t: TestServer, c: Credentials, url: string): Promise<Response> {
  return t.fetch('/webhook-endpoints', { method: 'POST', headers: { ...json, ...auth(c) }, body: JSON.stringify({ url, events: ['*'] }) });
}

/** Queues `n` events (distinct resources) for the organization: one delivery per endpoint each. */
async function queueEvents(t: TestServer, c: Credentials, n: number, prefix: string): Promise<void> {
  // payment.* events carry the retrieval shape.
  const payment = await getPayment(t, (await createPayment(t)).id);
  for (let i = 0; i < n; i++) {
    await t.db.transaction((tx) =>
      recordEvent(tx, { organizationId: c.organization_id, accountId: c.account_id, type: 'payment.succeeded', data: { payment }, resourceId: `${prefix}-${i}` }),
    );
  }
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

/** Deliveries leased right now, per endpoint and per organization. */
async function leased(t: TestServer, organizationId: string): Promise<{ total: number; maxPerEndpoint: number }> {
  const rows = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_deliveries
     WHERE organization_id = $1 AND status = 'PENDING' AND locked_until > clock_timestamp() GROUP BY endpoint_id`,
    [organizationId],
  );
  return { total: rows.reduce((s, r) => s + r.n, 0), maxPerEndpoint: Math.max(0, ...rows.map((r) => r.n)) };
}

for (const backend of backends()) {
  describe(`webhook fairness on ${backend}`, () => {
    const t = useServer(backend);
    const closers: (() => Promise<void>)[] = [];
    afterAll(async () => {
      // The server (and its worker) stop in useServer's own afterAll, after this one: let them go first.
      await t.running.deps.services.webhooks.worker.stop();
      for (const close of closers) await close();
    });

    it(`an organization has at most ${MAX_ENDPOINTS_PER_ORGANIZATION} endpoints (409), also when registering concurrently`, async () => {
      expect(MAX_ENDPOINTS_PER_ORGANIZATION).toBe(16);
      const org = await t.createOrganization({ name: 'Many endpoints' });
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => register(t, org, `https://hooks-${i}.example.com/h`)));
      expect(answers.filter((r) => r.status === 201)).toHaveLength(16);
      for (const r of answers.filter((x) => x.status !== 201)) {
        const problem = await expectProblem(r, 409, 'WEBHOOK_ENDPOINT_LIMIT_REACHED');
        expect(problem.detail).toContain('at most 16 webhook endpoints');
      }
      const [{ n }] = (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_endpoints WHERE organization_id = $1', [org.organization_id])) as [{ n: number }];
      expect(n).toBe(16);
      // A deleted endpoint frees its place.
      const list = (await (await t.fetch('/webhook-endpoints?limit=1', { headers: auth(org) })).json()) as { webhook_endpoints: { id: string }[] };
      expect((await t.fetch(`/webhook-endpoints/${list.webhook_endpoints[0]!.id}`, { method: 'DELETE', headers: auth(org) })).status).toBe(204);
      expect((await register(t, org, 'https://hooks-new.example.com/h')).status).toBe(201);
      await expectProblem(await register(t, org, 'https://hooks-more.example.com/h'), 409, 'WEBHOOK_ENDPOINT_LIMIT_REACHED');
    });

    it("a tarpit organization at its endpoint cap, events queued, does not delay another organization's payment.succeeded beyond 2 s", async () => {
      const tarpit = await startTarpit();
      closers.push(tarpit.close);
      const slow = await t.createOrganization({ name: 'Tarpit merchant' });
      for (let i = 0; i < MAX_ENDPOINTS_PER_ORGANIZATION; i++) expect((await register(t, slow, `${tarpit.url}/hook-${i}`)).status).toBe(201);
      // 10 events × 16 endpoints = 160 deliveries that each hang for the whole 10 s deadline.
      await queueEvents(t, slow, 10, 'pay-tarpit');
      // The server's own worker has taken up the tarpit's deliveries (as many as it will hold at once).
      await until(() => tarpit.openNow >= DEFAULT_CLAIM_CAPS.perOrganization, 5_000);
      expect(tarpit.openNow).toBeGreaterThanOrEqual(DEFAULT_CLAIM_CAPS.perOrganization);

      const receiver = await startReceiver();
      closers.push(receiver.close);
      expect((await t.fetch('/webhook-endpoints', { method: 'POST', headers: json, body: JSON.stringify({ url: receiver.url, events: ['payment.succeeded'] }) })).status).toBe(201);
      const paid = Date.now();
      await createPayment(t);
      await until(() => receiver.arrivals.length > 0, 15_000);
      const delay = receiver.arrivals.length > 0 ? receiver.arrivals[0]!.at - paid : Infinity;
      expect(receiver.arrivals.map((a) => a.type)).toEqual(['payment.succeeded']);
      if (process.env.FAIRNESS_REPORT) console.log(`${backend}: payment.succeeded arrived after ${delay} ms`);
      expect(delay, `payment.succeeded arrived after ${delay} ms`).toBeLessThan(2_000);
      // The tarpit organization never held more than its caps.
      expect(tarpit.maxOpen).toBeLessThanOrEqual(DEFAULT_CLAIM_CAPS.perOrganization);
      expect(tarpit.maxOpenPerPath).toBeLessThanOrEqual(DEFAULT_CLAIM_CAPS.perEndpoint);
    });

    it('the per-endpoint and per-organization caps hold across several workers on one database', async () => {
      const tarpit = await startTarpit();
      closers.push(tarpit.close);
      const org = await t.createOrganization({ name: 'Three slow endpoints' });
      for (let i = 0; i < 3; i++) expect((await register(t, org, `${tarpit.url}/three-${i}`)).status).toBe(201);
      await queueEvents(t, org, 10, 'pay-caps');
      // Two more instances' workers besides the server's own, each with room for 16 at once.
      const workers = Array.from({ length: 2 }, () =>
        new DeliveryWorker({ db: t.db, log: createLogger('silent'), secrets: t.running.deps.services.webhooks.rules.secrets, allowLoopback: true, pollIntervalMs: 100 }),
      );
      for (const w of workers) w.start();
      try {
        await until(() => tarpit.openNow >= DEFAULT_CLAIM_CAPS.perOrganization, 5_000);
        // Let every worker poll a few more times with the slots taken.
        await new Promise((r) => setTimeout(r, 1_000));
        const now = await leased(t, org.organization_id);
        expect(now.total).toBe(DEFAULT_CLAIM_CAPS.perOrganization);
        expect(now.maxPerEndpoint).toBeLessThanOrEqual(DEFAULT_CLAIM_CAPS.perEndpoint);
        expect(tarpit.openNow).toBe(DEFAULT_CLAIM_CAPS.perOrganization);
        expect(tarpit.maxOpen).toBeLessThanOrEqual(DEFAULT_CLAIM_CAPS.perOrganization);
        expect(tarpit.maxOpenPerPath).toBeLessThanOrEqual(DEFAULT_CLAIM_CAPS.perEndpoint);
      } finally {
        await Promise.all(workers.map((w) => w.stop()));
      }
    });
  });
}
