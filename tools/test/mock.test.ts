// tools/mock.mjs: Prism serves the bundled spec under the real base path (/v1): documented examples
// for valid requests, the spec's problems for invalid ones, and `Prefer: code=` for other statuses.
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mockableSpec, startMock } from '../mock.mjs';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

describe('mock server', () => {
  let mock: ReturnType<typeof startMock>;
  const creds = { 'public-api-key': 'pk_test', 'private-secret-key': 'sk_test', 'content-type': 'application/json' };

  beforeAll(async () => {
    mock = startMock({ port: await freePort() });
    await mock.ready;
  });
  afterAll(async () => {
    await mock?.stop();
  });

  it('moves the base path into the paths', () => {
    const spec = mockableSpec({ servers: [{ url: '/v1' }], paths: { '/customers': {} } });
    expect(Object.keys(spec.paths!)).toEqual(['/v1/customers']);
    expect(spec.servers).toEqual([{ url: '/' }]);
  });

  it('answers a valid request with the documented example', async () => {
    const res = await fetch(`${mock.url}/customers`, { method: 'POST', headers: creds, body: JSON.stringify({ merchant_customer_id: 'cus-1' }) });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ merchant_customer_id: 'cus-000123', first_name: 'Maria' });
  });

  it('validates requests: a too-short field is a 400 problem, missing credentials a 401', async () => {
    const bad = await fetch(`${mock.url}/customers`, { method: 'POST', headers: creds, body: JSON.stringify({ merchant_customer_id: 'c' }) });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const anonymous = await fetch(`${mock.url}/customers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ merchant_customer_id: 'cus-1' }),
    });
    expect(anonymous.status).toBe(401);
  });

  it('lets the caller pick a documented status with Prefer: code=', async () => {
    const res = await fetch(`${mock.url}/customers`, {
      method: 'POST',
      headers: { ...creds, prefer: 'code=409' },
      body: JSON.stringify({ merchant_customer_id: 'cus-1' }),
    });
    expect(res.status).toBe(409);
    expect(((await res.json()) as { code: string }).code).toBe('CUSTOMER_ID_DUPLICATED');
  });

  it('serves every operation of the spec, e.g. health without credentials', async () => {
    const res = await fetch(`${mock.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });
});
