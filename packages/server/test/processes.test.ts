/**
 * The built server as real OS processes (`node dist/main.js`) on one fresh PostgreSQL database:
 * - two processes starting at the same moment migrate and bootstrap once and share one key pair;
 * - same-key enrollments and disputes split across both have exactly one effect;
 * - SIGTERM under load: requests already accepted finish normally, later ones are refused, exit code 0,
 *   and the database holds exactly the effects of the answered requests;
 * - SIGKILL with webhook deliveries and evidence forwards pending and in progress: a new process
 *   finishes them; every event is acknowledged once (webhook-id dedupes the at-least-once resends) and
 *   every evidence set reaches the provider once.
 * PostgreSQL only (DATABASE_URL): the processes need a database server they can share.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, request, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '@payorch/types';
import { migrations } from '../src/db/migrations/index.js';
import { backends, type Credentials } from './support/harness.js';
import { CARDS, evidence, pdfBase64, rawCard } from './support/payments.js';
import { createProcessDatabase, startServerProcess, type ProcessDatabase, type ServerProcess } from './support/processes.js';
import { cardBody } from './support/vault-fixtures.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns true or the deadline passes (then the caller's expect fails with the state). */
async function until(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check()) && Date.now() < deadline) await sleep(100);
}

if (backends().includes('postgres')) {
  describe('server processes on one PostgreSQL database', () => {
    let pdb: ProcessDatabase;
    let dataDir: string;
    let creds: Credentials;
    const started: ServerProcess[] = [];

    beforeAll(async () => {
      pdb = await createProcessDatabase();
      // One DATA_DIR for every process: the sandbox credentials and vault key file live there.
      dataDir = await mkdtemp(join(tmpdir(), 'payorch-proc-'));
    });
    afterAll(async () => {
      await Promise.all(started.map((p) => p.stop('SIGKILL')));
      await pdb?.drop();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    });

    const start = async (env?: Record<string, string>) => {
      const p = await startServerProcess({ databaseUrl: pdb.url, dataDir, env });
      started.push(p);
      creds ??= JSON.parse(await readFile(join(dataDir, 'sandbox-credentials.json'), 'utf8')) as Credentials;
      return p;
    };

    // ---- the API over plain fetch, with the sandbox key pair

    const auth = () => ({ 'public-api-key': creds.public_api_key, 'private-secret-key': creds.private_secret_key });
    const call = (p: ServerProcess, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      fetch(`${p.baseUrl}${path}`, {
        method,
        headers: { ...auth(), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const ok = async <T>(res: Response | Promise<Response>, status: number): Promise<T> => {
      const r = await res;
      const text = await r.text();
      expect(r.status, text).toBe(status);
      return JSON.parse(text) as T;
    };
    const key = () => ({ 'x-idempotency-key': randomUUID() });

    const createCustomer = async (p: ServerProcess) =>
      (await ok<{ id: string }>(call(p, 'POST', '/customers', { merchant_customer_id: `cus-${randomUUID()}` }), 201)).id;
    const paymentBody = (customerId: string, method: unknown = { type: 'CARD', detail: { card: { card_data: rawCard(CARDS.approved) } } }) => ({
      account_id: creds.account_id,
      description: 'Order at Acme Store',
      country: 'BR',
      merchant_order_id: `ORDER-${randomUUID().slice(0, 8)}`,
      amount: { currency: 'BRL', value: 150.5 },
      customer_payer: { id: customerId },
      payment_method: method,
    });
    const createPayment = async (p: ServerProcess) => ok<Schemas['Payment']>(call(p, 'POST', '/payments', paymentBody(await createCustomer(p)), key()), 201);
    /** A payment with a chargeback received (IN_DISPUTE / RECEIVED), through the sandbox route. */
    const chargedBack = async (p: ServerProcess) => {
      const payment = await createPayment(p);
      const chargeback = await ok<Schemas['Transaction']>(call(p, 'POST', `/sandbox/payments/${payment.id}/chargebacks`, {}), 201);
      return { paymentId: payment.id, chargebackId: chargeback.id };
    };
    const disputePath = (c: { paymentId: string; chargebackId: string }) => `/payments/${c.paymentId}/transactions/${c.chargebackId}/dispute`;
    const count = async (sql: string, params: unknown[] = []) => (await pdb.db.query<{ n: number }>(sql, params))[0]!.n;

    describe('two processes started together', () => {
      let pair: ServerProcess[] | undefined;
      // Both start at the same moment on the empty database: both migrate and bootstrap at once.
      const both = async () => (pair ??= await Promise.all([start(), start()]));
      afterAll(async () => {
        if (pair) expect(await Promise.all(pair.map((p) => p.stop('SIGTERM')))).toEqual([0, 0]);
      });

      it('both come up; each migration is applied once, one sandbox organization, one key pair for both', async () => {
        const [a, b] = await both();
        for (const p of [a!, b!]) expect((await fetch(`${p.baseUrl}/healthz`)).status).toBe(200);

        const rows = await pdb.db.query<{ version: string; n: number }>('SELECT version, count(*)::int AS n FROM schema_migrations GROUP BY version ORDER BY version');
        expect(rows).toEqual(migrations.map((m) => ({ version: m.version, n: 1 })));
        // Exactly one of the two did the work; the other found it done.
        expect([a!, b!].filter((p) => p.lines.some((l) => l.includes('"migrations applied"')))).toHaveLength(1);
        expect([a!, b!].filter((p) => p.lines.some((l) => l.includes('sandbox organization created')))).toHaveLength(1);
        expect(await count('SELECT count(*)::int AS n FROM organizations')).toBe(1);
        expect(await count('SELECT count(*)::int AS n FROM vault_keys')).toBe(1);

        // The key pair works on both, and both hold the same vault key: a card enrolled through one pays through the other.
        const customerId = await createCustomer(a!);
        expect(await ok(call(b!, 'GET', `/customers/${customerId}/payment-methods`), 200)).toEqual({ payment_methods: [] });
        const enrolled = await ok<{ vaulted_token: string }>(call(a!, 'POST', `/customers/${customerId}/payment-methods`, cardBody(creds.account_id), key()), 201);
        const paid = await ok<Schemas['Payment']>(
          call(b!, 'POST', '/payments', paymentBody(customerId, { type: 'CARD', vaulted_token: enrolled.vaulted_token }), key()),
          201,
        );
        expect(paid.status).toBe('SUCCEEDED');
      });

      /** `n` copies of one request, alternately to both processes, all at once. */
      const burst = async (n: number, path: string, idempotencyKey: string, body: unknown) => {
        const ps = await both();
        return Promise.all(
          Array.from({ length: n }, (_, i) =>
            call(ps[i % 2]!, 'POST', path, body, { 'x-idempotency-key': idempotencyKey }).then(async (r) => ({
              status: r.status,
              replayed: r.headers.get('idempotent-replayed') === 'true',
              body: (await r.json()) as { code?: string; vaulted_token?: string; id?: string },
            })),
          ),
        );
      };
      const expectOneEffect = (outcomes: Awaited<ReturnType<typeof burst>>, success: number) => {
        const fresh = outcomes.filter((o) => o.status === success && !o.replayed);
        const replays = outcomes.filter((o) => o.status === success && o.replayed);
        const inProcess = outcomes.filter((o) => o.status === 409 && o.body.code === 'REQUEST_IN_PROCESS');
        expect(fresh).toHaveLength(1);
        expect(fresh.length + replays.length + inProcess.length, JSON.stringify(outcomes.map((o) => [o.status, o.body.code]))).toBe(outcomes.length);
      };

      it('50 same-key enrollments split across both processes: one fresh 201, one payment method', async () => {
        const [a, b] = await both();
        const customerId = await createCustomer(a!);
        const outcomes = await burst(50, `/customers/${customerId}/payment-methods`, randomUUID(), cardBody(creds.account_id));
        expectOneEffect(outcomes, 201);
        const tokens = new Set(outcomes.filter((o) => o.status === 201).map((o) => o.body.vaulted_token));
        expect(tokens.size).toBe(1);
        const list = await ok<{ payment_methods: { vaulted_token: string }[] }>(call(b!, 'GET', `/customers/${customerId}/payment-methods`), 200);
        expect(list.payment_methods.map((m) => m.vaulted_token)).toEqual([...tokens]);
        expect(await count('SELECT count(*)::int AS n FROM payment_methods WHERE customer_id = $1', [customerId])).toBe(1);
      });

      it('50 same-key disputes of one chargeback split across both processes: one fresh 200, one dispute', async () => {
        const [a] = await both();
        const cb = await chargedBack(a!);
        const outcomes = await burst(50, disputePath(cb), randomUUID(), { evidence: [evidence()] });
        expectOneEffect(outcomes, 200);
        expect(await count('SELECT count(*)::int AS n FROM disputes WHERE payment_id = $1', [cb.paymentId])).toBe(1);
        expect(await count('SELECT count(*)::int AS n FROM dispute_evidence e JOIN disputes d ON d.id = e.dispute_id WHERE d.payment_id = $1', [cb.paymentId])).toBe(1);
      });
    });

    describe('SIGTERM under load', () => {
      /**
       * A POST over its own connection with `Expect: 100-continue`: `accepted` resolves when the server
       * has taken the request (it answered 100 Continue), `send()` then sends the body.
       */
      const slowPost = (p: ServerProcess, path: string, body: string, headers: Record<string, string>) => {
        const req = request(`${p.baseUrl}${path}`, {
          method: 'POST',
          agent: false,
          headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), expect: '100-continue', connection: 'close' },
        });
        const accepted = new Promise<void>((resolve, reject) => {
          req.once('continue', resolve);
          req.once('error', reject);
          req.once('response', (res) => reject(new Error(`answered ${res.statusCode} before 100 Continue`)));
        });
        accepted.catch(() => undefined);
        const result = new Promise<{ status?: number; body?: string; error?: string }>((resolve) => {
          req.on('response', (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (text += c));
            res.on('end', () => resolve({ status: res.statusCode, body: text }));
            res.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
          });
          req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
        });
        return { accepted, result, send: () => req.end(body) };
      };

      it('accepted requests finish with 200, later ones are refused, exit code 0, and only answered requests left effects', { timeout: 120_000 }, async () => {
        const p = await start();
        const chargebacks: { paymentId: string; chargebackId: string }[] = [];
        for (let i = 0; i < 5; i++) chargebacks.push(...(await Promise.all(Array.from({ length: 5 }, () => chargedBack(p)))));
        const [inFlight, late] = [chargebacks.slice(0, 20), chargebacks.slice(20)];
        // ~1 MB of PDF per dispute: each request has real work to do after the signal.
        const body = JSON.stringify({ evidence: [evidence({ content: pdfBase64(1_000_000) })] });

        const requests = inFlight.map((c) => slowPost(p, disputePath(c), body, { ...auth(), ...key() }));
        await Promise.all(requests.map((r) => r.accepted));
        const exit = p.stop('SIGTERM');
        // main.ts logs this and closes the listener in the same tick: from here on no connection is accepted.
        await p.waitForLine(/shutting down/);
        for (const r of requests) r.send();

        const refused = await Promise.all(
          late.map((c) => {
            const r = slowPost(p, disputePath(c), body, { ...auth(), ...key() });
            r.send();
            return r.result;
          }),
        );
        expect(refused).toEqual(late.map(() => ({ error: 'ECONNREFUSED' })));

        const results = await Promise.all(requests.map((r) => r.result));
        expect(results.map((r) => r.status ?? r.error)).toEqual(inFlight.map(() => 200));
        expect(results.map((r) => (JSON.parse(r.body!) as { transactions: { id: string } }).transactions.id)).toEqual(inFlight.map((c) => c.chargebackId));
        expect(await exit).toBe(0);
        expect(p.lines.some((l) => l.includes('"stopped"'))).toBe(true);

        // Exactly the answered requests' effects: a dispute, its evidence and its outbox message each; nothing for the refused.
        const ids = (cs: typeof chargebacks) => cs.map((c) => c.paymentId);
        expect(await count('SELECT count(*)::int AS n FROM disputes WHERE payment_id = ANY($1)', [ids(inFlight)])).toBe(20);
        expect(await count('SELECT count(*)::int AS n FROM dispute_evidence e JOIN disputes d ON d.id = e.dispute_id WHERE d.payment_id = ANY($1)', [ids(inFlight)])).toBe(20);
        expect(await count("SELECT count(*)::int AS n FROM outbox WHERE topic = 'dispute.evidence' AND payload->>'payment_id' = ANY($1)", [ids(inFlight)])).toBe(20);
        expect(await count("SELECT count(*)::int AS n FROM payments WHERE id = ANY($1) AND status = 'IN_DISPUTE' AND sub_status = 'PENDING_REVIEW'", [ids(inFlight)])).toBe(20);
        expect(await count('SELECT count(*)::int AS n FROM disputes WHERE payment_id = ANY($1)', [ids(late)])).toBe(0);
        expect(await count("SELECT count(*)::int AS n FROM payments WHERE id = ANY($1) AND status = 'IN_DISPUTE' AND sub_status = 'RECEIVED'", [ids(late)])).toBe(5);
      });
    });

    describe('SIGKILL with deliveries and forwards pending and in progress', () => {
      interface Hit {
        id: string;
        headers: IncomingHttpHeaders;
        body: string;
      }
      /** A webhook receiver that holds every request unanswered until `holding` is turned off, then answers 204. */
      async function startReceiver() {
        const sockets = new Set<Socket>();
        const r = { url: '', holding: true, received: [] as Hit[], held: [] as Hit[], acked: [] as Hit[], pending: [] as ServerResponse[] };
        const server = createServer((req, res) => {
          let body = '';
          req.setEncoding('utf8');
          req.on('data', (c: string) => (body += c));
          req.on('end', () => {
            const hit = { id: String(req.headers['webhook-id']), headers: req.headers, body };
            r.received.push(hit);
            if (r.holding) {
              r.held.push(hit);
              r.pending.push(res);
              return;
            }
            res.writeHead(204).end(() => r.acked.push(hit));
          });
        });
        server.on('connection', (s: Socket) => {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
        return Object.assign(r, {
          close: () => {
            for (const s of sockets) s.destroy();
            server.close();
          },
        });
      }

      it('a new process finishes the work: every event acknowledged once by webhook-id, every evidence set forwarded once', { timeout: 120_000 }, async () => {
        const receiver = await startReceiver();
        // Holds the provider's table: the first forward blocks inside the provider call, in progress at the crash.
        const lock = new pg.Client({ connectionString: pdb.url });
        await lock.connect();
        try {
          await lock.query('BEGIN');
          await lock.query('LOCK TABLE sandbox_evidence_forwards IN EXCLUSIVE MODE');

          const first = await start();
          const endpoint = await ok<Schemas['WebhookEndpointCreated']>(call(first, 'POST', '/webhook-endpoints', { url: receiver.url, events: ['*'] }), 201);

          // Work: 6 disputes (payment.succeeded → chargeback → dispute.submitted, in order per payment,
          // plus an evidence forward each), 6 more payments and 4 enrollments.
          const disputed = await Promise.all(Array.from({ length: 6 }, () => chargedBack(first)));
          await Promise.all(
            disputed.map((c) => ok(call(first, 'POST', disputePath(c), { evidence: [evidence(), evidence({ file_name: 'b.pdf', content: pdfBase64(200_000) })] }, key()), 200)),
          );
          await Promise.all(Array.from({ length: 6 }, () => createPayment(first)));
          const customerId = await createCustomer(first);
          await Promise.all(Array.from({ length: 4 }, () => ok(call(first, 'POST', `/customers/${customerId}/payment-methods`, cardBody(creds.account_id), key()), 201)));

          // Crash only once a delivery is mid-request and a forward is mid-provider-call.
          const blockedForwards = () =>
            count("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'sandbox_evidence_forwards'::regclass");
          await until(async () => receiver.held.length > 0 && (await blockedForwards()) > 0);
          expect(receiver.held.length).toBeGreaterThan(0);
          expect(await blockedForwards()).toBe(1);
          expect(await first.stop('SIGKILL')).toBeNull();
          receiver.holding = false;
          const heldIds = new Set(receiver.held.map((h) => h.id));
          expect(await count("SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'PENDING'", [endpoint.id])).toBeGreaterThan(heldIds.size);
          expect(await count("SELECT count(*)::int AS n FROM outbox WHERE topic = 'dispute.evidence' AND delivered_at IS NULL")).toBeGreaterThan(0);

          await lock.query('ROLLBACK');
          // The dead process's leases would run out after 60 s (outbox) and 40 s (webhooks); there is no
          // setting for them, so expire them here instead of waiting: what the new process sees is the same.
          await pdb.db.query("UPDATE outbox SET locked_until = clock_timestamp() - interval '1 second' WHERE delivered_at IS NULL AND locked_until IS NOT NULL");
          await pdb.db.query("UPDATE webhook_deliveries SET locked_until = clock_timestamp() - interval '1 second' WHERE status = 'PENDING' AND locked_until IS NOT NULL");

          const second = await start();
          await until(
            async () =>
              (await count("SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND status <> 'DELIVERED'", [endpoint.id])) === 0 &&
              (await count("SELECT count(*)::int AS n FROM outbox WHERE delivered_at IS NULL")) === 0,
            45_000,
          );

          // ---- webhooks: every event acknowledged exactly once, in order per resource, signed
          const deliveries = await pdb.db.query<{ event_id: string; event_type: string; resource_id: string; event_seq: string; status: string; ok_attempts: number }>(
            `SELECT d.event_id, d.event_type, d.resource_id, d.event_seq::text, d.status,
                    (SELECT count(*)::int FROM webhook_delivery_attempts a WHERE a.delivery_id = d.id AND a.succeeded) AS ok_attempts
               FROM webhook_deliveries d WHERE d.endpoint_id = $1`,
            [endpoint.id],
          );
          const types = deliveries.map((d) => d.event_type).reduce<Record<string, number>>((m, t) => ({ ...m, [t]: (m[t] ?? 0) + 1 }), {});
          expect(types).toEqual({ 'payment.succeeded': 12, 'payment.chargeback': 6, 'payment.dispute.submitted': 6, 'enrollment.enrolled': 4 });
          expect(deliveries.every((d) => d.status === 'DELIVERED' && d.ok_attempts === 1)).toBe(true);

          const ackedIds = receiver.acked.map((h) => h.id);
          expect(ackedIds.toSorted()).toEqual(deliveries.map((d) => d.event_id).toSorted());
          // Resent across the crash (at least once) only what was in flight at it; each dedupes on webhook-id.
          const resent = new Set(receiver.received.filter((h, i) => receiver.received.findIndex((o) => o.id === h.id) !== i).map((h) => h.id));
          expect([...resent].every((id) => heldIds.has(id))).toBe(true);
          expect([...heldIds].every((id) => ackedIds.includes(id))).toBe(true);
          const wh = new Webhook(endpoint.secret);
          for (const hit of receiver.acked) {
            const verified = wh.verify(hit.body, hit.headers as Record<string, string>) as { id: string };
            expect(verified.id).toBe(hit.id);
          }
          const byEvent = new Map(deliveries.map((d) => [d.event_id, d]));
          const seqsByResource = new Map<string, number[]>();
          for (const id of ackedIds) {
            const d = byEvent.get(id)!;
            seqsByResource.set(d.resource_id, [...(seqsByResource.get(d.resource_id) ?? []), Number(d.event_seq)]);
          }
          for (const seqs of seqsByResource.values()) expect(seqs).toEqual(seqs.toSorted((x, y) => x - y));

          // ---- evidence: every set at the provider exactly once, with its documents
          const messages = await pdb.db.query<{ id: string; attempts: number; delivered: boolean; evidence_ids: string[]; forwards: number; documents: { id: string }[] | null }>(
            `SELECT o.id, o.attempts, o.delivered_at IS NOT NULL AS delivered, o.payload->'evidence_ids' AS evidence_ids,
                    (SELECT count(*)::int FROM sandbox_evidence_forwards f WHERE f.reference = o.id) AS forwards,
                    (SELECT f.documents FROM sandbox_evidence_forwards f WHERE f.reference = o.id) AS documents
               FROM outbox o WHERE o.topic = 'dispute.evidence'`,
          );
          expect(messages.length).toBe(await count('SELECT count(*)::int AS n FROM disputes'));
          for (const m of messages) {
            expect(m).toMatchObject({ delivered: true, forwards: 1 });
            expect(m.documents!.map((d) => d.id).toSorted()).toEqual(m.evidence_ids.toSorted());
          }
          // The forward cut short by the crash was taken over, and still counted once at the provider.
          expect(messages.some((m) => m.attempts >= 2)).toBe(true);
          expect(await count('SELECT count(*)::int AS n FROM sandbox_evidence_forwards')).toBe(messages.length);
          expect(await count('SELECT count(*)::int AS n FROM (SELECT chargeback_id FROM sandbox_evidence_forwards GROUP BY chargeback_id HAVING count(*) > 1) x')).toBe(0);
          expect(await count('SELECT count(*)::int AS n FROM dispute_evidence WHERE forwarded_at IS NULL')).toBe(0);

          expect(await second.stop('SIGTERM')).toBe(0);
        } finally {
          await lock.end().catch(() => undefined);
          receiver.close();
        }
      });
    });
  });
}
