/**
 * The vault announces enrollments to the merchant: enrollment.enrolled and enrollment.declined webhook
 * events, recorded in the enrollment's own transaction and delivered by the webhook worker to a real
 * receiver on loopback, for card enrollments and for a non-card enrollment the customer approves.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Schemas } from '@payorch/types';
import { describe, expect, it } from 'vitest';
import { expectSchema } from './support/assertions.js';
import { backends, useServer } from './support/harness.js';
import { cardBody, createCustomer, enrollOk, VISA_INSUFFICIENT_FUNDS } from './support/vault-fixtures.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const backend of backends()) {
  describe(`enrollment webhook events on ${backend}`, () => {
    const t = useServer(backend);

    it('enrolled, declined by verify, and approved on the sandbox page each send one event', async () => {
      const received: { type_event: string; data: { customer_id: string; payment_method: Schemas['EnrolledPaymentMethod'] } }[] = [];
      const receiver = createServer((req, res) => {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString('utf8')));
        req.on('end', () => {
          received.push(JSON.parse(body) as (typeof received)[number]);
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
      try {
        const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
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

        const deadline = Date.now() + 15_000;
        while (received.length < 3 && Date.now() < deadline) await sleep(100);
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
