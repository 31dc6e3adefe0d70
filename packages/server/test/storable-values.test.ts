/**
 * Values the schema used to accept but the database refused (issue 12 §3): each answered 500 and logged
 * the SQL with every bound parameter. Now every value a request may carry is either stored exactly (a
 * date-time as its instant, returned in UTC) or refused with 400 INVALID_REQUEST naming the field, and
 * an error is logged as a redacted shape: never SQL, parameters, row values or request bodies.
 * The fuzz suite (test/conformance) generates the same classes of values for every operation.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { createCustomer } from '../src/customers/service.js';
import { toIsoMicros } from '../src/db/database.js';
import { isStorableDate, isStorableDateTime } from '../src/http/formats.js';
import { handlers } from '../src/handlers.js';
import { createLogger, redactMessage } from '../src/platform/logger.js';
import { expectProblem } from './support/assertions.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { rfc3339Date, rfc3339DateTime } from './conformance/support/arbitraries.js';
import { deref, operations, type Schema } from './conformance/support/spec-model.js';

let serial = 0;
const customerId = () => `cus-edge-${process.pid}-${++serial}`;

/** `date` at its edges: a valid calendar date in years 0001–9999 is stored exactly. */
const DATES: { value: string; stored: boolean }[] = [
  { value: '0000-01-01', stored: false },
  { value: '0001-01-01', stored: true },
  { value: '9999-12-31', stored: true },
  { value: '2000-02-29', stored: true },
  { value: '2024-02-29', stored: true },
  { value: '2023-02-29', stored: false },
  { value: '1900-02-29', stored: false },
  { value: '2024-04-31', stored: false },
  { value: '2024-00-10', stored: false },
];

/** `date-time` at its edges: what the database keeps is the instant, returned in UTC with microseconds. */
const DATE_TIMES: { value: string; returned?: string }[] = [
  { value: '2020-01-01T00:00:00+23:59' },
  { value: '2020-01-01T00:00:00-23:59' },
  { value: '2020-01-01T00:00:00+16:00' },
  { value: '2020-01-01T00:00:00+15:59', returned: '2019-12-31T08:01:00.000000Z' },
  { value: '2020-01-01T00:00:00-15:59', returned: '2020-01-01T15:59:00.000000Z' },
  { value: '2020-01-01T05:30:00.123456+05:30', returned: '2020-01-01T00:00:00.123456Z' },
  { value: '2020-01-01T00:00:00.5-00:00', returned: '2020-01-01T00:00:00.500000Z' },
  { value: '2020-01-01t00:00:00z', returned: '2020-01-01T00:00:00.000000Z' },
  { value: '0000-01-01T00:00:00Z' },
  { value: '0001-01-01T00:00:00Z', returned: '0001-01-01T00:00:00.000000Z' },
  { value: '0001-01-01T00:59:59+01:00' },
  { value: '0001-01-01T01:00:00+01:00', returned: '0001-01-01T00:00:00.000000Z' },
  { value: '9999-12-31T23:59:59.999999Z', returned: '9999-12-31T23:59:59.999999Z' },
  { value: '9999-12-31T22:59:59.999999-01:00', returned: '9999-12-31T23:59:59.999999Z' },
  { value: '9999-12-31T23:59:59-00:01' },
  { value: '2016-12-31T23:59:60Z' },
  { value: '2020-01-01T00:00:00.1234567Z' },
  { value: '2020-01-01T00:00:00+0530' },
  { value: '2020-01-01T00:00:00+05' },
  { value: '2020-01-01 00:00:00Z' },
];

const post = (t: TestServer, body: unknown) =>
  t.fetch('/customers', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function expectRefused(res: Response, path: string) {
  const body = await expectProblem(res, 400, 'INVALID_REQUEST');
  expect((body.errors as { path: string }[]).map((e) => e.path)).toContain(path);
}

describe('the spec', () => {
  /** Every `format: date`/`date-time` of every request schema, found by walking the bundled spec. */
  function temporalFields(): { at: string; format: string; maxLength?: number }[] {
    const out: { at: string; format: string; maxLength?: number }[] = [];
    const walk = (node: Schema | undefined, at: string, seen: Set<unknown>) => {
      if (!node || seen.has(node)) return;
      const s = deref(node);
      const next = new Set(seen).add(node);
      if (s.format === 'date' || s.format === 'date-time') out.push({ at, format: s.format as string, maxLength: s.maxLength as number | undefined });
      for (const b of [...((s.oneOf ?? []) as Schema[]), ...((s.anyOf ?? []) as Schema[]), ...((s.allOf ?? []) as Schema[])]) walk(b, at, next);
      for (const [name, member] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) walk(member, `${at}/${name}`, next);
      if (s.items) walk(s.items as Schema, `${at}/0`, next);
    };
    for (const op of operations) {
      if (op.body) walk(op.body.schema, `${op.operationId} /body`, new Set());
      for (const p of op.params) walk(p.schema, `${op.operationId} /${p.in}/${p.name}`, new Set());
    }
    return out;
  }

  it('leaves room in every request date and date-time for the longest value the format admits', () => {
    const fields = temporalFields();
    // The walk finds them (customers, enrollment, payments' additional data, provider notifications).
    expect(fields.length).toBeGreaterThan(10);
    const longest = { date: '9999-12-31'.length, 'date-time': '9999-12-31T23:59:59.999999+15:59'.length };
    const short = fields.filter((f) => (f.maxLength ?? Infinity) < longest[f.format as keyof typeof longest]);
    expect(short, 'a maxLength below the format refuses valid values with a length error').toEqual([]);
  });
});

describe('redactMessage', () => {
  it.each([
    ['date/time field value out of range: "0000-01-01"', 'date/time field value out of range: …'],
    ['invalid input syntax for type integer: "zelda@example.com"', 'invalid input syntax for type integer: …'],
    ['duplicate key value violates unique constraint "customers_organization_id_merchant_customer_id_key"', 'duplicate key value violates unique constraint "…"'],
    ["Cannot read properties of undefined (reading 'document_number')", "Cannot read properties of undefined (reading '…')"],
    ['unexpected timestamp format from the database: 0001-12-31 23:00:00+00 BC', 'unexpected timestamp format from the database: …'],
    ['Connection terminated unexpectedly', 'Connection terminated unexpectedly'],
  ])('%s → %s', (message, redacted) => {
    expect(redactMessage(message)).toBe(redacted);
  });
});

for (const backend of backends()) {
  describe(`storable values on ${backend}`, () => {
    const t = useServer(backend);

    const temporal = [
      ...DATES.map(({ value, stored }) => ({ field: 'date_of_birth', value, returned: stored ? value : undefined })),
      ...DATE_TIMES.map(({ value, returned }) => ({ field: 'merchant_customer_created_at', value, returned })),
    ];
    it.each(temporal)('$field $value: stored (a date-time as its instant in UTC) or 400 naming the field', async ({ field, value, returned }) => {
      const id = customerId();
      const res = await post(t, { merchant_customer_id: id, [field]: value });
      if (returned) {
        expect(res.status, await res.clone().text()).toBe(201);
        expect(((await res.json()) as Record<string, unknown>)[field]).toBe(returned);
      } else {
        await expectRefused(res, `/body/${field}`);
        expect(await t.db.query('SELECT id FROM customers WHERE merchant_customer_id = $1', [id])).toEqual([]);
      }
    });

    it('every date and date-time the formats admit, PostgreSQL stores and the service reads back (300 generated each)', async () => {
      const dates = fc.sample(rfc3339Date.filter(isStorableDate), { seed: 12, numRuns: 300 });
      const dateTimes = fc.sample(rfc3339DateTime.filter(isStorableDateTime), { seed: 12, numRuns: 300 });
      for (const d of dates) {
        const [row] = await t.db.query<{ d: string }>('SELECT $1::date::text AS d', [d]);
        expect(row!.d, d).toBe(d);
      }
      for (const v of dateTimes) {
        const [row] = await t.db.query<{ t: string }>("SELECT $1::timestamptz::text AS t", [v]);
        // Same instant (to the millisecond JavaScript sees), in the form the mappers read (no BC, 4-digit year).
        expect(new Date(toIsoMicros(row!.t)).getTime(), `${v} came back as ${row!.t}`).toBe(new Date(v.toUpperCase()).getTime());
      }
    });

    const unstorable: { name: string; body: (id: string) => unknown; path: string }[] = [
      { name: 'a lone high surrogate inside billing_address.city', body: (id) => ({ merchant_customer_id: id, billing_address: { city: 'S\ud800o' } }), path: '/body/billing_address/city' },
      { name: 'a lone low surrogate in first_name', body: (id) => ({ merchant_customer_id: id, first_name: 'Mar\udc00ia' }), path: '/body/first_name' },
      { name: 'a high surrogate at the end of last_name', body: (id) => ({ merchant_customer_id: id, last_name: 'Silva\ud83d' }), path: '/body/last_name' },
      { name: 'a reversed pair in a metadata value', body: (id) => ({ merchant_customer_id: id, metadata: [{ key: 'k', value: '\ude00\ud83d' }] }), path: '/body/metadata/0/value' },
      { name: 'a lone surrogate in a member name', body: (id) => ({ merchant_customer_id: id, ['x\udbff']: 1 }), path: '/body/x\udbff' },
      { name: 'NUL in merchant_customer_id', body: (id) => ({ merchant_customer_id: `${id}\u0000` }), path: '/body/merchant_customer_id' },
    ];

    it.each(unstorable)('$name → 400 naming the field, nothing written', async ({ body, path }) => {
      const id = customerId();
      await expectRefused(await post(t, body(id)), path);
      expect(await t.db.query('SELECT id FROM customers WHERE merchant_customer_id LIKE $1', [`${id}%`])).toEqual([]);
    });

    it('astral characters (surrogate pairs) are stored and returned exactly', async () => {
      const res = await post(t, { merchant_customer_id: customerId(), first_name: 'Ma😀ria 𝔘', billing_address: { city: 'São Paulo 🏙' } });
      expect(res.status).toBe(201);
      const customer = (await res.json()) as { first_name: string; billing_address: { city: string } };
      expect(customer.first_name).toBe('Ma😀ria 𝔘');
      expect(customer.billing_address.city).toBe('São Paulo 🏙');
    });

    it.each([
      { name: 'NUL in a path id', path: `/customers/${'%00'.repeat(12)}${'a'.repeat(24)}/payment-methods`, field: '/params/customer_id' },
      { name: 'a path id that is not UTF-8 (an encoded surrogate)', path: `/customers/%ED%A0%80${'a'.repeat(36)}/payment-methods`, field: '/params/customer_id' },
      { name: 'NUL in a payment id', path: `/payments/${'a'.repeat(35)}%00`, field: '/params/payment_id' },
      { name: 'NUL in a query parameter', path: '/webhook-endpoints?starting_after=%00abc', field: '/query/starting_after' },
    ])('$name → 400 naming it', async ({ path, field }) => {
      await expectRefused(await t.fetch(path), field);
    });

    it('no request of this file made the server log an error', () => {
      const errors = t.logs.filter((l) => (JSON.parse(l) as { level: number }).level >= 50);
      expect(errors).toEqual([]);
    });
  });

  describe(`error logs on ${backend} carry no SQL, parameters or customer data`, () => {
    const t = useServer(backend);
    const pii = {
      first_name: 'Zelda-Privatename',
      last_name: 'Quux-Privatesurname',
      email: 'zelda.private@example.com',
      document: { document_type: 'CPF', document_number: '98765432100' },
    };
    const secrets = [pii.first_name, pii.last_name, pii.email, pii.document.document_number, 'zelda.private'];
    const sqlWords = /\b(SELECT|INSERT|UPDATE|DELETE)\b|\$\d/;

    const lines: string[] = [];
    let server: Server;
    let url: string;
    beforeAll(async () => {
      const sink = new Writable({
        write(chunk: Buffer, _enc, cb) {
          lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
          cb();
        },
      });
      // The real app on the test server's database, with a createCustomer that stores the customer and
      // then fails in the database with the customer's data as parameters: a unique violation (its
      // detail holds the row's values) or a cast error (its message quotes the value).
      const app = createApp({
        ...t.running.deps,
        log: createLogger('info', sink),
        handlers: {
          ...handlers,
          async createCustomer(request, ctx) {
            const { body } = request;
            await createCustomer(ctx.db, ctx.merchant.organizationId, body);
            if (body.merchant_customer_id.endsWith('-dup')) {
              await ctx.db.query('INSERT INTO customers (id, organization_id, merchant_customer_id, first_name, email) VALUES ($1, $2, $3, $4, $5)', [
                randomUUID(), ctx.merchant.organizationId, body.merchant_customer_id, body.first_name, body.email,
              ]);
            }
            await ctx.db.query('SELECT $1::int AS n, $2::text AS name', [body.email, body.last_name]);
            throw new Error('unreachable');
          },
        },
      });
      server = createServer(app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    });
    afterAll(async () => {
      server?.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve));
    });

    it.each(['-cast', '-dup'])('a database error (%s) is a 500 logged as class, code, redacted message, request id and route', async (suffix) => {
      const res = await fetch(`${url}/customers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'public-api-key': t.sandbox.public_api_key, 'private-secret-key': t.sandbox.private_secret_key },
        body: JSON.stringify({ merchant_customer_id: `${customerId()}${suffix}`, ...pii }),
      });
      await expectProblem(res, 500, 'INTERNAL_ERROR');
      const requestId = res.headers.get('x-request-id');
      type ErrorLine = { msg: string; requestId?: string; route?: string; operationId?: string; err: Record<string, unknown> };
      const line = lines.map((l) => JSON.parse(l) as ErrorLine).find((l) => l.msg === 'unhandled error' && l.requestId === requestId);
      expect(line, lines.join('\n')).toBeDefined();
      expect(line!.route).toBe('POST /customers');
      expect(line!.operationId).toBe('createCustomer');
      expect(line!.err.code).toBe(suffix === '-dup' ? '23505' : '22P02');
      expect(typeof line!.err.type).toBe('string');
      expect(line!.err.message).toMatch(suffix === '-dup' ? /^duplicate key value violates unique constraint/ : /^invalid input syntax for type integer/);
      // Nothing else an error carries: no SQL, no parameters, no detail with row values.
      expect(Object.keys(line!.err).sort()).toEqual(expect.arrayContaining(['code', 'message', 'type']));
      for (const key of ['query', 'params', 'parameters', 'detail', 'where', 'internalQuery']) expect(line!.err).not.toHaveProperty(key);
    });

    it('no log line carries a value that was sent, or SQL', () => {
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) {
        for (const secret of secrets) expect(line, `log line carries "${secret}"`).not.toContain(secret);
        expect(line).not.toMatch(sqlWords);
      }
    });
  });
}
