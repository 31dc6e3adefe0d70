/**
 * Two requests with one X-Idempotency-Key at once, on the operations that claim their key on bind
 * (capture, cancel, refund, cancel-or-refund; docs/design.md §4 "Claim on bind"): both look the key up and
 * find nothing; the first reserves its follow-up, binds the key and changes the payment; the second then
 * runs its checks against the changed payment and is refused (409 INVALID_STATUS, 422 INVALID_AMOUNT)
 * without binding anything. That refusal is not the second request's answer — the key's is: the first's
 * reply replayed, 409 REQUEST_IN_PROCESS while it runs, 422 IDEMPOTENCY_KEY_REUSED for another body. A
 * wrapper of the test database holds the second request just after its lookup of the key, so the race
 * happens on every run and on both backends (on PostgreSQL it also happens unaided under load).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { Database, Queryable } from '../src/db/database.js';
import { expectProblem } from './support/assertions.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { authorizedPayment, cardTransactionId, createPayment, postLifecycle } from './support/payments.js';

/** A promise with its resolve, to hold a request at a point of the test's choosing. */
function gate<T = void>() {
  let open!: (v: T) => void;
  const opened = new Promise<T>((r) => (open = r));
  return { open, opened };
}

/** One request's lookup of `key` to hold once it has read the key (unused): `reached` tells, `until` releases. */
type Hold = { key: string; reached: () => void; until: Promise<void> } | null;

const FIND_LIVE = /^SELECT fingerprint, operation_id, state/;

function holding(state: { hold: Hold }) {
  const wrap = (q: Queryable): Queryable => ({
    async query<R>(text: string, params?: readonly unknown[]) {
      const hold = state.hold;
      if (!hold || !FIND_LIVE.test(text) || params?.[1] !== hold.key) return q.query<R>(text, params);
      state.hold = null; // one request only: the one started first
      const rows = await q.query<R>(text, params);
      hold.reached();
      await hold.until;
      return rows;
    },
    exec: (sql) => q.exec(sql),
    transaction: (fn) => q.transaction((tx) => fn(wrap(tx))),
  });
  return (db: Database): Database => ({ ...wrap(db), kind: db.kind, ...(db.counters ? { counters: db.counters } : {}), ping: () => db.ping(), close: () => db.close() });
}

type Operation = 'capture' | 'cancel' | 'refund' | 'cancel-or-refund';
interface Case {
  operation: Operation;
  /** A payment the operation applies to, and the transaction it names. */
  setup: (t: TestServer) => Promise<{ paymentId: string; transactionId: string }>;
  status: number;
  /** Another body for the same path: another request. */
  other: Record<string, unknown>;
}

const authorized = async (t: TestServer) => {
  const payment = await authorizedPayment(t);
  return { paymentId: payment.id, transactionId: await cardTransactionId(t, payment.id) };
};
const purchased = async (t: TestServer) => {
  const payment = await createPayment(t);
  return { paymentId: payment.id, transactionId: await cardTransactionId(t, payment.id) };
};
const CASES: Case[] = [
  { operation: 'capture', setup: authorized, status: 200, other: { description: 'another capture' } },
  { operation: 'cancel', setup: authorized, status: 200, other: { description: 'another cancellation' } },
  { operation: 'refund', setup: purchased, status: 200, other: { description: 'another refund' } },
  { operation: 'cancel-or-refund', setup: authorized, status: 201, other: { description: 'another void' } },
  { operation: 'cancel-or-refund', setup: purchased, status: 201, other: { description: 'another refund' } },
];

for (const backend of backends()) {
  describe(`same-key lifecycle requests at once answer the key, never their own refusal, on ${backend}`, () => {
    const state: { hold: Hold } = { hold: null };
    const t = useServer(backend, { wrapDatabase: holding(state) });
    afterEach(() => {
      state.hold = null;
    });

    /** Starts `request` and waits until it has looked the key up and found it unused; `release` lets it go on. */
    async function heldAfterLookup(key: string, request: () => Promise<Response>) {
      const reached = gate();
      const release = gate();
      state.hold = { key, reached: reached.open, until: release.opened };
      const response = request();
      await reached.opened;
      return async () => {
        release.open();
        return response;
      };
    }

    for (const c of CASES) {
      const name = `${c.operation} (${c.setup === authorized ? 'authorized' : 'purchased'} payment)`;

      it(`${name}: the same request, checked after the first changed the payment, answers the first's reply replayed`, async () => {
        const { paymentId, transactionId } = await c.setup(t);
        const key = randomUUID();
        const send = (body: unknown = {}) => postLifecycle(t, paymentId, c.operation, body, { transactionId, key });
        const second = await heldAfterLookup(key, () => send());
        const first = await send();
        const firstBody = await first.text();
        expect(first.status, firstBody).toBe(c.status);
        const late = await second();
        const lateBody = await late.text();
        expect(late.status, lateBody).toBe(c.status);
        expect(late.headers.get('idempotent-replayed')).toBe('true');
        expect(JSON.parse(lateBody)).toEqual(JSON.parse(firstBody));
        // The key still holds the first's reply.
        const again = await send();
        expect(again.status).toBe(c.status);
        expect(await again.json()).toEqual(JSON.parse(firstBody));
      });

      it(`${name}: another body with the key is 422 IDEMPOTENCY_KEY_REUSED, not the refusal its checks gave`, async () => {
        const { paymentId, transactionId } = await c.setup(t);
        const key = randomUUID();
        const second = await heldAfterLookup(key, () => postLifecycle(t, paymentId, c.operation, c.other, { transactionId, key }));
        const first = await postLifecycle(t, paymentId, c.operation, {}, { transactionId, key });
        expect(first.status, await first.text()).toBe(c.status);
        await expectProblem(await second(), 422, 'IDEMPOTENCY_KEY_REUSED');
      });

      it(`${name}: while the first is unsettled (its record bound and pending), the same request is 409 REQUEST_IN_PROCESS`, async () => {
        const { paymentId, transactionId } = await c.setup(t);
        const key = randomUUID();
        const send = () => postLifecycle(t, paymentId, c.operation, {}, { transactionId, key });
        const second = await heldAfterLookup(key, send);
        const first = await send();
        expect(first.status, await first.text()).toBe(c.status);
        // What a first request stopped between its provider call and phase C leaves: the record bound
        // without a reply, its follow-up in flight (the payment as the first's phase A left it).
        await t.db.query(
          `UPDATE idempotency_keys SET state = 'PENDING', status_code = NULL, response_body = NULL, response_headers = '{}'
            WHERE organization_id = $1 AND idempotency_key = $2`,
          [t.sandbox.organization_id, key],
        );
        const [record] = await t.db.query<{ resource: string }>('SELECT resource FROM idempotency_keys WHERE organization_id = $1 AND idempotency_key = $2', [
          t.sandbox.organization_id,
          key,
        ]);
        await t.db.query("UPDATE payment_transactions SET status = 'PENDING' WHERE id = $1", [record!.resource.replace(/^transaction:/, '')]);
        await expectProblem(await second(), 409, 'REQUEST_IN_PROCESS');
      });
    }
  });
}
