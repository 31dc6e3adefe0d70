/**
 * Issue 24 §5: Yuno's TypeScript client's method list (customers, payment methods, payments), driven as an
 * integrator would drive it, against a real server. Nothing of Yuno's code is here: each call is built from
 * Yuno's published file for that operation (../shared/yuno-openapi/<file>.json, read at run time): its
 * method and path (Yuno's `/v1` base), its first request example, the two key headers, and an
 * `X-Idempotency-Key` on the writes where Yuno's client sends one (issue 24 measured it: every write but
 * unenroll). What the client reads is checked against the published answer: its status class, whether it
 * is an object or a bare array, and the members Yuno's example answer has at its top.
 */
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useServer, type TestServer } from './support/harness.js';
import { authorizedPayment, cardTransactionId, createCustomer, createPayment, enrollCard } from './support/payments.js';
import { YUNO_DIR, yunoFilesPresent } from './support/yuno-examples.js';

type Json = Record<string, unknown>;
const present = yunoFilesPresent();

/** One operation of Yuno's published files: method, path, first request example, first 2xx example answer. */
interface Published {
  method: string;
  path: string;
  request?: Json;
  status: number;
  answer: unknown;
}
function published(file: string): Published {
  const doc = JSON.parse(readFileSync(join(YUNO_DIR, `${file}.json`), 'utf8')) as { paths: Record<string, Record<string, Json>> };
  const [path, item] = Object.entries(doc.paths)[0]!;
  const [method, op] = Object.entries(item).find(([m]) => ['get', 'post', 'patch', 'delete'].includes(m))!;
  const body = (op.requestBody as { content: Record<string, { examples?: Record<string, { value: Json }> }> } | undefined)?.content['application/json']?.examples;
  const responses = op.responses as Record<string, { content?: Record<string, { examples?: Record<string, { value: unknown }> }> }>;
  const [status, ok] = Object.entries(responses).find(([s]) => s.startsWith('2'))!;
  const answer = Object.values(Object.values(ok.content ?? {})[0]?.examples ?? {})[0]?.value;
  return { method: method.toUpperCase(), path, request: body ? Object.values(body)[0]!.value : undefined, status: Number(status), answer };
}

/** What a call needs from the server's state: the ids Yuno's path names, filled in by `prepare`. */
type Ids = Record<string, string>;
interface Method {
  /** Yuno's client method, as the issue names it. */
  name: string;
  file: string;
  prepare: (t: TestServer) => Promise<Ids>;
  /** Yuno's client sends an idempotency key on this call. */
  key: boolean;
  /** The request body: Yuno's example with the merchant's own ids (and a card that has not expired). */
  body?: (example: Json, t: TestServer, ids: Ids) => Json;
  /** Where payorch's answer differs from the one Yuno publishes, and why (docs/guides/yuno-compatibility.md). */
  differs?: { status?: number; kind?: 'object' | 'array'; why: string };
  /** Top-level members of Yuno's answer that payorch's does not have, and why. */
  absent?: { members: string[]; why: string };
}

const METHOD_ID = { members: ['id'], why: "payorch names an enrolled method by its vaulted_token (which Yuno's answer carries too); Yuno's separate id is not in the contract" };

const futureYear = (new Date().getUTCFullYear() + 2) % 100;
const customer = async (t: TestServer) => ({ customer_id: await createCustomer(t) });
const enrolled = async (t: TestServer) => {
  const customer_id = await createCustomer(t);
  return { customer_id, payment_method_id: await enrollCard(t, customer_id) };
};
const authorized = async (t: TestServer) => {
  const p = await authorizedPayment(t, { amount: { currency: 'USD', value: 30000 } });
  return { payment_id: p.id, id: p.id, transaction_id: await cardTransactionId(t, p.id), merchant_order_id: p.merchant_order_id };
};
const captured = async (t: TestServer) => {
  const p = await createPayment(t, { amount: { currency: 'USD', value: 30000 } });
  return { payment_id: p.id, id: p.id, transaction_id: await cardTransactionId(t, p.id), merchant_order_id: p.merchant_order_id };
};

const METHODS: Method[] = [
  { name: 'customers.create', file: 'create-customer', key: false, prepare: async () => ({}), body: (e) => ({ ...e, merchant_customer_id: `cus-${randomUUID()}` }) },
  { name: 'customers.retrieve', file: 'retrieve-customer', key: false, prepare: customer },
  {
    name: 'customers.retrieveByExternalId',
    file: 'retrieve-customer-by-external-id',
    key: false,
    prepare: async (t) => {
      const { customer_id } = await customer(t);
      const res = await t.fetch(`/customers/${customer_id}`);
      return { merchant_customer_id: ((await res.json()) as { merchant_customer_id: string }).merchant_customer_id };
    },
  },
  {
    name: 'customers.update',
    file: 'update-customer',
    key: false,
    prepare: async (t) => {
      const c = await customer(t);
      return { ...c, id: c.customer_id };
    },
  },
  { name: 'customers.delete', file: 'delete-customer', key: false, prepare: customer },
  {
    name: 'paymentMethods.enroll',
    file: 'enroll-payment-method-api',
    key: true,
    prepare: customer,
    body: (e, t) => ({ ...e, account_id: t.sandbox.account_id, card_data: { ...(e.card_data as Json), expiration_year: futureYear } }),
  },
  { name: 'paymentMethods.retrieve', file: 'retrieve-enrolled-payment-method-by-id-api', key: false, prepare: enrolled, absent: METHOD_ID },
  { name: 'paymentMethods.list', file: 'retrieve-enrolled-payment-methods-api', key: false, prepare: enrolled },
  { name: 'paymentMethods.unenroll', file: 'unenroll-payment-method-api', key: false, prepare: enrolled, absent: METHOD_ID },
  {
    name: 'payments.create',
    file: 'create-payment',
    key: true,
    prepare: customer,
    // Yuno's first example pays with its SDK's one-time token; the client's users send a card as in "Card - With card details".
    body: (_e, t, ids) => {
      const card = cardExample();
      return { ...card, account_id: t.sandbox.account_id, customer_payer: { ...(card.customer_payer as Json), id: ids.customer_id } };
    },
  },
  { name: 'payments.retrieve', file: 'retrieve-payment-by-id', key: false, prepare: captured },
  {
    name: 'payments.retrieveByMerchantOrderId',
    file: 'retrieve-payment-by-merchant-order-id',
    key: false,
    prepare: captured,
    differs: {
      kind: 'object',
      why: 'GET /v1/payments?merchant_order_id= answers the paged list of the released 2.2.0 contract; the bare array is a breaking change (design.md "Retrieve by merchant order id")',
    },
  },
  { name: 'payments.capture', file: 'capture-authorization', key: true, prepare: authorized },
  { name: 'payments.cancel', file: 'cancel-payment', key: true, prepare: authorized },
  { name: 'payments.refund', file: 'refund-payment', key: true, prepare: captured },
  { name: 'payments.cancelOrRefund', file: 'cancel-or-refund-a-payment', key: true, prepare: captured },
];

/** Yuno's "Card - With card details" example, its expiry moved forward. */
function cardExample(): Json {
  const doc = JSON.parse(readFileSync(join(YUNO_DIR, 'create-payment.json'), 'utf8')) as {
    paths: { '/payments': { post: { requestBody: { content: { 'application/json': { examples: Record<string, { value: Json }> } } } } } };
  };
  const example = structuredClone(doc.paths['/payments'].post.requestBody.content['application/json'].examples['Card - With card details']!.value);
  const card = (((example.payment_method as Json).detail as Json).card as Json).card_data as Json;
  card.expiration_year = futureYear;
  return example;
}

const kindOf = (v: unknown) => (Array.isArray(v) ? 'array' : 'object');

describe.skipIf(!present)("Yuno's client method list, driven from Yuno's published files", () => {
  const t = useServer('pglite');

  it.each(METHODS.map((m) => [m.name, m] as const))('%s', async (_name, m) => {
    const op = published(m.file);
    const ids = await m.prepare(t);
    // Yuno's path with the ids filled in; a GET's required query parameter from the prepared state.
    let path = op.path.replace(/\{([^}]+)\}/g, (_s, name: string) => encodeURIComponent(ids[name] ?? ids.id ?? ''));
    if (m.file === 'retrieve-customer-by-external-id') path += `?merchant_customer_id=${encodeURIComponent(ids.merchant_customer_id!)}`;
    if (m.file === 'retrieve-payment-by-merchant-order-id') path += `?merchant_order_id=${encodeURIComponent(ids.merchant_order_id!)}`;
    const body = op.request === undefined && !m.body ? undefined : (m.body ?? ((e) => e))(structuredClone(op.request ?? {}), t, ids);
    const headers: Record<string, string> = { ...(body ? { 'content-type': 'application/json' } : {}), ...(m.key ? { 'x-idempotency-key': randomUUID() } : {}) };
    const res = await t.fetch(path, { method: op.method, headers, ...(body ? { body: JSON.stringify(body) } : {}) });
    const text = await res.text();
    const expectedStatus = m.differs?.status ?? op.status;
    expect(Math.floor(res.status / 100), `${m.name} ${op.method} ${path}: ${text.slice(0, 400)}`).toBe(2);
    if (m.file !== 'delete-customer') expect(res.status, text.slice(0, 400)).toBe(expectedStatus);
    if (op.answer === undefined || res.status === 204 || text === '') return;
    const answer = JSON.parse(text) as unknown;
    expect(kindOf(answer), m.differs?.why ?? 'the shape Yuno publishes').toBe(m.differs?.kind ?? kindOf(op.answer));
    if (m.differs?.kind) return;
    // The members Yuno's client reads at the top of the answer (those of Yuno's example that payorch has).
    const top = (v: unknown) => (Array.isArray(v) ? (v[0] as Json | undefined) : (v as Json)) ?? {};
    for (const key of ['id', 'status', 'payment_methods', 'vaulted_token', 'merchant_customer_id']) {
      if (!(key in top(op.answer))) continue;
      if (m.absent?.members.includes(key)) expect(top(answer), m.absent.why).not.toHaveProperty(key);
      else expect(top(answer), `${m.name} answers ${key}`).toHaveProperty(key);
    }
  });

  it('unenroll without a key twice answers the same method; with a key a retry is a replay', async () => {
    const ids = await enrolled(t);
    const path = `/customers/${ids.customer_id}/payment-methods/${ids.payment_method_id}/unenroll`;
    const first = await t.fetch(path, { method: 'POST' });
    expect(first.status, await first.clone().text()).toBe(200);
    const again = await t.fetch(path, { method: 'POST' });
    expect(again.status).toBe(200);
    const [a, b] = (await Promise.all([first.json(), again.json()])) as { status: string; vaulted_token: string }[];
    expect(a!.status).toBe('UNENROLLED');
    expect(b).toEqual(a);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    const key = randomUUID();
    const keyed = await t.fetch(path, { method: 'POST', headers: { 'x-idempotency-key': key } });
    expect(keyed.status).toBe(200);
    const replay = await t.fetch(path, { method: 'POST', headers: { 'x-idempotency-key': key } });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const bad = await t.fetch(path, { method: 'POST', headers: { 'x-idempotency-key': 'é' } });
    expect(bad.status).toBe(400);
    await Promise.all([keyed.body?.cancel(), replay.body?.cancel(), bad.body?.cancel()]);
  });
});
