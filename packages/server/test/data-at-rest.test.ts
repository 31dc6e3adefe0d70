/**
 * Data at rest (issue 12 item 4): DATA_DIR and everything in it are owner-only whatever the umask, and
 * every secret at rest is sealed with the vault keyring, re-sealed when the keyring rotates.
 *
 * The built server runs as a real process under umask 000 (the most permissive), serves real traffic
 * (customers, enrollments, payments: table files and WAL), stops; then every directory under DATA_DIR
 * must be 0700 and every file 0600. Then the tree is loosened to 0777/0666, as a data directory written
 * by an earlier version would be, and a second start must tighten it again.
 * On PGlite, DATA_DIR holds the database, the sandbox credentials and the vault key (on PostgreSQL only the
 * last two, written by the same code: the PGlite run covers them).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { chmod, lstat, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { migrations } from '../src/db/migrations/index.js';
import { loadConfig } from '../src/platform/config.js';
import { createLogger } from '../src/platform/logger.js';
import { startServer, type RunningServer } from '../src/server.js';
import { backends, openTestDatabase, sandboxProviderSecret, type Credentials } from './support/harness.js';
import { openConnection } from '../src/routing/connections.js';
import { describeFindings, scanForSensitiveData } from './support/sensitive-data-scan.js';
import { CARDS, rawCard } from './support/payments.js';
import { createProcessDatabase, startServerProcess, type ProcessDatabase, type ServerProcess } from './support/processes.js';

/** Every entry under `root` (itself included) whose mode lets anyone but the owner in, as `0755 pglite/base`. */
async function looseEntries(root: string): Promise<string[]> {
  const loose: string[] = [];
  const visit = async (path: string, name: string) => {
    const s = await lstat(path);
    if (s.isSymbolicLink()) return;
    const mode = s.mode & 0o777;
    if (mode !== (s.isDirectory() ? 0o700 : 0o600)) loose.push(`${mode.toString(8).padStart(4, '0')} ${name || '.'}`);
    if (s.isDirectory()) for (const e of await readdir(path)) await visit(join(path, e), name ? `${name}/${e}` : e);
  };
  await visit(root, '');
  return loose;
}

async function countFiles(root: string): Promise<number> {
  let n = 0;
  for (const e of await readdir(root, { withFileTypes: true, recursive: true })) if (e.isFile()) n++;
  return n;
}

async function loosen(root: string): Promise<void> {
  await chmod(root, 0o777);
  for (const e of await readdir(root, { withFileTypes: true, recursive: true })) {
    const path = join(e.parentPath, e.name);
    if (e.isDirectory()) await chmod(path, 0o777);
    else if (e.isFile()) await chmod(path, 0o666);
  }
}

/** Writes through the API: a customer, an enrolled card and a payment (table files, indexes, WAL). */
async function traffic(p: ServerProcess, creds: Credentials): Promise<void> {
  const headers = { 'public-api-key': creds.public_api_key, 'private-secret-key': creds.private_secret_key, 'content-type': 'application/json' };
  const post = async (path: string, body: unknown, status: number) => {
    const res = await fetch(`${p.baseUrl}${path}`, { method: 'POST', headers: { ...headers, 'x-idempotency-key': randomUUID() }, body: JSON.stringify(body) });
    const text = await res.text();
    expect(res.status, text).toBe(status);
    return JSON.parse(text) as { id: string };
  };
  for (let i = 0; i < 3; i++) {
    const customer = await post('/customers', { merchant_customer_id: `cus-${randomUUID()}`, first_name: 'Maria' }, 201);
    await post(`/customers/${customer.id}/payment-methods`, { account_id: creds.account_id, country: 'BR', type: 'CARD', card_data: rawCard(CARDS.approved) }, 201);
    await post('/payments', {
      account_id: creds.account_id, description: 'Order', country: 'BR', merchant_order_id: `ORDER-${i}`, amount: { currency: 'BRL', value: 10 },
      customer_payer: { id: customer.id }, payment_method: { type: 'CARD', detail: { card: { card_data: rawCard(CARDS.approved) } } },
    }, 201);
  }
}

// Once, on PGlite: there DATA_DIR holds the database as well as the sandbox credentials and the vault key
// file, so a PostgreSQL run (DATA_DIR with only those two files, written by the same code) would prove a
// subset of the same thing at the cost of another process start.
describe('DATA_DIR is owner-only whatever the umask, on pglite', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('umask 000: a fresh start, traffic and a stop leave 0700 directories and 0600 files; a loosened tree is tightened on the next start', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'payorch-atrest-'));
    dirs.push(parent);
    const dataDir = join(parent, 'data'); // created by the server itself
    const run = async () => {
      const p = await startServerProcess({ dataDir, umask: 0o000 });
      try {
        const creds = JSON.parse(await readFile(join(dataDir, 'sandbox-credentials.json'), 'utf8')) as Credentials;
        await traffic(p, creds);
      } finally {
        expect(await p.stop()).toBe(0);
      }
    };

    await run();
    expect(await countFiles(dataDir)).toBeGreaterThan(500);
    expect(await looseEntries(dataDir)).toEqual([]);

    await loosen(dataDir);
    expect((await looseEntries(dataDir)).length).toBeGreaterThan(0);
    await run();
    expect(await looseEntries(dataDir)).toEqual([]);
  }, 300_000);
});

/**
 * Every secret at rest is sealed with the vault keyring, and rotating the keyring re-seals all of them:
 * a start with `k2:…,k1:…` moves every sealed value (PANs, bank details, webhook secrets, the provider's
 * notification secret, the wrapped fingerprint root) under k2, after which a start with k2 alone serves
 * everything as before. A provider secret stored in clear by an earlier version (before migration 0007)
 * is sealed by the first start and keeps its value.
 */
describe.each(backends())('secrets at rest and keyring rotation on %s', (backend) => {
  const k1 = `k1:${randomBytes(32).toString('base64')}`;
  const k2 = `k2:${randomBytes(32).toString('base64')}`;
  const legacySecret = `whsec_${randomBytes(32).toString('base64')}`;
  let db: Database;
  let drop: () => Promise<void>;
  let dataDir: string;
  beforeAll(async () => {
    ({ db, drop } = await openTestDatabase(backend));
    dataDir = await mkdtemp(join(tmpdir(), 'payorch-rotation-'));
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const start = (key: string) =>
    startServer({
      config: loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, SANDBOX: 'true', VAULT_ENCRYPTION_KEY: key, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '0' }),
      db,
      log: createLogger('silent'),
    });
  const api = async (running: RunningServer, method: string, path: string, body: unknown, status: number) => {
    const creds = JSON.parse(await readFile(join(dataDir, 'sandbox-credentials.json'), 'utf8')) as Credentials;
    const res = await fetch(`${running.url}/v1${path}`, {
      method,
      headers: {
        'public-api-key': creds.public_api_key, 'private-secret-key': creds.private_secret_key, 'content-type': 'application/json', 'x-idempotency-key': randomUUID(),
      },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    expect(res.status, `${method} ${path}: ${text}`).toBe(status);
    return Object.assign(JSON.parse(text) as Record<string, unknown>, { creds });
  };
  /** Every key id a sealed value of this database names, per table column. */
  const sealedKeyIds = async () =>
    db.query<{ what: string; key_id: string }>(
      `SELECT DISTINCT 'pan' AS what, pan_key_id AS key_id FROM payment_methods WHERE pan_key_id IS NOT NULL
       UNION SELECT DISTINCT 'details', details_key_id FROM payment_methods WHERE details_key_id IS NOT NULL
       UNION SELECT DISTINCT 'data key', key_id FROM payment_method_keys
       UNION SELECT DISTINCT 'webhook secret', key_id FROM webhook_endpoint_secrets
       UNION SELECT DISTINCT 'provider secret', key_id FROM provider_secrets
       UNION SELECT DISTINCT 'connection credentials', key_id FROM provider_connections
       UNION SELECT DISTINCT 'wrapped fingerprint root', wrapped_key_id FROM vault_keys WHERE wrapped_key_id IS NOT NULL
       ORDER BY 1`,
    );

  it('migration 0007 applies over a clear provider secret and again without effect', async () => {
    // The schema as an earlier version left it: migrations up to 0006 and the provider secret in clear.
    // (A PostgreSQL suite gets an empty schema of its own; the PGlite image is migrated: start it over.)
    if (backend === 'pglite') await db.exec('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
    expect(await db.query('SELECT 1 FROM pg_tables WHERE schemaname = current_schema()')).toEqual([]);
    const before = migrations.filter((m) => m.version < '0007');
    expect(await migrate(db, before)).toHaveLength(before.length);
    await db.query("INSERT INTO provider_secrets (provider_id, secret) VALUES ('sandbox', $1)", [legacySecret]);
    expect(await migrate(db)).toContain('0007_sealed_secrets');
    const rerun = migrations.find((m) => m.version === '0007_sealed_secrets')!;
    await db.exec(rerun.sql); // idempotent
    expect(await db.query('SELECT secret FROM provider_secrets')).toEqual([{ secret: legacySecret }]);
  });

  it('k1: the clear provider secret is sealed at start (same value); cards, details and webhook secrets are sealed under k1', async () => {
    const running = await start(k1);
    try {
      expect(await sandboxProviderSecret(running)).toBe(legacySecret);
      expect(await db.query('SELECT secret, key_id FROM provider_secrets')).toEqual([{ secret: null, key_id: 'k1' }]);
      const customer = await api(running, 'POST', '/customers', { merchant_customer_id: 'cus-rotation' }, 201);
      const card = await api(running, 'POST', `/customers/${String(customer.id)}/payment-methods`, { account_id: customer.creds.account_id, country: 'BR', type: 'CARD', card_data: rawCard(CARDS.approved) }, 201);
      await api(running, 'POST', `/customers/${String(customer.id)}/payment-methods`, {
        account_id: customer.creds.account_id, country: 'US', type: 'ACH_ENROLLMENT',
        payment_method: { detail: { bank_transfer: { bank_account: '990011223344', bank_name: 'First Bank' } } },
      }, 201);
      await api(running, 'POST', '/webhook-endpoints', { url: 'https://merchant.example.com/hooks', events: ['payment.succeeded'] }, 201);
      fingerprint = (card.card_data as { fingerprint: string }).fingerprint;
      customerId = String(customer.id);
      // Cards and details are sealed under their own data keys, which the keyring wraps.
      expect(await sealedKeyIds()).toEqual([
        ...['connection credentials', 'data key'].map((what) => ({ what, key_id: 'k1' })),
        ...['details', 'pan'].map((what) => ({ what, key_id: 'record-key:v1' })),
        ...['provider secret', 'webhook secret', 'wrapped fingerprint root'].map((what) => ({ what, key_id: 'k1' })),
      ]);
    } finally {
      await running.close();
    }
  });
  let fingerprint = '';
  let customerId = '';

  it('k2,k1: the start re-seals every sealed value under k2', async () => {
    const running = await start(`${k2},${k1}`);
    await running.close();
    // Cards and details are sealed under their own data keys, which the keyring wraps.
      expect(await sealedKeyIds()).toEqual([
        ...['connection credentials', 'data key'].map((what) => ({ what, key_id: 'k2' })),
        ...['details', 'pan'].map((what) => ({ what, key_id: 'record-key:v1' })),
        ...['provider secret', 'webhook secret', 'wrapped fingerprint root'].map((what) => ({ what, key_id: 'k2' })),
      ]);
  });

  it('k2 alone: k1 is gone and everything still works (card payment, same fingerprint, provider and webhook secrets); nothing in clear', async () => {
    const running = await start(k2);
    try {
      expect(await sandboxProviderSecret(running)).toBe(legacySecret);
      const [token] = await db.query<{ vaulted_token: string }>("SELECT vaulted_token FROM payment_methods WHERE type = 'CARD'");
      const creds = JSON.parse(await readFile(join(dataDir, 'sandbox-credentials.json'), 'utf8')) as Credentials;
      const payment = await api(running, 'POST', '/payments', {
        account_id: creds.account_id, description: 'After rotation', country: 'BR', merchant_order_id: 'ORDER-ROT', amount: { currency: 'BRL', value: 10 },
        customer_payer: { id: customerId }, payment_method: { type: 'CARD', vaulted_token: token!.vaulted_token },
      }, 201);
      expect(payment.status).toBe('SUCCEEDED');
      const again = await api(running, 'POST', `/customers/${customerId}/payment-methods`, { account_id: creds.account_id, country: 'BR', type: 'CARD', card_data: rawCard(CARDS.approved) }, 201);
      expect((again.card_data as { fingerprint: string }).fingerprint).toBe(fingerprint);
      const [row] = await db.query<{ id: string; endpoint_id: string; key_id: string; ciphertext: Uint8Array; iv: Uint8Array; tag: Uint8Array }>(
        'SELECT id, endpoint_id, key_id, ciphertext, iv, tag FROM webhook_endpoint_secrets',
      );
      expect(running.deps.services.webhooks.rules.secrets.open(row!.endpoint_id, row!.id, { ...row!, keyId: row!.key_id })).toMatch(/^whsec_/);
      const webhookSecret = running.deps.services.webhooks.rules.secrets.open(row!.endpoint_id, row!.id, { ...row!, keyId: row!.key_id });
      // The sandbox organization's connection credentials, re-sealed under k2, still open.
      const connections = await db.query<{ id: string }>('SELECT id FROM provider_connections WHERE organization_id = $1', [creds.organization_id]);
      expect(connections).toHaveLength(2);
      for (const c of connections) {
        const opened = await openConnection(db, running.deps.services.connectionBox, creds.organization_id, c.id);
        expect(Object.keys(opened!.context.credentials).length).toBeGreaterThan(0);
      }
      const findings = await scanForSensitiveData({
        db,
        secrets: [
          { name: 'the provider secret', value: legacySecret },
          { name: 'the webhook secret', value: webhookSecret },
          { name: 'k1', value: k1.slice(3) },
          { name: 'k2', value: k2.slice(3) },
          { name: 'the sandbox private key', value: creds.private_secret_key },
        ],
      });
      expect(describeFindings(findings)).toBe('');
    } finally {
      await running.close();
    }
  });
});
