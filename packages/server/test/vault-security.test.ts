/**
 * What a PCI assessor checks in the vault, against real databases: no PAN and no security code in any
 * table or log line after enrollments; the sandbox key file (0600, generated once, reused); key rotation
 * with per-row key ids; a start that fails clearly when keys are missing or wrong; ciphertexts bound
 * to their row; and the statuses only a special server can show (429, 503).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, inject, it } from 'vitest';
import type { Database } from '../src/db/database.js';
import { leasePglite } from './support/pglite-pool.js';
import { openPostgres } from '../src/db/postgres.js';
import { loadConfig } from '../src/platform/config.js';
import { createLogger } from '../src/platform/logger.js';
import { startServer, type RunningServer } from '../src/server.js';
import { loadCardForPayment } from '../src/vault/service.js';
import { expectProblem } from './support/assertions.js';
import { ADMIN_KEY, backends, useServer, type Backend, type Credentials } from './support/harness.js';
import { AMEX, cardBody, createCustomer, enroll, enrollOk, MASTERCARD_OK, vaultKeyOf, VISA_INSUFFICIENT_FUNDS, VISA_OK } from './support/vault-fixtures.js';

/** Removes what is legitimately digit-rich and random (hex blobs, hashes, UUIDs, timestamps) before looking for a CVV. */
function withoutNoise(text: string): string {
  return text
    .replace(/\\\\x[0-9a-f]+/gi, ' ')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, ' ')
    .replace(/[0-9a-f]{16,}/gi, ' ')
    .replace(/[A-Za-z0-9_-]{20,}/g, ' ')
    .replace(/\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}(:\d{2})?)?/g, ' ');
}

async function everyRowAsText(db: Database): Promise<{ table: string; text: string }[]> {
  const tables = await db.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
  );
  const out: { table: string; text: string }[] = [];
  for (const { table_name } of tables) {
    const rows = await db.query<{ text: string }>(`SELECT row_to_json(x)::text AS text FROM "${table_name}" x`);
    for (const r of rows) out.push({ table: table_name, text: r.text });
  }
  return out;
}

for (const backend of backends()) {
  describe(`no card data at rest or in logs on ${backend}`, () => {
    const t = useServer(backend, { env: { LOG_LEVEL: 'trace' } });

    it('after enrollments of every kind, no table and no log line holds a PAN or a security code', async () => {
      const customerId = await createCustomer(t);
      const account = t.sandbox.account_id;
      const cards = [
        { number: VISA_OK, security_code: '864' },
        { number: MASTERCARD_OK, security_code: '519' },
        { number: AMEX, security_code: '9173' },
        { number: VISA_INSUFFICIENT_FUNDS, security_code: '702' },
      ];
      for (const card of cards) {
        await enrollOk(t, customerId, cardBody(account, card, { verify: { vault_on_success: true, currency: 'BRL' } }));
      }
      // Refused and replayed requests must not leak either.
      await expectProblem(await enroll(t, customerId, cardBody(account, { number: '4507990000000003', security_code: '431' })), 422, 'INVALID_CARD');
      const key = randomUUID();
      await enrollOk(t, customerId, cardBody(account, { number: '6062825624254001', security_code: '358' }), { key });
      await enrollOk(t, customerId, cardBody(account, { number: '6062825624254001', security_code: '358' }), { key });
      await enrollOk(t, customerId, {
        account_id: account,
        country: 'US',
        type: 'ACH_ENROLLMENT',
        payment_method: { detail: { bank_transfer: { bank_account: '990011223344', bank_name: 'First Bank' } } },
      });

      const pans = [...cards.map((c) => c.number), '4507990000000003', '6062825624254001'];
      const codes = ['864', '519', '9173', '702', '431', '358'];
      const rows = await everyRowAsText(t.db);
      expect(rows.some((r) => r.table === 'payment_methods')).toBe(true);
      expect(rows.some((r) => r.table === 'idempotency_keys')).toBe(true);
      const logs = t.logs.join('\n');
      expect(logs).toContain('enrollment verify answered');
      for (const source of [...rows.map((r) => ({ where: `table ${r.table}`, text: r.text })), { where: 'logs', text: logs }]) {
        for (const pan of pans) {
          expect(source.text, `${pan} in ${source.where}`).not.toContain(pan);
          // Nor the PAN's bytes stored as bytea.
          expect(source.text, `${pan} bytes in ${source.where}`).not.toContain(Buffer.from(pan).toString('hex'));
        }
        expect(source.text, `bank account in ${source.where}`).not.toContain('990011223344');
        expect(source.text).not.toMatch(/"security_code"/);
        const clean = withoutNoise(source.text);
        for (const code of codes) expect(clean, `security code ${code} in ${source.where}`).not.toMatch(new RegExp(`(^|\\D)${code}(\\D|$)`));
      }
      // The truncated forms PCI DSS allows are what is kept.
      // The PAN is sealed under the method's own data key, which the keyring wraps.
      const stored = await t.db.query<{ card_iin: string; card_lfd: string; pan_key_id: string; data_key_id: string }>(
        `SELECT card_iin, card_lfd, pan_key_id, k.key_id AS data_key_id
           FROM payment_methods m JOIN payment_method_keys k ON k.payment_method_id = m.id WHERE customer_id = $1 AND card_brand = 'AMEX'`,
        [customerId],
      );
      expect(stored).toEqual([{ card_iin: '378282', card_lfd: '0005', pan_key_id: 'record-key:v1', data_key_id: 'k1' }]);
    });

    it('the sandbox key file is generated once with mode 0600 and holds a 32-byte key', async () => {
      const file = join(t.running.deps.config.dataDir, 'vault-key.json');
      const info = await stat(file);
      expect(info.mode & 0o777).toBe(0o600);
      const parsed = JSON.parse(await readFile(file, 'utf8')) as { keys: { id: string; key: string }[] };
      expect(parsed.keys).toHaveLength(1);
      expect(Buffer.from(parsed.keys[0]!.key, 'base64')).toHaveLength(32);
      expect(t.logs.join('\n')).not.toContain(parsed.keys[0]!.key);
      expect(t.logs.some((l) => l.includes('card vault keys ready') && l.includes(file))).toBe(true);
    });

    it('a second instance on the same database with the same VAULT_ENCRYPTION_KEY opens the first one\'s cards', async () => {
      const card = await enrollOk(t, await createCustomer(t), cardBody(t.sandbox.account_id, { number: MASTERCARD_OK }));
      const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', SANDBOX: 'false', PUBLIC_BASE_URL: 'https://pay.example.com', VAULT_ENCRYPTION_KEY: await vaultKeyOf(t), LOG_LEVEL: 'silent' });
      const second = await startServer({ config, db: t.db, log: createLogger('silent') });
      try {
        const opened = await loadCardForPayment(t.db, second.deps, t.sandbox.organization_id, card.vaulted_token!);
        expect(opened?.card.number).toBe(MASTERCARD_OK);
        const list = await fetch(`${second.url}/v1/customers/${opened!.method.customerId}/payment-methods`, {
          headers: { 'public-api-key': t.sandbox.public_api_key, 'private-secret-key': t.sandbox.private_secret_key },
        });
        expect(list.status).toBe(200);
      } finally {
        await second.close();
      }
    });
  });

  describe(`vault keys across restarts on ${backend}`, () => {
    /** One database for several server starts (rotation), opened like the harness does. */
    async function openShared(kind: Backend): Promise<{ db: Database; drop(): Promise<void> }> {
      if (kind === 'pglite') {
        const db = await leasePglite(async () => new Blob([await readFile(inject('pgliteImage'))]));
        return { db, drop: async () => db.close() };
      }
      const url = inject('postgresUrl')!;
      const schema = `t_${randomBytes(6).toString('hex')}`;
      const admin = await openPostgres(url, { max: 1 });
      await admin.query(`CREATE SCHEMA ${schema}`);
      await admin.close();
      const db = await openPostgres(url, { schema, max: 5 });
      return {
        db,
        drop: async () => {
          await db.close();
          const a = await openPostgres(url, { max: 1 });
          await a.query(`DROP SCHEMA ${schema} CASCADE`);
          await a.close();
        },
      };
    }

    const start = (db: Database, dataDir: string, env: Record<string, string> = {}) => {
      const logs: string[] = [];
      const sink = new Writable({
        write(chunk: Buffer, _enc, cb) {
          logs.push(chunk.toString('utf8'));
          cb();
        },
      });
      const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, SANDBOX: 'true', ADMIN_API_KEY: ADMIN_KEY, LOG_LEVEL: 'info', ...env });
      return { logs, server: startServer({ config, db, log: createLogger('info', sink) }) };
    };

    async function enrollVia(running: RunningServer, creds: Credentials, customerId: string, number: string) {
      const res = await fetch(`${running.url}/v1/customers/${customerId}/payment-methods`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-idempotency-key': randomUUID(),
          'public-api-key': creds.public_api_key,
          'private-secret-key': creds.private_secret_key,
        },
        body: JSON.stringify(cardBody(creds.account_id, { number })),
      });
      expect(res.status).toBe(201);
      return (await res.json()) as { vaulted_token: string; card_data: { fingerprint: string } };
    }

    it('reuses the generated key, rotates to a new active key (re-sealing stored cards), and refuses to start without the keys stored cards need', async () => {
      const { db, drop } = await openShared(backend);
      const dataDir = await mkdtemp(join(tmpdir(), 'payorch-vault-'));
      try {
        // 1. Sandbox, no key configured: a key file is generated.
        const a = await start(db, dataDir).server;
        const creds = JSON.parse(await readFile(join(dataDir, 'sandbox-credentials.json'), 'utf8')) as Credentials;
        const customer = await fetch(`${a.url}/v1/customers`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'public-api-key': creds.public_api_key, 'private-secret-key': creds.private_secret_key },
          body: JSON.stringify({ merchant_customer_id: 'cus-rotation' }),
        });
        const customerId = ((await customer.json()) as { id: string }).id;
        const first = await enrollVia(a, creds, customerId, VISA_OK);
        await a.close();
        const keyFile = await readFile(join(dataDir, 'vault-key.json'), 'utf8');
        const k1 = (JSON.parse(keyFile) as { keys: { key: string }[] }).keys[0]!.key;

        // 2. Restart: the same file, the same fingerprint, the old card still opens.
        const b = await start(db, dataDir).server;
        expect(await readFile(join(dataDir, 'vault-key.json'), 'utf8')).toBe(keyFile);
        const again = await enrollVia(b, creds, customerId, VISA_OK);
        expect(again.card_data.fingerprint).toBe(first.card_data.fingerprint);
        expect((await loadCardForPayment(db, b.deps, creds.organization_id, first.vaulted_token))?.card.number).toBe(VISA_OK);
        await b.close();

        // 2b. Dropping k1 before any start with k2,k1 is refused: k1 still seals the stored cards.
        const k2 = randomBytes(32).toString('base64');
        const early = await start(db, dataDir, { VAULT_ENCRYPTION_KEY: `k2:${k2}` }).server.then(
          (s) => s.close().then(() => new Error('started')),
          (e: unknown) => e as Error,
        );
        expect(early.message).toMatch(/vault key k1 still seals stored data/);
        expect(early.message).not.toContain(k1);

        // 3. Rotation: k2 encrypts new cards, the start re-sealed the old ones under k2, fingerprints stay stable.
        const c = await start(db, dataDir, { VAULT_ENCRYPTION_KEY: `k2:${k2},k1:${k1}` }).server;
        const rotated = await enrollVia(c, creds, customerId, VISA_OK);
        expect(rotated.card_data.fingerprint).toBe(first.card_data.fingerprint);
        // Each card's data key is wrapped under k2 (the PAN itself stays sealed under its data key).
        const keyIds = await db.query<{ vaulted_token: string; key_id: string }>(
          'SELECT vaulted_token, k.key_id FROM payment_methods m JOIN payment_method_keys k ON k.payment_method_id = m.id',
        );
        expect(keyIds.find((r) => r.vaulted_token === rotated.vaulted_token)?.key_id).toBe('k2');
        expect(keyIds.find((r) => r.vaulted_token === first.vaulted_token)?.key_id).toBe('k2');
        expect((await loadCardForPayment(db, c.deps, creds.organization_id, first.vaulted_token))?.card.number).toBe(VISA_OK);
        expect((await loadCardForPayment(db, c.deps, creds.organization_id, rotated.vaulted_token))?.card.number).toBe(VISA_OK);

        // 4. A ciphertext moved onto another row does not open (it is bound to its record).
        await db.query(
          `UPDATE payment_methods SET (pan_ciphertext, pan_iv, pan_tag, pan_key_id) =
             (SELECT pan_ciphertext, pan_iv, pan_tag, pan_key_id FROM payment_methods WHERE vaulted_token = $1)
           WHERE vaulted_token = $2`,
          [first.vaulted_token, again.vaulted_token],
        );
        await expect(loadCardForPayment(db, c.deps, creds.organization_id, again.vaulted_token)).rejects.toThrow(/did not authenticate/);
        await c.close();

        // 5. Starts that must fail, each with one clear reason and no key material in it.
        const failures: [Record<string, string>, RegExp][] = [
          [{ VAULT_ENCRYPTION_KEY: `k2:${k2},k1:${randomBytes(32).toString('base64')}` }, /vault key k1 is not the key this database's cards were encrypted with/],
          [{ VAULT_ENCRYPTION_KEY: 'c2hvcnQ=' }, /VAULT_ENCRYPTION_KEY: key k1 must decode to 32 bytes, got 5/],
          [{ VAULT_ENCRYPTION_KEY: `k2:${k2},k2:${k1}` }, /lists key id k2 twice/],
          [{ VAULT_ENCRYPTION_KEY: 'k1:not base64!' }, /key k1 is not standard base64/],
          [{ SANDBOX: 'false', PUBLIC_BASE_URL: 'https://pay.example.com' }, /VAULT_ENCRYPTION_KEY is required outside sandbox mode/],
        ];
        for (const [env, reason] of failures) {
          const attempt = start(db, await mkdtemp(join(tmpdir(), 'payorch-vault-')), env);
          const err = await attempt.server.then(
            (s) => s.close().then(() => new Error('started')),
            (e: unknown) => e as Error,
          );
          expect(err.message, JSON.stringify(env)).toMatch(reason);
          expect(err.message).not.toContain(k1);
          expect(err.message).not.toContain(k2);
        }
      } finally {
        await drop();
      }
    });
  });

  describe(`429 on ${backend}`, () => {
    const t = useServer(backend, { env: { RATE_LIMIT_PER_MINUTE: '3' } });

    it('enroll and list answer 429 RATE_LIMITED with Retry-After past the organization limit', async () => {
      const org = await t.createOrganization({ pciCertified: true });
      const headers = { 'public-api-key': org.public_api_key, 'private-secret-key': org.private_secret_key };
      const customerId = await createCustomer(t, org);
      expect((await enroll(t, customerId, cardBody(org.account_id), { headers })).status).toBe(201);
      expect((await t.fetch(`/customers/${customerId}/payment-methods`, { headers })).status).toBe(200);
      const limited = await enroll(t, customerId, cardBody(org.account_id), { headers });
      await expectProblem(limited, 429, 'RATE_LIMITED');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      await expectProblem(await t.fetch(`/customers/${customerId}/payment-methods`, { headers }), 429, 'RATE_LIMITED');
    });
  });
}

describe('503 when the database is gone (PGlite)', () => {
  const t = useServer('pglite');

  it('enroll and list answer 503 SERVICE_UNAVAILABLE with Retry-After, never a 500', async () => {
    const customerId = await createCustomer(t);
    // Authenticate first through a healthy request, then lose the database.
    await t.db.close();
    const res = await enroll(t, customerId, cardBody(t.sandbox.account_id));
    // Authentication needs the database too: either way the answer is 503, not 500.
    await expectProblem(res, 503, 'SERVICE_UNAVAILABLE');
    expect(res.headers.get('retry-after')).toBeTruthy();
    await expectProblem(await t.fetch(`/customers/${customerId}/payment-methods`), 503, 'SERVICE_UNAVAILABLE');
  });
});
