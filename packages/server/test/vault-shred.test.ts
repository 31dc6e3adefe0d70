/**
 * Unenrolling a card and deleting a customer shred (issue 21, finding 3). A card's PAN is sealed under a data
 * key of its own, wrapped by the keyring in a payment_method_keys row; shredding deletes that row, clears the
 * method's card-derived fields and redacts the copies (events, payments, stored replies).
 *
 * On PostgreSQL the proof reads the raw table pages (pageinspect): every byte string on a page of
 * payment_methods, payment_method_keys and payments that could be a sealed value (a run of bytea
 * ciphertext, 12-byte IV, 16-byte tag, live or dead row version) is tried with the service's own vault, as a
 * sealed PAN under the keyring and under every candidate data key it can unwrap; none opens to a shredded
 * card, while the card left enrolled does (the search works). The PANs' digits appear in no raw page.
 * On both backends: the key rows are gone, the ciphertext taken before does not open, and GET /v1/events,
 * the payments and a replayed enrollment carry no holder name, fingerprint, IIN or expiry of the card.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { describe, expect, it } from 'vitest';
import type { Queryable } from '../src/db/database.js';
import { seal } from '../src/keyring/cipher.js';
import { RECORD_KEY_ID } from '../src/vault/crypto/data-keys.js';
import { parseKeyring } from '../src/keyring/keyring.js';
import { loadCardForPayment } from '../src/vault/service.js';
import { rewrapPaymentMethods, type SealedColumns } from '../src/vault/services.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { createPayment, getPayment, rawCard } from './support/payments.js';
import { vaultKeyOf } from './support/vault-fixtures.js';

const KEPT = '4507990000000002';
const SHREDDED = '5252440000000002';
const OF_DELETED = ['4111111111111111', '5555555555554444'];
const HOLDER = 'ZELDA QUARTERMAINE';

const enrollBody = (t: TestServer, number: string) => ({
  account_id: t.sandbox.account_id,
  country: 'BR',
  type: 'CARD',
  card_data: { number, holder_name: HOLDER, expiration_month: 11, expiration_year: (new Date().getUTCFullYear() + 4) % 100, security_code: '123' },
});

async function customer(t: TestServer): Promise<string> {
  const res = await t.fetch('/customers', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ merchant_customer_id: `cus-${randomUUID()}`, first_name: 'Zelda' }) });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

async function enroll(t: TestServer, customerId: string, number: string, key = randomUUID()): Promise<Schemas['EnrolledPaymentMethod'] & { vaulted_token: string }> {
  const res = await t.fetch(`/customers/${customerId}/payment-methods`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-idempotency-key': key },
    body: JSON.stringify(enrollBody(t, number)),
  });
  const text = await res.text();
  expect(res.status, text).toBe(201);
  return JSON.parse(text) as Schemas['EnrolledPaymentMethod'] & { vaulted_token: string };
}

async function pay(t: TestServer, customerId: string, token: string): Promise<string> {
  const payment = await createPayment(t, { payment_method: { type: 'CARD', vaulted_token: token } }, customerId);
  expect(payment.status).toBe('SUCCEEDED');
  return payment.id!;
}

interface Sealed {
  ciphertext: Buffer;
  iv: Buffer;
  tag: Buffer;
}

/**
 * Every (ciphertext, iv, tag) a byte string can hold as three consecutive bytea values: a 12-byte IV and a
 * 16-byte tag are short varlenas (one header byte: (length + 1) << 1 | 1), the ciphertext before them a
 * short varlena or a 4-byte-header one of any length. A superset of the sealed values of the row versions.
 */
function sealedCandidates(bytes: Buffer): Sealed[] {
  const found: Sealed[] = [];
  for (let j = 1; j + 30 <= bytes.length; j++) {
    if (bytes[j] !== ((13 << 1) | 1) || bytes[j + 13] !== ((17 << 1) | 1)) continue;
    const iv = bytes.subarray(j + 1, j + 13);
    const tag = bytes.subarray(j + 14, j + 30);
    for (let len = 1; len <= Math.min(j - 1, 4000); len++) {
      const short = j - 1 - len;
      if (len <= 126 && bytes[short] === (((len + 1) << 1) | 1)) found.push({ ciphertext: bytes.subarray(short + 1, j), iv, tag });
      const long = j - 4 - len;
      if (long >= 0 && bytes.readUInt32LE(long) === (len + 4) << 2) found.push({ ciphertext: bytes.subarray(long + 4, j), iv, tag });
    }
  }
  return found;
}

/** Every raw page of a table (PostgreSQL, pageinspect), and the tuple data of every row version on them. */
async function pagesOf(db: Queryable, table: string): Promise<{ raw: Buffer[]; tuples: Buffer[] }> {
  const [ext] = await db.query<{ schema: string }>("SELECT extnamespace::regnamespace::text AS schema FROM pg_extension WHERE extname = 'pageinspect'");
  const schema = (await db.query<{ schema: string }>('SELECT current_schema() AS schema'))[0]!.schema;
  const rel = `${schema}.${table}`;
  const pages = (await db.query<{ pages: number }>(`SELECT (pg_relation_size($1::regclass) / current_setting('block_size')::int)::int AS pages`, [rel]))[0]!.pages;
  const raw: Buffer[] = [];
  const tuples: Buffer[] = [];
  for (let n = 0; n < pages; n++) {
    const [page] = await db.query<{ page: Uint8Array }>(`SELECT ${ext!.schema}.get_raw_page($1, $2) AS page`, [rel, n]);
    raw.push(Buffer.from(page!.page));
    const items = await db.query<{ t_data: Uint8Array | null }>(`SELECT t_data FROM ${ext!.schema}.heap_page_items(${ext!.schema}.get_raw_page($1, $2))`, [rel, n]);
    for (const i of items) if (i.t_data) tuples.push(Buffer.from(i.t_data));
  }
  return { raw, tuples };
}

/**
 * What the service's vault opens from these candidates: each as a PAN sealed under a keyring key or under a
 * data key, with each candidate as that method's wrapped data key under each keyring key, for every method.
 */
function openedBy(t: TestServer, organizationId: string, methods: { id: string; vaulted_token: string }[], keyringIds: string[], candidates: Sealed[]): string[] {
  const vault = t.running.deps.services.vault;
  const keyIds = [RECORD_KEY_ID, ...keyringIds];
  const opened = new Set<string>();
  const unique = [...new Map(candidates.map((c) => [`${c.ciphertext.toString('hex')}.${c.iv.toString('hex')}.${c.tag.toString('hex')}`, c])).values()];
  for (const m of methods) {
    for (const c of unique) {
      for (const keyId of keyIds) {
        const sealed: SealedColumns = { ...c, keyId };
        if (keyId !== RECORD_KEY_ID) {
          try {
            opened.add(vault.openPan(organizationId, m.id, m.vaulted_token, sealed, null));
          } catch {
            /* not a PAN under the keyring */
          }
          continue;
        }
        for (const k of unique) {
          for (const wrapKeyId of keyIds.filter((id) => id !== RECORD_KEY_ID)) {
            try {
              opened.add(vault.openPan(organizationId, m.id, m.vaulted_token, sealed, { ...k, keyId: wrapKeyId }));
            } catch {
              /* not this method's PAN under this data key */
            }
          }
        }
      }
    }
  }
  return [...opened];
}

/** What could identify a card or its holder in a JSON copy of it. */
function expectNoCardIdentity(where: string, value: unknown, fingerprints: string[]): void {
  const text = JSON.stringify(value);
  expect(text, `holder name in ${where}`).not.toContain(HOLDER);
  for (const f of fingerprints) expect(text, `fingerprint in ${where}`).not.toContain(f);
}

for (const backend of backends()) {
  describe(`unenrolling and deleting shred the card on ${backend}`, () => {
    const t = useServer(backend);

    it('after an unenroll and a customer deletion nothing left opens to the card, and no copy names its holder or fingerprint', async () => {
      const organizationId = (await t.db.query<{ organization_id: string }>('SELECT organization_id FROM accounts WHERE id = $1', [t.sandbox.account_id]))[0]!.organization_id;
      const ownerId = await customer(t);
      const kept = await enroll(t, ownerId, KEPT);
      const enrollKey = randomUUID();
      const shredded = await enroll(t, ownerId, SHREDDED, enrollKey);
      const keptPayment = await pay(t, ownerId, kept.vaulted_token);
      const shreddedPayment = await pay(t, ownerId, shredded.vaulted_token);
      const deletedId = await customer(t);
      const ofDeleted = await Promise.all(OF_DELETED.map((n) => enroll(t, deletedId, n)));
      const deletedPayment = await pay(t, deletedId, ofDeleted[0]!.vaulted_token);
      const fingerprints = [shredded, ...ofDeleted].map((m) => m.card_data!.fingerprint!);
      expect(fingerprints.every((f) => f.length > 0)).toBe(true);
      expect(JSON.stringify(await getPayment(t, shreddedPayment))).toContain(HOLDER);

      // What a backup taken now would hold of the card about to be unenrolled.
      const [before] = await t.db.query<{ id: string; pan_ciphertext: Uint8Array; pan_iv: Uint8Array; pan_tag: Uint8Array; pan_key_id: string }>(
        'SELECT id, pan_ciphertext, pan_iv, pan_tag, pan_key_id FROM payment_methods WHERE vaulted_token = $1',
        [shredded.vaulted_token],
      );

      const unenrolled = await t.fetch(`/customers/${ownerId}/payment-methods/${shredded.vaulted_token}/unenroll`, { method: 'POST', headers: { 'x-idempotency-key': randomUUID() } });
      expect(unenrolled.status, await unenrolled.clone().text()).toBe(200);
      expect(((await unenrolled.json()) as Schemas['EnrolledPaymentMethod']).card_data).toBeNull();
      expect((await t.fetch(`/customers/${deletedId}`, { method: 'DELETE' })).status).toBe(202);
      // Both answers came after the prune of the destroyed key rows, which did not fail.
      expect(t.logs.join('\n')).not.toContain('pruning dead rows failed');

      // The method rows: brand, last 4 and length stay; nothing else of the card.
      const rows = await t.db.query<Record<string, unknown>>(
        `SELECT vaulted_token, card_brand, card_lfd, card_number_length, card_holder_name, card_iin, card_expiration_month, card_expiration_year,
                card_issuer_name, card_country_code, fingerprint, customer_payer, pan_ciphertext, pan_key_id,
                (SELECT count(*)::int FROM payment_method_keys k WHERE k.payment_method_id = m.id) AS keys
           FROM payment_methods m WHERE customer_id = ANY($1::text[]) ORDER BY created_at`,
        [[ownerId, deletedId]],
      );
      const byToken = new Map(rows.map((r) => [r.vaulted_token as string, r]));
      for (const m of [shredded, ...ofDeleted]) {
        expect(byToken.get(m.vaulted_token)).toEqual({
          vaulted_token: m.vaulted_token, card_brand: m.card_data!.brand, card_lfd: m.card_data!.lfd, card_number_length: m.card_data!.number_length,
          card_holder_name: null, card_iin: null, card_expiration_month: null, card_expiration_year: null, card_issuer_name: null, card_country_code: null,
          fingerprint: null, customer_payer: null, pan_ciphertext: null, pan_key_id: null, keys: 0,
        });
      }
      expect(byToken.get(kept.vaulted_token)).toMatchObject({ card_holder_name: HOLDER, keys: 1 });

      // The ciphertext as it was before does not open any more: its data key is gone.
      const vault = t.running.deps.services.vault;
      const sealedBefore = { ciphertext: before!.pan_ciphertext, iv: before!.pan_iv, tag: before!.pan_tag, keyId: before!.pan_key_id };
      expect(() => vault.openPan(organizationId, before!.id, shredded.vaulted_token, sealedBefore, null)).toThrow();

      // The event log, the payments (and their events), and a replay of the enrollment name no holder and no fingerprint.
      const events = (await (await t.fetch('/events?limit=100')).json()) as Schemas['EventList'];
      const about = (e: unknown, ...ids: string[]) => ids.some((id) => JSON.stringify(e).includes(id));
      const shreddedIds = [shredded.vaulted_token, ...ofDeleted.map((m) => m.vaulted_token), shreddedPayment, deletedPayment];
      const concerned = events.events.filter((e) => about(e, ...shreddedIds));
      expect(concerned.map((e) => e.type_event)).toEqual(expect.arrayContaining(['enrollment.enrolled', 'enrollment.unenrolled', 'payment.succeeded']));
      for (const e of concerned) expectNoCardIdentity(`${e.type_event} ${e.id}`, e, fingerprints);
      for (const e of concerned.filter((x) => x.type_event.startsWith('enrollment.'))) {
        expect((e.data as unknown as { payment_method: Schemas['EnrolledPaymentMethod'] }).payment_method.card_data).toBeNull();
      }
      for (const id of [shreddedPayment, deletedPayment]) {
        const p = await getPayment(t, id);
        expectNoCardIdentity(`payment ${id}`, p, fingerprints);
        // What stays on a past payment: brand, IIN, last 4, expiry (accounting, disputes).
        expect(p.payment_method.payment_method_detail?.card?.card_data).toMatchObject({ holder_name: null, fingerprint: null });
        expect(p.payment_method.payment_method_detail?.card?.card_data?.lfd).toMatch(/^\d{4}$/);
      }
      // The other card's payment and events are untouched.
      expect(JSON.stringify(await getPayment(t, keptPayment))).toContain(HOLDER);
      const replay = await t.fetch(`/customers/${ownerId}/payment-methods`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-idempotency-key': enrollKey },
        body: JSON.stringify(enrollBody(t, SHREDDED)),
      });
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      const replayed = (await replay.json()) as Schemas['EnrolledPaymentMethod'];
      expect(replayed.card_data).toBeNull();
      expectNoCardIdentity('the replayed enrollment', replayed, fingerprints);

      if (backend !== 'postgres') return;
      // The raw pages: every row version, dead ones included.
      await t.db.query('CREATE EXTENSION IF NOT EXISTS pageinspect');
      const methods = await t.db.query<{ id: string; vaulted_token: string }>('SELECT id, vaulted_token FROM payment_methods WHERE organization_id = $1', [organizationId]);
      // Every keyring key id this database ever registered.
      const keyringIds = (await t.db.query<{ id: string }>('SELECT id FROM vault_keys')).map((k) => k.id);
      const tables = ['payment_methods', 'payment_method_keys', 'payments', 'payment_transactions', 'webhook_events', 'idempotency_keys'];
      const scan = async () => {
        const candidates: Sealed[] = [];
        for (const table of tables) {
          const { raw, tuples } = await pagesOf(t.db, table);
          for (const page of raw) {
            for (const pan of [SHREDDED, ...OF_DELETED, KEPT]) expect(page.includes(Buffer.from(pan)), `${pan} in a page of ${table}`).toBe(false);
          }
          for (const tuple of tuples) candidates.push(...sealedCandidates(tuple));
        }
        return candidates;
      };
      let candidates = await scan();
      // The dead version of a deleted key row is pruned right after the shred; a transaction of another suite
      // still running at that moment holds it back until it ends, as autovacuum would find: prune again.
      for (let i = 0; i < 20 && openedBy(t, organizationId, methods, keyringIds, candidates).some((p) => p !== KEPT); i++) {
        await new Promise((r) => setTimeout(r, 250));
        await t.db.query('VACUUM (INDEX_CLEANUP OFF, TRUNCATE OFF) payment_method_keys');
        candidates = await scan();
      }
      // The search finds sealed values: the old ciphertext of the unenrolled card is still on a page (a dead
      // row version), and the card left enrolled opens.
      expect(candidates.some((c) => c.ciphertext.equals(Buffer.from(before!.pan_ciphertext)))).toBe(true);
      expect(openedBy(t, organizationId, methods, keyringIds, candidates)).toEqual([KEPT]);
    });

    it('deleting a customer with no vaulted card removes the holder name and fingerprint from its raw-card payments and their events', async () => {
      const customerId = await customer(t);
      const paid = await createPayment(t, { payment_method: { type: 'CARD', detail: { card: { card_data: rawCard('5555555555554444', { holder_name: HOLDER }) } } } }, customerId);
      const before = await getPayment(t, paid.id!);
      const fingerprint = before.payment_method.payment_method_detail!.card!.card_data!.fingerprint!;
      expect(JSON.stringify(before)).toContain(HOLDER);

      expect((await t.fetch(`/customers/${customerId}`, { method: 'DELETE' })).status).toBe(202);

      expectNoCardIdentity('the payment', await getPayment(t, paid.id!), [fingerprint]);
      const events = (await (await t.fetch('/events?limit=100')).json()) as Schemas['EventList'];
      const ofPayment = events.events.filter((e) => JSON.stringify(e).includes(paid.id!));
      expect(ofPayment.length).toBeGreaterThan(0);
      for (const e of ofPayment) expectNoCardIdentity(`${e.type_event} ${e.id}`, e, [fingerprint]);
    });

    it('a card sealed under the keyring before per-record keys gets its own data key at start, once; it still pays', async () => {
      const organizationId = (await t.db.query<{ organization_id: string }>('SELECT organization_id FROM accounts WHERE id = $1', [t.sandbox.account_id]))[0]!.organization_id;
      const ownerId = await customer(t);
      const method = await enroll(t, ownerId, KEPT);
      // As a version before migration 0018 wrote it: the PAN sealed under keyring key k1, no data key.
      const keyring = parseKeyring(await vaultKeyOf(t));
      const legacy = seal(keyring.active, KEPT, `payorch:pan:v1:${organizationId}:${method.vaulted_token}`);
      await t.db.query('UPDATE payment_methods SET pan_ciphertext = $2, pan_iv = $3, pan_tag = $4, pan_key_id = $5 WHERE vaulted_token = $1', [
        method.vaulted_token, legacy.ciphertext, legacy.iv, legacy.tag, legacy.keyId,
      ]);
      await t.db.query('DELETE FROM payment_method_keys WHERE payment_method_id = (SELECT id FROM payment_methods WHERE vaulted_token = $1)', [method.vaulted_token]);
      const vault = t.running.deps.services.vault;
      expect((await loadCardForPayment(t.db, t.running.deps, organizationId, method.vaulted_token))?.card.number).toBe(KEPT);

      // What every start runs (buildVaultServices): the row moves to a data key of its own; a second run finds nothing.
      expect(await rewrapPaymentMethods(t.db, keyring, vault)).toEqual({ moved: 1, rewrapped: 0 });
      expect(await rewrapPaymentMethods(t.db, keyring, vault)).toEqual({ moved: 0, rewrapped: 0 });
      const [row] = await t.db.query<{ pan_key_id: string; key_id: string }>(
        'SELECT pan_key_id, k.key_id FROM payment_methods m JOIN payment_method_keys k ON k.payment_method_id = m.id WHERE vaulted_token = $1',
        [method.vaulted_token],
      );
      expect(row).toEqual({ pan_key_id: RECORD_KEY_ID, key_id: keyring.active.id });
      expect((await loadCardForPayment(t.db, t.running.deps, organizationId, method.vaulted_token))?.card.number).toBe(KEPT);
      await pay(t, ownerId, method.vaulted_token);
    });
  });
}
