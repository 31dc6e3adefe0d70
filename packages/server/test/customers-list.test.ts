/**
 * listCustomers (issue 15): GET /v1/customers/list — the organization's live customers newest first, a
 * created range and cursor paging as the other lists. Its own static path because GET /v1/customers is
 * Yuno's retrieve by merchant_customer_id (one customer); the static segment wins over
 * /customers/{customer_id}. Each test works in a fresh organization, so the list is exactly its customers.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { describe, expect, it } from 'vitest';
import { expectProblem, expectSchema } from './support/assertions.js';
import { indexOperations, loadSpec, matchOperation } from '../src/http/spec.js';
import { backends, useServer, type Credentials, type TestServer } from './support/harness.js';

const as = (creds: Credentials) => ({ 'public-api-key': creds.public_api_key, 'private-secret-key': creds.private_secret_key });

const list = async (t: TestServer, creds: Credentials, query = '') => {
  const res = await t.fetch(`/customers/list${query ? `?${query}` : ''}`, { headers: as(creds) });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const body = JSON.parse(text) as Schemas['CustomerList'];
  expectSchema('CustomerList', body);
  return body;
};

const create = async (t: TestServer, creds: Credentials): Promise<Schemas['Customer']> => {
  const { data, response } = await t.clientFor(creds).POST('/customers', { body: { merchant_customer_id: `cus-${randomUUID()}`, first_name: 'Ana' } });
  expect(response.status).toBe(201);
  return data!;
};

/** Every page of the list, `limit` at a time, checking the paging fields on the way. */
const walk = async (t: TestServer, creds: Credentials, limit: number, filter = '') => {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: Schemas['CustomerList'] = await list(t, creds, `limit=${limit}${filter}${cursor ? `&starting_after=${cursor}` : ''}`);
    expect(page.customers.length).toBeLessThanOrEqual(limit);
    expect(page.next_cursor !== null).toBe(page.has_more);
    if (page.has_more) expect(page.next_cursor).toBe(page.customers[page.customers.length - 1]!.id);
    ids.push(...page.customers.map((c) => c.id));
    cursor = page.next_cursor;
    pages++;
  } while (cursor);
  return { ids, pages };
};

describe('routing precedence', () => {
  it('a static segment beats a template whatever the order of the paths in the spec', () => {
    const ops = indexOperations(loadSpec());
    for (const order of [ops, [...ops].reverse()]) {
      const hit = matchOperation(order, 'GET', '/customers/list');
      expect(hit.kind === 'operation' && hit.operation.operationId).toBe('listCustomers');
      expect(matchOperation(order, 'PATCH', '/customers/list')).toEqual({ kind: 'method-not-allowed', allow: ['GET'] });
      const byId = matchOperation(order, 'GET', `/customers/${randomUUID()}`);
      expect(byId.kind === 'operation' && byId.operation.operationId).toBe('getCustomer');
    }
  });
});

for (const backend of backends()) {
  describe(`listCustomers on ${backend}`, () => {
    const t = useServer(backend);

    it('newest first, each as getCustomer answers it; empty for an organization without customers', async () => {
      const org = await t.createOrganization();
      expect(await list(t, org)).toEqual({ customers: [], has_more: false, next_cursor: null });
      const made = [await create(t, org), await create(t, org), await create(t, org)];
      const all = await list(t, org);
      expect(all.customers.map((c) => c.id)).toEqual(made.map((c) => c.id).reverse());
      expect(all).toMatchObject({ has_more: false, next_cursor: null });
      const one = await t.clientFor(org).GET('/customers/{customer_id}', { params: { path: { customer_id: made[0]!.id } } });
      expect(all.customers[2]).toEqual(one.data);
    });

    it('pages across ties in created_at without skipping or repeating a customer', async () => {
      const org = await t.createOrganization();
      const made = await Promise.all(Array.from({ length: 7 }, () => create(t, org)));
      // Five customers share one instant, two another: the cursor has to break ties by id.
      const ids = made.map((c) => c.id);
      await t.db.query(`UPDATE customers SET created_at = '2026-01-02T03:04:05.000001Z' WHERE id = ANY($1)`, [ids.slice(0, 5)]);
      await t.db.query(`UPDATE customers SET created_at = '2026-01-01T00:00:00Z' WHERE id = ANY($1)`, [ids.slice(5)]);
      const expected = [...ids.slice(0, 5).sort().reverse(), ...ids.slice(5).sort().reverse()];
      expect((await list(t, org, 'limit=100')).customers.map((c) => c.id)).toEqual(expected);
      for (const limit of [1, 2, 3, 5, 7]) {
        const { ids: walked, pages } = await walk(t, org, limit);
        expect(walked, `limit=${limit}`).toEqual(expected);
        expect(pages).toBe(Math.ceil(7 / limit));
      }
    });

    it('created_gte includes its instant, created_lt excludes its own; both combine with paging', async () => {
      const org = await t.createOrganization();
      const made = await Promise.all(Array.from({ length: 4 }, () => create(t, org)));
      const at = ['2026-03-01T00:00:00Z', '2026-03-02T00:00:00Z', '2026-03-03T00:00:00Z', '2026-03-04T00:00:00Z'];
      for (const [i, c] of made.entries()) await t.db.query('UPDATE customers SET created_at = $2 WHERE id = $1', [c.id, at[i]]);
      const ids = (q: string) => list(t, org, q).then((r) => r.customers.map((c) => c.id));
      const q = (s: string) => encodeURIComponent(s);
      expect(await ids(`created_gte=${q(at[1]!)}`)).toEqual([made[3]!.id, made[2]!.id, made[1]!.id]);
      expect(await ids(`created_lt=${q(at[1]!)}`)).toEqual([made[0]!.id]);
      expect(await ids(`created_gte=${q(at[1]!)}&created_lt=${q(at[3]!)}`)).toEqual([made[2]!.id, made[1]!.id]);
      expect(await ids(`created_gte=${q('2027-01-01T00:00:00Z')}`)).toEqual([]);
      expect((await walk(t, org, 1, `&created_gte=${q(at[1]!)}&created_lt=${q(at[3]!)}`)).ids).toEqual([made[2]!.id, made[1]!.id]);
    });

    it('never lists a deleted customer, nor another organization\'s (whose ids are no cursor)', async () => {
      const org = await t.createOrganization();
      const other = await t.createOrganization();
      const [kept, gone] = [await create(t, org), await create(t, org)];
      const foreign = await create(t, other);
      expect((await t.fetch(`/customers/${gone.id}`, { method: 'DELETE', headers: as(org) })).status).toBe(202);
      expect((await list(t, org)).customers.map((c) => c.id)).toEqual([kept.id]);
      expect((await list(t, other)).customers.map((c) => c.id)).toEqual([foreign.id]);
      for (const cursor of [foreign.id, randomUUID()]) {
        await expectProblem(await t.fetch(`/customers/list?starting_after=${cursor}`, { headers: as(org) }), 400, 'INVALID_REQUEST');
      }
    });

    it('a walk that deletes each customer as it goes still reaches every one (a deleted cursor continues)', async () => {
      const org = await t.createOrganization();
      const made = [];
      for (let i = 0; i < 5; i++) made.push((await create(t, org)).id);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Schemas['CustomerList'] = await list(t, org, `limit=2${cursor ? `&starting_after=${cursor}` : ''}`);
        for (const c of page.customers) {
          seen.push(c.id);
          expect((await t.fetch(`/customers/${c.id}`, { method: 'DELETE', headers: as(org) })).status).toBe(202);
        }
        cursor = page.next_cursor;
      } while (cursor);
      expect(seen).toEqual([...made].reverse());
      expect(await list(t, org)).toEqual({ customers: [], has_more: false, next_cursor: null });
    });

    it('400 for a limit out of 1–100, a bad created bound or an unknown parameter', async () => {
      const org = await t.createOrganization();
      for (const q of ['limit=0', 'limit=101', 'limit=-1', 'limit=ten', 'created_gte=yesterday', 'created_lt=2026-13-01T00:00:00Z', 'merchant_customer_id=cus-1']) {
        await expectProblem(await t.fetch(`/customers/list?${q}`, { headers: as(org) }), 400, 'INVALID_REQUEST');
      }
      expect((await list(t, org, 'limit=1')).customers).toEqual([]);
      expect((await list(t, org, 'limit=100')).customers).toEqual([]);
    });

    it('the static path wins over /customers/{customer_id}: other methods are 405, ids still reach getCustomer', async () => {
      const c = await create(t, t.sandbox);
      for (const method of ['PATCH', 'DELETE']) {
        const res = await t.fetch('/customers/list', { method, headers: { 'content-type': 'application/json' }, body: method === 'PATCH' ? '{}' : null });
        await expectProblem(res, 405, 'UNSUPPORTED_METHOD');
        expect(res.headers.get('allow')).toBe('GET');
      }
      expect((await t.fetch(`/customers/${c.id}`)).status).toBe(200);
      const byExternalId = await t.fetch(`/customers?merchant_customer_id=${c.merchant_customer_id}`);
      expect(((await byExternalId.json()) as Schemas['Customer']).id).toBe(c.id);
    });
  });
}
