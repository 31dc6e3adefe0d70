/**
 * Issue 14 §1, "done when": every request example Yuno publishes for POST /v1/payments, sent as published
 * (only the merchant's ids substituted for Yuno's placeholders) to a real server on each backend.
 * - Valid under Yuno's own schema, CARD: accepted (201), or refused because the card itself is expired
 *   (422 INVALID_CARD naming only the expiry); the same example with a future expiry is accepted and the
 *   payment records what it sent (payer, merchant_reference, card options, vault_on_success).
 * - Valid under Yuno's schema, another payment method type (PIX, cash, wallets): 400 naming
 *   payment_method.type, nothing stored.
 * - Invalid under Yuno's own schema: never a 5xx; a 201 or a problem+json.
 */
import { describe, expect, it } from 'vitest';
import type { Schemas } from '@payorch/types';
import { expectProblem, expectSchema } from './support/assertions.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { createCustomer, enrollCard, postPayment } from './support/payments.js';
import { expired, isPlaceholder, yunoExamples, yunoFilesPresent, type YunoExample } from './support/yuno-examples.js';

type Json = Record<string, unknown>;
const present = yunoFilesPresent();
const examples: YunoExample[] = present ? yunoExamples('create-payment.json', '/payments') : [];
const method = (e: YunoExample) => (e.value.payment_method ?? {}) as Json;
const cardData = (e: YunoExample) => ((((method(e).detail ?? {}) as Json).card ?? {}) as Json).card_data as Json | undefined;
const valid = examples.filter((e) => e.schemaErrors.length === 0);
const validCard = valid.filter((e) => method(e).type === 'CARD');
const validOther = valid.filter((e) => method(e).type !== 'CARD');
const invalid = examples.filter((e) => e.schemaErrors.length > 0);

/** The example with the merchant's own ids where Yuno wrote placeholders (and nothing else changed). */
async function substituted(t: TestServer, e: YunoExample): Promise<Json> {
  const body = structuredClone(e.value);
  body.account_id = t.sandbox.account_id;
  const payer = body.customer_payer as Json | undefined;
  let customerId: string | undefined;
  if (payer && 'id' in payer) {
    customerId = await createCustomer(t);
    payer.id = customerId;
  }
  const pm = body.payment_method as Json;
  if (isPlaceholder(pm.vaulted_token) && customerId) pm.vaulted_token = await enrollCard(t, customerId);
  return body;
}

const futureYear = (new Date().getUTCFullYear() + 2) % 100;

describe.skipIf(!present)('Yuno payment examples (../shared/yuno-openapi/create-payment.json)', () => {
  it('the reference file has card examples valid under Yuno’s own schema', () => {
    expect(validCard.length).toBeGreaterThanOrEqual(5);
    expect(validOther.length).toBeGreaterThanOrEqual(1);
  });

  for (const backend of backends()) {
    describe(`on ${backend}`, () => {
      const t = useServer(backend);

      it.each(validCard.map((e) => [e.name, e] as const))('CARD, valid under Yuno’s schema: %s', async (_name, e) => {
        const body = await substituted(t, e);
        const res = await postPayment(t, body);
        const card = cardData(e);
        if (card && expired(card)) {
          // Refused for a reason the card itself gives: it has expired (Yuno's examples date from 2024–2025).
          const problem = await expectProblem(res, 422, 'INVALID_CARD');
          const errors = problem.errors as { path: string; message: string }[];
          expect(errors.length).toBeGreaterThan(0);
          for (const err of errors) expect(err.path).toMatch(/^\/body\/payment_method\/detail\/card\/card_data\/expiration_(year|month)$/);
          return;
        }
        const text = await res.text();
        expect(res.status, text).toBe(201);
        expectSchema('CreatedPayment', JSON.parse(text));
      });

      it.each(validCard.filter((e) => cardData(e)).map((e) => [e.name, e] as const))(
        'CARD, valid under Yuno’s schema, expiry moved to the future: %s is accepted and recorded',
        async (_name, e) => {
          const body = await substituted(t, e);
          const card = ((body.payment_method as Json).detail as Json).card as Json;
          (card.card_data as Json).expiration_year = futureYear;
          const res = await postPayment(t, body);
          const text = await res.text();
          expect(res.status, text).toBe(201);
          const p = JSON.parse(text) as Schemas['CreatedPayment'];
          expectSchema('CreatedPayment', p);
          const sent = body.customer_payer as Json;
          // The payer as sent (inline fields), with or without an enrolled customer.
          for (const key of ['first_name', 'last_name', 'email', 'merchant_customer_id', 'ip_address'] as const) {
            if (sent[key] !== undefined) expect(p.customer_payer[key]).toBe(sent[key]);
          }
          expect(p.customer_payer.id).toBe((sent.id as string | undefined) ?? null);
          if (sent.device_fingerprints) expect(p.customer_payer.device_fingerprints).toEqual(sent.device_fingerprints);
          if (body.merchant_reference) expect(p.transactions.merchant_reference).toBe(body.merchant_reference);
          const recorded = p.payment_method.payment_method_detail.card!;
          if (card.installments !== undefined) expect(recorded.installments).toBe(card.installments);
          if (card.capture !== undefined) expect(recorded.capture).toBe(card.capture);
          if ((body.payment_method as Json).vault_on_success === true) {
            expect(p.payment_method.vault_on_success).toBe(true);
            expect(p.payment_method.vaulted_token).toMatch(/^[0-9a-f-]{36}$/);
          }
        },
      );

      it.each(validOther.map((e) => [e.name, e] as const))('another payment method type, valid under Yuno’s schema: %s → 400 naming the type', async (_name, e) => {
        const before = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM payments');
        const res = await postPayment(t, await substituted(t, e));
        const problem = await expectProblem(res, 400, 'INVALID_REQUEST');
        const errors = problem.errors as { path: string; message: string }[];
        expect(errors.some((err) => err.path === '/body/payment_method/type')).toBe(true);
        const after = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM payments');
        expect(after[0]!.n).toBe(before[0]!.n);
      });

      it.each(invalid.map((e) => [e.name, e] as const))('invalid under Yuno’s own schema: %s → a 201 or a problem, never a 5xx', async (_name, e) => {
        const res = await postPayment(t, await substituted(t, e));
        expect(res.status).toBeLessThan(500);
        if (res.status !== 201) expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        await res.body?.cancel();
      });
    });
  }
});
