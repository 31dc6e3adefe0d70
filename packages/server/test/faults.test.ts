/**
 * PostgreSQL going away mid-load. The service reaches PostgreSQL through a TCP proxy on loopback that
 * the test can cut (existing connections reset, new ones refused) and restore — the same failures a
 * stopped server produces, without stopping the shared server other suites use.
 */
import { randomBytes } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openPostgres } from '../src/db/postgres.js';
import { loadConfig } from '../src/platform/config.js';
import { createLogger } from '../src/platform/logger.js';
import { startServer, type RunningServer } from '../src/server.js';
import { backends } from './support/harness.js';

class CuttableProxy {
  private server: Server;
  private sockets = new Set<Socket>();
  private cut = false;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {
    this.server = createServer((client) => {
      if (this.cut) return client.destroy();
      const upstream = connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  }

  async listen() {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
  }
  down() {
    this.cut = true;
    for (const s of this.sockets) s.destroy();
  }
  up() {
    this.cut = false;
  }
  close() {
    this.down();
    return new Promise((r) => this.server.close(r));
  }
}

if (backends().includes('postgres')) {
  describe('PostgreSQL outage and recovery', () => {
    const pgUrl = new URL(inject('postgresUrl')!);
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const proxy = new CuttableProxy({ host: pgUrl.hostname, port: Number(pgUrl.port || 5432) });
    let running: RunningServer;
    let creds: { public_api_key: string; private_secret_key: string };

    beforeAll(async () => {
      const admin = await openPostgres(pgUrl.toString(), { max: 1 });
      await admin.query(`CREATE SCHEMA ${schema}`);
      await admin.close();
      await proxy.listen();
      const viaProxy = new URL(pgUrl);
      viaProxy.port = String(proxy.port);
      const db = await openPostgres(viaProxy.toString(), { schema, max: 10 });
      const config = loadConfig({ PORT: '0', SANDBOX: 'true', DATA_DIR: `/tmp/payorch-fault-${schema}`, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '0' });
      running = await startServer({ config, db, log: createLogger('silent') });
      const fs = await import('node:fs/promises');
      creds = JSON.parse(await fs.readFile(`/tmp/payorch-fault-${schema}/sandbox-credentials.json`, 'utf8'));
    });

    afterAll(async () => {
      await running?.close();
      await running?.deps.db.close();
      await proxy.close();
      const admin = await openPostgres(pgUrl.toString(), { max: 1 });
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.close();
    });

    const create = (id: string) =>
      fetch(`${running.url}/v1/customers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'public-api-key': creds.public_api_key, 'private-secret-key': creds.private_secret_key },
        body: JSON.stringify({ merchant_customer_id: id }),
      });

    it('answers 503 with Retry-After while the database is down, /readyz fails, and recovers without a restart', async () => {
      const outcomes: { id: string; status: number; retryAfter: string | null; code?: string }[] = [];
      let n = 0;
      let stop = false;
      const worker = async () => {
        while (!stop) {
          const id = `fault-${n++}`;
          const res = await create(id);
          const body = (await res.json()) as { code?: string };
          outcomes.push({ id, status: res.status, retryAfter: res.headers.get('retry-after'), code: body.code });
        }
      };
      const workers = Array.from({ length: 8 }, worker);

      await new Promise((r) => setTimeout(r, 400));
      proxy.down();
      await new Promise((r) => setTimeout(r, 1500));
      const readyDuring = await fetch(`${running.url}/readyz`);
      proxy.up();
      await new Promise((r) => setTimeout(r, 1500));
      stop = true;
      await Promise.all(workers);

      expect(readyDuring.status).toBe(503);
      expect((await fetch(`${running.url}/readyz`)).status).toBe(200);

      const statuses = new Set(outcomes.map((o) => o.status));
      expect([...statuses].every((s) => s === 201 || s === 503)).toBe(true);
      const unavailable = outcomes.filter((o) => o.status === 503);
      expect(unavailable.length).toBeGreaterThan(0);
      for (const o of unavailable) {
        expect(o.code).toBe('SERVICE_UNAVAILABLE');
        expect(o.retryAfter).toBe('2');
      }
      // Recovered: the last requests succeeded again.
      expect(outcomes.slice(-8).every((o) => o.status === 201)).toBe(true);

      // Nothing half-written: every 201 is stored; no row exists that no request asked for.
      const rows = await running.deps.db.query<{ merchant_customer_id: string }>('SELECT merchant_customer_id FROM customers');
      const stored = new Set(rows.map((r) => r.merchant_customer_id));
      for (const o of outcomes.filter((x) => x.status === 201)) expect(stored.has(o.id)).toBe(true);
      const asked = new Set(outcomes.map((o) => o.id));
      for (const id of stored) expect(asked.has(id)).toBe(true);
    });
  });
}
