/**
 * Issue 14 §1b, "done when": every request example Yuno publishes for POST
 * /v1/customers/{customer_id}/payment-methods (card and bank enrollment, token migration), sent as
 * published (the merchant's account substituted) to a real server on each backend. Valid under Yuno's own
 * schema: enrolled (201), or refused because the card itself has expired (422 INVALID_CARD). Invalid under
 * Yuno's schema: never a 5xx.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectProblem, expectSchema } from './support/assertions.js';
import { backends, useServer } from './support/harness.js';
import { createCustomer } from './support/payments.js';
import { expired, yunoExamples, yunoFilesPresent, type YunoExample } from './support/yuno-examples.js';

type Json = Record<string, unknown>;
const present = yunoFilesPresent();
const examples: YunoExample[] = present ? yunoExamples('enroll-payment-method-api.json', '/customers/{customer_id}/payment-methods') : [];
const valid = examples.filter((e) => e.schemaErrors.length === 0);
const invalid = examples.filter((e) => e.schemaErrors.length > 0);

describe.skipIf(!present)('Yuno enrollment examples (../shared/yuno-openapi/enroll-payment-method-api.json)', () => {
  it('the reference file has card and bank examples valid under Yuno’s own schema', () => {
    expect(valid.map((e) => e.value.type)).toEqual(expect.arrayContaining(['CARD', 'ACH_ENROLLMENT']));
  });

  for (const backend of backends()) {
    describe(`on ${backend}`, () => {
      const t = useServer(backend);
      const enroll = async (e: YunoExample) => {
        const customerId = await createCustomer(t);
        return t.fetch(`/customers/${customerId}/payment-methods`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() },
          body: JSON.stringify({ ...e.value, account_id: t.sandbox.account_id }),
        });
      };

      it.each(valid.map((e) => [e.name, e] as const))('valid under Yuno’s schema: %s → enrolled as published', async (_name, e) => {
        const res = await enroll(e);
        const card = e.value.card_data as Json | undefined;
        if (card && expired(card)) {
          await expectProblem(res, 422, 'INVALID_CARD');
          return;
        }
        const text = await res.text();
        expect(res.status, text).toBe(201);
        const method = JSON.parse(text) as { type: string; status: string };
        expectSchema('EnrolledPaymentMethod', method);
        expect(method.type).toBe(e.value.type);
        expect(['ENROLLED', 'READY_TO_ENROLL']).toContain(method.status);
      });

      it.each(invalid.map((e) => [e.name, e] as const))('invalid under Yuno’s own schema: %s → a 201 or a problem, never a 5xx', async (_name, e) => {
        const res = await enroll(e);
        expect(res.status).toBeLessThan(500);
        if (res.status !== 201) expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        await res.body?.cancel();
      });
    });
  }
});
