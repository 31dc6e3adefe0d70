/**
 * Issue 21 finding 2: one tenant's burst must neither drain the database pool nor hide money that moved.
 * 150 concurrent 1 BRL refunds on one payment of 100.50 BRL (pool of 10 on PostgreSQL): every answer is the
 * refund (200), "not that much left" (422 INVALID_AMOUNT) or settle-later (502 PROVIDER_UNAVAILABLE), never
 * 503 "cannot reach its database"; after reconciliation the refunds at the acquirer's ledger are exactly
 * the ones answered 200 plus the settle-later ones that settled as refunded. Meanwhile another
 * organization's GETs (credential cache off, so each one looks its key up) all succeed.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Database } from '../src/db/database.js';
import { openPostgres } from '../src/db/postgres.js';
import { loadConfig } from '../src/platform/config.js';
import { createLogger } from '../src/platform/logger.js';
import { startSandboxAcquirers, type SandboxAcquirers } from '../src/providers/sandbox/acquirers.js';
import { startServer, type RunningServer } from '../src/server.js';
import { ledgerOf } from './support/acquirers.js';
import { backends, useServer, type Credentials, type TestServer } from './support/harness.js';
import { createPayment, getPayment, paymentBody, postLifecycle } from './support/payments.js';
import { vaultKeyOf } from './support/vault-fixtures.js';

const BURST = 150;

/** A request as another organization. */
function as(t: TestServer, creds: Credentials, path: string, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  headers.set('public-api-key', creds.public_api_key);
  headers.set('private-secret-key', creds.private_secret_key);
  return t.fetch(path, { ...init, headers });
}

for (const backend of backends()) {
  describe(`a burst of refunds on one payment, on ${backend}`, () => {
    let acquirers: SandboxAcquirers;
    const env: Record<string, string> = { RECONCILIATION_INTERVAL_MS: '3600000', CREDENTIAL_CACHE_SECONDS: '0', RATE_LIMIT_PER_MINUTE: '100000' };
    beforeAll(async () => {
      acquirers = await startSandboxAcquirers();
      Object.assign(env, { SANDBOX_A_URL: acquirers.a.url, SANDBOX_B_URL: acquirers.b.url });
    });
    const t = useServer(backend, { env });
    afterAll(() => acquirers.close());

    it(`${BURST} concurrent refunds: 200, 422 or 502 only; the ledger holds exactly the answered and the settled ones; another tenant's GETs all succeed`, async () => {
      // Tenant Y, with a payment of its own to read during the burst.
      const y = await t.createOrganization({ name: 'Tenant Y', pciCertified: true });
      const customer = await as(t, y, '/customers', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ merchant_customer_id: `y-${randomUUID()}`, first_name: 'Ana', last_name: 'Lima', email: 'ana@example.com', nationality: 'BR' }),
      });
      expect(customer.status).toBe(201);
      const yCustomer = ((await customer.json()) as { id: string }).id;
      const yCreated = await as(t, y, '/payments', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() },
        body: JSON.stringify(paymentBody(t, yCustomer, { account_id: y.account_id })),
      });
      expect(yCreated.status, await yCreated.clone().text()).toBe(201);
      const yPayment = ((await yCreated.json()) as { id: string }).id;

      // Tenant X's payment and the burst.
      const payment = await createPayment(t, { amount: { currency: 'BRL', value: 100.5 } });
      const purchase = (await getPayment(t, payment.id)).transactions.find((x) => x.type === 'PURCHASE' && x.status === 'SUCCEEDED')!;
      let bursting = true;
      const yAnswers: number[] = [];
      const yLoop = (async () => {
        while (bursting) yAnswers.push((await as(t, y, `/payments/${yPayment}`)).status);
      })();
      const keys = Array.from({ length: BURST }, () => randomUUID());
      const refund = (key: string) => postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value: 1 } }, { transactionId: purchase.id, key });
      const answers = await Promise.all(
        keys.map(async (key) => {
          const res = await refund(key);
          const body = (await res.json()) as { code?: string };
          return { key, answer: res.status === 200 ? '200' : `${res.status} ${body.code ?? ''}` };
        }),
      );
      bursting = false;
      await yLoop;

      const tally = Object.fromEntries([...new Set(answers.map((a) => a.answer))].map((a) => [a, answers.filter((x) => x.answer === a).length]));
      expect(Object.keys(tally).filter((a) => !['200', '422 INVALID_AMOUNT', '502 PROVIDER_UNAVAILABLE'].includes(a)), JSON.stringify(tally)).toEqual([]);
      expect(yAnswers.length).toBeGreaterThan(0);
      expect(yAnswers.filter((s) => s !== 200), `tenant Y's GETs: ${JSON.stringify(yAnswers)}`).toEqual([]);

      // Whatever is still in flight is settled from the acquirer's word; each settle-later key then says how it ended.
      await t.db.query(`UPDATE payment_transactions SET reconcile_after = clock_timestamp() - interval '1 second' WHERE payment_id = $1 AND status = 'PENDING'`, [payment.id]);
      await t.running.deps.services.orchestration.reconciliation.runOnce();
      let settledRefunded = 0;
      for (const { key } of answers.filter((a) => a.answer.startsWith('502'))) {
        const replay = await refund(key);
        const text = await replay.text();
        expect([200, 422], text).toContain(replay.status);
        if (replay.status === 200) settledRefunded++;
      }

      const refundedAtAcquirer = (await ledgerOf(acquirers.a.url)).filter((e) => e.payment_id === payment.id && e.kind === 'REFUND' && e.status === 'APPROVED');
      const answeredRefunded = answers.filter((a) => a.answer === '200').length;
      expect(refundedAtAcquirer.length, JSON.stringify(tally)).toBe(answeredRefunded + settledRefunded);
      const after: Schemas['Payment'] = await getPayment(t, payment.id, '?transactions_history=true');
      const succeeded = after.transactions.filter((x) => x.type === 'REFUND' && x.status === 'SUCCEEDED').map((x) => x.id);
      expect(refundedAtAcquirer.map((e) => e.reference).sort()).toEqual(succeeded.sort());
      expect(after.amount.refunded).toBe(refundedAtAcquirer.length);
      expect(after.transactions.filter((x) => x.status === 'PENDING')).toEqual([]);
    }, 120_000);
  });
}

if (backends().includes('postgres')) {
  describe('a burst of refunds on one payment split across two instances on one PostgreSQL', () => {
    let acquirers: SandboxAcquirers;
    const env: Record<string, string> = { RECONCILIATION_INTERVAL_MS: '3600000', RATE_LIMIT_PER_MINUTE: '100000' };
    beforeAll(async () => {
      acquirers = await startSandboxAcquirers();
      Object.assign(env, { SANDBOX_A_URL: acquirers.a.url, SANDBOX_B_URL: acquirers.b.url });
    });
    const t = useServer('postgres', { env });
    let second: RunningServer;
    let secondDb: Database;
    beforeAll(async () => {
      // Its own pool of 10 on the same schema, as a second process would have; the same acquirers.
      const config = loadConfig({ PORT: '0', SANDBOX: 'true', DATA_DIR: t.running.deps.config.dataDir, VAULT_ENCRYPTION_KEY: await vaultKeyOf(t), LOG_LEVEL: 'silent', ...env });
      const [row] = await t.db.query<{ schema: string }>('SELECT current_schema() AS schema');
      secondDb = await openPostgres(inject('postgresUrl')!, { schema: row!.schema, max: 10 });
      second = await startServer({ config, db: secondDb, log: createLogger('silent') });
    });
    afterAll(async () => {
      await second?.close();
      await secondDb?.close();
      await acquirers.close();
    });

    it('100 refunds alternately on both: the row lock is taken NOWAIT across processes; 200, 422 or 502 only, and the ledger matches', async () => {
      const payment = await createPayment(t, { amount: { currency: 'BRL', value: 60.5 } });
      const purchase = (await getPayment(t, payment.id)).transactions.find((x) => x.type === 'PURCHASE' && x.status === 'SUCCEEDED')!;
      const bases = [t.baseUrl, `${second.url}/v1`];
      const refund = (i: number, key: string) =>
        fetch(`${bases[i % 2]}/payments/${payment.id}/transactions/${purchase.id}/refund`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'public-api-key': t.sandbox.public_api_key, 'private-secret-key': t.sandbox.private_secret_key, 'x-idempotency-key': key },
          body: JSON.stringify({ amount: { currency: 'BRL', value: 1 } }),
        });
      const answers = await Promise.all(
        Array.from({ length: 100 }, async (_, i) => {
          const key = randomUUID();
          const res = await refund(i, key);
          const body = (await res.json()) as { code?: string };
          return { i, key, answer: res.status === 200 ? '200' : `${res.status} ${body.code ?? ''}` };
        }),
      );
      const tally = Object.fromEntries([...new Set(answers.map((a) => a.answer))].map((a) => [a, answers.filter((x) => x.answer === a).length]));
      expect(Object.keys(tally).filter((a) => !['200', '422 INVALID_AMOUNT', '502 PROVIDER_UNAVAILABLE'].includes(a)), JSON.stringify(tally)).toEqual([]);

      await t.db.query(`UPDATE payment_transactions SET reconcile_after = clock_timestamp() - interval '1 second' WHERE payment_id = $1 AND status = 'PENDING'`, [payment.id]);
      await t.running.deps.services.orchestration.reconciliation.runOnce();
      let settledRefunded = 0;
      for (const { i, key } of answers.filter((a) => a.answer.startsWith('502'))) if ((await refund(i, key)).status === 200) settledRefunded++;
      const refundedAtAcquirer = (await ledgerOf(acquirers.a.url)).filter((e) => e.payment_id === payment.id && e.kind === 'REFUND' && e.status === 'APPROVED');
      expect(refundedAtAcquirer.length, JSON.stringify(tally)).toBe(answers.filter((a) => a.answer === '200').length + settledRefunded);
      expect(refundedAtAcquirer.length).toBe(60);
      expect((await getPayment(t, payment.id)).amount.refunded).toBe(60);
    }, 120_000);
  });
}
