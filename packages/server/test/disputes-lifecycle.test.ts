/**
 * The chargeback/dispute lifecycle end to end (create → chargeback → dispute → replay → more evidence →
 * forward → resolve), asserting every state of docs/interface-spec.md §3 and docs/design.md §5, and the outbox that
 * forwards evidence: retries with backoff until acknowledged, and exactly one forward when the worker is
 * killed between forwarding and acknowledging and the server restarts.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { describe, expect, it } from 'vitest';
import { DeliveryRefused, OutboxWorker, WorkerKilled, type OutboxWorkerOptions } from '../src/payments/outbox/worker.js';
import { paymentOutboxHandlers } from '../src/payments/outbox-topics.js';
import { startServer } from '../src/server.js';
import { expectSchema } from './support/assertions.js';
import { startReceiver } from './support/receiver.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import {
  chargebackNotification,
  chargedBackPayment,
  createPayment,
  evidence,
  getPayment,
  pdfBase64,
  postDispute,
  postNotification,
  signedNotification,
} from './support/payments.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface OutboxState {
  id: string;
  attempts: number;
  delivered_at: string | null;
  locked_until: string | null;
  next_attempt_at: string;
  last_error: string | null;
  due_in_ms: number;
}

async function evidenceOutbox(t: TestServer, paymentId: string): Promise<OutboxState[]> {
  return t.db.query<OutboxState>(
    `SELECT id, attempts, delivered_at, locked_until, next_attempt_at, last_error,
            (extract(epoch FROM next_attempt_at - clock_timestamp()) * 1000)::float8 AS due_in_ms
       FROM outbox WHERE topic = 'dispute.evidence' AND payload->>'payment_id' = $1 ORDER BY created_at`,
    [paymentId],
  );
}

async function forwards(t: TestServer, paymentId: string) {
  return t.db.query<{ reference: string; deliveries: number; documents: { sha256: string; size: number; file_name: string }[] }>(
    'SELECT reference, deliveries, documents FROM sandbox_evidence_forwards WHERE payment_id = $1 ORDER BY received_at',
    [paymentId],
  );
}

async function unforwardedEvidence(t: TestServer, paymentId: string): Promise<number> {
  const rows = await t.db.query<{ n: number }>(
    'SELECT count(*)::int8 AS n FROM dispute_evidence e JOIN disputes d ON d.id = e.dispute_id WHERE d.payment_id = $1 AND e.forwarded_at IS NULL',
    [paymentId],
  );
  return rows[0]!.n;
}

/** A worker on the test's database with the server's handlers, as another process would run it. */
function worker(t: TestServer, options: Partial<OutboxWorkerOptions> = {}): OutboxWorker {
  const { provider } = t.running.deps.services;
  const log = t.running.deps.log;
  return new OutboxWorker({ db: t.db, log, handlers: paymentOutboxHandlers({ db: t.db, provider, log }), ...options });
}

const resolve = (t: TestServer, paymentId: string, outcome: 'WON' | 'LOST') =>
  t.fetch(`/sandbox/payments/${paymentId}/disputes/resolve`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ outcome }) });

const states = (p: Schemas['Payment']) => p.transactions_history!.map((h) => [h.status, h.sub_status, h.transaction_status, h.reason]);

for (const backend of backends()) {
  describe(`dispute lifecycle on ${backend}`, () => {
    const t = useServer(backend);

    it('create → chargeback → dispute → replay → more evidence → forward → WON', async () => {
      // 1. A successful payment.
      const created = await createPayment(t);
      expect(created).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });
      expect([created.transactions].map((x) => [x.type, x.status])).toEqual([['PURCHASE', 'SUCCEEDED']]);

      // 2. The provider notifies a chargeback (signed, over HTTP).
      const notified = await postNotification(t, await signedNotification(t, chargebackNotification(created)));
      expect(notified.status).toBe(200);
      const received = await getPayment(t, created.id);
      expect(received).toMatchObject({ status: 'IN_DISPUTE', sub_status: 'RECEIVED' });
      const chargeback = received.transactions[1]!;
      expect(chargeback).toMatchObject({ type: 'CHARGEBACK', status: 'CREATED', reason: 'REQUESTED_BY_CUSTOMER' });

      // 3. The merchant disputes it.
      const key = randomUUID();
      const body = { account_id: t.sandbox.account_id, evidence: [evidence(), evidence({ file_name: 'policy.pdf', content_category: 'REFUND_POLICY', content: pdfBase64(9000) })] };
      const disputed = await postDispute(t, created.id, chargeback.id, body, { key });
      expect(disputed.status).toBe(200);
      const d = (await disputed.json()) as Schemas['DisputedPayment'];
      expectSchema('DisputedPayment', d);
      expect(d).toMatchObject({ status: 'IN_DISPUTE', sub_status: 'PENDING_REVIEW', transactions: { id: chargeback.id, status: 'CREATED' }, transactions_history: null });

      // 4. A retry of the same request (same key) replays the answer and changes nothing.
      const replay = await postDispute(t, created.id, chargeback.id, body, { key });
      expect(replay.status).toBe(200);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(await replay.json()).toEqual(d);

      // 5. More evidence while under review.
      const more = await postDispute(t, created.id, chargeback.id, { evidence: [evidence({ file_name: 'chat.pdf', content_category: 'CUSTOMER_INTERACTION' })] }, { method: 'PATCH' });
      expect(more.status).toBe(200);

      // 6. The worker forwards both batches to the provider.
      await t.running.deps.services.payments.outbox.runOnce();
      const fw = await forwards(t, created.id);
      expect(fw).toHaveLength(2);
      expect(fw.flatMap((f) => f.documents.map((x) => x.file_name))).toEqual(['receipt.pdf', 'policy.pdf', 'chat.pdf']);
      expect(await unforwardedEvidence(t, created.id)).toBe(0);
      expect((await evidenceOutbox(t, created.id)).every((m) => m.delivered_at !== null)).toBe(true);

      // 7. The issuer decides for the merchant.
      const won = await resolve(t, created.id, 'WON');
      expect(won.status).toBe(200);
      const final = await getPayment(t, created.id, '?transactions_history=true');
      expect(final).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED', amount: { captured: 150.5, refunded: 0 } });
      expect(final.transactions.map((x) => [x.type, x.status])).toEqual([['PURCHASE', 'SUCCEEDED'], ['CHARGEBACK', 'WON']]);
      expect(states(final)).toEqual([
        ['CREATED', 'CREATED', null, null],
        ['SUCCEEDED', 'APPROVED', 'SUCCEEDED', null],
        ['IN_DISPUTE', 'RECEIVED', 'CREATED', 'REQUESTED_BY_CUSTOMER'],
        ['IN_DISPUTE', 'PENDING_REVIEW', 'CREATED', 'EVIDENCE_SUBMITTED'],
        ['SUCCEEDED', 'APPROVED', 'WON', 'DISPUTE_WON'],
      ]);
      const times = final.transactions_history!.map((h) => h.created_at);
      expect([...times].sort()).toEqual(times);
    });

    it('each state change is announced to the merchant as a webhook event, in order', async () => {
      const receiver = await startReceiver<{ type_event: string; data: { payment: Schemas['Payment']; transaction?: Schemas['Transaction'] } }>();
      const received = receiver.received;
      try {
        const url = receiver.url;
        const endpoint = await t.fetch('/webhook-endpoints', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url, events: ['*'] }) });
        expect(endpoint.status, await endpoint.clone().text()).toBe(201);

        const { payment, chargeback } = await chargedBackPayment(t);
        expect((await postDispute(t, payment.id, chargeback.id, { evidence: [evidence()] })).status).toBe(200);
        expect((await resolve(t, payment.id, 'WON')).status).toBe(200);
        const declined = await createPayment(t, { card: '4507990000000010' });

        await receiver.waitFor(5);
        const ofPayment = received.filter((e) => e.data.payment.id === payment.id);
        expect(ofPayment.map((e) => [e.type_event, e.data.payment.status, e.data.payment.sub_status, e.data.transaction?.status ?? null])).toEqual([
          ['payment.succeeded', 'SUCCEEDED', 'APPROVED', null],
          ['payment.chargeback', 'IN_DISPUTE', 'RECEIVED', 'CREATED'],
          ['payment.dispute.submitted', 'IN_DISPUTE', 'PENDING_REVIEW', 'CREATED'],
          ['payment.dispute.won', 'SUCCEEDED', 'APPROVED', 'WON'],
        ]);
        expect(received.find((e) => e.data.payment.id === declined.id)?.type_event).toBe('payment.declined');
        for (const e of received) expectSchema('Payment', e.data.payment);
      } finally {
        receiver.close();
      }
    });

    it('… → LOST: CHARGEBACK / LOST, transaction LOST, and no further chargeback', async () => {
      const { payment, chargeback } = await chargedBackPayment(t);
      expect((await postDispute(t, payment.id, chargeback.id, { evidence: [evidence()] })).status).toBe(200);
      expect((await resolve(t, payment.id, 'LOST')).status).toBe(200);
      const final = await getPayment(t, payment.id, '?transactions_history=true');
      expect(final).toMatchObject({ status: 'CHARGEBACK', sub_status: 'LOST' });
      expect(final.transactions[1]!.status).toBe('LOST');
      expect(states(final).at(-1)).toEqual(['CHARGEBACK', 'LOST', 'LOST', 'DISPUTE_LOST']);
      const again = await postNotification(t, await signedNotification(t, chargebackNotification(payment)));
      expect(again.status).toBe(409);
    });
  });

  describe(`evidence forwarding outbox on ${backend}`, () => {
    const t = useServer(backend);

    it('forwards each batch once, with its SHA-256, by the message id as idempotency reference', async () => {
      const { payment, chargeback } = await chargedBackPayment(t);
      expect((await postDispute(t, payment.id, chargeback.id, { evidence: [evidence()] })).status).toBe(200);
      await t.running.deps.services.payments.outbox.runOnce();
      const [message] = await evidenceOutbox(t, payment.id);
      const fw = await forwards(t, payment.id);
      expect(fw).toHaveLength(1);
      expect(fw[0]).toMatchObject({ reference: message!.id, deliveries: 1 });
      const stored = await t.db.query<{ sha256: Uint8Array }>('SELECT e.sha256 FROM dispute_evidence e JOIN disputes d ON d.id = e.dispute_id WHERE d.payment_id = $1', [payment.id]);
      expect(fw[0]!.documents[0]!.sha256).toBe(Buffer.from(stored[0]!.sha256).toString('hex'));
      // Another pass finds nothing more to do.
      await t.running.deps.services.payments.outbox.runOnce();
      expect((await forwards(t, payment.id))[0]!.deliveries).toBe(1);
    });

    /**
     * Runs `fn` on a payment whose chargeback is disputed with one document, while the service's own outbox
     * worker is stopped (the test drives its workers itself).
     */
    async function disputedWithOutboxStopped(fn: (d: Awaited<ReturnType<typeof chargedBackPayment>>) => Promise<void>): Promise<void> {
      await t.running.deps.services.payments.outbox.stop();
      try {
        const disputed = await chargedBackPayment(t);
        expect((await postDispute(t, disputed.payment.id, disputed.chargeback.id, { evidence: [evidence()] })).status).toBe(200);
        await fn(disputed);
      } finally {
        t.running.deps.services.payments.outbox.start();
      }
    }

    it('two workers at once (two processes): the message is delivered by one of them', async () => {
      await disputedWithOutboxStopped(async ({ payment }) => {
        const [a, b] = await Promise.all([worker(t).runOnce(), worker(t).runOnce()]);
        expect(a!.delivered + b!.delivered).toBe(1);
        expect((await forwards(t, payment.id)).map((f) => f.deliveries)).toEqual([1]);
      });
    });

    it('retries with exponential backoff while the provider is unreachable, until acknowledged', async () => {
      await disputedWithOutboxStopped(async ({ payment }) => {
        const w = failing(2, { baseBackoffMs: 600 });
        // The schedule is read against the moments around the failing pass, not against "now": on a busy
        // machine the read itself may come a while after the pass.
        const at = (row: OutboxState) => new Date(row.next_attempt_at).getTime();
        let before = Date.now();
        expect(await w.runOnce()).toEqual({ delivered: 0, failed: 1 });
        let after = Date.now();
        const [first] = await evidenceOutbox(t, payment.id);
        expect(first).toMatchObject({ attempts: 1, delivered_at: null, locked_until: null, last_error: 'connect ECONNREFUSED sandbox-acquirer:443' });
        // First step 600 ms: 300–600 ms after the failure (half fixed, half jitter); the second step doubles: 600–1,200 ms.
        expect(at(first!) - before).toBeGreaterThanOrEqual(300 - 5);
        expect(at(first!) - after).toBeLessThanOrEqual(600 + 5);
        expect(await w.runOnce()).toEqual({ delivered: 0, failed: 0 }); // not due yet

        await sleep(at(first!) - Date.now() + 20);
        before = Date.now();
        expect(await w.runOnce()).toEqual({ delivered: 0, failed: 1 });
        after = Date.now();
        const [second] = await evidenceOutbox(t, payment.id);
        expect(second!.attempts).toBe(2);
        expect(at(second!) - before).toBeGreaterThanOrEqual(600 - 5);
        expect(at(second!) - after).toBeLessThanOrEqual(1_200 + 5);

        await sleep(at(second!) - Date.now() + 20);
        expect(await w.runOnce()).toEqual({ delivered: 1, failed: 0 });
        const [done] = await evidenceOutbox(t, payment.id);
        expect(done).toMatchObject({ attempts: 3, last_error: null, locked_until: null });
        expect(done!.delivered_at).not.toBeNull();
        expect((await forwards(t, payment.id)).map((f) => f.deliveries)).toEqual([1]);
        expect(await unforwardedEvidence(t, payment.id)).toBe(0);
      });
    });

    /** A worker whose first `outages` deliveries fail (the provider unreachable); later ones go through. */
    function failing(outages: number, options: { baseBackoffMs?: number } = {}): OutboxWorker {
      return worker(t, {
        ...options,
        faults: {
          beforeDeliver() {
            if (outages > 0) {
              outages -= 1;
              throw new Error('connect ECONNREFUSED sandbox-acquirer:443');
            }
          },
        },
      });
    }
    const dueNow = (id: string) => t.db.query('UPDATE outbox SET next_attempt_at = clock_timestamp() WHERE id = $1', [id]);

    it('evidence still waiting when the dispute is decided is not sent: the message is acknowledged without calling the provider', async () => {
      await disputedWithOutboxStopped(async ({ payment }) => {
        const w = failing(1);
        expect(await w.runOnce()).toEqual({ delivered: 0, failed: 1 });
        expect((await resolve(t, payment.id, 'LOST')).status).toBe(200);

        const [message] = await evidenceOutbox(t, payment.id);
        await dueNow(message!.id);
        expect(await w.runOnce()).toEqual({ delivered: 1, failed: 0 });
        expect(await forwards(t, payment.id)).toEqual([]);
        const [done] = await evidenceOutbox(t, payment.id);
        expect(done).toMatchObject({ last_error: null, locked_until: null });
        expect(done!.delivered_at).not.toBeNull();
        // Not forwarded: the evidence says so.
        expect(await unforwardedEvidence(t, payment.id)).toBe(1);
      });
    });

    it("a dispute's batches reach the provider in the order they were submitted, even after the first one's delivery failed", async () => {
      await disputedWithOutboxStopped(async ({ payment, chargeback }) => {
        const w = failing(1);
        expect(await w.runOnce()).toEqual({ delivered: 0, failed: 1 });
        const more = await postDispute(t, payment.id, chargeback.id, { evidence: [evidence({ file_name: 'chat.pdf', content_category: 'CUSTOMER_INTERACTION' })] }, { method: 'PATCH' });
        expect(more.status).toBe(200);
        const [post, patch] = await evidenceOutbox(t, payment.id);

        // The PATCH's batch is due, the POST's is not yet: the PATCH's waits for it.
        expect(await w.runOnce()).toEqual({ delivered: 0, failed: 0 });
        expect(await forwards(t, payment.id)).toEqual([]);
        await dueNow(post!.id);
        for (let pass = 0; pass < 3; pass += 1) await w.runOnce();
        const fw = await forwards(t, payment.id);
        expect(fw.map((f) => f.reference)).toEqual([post!.id, patch!.id]);
        expect(fw.flatMap((f) => f.documents.map((x) => x.file_name))).toEqual(['receipt.pdf', 'chat.pdf']);
      });
    });

    it("a batch the provider refuses for good is given up (recorded, not retried) and no longer holds back the dispute's next one", async () => {
      await disputedWithOutboxStopped(async ({ payment, chargeback }) => {
        expect((await postDispute(t, payment.id, chargeback.id, { evidence: [evidence({ file_name: 'chat.pdf' })] }, { method: 'PATCH' })).status).toBe(200);
        const [post, patch] = await evidenceOutbox(t, payment.id);
        const { provider } = t.running.deps.services;
        const log = t.running.deps.log;
        const handlers = paymentOutboxHandlers({ db: t.db, provider, log });
        // The provider refuses the POST's batch for good (as Stripe's connector reports a 400: ProviderRefusedError).
        const refusing = new OutboxWorker({
          db: t.db,
          log,
          handlers: {
            ...handlers,
            'dispute.evidence': (m) => (m.id === post!.id ? Promise.reject(new DeliveryRefused('HTTP 400 invalid_request_error')) : handlers['dispute.evidence']!(m)),
          },
        });
        expect(await refusing.runOnce()).toEqual({ delivered: 1, failed: 1 });
        const rows = await t.db.query<{ id: string; given_up_at: string | null; delivered_at: string | null; attempts: number; last_error: string | null }>(
          "SELECT id, given_up_at, delivered_at, attempts, last_error FROM outbox WHERE topic = 'dispute.evidence' AND payload->>'payment_id' = $1 ORDER BY created_at",
          [payment.id],
        );
        expect(rows[0]).toMatchObject({ id: post!.id, delivered_at: null, attempts: 1, last_error: 'HTTP 400 invalid_request_error' });
        expect(rows[0]!.given_up_at).not.toBeNull();
        expect(rows[1]!.delivered_at).not.toBeNull();
        expect((await forwards(t, payment.id)).map((f) => f.reference)).toEqual([patch!.id]);
        // Never claimed again.
        await dueNow(post!.id);
        expect(await refusing.runOnce()).toEqual({ delivered: 0, failed: 0 });
      });
    });
  });

  describe(`worker crash between forward and acknowledgement on ${backend}`, () => {
    const t = useServer(backend);

    it('the evidence reaches the provider exactly once after the server restarts', async () => {
      // The running server's own worker must not deliver the message first.
      await t.running.deps.services.payments.outbox.stop();
      const { payment, chargeback } = await chargedBackPayment(t);
      expect((await postDispute(t, payment.id, chargeback.id, { evidence: [evidence(), evidence({ file_name: 'b.pdf' })] })).status).toBe(200);

      // A worker forwards the evidence, then dies before it can acknowledge.
      const crashing = worker(t, {
        leaseMs: 5000,
        faults: {
          afterDeliver() {
            throw new WorkerKilled('after forwarding, before acknowledging');
          },
        },
      });
      await expect(crashing.runOnce()).rejects.toBeInstanceOf(WorkerKilled);
      await expect(crashing.runOnce()).rejects.toThrow(/killed/);
      const [message] = await evidenceOutbox(t, payment.id);
      expect(message).toMatchObject({ attempts: 1, delivered_at: null });
      expect(message!.locked_until).not.toBeNull();
      expect((await forwards(t, payment.id)).map((f) => f.deliveries)).toEqual([1]);
      expect(await unforwardedEvidence(t, payment.id)).toBe(2);

      // The server restarts on the same database; its worker starts with it.
      await t.running.close();
      const restarted = await startServer({ config: t.running.deps.config, db: t.db, log: t.running.deps.log });
      try {
        // While the dead worker's lease lasts, nobody takes the message over.
        expect(await restarted.deps.services.payments.outbox.runOnce()).toEqual({ delivered: 0, failed: 0 });
        // After the lease, the new worker delivers it again; the provider recognises the reference.
        const deadline = Date.now() + 15_000;
        let delivered = (await evidenceOutbox(t, payment.id))[0]!;
        while (delivered.delivered_at === null && Date.now() < deadline) {
          await sleep(100);
          await restarted.deps.services.payments.outbox.runOnce();
          delivered = (await evidenceOutbox(t, payment.id))[0]!;
        }
        expect(delivered.delivered_at).not.toBeNull();
        expect(delivered.attempts).toBe(2);
        const fw = await forwards(t, payment.id);
        expect(fw).toHaveLength(1); // one forward at the provider…
        expect(fw[0]).toMatchObject({ reference: message!.id, deliveries: 2 }); // …though delivered twice
        expect(fw[0]!.documents).toHaveLength(2);
        expect(await unforwardedEvidence(t, payment.id)).toBe(0);

        // The restarted server answers as before.
        const res = await fetch(`${restarted.url}/v1/payments/${payment.id}`, {
          headers: { 'public-api-key': t.sandbox.public_api_key, 'private-secret-key': t.sandbox.private_secret_key },
        });
        expect(((await res.json()) as Schemas['Payment']).sub_status).toBe('PENDING_REVIEW');
        expect(t.logs.some((l) => l.includes('"duplicate":true') && l.includes('dispute evidence forwarded'))).toBe(true);
      } finally {
        await restarted.close();
      }
    });
  });
}
