/**
 * SQL of the checkout domain (checkout sessions, one-time tokens, customer sessions, payment links), and
 * only here. Timestamps come back as text; "expired" is decided by the database's clock, so every instance
 * agrees.
 */
import type { Queryable } from '../db/database.js';

const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));

export interface SessionRow {
  id: string;
  organization_id: string;
  account_id: string;
  merchant_order_id: string;
  payment_description: string;
  country: string;
  currency: string;
  amount_value: string;
  alternative_amount: unknown;
  customer_id: string | null;
  callback_url: string | null;
  metadata: unknown;
  workflow: string;
  installments: unknown;
  recurring_payment: unknown;
  checkout_id: string | null;
  allowed_origins: string[];
  payment_id: string | null;
  payment_link_code: string | null;
  created_at: string;
  updated_at: string;
  expires_at: string;
  /** Computed: past expires_at. */
  expired: boolean;
  /** Computed: the status of payment_id's payment, or null. */
  payment_status: string | null;
}

export type NewSession = Omit<SessionRow, 'created_at' | 'updated_at' | 'expires_at' | 'expired' | 'payment_status' | 'payment_id'> & { ttlSeconds: number };
export type SessionChanges = Partial<
  Pick<
    SessionRow,
    | 'merchant_order_id'
    | 'payment_description'
    | 'country'
    | 'currency'
    | 'amount_value'
    | 'alternative_amount'
    | 'customer_id'
    | 'callback_url'
    | 'metadata'
    | 'workflow'
    | 'installments'
    | 'allowed_origins'
  >
>;
const JSON_COLUMNS = new Set(['alternative_amount', 'metadata', 'installments', 'recurring_payment', 'allowed_origins']);

const SESSION_SELECT = `SELECT s.*, s.expires_at <= clock_timestamp() AS expired, p.status AS payment_status
  FROM checkout_sessions s LEFT JOIN payments p ON p.id = s.payment_id`;

export interface TokenRow {
  token: string;
  organization_id: string;
  account_id: string;
  checkout_session: string | null;
  currency: string | null;
  amount_value: string | null;
  country: string | null;
  card_data: Record<string, unknown>;
  card_ciphertext: Uint8Array | null;
  card_iv: Uint8Array | null;
  card_tag: Uint8Array | null;
  card_key_id: string | null;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  payment_id: string | null;
  expired: boolean;
}
export type NewToken = Pick<TokenRow, 'token' | 'organization_id' | 'account_id' | 'checkout_session' | 'currency' | 'amount_value' | 'country' | 'card_data'> & {
  sealed: { ciphertext: Uint8Array; iv: Uint8Array; tag: Uint8Array; keyId: string };
  ttlSeconds: number;
};
/** How long after its last token expired an unpaid link session may be purged (purgeUnpaidLinkSessions). */
export const PURGE_AFTER_TOKEN_EXPIRY_SECONDS = 3600;

const TOKEN_SELECT = `SELECT t.*, t.expires_at <= clock_timestamp() AS expired FROM one_time_tokens t`;

export interface CustomerSessionRow {
  id: string;
  organization_id: string;
  account_id: string;
  customer_id: string;
  country: string;
  callback_url: string | null;
  checkout_id: string | null;
  allowed_origins: string[];
  created_at: string;
  expires_at: string;
  expired: boolean;
}

export interface LinkRow {
  code: string;
  organization_id: string;
  account_id: string;
  country: string;
  description: string | null;
  merchant_order_id: string | null;
  currency: string;
  amount_value: string;
  capture: boolean;
  one_time_use: boolean;
  callback_url: string | null;
  metadata: unknown;
  checkout_url: string;
  status: 'ACTIVE' | 'CANCELED';
  start_at: string;
  finish_at: string;
  created_at: string;
  updated_at: string;
  /** Computed: past finish_at, or a window that ends before it starts. */
  finished: boolean;
  /** Computed: not yet start_at. */
  not_started: boolean;
  /** Computed: the successful payments, newest first (at most 100). */
  payments: string[];
  payments_number: number;
}
const LINK_SELECT = `SELECT l.*, (l.finish_at <= clock_timestamp() OR l.finish_at <= l.start_at) AS finished, l.start_at > clock_timestamp() AS not_started,
  COALESCE((SELECT json_agg(x.payment_id ORDER BY x.created_at DESC) FROM (SELECT payment_id, created_at FROM payment_link_payments
    WHERE code = l.code ORDER BY created_at DESC LIMIT 100) x), '[]'::json) AS payments,
  (SELECT count(*)::int FROM payment_link_payments WHERE code = l.code) AS payments_number
  FROM payment_links l`;

export const checkoutRepository = {
  async insertSession(db: Queryable, s: NewSession): Promise<SessionRow> {
    await db.query(
      `INSERT INTO checkout_sessions (id, organization_id, account_id, merchant_order_id, payment_description, country, currency, amount_value,
         alternative_amount, customer_id, callback_url, metadata, workflow, installments, recurring_payment, checkout_id, allowed_origins,
         payment_link_code, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, clock_timestamp() + make_interval(secs => $19))`,
      [
        s.id, s.organization_id, s.account_id, s.merchant_order_id, s.payment_description, s.country, s.currency, s.amount_value,
        json(s.alternative_amount), s.customer_id, s.callback_url, json(s.metadata), s.workflow, json(s.installments), json(s.recurring_payment),
        s.checkout_id, JSON.stringify(s.allowed_origins), s.payment_link_code, s.ttlSeconds,
      ],
    );
    return (await this.findSession(db, s.organization_id, s.id))!;
  },

  async findSession(db: Queryable, organizationId: string, id: string, lock = false): Promise<SessionRow | undefined> {
    const rows = await db.query<SessionRow>(`${SESSION_SELECT} WHERE s.id = $1 AND s.organization_id = $2${lock ? ' FOR UPDATE OF s' : ''}`, [id, organizationId]);
    return rows[0];
  },

  async updateSession(db: Queryable, organizationId: string, id: string, changes: SessionChanges): Promise<SessionRow> {
    const entries = Object.entries(changes).filter(([, v]) => v !== undefined);
    const sets = entries.map(([k], i) => `${k} = $${i + 3}`);
    await db.query(
      `UPDATE checkout_sessions SET ${[...sets, 'updated_at = clock_timestamp()'].join(', ')} WHERE id = $1 AND organization_id = $2`,
      [id, organizationId, ...entries.map(([k, v]) => (JSON_COLUMNS.has(k) ? json(v) : v))],
    );
    return (await this.findSession(db, organizationId, id))!;
  },

  /**
   * Counts one more card for a checkout session (a token) or a customer session (an enrollment) while it
   * has taken fewer than `max`; false when it has taken them all (one atomic statement: concurrent requests
   * cannot pass the cap together).
   */
  async takeSessionCard(db: Queryable, kind: 'checkout' | 'customer', organizationId: string, id: string, max: number): Promise<boolean> {
    const table = kind === 'checkout' ? 'checkout_sessions' : 'customer_sessions';
    const rows = await db.query(`UPDATE ${table} SET cards_taken = cards_taken + 1 WHERE id = $1 AND organization_id = $2 AND cards_taken < $3 RETURNING id`, [
      id,
      organizationId,
      max,
    ]);
    return rows.length > 0;
  },

  async setSessionPayment(db: Queryable, id: string, paymentId: string): Promise<void> {
    await db.query(`UPDATE checkout_sessions SET payment_id = $2, updated_at = clock_timestamp() WHERE id = $1`, [id, paymentId]);
  },

  async insertToken(db: Queryable, t: NewToken): Promise<TokenRow> {
    await db.query(
      `INSERT INTO one_time_tokens (token, organization_id, account_id, checkout_session, currency, amount_value, country, card_data,
         card_ciphertext, card_iv, card_tag, card_key_id, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, clock_timestamp() + make_interval(secs => $13))`,
      [
        t.token, t.organization_id, t.account_id, t.checkout_session, t.currency, t.amount_value, t.country, JSON.stringify(t.card_data),
        Buffer.from(t.sealed.ciphertext), Buffer.from(t.sealed.iv), Buffer.from(t.sealed.tag), t.sealed.keyId, t.ttlSeconds,
      ],
    );
    return (await db.query<TokenRow>(`${TOKEN_SELECT} WHERE t.token = $1`, [t.token]))[0]!;
  },

  /** The token of this organization, locked until the transaction ends (a concurrent claim waits, then sees it used). */
  async lockToken(db: Queryable, organizationId: string, token: string): Promise<TokenRow | undefined> {
    return (await db.query<TokenRow>(`${TOKEN_SELECT} WHERE t.token = $1 AND t.organization_id = $2 FOR UPDATE`, [token, organizationId]))[0];
  },

  /**
   * Marks the token used by the payment and destroys its sealed card and the holder's name (the payment
   * keeps its own copy), in the payment's transaction.
   */
  async consumeToken(db: Queryable, token: string, paymentId: string): Promise<void> {
    await db.query(
      `UPDATE one_time_tokens SET used_at = clock_timestamp(), payment_id = $2, card_ciphertext = NULL, card_iv = NULL, card_tag = NULL, card_key_id = NULL,
         card_data = card_data - 'holder_name'
       WHERE token = $1`,
      [token, paymentId],
    );
  },

  /**
   * Retention: the sealed cards of tokens that expired unused, with the holder's name, in a bounded batch;
   * returns how many. The row keeps the rest of its masked card (a replay is told expired, not unknown).
   */
  async shredExpiredTokens(db: Queryable, limit: number): Promise<number> {
    const rows = await db.query(
      `UPDATE one_time_tokens SET card_ciphertext = NULL, card_iv = NULL, card_tag = NULL, card_key_id = NULL, card_data = card_data - 'holder_name'
       WHERE token IN (SELECT token FROM one_time_tokens WHERE card_ciphertext IS NOT NULL AND expires_at <= clock_timestamp()
         ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING token`,
      [limit],
    );
    return rows.length;
  },

  /**
   * Retention: a bounded batch of payment links' checkout sessions that expired with no payment (a shopper
   * who opened the form and left, or an abuser), deleted with their tokens (all unused); returns how many.
   * A merchant's own sessions are its records and stay.
   *
   * Only sessions whose every token expired over an hour ago (PURGE_AFTER_TOKEN_EXPIRY). A payment's
   * claimToken locks the token row, then the session row; this purge locks the session, then deletes the
   * tokens: on a token still usable the two would wait for each other (a deadlock, one of them aborted).
   * claimToken answers TOKEN_EXPIRED for an expired token before it locks the session, so once every token
   * of a session is expired no claim can lock the session any more; the hour leaves any claim that read
   * its token just before expiry long finished (a payment's phase A transaction makes no provider call).
   */
  async purgeUnpaidLinkSessions(db: Queryable, limit: number): Promise<number> {
    const rows = await db.query<{ id: string }>(
      `SELECT s.id FROM checkout_sessions s
       WHERE s.payment_link_code IS NOT NULL AND s.payment_id IS NULL AND s.expires_at <= clock_timestamp()
         AND NOT EXISTS (SELECT 1 FROM one_time_tokens t WHERE t.checkout_session = s.id
           AND (t.payment_id IS NOT NULL OR t.expires_at > clock_timestamp() - make_interval(secs => $2)))
       ORDER BY s.expires_at LIMIT $1 FOR UPDATE OF s SKIP LOCKED`,
      [limit, PURGE_AFTER_TOKEN_EXPIRY_SECONDS],
    );
    if (rows.length === 0) return 0;
    const ids = rows.map((r) => r.id);
    await db.query('DELETE FROM one_time_tokens WHERE checkout_session = ANY($1::text[])', [ids]);
    await db.query('DELETE FROM checkout_sessions WHERE id = ANY($1::text[])', [ids]);
    return rows.length;
  },

  async insertCustomerSession(db: Queryable, s: Omit<CustomerSessionRow, 'created_at' | 'expires_at' | 'expired'> & { ttlSeconds: number }): Promise<CustomerSessionRow> {
    await db.query(
      `INSERT INTO customer_sessions (id, organization_id, account_id, customer_id, country, callback_url, checkout_id, allowed_origins, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, clock_timestamp() + make_interval(secs => $9))`,
      [s.id, s.organization_id, s.account_id, s.customer_id, s.country, s.callback_url, s.checkout_id, JSON.stringify(s.allowed_origins), s.ttlSeconds],
    );
    return (await this.findCustomerSession(db, s.organization_id, s.id))!;
  },

  async findCustomerSession(db: Queryable, organizationId: string, id: string): Promise<CustomerSessionRow | undefined> {
    return (
      await db.query<CustomerSessionRow>(
        `SELECT *, expires_at <= clock_timestamp() AS expired
         FROM customer_sessions WHERE id = $1 AND organization_id = $2`,
        [id, organizationId],
      )
    )[0];
  },

  async insertLink(
    db: Queryable,
    l: Omit<LinkRow, 'created_at' | 'updated_at' | 'finished' | 'not_started' | 'payments' | 'payments_number' | 'start_at' | 'finish_at' | 'status'> & {
      start_at: string | null;
      finish_at: string | null;
    },
  ): Promise<LinkRow> {
    await db.query(
      `INSERT INTO payment_links (code, organization_id, account_id, country, description, merchant_order_id, currency, amount_value, capture,
         one_time_use, callback_url, metadata, checkout_url, status, start_at, finish_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 'ACTIVE', COALESCE($14::timestamptz, clock_timestamp()),
         COALESCE($15::timestamptz, clock_timestamp() + interval '30 days'))`,
      [
        l.code, l.organization_id, l.account_id, l.country, l.description, l.merchant_order_id, l.currency, l.amount_value, l.capture,
        l.one_time_use, l.callback_url, json(l.metadata), l.checkout_url, l.start_at, l.finish_at,
      ],
    );
    return (await this.findLink(db, l.organization_id, l.code))!;
  },

  async findLink(db: Queryable, organizationId: string, code: string, lock = false): Promise<LinkRow | undefined> {
    return (await db.query<LinkRow>(`${LINK_SELECT} WHERE l.code = $1 AND l.organization_id = $2${lock ? ' FOR UPDATE OF l' : ''}`, [code, organizationId]))[0];
  },

  /** The organization of a link, by code alone (one primary-key read: what the page's limits need first). */
  async linkOrganization(db: Queryable, code: string): Promise<string | undefined> {
    return (await db.query<{ organization_id: string }>('SELECT organization_id FROM payment_links WHERE code = $1', [code]))[0]?.organization_id;
  },

  /** A link by code alone: for its public page, which is addressed by the code (the capability). */
  async findLinkByCode(db: Queryable, code: string): Promise<LinkRow | undefined> {
    return (await db.query<LinkRow>(`${LINK_SELECT} WHERE l.code = $1`, [code]))[0];
  },

  async cancelLink(db: Queryable, code: string): Promise<void> {
    await db.query(`UPDATE payment_links SET status = 'CANCELED', updated_at = clock_timestamp() WHERE code = $1`, [code]);
  },

  async addLinkPayment(db: Queryable, code: string, paymentId: string): Promise<boolean> {
    const rows = await db.query(`INSERT INTO payment_link_payments (code, payment_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING code`, [code, paymentId]);
    await db.query(`UPDATE payment_links SET updated_at = clock_timestamp() WHERE code = $1`, [code]);
    return rows.length > 0;
  },

  /** Whether another checkout session of the link has a payment that did not end unpaid (one-time links take one). */
  async linkHasLivePayment(db: Queryable, code: string, unpaid: readonly string[]): Promise<boolean> {
    const rows = await db.query(
      `SELECT 1 FROM checkout_sessions s JOIN payments p ON p.id = s.payment_id
       WHERE s.payment_link_code = $1 AND NOT (p.status = ANY($2::text[])) LIMIT 1`,
      [code, unpaid],
    );
    return rows.length > 0;
  },

  /** The payment link whose checkout session the payment was made through, if any. */
  async linkOfPayment(db: Queryable, paymentId: string): Promise<string | undefined> {
    const rows = await db.query<{ code: string }>(
      `SELECT s.payment_link_code AS code FROM one_time_tokens t JOIN checkout_sessions s ON s.id = t.checkout_session
       WHERE t.payment_id = $1 AND s.payment_link_code IS NOT NULL`,
      [paymentId],
    );
    return rows[0]?.code;
  },
};
