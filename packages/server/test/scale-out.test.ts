/**
 * Scale-out on one PostgreSQL: two server instances (each with its own pool, as two processes would
 * have) share the idempotency records and the row locks. Same-key requests split across both have
 * exactly one effect; disputes of one chargeback with different keys have exactly one winner.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Database } from '../src/db/database.js';
import { openPostgres } from '../src/db/postgres.js';
import { loadConfig } from '../src/platform/config.js';
import { createLogger } from '../src/platform/logger.js';
import { startServer, type RunningServer } from '../src/server.js';
import { ADMIN_KEY, backends, useServer } from './support/harness.js';
import { chargedBackPayment, evidence } from './support/payments.js';
import { cardBody, createCustomer, vaultKeyOf } from './support/vault-fixtures.js';

if (backends().includes('postgres')) {
  describe('two instances on one PostgreSQL', () => {
    const t = useServer('postgres');
    let second: RunningServer;
    let secondDb: Database;
    const bases = () => [t.baseUrl, `${second.url}/v1`];
    const headers = () => ({ 'content-type': 'application/json', 'public-api-key': t.sandbox.public_api_key, 'private-secret-key': t.sandbox.private_secret_key });

    beforeAll(async () => {
      const config = loadConfig({ PORT: '0', SANDBOX: 'true', DATA_DIR: t.running.deps.config.dataDir, VAULT_ENCRYPTION_KEY: await vaultKeyOf(t), LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '0', CREDENTIAL_CACHE_SECONDS: '1' });
      // Its own pool on the same schema, as a second process would have.
      const [row] = await t.db.query<{ schema: string }>('SELECT current_schema() AS schema');
      secondDb = await openPostgres(inject('postgresUrl')!, { schema: row!.schema });
      second = await startServer({ config, db: secondDb, log: createLogger('silent') });
    });
    afterAll(async () => {
      await second?.close();
      await secondDb?.close();
    });

    /** Sends `n` copies of one request alternately to both instances, all at once. */
    const burst = (n: number, path: string, key: string, body: unknown) =>
      Promise.all(
        Array.from({ length: n }, (_, i) =>
          fetch(`${bases()[i % 2]}${path}`, { method: 'POST', headers: { ...headers(), 'x-idempotency-key': key }, body: JSON.stringify(body) }).then(async (r) => ({
            status: r.status,
            replayed: r.headers.get('idempotent-replayed') === 'true',
            body: (await r.json()) as { code?: string; vaulted_token?: string },
          })),
        ),
      );

    const expectOneEffect = (outcomes: Awaited<ReturnType<typeof burst>>, success: number) => {
      const fresh = outcomes.filter((o) => o.status === success && !o.replayed);
      const replays = outcomes.filter((o) => o.status === success && o.replayed);
      const inProcess = outcomes.filter((o) => o.status === 409 && o.body.code === 'REQUEST_IN_PROCESS');
      expect(fresh).toHaveLength(1);
      expect(fresh.length + replays.length + inProcess.length).toBe(outcomes.length);
    };

    it('50 same-key enrollments across both instances: exactly one payment method', async () => {
      const customerId = await createCustomer(t);
      const key = randomUUID();
      const outcomes = await burst(50, `/customers/${customerId}/payment-methods`, key, cardBody(t.sandbox.account_id));
      expectOneEffect(outcomes, 201);
      const rows = await t.db.query('SELECT 1 FROM payment_methods WHERE customer_id = $1', [customerId]);
      expect(rows).toHaveLength(1);
      const tokens = new Set(outcomes.filter((o) => o.status === 201).map((o) => o.body.vaulted_token));
      expect(tokens.size).toBe(1);
    });

    it('50 same-key disputes across both instances: exactly one dispute', async () => {
      const { payment, chargeback } = await chargedBackPayment(t);
      const outcomes = await burst(50, `/payments/${payment.id}/transactions/${chargeback.id}/dispute`, randomUUID(), { evidence: [evidence()] });
      expectOneEffect(outcomes, 200);
      const rows = await t.db.query('SELECT 1 FROM disputes WHERE payment_id = $1', [payment.id]);
      expect(rows).toHaveLength(1);
    });

    it('disputes of one chargeback with different keys: exactly one wins, the others 409 INVALID_STATUS', async () => {
      const { payment, chargeback } = await chargedBackPayment(t);
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          fetch(`${bases()[i % 2]}/payments/${payment.id}/transactions/${chargeback.id}/dispute`, {
            method: 'POST',
            headers: { ...headers(), 'x-idempotency-key': randomUUID() },
            body: JSON.stringify({ evidence: [evidence()] }),
          }).then(async (r) => ({ status: r.status, code: ((await r.json()) as { code?: string }).code })),
        ),
      );
      expect(outcomes.filter((o) => o.status === 200)).toHaveLength(1);
      expect(outcomes.filter((o) => o.status === 409 && o.code === 'INVALID_STATUS')).toHaveLength(9);
      const rows = await t.db.query('SELECT 1 FROM disputes WHERE payment_id = $1', [payment.id]);
      expect(rows).toHaveLength(1);
    });

    it('credentials are cached briefly: a revoked key stops at once where it was revoked and within the TTL on the other instance; a new key works at once everywhere', async () => {
      const org = await t.createOrganization();
      const list = (base: string, c: { public_api_key: string; private_secret_key: string }) =>
        fetch(`${base}/webhook-endpoints`, { headers: { 'public-api-key': c.public_api_key, 'private-secret-key': c.private_secret_key } }).then((r) => r.status);
      const admin = (method: string, path: string) => fetch(`${t.baseUrl}/admin/organizations/${org.organization_id}${path}`, { method, headers: { 'admin-api-key': ADMIN_KEY } });
      const [first, second] = bases() as [string, string];
      // Both instances have the key cached now.
      expect([await list(first, org), await list(second, org)]).toEqual([200, 200]);

      const issued = await admin('POST', '/api-keys');
      expect(issued.status).toBe(201);
      const fresh = (await issued.json()) as { public_api_key: string; private_secret_key: string };
      expect(await list(second, fresh)).toBe(200); // unknown keys are never cached: a new key works at once

      expect((await admin('DELETE', `/api-keys/${org.public_api_key}`)).status).toBe(204);
      expect(await list(first, org)).toBe(401); // the revoking instance forgets the key at once
      // The other instance trusts its cached copy for at most CREDENTIAL_CACHE_SECONDS (1 here).
      const deadline = Date.now() + 10_000;
      let status = await list(second, org);
      while (status === 200 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        status = await list(second, org);
      }
      expect(status).toBe(401);
      // A wrong secret never passes, cached or not.
      expect(await list(second, { ...fresh, private_secret_key: `${fresh.private_secret_key.slice(0, -1)}x` })).toBe(401);
    });
  });
}
