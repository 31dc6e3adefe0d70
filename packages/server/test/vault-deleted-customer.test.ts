/**
 * A customer deleted while a card of theirs is being vaulted. Enrollment checks the customer, then calls
 * the provider (verify) outside any transaction, then writes: a deletion that commits during the call must
 * win. Before the fix the card was vaulted for the deleted customer (201, a live sealed card nobody could
 * see or unenroll: the customer's deletion had shredded everything else). Now: 404 CUSTOMER_NOT_FOUND and
 * no row. A payment with vault_on_success enrolls in its approval's transaction, after the call: it stands,
 * with nothing vaulted (that case passed before too; it guards that the customer's check refuses the
 * enrollment without undoing the payment).
 *
 * The provider call is held by a gate in front of the sandbox acquirers (a real HTTP proxy), released
 * once the DELETE has answered.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { idempotencyRepository } from '../src/idempotency/repository.js';
import { startSandboxAcquirers, type SandboxAcquirers } from '../src/providers/sandbox/acquirers.js';
import { backends, startTestServer, type TestServer } from './support/harness.js';
import { enrollCard, paymentBody, postPayment } from './support/payments.js';
import { cardBody, createCustomer, enroll, VISA_OK } from './support/vault-fixtures.js';

/** A proxy to `target` that, while closed, holds every POST until `open()`; `arrived` resolves at the first held one. */
interface Gate {
  url: string;
  close(): void;
  open(): void;
  arrived: Promise<void>;
  stop(): Promise<void>;
}

async function gate(target: string): Promise<Gate> {
  let release: Promise<void> = Promise.resolve();
  let open = () => {};
  let signal = () => {};
  const state = { arrived: Promise.resolve() };
  const body = (req: IncomingMessage) =>
    new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(Buffer.concat(chunks))).on('error', reject);
    });
  const server: Server = createServer(async (req, res) => {
    const sent = await body(req);
    if (req.method === 'POST') {
      signal();
      await release;
    }
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'content-length', 'connection'].includes(k))) as Record<string, string>;
    const answer = await fetch(`${target}${req.url}`, { method: req.method, headers, body: req.method === 'GET' ? undefined : new Uint8Array(sent) });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close() {
      release = new Promise((r) => (open = r));
      state.arrived = new Promise((r) => (signal = r));
    },
    open: () => open(),
    get arrived() {
      return state.arrived;
    },
    stop: () => new Promise((r) => server.close(() => r())),
  };
}

for (const backend of backends()) {
  describe(`a customer deleted while a card of theirs is vaulted, on ${backend}`, () => {
    let acquirers: SandboxAcquirers;
    let gates: Gate[];
    let t: TestServer & { stop(): Promise<void> };
    beforeAll(async () => {
      acquirers = await startSandboxAcquirers();
      gates = [await gate(acquirers.a.url), await gate(acquirers.b.url)];
      t = await startTestServer(backend, { env: { SANDBOX_A_URL: gates[0]!.url, SANDBOX_B_URL: gates[1]!.url } });
    });
    afterAll(async () => {
      for (const g of gates ?? []) g.open();
      await t?.stop();
      for (const g of gates ?? []) await g.stop();
      await acquirers?.close();
    });

    /** Closes the gates, starts `request`, runs `meanwhile` once the provider call is held, then opens them. */
    async function heldWhile(request: () => Promise<Response>, meanwhile: () => Promise<void>): Promise<Response> {
      for (const g of gates) g.close();
      const pending = request();
      await Promise.race(gates.map((g) => g.arrived));
      await meanwhile();
      for (const g of gates) g.open();
      return pending;
    }

    /** `request` with the customer deleted while its provider call is held. */
    const deletedDuring = (customerId: string, request: () => Promise<Response>) =>
      heldWhile(request, async () => {
        const deleted = await t.fetch(`/customers/${customerId}`, { method: 'DELETE' });
        expect(deleted.status).toBe(202);
      });

    /** Every card_data object inside `value`. */
    const cardDataIn = (value: unknown): Record<string, unknown>[] => {
      if (Array.isArray(value)) return value.flatMap(cardDataIn);
      if (value === null || typeof value !== 'object') return [];
      return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) =>
        k === 'card_data' && v !== null && typeof v === 'object' ? [v as Record<string, unknown>] : cardDataIn(v),
      );
    };

    /**
     * The payment's copies of its card (its reply, a replay of its key, GET, its transactions, its
     * payment.succeeded event) carry no holder name and no fingerprint; the brand and last four stay.
     */
    async function expectShredded(res: Response, key: string, body: unknown): Promise<void> {
      const text = await res.text();
      expect(res.status, text).toBe(201);
      const created = JSON.parse(text) as { id: string; status: string };
      expect(created.status).toBe('SUCCEEDED');
      const replayed = await postPayment(t, body, { key });
      expect(replayed.status).toBe(201);
      const read = await t.fetch(`/payments/${created.id}`);
      expect(read.status).toBe(200);
      const events = await t.db.query<{ data: unknown }>("SELECT data FROM webhook_events WHERE resource_id = $1 AND type = 'payment.succeeded'", [created.id]);
      expect(events).toHaveLength(1);
      for (const [name, copy] of [['reply', created], ['replay', await replayed.json()], ['GET', await read.json()], ['event', events[0]!.data]] as const) {
        const cards = cardDataIn(copy);
        expect(cards.length, name).toBeGreaterThan(0);
        for (const card of cards) {
          expect(card, name).toMatchObject({ holder_name: null, fingerprint: null, lfd: '0002' });
        }
      }
    }

    const methodsOf = async (customerId: string) =>
      Number((await t.db.query<{ n: string }>('SELECT count(*) AS n FROM payment_methods WHERE customer_id = $1', [customerId]))[0]!.n);

    it('an enrollment whose verify was out when the customer was deleted: 404 CUSTOMER_NOT_FOUND, nothing vaulted, no event', async () => {
      const customerId = await createCustomer(t);
      const key = randomUUID();
      const res = await deletedDuring(customerId, () => enroll(t, customerId, cardBody(t.sandbox.account_id, { number: VISA_OK }, { verify: { vault_on_success: true, currency: 'BRL' } }), { key }));
      const text = await res.text();
      expect(res.status, text).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(text)).toMatchObject({ code: 'CUSTOMER_NOT_FOUND' });
      expect(await methodsOf(customerId)).toBe(0);
      const events = await t.db.query("SELECT 1 FROM webhook_events WHERE type LIKE 'enrollment.%' AND data::text LIKE $1", [`%${customerId}%`]);
      expect(events).toHaveLength(0);
      // The key keeps its answer.
      const again = await enroll(t, customerId, cardBody(t.sandbox.account_id, { number: VISA_OK }, { verify: { vault_on_success: true, currency: 'BRL' } }), { key });
      expect(again.status).toBe(404);
    });

    it('a payment with vault_on_success whose purchase was out when its customer was deleted: the payment stands, nothing vaulted', async () => {
      const customerId = await createCustomer(t);
      const body = paymentBody(t, customerId);
      body.payment_method = { ...body.payment_method, vault_on_success: true };
      const res = await deletedDuring(customerId, () => postPayment(t, body));
      const text = await res.text();
      expect(res.status, text).toBe(201);
      const payment = JSON.parse(text) as { status: string; payment_method: { vaulted_token?: string | null } };
      expect(payment.status).toBe('SUCCEEDED');
      expect(payment.payment_method.vaulted_token ?? null).toBeNull();
      expect(await methodsOf(customerId)).toBe(0);
    });

    it("an enrollment's key replayed after its customer was deleted right after the enrollment committed: the replay names no card data", async () => {
      const customerId = await createCustomer(t);
      const key = randomUUID();
      const body = cardBody(t.sandbox.account_id, { number: VISA_OK });
      // Holds a reply stored outside the enrollment's transaction (on the pool, after its commit), as it was.
      let arrived = () => {};
      let release = () => {};
      const held = new Promise<void>((r) => (arrived = r));
      const released = new Promise<void>((r) => (release = r));
      const complete = idempotencyRepository.complete;
      const spy = vi.spyOn(idempotencyRepository, 'complete').mockImplementation(async (db, organizationId, k, claimId, reply) => {
        if (k === key && db === t.running.deps.db) {
          arrived();
          await released;
        }
        return complete.call(idempotencyRepository, db, organizationId, k, claimId, reply);
      });
      try {
        const pending = enroll(t, customerId, body, { key });
        // Either the reply is held after the commit (before the fix), or the enrollment answers at once.
        await Promise.race([held, pending.then(() => undefined)]);
        const deleted = await t.fetch(`/customers/${customerId}`, { method: 'DELETE' });
        expect(deleted.status).toBe(202);
        release();
        expect((await pending).status).toBe(201);
      } finally {
        release();
        spy.mockRestore();
      }
      const again = await enroll(t, customerId, body, { key });
      const text = await again.text();
      expect(again.status, text).toBe(201);
      const replayed = JSON.parse(text) as { card_data: unknown; description?: unknown };
      expect(replayed.card_data).toBeNull();
      expect(text).not.toContain('JOAO SILVA');
    });

    it('a raw-card payment whose purchase was out when its customer was deleted: no holder name or fingerprint written back', async () => {
      const customerId = await createCustomer(t);
      const body = paymentBody(t, customerId);
      const key = randomUUID();
      await expectShredded(await deletedDuring(customerId, () => postPayment(t, body, { key })), key, body);
    });

    it('a vaulted-card payment whose purchase was out when its customer was deleted: no holder name or fingerprint written back', async () => {
      const customerId = await createCustomer(t);
      const token = await enrollCard(t, customerId);
      const body = { ...paymentBody(t, customerId), payment_method: { type: 'CARD' as const, vaulted_token: token } };
      const key = randomUUID();
      await expectShredded(await deletedDuring(customerId, () => postPayment(t, body, { key })), key, body);
    });

    it('a vaulted-card payment whose purchase was out when its card was unenrolled: no holder name or fingerprint written back', async () => {
      const customerId = await createCustomer(t);
      const token = await enrollCard(t, customerId);
      const body = { ...paymentBody(t, customerId), payment_method: { type: 'CARD' as const, vaulted_token: token } };
      const key = randomUUID();
      const lastUsed = async () =>
        (
          await t.db.query<{ status: string; last_successfully_used: boolean | null; last_successfully_used_at: string | null }>(
            'SELECT status, last_successfully_used, last_successfully_used_at::text AS last_successfully_used_at FROM payment_methods WHERE vaulted_token = $1',
            [token],
          )
        )[0];
      let usedBefore: Awaited<ReturnType<typeof lastUsed>>;
      const res = await heldWhile(
        () => postPayment(t, body, { key }),
        async () => {
          const unenrolled = await t.fetch(`/customers/${customerId}/payment-methods/${token}/unenroll`, { method: 'POST' });
          expect(unenrolled.status).toBe(200);
          usedBefore = await lastUsed();
        },
      );
      await expectShredded(res, key, body);
      // The unenrolled method's last-used fields are as the unenroll left them: the payment finishing writes nothing to it.
      expect(usedBefore).toMatchObject({ status: 'UNENROLLED' });
      expect(await lastUsed()).toEqual(usedBefore);
    });
  });
}
