/**
 * Links the service hands out (brand icons, redirect pages) are built from PUBLIC_BASE_URL, never from
 * the request's Host header (issue 12, item 7): a forged Host once ended up in stored payment methods
 * and in signed enrollment.enrolled webhooks. Outside sandbox mode the variable is required; in sandbox
 * mode it defaults to the address the server listens on (the bound port when PORT=0).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/platform/config.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { startReceiver } from './support/receiver.js';
import { cardBody } from './support/vault-fixtures.js';

const FORGED = 'attacker.example';
const forgedHeaders = { host: FORGED, 'x-forwarded-host': FORGED, 'x-forwarded-proto': 'https', forwarded: `host=${FORGED};proto=https` };

/** One request with a forged Host (fetch would not send one) and the sandbox credentials. */
function forgedRequest(t: TestServer, method: string, url: string, body?: string, contentType = 'application/json') {
  return new Promise<{ status: number; text: string; location?: string }>((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        headers: {
          ...forgedHeaders,
          'public-api-key': t.sandbox.public_api_key,
          'private-secret-key': t.sandbox.private_secret_key,
          'x-idempotency-key': randomUUID(),
          ...(body !== undefined ? { 'content-type': contentType } : {}),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, text, location: res.headers.location }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Every stored value of every table of the test's database, as text. */
async function storedText(t: TestServer): Promise<string> {
  const tables = await t.db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')`,
  );
  let all = '';
  for (const { name } of tables) {
    const rows = await t.db.query<{ j: string }>(`SELECT to_jsonb(t)::text AS j FROM "${name}" t`);
    all += rows.map((r) => r.j).join('\n');
  }
  return all;
}

describe('PUBLIC_BASE_URL configuration', () => {
  it('is required outside sandbox mode, with one line naming it, and must be an http(s) URL', () => {
    for (const env of [{ SANDBOX: 'false' }, { DATABASE_URL: 'postgres://x@h/db' }]) {
      let error: unknown;
      try {
        loadConfig(env);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).lines).toHaveLength(1);
      expect((error as ConfigError).lines[0]).toMatch(/^invalid configuration: PUBLIC_BASE_URL is required outside sandbox mode/);
    }
    expect(loadConfig({ SANDBOX: 'false', PUBLIC_BASE_URL: 'https://pay.example.com/' }).publicBaseUrl).toBe('https://pay.example.com');
    expect(loadConfig({}).publicBaseUrl).toBeUndefined(); // sandbox: the listening address, once bound
    expect(() => loadConfig({ SANDBOX: 'false', PUBLIC_BASE_URL: 'ftp://pay.example.com' })).toThrow('invalid configuration: PUBLIC_BASE_URL must be an absolute http(s) URL');
  });

  it('the process refuses to start without it outside sandbox mode, with one clear line', async () => {
    const main = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');
    const dataDir = await mkdtemp(join(tmpdir(), 'payorch-baseurl-'));
    const { PUBLIC_BASE_URL: _u, ...inherited } = process.env;
    const child = spawn(process.execPath, [main], { env: { ...inherited, PORT: '0', DATA_DIR: dataDir, DATABASE_URL: '', SANDBOX: 'false' } });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/^invalid configuration: PUBLIC_BASE_URL is required outside sandbox mode/);
  });
});

for (const backend of backends()) {
  const settings: { name: string; env: Record<string, string>; base: (t: TestServer) => string }[] = [
    { name: 'sandbox default (the listening address)', env: {}, base: (t: TestServer) => t.running.url },
    { name: 'PUBLIC_BASE_URL set', env: { PUBLIC_BASE_URL: 'https://pay.example.com/' }, base: () => 'https://pay.example.com' },
  ];
  for (const setting of settings) {
    describe(`links with a forged Host header on ${backend}, ${setting.name}`, () => {
      const t = useServer(backend, { env: setting.env });

      it('no response, stored field or signed webhook carries the forged host', async () => {
        const base = setting.base(t);
        expect(base).not.toMatch(/:0$/);
        const receiver = await startReceiver<unknown>();
        try {
          const endpoint = await t.fetch('/webhook-endpoints', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ url: receiver.url, events: ['enrollment.enrolled'] }),
          });
          expect(endpoint.status).toBe(201);

          const v1 = `${t.baseUrl}`;
          const customer = await forgedRequest(t, 'POST', `${v1}/customers`, JSON.stringify({ merchant_customer_id: `cus-${randomUUID()}` }));
          expect(customer.status).toBe(201);
          const customerId = (JSON.parse(customer.text) as { id: string }).id;

          const card = await forgedRequest(t, 'POST', `${v1}/customers/${customerId}/payment-methods`, JSON.stringify(cardBody(t.sandbox.account_id)));
          expect(card.status, card.text).toBe(201);
          expect((JSON.parse(card.text) as { icon: string }).icon.startsWith(`${base}/v1/assets/brands/`)).toBe(true);

          const ach = await forgedRequest(
            t,
            'POST',
            `${v1}/customers/${customerId}/payment-methods`,
            JSON.stringify({ account_id: t.sandbox.account_id, country: 'US', type: 'ACH_ENROLLMENT', callback_url: 'https://merchant.example/back' }),
          );
          expect(ach.status, ach.text).toBe(201);
          const redirectUrl = (JSON.parse(ach.text) as { redirect_url: string }).redirect_url;
          expect(redirectUrl.startsWith(`${base}/v1/sandbox/enrollments/`)).toBe(true);

          // The customer approves on the sandbox page, again with a forged Host.
          const page = redirectUrl.replace(base, t.running.url);
          const approved = await forgedRequest(t, 'POST', page, 'decision=approve', 'application/x-www-form-urlencoded');
          expect(approved.status).toBe(303);
          expect(approved.location?.startsWith('https://merchant.example/back?')).toBe(true);

          const list = await forgedRequest(t, 'GET', `${v1}/customers/${customerId}/payment-methods`);
          expect(list.status).toBe(200);

          await receiver.waitFor(2);
          expect(receiver.received).toHaveLength(2);
          const icons = receiver.received.map((e) => (e as { data: { payment_method: { icon: string } } }).data.payment_method.icon);
          for (const icon of icons) expect(icon.startsWith(`${base}/v1/assets/brands/`)).toBe(true);

          for (const text of [customer.text, card.text, ach.text, approved.text, list.text, JSON.stringify(receiver.received), await storedText(t)]) {
            expect(text).not.toContain(FORGED);
          }
        } finally {
          receiver.close();
        }
      });
    });
  }
}
