/**
 * The vault announces enrollments to the merchant: enrollment.enrolled and enrollment.declined webhook
 * events, recorded in the enrollment's own transaction and delivered by the webhook worker to a real
 * receiver on loopback, for card enrollments and for a non-card enrollment the customer approves.
 */
import type { Schemas } from '@payorch/types';
import { describe, expect, it } from 'vitest';
import { expectSchema } from './support/assertions.js';
import { backends, useServer } from './support/harness.js';
import { startReceiver } from './support/receiver.js';
import { cardBody, createCustomer, enrollOk, VISA_INSUFFICIENT_FUNDS } from './support/vault-fixtures.js';

for (const backend of backends()) {
  describe(`enrollment webhook events on ${backend}`, () => {
    const t = useServer(backend);

    it('enrolled, declined by verify, and approved on the sandbox page each send one event', async () => {
      const receiver = await startReceiver<{ type_event: string; data: { customer_id: string; payment_method: Schemas['EnrolledPaymentMethod'] } }>();
      const received = receiver.received;
      try {
        const url = receiver.url;
        const endpoint = await t.fetch('/webhook-endpoints', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ url, events: ['enrollment.enrolled', 'enrollment.declined'] }),
        });
        expect(endpoint.status, await endpoint.clone().text()).toBe(201);

        const customerId = await createCustomer(t);
        const enrolled = await enrollOk(t, customerId, cardBody(t.sandbox.account_id));
        const declined = await enrollOk(t, customerId, cardBody(t.sandbox.account_id, { number: VISA_INSUFFICIENT_FUNDS }, { verify: { vault_on_success: true } }));
        expect(declined.status).toBe('DECLINED');
        const ach = await enrollOk(t, customerId, { account_id: t.sandbox.account_id, country: 'US', type: 'ACH_ENROLLMENT', callback_url: 'https://merchant.example/back' });
        expect(ach.status).toBe('READY_TO_ENROLL');
        const approve = await fetch(ach.redirect_url!, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'decision=approve' });
        expect(approve.status).toBe(303);

        await receiver.waitFor(3);
        const byToken = new Map(received.map((e) => [e.data.payment_method.vaulted_token, e]));
        expect(byToken.get(enrolled.vaulted_token!)?.type_event).toBe('enrollment.enrolled');
        expect(byToken.get(declined.vaulted_token!)?.type_event).toBe('enrollment.declined');
        expect(byToken.get(ach.vaulted_token!)?.type_event).toBe('enrollment.enrolled');
        expect(byToken.get(ach.vaulted_token!)?.data.payment_method.status).toBe('ENROLLED');
        expect(received).toHaveLength(3);
        for (const e of received) {
          expect(e.data.customer_id).toBe(customerId);
          expectSchema('EnrolledPaymentMethod', e.data.payment_method);
        }
        // Never a card number in an event.
        expect(JSON.stringify(received)).not.toContain('4507990000000002');
      } finally {
        receiver.close();
      }
    });
  });
}
