/**
 * createCustomer contract tests through the typed client against a real server and database: every
 * status the operation documents, and each bad input of docs/interface-spec.md §4.4 naming its field.
 */
import { createRequire } from 'node:module';
import type { Schemas } from '@payorch/types';
import { describe, expect, it } from 'vitest';
import { expectProblem, expectSchema } from './support/assertions.js';
import { fullCustomer } from './support/customers.js';
import { backends, useServer } from './support/harness.js';

const full = fullCustomer();

interface ObjectSchema {
  properties: Record<string, { 'x-personal-data'?: boolean }>;
  required: string[];
}
const spec = createRequire(import.meta.url)('@payorch/types/openapi.json') as {
  components: {
    schemas: { Customer: ObjectSchema; CreateCustomerRequest: ObjectSchema; UpdateCustomerRequest: ObjectSchema };
    examples: { CreateCustomerRequest: { value: Record<string, unknown> } };
  };
};
const customerSchema = spec.components.schemas.Customer;

describe('createCustomer test data', () => {
  it('`full` sends every field the spec accepts, so the round trip below covers each one', () => {
    expect(Object.keys(full).sort()).toEqual(Object.keys(spec.components.schemas.CreateCustomerRequest.properties).sort());
  });
});

describe('the customer schemas agree', () => {
  // A field added to one of them and not the others is what the "add a field" walkthrough (docs/contributing.md)
  // used to leave to memory: create, update and the customer name the same fields, the request example
  // (the replay's body) sends them all, and each field is personal in all three or in none.
  const { Customer, CreateCustomerRequest, UpdateCustomerRequest } = spec.components.schemas;
  const fields = (s: ObjectSchema) => Object.keys(s.properties).sort();
  const ASSIGNED = ['id', 'created_at', 'updated_at'];

  it('the same fields in CreateCustomerRequest, UpdateCustomerRequest and Customer (but those the service assigns)', () => {
    expect(fields(UpdateCustomerRequest)).toEqual(fields(CreateCustomerRequest));
    expect(fields(Customer)).toEqual([...fields(CreateCustomerRequest), ...ASSIGNED].sort());
  });

  it('the CreateCustomerRequest example sends every field', () => {
    expect(Object.keys(spec.components.examples.CreateCustomerRequest.value).sort()).toEqual(fields(CreateCustomerRequest));
  });

  it('each field has the same x-personal-data decision in all three', () => {
    const decisions = (s: ObjectSchema) => Object.fromEntries(fields(CreateCustomerRequest).map((f) => [f, s.properties[f]?.['x-personal-data']]));
    expect(decisions(UpdateCustomerRequest)).toEqual(decisions(CreateCustomerRequest));
    expect(decisions(Customer)).toEqual(decisions(CreateCustomerRequest));
  });
});

const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** One bad input per row: what to send, the field the 400 must name and, where given, what it says (field-messages.ts). */
const badInputs: { name: string; body: unknown; field: string; message?: RegExp }[] = [
  { name: 'missing merchant_customer_id', body: { email: 'a@b.co' }, field: '/body/merchant_customer_id' },
  { name: 'merchant_customer_id too short', body: { merchant_customer_id: 'ab' }, field: '/body/merchant_customer_id', message: /^must be 3 to 255 characters long — / },
  { name: 'merchant_customer_id too long', body: { merchant_customer_id: 'x'.repeat(256) }, field: '/body/merchant_customer_id' },
  { name: 'merchant_customer_id not a string', body: { merchant_customer_id: 12345 }, field: '/body/merchant_customer_id' },
  { name: 'first_name too short', body: { merchant_customer_id: 'cus-1', first_name: 'Al' }, field: '/body/first_name' },
  { name: 'last_name too long', body: { merchant_customer_id: 'cus-1', last_name: 'y'.repeat(256) }, field: '/body/last_name' },
  { name: 'date_of_birth not YYYY-MM-DD', body: { merchant_customer_id: 'cus-1', date_of_birth: '28/02/1990' }, field: '/body/date_of_birth', message: /^must be a date as YYYY-MM-DD/ },
  { name: 'email not an email', body: { merchant_customer_id: 'cus-1', email: 'not-an-email' }, field: '/body/email', message: /^must be an email address/ },
  { name: 'nationality not ISO 3166-1', body: { merchant_customer_id: 'cus-1', nationality: 'XX' }, field: '/body/nationality' },
  { name: 'country lowercase', body: { merchant_customer_id: 'cus-1', country: 'br' }, field: '/body/country' },
  { name: 'merchant_customer_created_at not a date-time', body: { merchant_customer_id: 'cus-1', merchant_customer_created_at: 'yesterday' }, field: '/body/merchant_customer_created_at' },
  { name: 'unknown field', body: { merchant_customer_id: 'cus-1', emial: 'a@b.co' }, field: '/body/emial' },
  { name: 'unknown field in document', body: { merchant_customer_id: 'cus-1', document: { document_type: 'CPF', number: '1' } }, field: '/body/document/number' },
  { name: 'phone with letters', body: { merchant_customer_id: 'cus-1', phone: { number: 'abc', country_code: '55' } }, field: '/body/phone/number', message: /^must be 4 to 20 digits$/ },
  {
    name: 'metadata over 50 entries',
    body: { merchant_customer_id: 'cus-1', metadata: Array.from({ length: 51 }, (_, i) => ({ key: `k${i}`, value: 'v' })) },
    field: '/body/metadata',
  },
  // Lengths count code points, not UTF-16 units (tools/patches keeps this in ajv's faster length check).
  { name: 'first_name of 2 emoji (4 UTF-16 units) is too short', body: { merchant_customer_id: 'cus-1', first_name: '😀😀' }, field: '/body/first_name' },
  { name: 'last_name of 256 emoji is too long', body: { merchant_customer_id: 'cus-1', last_name: '😀'.repeat(256) }, field: '/body/last_name' },
  { name: 'metadata entry without value', body: { merchant_customer_id: 'cus-1', metadata: [{ key: 'a' }] }, field: '/body/metadata/0/value' },
];

for (const backend of backends()) {
  describe(`createCustomer on ${backend}`, () => {
    const t = useServer(backend);

    it('201: names at their length limits in code points, astral characters counted once', async () => {
      const body = { merchant_customer_id: `cus-emoji-${Date.now()}`, first_name: '😀é😀', last_name: '😀'.repeat(255) };
      const { data, response } = await t.client.POST('/customers', { body });
      expect(response.status).toBe(201);
      expect(data).toMatchObject({ first_name: body.first_name, last_name: body.last_name });
    });

    it('201: creates a customer with every field, timestamps with microseconds', async () => {
      const { data, error, response } = await t.client.POST('/customers', { body: full });
      expect(error).toBeUndefined();
      expect(response.status).toBe(201);
      expectSchema('Customer', data);
      expect(data).toMatchObject({ ...full, merchant_customer_created_at: '2026-11-01T10:20:30.123456Z' });
      expect(data!.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(data!.created_at).toMatch(ISO_MICROS);
      expect(data!.updated_at).toMatch(ISO_MICROS);
      expect(response.headers.get('x-request-id')).toBeTruthy();
    });

    it('201: only merchant_customer_id; every other field present as null', async () => {
      const { data, response } = await t.client.POST('/customers', { body: { merchant_customer_id: 'cus-minimal' } });
      expect(response.status).toBe(201);
      expect(data).toMatchObject({ first_name: null, email: null, document: null, phone: null, billing_address: null, metadata: [] });
      // Every field the spec's Customer declares, each present (the list follows the spec: a new field needs no edit here).
      expect(Object.keys(data!).sort()).toEqual(Object.keys(customerSchema.properties).sort());
      expect([...customerSchema.required].sort()).toEqual(Object.keys(customerSchema.properties).sort());
    });

    it.each(badInputs)('400 names the field: $name', async ({ body, field, message }) => {
      const res = await t.fetch('/customers', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const problem = await expectProblem(res, 400, 'INVALID_REQUEST');
      const paths = (problem.errors as { path: string }[]).map((e) => e.path);
      expect(paths).toContain(field);
      if (message) expect((problem.errors as { path: string; message: string }[]).find((e) => e.path === field)?.message).toMatch(message);
    });

    it('400: a malformed id in the path says a UUID, not a length', async () => {
      const res = await t.fetch('/customers/abc');
      const problem = await expectProblem(res, 400, 'INVALID_REQUEST');
      expect(problem.errors).toEqual([{ path: '/params/customer_id', message: expect.stringMatching(/^must be a UUID as this API returned it, for example [0-9a-f-]{36}$/) }]);
    });

    it('400: malformed JSON', async () => {
      const res = await t.fetch('/customers', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"merchant_customer_id": ' });
      await expectProblem(res, 400, 'INVALID_REQUEST');
    });

    it('a rejected request changes nothing', async () => {
      const res = await t.fetch('/customers', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ merchant_customer_id: 'cus-never', email: 'bad' }),
      });
      await expectProblem(res, 400, 'INVALID_REQUEST');
      const rows = await t.db.query('SELECT 1 FROM customers WHERE merchant_customer_id = $1', ['cus-never']);
      expect(rows).toHaveLength(0);
    });

    it('401: no credentials, wrong secret, unknown key', async () => {
      const body = JSON.stringify({ merchant_customer_id: 'cus-401' });
      const headers = { 'content-type': 'application/json' };
      await expectProblem(await t.fetch('/customers', { method: 'POST', headers, body, credentials_: false }), 401, 'INVALID_CREDENTIALS');
      await expectProblem(
        await t.fetch('/customers', { method: 'POST', headers: { ...headers, 'private-secret-key': 'sk_wrong' }, body }),
        401,
        'INVALID_CREDENTIALS',
      );
      await expectProblem(
        await t.fetch('/customers', { method: 'POST', headers: { ...headers, 'public-api-key': 'pk_unknown' }, body }),
        401,
        'INVALID_CREDENTIALS',
      );
      const rows = await t.db.query('SELECT 1 FROM customers WHERE merchant_customer_id = $1', ['cus-401']);
      expect(rows).toHaveLength(0);
    });

    it('409: duplicate merchant_customer_id in the organization, with existing_customer_id', async () => {
      const first = await t.client.POST('/customers', { body: { merchant_customer_id: 'cus-dup' } });
      expect(first.response.status).toBe(201);
      const res = await t.fetch('/customers', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ merchant_customer_id: 'cus-dup' }) });
      const problem = await expectProblem(res, 409, 'CUSTOMER_ID_DUPLICATED');
      expect(problem.existing_customer_id).toBe(first.data!.id);
    });

    it('409 under concurrency: 10 simultaneous creates of one merchant_customer_id make one customer', async () => {
      const results = await Promise.all(
        Array.from({ length: 10 }, () => t.client.POST('/customers', { body: { merchant_customer_id: 'cus-race' } })),
      );
      expect(results.filter((r) => r.response.status === 201)).toHaveLength(1);
      expect(results.filter((r) => r.response.status === 409)).toHaveLength(9);
      const rows = await t.db.query('SELECT 1 FROM customers WHERE merchant_customer_id = $1', ['cus-race']);
      expect(rows).toHaveLength(1);
    });

    it('the same merchant_customer_id is free in another organization', async () => {
      const other = await t.createOrganization();
      const mine = await t.client.POST('/customers', { body: { merchant_customer_id: 'cus-shared' } });
      const theirs = await t.clientFor(other).POST('/customers', { body: { merchant_customer_id: 'cus-shared' } });
      expect(mine.response.status).toBe(201);
      expect(theirs.response.status).toBe(201);
      expect(theirs.data!.id).not.toBe(mine.data!.id);
    });

    it('413: body over the 100 KB limit', async () => {
      const res = await t.fetch('/customers', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ merchant_customer_id: 'cus-big', first_name: 'x'.repeat(200_000) }),
      });
      await expectProblem(res, 413, 'PAYLOAD_TOO_LARGE');
    });

    it('415: body not JSON', async () => {
      const res = await t.fetch('/customers', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'merchant_customer_id=cus-1' });
      await expectProblem(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('405 with Allow on a known path; 404 on an unknown one', async () => {
      const res = await t.fetch('/customers', { method: 'DELETE' });
      await expectProblem(res, 405, 'UNSUPPORTED_METHOD');
      expect(res.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'POST']);
      await expectProblem(await t.fetch('/nowhere'), 404, 'NOT_FOUND');
    });
  });
}
