/**
 * SQL of the card vault (the only vault code that speaks SQL). Reads that feed API responses never
 * select the ciphertext columns; only the payment-time lookup does.
 */
import { READY_TO_ENROLL_HOURS } from './mapper.js';
import type { Queryable } from '../db/database.js';
import type { Sealed } from '../keyring/cipher.js';

/** A payment_methods row without its secrets (what the API and the sandbox page are built from). */
export interface PaymentMethodRow {
  id: string;
  vaulted_token: string;
  organization_id: string;
  customer_id: string;
  account_id: string;
  idempotency_key: string | null;
  type: string;
  category: string;
  country: string;
  status: string;
  sub_status: string | null;
  workflow: string;
  callback_url: string | null;
  action: string | null;
  redirect_url: string | null;
  parent_type: string | null;
  token: string | null;
  customer_payer: unknown;
  recurring_payment: unknown;
  provider_data: unknown;
  details: unknown;
  card_brand: string | null;
  card_iin: string | null;
  card_lfd: string | null;
  card_number_length: number | null;
  card_security_code_length: number | null;
  card_expiration_month: number | null;
  card_expiration_year: number | null;
  card_holder_name: string | null;
  card_issuer: string | null;
  card_issuer_name: string | null;
  card_issuer_code: string | null;
  card_country_code: string | null;
  card_category: string | null;
  card_funding_type: string | null;
  fingerprint: string | null;
  verify: unknown;
  verify_provider_id: string | null;
  verify_provider_transaction_id: string | null;
  preferred: boolean | null;
  last_successfully_used: boolean | null;
  last_successfully_used_at: string | null;
  created_at: string;
  updated_at: string;
}

/** The encrypted PAN of a row (bytea comes back as Buffer from pg, Uint8Array from PGlite). */
export interface SealedPanColumns {
  pan_ciphertext: Uint8Array | null;
  pan_iv: Uint8Array | null;
  pan_tag: Uint8Array | null;
  pan_key_id: string | null;
}

/** A method's wrapped data key, joined from payment_method_keys (all null: none, or destroyed). */
export interface DataKeyColumns {
  data_key_ciphertext: Uint8Array | null;
  data_key_iv: Uint8Array | null;
  data_key_tag: Uint8Array | null;
  data_key_key_id: string | null;
}

export interface SealedDetailsColumns {
  details_ciphertext: Uint8Array | null;
  details_iv: Uint8Array | null;
  details_tag: Uint8Array | null;
  details_key_id: string | null;
}

export type NewPaymentMethodRow = Omit<
  PaymentMethodRow,
  'created_at' | 'updated_at' | 'last_successfully_used' | 'last_successfully_used_at' | 'preferred'
> &
  SealedPanColumns &
  SealedDetailsColumns;

const COLUMN_LIST = [
  'id', 'vaulted_token', 'organization_id', 'customer_id', 'account_id', 'idempotency_key', 'type', 'category', 'country',
  'status', 'sub_status', 'workflow', 'callback_url', 'action', 'redirect_url', 'parent_type', 'token', 'customer_payer',
  'recurring_payment', 'provider_data', 'details', 'card_brand', 'card_iin', 'card_lfd', 'card_number_length',
  'card_security_code_length', 'card_expiration_month', 'card_expiration_year', 'card_holder_name', 'card_issuer',
  'card_issuer_name', 'card_issuer_code', 'card_country_code', 'card_category', 'card_funding_type', 'fingerprint', 'verify',
  'verify_provider_id', 'verify_provider_transaction_id', 'preferred', 'last_successfully_used', 'last_successfully_used_at', 'created_at', 'updated_at',
] as const satisfies readonly (keyof PaymentMethodRow)[];

/** The public columns, optionally qualified by a table alias. */
const columns = (alias = '') => COLUMN_LIST.map((c) => (alias ? `${alias}.${c}` : c)).join(', ');
const COLUMNS = columns();

const INSERT_COLUMNS = [
  'id', 'vaulted_token', 'organization_id', 'customer_id', 'account_id', 'idempotency_key', 'type', 'category', 'country',
  'status', 'sub_status', 'workflow', 'callback_url', 'action', 'redirect_url', 'parent_type', 'token', 'customer_payer',
  'recurring_payment', 'provider_data', 'details', 'details_ciphertext', 'details_iv', 'details_tag', 'details_key_id',
  'card_brand', 'card_iin', 'card_lfd', 'card_number_length', 'card_security_code_length', 'card_expiration_month',
  'card_expiration_year', 'card_holder_name', 'card_issuer', 'card_issuer_name', 'card_issuer_code', 'card_country_code', 'card_category',
  'card_funding_type', 'pan_ciphertext', 'pan_iv', 'pan_tag', 'pan_key_id', 'fingerprint', 'verify', 'verify_provider_id',
  'verify_provider_transaction_id',
] as const satisfies readonly (keyof NewPaymentMethodRow)[];

const JSON_COLUMNS = new Set<string>(['customer_payer', 'recurring_payment', 'provider_data', 'details', 'verify']);
const BYTEA_COLUMNS = new Set<string>(['pan_ciphertext', 'pan_iv', 'pan_tag', 'details_ciphertext', 'details_iv', 'details_tag']);

function param(column: string, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (JSON_COLUMNS.has(column)) return JSON.stringify(value);
  if (BYTEA_COLUMNS.has(column)) return Buffer.from(value as Uint8Array);
  return value;
}

export const paymentMethodsRepository = {
  async insert(db: Queryable, row: NewPaymentMethodRow): Promise<PaymentMethodRow> {
    const placeholders = INSERT_COLUMNS.map((c, i) => (JSON_COLUMNS.has(c) ? `$${i + 1}::jsonb` : `$${i + 1}`));
    const rows = await db.query<PaymentMethodRow>(
      `INSERT INTO payment_methods (${INSERT_COLUMNS.join(', ')}) VALUES (${placeholders.join(', ')}) RETURNING ${COLUMNS}`,
      INSERT_COLUMNS.map((c) => param(c, row[c])),
    );
    return rows[0]!;
  },

  /**
   * A customer's methods, newest first. With `after` (a vaulted_token of the same customer) the page
   * starts after that method; `limit` undefined means all.
   */
  async listByCustomer(
    db: Queryable,
    organizationId: string,
    customerId: string,
    page: { limit?: number; after?: string } = {},
  ): Promise<PaymentMethodRow[]> {
    const params: unknown[] = [organizationId, customerId];
    let cursor = '';
    if (page.after !== undefined) {
      params.push(page.after);
      cursor = `AND (created_at, id) < (SELECT c.created_at, c.id FROM payment_methods c
                 WHERE c.vaulted_token = $${params.length} AND c.organization_id = $1 AND c.customer_id = $2)`;
    }
    let limit = '';
    if (page.limit !== undefined) {
      params.push(page.limit);
      limit = `LIMIT $${params.length}`;
    }
    return db.query<PaymentMethodRow>(
      `SELECT ${COLUMNS} FROM payment_methods
        WHERE organization_id = $1 AND customer_id = $2 ${cursor}
        ORDER BY created_at DESC, id DESC ${limit}`,
      params,
    );
  },

  async existsForCustomer(db: Queryable, organizationId: string, customerId: string, vaultedToken: string): Promise<boolean> {
    const rows = await db.query('SELECT 1 FROM payment_methods WHERE organization_id = $1 AND customer_id = $2 AND vaulted_token = $3', [
      organizationId,
      customerId,
      vaultedToken,
    ]);
    return rows.length > 0;
  },

  /**
   * Unenrolls the customer's methods (all of them, or the one with `vaultedToken`) and clears what the
   * design promises (docs/design.md, card vault security): the sealed PAN or details, the fingerprint, the
   * holder name, first digits, expiry and issuer facts, the payer, a bank account's beneficiary. Only the
   * brand, last 4 and length stay (the method's name, for the payments that name it). The columns are
   * emptied, not flagged; the data keys are destroyed by destroyDataKeys in the same transaction. Returns the
   * methods that changed (an UNENROLLED one is left as it is) with the fingerprint they had.
   */
  async unenroll(db: Queryable, organizationId: string, customerId: string, vaultedToken?: string): Promise<(PaymentMethodRow & { old_fingerprint: string | null })[]> {
    return db.query<PaymentMethodRow & { old_fingerprint: string | null }>(
      `UPDATE payment_methods m
          SET status = 'UNENROLLED', sub_status = NULL, action = NULL, redirect_url = NULL,
              pan_ciphertext = NULL, pan_iv = NULL, pan_tag = NULL, pan_key_id = NULL,
              details_ciphertext = NULL, details_iv = NULL, details_tag = NULL, details_key_id = NULL,
              fingerprint = NULL, card_holder_name = NULL, card_iin = NULL, card_expiration_month = NULL, card_expiration_year = NULL,
              card_issuer = NULL, card_issuer_name = NULL, card_issuer_code = NULL, card_country_code = NULL, card_category = NULL,
              card_funding_type = NULL, customer_payer = NULL, details = m.details - 'beneficiary_name',
              updated_at = clock_timestamp()
        FROM (SELECT id, fingerprint AS old_fingerprint FROM payment_methods
               WHERE organization_id = $1 AND customer_id = $2 AND ($3::text IS NULL OR vaulted_token = $3)
                 AND status <> 'UNENROLLED'
               ORDER BY created_at, id
               FOR UPDATE) old
        WHERE m.id = old.id
        RETURNING ${columns('m')}, old.old_fingerprint`,
      [organizationId, customerId, vaultedToken ?? null],
    );
  },

  /**
   * Shreds: deletes the data keys of the customer's UNENROLLED methods (all, or the one with `vaultedToken`),
   * after which their ciphertexts, wherever a copy of them lies, no longer open. Returns how many.
   */
  async destroyDataKeys(db: Queryable, organizationId: string, customerId: string, vaultedToken?: string): Promise<number> {
    const rows = await db.query(
      `DELETE FROM payment_method_keys k USING payment_methods m
        WHERE k.payment_method_id = m.id AND m.organization_id = $1 AND m.customer_id = $2
          AND ($3::text IS NULL OR m.vaulted_token = $3) AND m.status = 'UNENROLLED'
        RETURNING k.payment_method_id`,
      [organizationId, customerId, vaultedToken ?? null],
    );
    return rows.length;
  },

  /** The customer's method by its vaulted_token, or undefined (another customer's or organization's too). */
  async findForCustomer(db: Queryable, organizationId: string, customerId: string, vaultedToken: string): Promise<PaymentMethodRow | undefined> {
    const rows = await db.query<PaymentMethodRow>(
      `SELECT ${COLUMNS} FROM payment_methods WHERE organization_id = $1 AND customer_id = $2 AND vaulted_token = $3`,
      [organizationId, customerId, vaultedToken],
    );
    return rows[0];
  },

  /**
   * The organization's method with its sealed PAN and its wrapped data key (payment time and token enrollments
   * only). `forShare`: the method's row locked for share until the transaction ends (a payment's phase A: an
   * unenroll either came first or waits, then shreds the payment's copies too).
   */
  async findWithPan(
    db: Queryable,
    organizationId: string,
    vaultedToken: string,
    options: { forShare?: boolean } = {},
  ): Promise<(PaymentMethodRow & SealedPanColumns & DataKeyColumns) | undefined> {
    const rows = await db.query<PaymentMethodRow & SealedPanColumns & DataKeyColumns>(
      `SELECT ${columns('pm')}, pm.pan_ciphertext, pm.pan_iv, pm.pan_tag, pm.pan_key_id,
              k.ciphertext AS data_key_ciphertext, k.iv AS data_key_iv, k.tag AS data_key_tag, k.key_id AS data_key_key_id
         FROM payment_methods pm LEFT JOIN payment_method_keys k ON k.payment_method_id = pm.id
        WHERE pm.organization_id = $1 AND pm.vaulted_token = $2${options.forShare ? ' FOR SHARE OF pm' : ''}`,
      [organizationId, vaultedToken],
    );
    return rows[0];
  },

  /** For the customer-facing sandbox page, which has only the token: the method and its merchant's name. */
  async findForHostedPage(db: Queryable, vaultedToken: string): Promise<(PaymentMethodRow & { organization_name: string }) | undefined> {
    const rows = await db.query<PaymentMethodRow & { organization_name: string }>(
      `SELECT ${columns('pm')}, o.name AS organization_name
         FROM payment_methods pm JOIN organizations o ON o.id = pm.organization_id
        WHERE pm.vaulted_token = $1`,
      [vaultedToken],
    );
    return rows[0];
  },

  /** READY_TO_ENROLL → ENROLLED or DECLINED, once; undefined when it was not READY_TO_ENROLL any more, or expired (mapper.ts). */
  async completeRedirectEnrollment(db: Queryable, vaultedToken: string, status: 'ENROLLED' | 'DECLINED', subStatus: string | null): Promise<PaymentMethodRow | undefined> {
    const rows = await db.query<PaymentMethodRow>(
      `UPDATE payment_methods SET status = $2, sub_status = $3, action = NULL, updated_at = clock_timestamp()
        WHERE vaulted_token = $1 AND status = 'READY_TO_ENROLL'
          AND created_at > clock_timestamp() - interval '${READY_TO_ENROLL_HOURS} hours'
        RETURNING ${COLUMNS}`,
      [vaultedToken, status, subStatus],
    );
    return rows[0];
  },

  /** An UNENROLLED method (unenrolled, or its customer deleted, while the payment's provider call was out) is left as it is. */
  async markUsed(db: Queryable, vaultedToken: string, at: Date | string, succeeded: boolean): Promise<boolean> {
    const rows = await db.query(
      `UPDATE payment_methods
          SET last_successfully_used = $3,
              last_successfully_used_at = CASE WHEN $3 THEN $2::timestamptz ELSE last_successfully_used_at END,
              updated_at = clock_timestamp()
        WHERE vaulted_token = $1 AND status <> 'UNENROLLED'
        RETURNING id`,
      [vaultedToken, at instanceof Date ? at.toISOString() : at, succeeded],
    );
    return rows.length > 0;
  },

  /** Up to `limit` methods with a PAN or details sealed directly under one of the keyring's `keyIds` (before per-record data keys), locked (others skip them). By the key-id indexes. */
  async sealedUnder(
    db: Queryable,
    keyIds: readonly string[],
    limit: number,
  ): Promise<(SealedPanColumns & SealedDetailsColumns & { id: string; organization_id: string; vaulted_token: string })[]> {
    return db.query(
      `SELECT id, organization_id, vaulted_token, pan_ciphertext, pan_iv, pan_tag, pan_key_id, details_ciphertext, details_iv, details_tag, details_key_id
         FROM payment_methods WHERE pan_key_id = ANY($1::text[]) OR details_key_id = ANY($1::text[])
        LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [keyIds, limit],
    );
  },

  /** Replaces a method's sealed PAN and/or details (re-sealed under another key; the plaintext is unchanged). */
  async reseal(db: Queryable, id: string, pan: Sealed | undefined, details: Sealed | undefined): Promise<void> {
    const b = (v: Uint8Array | undefined) => (v ? Buffer.from(v) : null);
    await db.query(
      `UPDATE payment_methods
          SET pan_ciphertext = COALESCE($2, pan_ciphertext), pan_iv = COALESCE($3, pan_iv), pan_tag = COALESCE($4, pan_tag), pan_key_id = COALESCE($5, pan_key_id),
              details_ciphertext = COALESCE($6, details_ciphertext), details_iv = COALESCE($7, details_iv), details_tag = COALESCE($8, details_tag),
              details_key_id = COALESCE($9, details_key_id)
        WHERE id = $1`,
      [id, b(pan?.ciphertext), b(pan?.iv), b(pan?.tag), pan?.keyId ?? null, b(details?.ciphertext), b(details?.iv), b(details?.tag), details?.keyId ?? null],
    );
  },
};

/** The wrapped (sealed) copy of a vault key kept in its vault_keys row. */
export interface WrappedKeyColumns {
  wrapped_ciphertext: Uint8Array | null;
  wrapped_iv: Uint8Array | null;
  wrapped_tag: Uint8Array | null;
  wrapped_key_id: string | null;
}

/**
 * Every column that names the keyring key a lasting stored value is sealed with. The start refuses a keyring
 * that lacks a key one of them still names (services.ts registerKeys); the keyring-columns test compares
 * this list with the schema's `*key_id` columns, so a new sealed table cannot be forgotten here. Not
 * one-time tokens: they live 10 minutes and are never re-sealed (one under a retired key is TOKEN_EXPIRED).
 */
export const SEALED_KEY_COLUMNS: readonly (readonly [table: string, column: string])[] = [
  ['payment_methods', 'pan_key_id'],
  ['payment_methods', 'details_key_id'],
  ['payment_method_keys', 'key_id'],
  ['vault_keys', 'wrapped_key_id'],
  ['webhook_endpoint_secrets', 'key_id'],
  ['webhook_endpoint_credentials', 'key_id'],
  ['provider_secrets', 'key_id'],
  ['provider_connections', 'key_id'],
];
const IN_USE_SQL = `${SEALED_KEY_COLUMNS.map(([table, column]) => `SELECT 1 FROM ${table} WHERE ${column} = $1`).join(' UNION ALL ')} LIMIT 1`;

export const vaultKeysRepository = {
  /** Serializes key registration across processes starting together. */
  async lock(tx: Queryable): Promise<void> {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [727_003]);
  },

  async list(db: Queryable): Promise<({ id: string; check_value: string } & WrappedKeyColumns)[]> {
    return db.query('SELECT id, check_value, wrapped_ciphertext, wrapped_iv, wrapped_tag, wrapped_key_id FROM vault_keys ORDER BY created_at, id');
  },

  async wrap(db: Queryable, id: string, sealed: Sealed): Promise<void> {
    await db.query('UPDATE vault_keys SET wrapped_ciphertext = $2, wrapped_iv = $3, wrapped_tag = $4, wrapped_key_id = $5 WHERE id = $1', [
      id, Buffer.from(sealed.ciphertext), Buffer.from(sealed.iv), Buffer.from(sealed.tag), sealed.keyId,
    ]);
  },

  async insert(db: Queryable, id: string, checkValue: string): Promise<void> {
    await db.query('INSERT INTO vault_keys (id, check_value) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [id, checkValue]);
  },

  /** Whether any stored row still needs this key to decrypt (SEALED_KEY_COLUMNS: every column naming one). */
  async isInUse(db: Queryable, keyId: string): Promise<boolean> {
    return (await db.query(IN_USE_SQL, [keyId])).length > 0;
  },
};

/** A payment_method_keys row: a method's data key, wrapped by the keyring key `key_id`. */
export interface PaymentMethodKeyRow {
  payment_method_id: string;
  organization_id: string;
  key_id: string;
  ciphertext: Uint8Array;
  iv: Uint8Array;
  tag: Uint8Array;
}

export const paymentMethodKeysRepository = {
  /** Stores (or replaces, when re-wrapped or re-keyed) a method's wrapped data key. */
  async replace(db: Queryable, paymentMethodId: string, organizationId: string, wrapped: Sealed): Promise<void> {
    await db.query(
      `INSERT INTO payment_method_keys (payment_method_id, organization_id, key_id, ciphertext, iv, tag) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (payment_method_id) DO UPDATE SET key_id = EXCLUDED.key_id, ciphertext = EXCLUDED.ciphertext, iv = EXCLUDED.iv, tag = EXCLUDED.tag`,
      [paymentMethodId, organizationId, wrapped.keyId, Buffer.from(wrapped.ciphertext), Buffer.from(wrapped.iv), Buffer.from(wrapped.tag)],
    );
  },

  /** Up to `limit` data keys wrapped under one of `keyIds`, locked (others skip them). */
  async wrappedUnder(db: Queryable, keyIds: readonly string[], limit: number): Promise<PaymentMethodKeyRow[]> {
    return db.query<PaymentMethodKeyRow>(
      `SELECT payment_method_id, organization_id, key_id, ciphertext, iv, tag FROM payment_method_keys
        WHERE key_id = ANY($1::text[]) LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [keyIds, limit],
    );
  },
};
