/**
 * What a merchant does with a customer after creating it (issue 15): read it by id or by its
 * merchant_customer_id, change it (partial, `null` clears, If-Match), and delete it — the customer and
 * its payment methods are gone, their sealed card data destroyed, the payments keep their history.
 * Through the typed client where it can express the request, raw HTTP for bad input.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { describe, expect, it, vi } from 'vitest';
import { customersRepository } from '../src/customers/repository.js';
import { expectProblem, expectSchema } from './support/assertions.js';
import { fullCustomer } from './support/customers.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { createPayment, enrollCard, getPayment, paymentBody, postPayment } from './support/payments.js';

const json = { 'content-type': 'application/json' };

const full = fullCustomer;

async function created(t: TestServer, merchantCustomerId = `cus-${randomUUID()}`): Promise<Schemas['Customer']> {
  const { data, response } = await t.client.POST('/customers', { body: full(merchantCustomerId) });
  expect(response.status).toBe(201);
  return data!;
}

const patch = (t: TestServer, id: string, body: unknown, headers: Record<string, string> = {}) =>
  t.fetch(`/customers/${id}`, { method: 'PATCH', headers: { ...json, ...headers }, body: JSON.stringify(body) });

/** Bad PATCH bodies: what to send, and the field the 400 must name. */
const badPatches: { name: string; body: unknown; field: string }[] = [
  { name: 'empty body', body: {}, field: '/body' },
  { name: 'merchant_customer_id null (it cannot be cleared)', body: { merchant_customer_id: null }, field: '/body/merchant_customer_id' },
  { name: 'merchant_customer_id too short', body: { merchant_customer_id: 'ab' }, field: '/body/merchant_customer_id' },
  { name: 'first_name too short', body: { first_name: 'Al' }, field: '/body/first_name' },
  { name: 'email not an email', body: { email: 'not-an-email' }, field: '/body/email' },
  { name: 'country not ISO 3166-1', body: { country: 'XX' }, field: '/body/country' },
  { name: 'date_of_birth not a date', body: { date_of_birth: '28/02/1990' }, field: '/body/date_of_birth' },
  { name: 'unknown field', body: { emial: 'a@b.co' }, field: '/body/emial' },
  { name: 'unknown field in document', body: { document: { document_type: 'CPF', number: '1' } }, field: '/body/document' },
  { name: 'metadata over 50 entries', body: { metadata: Array.from({ length: 51 }, (_, i) => ({ key: `k${i}`, value: 'v' })) }, field: '/body/metadata' },
];

for (const backend of backends()) {
  describe(`customer management on ${backend}`, () => {
    const t = useServer(backend);

    describe('getCustomer and getCustomerByMerchantCustomerId', () => {
      it('200 by id and by merchant_customer_id, the same customer with the same strong ETag; 304 on If-None-Match', async () => {
        const c = await created(t);
        const byId = await t.client.GET('/customers/{customer_id}', { params: { path: { customer_id: c.id } } });
        expect(byId.response.status).toBe(200);
        expectSchema('Customer', byId.data);
        expect(byId.data).toEqual(c);
        const etag = byId.response.headers.get('etag');
        expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);

        const byMerchantId = await t.client.GET('/customers', { params: { query: { merchant_customer_id: c.merchant_customer_id } } });
        expect(byMerchantId.response.status).toBe(200);
        expect(byMerchantId.data).toEqual(c);
        expect(byMerchantId.response.headers.get('etag')).toBe(etag);

        const cached = await t.fetch(`/customers/${c.id}`, { headers: { 'if-none-match': etag! } });
        expect(cached.status).toBe(304);
        expect(cached.headers.get('etag')).toBe(etag);
      });

      it('404 CUSTOMER_NOT_FOUND for an unknown id or merchant_customer_id; 400 without merchant_customer_id', async () => {
        await expectProblem(await t.fetch(`/customers/${randomUUID()}`), 404, 'CUSTOMER_NOT_FOUND');
        await expectProblem(await t.fetch('/customers?merchant_customer_id=cus-nobody'), 404, 'CUSTOMER_NOT_FOUND');
        const missing = await expectProblem(await t.fetch('/customers'), 400, 'INVALID_REQUEST');
        expect((missing.errors as { path: string }[]).map((e) => e.path)).toContain('/query/merchant_customer_id');
      });

      it('405 names both methods of /customers', async () => {
        const res = await t.fetch('/customers', { method: 'PUT' });
        await expectProblem(res, 405, 'UNSUPPORTED_METHOD');
        expect(res.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'POST']);
      });
    });

    describe('updateCustomer', () => {
      it('200: changes only the fields given, null clears, metadata null empties, updated_at and the ETag move', async () => {
        const c = await created(t);
        const before = (await t.client.GET('/customers/{customer_id}', { params: { path: { customer_id: c.id } } })).response.headers.get('etag');
        const { data, response } = await t.client.PATCH('/customers/{customer_id}', {
          params: { path: { customer_id: c.id } },
          body: { email: 'maria.souza@example.com', shipping_address: null, phone: null, metadata: null, first_name: 'Mariana' },
        });
        expect(response.status).toBe(200);
        expectSchema('Customer', data);
        expect(data).toEqual({
          ...c,
          email: 'maria.souza@example.com',
          first_name: 'Mariana',
          shipping_address: null,
          phone: null,
          metadata: [],
          updated_at: data!.updated_at,
        });
        expect(Date.parse(data!.updated_at)).toBeGreaterThan(Date.parse(c.updated_at));
        expect(data!.created_at).toBe(c.created_at);
        const etag = response.headers.get('etag');
        expect(etag).not.toBe(before);
        const again = await t.client.GET('/customers/{customer_id}', { params: { path: { customer_id: c.id } } });
        expect(again.data).toEqual(data);
        expect(again.response.headers.get('etag')).toBe(etag);
      });

      it('200: a new merchant_customer_id is found under it, the old one no more', async () => {
        const c = await created(t);
        const renamed = `cus-${randomUUID()}`;
        const res = await patch(t, c.id, { merchant_customer_id: renamed });
        expect(res.status).toBe(200);
        expect((await t.fetch(`/customers?merchant_customer_id=${renamed}`)).status).toBe(200);
        await expectProblem(await t.fetch(`/customers?merchant_customer_id=${c.merchant_customer_id}`), 404, 'CUSTOMER_NOT_FOUND');
        // Its own id again is no conflict.
        expect((await patch(t, c.id, { merchant_customer_id: renamed })).status).toBe(200);
      });

      it.each(badPatches)('400 names the field and changes nothing: $name', async ({ body, field }) => {
        const c = await created(t);
        const problem = await expectProblem(await patch(t, c.id, body), 400, 'INVALID_REQUEST');
        const paths = (problem.errors as { path: string }[]).map((e) => e.path);
        expect(paths.some((p) => p === field || p.startsWith(`${field}/`) || field.startsWith(`${p}/`)), JSON.stringify(paths)).toBe(true);
        const after = await t.client.GET('/customers/{customer_id}', { params: { path: { customer_id: c.id } } });
        expect(after.data).toEqual(c);
      });

      it('409 CUSTOMER_ID_DUPLICATED with existing_customer_id when another customer has the merchant_customer_id', async () => {
        const a = await created(t);
        const b = await created(t);
        const problem = await expectProblem(await patch(t, b.id, { merchant_customer_id: a.merchant_customer_id, email: 'x@example.com' }), 409, 'CUSTOMER_ID_DUPLICATED');
        expect(problem.existing_customer_id).toBe(a.id);
        const after = await t.client.GET('/customers/{customer_id}', { params: { path: { customer_id: b.id } } });
        expect(after.data).toEqual(b);
      });

      /**
       * The customer holding the id is deleted between the conflict and its lookup (the spy deletes it, in the
       * caller's transaction or on the pool, just before the lookup that follows the conflict): the id is free,
       * so the write goes through instead of a 409 whose existing_customer_id names nobody ("", not a uuid).
       */
      async function holderDeletedAfterConflict(skipFirst: boolean, write: (holder: Schemas['Customer']) => Promise<Response>): Promise<Response> {
        const holder = await created(t);
        const find = customersRepository.findIdByMerchantCustomerId;
        let calls = 0;
        const spy = vi.spyOn(customersRepository, 'findIdByMerchantCustomerId').mockImplementation(async (db, organizationId, merchantCustomerId) => {
          if (merchantCustomerId !== holder.merchant_customer_id) return find.call(customersRepository, db, organizationId, merchantCustomerId);
          calls++;
          // (An update looks first before it writes: that look misses the holder, as if it were created after it.)
          if (skipFirst && calls === 1) return undefined;
          await customersRepository.markDeleted(db, organizationId, holder.id);
          return find.call(customersRepository, db, organizationId, merchantCustomerId);
        });
        try {
          return await write(holder);
        } finally {
          spy.mockRestore();
        }
      }

      it('a customer created with the merchant_customer_id of one deleted between the conflict and its lookup: 201, not a 409 naming nobody', async () => {
        const res = await holderDeletedAfterConflict(false, (holder) =>
          t.fetch('/customers', { method: 'POST', headers: json, body: JSON.stringify(full(holder.merchant_customer_id)) }),
        );
        const text = await res.text();
        expect(res.status, text).toBe(201);
      });

      it('a customer renamed to the merchant_customer_id of one deleted between the conflict and its lookup: 200, not a 409 naming nobody', async () => {
        const b = await created(t);
        let wanted = '';
        const res = await holderDeletedAfterConflict(true, (holder) => patch(t, b.id, { merchant_customer_id: (wanted = holder.merchant_customer_id) }));
        const text = await res.text();
        expect(res.status, text).toBe(200);
        expect((JSON.parse(text) as Schemas['Customer']).merchant_customer_id).toBe(wanted);
      });

      it('409 under concurrency: two customers renamed to one merchant_customer_id at once, one wins', async () => {
        const [a, b] = [await created(t), await created(t)];
        const target = `cus-${randomUUID()}`;
        const results = await Promise.all([a, b].map((c) => patch(t, c.id, { merchant_customer_id: target })));
        expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
        const rows = await t.db.query('SELECT id FROM customers WHERE merchant_customer_id = $1', [target]);
        expect(rows).toHaveLength(1);
      });

      it('If-Match: the current ETag or * changes it; a stale one is 412 PRECONDITION_FAILED and changes nothing', async () => {
        const c = await created(t);
        const etag = (await t.fetch(`/customers/${c.id}`)).headers.get('etag')!;
        const first = await patch(t, c.id, { last_name: 'Souza' }, { 'if-match': etag });
        expect(first.status).toBe(200);
        const fresh = first.headers.get('etag')!;
        const stale = await expectProblem(await patch(t, c.id, { last_name: 'Santos' }, { 'if-match': etag }), 412, 'PRECONDITION_FAILED');
        expect(stale.detail).toMatch(/If-Match/);
        expect(((await (await t.fetch(`/customers/${c.id}`)).json()) as Schemas['Customer']).last_name).toBe('Souza');
        // A weak tag never matches If-Match; a list does when one of its tags is current.
        await expectProblem(await patch(t, c.id, { last_name: 'Santos' }, { 'if-match': `W/${fresh}` }), 412, 'PRECONDITION_FAILED');
        expect((await patch(t, c.id, { last_name: 'Santos' }, { 'if-match': `${etag}, ${fresh}` })).status).toBe(200);
        expect((await patch(t, c.id, { last_name: 'Costa' }, { 'if-match': '*' })).status).toBe(200);
      });

      it('If-Match under concurrency: five edits from one read, exactly one is applied', async () => {
        const c = await created(t);
        const etag = (await t.fetch(`/customers/${c.id}`)).headers.get('etag')!;
        const names = ['Alves', 'Barros', 'Cunha', 'Dias', 'Freitas'];
        const results = await Promise.all(names.map((n) => patch(t, c.id, { last_name: n }, { 'if-match': etag })));
        const statuses = results.map((r) => r.status);
        expect(statuses.filter((s) => s === 200)).toHaveLength(1);
        expect(statuses.filter((s) => s === 412)).toHaveLength(4);
        const winner = names[statuses.indexOf(200)];
        expect(((await (await t.fetch(`/customers/${c.id}`)).json()) as Schemas['Customer']).last_name).toBe(winner);
      });

      it('404 CUSTOMER_NOT_FOUND for an unknown customer', async () => {
        await expectProblem(await patch(t, randomUUID(), { email: 'a@example.com' }), 404, 'CUSTOMER_NOT_FOUND');
      });
    });

    describe('deleteCustomer', () => {
      it('202 with no body; the customer and its payment methods are gone; its merchant_customer_id is free again', async () => {
        const c = await created(t);
        const token = await enrollCard(t, c.id);
        const res = await t.fetch(`/customers/${c.id}`, { method: 'DELETE' });
        expect(res.status).toBe(202);
        expect(await res.text()).toBe('');

        await expectProblem(await t.fetch(`/customers/${c.id}`), 404, 'CUSTOMER_NOT_FOUND');
        await expectProblem(await t.fetch(`/customers?merchant_customer_id=${c.merchant_customer_id}`), 404, 'CUSTOMER_NOT_FOUND');
        await expectProblem(await patch(t, c.id, { email: 'a@example.com' }), 404, 'CUSTOMER_NOT_FOUND');
        await expectProblem(await t.fetch(`/customers/${c.id}/payment-methods`), 404, 'CUSTOMER_NOT_FOUND');
        await expectProblem(await t.fetch(`/customers/${c.id}`, { method: 'DELETE' }), 404, 'CUSTOMER_NOT_FOUND');
        // A payment for the deleted customer with its card is refused, and makes nothing.
        const refused = await postPayment(t, paymentBody(t, c.id, { payment_method: { type: 'CARD', vaulted_token: token } }));
        await expectProblem(refused, 404, 'CUSTOMER_NOT_FOUND');

        const again = await t.client.POST('/customers', { body: { merchant_customer_id: c.merchant_customer_id } });
        expect(again.response.status).toBe(201);
        expect(again.data!.id).not.toBe(c.id);
      });

      it('destroys the sealed card data and fingerprints of every method and clears personal data; payments keep their history without holder name or fingerprint', async () => {
        const c = await created(t);
        const tokens = [await enrollCard(t, c.id), await enrollCard(t, c.id, '5252440000000002')];
        const paid = await createPayment(t, { payment_method: { type: 'CARD', vaulted_token: tokens[0]! } }, c.id);
        const before = await getPayment(t, paid.id);

        expect((await t.fetch(`/customers/${c.id}`, { method: 'DELETE' })).status).toBe(202);

        const methods = await t.db.query<Record<string, unknown>>(
          `SELECT status, pan_ciphertext, pan_iv, pan_tag, pan_key_id, details_ciphertext, details_iv, details_tag, details_key_id, fingerprint
             FROM payment_methods WHERE customer_id = $1`,
          [c.id],
        );
        expect(methods).toHaveLength(2);
        for (const m of methods) {
          expect(m).toEqual({
            status: 'UNENROLLED', pan_ciphertext: null, pan_iv: null, pan_tag: null, pan_key_id: null,
            details_ciphertext: null, details_iv: null, details_tag: null, details_key_id: null, fingerprint: null,
          });
        }
        // Nothing the vault could open is left: no sealed value of the organization names these methods.
        const sealed = await t.db.query('SELECT 1 FROM payment_methods WHERE customer_id = $1 AND (pan_ciphertext IS NOT NULL OR details_ciphertext IS NOT NULL)', [c.id]);
        expect(sealed).toHaveLength(0);

        const [row] = await t.db.query<Record<string, unknown>>(
          'SELECT first_name, last_name, email, document, phone, billing_address, shipping_address, date_of_birth, deleted_at FROM customers WHERE id = $1',
          [c.id],
        );
        expect(row).toMatchObject({ first_name: null, last_name: null, email: null, document: null, phone: null, billing_address: null, shipping_address: null, date_of_birth: null });
        expect(row!.deleted_at).not.toBeNull();

        // The payment made before keeps its history and payer snapshot; its card copy loses the holder name and
        // fingerprint (brand, IIN, last 4 and expiry stay, for accounting).
        const after = await getPayment(t, paid.id);
        const card = (p: typeof before) => p.payment_method.payment_method_detail!.card!.card_data!;
        expect(card(before).holder_name).not.toBeNull();
        expect(card(before).fingerprint).not.toBeNull();
        // Every card_data copy in it (the payment's method and each transaction's) loses exactly those two fields.
        const redacted = JSON.parse(JSON.stringify(before), (key: string, value: unknown) =>
          key === 'card_data' && value !== null && typeof value === 'object' ? { ...value, holder_name: null, fingerprint: null } : value,
        ) as typeof before;
        expect(after).toEqual(redacted);
        expect(before.customer_payer.first_name).toBe('Maria');
      });

      it('404 for an unknown customer', async () => {
        await expectProblem(await t.fetch(`/customers/${randomUUID()}`, { method: 'DELETE' }), 404, 'CUSTOMER_NOT_FOUND');
      });
    });
  });
}
