/**
 * Retries, backoff, Retry-After, idempotency-key reuse and timeouts, against a scripted fake `fetch`
 * injected through the client's `fetch` option (the real client code runs unchanged; only the network
 * is scripted). Each script step answers one attempt: a Response, an error to throw, or 'hang' (never
 * answers; settles only when the attempt's signal aborts).
 */
import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  createPayorchClient,
  MAX_RETRY_AFTER_MS,
  parseRetryAfter,
  PayorchConnectionError,
  PayorchError,
  type PayorchClientOptions,
} from '../src/index.js';

type Step = Response | Error | 'hang' | (() => Response);

interface Attempt {
  at: number;
  method: string;
  url: string;
  headers: Headers;
  body: string;
  signal: AbortSignal;
}

function scriptedFetch(steps: Step[]) {
  const attempts: Attempt[] = [];
  const fetch = async (request: Request): Promise<Response> => {
    attempts.push({ at: performance.now(), method: request.method, url: request.url, headers: new Headers(request.headers), body: await request.text(), signal: request.signal });
    const step = steps[Math.min(attempts.length - 1, steps.length - 1)]!;
    if (step === 'hang') {
      return new Promise((_, reject) => {
        if (request.signal.aborted) reject(request.signal.reason);
        request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true });
      });
    }
    if (step instanceof Error) throw step;
    return typeof step === 'function' ? step() : step.clone();
  };
  return { fetch, attempts };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json', ...headers } });
const problem = (status: number, code: string, headers: Record<string, string> = {}) =>
  json(status, { type: 'about:blank', title: code, status, code, messages: [code], request_id: `req-${code}` }, headers);
const networkError = () => new TypeError('fetch failed');

const PAYMENT = { id: '3f9c1b2a-7d4e-4a8b-9c6d-1e2f3a4b5c6d', status: 'SUCCEEDED' };
const paymentBody = {
  account_id: '5d1e7c2b-3a4f-4e6d-9b8a-7c6d5e4f3a21',
  description: 'order',
  country: 'BR' as const,
  merchant_order_id: 'o-1',
  amount: { currency: 'BRL', value: 10 },
  customer_payer: { id: '7c2f4a8e-5b1d-4f7a-9c3e-2d6b8a1f0e94' },
  payment_method: { type: 'CARD' as const, vaulted_token: '8e0f2b1c-6d4a-4f3e-9b2a-7c5d1e3f9a0b' },
};

function clientWith(steps: Step[], options: Partial<PayorchClientOptions> = {}) {
  const script = scriptedFetch(steps);
  const client = createPayorchClient({
    baseUrl: 'https://api.test/v1',
    publicApiKey: 'pk_test',
    privateSecretKey: 'sk_test',
    fetch: script.fetch,
    initialRetryDelayMs: 5,
    maxRetryDelayMs: 20,
    ...options,
  });
  return { client, attempts: script.attempts };
}

const getPayment = (client: ReturnType<typeof clientWith>['client'], signal?: AbortSignal) =>
  client.GET('/payments/{payment_id}', { params: { path: { payment_id: PAYMENT.id } }, signal });

describe('which calls are retried', () => {
  it('a GET is retried on 503 and then succeeds', async () => {
    const { client, attempts } = clientWith([problem(503, 'SERVICE_UNAVAILABLE'), json(200, PAYMENT)]);
    const { data, error, response } = await getPayment(client);
    expect(error).toBeUndefined();
    expect(response.status).toBe(200);
    expect(data).toEqual(PAYMENT);
    expect(attempts).toHaveLength(2);
    for (const a of attempts) expect(a.headers.get('public-api-key')).toBe('pk_test');
  });

  it('an idempotency-keyed POST is retried on network errors, 429 and 409 REQUEST_IN_PROCESS with the same key and body', async () => {
    const { client, attempts } = clientWith([networkError(), problem(429, 'RATE_LIMITED', { 'retry-after': '0' }), problem(409, 'REQUEST_IN_PROCESS'), json(201, PAYMENT)], {
      maxRetries: 3,
    });
    const { data, response } = await client.POST('/payments', { body: paymentBody });
    expect(response.status).toBe(201);
    expect(data).toEqual(PAYMENT);
    expect(attempts).toHaveLength(4);
    const keys = new Set(attempts.map((a) => a.headers.get('x-idempotency-key')));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(attempts.map((a) => a.body))).toEqual(new Set([JSON.stringify(paymentBody)]));
  });

  it('the caller’s own key is sent on every attempt, never replaced', async () => {
    const { client, attempts } = clientWith([problem(503, 'SERVICE_UNAVAILABLE'), json(201, PAYMENT)]);
    await client.POST('/payments', { params: { header: { 'X-Idempotency-Key': 'order-1234-attempt' } }, body: paymentBody });
    expect(attempts.map((a) => a.headers.get('x-idempotency-key'))).toEqual(['order-1234-attempt', 'order-1234-attempt']);
  });

  it('two calls get two different generated keys', async () => {
    const { client, attempts } = clientWith([json(201, PAYMENT)]);
    await client.POST('/payments', { body: paymentBody });
    await client.POST('/payments', { body: paymentBody });
    expect(attempts[0]!.headers.get('x-idempotency-key')).not.toBe(attempts[1]!.headers.get('x-idempotency-key'));
  });

  it('a POST without an idempotency key (createCustomer) is never retried', async () => {
    const { client, attempts } = clientWith([problem(503, 'SERVICE_UNAVAILABLE'), json(201, {})]);
    const { error, response } = await client.POST('/customers', { body: { merchant_customer_id: 'cus-1' } });
    expect(response.status).toBe(503);
    expect(error?.code).toBe('SERVICE_UNAVAILABLE');
    expect(attempts).toHaveLength(1);
    expect(attempts[0]!.headers.has('x-idempotency-key')).toBe(false);

    const failing = clientWith([networkError(), json(201, {})]);
    const err = await failing.client.POST('/customers', { body: { merchant_customer_id: 'cus-1' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PayorchConnectionError);
    expect(err).toMatchObject({ attempts: 1, timedOut: false });
    expect((err as Error).cause).toBeInstanceOf(TypeError);
    expect(failing.attempts).toHaveLength(1);
  });

  it('final answers are not retried: 409 INVALID_STATUS, 400, 404, 422, 500', async () => {
    for (const [status, code] of [
      [409, 'INVALID_STATUS'],
      [400, 'INVALID_REQUEST'],
      [404, 'PAYMENT_NOT_FOUND'],
      [422, 'IDEMPOTENCY_KEY_REUSED'],
      [500, 'INTERNAL_ERROR'],
    ] as const) {
      const { client, attempts } = clientWith([problem(status, code), json(201, PAYMENT)]);
      const { error, response } = await client.POST('/payments', { body: paymentBody });
      expect(response.status).toBe(status);
      expect(error?.code).toBe(code);
      expect(attempts, code).toHaveLength(1);
    }
  });

  it('retries are bounded by maxRetries; the last answer is returned (or thrown by the resource layer)', async () => {
    const raw = clientWith([problem(503, 'SERVICE_UNAVAILABLE')], { maxRetries: 3 });
    const { error, response } = await getPayment(raw.client);
    expect(response.status).toBe(503);
    expect(error?.code).toBe('SERVICE_UNAVAILABLE');
    expect(raw.attempts).toHaveLength(4);

    const resource = clientWith([problem(503, 'SERVICE_UNAVAILABLE')], { maxRetries: 1 });
    const err = await resource.client.payments.retrieve(PAYMENT.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PayorchError);
    expect(err).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE', request_id: 'req-SERVICE_UNAVAILABLE' });
    expect(resource.attempts).toHaveLength(2);

    const none = clientWith([problem(503, 'SERVICE_UNAVAILABLE'), json(200, PAYMENT)], { maxRetries: 0 });
    expect((await getPayment(none.client)).response.status).toBe(503);
    expect(none.attempts).toHaveLength(1);

    const down = clientWith([networkError()], { maxRetries: 2 });
    await expect(getPayment(down.client)).rejects.toMatchObject({ name: 'PayorchConnectionError', attempts: 3, timedOut: false });
    expect(down.attempts).toHaveLength(3);
  });
});

describe('backoff and Retry-After', () => {
  it('backoffDelay doubles per retry with equal jitter, capped', () => {
    const policy = { initialRetryDelayMs: 100, maxRetryDelayMs: 1_000 };
    expect([0, 1, 2, 3, 4, 5].map((n) => backoffDelay(n, policy, () => 0))).toEqual([50, 100, 200, 400, 500, 500]);
    expect([0, 1, 2, 3, 4, 5].map((n) => backoffDelay(n, policy, () => 1))).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    const samples = Array.from({ length: 200 }, () => backoffDelay(2, policy));
    expect(Math.min(...samples)).toBeGreaterThanOrEqual(200);
    expect(Math.max(...samples)).toBeLessThanOrEqual(400);
    expect(new Set(samples).size).toBeGreaterThan(1); // jitter: not all equal
  });

  it('the waits between attempts grow exponentially', async () => {
    const { client, attempts } = clientWith([problem(503, 'SERVICE_UNAVAILABLE')], { maxRetries: 3, initialRetryDelayMs: 40, maxRetryDelayMs: 10_000 });
    await getPayment(client);
    const gaps = attempts.slice(1).map((a, i) => a.at - attempts[i]!.at);
    // equal jitter: retry n waits between 40·2ⁿ/2 and 40·2ⁿ ms (timers may fire a little late, never early)
    expect(gaps[0]).toBeGreaterThanOrEqual(20 - 2);
    expect(gaps[1]).toBeGreaterThanOrEqual(40 - 2);
    expect(gaps[2]).toBeGreaterThanOrEqual(80 - 2);
    expect(gaps[2]).toBeLessThan(160 + 1_000); // generous: only that the cap is not wildly off
  });

  it('Retry-After in seconds is honoured', async () => {
    const { client, attempts } = clientWith([problem(429, 'RATE_LIMITED', { 'retry-after': '1' }), json(200, PAYMENT)]);
    const { response } = await getPayment(client);
    expect(response.status).toBe(200);
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(1_000 - 2);
  });

  it('Retry-After as an HTTP date is honoured', async () => {
    const { client, attempts } = clientWith([() => problem(503, 'SERVICE_UNAVAILABLE', { 'retry-after': new Date(Date.now() + 1_500).toUTCString() }), json(200, PAYMENT)]);
    await getPayment(client);
    // HTTP dates have one-second resolution: the wait is at least 0.5 s of the 1.5 s asked.
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(500);
  });

  it('a Retry-After over a minute is not honoured: the backoff applies', async () => {
    const { client, attempts } = clientWith([problem(503, 'SERVICE_UNAVAILABLE', { 'retry-after': '3600' }), json(200, PAYMENT)]);
    const started = performance.now();
    await getPayment(client);
    expect(attempts).toHaveLength(2);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('parseRetryAfter reads seconds and dates, ignores garbage', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('2', now)).toBe(2_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(MAX_RETRY_AFTER_MS).toBe(60_000);
  });
});

describe('timeouts and cancellation', () => {
  it('an attempt that does not answer within timeoutMs fails with PayorchConnectionError (timedOut)', async () => {
    const { client, attempts } = clientWith(['hang'], { timeoutMs: 50, maxRetries: 0 });
    const started = performance.now();
    const err = await client.POST('/customers', { body: { merchant_customer_id: 'cus-1' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PayorchConnectionError);
    expect(err).toMatchObject({ timedOut: true, attempts: 1 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(50 - 2);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(attempts[0]!.signal.aborted).toBe(true);
  });

  it('timed-out attempts of a retryable call are retried with the same idempotency key', async () => {
    const { client, attempts } = clientWith(['hang', 'hang', json(201, PAYMENT)], { timeoutMs: 30, maxRetries: 2 });
    const { data } = await client.POST('/payments', { body: paymentBody });
    expect(data).toEqual(PAYMENT);
    expect(attempts).toHaveLength(3);
    expect(new Set(attempts.map((a) => a.headers.get('x-idempotency-key'))).size).toBe(1);
  });

  it('every attempt timing out ends in PayorchConnectionError after maxRetries + 1 attempts', async () => {
    const { client, attempts } = clientWith(['hang'], { timeoutMs: 20, maxRetries: 2 });
    await expect(getPayment(client)).rejects.toMatchObject({ name: 'PayorchConnectionError', timedOut: true, attempts: 3 });
    expect(attempts).toHaveLength(3);
  });

  it('the caller’s AbortSignal cancels the call at once, without retrying', async () => {
    const { client, attempts } = clientWith(['hang', json(200, PAYMENT)], { timeoutMs: 10_000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const err = await getPayment(client, controller.signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DOMException);
    expect((err as DOMException).name).toBe('AbortError');
    expect(attempts).toHaveLength(1);
  });

  it('aborting during the backoff wait stops the retries', async () => {
    const { client, attempts } = clientWith([problem(503, 'SERVICE_UNAVAILABLE', { 'retry-after': '30' }), json(200, PAYMENT)]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('user navigated away')), 50);
    const started = performance.now();
    await expect(getPayment(client, controller.signal)).rejects.toThrow('user navigated away');
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(attempts).toHaveLength(1);
  });

  it('a signal from AbortSignal.timeout() works as the caller’s deadline across retries', async () => {
    const { client, attempts } = clientWith([problem(503, 'SERVICE_UNAVAILABLE')], { maxRetries: 50, initialRetryDelayMs: 20 });
    const err = await getPayment(client, AbortSignal.timeout(150)).catch((e: unknown) => e);
    expect((err as DOMException).name).toBe('TimeoutError');
    expect(attempts.length).toBeGreaterThan(1);
    expect(attempts.length).toBeLessThan(51);
  });
});

describe('options', () => {
  it('refuses missing credentials and nonsense policies up front', () => {
    const base = { baseUrl: 'https://api.test/v1', publicApiKey: 'pk', privateSecretKey: 'sk' };
    expect(() => createPayorchClient({ ...base, publicApiKey: '' })).toThrow(/publicApiKey is required/);
    expect(() => createPayorchClient({ ...base, privateSecretKey: undefined as unknown as string })).toThrow(/privateSecretKey is required/);
    expect(() => createPayorchClient({ ...base, maxRetries: -1 })).toThrow(/maxRetries/);
    expect(() => createPayorchClient({ ...base, maxRetries: 1.5 })).toThrow(/maxRetries must be an integer/);
    expect(() => createPayorchClient({ ...base, timeoutMs: Number.NaN })).toThrow(/timeoutMs/);
  });

  it('generateIdempotencyKeys: false leaves the header to the caller', async () => {
    const { client, attempts } = clientWith([json(201, PAYMENT)], { generateIdempotencyKeys: false });
    await client.POST('/payments', { body: paymentBody });
    expect(attempts[0]!.headers.has('x-idempotency-key')).toBe(false);
  });

  it('per-call credential headers override the client’s', async () => {
    const { client, attempts } = clientWith([json(201, {})]);
    await client.POST('/customers', { body: { merchant_customer_id: 'cus-1' }, headers: { 'public-api-key': 'pk_other', 'private-secret-key': 'sk_other' } });
    expect(attempts[0]!.headers.get('public-api-key')).toBe('pk_other');
    expect(attempts[0]!.headers.get('private-secret-key')).toBe('sk_other');
  });
});
