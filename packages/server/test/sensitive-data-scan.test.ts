/**
 * The teardown scan (support/sensitive-data-scan.ts) that every test server runs on stop(): it must
 * catch what it is for — PANs as written anywhere, security codes, secrets — and must not flag what
 * every server writes (UUIDs, timestamps, epoch milliseconds, masked PANs, hashes).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.js';
import { backends, openTestDatabase } from './support/harness.js';
import { findPans, scanForSensitiveData, type Finding } from './support/sensitive-data-scan.js';

// Card numbers the suite sends (sandbox cards, brand samples incl. 19-digit ones, 2-series, Mir).
const SUITE_PANS = [
  '4507990000000002', '4111111111111111', '5031433215406351', '5252440000000002', '4000000000000259', '378282246310005',
  '6062825624254001', '2223003122003222', '2200000000000004', '36227206271667', '30569309025904', '3566002020360505',
  '6011111111111117', '6205500000000000004', '6799990000000000003',
];
const PAN = '4507990000000002';
// 2026-01-21T12:53:20.009Z: passes Luhn, as one epoch-ms in ten does.
const LUHN_VALID_EPOCH_MS = '1769000000009';

const noise = [
  randomUUID(),
  '41111111-1111-4111-8111-111111111111', // an all-digit UUID
  new Date().toISOString(),
  '2026-01-21 12:53:20.009+00',
  LUHN_VALID_EPOCH_MS,
  '1769000000000009', // epoch µs, Luhn-valid
  '450799******0002',
  'VISA ****0002',
  '0002',
  randomBytes(32).toString('hex'),
  `a${PAN}`, // inside an alphanumeric token
  `0.${PAN}`, // a float's fraction
  '20260121125320009', // a compact timestamp
];

describe('findPans (the PAN rule)', () => {
  it.each(SUITE_PANS)('finds %s alone, in JSON, in a URL', (pan) => {
    expect(findPans(pan).map((p) => p.match)).toEqual([pan]);
    expect(findPans(`{"number":"${pan}"}`)).toHaveLength(1);
    expect(findPans(`GET /v1/customers/${pan}?x=1`)).toHaveLength(1);
  });

  it('finds PANs written with spaces or dashes in card groups', () => {
    for (const written of ['4507 9900 0000 0002', '4507-9900-0000-0002', '3782 822463 10005', '6205 5000 0000 0000 004']) {
      expect(findPans(`card: ${written}.`).map((p) => p.match)).toEqual([written]);
    }
  });

  it('does not flag UUIDs, timestamps, epoch ms/µs, masked PANs, last4, hex, floats', () => {
    for (const n of noise) expect(findPans(n), n).toEqual([]);
    expect(findPans(noise.join(' '))).toEqual([]);
    expect(findPans('4507990000000003')).toEqual([]); // fails Luhn
  });
});

describe('scanForSensitiveData on log lines', () => {
  const secret = `sk_${randomBytes(32).toString('base64url')}`;
  const whsec = `whsec_${randomBytes(32).toString('base64')}`;
  const kinds = (f: Finding[]) => f.map((x) => x.kind).sort();

  it('finds a PAN in a log line, with and without separators, and never prints it in full', async () => {
    for (const written of [PAN, '4507 9900 0000 0002', '4507-9900-0000-0002']) {
      const line = JSON.stringify({ level: 30, msg: 'request completed', req: { url: `/v1/x?card=${written}` } });
      const findings = await scanForSensitiveData({ logs: ['{"level":30,"msg":"ok"}', line] });
      expect(findings).toEqual([expect.objectContaining({ kind: 'pan', where: 'log line 2' })]);
      expect(findings[0]!.excerpt).toContain('450799******0002');
      expect(findings[0]!.excerpt.replace(/[ -]/g, '')).not.toContain(PAN);
    }
  });

  it('finds a PAN behind a JSON escape (a newline before it)', async () => {
    const line = JSON.stringify({ msg: `card\n${PAN}` });
    expect(kinds(await scanForSensitiveData({ logs: [line] }))).toEqual(['pan']);
  });

  it('finds security codes, secrets and whsec_ values; ignores redacted ones and lengths', async () => {
    const logs = [
      JSON.stringify({ card_data: { security_code: '123' } }),
      JSON.stringify({ msg: 'body {"cvv": 456}' }),
      JSON.stringify({ card_data: { security_code: '[redacted]', security_code_length: 3, cvv: null } }),
      JSON.stringify({ msg: `key ${secret}` }),
      JSON.stringify({ msg: 'secret whsec_abc' }),
      JSON.stringify({ msg: '/body/card_data/security_code must be 3 digits' }),
      JSON.stringify({ msg: `signing with ${whsec.slice(6)}` }), // a whsec_ secret without its prefix
    ];
    const findings = await scanForSensitiveData({ logs, secrets: [{ name: 'the sandbox key', value: secret }, { name: 'a webhook secret', value: whsec }] });
    expect(findings.map((f) => `${f.kind} ${f.where}`).sort()).toEqual([
      'secret log line 4',
      'secret log line 5',
      'secret log line 7',
      'security_code log line 1',
      'security_code log line 2',
    ]);
    const excerpts = findings.map((f) => f.excerpt).join('\n');
    expect(excerpts).not.toContain(secret.slice(3));
    expect(excerpts).not.toContain(whsec.slice(6));
  });

  it('finds nothing in ordinary lines', async () => {
    const logs = noise.map((n) => JSON.stringify({ level: 30, time: new Date().toISOString(), reqId: randomUUID(), msg: n, responseTime: 12.3456789012345 }));
    expect(await scanForSensitiveData({ logs })).toEqual([]);
  });
});

for (const backend of backends()) {
  describe(`scanForSensitiveData on every table (${backend})`, () => {
    let db: Database;
    let drop: () => Promise<void>;
    const sk = `sk_${randomBytes(32).toString('base64url')}`;
    const whsec = `whsec_${randomBytes(32).toString('base64')}`;

    beforeAll(async () => {
      ({ db, drop } = await openTestDatabase(backend));
      await db.exec(`CREATE TABLE planted (id text PRIMARY KEY, note text, doc jsonb, raw bytea, amount numeric, at timestamptz DEFAULT now())`);
    });
    afterAll(async () => {
      await db?.close();
      await drop?.();
    });

    const plant = async (id: string, cols: { note?: string; doc?: unknown; raw?: Buffer; amount?: string }) => {
      await db.query('DELETE FROM planted');
      await db.query('INSERT INTO planted (id, note, doc, raw, amount) VALUES ($1, $2, $3, $4, $5)', [
        id, cols.note ?? null, cols.doc === undefined ? null : JSON.stringify(cols.doc), cols.raw ?? null, cols.amount ?? null,
      ]);
      return scanForSensitiveData({ db, secrets: [{ name: 'a private_secret_key', value: sk }, { name: 'a webhook signing secret', value: whsec }] });
    };

    it('finds nothing in the migrated schema with ordinary rows', async () => {
      expect(await plant(randomUUID(), { note: noise.join(' '), doc: { iin: '45079900', lfd: '0002', name: 'VISA ****0002', at: LUHN_VALID_EPOCH_MS }, raw: randomBytes(256), amount: '1769000000009' })).toEqual([]);
    });

    it('finds a PAN in a text column, in jsonb (also JSON inside a string), in bytea, in a number', async () => {
      const expectPan = (findings: Finding[], column: string) =>
        expect(findings).toContainEqual(expect.objectContaining({ kind: 'pan', where: expect.stringContaining(`table planted.${column}`) }));
      expectPan(await plant('r1', { note: `paid with 4507 9900 0000 0002` }), 'note');
      expectPan(await plant('r2', { doc: { payment_method: { detail: { card: { number: PAN } } } } }), 'doc');
      expectPan(await plant('r3', { doc: { response_body: JSON.stringify({ card: `card\n${PAN}` }) } }), 'doc');
      expectPan(await plant('r4', { raw: Buffer.from(JSON.stringify({ number: PAN })) }), 'raw');
      expectPan(await plant('r5', { amount: PAN }), 'amount');
      const f = await plant('r6', { note: PAN });
      expect(f[0]!.where).toBe('table planted.note (id=r6)');
      expect(f[0]!.excerpt).not.toContain(PAN);
    });

    it('finds a security code in jsonb and in bytea', async () => {
      expect(await plant('r1', { doc: { card: { security_code: '123', security_code_length: 3 } } })).toEqual([expect.objectContaining({ kind: 'security_code' })]);
      expect(await plant('r2', { raw: Buffer.from('{"cvv":"1234"}') })).toEqual([expect.objectContaining({ kind: 'security_code' })]);
      expect(await plant('r3', { doc: { card: { security_code: null, security_code_length: 3 } } })).toEqual([]);
    });

    it('finds secrets in clear and as raw bytes, and private-key shapes', async () => {
      expect((await plant('r1', { doc: { body: { private_secret_key: sk } } })).map((f) => f.kind)).toContain('secret');
      expect((await plant('r2', { note: `sk_${randomBytes(32).toString('base64url')}` })).map((f) => f.kind)).toEqual(['secret']);
      expect((await plant('r3', { note: whsec })).map((f) => f.kind)).toContain('secret');
      expect(await plant('r4', { raw: Buffer.from(whsec.slice(6), 'base64') })).toEqual([expect.objectContaining({ kind: 'secret', excerpt: expect.stringContaining('raw bytes') })]);
    });

    it('finds a signing secret in clear in any table, the provider_secrets table included (no table is exempt)', async () => {
      const clear = `whsec_${randomBytes(32).toString('base64')}`;
      // (The PGlite image is migrated; a PostgreSQL suite's schema starts empty.)
      await db.exec('CREATE TABLE IF NOT EXISTS provider_secrets (provider_id text PRIMARY KEY, secret text)');
      await db.query("INSERT INTO provider_secrets (provider_id, secret) VALUES ('legacy', $1)", [clear]);
      try {
        const findings = await plant(randomUUID(), {});
        expect(findings).toEqual([expect.objectContaining({ kind: 'secret', where: 'table provider_secrets.secret (row 1)' })]);
        expect(findings[0]!.excerpt).not.toContain(clear.slice(6));
      } finally {
        await db.query("DELETE FROM provider_secrets WHERE provider_id = 'legacy'");
      }
    });
  });
}
