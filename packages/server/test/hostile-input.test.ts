/**
 * Hostile input: deep nesting, huge arrays, prototype-pollution keys, invalid UTF-8, a slow client, and
 * migrations started by two processes at once. Each answer is a clean 4xx problem (never a 5xx), the
 * server keeps serving, and nothing is written.
 */
import { connect } from 'node:net';
import { randomBytes } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { migrate } from '../src/db/migrate.js';
import { migrations } from '../src/db/migrations/index.js';
import { openPostgres } from '../src/db/postgres.js';
import { expectProblem } from './support/assertions.js';
import { DEFAULT_HTTP_TIMEOUTS } from '../src/server.js';
import { backends, useServer } from './support/harness.js';

// The slow-client cut-off, shortened from production's 10 s so the 408 test does not hold a worker idle;
// the mechanism (Node's headersTimeout, checked every second) is the same.
const HEADERS_TIMEOUT_MS = 2_000;

const post = (t: ReturnType<typeof useServer>, body: string | Uint8Array, headers: Record<string, string> = {}) =>
  t.fetch('/customers', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: body as BodyInit });

for (const backend of backends()) {
  describe(`hostile input on ${backend}`, () => {
    const t = useServer(backend, { httpTimeouts: { headersMs: HEADERS_TIMEOUT_MS } });

    const cases: { name: string; body: () => string | Uint8Array; status: number; code: string }[] = [
      { name: 'deeply nested JSON (10,000 levels)', body: () => `{"merchant_customer_id":"cus-deep","metadata":${'['.repeat(10_000)}${']'.repeat(10_000)}}`, status: 400, code: 'INVALID_REQUEST' },
      { name: 'a huge array within the body limit', body: () => JSON.stringify({ merchant_customer_id: 'cus-arr', metadata: Array.from({ length: 3_000 }, () => ({ key: 'k', value: 'v' })) }), status: 400, code: 'INVALID_REQUEST' },
      { name: 'an array beyond the body limit', body: () => JSON.stringify({ merchant_customer_id: 'cus-arr2', metadata: Array.from({ length: 20_000 }, () => ({ key: 'k', value: 'v' })) }), status: 413, code: 'PAYLOAD_TOO_LARGE' },
      { name: '__proto__ key', body: () => '{"merchant_customer_id":"cus-proto","__proto__":{"polluted":true}}', status: 400, code: 'INVALID_REQUEST' },
      { name: 'constructor.prototype key', body: () => '{"merchant_customer_id":"cus-ctor","constructor":{"prototype":{"polluted":true}}}', status: 400, code: 'INVALID_REQUEST' },
      { name: 'invalid UTF-8 bytes', body: () => Buffer.concat([Buffer.from('{"merchant_customer_id":"cus-'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]), status: 400, code: 'INVALID_REQUEST' },
      { name: 'a NUL character', body: () => JSON.stringify({ merchant_customer_id: 'cus-\u0000-nul' }), status: 400, code: 'INVALID_REQUEST' },
    ];

    it.each(cases)('$name → $status $code, nothing written, still serving', async ({ body, status, code }) => {
      await expectProblem(await post(t, body()), status, code);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      const health = await fetch(`${t.running.url}/healthz`);
      expect(health.status).toBe(200);
    });

    it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty'])('a path naming what every object inherits (%s) is 404, not a 500', async (name) => {
      for (const path of [`/checkout/assets/${name}`, `/v1/assets/brands/${name.toLowerCase()}.svg`]) {
        const res = await fetch(`${t.running.url}${path}`);
        expect(res.status, `${path}: ${await res.clone().text()}`).toBe(404);
      }
    });

    it('no customer was created by any hostile request', async () => {
      const rows = await t.db.query("SELECT merchant_customer_id FROM customers WHERE merchant_customer_id LIKE 'cus-%'");
      expect(rows).toEqual([]);
    });

    it('bodies over the route limit, declared or streamed, get 413 after at most the limit is read: memory stays bounded', async () => {
      const { hostname, port } = new URL(t.running.url);
      /** Raw HTTP, so the body can be far larger than anything held in memory on either side. */
      const send = (head: string, chunks: number, chunk: Buffer) =>
        new Promise<{ answer: string; written: number }>((resolve, reject) => {
          const socket = connect(Number(port), hostname);
          let answer = '';
          let written = 0;
          socket.on('data', (d) => {
            answer += d.toString();
            if (answer.includes('"code"')) socket.destroy(); // the problem body has arrived
          });
          socket.on('error', () => {}); // the server may close while we still write: that is the point
          socket.on('close', () => resolve({ answer, written }));
          socket.once('connect', async () => {
            socket.write(head);
            for (let i = 0; i < chunks && !socket.destroyed && answer === ''; i++) {
              written += chunk.length;
              if (!socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)) await new Promise((r) => socket.once('drain', r));
            }
            if (chunks > 0) socket.end(); // a declared length is answered before the body: keep the socket open
          });
          setTimeout(() => reject(new Error('no answer within 20 s')), 20_000).unref();
        });
      const auth = `public-api-key: ${t.sandbox.public_api_key}\r\nprivate-secret-key: ${t.sandbox.private_secret_key}\r\n`;
      const rssBefore = process.memoryUsage().rss;
      // Declared: 1 GB in Content-Length is refused before a byte of it is read.
      const declared = await send(`POST /v1/customers HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 1000000000\r\n${auth}connection: close\r\n\r\n`, 0, Buffer.alloc(0));
      expect(declared.answer).toMatch(/^HTTP\/1\.1 413/);
      expect(declared.answer).toContain('PAYLOAD_TOO_LARGE');
      // Streamed: up to 200 MB of chunks, cut off at the 100 kB customer limit.
      const streamed = await send(`POST /v1/customers HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n${auth}\r\n`, 3_200, Buffer.alloc(65_536, 0x20));
      expect(streamed.answer).toMatch(/^HTTP\/1\.1 413/);
      expect(streamed.written).toBeLessThan(200 * 1024 * 1024);
      expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * 1024 * 1024);
      expect((await fetch(`${t.running.url}/healthz`)).status).toBe(200);
    });

    it('a slow client that never finishes its headers gets 408 and is cut off; the server keeps serving', async () => {
      const { hostname, port } = new URL(t.running.url);
      const socket = connect(Number(port), hostname);
      await new Promise((r) => socket.once('connect', r));
      socket.write('POST /v1/customers HTTP/1.1\r\nHost: x\r\n'); // and then nothing
      const started = Date.now();
      let answer = '';
      socket.on('data', (d) => (answer += d.toString()));
      await new Promise((r) => socket.once('close', r));
      const waited = Date.now() - started;
      expect(answer).toMatch(/^HTTP\/1\.1 408/);
      // Cut off by the timeout (not at once), within it plus the 1 s check interval and some slack.
      expect(waited).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
      expect(waited).toBeLessThan(HEADERS_TIMEOUT_MS + 4_000);
      expect((await fetch(`${t.running.url}/healthz`)).status).toBe(200);
    }, 30_000);

    it('production keeps the 10 s header and 30 s request cut-offs', () => {
      expect(DEFAULT_HTTP_TIMEOUTS).toEqual({ headersMs: 10_000, requestMs: 30_000 });
      expect(t.running.server.headersTimeout).toBe(HEADERS_TIMEOUT_MS);
      expect(t.running.server.requestTimeout).toBe(DEFAULT_HTTP_TIMEOUTS.requestMs);
    });
  });
}

if (backends().includes('postgres')) {
  describe('migrations started by two processes at once', () => {
    it('apply each migration exactly once', async () => {
      const url = inject('postgresUrl')!;
      const schema = `t_${randomBytes(6).toString('hex')}`;
      const admin = await openPostgres(url, { max: 1 });
      await admin.query(`CREATE SCHEMA ${schema}`);
      const a = await openPostgres(url, { schema, max: 2 });
      const b = await openPostgres(url, { schema, max: 2 });
      try {
        const [ranA, ranB] = await Promise.all([migrate(a), migrate(b)]);
        expect([...ranA, ...ranB].sort()).toEqual(migrations.map((m) => m.version).sort());
        expect(ranA.length === 0 || ranB.length === 0).toBe(true);
        const rows = await a.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version');
        expect(rows.map((r) => r.version)).toEqual(migrations.map((m) => m.version).sort());
      } finally {
        await a.close();
        await b.close();
        await admin.query(`DROP SCHEMA ${schema} CASCADE`);
        await admin.close();
      }
    });
  });
}
