/**
 * SQL for provider connections and routings (migrations 0016, 0020). Every query is scoped by organization.
 * A deleted connection (deleted_at set) is in no list and cannot be changed, but still opens for the
 * follow-ups of payments made through it (findSealedConnection).
 */
import type { Queryable } from '../db/database.js';
import type { Sealed } from '../keyring/cipher.js';
import type { StoredRoute, StoredConditionSet } from './model.js';

export interface ConnectionRow {
  id: string;
  organization_id: string;
  provider_id: string;
  name: string;
  environment: 'TEST' | 'LIVE';
  enabled: boolean;
  timeout_ms: number;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface SealedConnectionRow extends ConnectionRow {
  ciphertext: Uint8Array;
  iv: Uint8Array;
  tag: Uint8Array;
  key_id: string;
}

export interface RoutingRow {
  id: string;
  organization_id: string;
  account_id: string;
  payment_method: string;
  name: string;
  default_route: StoredRoute;
  condition_sets: StoredConditionSet[];
  created_at: string;
  updated_at: string;
}

const CONNECTION_COLUMNS =
  'id, organization_id, provider_id, name, environment, enabled, timeout_ms, created_at::text AS created_at, updated_at::text AS updated_at, deleted_at::text AS deleted_at';
const ROUTING_COLUMNS =
  'id, organization_id, account_id, payment_method, name, default_route, condition_sets, created_at::text AS created_at, updated_at::text AS updated_at';

/** The first key of the per-organization advisory lock of lockRoutes (arbitrary, like the other advisory locks). */
const ROUTES_LOCK = 727_022;

export const routingRepository = {
  async insertConnection(
    db: Queryable,
    c: { id: string; organizationId: string; providerId: string; name: string; environment: 'TEST' | 'LIVE'; sealed: Sealed; timeoutMs: number },
  ): Promise<ConnectionRow> {
    const rows = await db.query<ConnectionRow>(
      `INSERT INTO provider_connections (id, organization_id, provider_id, name, environment, ciphertext, iv, tag, key_id, timeout_ms)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       RETURNING ${CONNECTION_COLUMNS}`,
      [c.id, c.organizationId, c.providerId, c.name, c.environment, c.sealed.ciphertext, c.sealed.iv, c.sealed.tag, c.sealed.keyId, c.timeoutMs],
    );
    return rows[0]!;
  },

  async listConnections(db: Queryable, organizationId: string): Promise<ConnectionRow[]> {
    return db.query<ConnectionRow>(`SELECT ${CONNECTION_COLUMNS} FROM provider_connections WHERE organization_id = $1 AND deleted_at IS NULL ORDER BY created_at, provider_id, id`, [
      organizationId,
    ]);
  },

  /** The organization's live connections (deleted ones do not count). */
  async countConnections(db: Queryable, organizationId: string): Promise<number> {
    const rows = await db.query<{ n: number | string }>('SELECT count(*) AS n FROM provider_connections WHERE organization_id = $1 AND deleted_at IS NULL', [organizationId]);
    return Number(rows[0]!.n);
  },

  async findConnection(db: Queryable, organizationId: string, id: string): Promise<ConnectionRow | undefined> {
    const rows = await db.query<ConnectionRow>(`SELECT ${CONNECTION_COLUMNS} FROM provider_connections WHERE organization_id = $1 AND id = $2 AND deleted_at IS NULL`, [
      organizationId,
      id,
    ]);
    return rows[0];
  },

  /** Deleted ones too: a payment made through a connection keeps its follow-ups after the connection is deleted. */
  async findSealedConnection(db: Queryable, organizationId: string, id: string): Promise<SealedConnectionRow | undefined> {
    const rows = await db.query<SealedConnectionRow>(
      `SELECT ${CONNECTION_COLUMNS}, ciphertext, iv, tag, key_id FROM provider_connections WHERE organization_id = $1 AND id = $2`,
      [organizationId, id],
    );
    return rows[0];
  },

  /** A connection by id alone, with its sealed credentials (provider notifications name only the connection). */
  async findSealedConnectionById(db: Queryable, id: string): Promise<SealedConnectionRow | undefined> {
    const rows = await db.query<SealedConnectionRow>(`SELECT ${CONNECTION_COLUMNS}, ciphertext, iv, tag, key_id FROM provider_connections WHERE id = $1`, [id]);
    return rows[0];
  },

  /** Only the fields given change; undefined when the organization has no such connection. */
  async updateConnection(
    db: Queryable,
    organizationId: string,
    id: string,
    patch: { name?: string; enabled?: boolean; timeoutMs?: number },
  ): Promise<ConnectionRow | undefined> {
    const rows = await db.query<ConnectionRow>(
      `UPDATE provider_connections SET
         name = COALESCE($3, name), enabled = COALESCE($4, enabled), timeout_ms = COALESCE($5, timeout_ms), updated_at = clock_timestamp()
       WHERE organization_id = $1 AND id = $2 AND deleted_at IS NULL
       RETURNING ${CONNECTION_COLUMNS}`,
      [organizationId, id, patch.name ?? null, patch.enabled ?? null, patch.timeoutMs ?? null],
    );
    return rows[0];
  },

  /** Marks a connection deleted (and disabled); undefined when the organization has no such live connection. */
  async markConnectionDeleted(db: Queryable, organizationId: string, id: string): Promise<ConnectionRow | undefined> {
    const rows = await db.query<ConnectionRow>(
      `UPDATE provider_connections SET deleted_at = clock_timestamp(), enabled = false, updated_at = clock_timestamp()
       WHERE organization_id = $1 AND id = $2 AND deleted_at IS NULL
       RETURNING ${CONNECTION_COLUMNS}`,
      [organizationId, id],
    );
    return rows[0];
  },

  /**
   * Serializes the organization's connection deletes with its routing writes (until the transaction
   * ends): a routing validated against a connection cannot be stored after that connection was deleted.
   */
  async lockRoutes(db: Queryable, organizationId: string): Promise<void> {
    await db.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [ROUTES_LOCK, organizationId]);
  },

  /** false when the account already has a routing for the payment method (UNIQUE (account_id, payment_method)). */
  async insertRouting(
    db: Queryable,
    r: { id: string; organizationId: string; accountId: string; paymentMethod: string; name: string; defaultRoute: StoredRoute; conditionSets: StoredConditionSet[] },
  ): Promise<RoutingRow | undefined> {
    const rows = await db.query<RoutingRow>(
      `INSERT INTO routings (id, organization_id, account_id, payment_method, name, default_route, condition_sets)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb)
       ON CONFLICT (account_id, payment_method) DO NOTHING
       RETURNING ${ROUTING_COLUMNS}`,
      [r.id, r.organizationId, r.accountId, r.paymentMethod, r.name, JSON.stringify(r.defaultRoute), JSON.stringify(r.conditionSets)],
    );
    return rows[0];
  },

  async findRouting(db: Queryable, organizationId: string, id: string): Promise<RoutingRow | undefined> {
    const rows = await db.query<RoutingRow>(`SELECT ${ROUTING_COLUMNS} FROM routings WHERE organization_id = $1 AND id = $2`, [organizationId, id]);
    return rows[0];
  },

  async findRoutingFor(db: Queryable, organizationId: string, accountId: string, paymentMethod: string): Promise<RoutingRow | undefined> {
    const rows = await db.query<RoutingRow>(
      `SELECT ${ROUTING_COLUMNS} FROM routings WHERE organization_id = $1 AND account_id = $2 AND payment_method = $3`,
      [organizationId, accountId, paymentMethod],
    );
    return rows[0];
  },

  async listRoutings(db: Queryable, organizationId: string, accountId: string, paymentMethod: string | undefined): Promise<RoutingRow[]> {
    return db.query<RoutingRow>(
      `SELECT ${ROUTING_COLUMNS} FROM routings
       WHERE organization_id = $1 AND account_id = $2 AND ($3::text IS NULL OR payment_method = $3)
       ORDER BY created_at, payment_method, id`,
      [organizationId, accountId, paymentMethod ?? null],
    );
  },

  async updateRouting(
    db: Queryable,
    organizationId: string,
    id: string,
    patch: { name?: string; defaultRoute?: StoredRoute; conditionSets?: StoredConditionSet[] },
  ): Promise<RoutingRow | undefined> {
    const rows = await db.query<RoutingRow>(
      `UPDATE routings SET
         name = COALESCE($3, name),
         default_route = COALESCE($4::jsonb, default_route),
         condition_sets = COALESCE($5::jsonb, condition_sets),
         updated_at = clock_timestamp()
       WHERE organization_id = $1 AND id = $2
       RETURNING ${ROUTING_COLUMNS}`,
      [
        organizationId,
        id,
        patch.name ?? null,
        patch.defaultRoute ? JSON.stringify(patch.defaultRoute) : null,
        patch.conditionSets ? JSON.stringify(patch.conditionSets) : null,
      ],
    );
    return rows[0];
  },

  /** Connections sealed under another key than the active one (after a vault key rotation), a batch at a time, locked. */
  async sealedNotUnder(db: Queryable, activeKeyId: string, limit: number): Promise<SealedConnectionRow[]> {
    return db.query<SealedConnectionRow>(
      `SELECT ${CONNECTION_COLUMNS}, ciphertext, iv, tag, key_id FROM provider_connections WHERE key_id <> $1 ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [activeKeyId, limit],
    );
  },

  async reseal(db: Queryable, id: string, sealed: Sealed): Promise<void> {
    await db.query('UPDATE provider_connections SET ciphertext = $2, iv = $3, tag = $4, key_id = $5 WHERE id = $1', [id, sealed.ciphertext, sealed.iv, sealed.tag, sealed.keyId]);
  },

  /**
   * Disables every enabled connection to a provider not in `available` (the providers this service runs)
   * and returns them: at start, so a sandbox connection left in a database never routes outside sandbox mode.
   */
  async disableConnectionsOutside(db: Queryable, available: readonly string[]): Promise<{ id: string; organization_id: string; provider_id: string }[]> {
    return db.query<{ id: string; organization_id: string; provider_id: string }>(
      `UPDATE provider_connections SET enabled = false, updated_at = clock_timestamp()
        WHERE enabled AND NOT (provider_id = ANY($1::text[]))
        RETURNING id, organization_id, provider_id`,
      [[...available]],
    );
  },

  /** The organizations' routings (id, organization, routes), to tell which ones use given connections. */
  async routingsOf(db: Queryable, organizationIds: readonly string[]): Promise<Pick<RoutingRow, 'id' | 'organization_id' | 'default_route' | 'condition_sets'>[]> {
    return db.query(`SELECT id, organization_id, default_route, condition_sets FROM routings WHERE organization_id = ANY($1::text[]) ORDER BY id`, [[...organizationIds]]);
  },

  /** Organizations that have no connection at all: created before connections existed (migration 0016). */
  async organizationsWithoutConnections(db: Queryable): Promise<string[]> {
    const rows = await db.query<{ id: string }>(
      'SELECT o.id FROM organizations o WHERE NOT EXISTS (SELECT 1 FROM provider_connections c WHERE c.organization_id = o.id) ORDER BY o.id',
    );
    return rows.map((r) => r.id);
  },

  async accountsOf(db: Queryable, organizationId: string): Promise<string[]> {
    const rows = await db.query<{ id: string }>('SELECT id FROM accounts WHERE organization_id = $1 ORDER BY created_at, id', [organizationId]);
    return rows.map((r) => r.id);
  },
};
