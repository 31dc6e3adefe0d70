/**
 * Data at rest (issue 12 item 4): DATA_DIR and everything in it are owner-only whatever the umask.
 *
 * The built server runs as a real process under umask 000 (the most permissive), serves real traffic
 * (customers, enrollments, payments: table files and WAL), stops; then every directory under DATA_DIR
 * must be 0700 and every file 0600. Then the tree is loosened to 0777/0666, as a data directory written
 * by an earlier version would be, and a second start must tighten it again.
 * On PGlite, DATA_DIR holds the database; on PostgreSQL it holds the sandbox credentials and vault key.
 */
import { randomUUID } from 'node:crypto';
import { chmod, lstat, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backends, type Credentials } from './support/harness.js';
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
      customer_payer: { id: customer.id }, payment_method: { type: 'CARD', detail: { card: rawCard(CARDS.approved) } },
    }, 201);
  }
}

describe.each(backends())('DATA_DIR is owner-only whatever the umask, on %s', (backend) => {
  let pdb: ProcessDatabase | undefined;
  const dirs: string[] = [];
  afterAll(async () => {
    await pdb?.drop();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('umask 000: a fresh start, traffic and a stop leave 0700 directories and 0600 files; a loosened tree is tightened on the next start', async () => {
    if (backend === 'postgres') pdb = await createProcessDatabase();
    const parent = await mkdtemp(join(tmpdir(), 'payorch-atrest-'));
    dirs.push(parent);
    const dataDir = join(parent, 'data'); // created by the server itself
    const run = async () => {
      const p = await startServerProcess({ dataDir, umask: 0o000, ...(pdb ? { databaseUrl: pdb.url } : {}) });
      try {
        const creds = JSON.parse(await readFile(join(dataDir, 'sandbox-credentials.json'), 'utf8')) as Credentials;
        await traffic(p, creds);
      } finally {
        expect(await p.stop()).toBe(0);
      }
    };

    await run();
    expect(await countFiles(dataDir)).toBeGreaterThan(backend === 'pglite' ? 500 : 1);
    expect(await looseEntries(dataDir)).toEqual([]);

    await loosen(dataDir);
    expect((await looseEntries(dataDir)).length).toBeGreaterThan(0);
    await run();
    expect(await looseEntries(dataDir)).toEqual([]);
  }, 300_000);
});
