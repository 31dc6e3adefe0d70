/**
 * The idempotency mechanism (docs/design.md §4) on its own, against each real database: replay, reuse with
 * another request, business 4xx stored with its writes rolled back, a throw storing nothing, and
 * concurrent same-key requests producing exactly one effect.
 */
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Queryable } from '../src/db/database.js';
import { canonicalJson, fingerprintOf, runIdempotent } from '../src/idempotency/idempotency.js';
import { problem } from '../src/http/problems.js';
import { backends, startTestServer, type TestServer } from './support/harness.js';

const mac = (data: string) => createHmac('sha256', 'test-key').update(data).digest('hex');

describe('canonical fingerprint', () => {
  it('ignores key order, not values, path or method', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe('{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}');
    const base = fingerprintOf('POST', '/customers/a/payment-methods', { x: 1, y: 2 }, mac);
    expect(fingerprintOf('POST', '/customers/a/payment-methods', { y: 2, x: 1 }, mac)).toBe(base);
    expect(fingerprintOf('POST', '/customers/a/payment-methods', { x: 1, y: 3 }, mac)).not.toBe(base);
    expect(fingerprintOf('POST', '/customers/b/payment-methods', { x: 1, y: 2 }, mac)).not.toBe(base);
    expect(fingerprintOf('PATCH', '/customers/a/payment-methods', { x: 1, y: 2 }, mac)).not.toBe(base);
    // Keyed: without the key the stored value says nothing about the body (it may hold a PAN).
    const other = (data: string) => createHmac('sha256', 'another-key').update(data).digest('hex');
    expect(fingerprintOf('POST', '/customers/a/payment-methods', { x: 1, y: 2 }, other)).not.toBe(base);
  });

  it('is the keyed hash of "METHOD path\\n" + canonical JSON, so records stored by earlier versions still match', () => {
    const bodies = [{ evidence: [{ content: 'JVBERi0=', file_name: 'a "b".pdf' }], n: 1.5, u: undefined, z: [null, true, 'é'] }, 'text', 3, null, []];
    for (const body of bodies) {
      const plain = createHash('sha256').update(`POST /payments/p/transactions/t/dispute\n${canonicalJson(body)}`).digest('hex');
      expect(fingerprintOf('post', '/payments/p/transactions/t/dispute', body, mac)).toBe(mac(plain));
    }
    expect(canonicalJson([undefined, { a: undefined, b: [] }])).toBe('[null,{"b":[]}]');
  });

  it('writes strings exactly as JSON.stringify does (long ones without copying): quotes, controls, surrogate pairs and lone halves', () => {
    const units = [0x00, 0x1f, 0x20, 0x22, 0x41, 0x5c, 0x7f, 0xd7ff, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xe000, 0xffff];
    for (const a of units) for (const b of units) for (const c of units) {
      const s = String.fromCharCode(a, b, c);
      expect(canonicalJson(s)).toBe(JSON.stringify(s));
    }
  });
});

for (const backend of backends()) {
  describe(`runIdempotent on ${backend}`, () => {
    let t: TestServer & { stop(): Promise<void> };
    beforeAll(async () => {
      t = await startTestServer(backend);
    });
    afterAll(async () => t?.stop());

    const org = () => t.sandbox.organization_id;
    const countCustomers = async (mcid: string) =>
      (await t.db.query('SELECT 1 FROM customers WHERE merchant_customer_id = $1', [mcid])).length;
    const insertCustomer = (tx: Queryable, mcid: string) =>
      tx.query('INSERT INTO customers (id, organization_id, merchant_customer_id) VALUES ($1, $2, $3)', [randomUUID(), org(), mcid]);
    const request = (key: string, fingerprint = 'fp-1') => ({ organizationId: org(), key, operationId: 'createCustomer', fingerprint });

    it('first call runs and stores; the same request again is replayed without running', async () => {
      let runs = 0;
      const op = async (tx: Queryable) => {
        runs += 1;
        await insertCustomer(tx, 'idem-replay');
        return { status: 201, body: { ok: true, run: runs }, headers: { ETag: '"x"' } };
      };
      const first = await runIdempotent(t.db, request('k-replay'), op);
      const second = await runIdempotent(t.db, request('k-replay'), op);
      expect(first).toEqual({ reply: { status: 201, body: { ok: true, run: 1 }, headers: { ETag: '"x"' } }, replayed: false });
      expect(second).toEqual({ reply: { status: 201, body: { ok: true, run: 1 }, headers: { ETag: '"x"' } }, replayed: true });
      expect(runs).toBe(1);
      expect(await countCustomers('idem-replay')).toBe(1);
    });

    it('the same key with a different request is 422 IDEMPOTENCY_KEY_REUSED and runs nothing', async () => {
      await runIdempotent(t.db, request('k-reuse', 'fp-a'), async () => ({ status: 201, body: {} }));
      let ran = false;
      const out = await runIdempotent(t.db, request('k-reuse', 'fp-b'), async () => {
        ran = true;
        return { status: 201, body: {} };
      });
      expect(out.reply.status).toBe(422);
      expect((out.reply.body as { code: string }).code).toBe('IDEMPOTENCY_KEY_REUSED');
      expect(ran).toBe(false);
    });

    it('keys are scoped to the organization', async () => {
      const other = await t.createOrganization();
      const a = await runIdempotent(t.db, request('k-scope', 'fp-a'), async () => ({ status: 201, body: { who: 'a' } }));
      const b = await runIdempotent(t.db, { ...request('k-scope', 'fp-b'), organizationId: other.organization_id }, async () => ({
        status: 201,
        body: { who: 'b' },
      }));
      expect(a.reply.body).toEqual({ who: 'a' });
      expect(b).toEqual({ reply: { status: 201, body: { who: 'b' } }, replayed: false });
    });

    it('a business 4xx is stored and replayed, and its writes are rolled back', async () => {
      const op = async (tx: Queryable) => {
        await insertCustomer(tx, 'idem-4xx');
        return problem('CUSTOMER_NOT_FOUND', 'nope');
      };
      const first = await runIdempotent(t.db, request('k-4xx'), op);
      const again = await runIdempotent(t.db, request('k-4xx'), op);
      expect(first.reply.status).toBe(404);
      expect(again).toMatchObject({ replayed: true, reply: { status: 404 } });
      expect(await countCustomers('idem-4xx')).toBe(0);
    });

    it('a throw (a fault) stores nothing and writes nothing, so a retry can succeed', async () => {
      await expect(
        runIdempotent(t.db, request('k-throw'), async (tx) => {
          await insertCustomer(tx, 'idem-throw');
          throw new Error('provider exploded');
        }),
      ).rejects.toThrow('provider exploded');
      expect(await countCustomers('idem-throw')).toBe(0);
      const retry = await runIdempotent(t.db, request('k-throw'), async (tx) => {
        await insertCustomer(tx, 'idem-throw');
        return { status: 201, body: { ok: true } };
      });
      expect(retry).toEqual({ reply: { status: 201, body: { ok: true } }, replayed: false });
      expect(await countCustomers('idem-throw')).toBe(1);
    });

    it('20 concurrent same-key requests: exactly one effect, the rest replays or 409 REQUEST_IN_PROCESS', async () => {
      let runs = 0;
      const op = async (tx: Queryable) => {
        runs += 1;
        await insertCustomer(tx, 'idem-race');
        await new Promise((r) => setTimeout(r, 50)); // keep the transaction open while the others arrive
        return { status: 201, body: { ok: true } };
      };
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => runIdempotent(t.db, request('k-race'), op)));
      expect(runs).toBe(1);
      expect(await countCustomers('idem-race')).toBe(1);
      const fresh = outcomes.filter((o) => o.reply.status === 201 && !o.replayed);
      const replays = outcomes.filter((o) => o.reply.status === 201 && o.replayed);
      const inProcess = outcomes.filter((o) => o.reply.status === 409);
      expect(fresh).toHaveLength(1);
      expect(replays.length + inProcess.length).toBe(19);
      for (const o of inProcess) {
        expect((o.reply.body as { code: string }).code).toBe('REQUEST_IN_PROCESS');
        expect(o.reply.headers?.['Retry-After']).toBe('1');
      }
    });
  });
}
