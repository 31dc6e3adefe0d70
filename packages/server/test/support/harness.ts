/**
 * Test harness: a real server on a real port with a real database, called over HTTP.
 *
 *   for (const backend of backends()) describe(backend, () => { const t = useServer(backend); … })
 *
 * PGlite databases open from a migrated image; PostgreSQL suites (when DATABASE_URL is set) each get
 * their own schema, dropped afterwards. Response validation is on: a response that breaks the spec
 * becomes a 500 and fails the test. Logs are captured so tests can check nothing sensitive is logged.
 * stop() scans every log line and every table for PANs, security codes and the secrets the run handed
 * out (sensitive-data-scan.ts) and fails the file on any finding.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, inject } from 'vitest';
import { createPayorchClient, type PayorchClient } from '@payorch/client';
import type { Database } from '../../src/db/database.js';
import { openPostgres } from '../../src/db/postgres.js';
import { loadConfig } from '../../src/platform/config.js';
import { leasePglite } from './pglite-pool.js';
import { describeFindings, scanForSensitiveData, type Secret } from './sensitive-data-scan.js';
import { createLogger } from '../../src/platform/logger.js';
import { adapterOf } from '../../src/providers/normalized-provider.js';
import { SandboxProvider } from '../../src/providers/sandbox/sandbox-provider.js';
import { startServer, type RunningServer, type StartOptions } from '../../src/server.js';

export type Backend = 'pglite' | 'postgres';

export const ADMIN_KEY = 'test-admin-key-0123456789abcdef0123456789';

/** PGlite always; PostgreSQL too when the run was given DATABASE_URL. */
export function backends(): Backend[] {
  return inject('postgresUrl') ? ['pglite', 'postgres'] : ['pglite'];
}

export interface Credentials {
  organization_id: string;
  account_id: string;
  public_api_key: string;
  private_secret_key: string;
  pci_certified: boolean;
}

export interface TestServer {
  backend: Backend;
  running: RunningServer;
  /** e.g. http://127.0.0.1:41234/v1 */
  baseUrl: string;
  db: Database;
  /** The sandbox organization (PCI certified) created at start; with SANDBOX=false, one made through the admin API. */
  sandbox: Credentials;
  /** A typed client with the sandbox credentials. */
  client: PayorchClient;
  /** Every log line the server wrote. */
  logs: string[];
  /** A client for other credentials. */
  clientFor(creds: Pick<Credentials, 'public_api_key' | 'private_secret_key'>): PayorchClient;
  /** Creates another organization through the admin API. */
  createOrganization(options?: { pciCertified?: boolean; name?: string }): Promise<Credentials>;
  /** Raw HTTP to a path under /v1 with the sandbox credentials unless headers say otherwise. */
  fetch(path: string, init?: RequestInit & { credentials_?: false }): Promise<Response>;
  /**
   * Adds a secret the teardown scan must find in no log line and no table. Secret keys and whsec_
   * secrets in responses read through `client`, `clientFor`, `fetch` and `createOrganization` are
   * remembered already.
   */
  rememberSecret(value: string, name?: string): void;
}

export interface ServerOptions {
  env?: Record<string, string>;
  /** Shorter slow-client cut-offs than production's (a 408 test need not wait 10 s). */
  httpTimeouts?: StartOptions['httpTimeouts'];
  /** Tests of database faults: the service gets this wrapper of the test database (`db` stays the plain one). */
  wrapDatabase?: (db: Database) => Database;
}

export async function openTestDatabase(backend: Backend): Promise<{ db: Database; drop: () => Promise<void> }> {
  if (backend === 'pglite') {
    // A migrated, empty database of its own, reused from an earlier file of this test process when one
    // was given back (pglite-pool.ts): a new PGlite costs ~0.85 s of CPU, emptying one ~0.15 s.
    const db = await leasePglite(async () => new Blob([await readFile(inject('pgliteImage'))]));
    return { db, drop: async () => db.close() };
  }
  const url = inject('postgresUrl')!;
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = await openPostgres(url, { max: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.close();
  const db = await openPostgres(url, { schema, max: 10 });
  return {
    db,
    drop: async () => {
      const a = await openPostgres(url, { max: 1 });
      await a.query(`DROP SCHEMA ${schema} CASCADE`);
      await a.close();
    },
  };
}

export async function startTestServer(backend: Backend, options: ServerOptions = {}): Promise<TestServer & { stop(): Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'payorch-test-'));
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    SANDBOX: 'true',
    ADMIN_API_KEY: ADMIN_KEY,
    LOG_LEVEL: 'info',
    VALIDATE_RESPONSES: 'true',
    // Tests drive reconciliation themselves (runOnce, drain): a background pass could claim a transaction
    // between a test's call and its runOnce, which then finds nothing due and the test reads PENDING.
    RECONCILIATION_INTERVAL_MS: '3600000',
    // Outside sandbox mode the vault key and the public base URL are required (no generated key file, no
    // listening address to default to).
    ...(options.env?.SANDBOX === 'false'
      ? { VAULT_ENCRYPTION_KEY: randomBytes(32).toString('base64'), PUBLIC_BASE_URL: 'https://payorch.test.example' }
      : {}),
    ...options.env,
  });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      cb();
    },
  });
  const log = createLogger(config.logLevel, sink);
  const { db, drop } = await openTestDatabase(backend);
  const running = await startServer({ config, db: options.wrapDatabase ? options.wrapDatabase(db) : db, log, ...(options.httpTimeouts ? { httpTimeouts: options.httpTimeouts } : {}) });
  // Outside sandbox mode there is no sandbox organization: a PCI-certified one is made through the admin API.
  const sandbox = config.sandbox
    ? (JSON.parse(await readFile(join(dataDir, 'sandbox-credentials.json'), 'utf8')) as Credentials)
    : await adminCreateOrganization(`${running.url}/v1`, config.adminApiKey ?? ADMIN_KEY, { name: 'Live merchant', pci_certified: true });
  const baseUrl = `${running.url}/v1`;

  const secrets: Secret[] = [];
  const rememberSecret = (value: string, name = 'a secret given to the test') => {
    if (!secrets.some((s) => s.value === value)) secrets.push({ name, value });
  };
  rememberSecret(sandbox.private_secret_key, 'the sandbox private_secret_key');
  rememberSecret(options.env?.ADMIN_API_KEY ?? ADMIN_KEY, 'ADMIN_API_KEY');
  // Outside sandbox mode no sandbox provider exists, nor its secret.
  if (running.deps.services.provider) rememberSecret(await sandboxProviderSecret(running), 'the sandbox provider notification secret');
  // Secrets the server hands out (API secret keys, webhook signing secrets) are collected from its answers.
  const observe = async (res: Response) => {
    if (!res.headers.get('content-type')?.includes('json')) return res;
    const text = await res.clone().text();
    for (const m of text.matchAll(/sk_[A-Za-z0-9_-]{43}/g)) rememberSecret(m[0], 'a private_secret_key');
    for (const m of text.matchAll(/whsec_[A-Za-z0-9+/]{43}=/g)) rememberSecret(m[0], 'a webhook signing secret');
    return res;
  };
  const observingFetch = async (input: Request, init?: RequestInit) => observe(await fetch(input, init));
  const clientFor = (c: Pick<Credentials, 'public_api_key' | 'private_secret_key'>) =>
    createPayorchClient({ baseUrl, publicApiKey: c.public_api_key, privateSecretKey: c.private_secret_key, fetch: observingFetch });

  return {
    backend,
    running,
    baseUrl,
    db,
    sandbox,
    logs,
    client: clientFor(sandbox),
    clientFor,
    async createOrganization({ pciCertified = false, name = 'Other merchant' } = {}) {
      const creds = await adminCreateOrganization(baseUrl, ADMIN_KEY, { name, pci_certified: pciCertified });
      rememberSecret(creds.private_secret_key, `the private_secret_key of ${creds.organization_id}`);
      return creds;
    },
    rememberSecret,
    async fetch(path, init = {}) {
      const headers = new Headers(init.headers);
      if (init.credentials_ !== false) {
        if (!headers.has('public-api-key')) headers.set('public-api-key', sandbox.public_api_key);
        if (!headers.has('private-secret-key')) headers.set('private-secret-key', sandbox.private_secret_key);
      }
      return observe(await fetch(`${baseUrl}${path}`, { ...init, headers }));
    },
    async stop() {
      await running.close();
      let report = '';
      try {
        // After the server (its workers and last log lines), before the database goes. A test may
        // have closed the database itself (outage tests): then only the logs can be read.
        const readable = await db.ping().catch(() => false);
        for (const key of await vaultKeys(dataDir, config.vaultEncryptionKey)) rememberSecret(key, 'a vault encryption key');
        const findings = await scanForSensitiveData({ db: readable ? db : undefined, logs, secrets });
        if (findings.length > 0) report = `${findings.length} finding(s) on ${backend}:\n${describeFindings(findings)}`;
      } finally {
        await db.close().catch(() => {}); // already closed by an outage test
        await drop();
      }
      if (report) throw new Error(`sensitive data left in the logs or the database after the tests — ${report}`);
    },
  };
}

async function adminCreateOrganization(baseUrl: string, adminKey: string, body: { name: string; pci_certified: boolean }): Promise<Credentials> {
  const res = await fetch(`${baseUrl}/admin/organizations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'admin-api-key': adminKey },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`createOrganization answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as Credentials;
}

/** The sandbox provider's notification signing secret (it signs what the provider sends; stored sealed). */
export function sandboxProviderSecret(running: RunningServer): Promise<string> {
  const provider = running.deps.services.provider && adapterOf(running.deps.services.provider);
  if (!(provider instanceof SandboxProvider)) throw new Error(`the server's provider is ${provider?.id ?? 'none (outside sandbox mode)'}, not the sandbox`);
  return provider.notificationSecret();
}

/** The vault key material the server used: VAULT_ENCRYPTION_KEY's keys, or the sandbox key file's. */
async function vaultKeys(dataDir: string, env: string | undefined): Promise<string[]> {
  if (env !== undefined) return env.split(',').map((e) => e.trim().replace(/^[^:]*:/, '')).filter(Boolean);
  try {
    const file = JSON.parse(await readFile(join(dataDir, 'vault-key.json'), 'utf8')) as { keys?: { key?: string }[] };
    return (file.keys ?? []).map((k) => String(k.key ?? '')).filter(Boolean);
  } catch {
    return [];
  }
}

/** Starts a server for the enclosing describe block and stops it afterwards. */
export function useServer(backend: Backend, options: ServerOptions = {}): TestServer {
  const holder = {} as TestServer & { stop(): Promise<void> };
  let started: (TestServer & { stop(): Promise<void> }) | undefined;
  beforeAll(async () => {
    started = await startTestServer(backend, options);
    Object.assign(holder, started);
  });
  afterAll(async () => {
    await started?.stop();
  });
  return holder;
}
