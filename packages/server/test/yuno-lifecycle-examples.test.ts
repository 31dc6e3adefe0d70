/**
 * Yuno's published request examples for capture, cancel, refund and cancel-or-refund, sent as published
 * (only the path ids are ours): each is accepted (all of them since issue 24), or refused for the reason
 * given in the table. The files
 * are read at test time from ../shared/yuno-openapi/ beside the repository (present on CI); they are
 * Yuno's, not ours, so they are not copied into the repository.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Schemas } from '@payorch/types';
import { describe, expect, it } from 'vitest';
import { expectSchema } from './support/assertions.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { authorizedPayment, cardTransactionId, createPayment, postLifecycle } from './support/payments.js';
import { YUNO_DIR, yunoFilesPresent } from './support/yuno-examples.js';

const present = yunoFilesPresent();

type Operation = 'capture' | 'cancel' | 'refund' | 'cancel-or-refund';

interface PublishedExample {
  file: string;
  operation: Operation;
  name: string;
  value: Record<string, unknown>;
}

/** Every request example of one of Yuno's files, with the operation its path names. */
function examplesOf(file: string): PublishedExample[] {
  const path = join(YUNO_DIR, file);
  const doc = JSON.parse(readFileSync(path, 'utf8')) as {
    paths: Record<string, Record<string, { requestBody?: { content: { 'application/json': { examples?: Record<string, { value: Record<string, unknown> }> } } } }>>;
  };
  return Object.entries(doc.paths).flatMap(([route, item]) => {
    const operation = route.split('/').at(-1) as Operation;
    return Object.entries(item.post?.requestBody?.content['application/json'].examples ?? {}).map(([name, ex]) => ({ file, operation, name, value: ex.value }));
  });
}

/** The state an example needs: a payment in the example's currency, large enough for its amount. */
interface Setup {
  /** capture and cancel act on an authorization; refunds on a captured payment. */
  state: 'authorized' | 'captured';
  currency: string;
  value: number;
}

/** What each published example gets, and why when it is refused. */
const EXPECTED: Record<string, { setup: Setup; status: number; code?: string; why?: string; then?: Partial<Schemas['Payment']> }> = {
  'capture-authorization.json/Full Capture': { setup: { state: 'authorized', currency: 'USD', value: 30000 }, status: 200, then: { status: 'SUCCEEDED', sub_status: 'CAPTURED' } },
  'capture-authorization.json/Partial Capture': { setup: { state: 'authorized', currency: 'USD', value: 30000 }, status: 200, then: { status: 'SUCCEEDED', sub_status: 'PARTIALLY_CAPTURED' } },
  // Its amount is the string "2000" (Yuno's schema says number; a string of digits is taken as the number),
  // and its additional_data (the itinerary) completes the payment's.
  'capture-authorization.json/Card Direct (with Airline Data)': {
    setup: { state: 'authorized', currency: 'USD', value: 30000 },
    status: 200,
    then: { status: 'SUCCEEDED', sub_status: 'PARTIALLY_CAPTURED', amount: expect.objectContaining({ captured: 2000 }) as never },
  },
  'cancel-payment.json/Request Example': { setup: { state: 'authorized', currency: 'USD', value: 30000 }, status: 200, then: { status: 'CANCELED', sub_status: 'CANCELED' } },
  'refund-payment.json/Full Refund': { setup: { state: 'captured', currency: 'USD', value: 30000 }, status: 200, then: { status: 'REFUNDED', sub_status: 'REFUNDED' } },
  'refund-payment.json/Partial Refund': { setup: { state: 'captured', currency: 'USD', value: 30000 }, status: 200, then: { status: 'SUCCEEDED', sub_status: 'PARTIALLY_REFUNDED' } },
  'cancel-or-refund-a-payment.json/Full Refund': { setup: { state: 'captured', currency: 'USD', value: 30000 }, status: 201, then: { status: 'REFUNDED', sub_status: 'REFUNDED' } },
  'cancel-or-refund-a-payment.json/Partial Refund': { setup: { state: 'captured', currency: 'COP', value: 50000 }, status: 201, then: { status: 'SUCCEEDED', sub_status: 'PARTIALLY_REFUNDED' } },
  'cancel-or-refund-a-payment.json/Cancel': { setup: { state: 'authorized', currency: 'USD', value: 30000 }, status: 201, then: { status: 'CANCELED', sub_status: 'CANCELED' } },
};

const FILES = ['capture-authorization.json', 'cancel-payment.json', 'refund-payment.json', 'cancel-or-refund-a-payment.json'];
const published = present ? FILES.flatMap(examplesOf) : [];

async function prepare(t: TestServer, setup: Setup): Promise<{ paymentId: string; transactionId: string }> {
  const overrides = { amount: { currency: setup.currency, value: setup.value } };
  const payment = setup.state === 'authorized' ? await authorizedPayment(t, overrides) : await createPayment(t, overrides);
  return { paymentId: payment.id, transactionId: await cardTransactionId(t, payment.id) };
}

describe.skipIf(!present)("Yuno's published lifecycle examples", () => {
  it('every published example has an expectation here, and every expectation an example', () => {
    expect(published.map((e) => `${e.file}/${e.name}`).sort()).toEqual(Object.keys(EXPECTED).sort());
  });
});

for (const backend of backends()) {
  describe.skipIf(!present)(`Yuno's published lifecycle examples on ${backend}`, () => {
    const t = useServer(backend);

    it.each(published.map((e) => ({ ...e, label: `${e.file} "${e.name}"` })))('$label', async (example) => {
      const expected = EXPECTED[`${example.file}/${example.name}`]!;
      const { paymentId, transactionId } = await prepare(t, expected.setup);
      const res = await postLifecycle(t, paymentId, example.operation, example.value, { transactionId });
      const text = await res.text();
      expect(res.status, `${expected.why ?? 'accepted as published'}: ${text}`).toBe(expected.status);
      const body = JSON.parse(text) as Record<string, unknown>;
      if (expected.code) {
        expect(body.code).toBe(expected.code);
        return;
      }
      expectSchema('Payment', body);
      expect(body).toMatchObject(expected.then!);
      // What Yuno sent is what was recorded on the new transaction.
      const made = (body as Schemas['Payment']).transactions.at(-1)!;
      if (typeof example.value.merchant_reference === 'string') expect(made.merchant_reference).toBe(example.value.merchant_reference);
      if (typeof example.value.reason === 'string') expect(made.reason).toBe(example.value.reason);
      if (example.value.additional_data) expect((body as Schemas['Payment']).additional_data).toMatchObject(example.value.additional_data);
    });
  });
}
