/**
 * listPayments (issue 15): Yuno's lookup by merchant_order_id, and the organization's payments newest
 * first filtered by status, customer and created range, paged with a cursor; each in the retrieval shape.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { describe, expect, it } from 'vitest';
import { expectProblem, expectSchema } from './support/assertions.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { CARDS, createCustomer, createPayment, getPayment } from './support/payments.js';

const list = async (t: TestServer, query: string) => {
  const res = await t.fetch(`/payments?${query}`);
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const body = JSON.parse(text) as Schemas['PaymentList'];
  expectSchema('PaymentList', body);
  return body;
};

for (const backend of backends()) {
  describe(`listPayments on ${backend}`, () => {
    const t = useServer(backend);

    it('by merchant_order_id: every payment of the order, newest first, each as getPayment answers it', async () => {
      const order = `ORDER-${randomUUID()}`;
      const customerId = await createCustomer(t);
      const declined = await createPayment(t, { merchant_order_id: order, card: CARDS.declined }, customerId);
      const paid = await createPayment(t, { merchant_order_id: order }, customerId);
      await createPayment(t, {}, customerId);
      const found = await list(t, `merchant_order_id=${order}`);
      expect(found.payments.map((p) => p.id)).toEqual([paid.id, declined.id]);
      expect(found.payments[0]).toEqual(await getPayment(t, paid.id));
      expect(found).toMatchObject({ has_more: false, next_cursor: null });
      expect((await list(t, 'merchant_order_id=ORDER-nobody')).payments).toEqual([]);
    });

    it('filters by status, customer and created range; pages with starting_after', async () => {
      const start = new Date().toISOString();
      const customerId = await createCustomer(t);
      const made = [await createPayment(t, {}, customerId), await createPayment(t, { card: CARDS.declined }, customerId), await createPayment(t, {}, customerId)];
      const all = await list(t, `customer_id=${customerId}`);
      expect(all.payments.map((p) => p.id)).toEqual(made.map((p) => p.id).reverse());
      const succeeded = await list(t, `customer_id=${customerId}&status=SUCCEEDED`);
      expect(succeeded.payments.map((p) => p.id)).toEqual([made[2]!.id, made[0]!.id]);
      expect((await list(t, `customer_id=${customerId}&created_lt=${encodeURIComponent(start)}`)).payments).toEqual([]);
      expect((await list(t, `customer_id=${customerId}&created_gte=${encodeURIComponent(start)}`)).payments).toHaveLength(3);

      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Schemas['PaymentList'] = await list(t, `customer_id=${customerId}&limit=2${cursor ? `&starting_after=${cursor}` : ''}`);
        expect(page.payments.length).toBeLessThanOrEqual(2);
        ids.push(...page.payments.map((p) => p.id));
        cursor = page.next_cursor;
        expect(cursor !== null).toBe(page.has_more);
      } while (cursor);
      expect(ids).toEqual(all.payments.map((p) => p.id));
    });

    it('400 for a bad status, limit, created bound or a cursor that is not one of its payments', async () => {
      for (const q of ['status=PAID', 'limit=0', 'limit=101', 'created_lt=tomorrow', `starting_after=${randomUUID()}`, 'merchant_order_id=']) {
        await expectProblem(await t.fetch(`/payments?${q}`), 400, 'INVALID_REQUEST');
      }
    });
  });
}
