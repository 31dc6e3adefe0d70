/**
 * One enrolled payment method: read it, unenroll it (Yuno's paths). Unenrolling destroys the sealed card
 * number, announces enrollment.unenrolled, and a payment with the token afterwards is refused; deleting
 * the customer announces each method it unenrolls.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { describe, expect, it } from 'vitest';
import { expectProblem, expectSchema } from './support/assertions.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { createCustomer, enrollCard, paymentBody, postPayment } from './support/payments.js';
import { startReceiver } from './support/receiver.js';
import { enrollOk } from './support/vault-fixtures.js';

type Event = { type_event: string; data: { customer_id: string; payment_method: Schemas['EnrolledPaymentMethod'] } };

const unenroll = (t: TestServer, customerId: string, token: string, key = randomUUID()) =>
  t.fetch(`/customers/${customerId}/payment-methods/${token}/unenroll`, { method: 'POST', headers: { 'x-idempotency-key': key } });

async function sealed(t: TestServer, token: string) {
  const [row] = await t.db.query<{ status: string; sealed: boolean; fingerprint: string | null }>(
    `SELECT status, fingerprint, (pan_ciphertext IS NOT NULL OR pan_iv IS NOT NULL OR pan_tag IS NOT NULL OR pan_key_id IS NOT NULL
       OR details_ciphertext IS NOT NULL OR details_key_id IS NOT NULL) AS sealed
       FROM payment_methods WHERE vaulted_token = $1`,
    [token],
  );
  return row!;
}

for (const backend of backends()) {
  describe(`payment method management on ${backend}`, () => {
    const t = useServer(backend);

    it('getPaymentMethod: 200 the method as listed, never a card number; 404 for another customer or an unknown token', async () => {
      const customerId = await createCustomer(t);
      const token = await enrollCard(t, customerId);
      const { data, response } = await t.client.GET('/customers/{customer_id}/payment-methods/{payment_method_id}', {
        params: { path: { customer_id: customerId, payment_method_id: token } },
      });
      expect(response.status).toBe(200);
      expectSchema('EnrolledPaymentMethod', data);
      const listed = (await (await t.fetch(`/customers/${customerId}/payment-methods`)).json()) as Schemas['PaymentMethodList'];
      expect(data).toEqual(listed.payment_methods[0]);
      expect(JSON.stringify(data)).not.toContain('4507990000000002');

      const other = await createCustomer(t);
      await expectProblem(await t.fetch(`/customers/${other}/payment-methods/${token}`), 404, 'PAYMENT_METHOD_NOT_FOUND');
      await expectProblem(await t.fetch(`/customers/${customerId}/payment-methods/${randomUUID()}`), 404, 'PAYMENT_METHOD_NOT_FOUND');
      await expectProblem(await t.fetch(`/customers/${randomUUID()}/payment-methods/${token}`), 404, 'CUSTOMER_NOT_FOUND');
    });

    it('unenroll: UNENROLLED, sealed card data destroyed, one enrollment.unenrolled event, payments with the token refused; again: unchanged', async () => {
      const receiver = await startReceiver<Event>();
      try {
        const endpoint = await t.fetch('/webhook-endpoints', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ url: receiver.url, events: ['enrollment.unenrolled'] }),
        });
        expect(endpoint.status, await endpoint.clone().text()).toBe(201);
        const customerId = await createCustomer(t);
        const token = await enrollCard(t, customerId);
        const kept = await enrollCard(t, customerId, '5252440000000002');
        expect(await sealed(t, token)).toMatchObject({ status: 'ENROLLED', sealed: true });

        const res = await unenroll(t, customerId, token);
        expect(res.status, await res.clone().text()).toBe(200);
        const method = (await res.json()) as Schemas['EnrolledPaymentMethod'];
        expectSchema('EnrolledPaymentMethod', method);
        expect(method).toMatchObject({ vaulted_token: token, status: 'UNENROLLED' });
        // Shredded: no card data but the name (brand and last 4).
        expect(method.card_data).toBeNull();
        expect(method.name).toMatch(/\*{4}\d{4}$/);
        expect(await sealed(t, token)).toEqual({ status: 'UNENROLLED', sealed: false, fingerprint: null });
        // The other card of the customer is untouched.
        expect(await sealed(t, kept)).toMatchObject({ status: 'ENROLLED', sealed: true });

        const refused = await postPayment(t, paymentBody(t, customerId, { payment_method: { type: 'CARD', vaulted_token: token } }));
        await expectProblem(refused, 404, 'PAYMENT_METHOD_NOT_FOUND');

        const again = await unenroll(t, customerId, token);
        expect(again.status).toBe(200);
        expect(await again.json()).toEqual(method);
        expect(((await (await t.fetch(`/customers/${customerId}/payment-methods/${token}`)).json()) as Schemas['EnrolledPaymentMethod']).status).toBe('UNENROLLED');

        await receiver.waitFor(1);
        await new Promise((r) => setTimeout(r, 300));
        expect(receiver.received).toHaveLength(1);
        const [event] = receiver.received;
        expect(event!.type_event).toBe('enrollment.unenrolled');
        expectSchema('EventEnrollmentUnenrolled', event);
        expect(event!.data).toEqual({ customer_id: customerId, payment_method: method });
      } finally {
        receiver.close();
      }
    });

    it('unenroll: the same key replays the answer; 404 for an unknown token or customer; without a key it is done once all the same (idempotent by nature)', async () => {
      const customerId = await createCustomer(t);
      const token = await enrollCard(t, customerId);
      const key = randomUUID();
      const first = await unenroll(t, customerId, token, key);
      expect(first.status).toBe(200);
      const replay = await unenroll(t, customerId, token, key);
      expect(replay.status).toBe(200);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      await expectProblem(await unenroll(t, customerId, randomUUID()), 404, 'PAYMENT_METHOD_NOT_FOUND');
      await expectProblem(await unenroll(t, randomUUID(), token), 404, 'CUSTOMER_NOT_FOUND');
      const keyless = await t.fetch(`/customers/${customerId}/payment-methods/${token}/unenroll`, { method: 'POST' });
      expect(keyless.status).toBe(200);
      expect(((await keyless.json()) as Schemas['EnrolledPaymentMethod']).status).toBe('UNENROLLED');
    });

    it('READY_TO_ENROLL expires 24 hours after created_at: shown EXPIRED, the provider page can no longer complete it', async () => {
      const customerId = await createCustomer(t);
      const fresh = await enrollOk(t, customerId, { account_id: t.sandbox.account_id, country: 'US', type: 'ACH_ENROLLMENT', callback_url: 'https://merchant.example/back' });
      const stale = await enrollOk(t, customerId, { account_id: t.sandbox.account_id, country: 'US', type: 'ACH_ENROLLMENT', callback_url: 'https://merchant.example/back' });
      expect([fresh.status, stale.status]).toEqual(['READY_TO_ENROLL', 'READY_TO_ENROLL']);
      await t.db.query("UPDATE payment_methods SET created_at = clock_timestamp() - interval '24 hours 1 minute' WHERE vaulted_token = $1", [stale.vaulted_token]);

      const read = async (token: string) => ((await (await t.fetch(`/customers/${customerId}/payment-methods/${token}`)).json()) as Schemas['EnrolledPaymentMethod']).status;
      expect(await read(stale.vaulted_token!)).toBe('EXPIRED');
      expect(await read(fresh.vaulted_token!)).toBe('READY_TO_ENROLL');
      const page = await fetch(stale.redirect_url!);
      expect(await page.text()).toContain('already EXPIRED');
      const approve = await fetch(stale.redirect_url!, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'decision=approve' });
      expect(approve.status).not.toBe(303);
      expect(await read(stale.vaulted_token!)).toBe('EXPIRED');
      // The fresh one still completes.
      const ok = await fetch(fresh.redirect_url!, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'decision=approve' });
      expect(ok.status).toBe(303);
      expect(await read(fresh.vaulted_token!)).toBe('ENROLLED');
    });

    it('deleting the customer announces enrollment.unenrolled for each method it unenrolls', async () => {
      const receiver = await startReceiver<Event>();
      try {
        const endpoint = await t.fetch('/webhook-endpoints', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ url: receiver.url, events: ['enrollment.unenrolled'] }),
        });
        expect(endpoint.status).toBe(201);
        const customerId = await createCustomer(t);
        const tokens = [await enrollCard(t, customerId), await enrollCard(t, customerId, '5252440000000002')];
        expect((await unenroll(t, customerId, tokens[0]!)).status).toBe(200);
        expect((await t.fetch(`/customers/${customerId}`, { method: 'DELETE' })).status).toBe(202);
        await receiver.waitFor(2);
        await new Promise((r) => setTimeout(r, 300));
        // One event per method: the first at its unenrollment, the second at the deletion.
        expect(receiver.received.map((e) => e.data.payment_method.vaulted_token).sort()).toEqual([...tokens].sort());
        for (const token of tokens) expect(await sealed(t, token)).toEqual({ status: 'UNENROLLED', sealed: false, fingerprint: null });
      } finally {
        receiver.close();
      }
    });
  });
}
