/**
 * Idempotency's deferred mode (src/idempotency/idempotency.ts: operations that call a provider), against
 * each real database: the mechanism on its own (claim, bind, reply; a claim lost after its lease; a throw
 * before and after binding), and POST /payments through it (concurrent same key, replay, crash recovery).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Queryable } from '../src/db/database.js';
import { DEFERRED_OPERATIONS, idempotencyModeOf, runDeferred, type IdempotencyBinding, type Recoverers, type Reply } from '../src/idempotency/idempotency.js';
import { backends, startTestServer, type TestServer } from './support/harness.js';
import { createCustomer, paymentBody, postPayment } from './support/payments.js';

/** A promise with its resolve, to hold an operation at a point of the test's choosing. */
function gate<T = void>() {
  let open!: (v: T) => void;
  const opened = new Promise<T>((r) => (open = r));
  return { open, opened };
}

describe('idempotency modes', () => {
  it('operations that call a provider run deferred, every other one atomic', () => {
    for (const op of ['createPayment', 'capturePayment', 'cancelPayment', 'refundPayment', 'cancelOrRefundPayment', 'enrollPaymentMethod']) {
      expect(idempotencyModeOf(op), op).toBe('deferred');
    }
    expect(DEFERRED_OPERATIONS.size).toBe(6);
    for (const op of ['createCustomer', 'disputeTransaction', 'createWebhookEndpoint']) expect(idempotencyModeOf(op)).toBe('atomic');
  });
});

for (const backend of backends()) {
  describe(`runDeferred on ${backend}`, () => {
    let t: TestServer & { stop(): Promise<void> };
    beforeAll(async () => {
      t = await startTestServer(backend);
    });
    afterAll(async () => t?.stop());

    const org = () => t.sandbox.organization_id;
    const request = (key: string, fingerprint = 'fp-1') => ({ organizationId: org(), key, operationId: 'createThing', fingerprint });
    /** The test's resource: a customer, recovered as settled once its merchant_customer_id says 'settled-…'. */
    const recoverers: Recoverers = {
      customer: async (db, { id }) => {
        const rows = await db.query<{ merchant_customer_id: string }>('SELECT merchant_customer_id FROM customers WHERE id = $1', [id]);
        const mcid = rows[0]?.merchant_customer_id;
        return mcid?.startsWith('settled-') ? { status: 201, body: { id, recovered: true } } : null;
      },
    };
    const createBound = async (binding: IdempotencyBinding, mcid: string) => {
      const id = randomUUID();
      await t.db.transaction(async (tx: Queryable) => {
        await tx.query('INSERT INTO customers (id, organization_id, merchant_customer_id) VALUES ($1, $2, $3)', [id, org(), mcid]);
        await binding.bind(tx, `customer:${id}`);
      });
      return id;
    };
    const record = async (key: string) =>
      (
        await t.db.query<{ state: string; resource: string | null; status_code: number | null }>(
          'SELECT state, resource, status_code FROM idempotency_keys WHERE organization_id = $1 AND idempotency_key = $2',
          [org(), key],
        )
      )[0];

    it('claims, binds in the operation’s transaction, stores the reply; the same request again is replayed without running', async () => {
      let runs = 0;
      const op = async (binding: IdempotencyBinding): Promise<Reply> => {
        runs += 1;
        const id = await createBound(binding, `d-replay-${randomUUID()}`);
        return { status: 201, body: { id }, headers: { ETag: '"e"' } };
      };
      const first = await runDeferred(t.db, request('d-replay'), recoverers, op);
      const again = await runDeferred(t.db, request('d-replay'), recoverers, op);
      expect(first.replayed).toBe(false);
      expect(again).toEqual({ reply: first.reply, replayed: true });
      expect(runs).toBe(1);
      expect(await record('d-replay')).toMatchObject({ state: 'COMPLETE', status_code: 201 });
      expect((await record('d-replay'))!.resource).toMatch(/^customer:/);
    });

    it('a different request with the key is 422 IDEMPOTENCY_KEY_REUSED, also while the first is pending', async () => {
      const hold = gate();
      const first = runDeferred(t.db, request('d-reuse', 'fp-a'), recoverers, async () => {
        await hold.opened;
        return { status: 201, body: {} };
      });
      await new Promise((r) => setTimeout(r, 20));
      const other = await runDeferred(t.db, request('d-reuse', 'fp-b'), recoverers, async () => ({ status: 201, body: {} }));
      hold.open();
      await first;
      expect(other.reply.status).toBe(422);
      expect((other.reply.body as { code: string }).code).toBe('IDEMPOTENCY_KEY_REUSED');
    });

    it('while the first runs (unbound, then bound and unsettled) a second gets 409 REQUEST_IN_PROCESS and runs nothing', async () => {
      const beforeBind = gate();
      const afterBind = gate();
      const bound = gate();
      let runs = 0;
      const first = runDeferred(t.db, request('d-busy'), recoverers, async (binding) => {
        runs += 1;
        await beforeBind.opened;
        const id = await createBound(binding, `pending-${randomUUID()}`);
        bound.open();
        await afterBind.opened;
        return { status: 201, body: { id } };
      });
      const second = async () =>
        runDeferred(t.db, request('d-busy'), recoverers, async () => {
          runs += 1;
          return { status: 201, body: {} };
        });
      await new Promise((r) => setTimeout(r, 20));
      const unbound = await second();
      beforeBind.open();
      await bound.opened;
      const unsettled = await second();
      afterBind.open();
      const done = await first;
      for (const busy of [unbound, unsettled]) {
        expect(busy.reply.status).toBe(409);
        expect((busy.reply.body as { code: string }).code).toBe('REQUEST_IN_PROCESS');
        expect(busy.reply.headers?.['Retry-After']).toBe('1');
      }
      expect(runs).toBe(1);
      expect(await second()).toEqual({ reply: { ...done.reply, headers: {} }, replayed: true });
    });

    it('a throw before binding gives the key back: a retry runs at once', async () => {
      await expect(runDeferred(t.db, request('d-throw-early'), recoverers, async () => Promise.reject(new Error('provider exploded')))).rejects.toThrow(
        'provider exploded',
      );
      expect(await record('d-throw-early')).toBeUndefined();
      const retry = await runDeferred(t.db, request('d-throw-early'), recoverers, async () => ({ status: 201, body: { ok: true } }));
      expect(retry).toEqual({ reply: { status: 201, body: { ok: true } }, replayed: false });
    });

    it('a throw after binding (a crash mid-call) leaves the record bound: a retry gets 409 until the recoverer can build the settled reply', async () => {
      let id = '';
      await expect(
        runDeferred(t.db, request('d-crash'), recoverers, async (binding) => {
          id = await createBound(binding, `pending-${randomUUID()}`);
          throw new Error('process died mid-call');
        }),
      ).rejects.toThrow('process died');
      expect(await record('d-crash')).toEqual({ state: 'PENDING', resource: `customer:${id}`, status_code: null });
      let ran = false;
      const op = async () => {
        ran = true;
        return { status: 201, body: {} };
      };
      expect((await runDeferred(t.db, request('d-crash'), recoverers, op)).reply.status).toBe(409);
      // Settled later (what reconciliation does for a payment):
      await t.db.query('UPDATE customers SET merchant_customer_id = $2 WHERE id = $1', [id, `settled-${id}`]);
      const recovered = await runDeferred(t.db, request('d-crash'), recoverers, op);
      expect(recovered).toEqual({ reply: { status: 201, body: { id, recovered: true }, headers: {} }, replayed: true });
      expect(await record('d-crash')).toMatchObject({ state: 'COMPLETE', status_code: 201 });
      expect(await runDeferred(t.db, request('d-crash'), recoverers, op)).toEqual(recovered);
      expect(ran).toBe(false);
    });

    it('an unbound claim past its lease (its claimer died before writing) is taken over; the stalled claimer cannot bind any more', async () => {
      const stalled = gate();
      const mcid = `d-lease-${randomUUID()}`;
      const first = runDeferred(t.db, request('d-lease'), recoverers, async (binding) => {
        await stalled.opened;
        await createBound(binding, `${mcid}-stalled`);
        return { status: 201, body: { who: 'first' } };
      });
      await new Promise((r) => setTimeout(r, 20));
      const takeover = await runDeferred(
        t.db,
        request('d-lease'),
        recoverers,
        async (binding) => {
          await createBound(binding, mcid);
          return { status: 201, body: { who: 'second' } };
        },
        { leaseSeconds: 0 },
      );
      stalled.open();
      const late = await first;
      expect(takeover).toEqual({ reply: { status: 201, body: { who: 'second' } }, replayed: false });
      expect(late.reply.status).toBe(409);
      // The stalled claimer's transaction rolled back with its failed bind: one customer.
      expect((await t.db.query('SELECT 1 FROM customers WHERE merchant_customer_id = $1', [mcid])).length).toBe(1);
      expect((await t.db.query('SELECT 1 FROM customers WHERE merchant_customer_id = $1', [`${mcid}-stalled`])).length).toBe(0);
      expect((await runDeferred(t.db, request('d-lease'), recoverers, async () => ({ status: 500 }))).reply.body).toEqual({ who: 'second' });
    });

    it('claim on bind (payments and their follow-ups): nothing holds the key before the first write; the request that binds first owns it, the other answers from its record', async () => {
      const hold = gate();
      const mcid = `d-onbind-${randomUUID()}`;
      const onBind = { claimOnBind: true };
      const first = runDeferred(t.db, request('d-onbind', 'fp-a'), recoverers, async (binding) => {
        await hold.opened;
        await createBound(binding, `${mcid}-first`);
        return { status: 201, body: { who: 'first' } };
      }, onBind);
      await new Promise((r) => setTimeout(r, 20));
      // While the first has written nothing, another request with the key runs, binds and answers.
      const second = await runDeferred(t.db, request('d-onbind', 'fp-b'), recoverers, async (binding) => {
        await createBound(binding, `${mcid}-second`);
        return { status: 201, body: { who: 'second' } };
      }, onBind);
      hold.open();
      const late = await first;
      expect(second).toEqual({ reply: { status: 201, body: { who: 'second' } }, replayed: false });
      // The first's bind failed and its transaction rolled back: it created nothing, and the key is another request's.
      expect(late.reply.status).toBe(422);
      expect((late.reply.body as { code: string }).code).toBe('IDEMPOTENCY_KEY_REUSED');
      expect((await t.db.query('SELECT 1 FROM customers WHERE merchant_customer_id = $1', [`${mcid}-first`])).length).toBe(0);
      expect(await record('d-onbind')).toMatchObject({ state: 'COMPLETE', status_code: 201 });
      // The same request again is replayed from one read; a refusal that wrote nothing is stored too.
      expect(await runDeferred(t.db, request('d-onbind', 'fp-b'), recoverers, async () => ({ status: 500 }), onBind)).toEqual({
        reply: { status: 201, body: { who: 'second' }, headers: {} },
        replayed: true,
      });
      const refused = await runDeferred(t.db, request('d-onbind-4xx'), recoverers, async () => ({ status: 422, body: { code: 'INVALID_AMOUNT' } }), onBind);
      expect(refused.replayed).toBe(false);
      expect(await record('d-onbind-4xx')).toMatchObject({ state: 'COMPLETE', status_code: 422, resource: null });
    });

    it('claim on bind: a refusal of a request whose key another request bound meanwhile is not answered; the record is (409 while it runs, its reply, 422 for another request)', async () => {
      const onBind = { claimOnBind: true };
      const bound = gate();
      const settle = gate();
      // Requests that looked the key up before the first bound it, and whose checks then saw what the first
      // changed (a second capture of a captured payment): they write nothing and refuse.
      const held = Array.from({ length: 3 }, () => gate());
      const looked = Array.from({ length: 3 }, () => gate());
      const first = runDeferred(t.db, request('d-onbind-refused', 'fp-a'), recoverers, async (binding) => {
        await Promise.all(looked.map((g) => g.opened));
        const id = await createBound(binding, `d-onbind-refused-${randomUUID()}`);
        bound.open();
        await settle.opened;
        return { status: 200, body: { id } };
      }, onBind);
      const refusing = (i: number, fingerprint: string) =>
        runDeferred(t.db, request('d-onbind-refused', fingerprint), recoverers, async () => {
          looked[i]!.open();
          await held[i]!.opened;
          return { status: 409, body: { code: 'INVALID_STATUS' } };
        }, onBind);
      const [whileRunning, afterwards, another] = [refusing(0, 'fp-a'), refusing(1, 'fp-a'), refusing(2, 'fp-b')];
      await bound.opened;
      held[0]!.open();
      const busy = await whileRunning;
      expect(busy.reply.status).toBe(409);
      expect((busy.reply.body as { code: string }).code).toBe('REQUEST_IN_PROCESS');
      settle.open();
      const done = await first;
      held[1]!.open();
      held[2]!.open();
      expect(await afterwards).toEqual({ reply: { ...done.reply, headers: {} }, replayed: true });
      const reused = await another;
      expect(reused.reply.status).toBe(422);
      expect((reused.reply.body as { code: string }).code).toBe('IDEMPOTENCY_KEY_REUSED');
      expect(await record('d-onbind-refused')).toMatchObject({ state: 'COMPLETE', status_code: 200 });
    });
  });

  describe(`POST /payments in deferred mode on ${backend}`, () => {
    let t: TestServer & { stop(): Promise<void> };
    let customerId: string;
    beforeAll(async () => {
      t = await startTestServer(backend);
      customerId = await createCustomer(t);
    });
    afterAll(async () => t?.stop());

    const paymentsOf = async (merchantOrderId: string) =>
      (await t.db.query<{ id: string }>('SELECT id FROM payments WHERE merchant_order_id = $1', [merchantOrderId])).map((r) => r.id);

    it('concurrent requests with one key: one payment; the others are 409 REQUEST_IN_PROCESS or the identical replay', async () => {
      const body = paymentBody(t, customerId);
      const key = randomUUID();
      const responses = await Promise.all(Array.from({ length: 6 }, () => postPayment(t, body, { key })));
      const outcomes = await Promise.all(responses.map(async (r) => ({ status: r.status, replayed: r.headers.get('idempotent-replayed'), body: await r.json() })));
      expect(await paymentsOf(body.merchant_order_id)).toHaveLength(1);
      const fresh = outcomes.filter((o) => o.status === 201 && o.replayed === null);
      expect(fresh).toHaveLength(1);
      for (const o of outcomes.filter((x) => x !== fresh[0])) {
        if (o.status === 201) expect(o).toEqual({ ...fresh[0], replayed: 'true' });
        else expect(o).toMatchObject({ status: 409, body: { code: 'REQUEST_IN_PROCESS' } });
      }
    });

    it('a retry after completion is replayed identically; a different body with the key is 422', async () => {
      const body = paymentBody(t, customerId);
      const key = randomUUID();
      const first = await postPayment(t, body, { key });
      const firstBody = await first.text();
      expect(first.status, firstBody).toBe(201);
      const again = await postPayment(t, body, { key });
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      // (Stored as jsonb: the same document, members in the database's order.)
      expect(await again.json()).toEqual(JSON.parse(firstBody));
      const other = await postPayment(t, { ...body, description: 'another order' }, { key });
      expect(other.status).toBe(422);
      expect(await paymentsOf(body.merchant_order_id)).toHaveLength(1);
    });

    it('a 4xx is stored and replayed, and creates nothing', async () => {
      const body = { ...paymentBody(t, customerId), account_id: randomUUID() };
      const key = randomUUID();
      const first = await postPayment(t, body, { key });
      expect(first.status).toBe(403);
      const again = await postPayment(t, body, { key });
      expect(again.status).toBe(403);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await paymentsOf(body.merchant_order_id)).toHaveLength(0);
    });

    it('crash after the payment was bound and its provider call started: a retry gets 409 while the attempt is in flight, then the settled payment', async () => {
      const body = paymentBody(t, customerId);
      const key = randomUUID();
      const first = await postPayment(t, body, { key });
      const created = await first.text();
      expect(first.status, created).toBe(201);
      const paymentId = (JSON.parse(created) as { id: string }).id;
      // What a SIGKILL during the provider call leaves: the record bound without a reply, the attempt in flight.
      await t.db.query(
        `UPDATE idempotency_keys SET state = 'PENDING', status_code = NULL, response_body = NULL, response_headers = '{}'
          WHERE organization_id = $1 AND idempotency_key = $2`,
        [t.sandbox.organization_id, key],
      );
      const [attempt] = await t.db.query<{ id: string; status: string }>(
        "UPDATE payment_transactions SET status = 'PENDING' WHERE payment_id = $1 RETURNING id, (SELECT 'SUCCEEDED') AS status",
        [paymentId],
      );
      const inFlight = await postPayment(t, body, { key });
      expect(inFlight.status).toBe(409);
      expect(((await inFlight.json()) as { code: string }).code).toBe('REQUEST_IN_PROCESS');
      // Reconciliation settles the attempt as the provider answered it:
      await t.db.query('UPDATE payment_transactions SET status = $2 WHERE id = $1', [attempt!.id, attempt!.status]);
      const recovered = await postPayment(t, body, { key });
      expect(recovered.status).toBe(201);
      expect(recovered.headers.get('idempotent-replayed')).toBe('true');
      expect(await recovered.json()).toEqual(JSON.parse(created));
      expect(await paymentsOf(body.merchant_order_id)).toEqual([paymentId]);
    });
  });
}
