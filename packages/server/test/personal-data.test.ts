/**
 * Personal data is declared once, in the spec (`x-personal-data`), and deletion, log redaction and the
 * sensitive-data scan follow it. On a copy of the spec with a new personal field on Customer (`nickname`,
 * as the README's walkthrough once added one), each of the three picks it up with no list edited — and,
 * as a control, the served spec's declaration does not know it and lets it through.
 * No HTTP server: the declaration, the deletion statement on a real database and a real logger are what
 * the server uses; the round trip through the API is customers-manage.test.ts's.
 */
import { randomUUID } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate } from '../../../tools/codegen.mjs';
import { deletionSql } from '../src/customers/repository.js';
import { migrate } from '../src/db/migrate.js';
import { createLogger } from '../src/platform/logger.js';
import { PERSONAL_DATA, personalDataOf, type PersonalData, type SpecWithSchemas } from '../src/platform/personal-data.js';
import { backends, openTestDatabase } from './support/harness.js';
import { scanForSensitiveData } from './support/sensitive-data-scan.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const NICKNAME = 'Zed Quokka';

let dir: string;
let copy: PersonalData;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'payorch-personal-'));
  await cp(join(repoRoot, 'spec'), join(dir, 'spec'), { recursive: true });
  const customer = join(dir, 'spec/components/schemas/Customer.yaml');
  const text = await readFile(customer, 'utf8');
  const added = text.replace(/^properties:\n/m, "properties:\n  nickname:\n    x-personal-data: true\n    type: [string, 'null']\n    maxLength: 64\n");
  expect(added).not.toBe(text);
  await writeFile(customer, added);
  // The copy bundled as `npm run generate` bundles the spec: the server reads this file.
  const [bundled] = await generate({ specEntry: join(dir, 'spec/openapi.yaml'), bundleOut: join(dir, 'openapi.json') });
  copy = personalDataOf(JSON.parse(bundled!.content) as SpecWithSchemas);
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the declaration', () => {
  it('has the new field, cleared to null; the served spec has the rest and not it', () => {
    expect(copy.fieldsOf('Customer')).toContainEqual({ name: 'nickname', cleared: 'null' });
    expect(copy.names).toContain('nickname');
    expect(PERSONAL_DATA.names).not.toContain('nickname');
    expect(copy.fieldsOf('Customer').filter((f) => f.name !== 'nickname')).toEqual(PERSONAL_DATA.fieldsOf('Customer'));
    // What the served spec declares on Customer, and how a deletion empties each (metadata is a list).
    expect(Object.fromEntries(PERSONAL_DATA.fieldsOf('Customer').map((f) => [f.name, f.cleared]))).toEqual({
      first_name: 'null', last_name: 'null', gender: 'null', date_of_birth: 'null', email: 'null', nationality: 'null', country: 'null',
      document: 'null', phone: 'null', billing_address: 'null', shipping_address: 'null', metadata: 'empty-array', merchant_customer_created_at: 'null',
    });
  });

  it('refuses a personal field a deletion could not clear (neither nullable nor a list)', () => {
    const doc = { components: { schemas: { Customer: { type: 'object', properties: { nickname: { type: 'string', maxLength: 9, 'x-personal-data': true } } } } } };
    expect(() => deletionSql(personalDataOf(doc))).toThrow(/Customer.nickname is personal but neither nullable nor a list/);
  });
});

describe.each(backends())('deleting a customer clears it (%s)', (backend) => {
  let db: Awaited<ReturnType<typeof openTestDatabase>>['db'];
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ db, drop } = await openTestDatabase(backend));
    await migrate(db); // a PGlite from the pool is migrated already; a PostgreSQL schema starts empty
    // The migration the walkthrough asks for (docs/contributing.md).
    await db.query('ALTER TABLE customers ADD COLUMN nickname text');
  });
  afterAll(async () => {
    // A PGlite database goes back to a pool that later files reuse: leave the schema as migrated.
    await db.query('ALTER TABLE customers DROP COLUMN IF EXISTS nickname').catch(() => {});
    await drop();
  });

  async function insertCustomer(): Promise<{ id: string; org: string }> {
    const org = randomUUID();
    const id = randomUUID();
    await db.query('INSERT INTO organizations (id, name) VALUES ($1, $2)', [org, 'Personal data test']);
    await db.query(
      `INSERT INTO customers (id, organization_id, merchant_customer_id, first_name, email, metadata, phone, nickname)
        VALUES ($1, $2, $3, 'Ana', 'ana@example.com', '[{"key":"k","value":"v"}]', '{"number":"11987654321","country_code":"55"}', $4)`,
      [id, org, `m-${id}`, NICKNAME],
    );
    return { id, org };
  }
  const rowOf = async (id: string) => (await db.query<Record<string, unknown>>('SELECT * FROM customers WHERE id = $1', [id]))[0]!;

  it("with the copy's statement: every personal field cleared, the merchant's id kept; the scan agrees", async () => {
    const { id, org } = await insertCustomer();
    // A live customer's data is not a finding.
    expect(await scanForSensitiveData({ db, personal: copy })).toEqual([]);
    expect(await db.query(deletionSql(copy), [id, org])).toHaveLength(1);
    const row = await rowOf(id);
    expect(row).toMatchObject({ nickname: null, first_name: null, email: null, phone: null, metadata: [], merchant_customer_id: `m-${id}` });
    expect(row.deleted_at).not.toBeNull();
    expect(await scanForSensitiveData({ db, personal: copy })).toEqual([]);
  });

  it("with a statement that does not know the field (the served spec's): the scan names it, not its value", async () => {
    const { id, org } = await insertCustomer();
    await db.query(deletionSql(PERSONAL_DATA), [id, org]);
    expect((await rowOf(id)).nickname).toBe(NICKNAME);
    const findings = await scanForSensitiveData({ db, personal: copy });
    expect(findings.map((f) => [f.kind, f.where])).toEqual([['personal', `table customers.nickname (id=${id})`]]);
    expect(JSON.stringify(findings)).not.toContain(NICKNAME);
    await db.query('UPDATE customers SET nickname = NULL WHERE id = $1', [id]); // the teardown scan of other files
  });
});

describe('logs never hold it', () => {
  function logWith(personal: PersonalData): string[] {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(...chunk.toString().split('\n').filter(Boolean)), done()) });
    const log = createLogger('info', sink, personal);
    log.info({ nickname: NICKNAME }, 'top level');
    log.info({ customer: { id: 'c1', nickname: NICKNAME } }, 'one level down');
    log.info({ payment: { customer_payer: { nickname: NICKNAME } } }, 'two levels down');
    log.info({ page: { customers: [{ profile: { nickname: NICKNAME } }] } }, 'deeper, in a list');
    return lines;
  }

  it("a logger of the copy's declaration censors it at any depth; the scan finds nothing", async () => {
    const lines = logWith(copy);
    expect(lines).toHaveLength(4);
    expect(lines.join('\n')).not.toContain(NICKNAME);
    expect(JSON.parse(lines[1]!).customer).toEqual({ id: 'c1', nickname: '[redacted]' });
    expect(await scanForSensitiveData({ logs: lines, personal: copy })).toEqual([]);
  });

  it('a logger that does not know it writes it, and the scan flags each line', async () => {
    const lines = logWith(PERSONAL_DATA);
    expect(lines.filter((l) => l.includes(NICKNAME))).toHaveLength(4);
    const findings = await scanForSensitiveData({ logs: lines, personal: copy });
    expect(findings.map((f) => f.where)).toEqual(['log line 1', 'log line 2', 'log line 3', 'log line 4']);
    expect(JSON.stringify(findings)).not.toContain(NICKNAME);
  });
});
