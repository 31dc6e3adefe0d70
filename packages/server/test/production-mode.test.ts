/**
 * Outside sandbox mode no sandbox provider exists (issue 21, finding 1). A service started with
 * SANDBOX=false (and PUBLIC_BASE_URL) once gave every new organization the SANDBOX_A / SANDBOX_B
 * connections and a CARD routing, answered card payments 201 SUCCEEDED, and ran the sandbox acquirers
 * with their unauthenticated /_sandbox/faults and /_sandbox/ledger. Here:
 * - the provider registry holds no sandbox provider and no acquirer listens (the API is the only server
 *   the start opens);
 * - an organization (and an account) made through the admin API has no connection and no routing, and a
 *   card payment answers 422 NO_ROUTE with nothing written;
 * - a database that got sandbox connections (seeded in sandbox mode, or given them by the bug) is repaired
 *   at start: its sandbox connections are disabled, one structured log line per organization says what was
 *   done, and nothing can make them usable again: payments answer NO_ROUTE, enabling one or naming one in
 *   a routing is refused (422), a follow-up of a payment made through one answers 422 PROVIDER_NOT_AVAILABLE,
 *   the verify of an enrollment answers 422 NO_ROUTE, the sandbox notification endpoint is a 404.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import type { Database } from '../src/db/database.js';
import { loadConfig } from '../src/platform/config.js';
import { createLogger } from '../src/platform/logger.js';
import { addOrganizationDefaults } from '../src/routing/service.js';
import { CONNECTORS } from '../src/providers/connectors.js';
import { adapterOf } from '../src/providers/normalized-provider.js';
import type { SandboxProvider } from '../src/providers/sandbox/sandbox-provider.js';
import { startServer, type RunningServer } from '../src/server.js';
import { expectProblem } from './support/assertions.js';
import { ADMIN_KEY, backends, openTestDatabase, useServer, type Credentials, type TestServer } from './support/harness.js';
import { CARDS, chargebackNotification, paymentBody, postNotification, postPayment, rawCard, signedNotification } from './support/payments.js';

/** The cards the review paid with: Stripe's and Yuno's approved test cards, and the sandbox's failover card. */
const TEST_CARDS = ['4242424242424242', CARDS.approved, '4111111111111111', CARDS.providerError];

type Api = (path: string, init?: { method?: string; body?: unknown; key?: string }) => Promise<Response>;

function apiFor(baseUrl: string, creds: Pick<Credentials, 'public_api_key' | 'private_secret_key'>): Api {
  return (path, init = {}) =>
    fetch(`${baseUrl}${path}`, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: {
        'content-type': 'application/json',
        'public-api-key': creds.public_api_key,
        'private-secret-key': creds.private_secret_key,
        'x-idempotency-key': init.key ?? randomUUID(),
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
}

async function json<T>(res: Response, status: number): Promise<T> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as T;
}

async function adminPost<T>(baseUrl: string, path: string, body: unknown): Promise<T> {
  const res = await fetch(`${baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'admin-api-key': ADMIN_KEY }, body: JSON.stringify(body) });
  return json<T>(res, 201);
}

const count = async (db: Database, sql: string, params: unknown[] = []) => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM (${sql}) x`, params))[0]!.n;

/** A payment body for `creds` (account, customer, raw card) without a TestServer. */
async function cardPayment(api: Api, accountId: string, card: string) {
  const customer = await json<{ id: string }>(await api('/customers', { body: { merchant_customer_id: `cus-${randomUUID()}` } }), 201);
  const body = paymentBody({ sandbox: { account_id: accountId } } as TestServer, customer.id, { card });
  return body;
}

/** Starts the service on `db` (not closed by close()); its log lines are collected, and its listening servers counted. */
async function start(db: Database, env: Record<string, string>): Promise<{ running: RunningServer; logs: string[]; listens: number }> {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      cb();
    },
  });
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', ADMIN_API_KEY: ADMIN_KEY, LOG_LEVEL: 'info', VALIDATE_RESPONSES: 'true', ...env });
  const listen = vi.spyOn(Server.prototype, 'listen');
  try {
    const running = await startServer({ config, db, log: createLogger('info', sink) });
    return { running, logs, listens: listen.mock.calls.length };
  } finally {
    listen.mockRestore();
  }
}

for (const backend of backends()) {
  describe(`production mode (SANDBOX=false) on ${backend}`, () => {
    const t = useServer(backend, { env: { SANDBOX: 'false' } });

    it('no sandbox provider is registered, and the service is the only server its start opens', async () => {
      // Only the real providers' connectors (registered in every mode): no sandbox one.
      expect(t.running.deps.services.providers.ids()).toEqual(CONNECTORS.map((c) => c.id));
      for (const id of ['SANDBOX_A', 'SANDBOX_B', 'SANDBOX']) expect(t.running.deps.services.providers.get(id)).toBeUndefined();
      expect(t.running.deps.services.provider).toBeUndefined();
      // The acquirers' routes exist nowhere here, and the sandbox's notification endpoint is unknown.
      for (const path of ['/_sandbox/faults', '/_sandbox/ledger']) expect((await fetch(`${t.running.url}${path}`)).status).toBe(404);
      const notification = chargebackNotification({ id: randomUUID(), amount: { value: 1 }, transactions: [{ provider_data: { transaction_id: 'sbx_txn_1' } }] } as never);
      const signed = await signedNotification(t, notification, { secret: `whsec_${randomBytes(32).toString('base64')}` });
      await expectProblem(await postNotification(t, signed), 404, 'NOT_FOUND');

      const { db, drop } = await openTestDatabase(backend);
      try {
        const second = await start(db, { SANDBOX: 'false', PUBLIC_BASE_URL: 'https://pay.example.com', VAULT_ENCRYPTION_KEY: randomBytes(32).toString('base64'), DATA_DIR: await mkdtemp(join(tmpdir(), 'payorch-prod-')) });
        await second.running.close();
        expect(second.listens).toBe(1);
      } finally {
        await db.close();
        await drop();
      }
    });

    it('an organization and an account made through the admin API have no connection and no routing', async () => {
      const org = await t.createOrganization({ pciCertified: true });
      const api = apiFor(t.baseUrl, org);
      expect(await json(await api('/connections'), 200)).toEqual([]);
      expect(await json(await api(`/routing?account_id=${org.account_id}`), 200)).toEqual([]);
      const account = await adminPost<{ account_id: string }>(t.baseUrl, `/admin/organizations/${org.organization_id}/accounts`, { name: 'Second store' });
      expect(await json(await api(`/routing?account_id=${account.account_id}`), 200)).toEqual([]);
      expect(await count(t.db, 'SELECT 1 FROM provider_connections WHERE organization_id = $1', [org.organization_id])).toBe(0);
      expect(await count(t.db, 'SELECT 1 FROM routings WHERE organization_id = $1', [org.organization_id])).toBe(0);
    });

    it.each(TEST_CARDS)('a payment with card %s answers 422 NO_ROUTE and writes nothing', async (card) => {
      const org = await t.createOrganization({ pciCertified: true });
      const api = apiFor(t.baseUrl, org);
      const body = await cardPayment(api, org.account_id, card);
      const before = await count(t.db, 'SELECT 1 FROM payments');
      await expectProblem(await api('/payments', { body }), 422, 'NO_ROUTE');
      expect(await count(t.db, 'SELECT 1 FROM payments')).toBe(before);
      expect(await count(t.db, 'SELECT 1 FROM payment_transactions')).toBe(0);
    });

    it('lists no sandbox provider, and a connection to one is refused 422 PROVIDER_NOT_AVAILABLE with nothing stored', async () => {
      const org = await t.createOrganization({ pciCertified: true });
      const api = apiFor(t.baseUrl, org);
      const providers = await json<{ provider_id: string }[]>(await api('/providers'), 200);
      expect(providers.map((p) => p.provider_id)).toEqual(t.running.deps.services.providers.ids());
      for (const p of providers) expect(p.provider_id).not.toMatch(/^SANDBOX/);
      const refused = await expectProblem(await api('/connections', { body: { provider_id: 'SANDBOX_A', name: 'A', environment: 'TEST' } }), 422, 'PROVIDER_NOT_AVAILABLE');
      expect(refused.errors).toEqual([{ path: '/body/provider_id', message: 'SANDBOX_A is not available in this service' }]);
      expect(await count(t.db, 'SELECT 1 FROM provider_connections WHERE organization_id = $1', [org.organization_id])).toBe(0);
    });

    it('the sandbox organization the harness made pays nothing either, and a card enrollment with verify answers 422 NO_ROUTE', async () => {
      await expectProblem(await postPayment(t, paymentBody(t, (await json<{ id: string }>(await t.fetch('/customers', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ merchant_customer_id: `c-${randomUUID()}` }) }), 201)).id)), 422, 'NO_ROUTE');
      const api = apiFor(t.baseUrl, t.sandbox);
      const customer = await json<{ id: string }>(await api('/customers', { body: { merchant_customer_id: `cus-${randomUUID()}` } }), 201);
      const before = await count(t.db, 'SELECT 1 FROM payment_methods');
      const enroll = await api(`/customers/${customer.id}/payment-methods`, {
        body: { account_id: t.sandbox.account_id, country: 'BR', type: 'CARD', verify: { vault_on_success: false }, card_data: rawCard(CARDS.approved) },
      });
      await expectProblem(enroll, 422, 'NO_ROUTE');
      expect(await count(t.db, 'SELECT 1 FROM payment_methods')).toBe(before);
    });
  });

  describe(`a database with sandbox connections started in production mode on ${backend}`, () => {
    it('gets them disabled and logged at start; nothing can route through them again', async () => {
      const { db, drop } = await openTestDatabase(backend);
      try {
        // Seeded in sandbox mode: the sandbox organization, a second one, and a payment through SANDBOX_A.
        const sandboxDir = await mkdtemp(join(tmpdir(), 'payorch-seed-'));
        const seeded = await start(db, { SANDBOX: 'true', DATA_DIR: sandboxDir });
        expect(seeded.listens).toBe(3); // the API and the two acquirers: what production must not open
        const sandboxUrl = `${seeded.running.url}/v1`;
        const first = JSON.parse(await readFile(join(sandboxDir, 'sandbox-credentials.json'), 'utf8')) as Credentials;
        const second = await adminPost<Credentials>(sandboxUrl, '/admin/organizations', { name: 'Second', pci_certified: true });
        const paid = await json<{ id: string; transactions: { id: string } }>(
          await apiFor(sandboxUrl, first)('/payments', { body: await cardPayment(apiFor(sandboxUrl, first), first.account_id, CARDS.approved) }),
          201,
        );
        // A second payment whose attempt was left with an unknown outcome when sandbox mode stopped.
        const unknown = await json<{ id: string; transactions: { id: string } }>(
          await apiFor(sandboxUrl, first)('/payments', { body: await cardPayment(apiFor(sandboxUrl, first), first.account_id, CARDS.approved) }),
          201,
        );
        const box = seeded.running.deps.services.connectionBox;
        const sandboxSecret = await (adapterOf(seeded.running.deps.services.provider!) as SandboxProvider).notificationSecret();
        await seeded.running.close();
        await db.query("UPDATE payment_transactions SET status = 'PENDING', reconcile_after = clock_timestamp() - interval '1 second' WHERE id = $1", [unknown.transactions.id]);
        // A third organization given the sandbox defaults the way the bug gave them in production mode.
        const [bugOrg] = await db.query<{ id: string }>("INSERT INTO organizations (id, name, pci_certified) VALUES ($1, 'Bug', true) RETURNING id", [randomUUID()]);
        await db.query("INSERT INTO accounts (id, organization_id, name) VALUES ($1, $2, 'Bug')", [randomUUID(), bugOrg!.id]);
        await addOrganizationDefaults(db, box, bugOrg!.id);

        const key = JSON.parse(await readFile(join(sandboxDir, 'vault-key.json'), 'utf8')) as { keys: { id: string; key: string }[] };
        const production = { SANDBOX: 'false', RECONCILIATION_INTERVAL_MS: '3600000', PUBLIC_BASE_URL: 'https://pay.example.com', VAULT_ENCRYPTION_KEY: key.keys.map((k) => `${k.id}:${k.key}`).join(','), DATA_DIR: await mkdtemp(join(tmpdir(), 'payorch-prod-')) };
        const prod = await start(db, production);
        try {
          expect(prod.listens).toBe(1);
          const repaired = prod.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === 'connections_disabled');
          expect(repaired.map((l) => l.organizationId).sort()).toEqual([first.organization_id, second.organization_id, bugOrg!.id].sort());
          for (const line of repaired) {
            expect(line.level).toBe(40); // warn
            expect(line.connections).toHaveLength(2);
            expect(line.routings).toHaveLength(10); // one per payment method the sandbox serves (CARD and nine others)
            expect(String(line.msg)).toMatch(/disabled \(the sandbox providers exist in sandbox mode only\)/);
          }
          expect(await count(db, 'SELECT 1 FROM provider_connections WHERE enabled')).toBe(0);

          const url = `${prod.running.url}/v1`;
          const api = apiFor(url, first);
          const connections = await json<{ connection_id: string; provider_id: string; enabled: boolean }[]>(await api('/connections'), 200);
          expect(connections.map((c) => [c.provider_id, c.enabled]).sort()).toEqual([['SANDBOX_A', false], ['SANDBOX_B', false]]);

          for (const org of [first, second]) {
            const payments = await count(db, 'SELECT 1 FROM payments');
            const orgApi = apiFor(url, org);
            await expectProblem(await orgApi('/payments', { body: await cardPayment(orgApi, org.account_id, '4242424242424242') }), 422, 'NO_ROUTE');
            expect(await count(db, 'SELECT 1 FROM payments')).toBe(payments);
          }

          // Enabling one again is refused, and it stays disabled.
          const a = connections.find((c) => c.provider_id === 'SANDBOX_A')!;
          const enable = await expectProblem(await api(`/connections/${a.connection_id}`, { method: 'PATCH', body: { enabled: true } }), 422, 'PROVIDER_NOT_AVAILABLE');
          expect(String(enable.detail)).toMatch(/SANDBOX_A.*sandbox mode/);
          expect(await count(db, 'SELECT 1 FROM provider_connections WHERE enabled')).toBe(0);
          // Other changes to it are still allowed (renaming, keeping it disabled).
          await json(await api(`/connections/${a.connection_id}`, { method: 'PATCH', body: { name: 'old sandbox' } }), 200);

          // A routing naming a sandbox connection is refused, created or changed.
          const [routing] = await json<{ id: string }[]>(await api(`/routing?account_id=${first.account_id}`), 200);
          const route = { steps: [{ index: 1, provider_id: 'SANDBOX_A', connection_id: a.connection_id }] };
          const account = await adminPost<{ account_id: string }>(url, `/admin/organizations/${first.organization_id}/accounts`, { name: 'New store' });
          expect(await json(await api(`/routing?account_id=${account.account_id}`), 200)).toEqual([]);
          const created = await expectProblem(await api('/routing', { body: { account_id: account.account_id, payment_method: 'CARD', name: 'Card', default_route: route } }), 422, 'ROUTING_VALIDATION_FAILED');
          expect(created.errors).toEqual([{ path: 'default_route.steps[0].provider_id', message: expect.stringMatching(/SANDBOX_A is not available.*sandbox mode/) }]);
          await expectProblem(await api(`/routing/${routing!.id}`, { method: 'PATCH', body: { default_route: route } }), 422, 'ROUTING_VALIDATION_FAILED');

          // A chargeback signed with the sandbox's own secret: no sandbox provider receives it here.
          const retrieved = await json<Parameters<typeof chargebackNotification>[0]>(await api(`/payments/${paid.id}`), 200);
          const signed = await signedNotification({} as TestServer, chargebackNotification(retrieved), { secret: sandboxSecret });
          const notified = await fetch(`${url}/providers/sandbox/notifications`, { method: 'POST', headers: signed.headers, body: signed.raw });
          await expectProblem(notified, 404, 'NOT_FOUND');

          // Reconciliation cannot ask a provider that does not run here: the attempt stays pending, said once per pass.
          expect(await prod.running.deps.services.orchestration.reconciliation.runOnce()).toEqual({ settled: 0, postponed: 1 });
          expect((await db.query<{ status: string }>('SELECT status FROM payment_transactions WHERE id = $1', [unknown.transactions.id]))[0]!.status).toBe('PENDING');
          const reconciliation = prod.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.transactionId === unknown.transactions.id);
          expect(reconciliation.map((l) => [l.level, l.event, l.providerId])).toEqual([[40, 'reconciliation_provider_not_available', 'SANDBOX_A']]);

          // The payment made in sandbox mode: a refund cannot reach its provider (422, nothing reserved), never a 500.
          const transactions = await count(db, 'SELECT 1 FROM payment_transactions');
          const refund = await api(`/payments/${paid.id}/transactions/${paid.transactions.id}/refund`, { body: { amount: { currency: 'BRL', value: 1 } } });
          await expectProblem(refund, 422, 'PROVIDER_NOT_AVAILABLE');
          expect(await count(db, 'SELECT 1 FROM payment_transactions')).toBe(transactions);
        } finally {
          await prod.running.close();
        }

        // The repair is done once: the next start finds nothing to repair.
        const again = await start(db, production);
        await again.running.close();
        expect(again.logs.filter((l) => l.includes('connections_disabled'))).toEqual([]);
      } finally {
        await db.close();
        await drop();
      }
    });
  });
}
