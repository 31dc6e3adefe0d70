import { randomUUID } from 'node:crypto';
/**
 * The server platform: tenancy and the admin API, the sandbox bootstrap, health and docs, request ids,
 * error mapping (incl. the database going away), configuration, log redaction, graceful shutdown.
 */
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/platform/config.js';
import { expectProblem, expectSchema } from './support/assertions.js';
import { ADMIN_KEY, backends, openTestDatabase, startTestServer, useServer } from './support/harness.js';
import { seedPgliteDataDir } from './support/processes.js';

const admin = (extra: Record<string, string> = {}) => ({ 'content-type': 'application/json', 'admin-api-key': ADMIN_KEY, ...extra });

for (const backend of backends()) {
  describe(`platform on ${backend}`, () => {
    const t = useServer(backend);

    it('the sandbox bootstrap wrote PCI-certified credentials, mode 0600, and logged the path but not the secret', async () => {
      expect(t.sandbox.pci_certified).toBe(true);
      expect(t.sandbox.private_secret_key).toMatch(/^sk_/);
      const file = t.logs.map((l) => JSON.parse(l) as { msg: string; file?: string }).find((l) => l.msg.startsWith('sandbox organization created'))?.file;
      expect(file).toMatch(/sandbox-credentials\.json$/);
      expect((await stat(file!)).mode & 0o777).toBe(0o600);
      expect(t.logs.join('\n')).not.toContain(t.sandbox.private_secret_key);
    });

    it('admin: organizations, accounts, key rotation and revocation', async () => {
      const created = await fetch(`${t.baseUrl}/admin/organizations`, { method: 'POST', headers: admin(), body: JSON.stringify({ name: 'Acme' }) });
      expect(created.status).toBe(201);
      const org = (await created.json()) as Record<string, string>;
      expectSchema('OrganizationCreated', org);
      expect(org.pci_certified).toBe(false);

      const acct = await fetch(`${t.baseUrl}/admin/organizations/${org.organization_id}/accounts`, {
        method: 'POST',
        headers: admin(),
        body: JSON.stringify({ name: 'Acme MX' }),
      });
      expect(acct.status).toBe(201);
      expectSchema('Account', await acct.json());

      const rotated = await fetch(`${t.baseUrl}/admin/organizations/${org.organization_id}/api-keys`, { method: 'POST', headers: admin() });
      expect(rotated.status).toBe(201);
      const pair = (await rotated.json()) as Record<string, string>;
      expectSchema('ApiKeyPair', pair);

      // Both pairs work until the old one is revoked.
      const oldClient = t.clientFor(org as never);
      const newClient = t.clientFor(pair as never);
      expect((await oldClient.POST('/customers', { body: { merchant_customer_id: 'rot-1' } })).response.status).toBe(201);
      expect((await newClient.POST('/customers', { body: { merchant_customer_id: 'rot-2' } })).response.status).toBe(201);
      const revoke = await fetch(`${t.baseUrl}/admin/organizations/${org.organization_id}/api-keys/${org.public_api_key}`, { method: 'DELETE', headers: admin() });
      expect(revoke.status).toBe(204);
      expect((await oldClient.POST('/customers', { body: { merchant_customer_id: 'rot-3' } })).response.status).toBe(401);
      expect((await newClient.POST('/customers', { body: { merchant_customer_id: 'rot-4' } })).response.status).toBe(201);
      const again = await fetch(`${t.baseUrl}/admin/organizations/${org.organization_id}/api-keys/${org.public_api_key}`, { method: 'DELETE', headers: admin() });
      await expectProblem(again, 404, 'API_KEY_NOT_FOUND');
    });

    it("an account is usable the moment it is created, and never by another organization, however often its own used it (tenancy/accounts.ts keeps only a yes, per organization)", async () => {
      const a = await t.createOrganization();
      const b = await t.createOrganization();
      const as = (o: { public_api_key: string; private_secret_key: string }) => ({ 'public-api-key': o.public_api_key, 'private-secret-key': o.private_secret_key });
      const routings = (o: typeof a, accountId: string) => t.fetch(`/routing?account_id=${accountId}`, { headers: as(o) });
      await expectProblem(await routings(a, randomUUID()), 403, 'INVALID_ACCOUNT_ID');
      // A new account works on the organization's very next request (nothing about it was kept before).
      const created = await fetch(`${t.baseUrl}/admin/organizations/${a.organization_id}/accounts`, { method: 'POST', headers: admin(), body: JSON.stringify({ name: 'A BR' }) });
      const account = ((await created.json()) as { account_id: string }).account_id;
      for (let i = 0; i < 3; i++) expect((await routings(a, account)).status).toBe(200);
      // The "yes" A's requests left behind is A's alone.
      await expectProblem(await routings(b, account), 403, 'INVALID_ACCOUNT_ID');
      await expectProblem(await routings(b, a.account_id), 403, 'INVALID_ACCOUNT_ID');
    });

    it('admin: wrong key 401, unknown organization 404, bad body 400', async () => {
      await expectProblem(
        await fetch(`${t.baseUrl}/admin/organizations`, { method: 'POST', headers: admin({ 'admin-api-key': 'nope' }), body: '{"name":"x"}' }),
        401,
        'INVALID_CREDENTIALS',
      );
      await expectProblem(
        await fetch(`${t.baseUrl}/admin/organizations/8f0e2b1c-6d4a-4f3e-9b2a-7c5d1e3f9a0b/accounts`, { method: 'POST', headers: admin(), body: '{"name":"x"}' }),
        404,
        'ORGANIZATION_NOT_FOUND',
      );
      const bad = await fetch(`${t.baseUrl}/admin/organizations`, { method: 'POST', headers: admin(), body: '{"name":"","pci":true}' });
      const body = await expectProblem(bad, 400, 'INVALID_REQUEST');
      expect((body.errors as { path: string }[]).map((e) => e.path).sort()).toEqual(['/body/name', '/body/pci']);
    });

    it('merchant credentials do not open the admin API, and admin credentials do not open the merchant API', async () => {
      await expectProblem(await t.fetch('/admin/organizations', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"x"}' }), 401, 'INVALID_CREDENTIALS');
      await expectProblem(
        await fetch(`${t.baseUrl}/customers`, { method: 'POST', headers: admin(), body: '{"merchant_customer_id":"adm-1"}' }),
        401,
        'INVALID_CREDENTIALS',
      );
    });

    it('health, readiness, the spec and the docs are served without credentials', async () => {
      for (const path of ['/healthz', '/v1/healthz']) {
        const res = await fetch(`${t.running.url}${path}`);
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual({ status: 'ok' });
      }
      for (const path of ['/readyz', '/v1/readyz']) {
        const res = await fetch(`${t.running.url}${path}`);
        expect(await res.json()).toEqual({ status: 'ok', database: 'ok' });
      }
      const specRes = await fetch(`${t.running.url}/openapi.json`);
      const spec = (await specRes.json()) as { openapi: string; paths: object };
      expect(spec.openapi).toBe('3.1.0');
      // Serialized once (anyone may ask for it, repeatedly: it is ~800 KB), and revalidated for nothing.
      const etag = specRes.headers.get('etag');
      expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
      const again = await fetch(`${t.running.url}/openapi.json`, { headers: { 'if-none-match': etag! } });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe('');
      expect(Object.keys(spec.paths)).toContain('/payments/{payment_id}/transactions/{transaction_id}/dispute');
      for (const [path, marker] of [
        ['/docs/', 'href="guides/getting-started.html"'],
        ['/docs/guides/test-cards.html', '4000000000000259'],
        ['/docs/reference.html', 'redoc.standalone.js'],
      ] as const) {
        const docs = await fetch(`${t.running.url}${path}`);
        expect(docs.status, path).toBe(200);
        expect(docs.headers.get('content-type')).toMatch(/^text\/html/);
        expect(await docs.text()).toContain(marker);
      }
    });

    it('every response has X-Request-Id (the caller’s when sane), security headers, no X-Powered-By', async () => {
      const mine = await fetch(`${t.baseUrl}/healthz`, { headers: { 'x-request-id': 'trace-1234abcd' } });
      expect(mine.headers.get('x-request-id')).toBe('trace-1234abcd');
      const junk = await fetch(`${t.baseUrl}/healthz`, { headers: { 'x-request-id': 'bad id with spaces' } });
      expect(junk.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(junk.headers.get('x-powered-by')).toBeNull();
      expect(junk.headers.get('x-content-type-options')).toBe('nosniff');
      const notFound = await fetch(`${t.running.url}/nowhere`);
      await expectProblem(notFound, 404, 'NOT_FOUND');
    });

    it('CORS is closed: no Access-Control-* header for another origin, and a preflight is refused', async () => {
      const origin = { origin: 'https://evil.example' };
      const simple = await t.fetch('/webhook-endpoints', { headers: origin });
      expect(simple.status).toBe(200);
      const preflight = await fetch(`${t.baseUrl}/customers`, {
        method: 'OPTIONS',
        headers: { ...origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'private-secret-key' },
      });
      expect(preflight.status).toBeGreaterThanOrEqual(400);
      for (const res of [simple, preflight]) {
        const cors: string[] = [];
        res.headers.forEach((_value, name) => {
          if (name.startsWith('access-control-')) cors.push(name);
        });
        expect(cors).toEqual([]);
      }
    });

    it('one access line per request: its id, method, path without the query string, status and time', async () => {
      const res = await t.fetch('/payments/00000000-0000-4000-8000-000000000000?raw_response=true', { headers: { 'x-request-id': 'access-log-1234' } });
      expect(res.status).toBe(404);
      const lines = t.logs.map((l) => JSON.parse(l) as { msg: string; req?: { id: string }; res?: unknown; responseTime?: number }).filter((l) => l.req?.id === 'access-log-1234');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ msg: 'request completed', req: { method: 'GET', url: '/v1/payments/00000000-0000-4000-8000-000000000000' }, res: { statusCode: 404 } });
      expect(lines[0]!.responseTime).toBeGreaterThanOrEqual(0);
      // Nothing else: the access line skips the logger's redaction (http/access-log.ts), so a member added
      // to it must be one that needs none, decided here.
      expect(Object.keys(lines[0]!).sort()).toEqual(['level', 'msg', 'req', 'res', 'responseTime', 'service', 'time']);
      expect(Object.keys(lines[0]!.req!).sort()).toEqual(['id', 'method', 'url']);
      expect(Object.keys(lines[0]!.res as object)).toEqual(['statusCode']);
    });

    it('secrets never reach the logs', async () => {
      await t.client.POST('/customers', { body: { merchant_customer_id: 'log-check' } });
      const all = t.logs.join('\n');
      expect(all).not.toContain(t.sandbox.private_secret_key);
      expect(all).not.toContain(ADMIN_KEY);
    });
  });

  describe(`database outage on ${backend}`, () => {
    it('answers 503 SERVICE_UNAVAILABLE with Retry-After, and /readyz fails, when the database is gone', async () => {
      const t = await startTestServer(backend);
      try {
        await t.db.close();
        const res = await t.client.POST('/customers', { body: { merchant_customer_id: 'outage-1' } });
        expect(res.response.status).toBe(503);
        expect(res.error?.code).toBe('SERVICE_UNAVAILABLE');
        expect(res.response.headers.get('retry-after')).toBe('2');
        const ready = await fetch(`${t.running.url}/readyz`);
        expect(ready.status).toBe(503);
      } finally {
        await t.stop(); // scans the logs, drops the PostgreSQL schema
      }
    });
  });
}

describe('configuration', () => {
  it('defaults: sandbox with the embedded database, off with DATABASE_URL', () => {
    expect(loadConfig({})).toMatchObject({ port: 3000, host: '127.0.0.1', sandbox: true, databaseUrl: undefined });
    expect(loadConfig({ DATABASE_URL: 'postgres://x@h/db', PUBLIC_BASE_URL: 'https://pay.example.com' })).toMatchObject({ sandbox: false });
    expect(loadConfig({ DATABASE_URL: 'postgres://x@h/db', SANDBOX: 'true' })).toMatchObject({ sandbox: true });
  });

  it('one line per mistake, naming the variable', () => {
    expect(() => loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', ADMIN_API_KEY: 'short', SANDBOX: 'maybe' })).toThrow(
      expect.objectContaining({
        lines: [
          'invalid configuration: PORT must be a port number',
          'invalid configuration: DATABASE_URL must be a postgres:// URL',
          'invalid configuration: ADMIN_API_KEY must be at least 32 characters',
          'invalid configuration: SANDBOX must be true or false',
        ],
      }),
    );
  });

  it("<PROVIDER>_API_URL, for any connector id: where that provider's API is reached instead of its public host", () => {
    expect(loadConfig({ STRIPE_API_URL: 'http://127.0.0.1:4010/', MERCADO_PAGO_API_URL: 'https://proxy.example.com/mp', NEXT_PSP_API_URL: 'http://127.0.0.1:4020' }).providerApiUrls).toEqual({
      STRIPE: 'http://127.0.0.1:4010',
      MERCADO_PAGO: 'https://proxy.example.com/mp',
      NEXT_PSP: 'http://127.0.0.1:4020',
    });
    expect(loadConfig({}).providerApiUrls).toEqual({});
    expect(() => loadConfig({ PORT: 'eighty', ADYEN_API_URL: 'ftp://adyen.example.com' })).toThrow(
      expect.objectContaining({ lines: ['invalid configuration: PORT must be a port number', 'invalid configuration: ADYEN_API_URL must be an absolute http(s) URL'] }),
    );
  });
});

describe('the process', () => {
  const main = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');

  it('refuses to start on bad configuration with one clear line', async () => {
    const child = spawn(process.execPath, [main], { env: { ...process.env, PORT: 'nope', DATABASE_URL: '' } });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    expect(code).toBe(1);
    expect(stderr.trim()).toBe('invalid configuration: PORT must be a port number');
  });

  it('serves, then on SIGTERM finishes and exits 0', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'payorch-proc-'));
    await seedPgliteDataDir(dataDir); // a migrated database: this test is about the stop, not initdb
    const child = spawn(process.execPath, [main], { env: { ...process.env, PORT: '0', DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'info' } });
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /payorch listening on (http:\/\/[^"\s]+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.on('exit', (c) => reject(new Error(`exited ${c}: ${out}`)));
    });
    const creds = JSON.parse(await readFile(join(dataDir, 'sandbox-credentials.json'), 'utf8')) as Record<string, string>;
    // An in-flight request: headers sent, body held back until after SIGTERM.
    const { hostname, port } = new URL(url);
    const body = JSON.stringify({ merchant_customer_id: 'sigterm-1' });
    const socket = connect(Number(port), hostname);
    await new Promise((r) => socket.once('connect', r));
    socket.write(
      `POST /v1/customers HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n` +
        `public-api-key: ${creds.public_api_key}\r\nprivate-secret-key: ${creds.private_secret_key}\r\nConnection: close\r\n\r\n`,
    );
    let answer = '';
    socket.on('data', (d) => (answer += d.toString()));
    const closed = new Promise((r) => socket.once('close', r));
    await new Promise((r) => setTimeout(r, 300));
    const exited = new Promise<number | null>((r) => child.on('exit', r));
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    // New connections are refused while the in-flight one finishes.
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    socket.write(body);
    await closed;
    const code = await exited;
    const res = { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]) };
    expect(res.status).toBe(201);
    expect(code).toBe(0);
    expect(out).toContain('"msg":"stopped"');
  });
});

describe('an operation not built yet', () => {
  it('answers 501 NOT_IMPLEMENTED problem+json (a notImplemented() placeholder)', async () => {
    const { createApp } = await import('../src/app.js');
    const { handlers } = await import('../src/handlers.js');
    const { notImplemented } = await import('../src/not-implemented.js');
    const { createServer } = await import('node:http');
    const { db, drop } = await openTestDatabase('pglite');
    const config = loadConfig({ LOG_LEVEL: 'silent' });
    const app = createApp({ db, config, log: (await import('../src/platform/logger.js')).createLogger('silent'), services: {} as never, handlers: { ...handlers, getHealth: notImplemented('getHealth') } });
    const server = createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const { port } = server.address() as { port: number };
      const res = await fetch(`http://127.0.0.1:${port}/v1/healthz`);
      const body = await expectProblem(res, 501, 'NOT_IMPLEMENTED');
      expect(body.detail).toContain('getHealth');
    } finally {
      server.close();
      await db.close();
      await drop();
    }
  });
});
