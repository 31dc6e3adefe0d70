/**
 * The conformance checks themselves fail on deliberately broken input: each crafted exchange below
 * breaks the spec in one way (status, header, media type, body, problem members) and must be
 * rejected; the generator's valid values must pass the spec's schemas and its mutations must not.
 * No server: these are the checks the live suites rely on, tested on their own.
 */
import fc from 'fast-check';
import { findUnstorable } from '../../src/http/storable-strings.js';
import { describe, expect, it } from 'vitest';
import { arbitraryFor, mutations } from './support/arbitraries.js';
import { checkConformance, Recorder, type Exchange } from './support/exchange.js';
import { SECURITY_HEADERS, TRANSPORT_HEADERS } from './support/protocol-headers.js';
import { STRICT } from './config.js';
import { FIXUPS } from './support/requests.js';
import { deref, operation, operations, spec, validatorFor } from './support/spec-model.js';

const example = (name: string) => structuredClone((spec.components.examples as Record<string, { value: unknown }>)[name]!.value);

function exchange(operationId: string, status: number, body: unknown, headers: Record<string, string> = {}, path = '/v1/customers'): Exchange {
  const text = body === undefined ? '' : JSON.stringify(body);
  const contentType: Record<string, string> = body === undefined ? {} : { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json; charset=utf-8' };
  return {
    op: operation(operationId),
    path,
    status,
    headers: new Headers({ 'x-request-id': 'req-0123456789', ...contentType, ...headers }),
    text,
    body: undefined,
    notImplemented: false,
  };
}

const problem = (status: number, code: string, extra: Record<string, unknown> = {}) => ({
  type: `https://docs.payorch.dev/problems/${code.toLowerCase()}`,
  title: code,
  status,
  detail: 'Something is wrong.',
  instance: '/v1/customers',
  code,
  messages: ['Something is wrong.'],
  request_id: 'req-0123456789',
  ...extra,
});

const check = (ex: Exchange) => () => checkConformance(new Recorder(), ex);

describe('response conformance check', () => {
  it('accepts a conformant answer and a conformant problem', () => {
    expect(check(exchange('createCustomer', 201, example('Customer')))).not.toThrow();
    expect(check(exchange('createCustomer', 409, problem(409, 'CUSTOMER_ID_DUPLICATED')))).not.toThrow();
  });

  it('accepts the declared optional headers, HTTP\'s own and the security headers on any response', () => {
    const sent = {
      'ratelimit-limit': '6000',
      'ratelimit-remaining': '5999',
      'ratelimit-reset': '60',
      date: 'Mon, 23 Nov 2026 18:34:57 GMT',
      connection: 'keep-alive',
      'keep-alive': 'timeout=5',
      'content-length': '408',
      ...Object.fromEntries(SECURITY_HEADERS.map((h) => [h, 'x'])),
    };
    expect(check(exchange('createCustomer', 201, example('Customer'), sent))).not.toThrow();
    expect(check(exchange('createCustomer', 400, problem(400, 'INVALID_REQUEST'), sent))).not.toThrow();
    expect(check(exchange('getPayment', 304, undefined, { ...sent, etag: '"abc"' }, '/v1/payments/x'))).not.toThrow();
  });

  it.each([
    ['an undocumented status', exchange('createCustomer', 418, problem(418, 'TEAPOT')), /status 418 is not documented/],
    ['no X-Request-Id', { ...exchange('createCustomer', 201, example('Customer')), headers: new Headers({ 'content-type': 'application/json' }) }, /X-Request-Id/],
    ['a body missing a required field', exchange('createCustomer', 201, { ...(example('Customer') as object), id: undefined }), /Customer: .*id/],
    ['a field of the wrong type', exchange('createCustomer', 201, { ...(example('Customer') as object), metadata: 'gold' }), /Customer: .*metadata/],
    ['an undocumented media type', exchange('createCustomer', 400, problem(400, 'INVALID_REQUEST'), { 'content-type': 'text/html' }), /Content-Type text\/html/],
    ['a problem with another request_id', exchange('createCustomer', 400, problem(400, 'INVALID_REQUEST', { request_id: 'other' })), /request_id/],
    ['a problem with the wrong status member', exchange('createCustomer', 400, problem(401, 'INVALID_REQUEST')), /problem.status/],
    ['a problem that leaks a stack', exchange('createCustomer', 400, problem(400, 'INVALID_REQUEST', { detail: 'at run (/app/src/x.ts:12)' })), /nothing internal/],
    ['a problem that breaks the Problem schema', exchange('createCustomer', 400, { ...problem(400, 'INVALID_REQUEST'), code: undefined }), /Problem: .*code/],
    ['a body where none is documented (204)', exchange('revokeApiKey', 204, { revoked: true }, {}, '/v1/admin/organizations/x/api-keys/y'), /no body is documented/],
    ['getPayment 200 without its required ETag', exchange('getPayment', 200, example('PaymentRetrieved'), {}, '/v1/payments/x'), /required header etag/],
    ['getPayment 304 without its required ETag', exchange('getPayment', 304, undefined, {}, '/v1/payments/x'), /required header etag/],
    ['429 without its required Retry-After header', exchange('createCustomer', 429, problem(429, 'RATE_LIMITED')), /required header retry-after/],
    ['a header the spec does not declare for the response', exchange('createCustomer', 201, example('Customer'), { 'x-powered-by': 'Express' }), /does not declare.*x-powered-by/s],
    ['ETag where the spec does not declare it', exchange('createCustomer', 201, example('Customer'), { etag: '"abc"' }), /does not declare.*etag/s],
    ['RateLimit-* on a 401 (declared on authenticated responses only)', exchange('createCustomer', 401, problem(401, 'INVALID_CREDENTIALS'), { 'ratelimit-limit': '10' }), /does not declare.*ratelimit-limit/s],
    ['Idempotent-Replayed on an operation without a key', exchange('createCustomer', 400, problem(400, 'INVALID_REQUEST'), { 'idempotent-replayed': 'true' }), /Idempotent-Replayed/],
    ['a RateLimit header breaking its schema', exchange('createCustomer', 201, example('Customer'), { 'ratelimit-remaining': '-1' }), /header ratelimit-remaining/],
    ['a header value breaking its schema', exchange('getPayment', 200, example('PaymentRetrieved'), { etag: 'x'.repeat(600) }, '/v1/payments/x'), /header etag/],
  ])('rejects %s', (_name, ex, message) => {
    expect(check(ex as Exchange)).toThrow(message);
  });

  it('the spec names every header it does not declare per response (info.description)', () => {
    const text = (spec.info as { description?: string }).description ?? '';
    const named = new Set([...text.matchAll(/`([A-Za-z-]+)`/g)].map((m) => m[1]!.toLowerCase()));
    expect([...TRANSPORT_HEADERS, ...SECURITY_HEADERS].filter((h) => !named.has(h))).toEqual([]);
  });

  it(STRICT ? 'fails on a 501 NOT_IMPLEMENTED (strict mode)' : 'records a 501 NOT_IMPLEMENTED as not implemented (report-only mode)', () => {
    const recorder = new Recorder();
    const ex = exchange('createCustomer', 501, problem(501, 'NOT_IMPLEMENTED'));
    if (STRICT) {
      expect(() => checkConformance(recorder, ex)).toThrow('createCustomer is not implemented (501)');
      return;
    }
    checkConformance(recorder, ex);
    expect(ex.notImplemented).toBe(true);
    expect([...recorder.notImplemented]).toEqual(['createCustomer']);
  });
});

/** Whether a node on the way to `path` (the root included) offers alternatives (oneOf/anyOf). */
function crossesAlternatives(schema: Parameters<typeof deref>[0], path: readonly (string | number)[]): boolean {
  let nodes = [deref(schema)];
  for (let i = 0; ; i++) {
    if (nodes.some((n) => n.oneOf !== undefined || n.anyOf !== undefined)) return true;
    if (i === path.length) return false;
    const key = path[i]!;
    nodes = nodes.flatMap((n) => {
      const next = typeof key === 'number' ? n.items : (n.properties as Record<string, unknown> | undefined)?.[key];
      return next === undefined ? [] : [deref(next as Parameters<typeof deref>[0])];
    });
    if (nodes.length === 0) return false;
  }
}

describe('request generator', () => {
  const bodies = operations.filter((op) => op.body).map((op) => ({ id: op.operationId, op }));

  it.each(bodies)('$id: generated bodies match the request schema', ({ op }) => {
    const validate = validatorFor(op.body!.schema);
    const values = fc.sample(arbitraryFor(op.body!.schema, { fixups: FIXUPS }), { seed: 424242, numRuns: 60 });
    const valid = values.filter((v) => validate(v) === true);
    // The fuzz suite filters the rest; most must be right by construction.
    expect(valid.length, `only ${valid.length}/60 valid`).toBeGreaterThanOrEqual(45);
  });

  it.each(bodies)('$id: every mutation of a valid body breaks the schema, or holds a string the database cannot store', ({ op }) => {
    const validate = validatorFor(op.body!.schema);
    const values = fc.sample(arbitraryFor(op.body!.schema, { fixups: FIXUPS }), { seed: 7, numRuns: 10 }).filter((v) => validate(v) === true);
    let tried = 0;
    for (const value of values) {
      for (const m of mutations(op.body!.schema, value)) {
        tried += 1;
        if (m.kind === 'unstorable-string') {
          expect(findUnstorable(m.apply(value), '/body'), `${m.kind} at /${m.path.join('/')} is storable`).toBeDefined();
          continue;
        }
        // Mutations inside oneOf/anyOf branches can land on another branch; all others must be invalid.
        if (crossesAlternatives(op.body!.schema, m.path) && validate(m.apply(value)) === true) continue;
        expect(validate(m.apply(value)), `${m.kind} at /${m.path.join('/')} stayed valid`).toBe(false);
      }
    }
    expect(tried).toBeGreaterThan(0);
  });
});
