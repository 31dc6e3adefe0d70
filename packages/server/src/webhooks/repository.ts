/** Webhook storage: the only module of the domain that speaks SQL. Times are passed as ISO text. */
import type { Queryable } from '../db/database.js';
import { fairPick, fairShare, serializeClaims } from '../db/fair-claim.js';

export interface EndpointRow {
  id: string;
  organization_id: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  /** The Yuno trigger lists as last given through /webhooks (yuno-view.ts); null once `events` was set through /webhook-endpoints. */
  yuno_triggers: unknown;
  created_at: string;
  updated_at: string;
}

/** A header value or HMAC key of Yuno's webhook configuration, sealed like the signing secrets. */
export type CredentialKind = 'api_key' | 'secret' | 'hmac_client_secret';
export interface CredentialRow {
  endpoint_id: string;
  kind: CredentialKind;
  key_id: string;
  ciphertext: Uint8Array;
  iv: Uint8Array;
  tag: Uint8Array;
}

export interface SecretRow {
  id: string;
  endpoint_id: string;
  key_id: string;
  ciphertext: Uint8Array;
  iv: Uint8Array;
  tag: Uint8Array;
  created_at: string;
  expires_at: string | null;
}

export interface DeliveryRow {
  id: string;
  organization_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  resource_id: string;
  status: 'PENDING' | 'DELIVERED' | 'FAILED' | 'CANCELED';
  attempts: number;
  next_attempt_at: string;
  delivered_at: string | null;
  created_at: string;
}

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  trigger: 'SCHEDULED' | 'MANUAL';
  started_at: string;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  succeeded: boolean;
}

/** A delivery claimed by a worker, with what it needs to send it. */
export interface ClaimedDelivery {
  id: string;
  lease_id: string;
  attempts: number;
  failures: number;
  next_trigger: 'SCHEDULED' | 'MANUAL';
  endpoint_id: string;
  organization_id: string;
  url: string;
  event_id: string;
  event_type: string;
  account_id: string | null;
  data: unknown;
  event_created_at: string;
}

const ENDPOINT_COLUMNS = 'id, organization_id, url, description, events, enabled, yuno_triggers, created_at, updated_at';
const DELIVERY_COLUMNS = 'id, organization_id, endpoint_id, event_id, event_type, resource_id, status, attempts, next_attempt_at, delivered_at, created_at';

/** Deliveries leased at once, over every worker on the database (see claimDue). */
export const DEFAULT_CLAIM_CAPS = { perEndpoint: 4, perOrganization: 8 } as const;
/**
 * Secrets that sign a delivery at once per endpoint: the current one and the two most recently retired
 * (spec: rotate-secret). Each is a signature in `webhook-signature`; unbounded rotations within an overlap
 * window would grow the header past receivers' limits.
 */
export const MAX_SIGNING_SECRETS = 3;
/** Pending deliveries a metrics scrape counts at most, per state (queueStats). */
export const QUEUE_STATS_CAP = 100_000;
/** Serializes claims across instances (arbitrary constant, like the other advisory locks). */
const CLAIM_LOCK = 727_005;

/**
 * claimDue's statement (exported for the test that bounds what a claim reads: test/webhooks-claim-cost.test.ts).
 * $1 now, $2 limit, $3 lease id, $4 lease until, $5 cap per endpoint, $6 cap per organization, $7 reserve.
 */
export function claimDueSql(
  endpointFits = fairShare({ from: 'ready', group: 'endpoint_id', order: ['next_attempt_at', 'event_seq'], held: 'endpoint_busy', cap: '$5::int', rank: 'endpoint_rank' }),
  picked = fairPick({ from: 'endpoint_fits', group: 'organization_id', order: ['next_attempt_at', 'event_seq'], held: 'org_busy', cap: '$6::int', limit: '$2::int', reserve: '$7::int' }),
): string {
  return `WITH busy AS (
       SELECT organization_id, endpoint_id, count(*)::int AS n FROM webhook_deliveries
       WHERE locked_until > $1::timestamptz AND status = 'PENDING'
       GROUP BY organization_id, endpoint_id
     ), endpoint_busy AS (
       SELECT endpoint_id, sum(n)::int AS n FROM busy GROUP BY endpoint_id
     ), org_busy AS (
       SELECT organization_id, sum(n)::int AS n FROM busy GROUP BY organization_id
     ), ready AS (
       -- Per endpoint with room, its earliest due deliveries up to the room its caps leave: an index range
       -- read that stops there, whatever the endpoint's backlog.
       SELECT c.id, c.organization_id, c.endpoint_id, c.next_attempt_at, c.event_seq
       FROM webhook_endpoints e
       LEFT JOIN endpoint_busy eb ON eb.endpoint_id = e.id
       LEFT JOIN org_busy ob ON ob.organization_id = e.organization_id
       CROSS JOIN LATERAL (
         SELECT d.id, d.organization_id, d.endpoint_id, d.next_attempt_at, d.event_seq
         FROM webhook_deliveries d
         WHERE d.endpoint_id = e.id AND d.status = 'PENDING' AND d.next_attempt_at < $1::timestamptz + interval '1 millisecond'
           AND (d.locked_until IS NULL OR d.locked_until <= $1::timestamptz)
           -- the resource's earliest pending delivery to the endpoint (in order per resource); a scalar subquery,
           -- so it stays one index probe per row read whatever the planner knows of the table
           AND d.event_seq = (
             SELECT min(p.event_seq) FROM webhook_deliveries p
             WHERE p.endpoint_id = d.endpoint_id AND p.resource_id = d.resource_id AND p.status = 'PENDING')
         ORDER BY d.next_attempt_at, d.event_seq
         LIMIT LEAST($5::int - COALESCE(eb.n, 0), $6::int - COALESCE(ob.n, 0))
       ) c
       WHERE e.enabled AND e.deleted_at IS NULL
         AND COALESCE(eb.n, 0) < $5::int AND COALESCE(ob.n, 0) < $6::int
     ), endpoint_fits AS (
       ${endpointFits}
     ), picked AS (
       ${picked}
     ), due AS (
       SELECT d.id FROM webhook_deliveries d
       WHERE d.id IN (SELECT id FROM picked) AND d.status = 'PENDING' AND (d.locked_until IS NULL OR d.locked_until <= $1::timestamptz)
       FOR UPDATE OF d SKIP LOCKED
     ), claimed AS (
       -- A redelivery asked for during an attempt that never finished (its worker died, or stopped and
       -- released the lease) applies here: a fresh schedule, MANUAL, as finishAttempt would have made it.
       UPDATE webhook_deliveries d SET lease_id = $3, locked_until = $4::timestamptz, redeliver_requested = false,
         failures = CASE WHEN d.redeliver_requested THEN 0 ELSE d.failures END,
         next_trigger = CASE WHEN d.redeliver_requested THEN 'MANUAL' ELSE d.next_trigger END
       FROM due WHERE d.id = due.id
       RETURNING d.id, d.lease_id, d.attempts, d.failures, d.next_trigger, d.endpoint_id, d.event_id, d.organization_id
     )
     SELECT c.id, c.lease_id, c.attempts, c.failures, c.next_trigger, c.endpoint_id, c.organization_id, e.url,
            c.event_id, ev.type AS event_type, ev.account_id, ev.data, ev.created_at AS event_created_at
     FROM claimed c JOIN webhook_endpoints e ON e.id = c.endpoint_id JOIN webhook_events ev ON ev.id = c.event_id`;
}

export const webhooksRepository = {
  // ---- endpoints

  async insertEndpoint(db: Queryable, e: Omit<EndpointRow, 'created_at' | 'updated_at' | 'yuno_triggers'> & { yuno_triggers?: unknown }): Promise<EndpointRow> {
    const rows = await db.query<EndpointRow>(
      `INSERT INTO webhook_endpoints (id, organization_id, url, description, events, enabled, yuno_triggers) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)
       RETURNING ${ENDPOINT_COLUMNS}`,
      [e.id, e.organization_id, e.url, e.description, JSON.stringify(e.events), e.enabled, e.yuno_triggers == null ? null : JSON.stringify(e.yuno_triggers)],
    );
    return rows[0]!;
  },

  /** The organization's endpoints (not deleted), counted under a transaction-scoped lock on its registrations. */
  async lockAndCountEndpoints(db: Queryable, organizationId: string): Promise<number> {
    await db.query("SELECT pg_advisory_xact_lock(hashtextextended('webhook-endpoints:' || $1, 0))", [organizationId]);
    const rows = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_endpoints WHERE organization_id = $1 AND deleted_at IS NULL', [organizationId]);
    return rows[0]!.n;
  },

  /** The organization's endpoint (not deleted), optionally locked for an update. */
  async findEndpoint(db: Queryable, organizationId: string, id: string, forUpdate = false): Promise<EndpointRow | undefined> {
    const rows = await db.query<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1 AND organization_id = $2 AND deleted_at IS NULL${forUpdate ? ' FOR UPDATE' : ''}`,
      [id, organizationId],
    );
    return rows[0];
  },

  /**
   * Whether the id is an endpoint of the organization, deleted ones included: a list cursor may be one
   * (deleted since its page was read, its row keeps created_at and id, so the walk goes on after it).
   */
  async endpointExistsInOrganization(db: Queryable, organizationId: string, id: string): Promise<boolean> {
    return (await db.query('SELECT 1 FROM webhook_endpoints WHERE id = $1 AND organization_id = $2', [id, organizationId])).length > 0;
  },

  /** Newest first; `afterId` is the last id of the previous page (a deleted endpoint's too). */
  async listEndpoints(db: Queryable, organizationId: string, limit: number, afterId: string | null): Promise<EndpointRow[]> {
    return db.query<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints
       WHERE organization_id = $1 AND deleted_at IS NULL
         AND ($2::text IS NULL OR (created_at, id) < (SELECT created_at, id FROM webhook_endpoints WHERE id = $2 AND organization_id = $1))
       ORDER BY created_at DESC, id DESC LIMIT $3`,
      [organizationId, afterId, limit],
    );
  },

  async updateEndpoint(
    db: Queryable,
    organizationId: string,
    id: string,
    patch: { url?: string; events?: string[]; description?: string | null; enabled?: boolean; yunoTriggers?: unknown },
  ): Promise<EndpointRow | undefined> {
    // `events` set without Yuno triggers (through /webhook-endpoints) forgets the Yuno lists: the Yuno view then derives them from `events`.
    const rows = await db.query<EndpointRow>(
      `UPDATE webhook_endpoints SET
         url = CASE WHEN $3 THEN $4 ELSE url END,
         events = CASE WHEN $5 THEN $6::jsonb ELSE events END,
         yuno_triggers = CASE WHEN $11 THEN $12::jsonb WHEN $5 THEN NULL ELSE yuno_triggers END,
         description = CASE WHEN $7 THEN $8 ELSE description END,
         enabled = CASE WHEN $9 THEN $10 ELSE enabled END,
         updated_at = clock_timestamp()
       WHERE id = $1 AND organization_id = $2 AND deleted_at IS NULL
       RETURNING ${ENDPOINT_COLUMNS}`,
      [
        id, organizationId,
        patch.url !== undefined, patch.url ?? null,
        patch.events !== undefined, patch.events === undefined ? null : JSON.stringify(patch.events),
        patch.description !== undefined, patch.description ?? null,
        patch.enabled !== undefined, patch.enabled ?? null,
        patch.yunoTriggers !== undefined, patch.yunoTriggers == null ? null : JSON.stringify(patch.yunoTriggers),
      ],
    );
    return rows[0];
  },

  /** Marks it deleted, cancels what was still to be sent and destroys its secrets; false if there was none. */
  async deleteEndpoint(db: Queryable, organizationId: string, id: string): Promise<boolean> {
    const rows = await db.query<{ id: string }>(
      `UPDATE webhook_endpoints SET deleted_at = clock_timestamp(), updated_at = clock_timestamp(), enabled = false
       WHERE id = $1 AND organization_id = $2 AND deleted_at IS NULL RETURNING id`,
      [id, organizationId],
    );
    if (rows.length === 0) return false;
    await db.query(
      `UPDATE webhook_deliveries SET status = 'CANCELED', lease_id = NULL, locked_until = NULL, updated_at = clock_timestamp()
       WHERE endpoint_id = $1 AND status = 'PENDING'`,
      [id],
    );
    await db.query('DELETE FROM webhook_endpoint_secrets WHERE endpoint_id = $1', [id]);
    await db.query('DELETE FROM webhook_endpoint_credentials WHERE endpoint_id = $1', [id]);
    return true;
  },

  /** Another live endpoint of the organization whose description is `name` (the Yuno view's unique name). */
  async endpointNamed(db: Queryable, organizationId: string, name: string, exceptId: string | null): Promise<string | undefined> {
    const rows = await db.query<{ id: string }>(
      `SELECT id FROM webhook_endpoints WHERE organization_id = $1 AND description = $2 AND deleted_at IS NULL AND ($3::text IS NULL OR id <> $3) LIMIT 1`,
      [organizationId, name, exceptId],
    );
    return rows[0]?.id;
  },

  // ---- Yuno's delivery headers (api_key, secret, hmac_client_secret)

  async upsertCredential(db: Queryable, c: CredentialRow): Promise<void> {
    await db.query(
      `INSERT INTO webhook_endpoint_credentials (endpoint_id, kind, key_id, ciphertext, iv, tag) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (endpoint_id, kind) DO UPDATE SET key_id = EXCLUDED.key_id, ciphertext = EXCLUDED.ciphertext, iv = EXCLUDED.iv, tag = EXCLUDED.tag`,
      [c.endpoint_id, c.kind, c.key_id, Buffer.from(c.ciphertext), Buffer.from(c.iv), Buffer.from(c.tag)],
    );
  },

  /** Which credentials the endpoints have (never their values). */
  async credentialKinds(db: Queryable, endpointIds: readonly string[]): Promise<{ endpoint_id: string; kind: CredentialKind }[]> {
    if (endpointIds.length === 0) return [];
    return db.query('SELECT endpoint_id, kind FROM webhook_endpoint_credentials WHERE endpoint_id = ANY($1::text[])', [[...endpointIds]]);
  },

  async credentials(db: Queryable, endpointId: string): Promise<CredentialRow[]> {
    return db.query<CredentialRow>('SELECT endpoint_id, kind, key_id, ciphertext, iv, tag FROM webhook_endpoint_credentials WHERE endpoint_id = $1', [endpointId]);
  },

  async credentialsNotUnder(db: Queryable, keyId: string): Promise<CredentialRow[]> {
    return db.query<CredentialRow>('SELECT endpoint_id, kind, key_id, ciphertext, iv, tag FROM webhook_endpoint_credentials WHERE key_id <> $1 FOR UPDATE', [keyId]);
  },

  // ---- secrets

  async insertSecret(db: Queryable, s: Omit<SecretRow, 'created_at' | 'expires_at'>): Promise<void> {
    await db.query('INSERT INTO webhook_endpoint_secrets (id, endpoint_id, key_id, ciphertext, iv, tag) VALUES ($1, $2, $3, $4, $5, $6)', [
      s.id, s.endpoint_id, s.key_id, Buffer.from(s.ciphertext), Buffer.from(s.iv), Buffer.from(s.tag),
    ]);
  },

  /**
   * Retires the current secret at `expiresAt`; older secrets never outlive it, and of the retired secrets
   * still signing at `now` only the newest `MAX_SIGNING_SECRETS - 1` keep signing (the others expire at
   * `now`), so with the new current one at most MAX_SIGNING_SECRETS sign. Returns the effective expiry.
   */
  async retireCurrentSecret(db: Queryable, endpointId: string, expiresAt: string, now: string): Promise<string> {
    const rows = await db.query<{ expires_at: string }>(
      `UPDATE webhook_endpoint_secrets SET expires_at = $2::timestamptz
       WHERE endpoint_id = $1 AND expires_at IS NULL RETURNING expires_at`,
      [endpointId, expiresAt],
    );
    await db.query(
      `UPDATE webhook_endpoint_secrets SET expires_at = $2::timestamptz WHERE endpoint_id = $1 AND expires_at > $2::timestamptz`,
      [endpointId, expiresAt],
    );
    await db.query(
      `UPDATE webhook_endpoint_secrets SET expires_at = $2::timestamptz
       WHERE id IN (SELECT id FROM webhook_endpoint_secrets WHERE endpoint_id = $1 AND expires_at > $2::timestamptz
                    ORDER BY created_at DESC, id DESC OFFSET $3)`,
      [endpointId, now, MAX_SIGNING_SECRETS - 1],
    );
    return rows[0]?.expires_at ?? expiresAt;
  },

  /** Secrets that sign at `now`: the current one and any still inside its overlap window, newest first. */
  async signingSecrets(db: Queryable, endpointId: string, now: string): Promise<SecretRow[]> {
    return db.query<SecretRow>(
      `SELECT id, endpoint_id, key_id, ciphertext, iv, tag, created_at, expires_at FROM webhook_endpoint_secrets
       WHERE endpoint_id = $1 AND (expires_at IS NULL OR expires_at > $2::timestamptz)
       ORDER BY created_at DESC, id DESC`,
      [endpointId, now],
    );
  },

  /** Drops secrets whose overlap window has ended (they can no longer sign anything). */
  async purgeExpiredSecrets(db: Queryable, now: string): Promise<void> {
    await db.query('DELETE FROM webhook_endpoint_secrets WHERE expires_at IS NOT NULL AND expires_at <= $1::timestamptz', [now]);
  },

  async secretsNotUnder(db: Queryable, keyId: string): Promise<SecretRow[]> {
    return db.query<SecretRow>(
      'SELECT id, endpoint_id, key_id, ciphertext, iv, tag, created_at, expires_at FROM webhook_endpoint_secrets WHERE key_id <> $1 FOR UPDATE',
      [keyId],
    );
  },

  async resealSecret(db: Queryable, id: string, sealed: { keyId: string; ciphertext: Uint8Array; iv: Uint8Array; tag: Uint8Array }): Promise<void> {
    await db.query('UPDATE webhook_endpoint_secrets SET key_id = $2, ciphertext = $3, iv = $4, tag = $5 WHERE id = $1', [
      id, sealed.keyId, Buffer.from(sealed.ciphertext), Buffer.from(sealed.iv), Buffer.from(sealed.tag),
    ]);
  },

  // ---- events (the outbox)

  /**
   * The event and one delivery per enabled endpoint of the organization subscribed to its type (or to
   * `*`), in one statement (one round trip: every state change that announces itself pays it).
   */
  async insertEventWithDeliveries(
    db: Queryable,
    e: { id: string; organization_id: string; account_id: string | null; type: string; resource_id: string; data: unknown },
  ): Promise<number> {
    const rows = await db.query<{ deliveries: number }>(
      `WITH event AS (
         INSERT INTO webhook_events (id, organization_id, account_id, type, resource_id, data) VALUES ($1, $2, $3, $4, $5, $6)
         RETURNING id, seq, organization_id, type, resource_id
       ), deliveries AS (
         INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_seq, event_type, resource_id, next_attempt_at)
         SELECT gen_random_uuid()::text, ev.organization_id, ep.id, ev.id, ev.seq, ev.type, ev.resource_id,
                -- never due before an earlier pending delivery of the resource (it waits for that one anyway)
                GREATEST(clock_timestamp(), (SELECT max(p.next_attempt_at) FROM webhook_deliveries p
                  WHERE p.endpoint_id = ep.id AND p.resource_id = ev.resource_id AND p.status = 'PENDING'))
           FROM event ev JOIN webhook_endpoints ep ON ep.organization_id = ev.organization_id
          WHERE ep.enabled AND ep.deleted_at IS NULL AND (ep.events ? ev.type OR ep.events ? '*')
         RETURNING 1
       )
       SELECT (SELECT count(*) FROM deliveries)::int AS deliveries`,
      [e.id, e.organization_id, e.account_id, e.type, e.resource_id, JSON.stringify(e.data)],
    );
    return rows[0]!.deliveries;
  },

  // ---- the worker

  /**
   * Claims up to `limit` due deliveries with a lease, fairly across organizations:
   * - at most `caps.perEndpoint` deliveries of one endpoint and `caps.perOrganization` of one
   *   organization are leased at once, counted over every worker on the database (leases still running);
   * - the pick goes round-robin over organizations (every organization's earliest due delivery before
   *   anyone's second), so an organization with a backlog or slow receivers never fills the slots;
   * - skipped: rows another worker holds (SKIP LOCKED), disabled endpoints, and any delivery with an
   *   earlier, unfinished delivery of the same resource to the same endpoint (in order per resource).
   * Claims are serialized across instances by a transaction-scoped advisory lock, so the caps hold exactly
   * (two claims at once would each see the other's leases as free); a claim is one short statement, and its
   * cost is bounded whatever the backlog: it reads the leases in flight (an index of leased rows only) and,
   * per enabled endpoint with room under its caps, only its earliest due deliveries up to that room (an index
   * on endpoint and due time), never the rest of the queue. Deliveries waiting behind an earlier one of their
   * resource are kept from being due before it (finishAttempt, insertEventWithDeliveries), so they are not
   * read either while their predecessor waits for a retry.
   * `now` comes from the worker's clock in milliseconds while the database stamps new deliveries in
   * microseconds: a delivery is due anywhere within now's millisecond, so one recorded earlier in that
   * millisecond is not left for the next pass.
   */
  async claimDue(
    db: Queryable,
    now: string,
    limit: number,
    leaseId: string,
    leaseUntil: string,
    caps: { perEndpoint: number; perOrganization: number } = DEFAULT_CLAIM_CAPS,
    /** Of the `limit`, slots kept for organizations with nothing in flight (fair-claim.ts). */
    reserve = 0,
  ): Promise<ClaimedDelivery[]> {
    await serializeClaims(db, CLAIM_LOCK);
    return db.query<ClaimedDelivery>(
      claimDueSql(),
      [now, limit, leaseId, leaseUntil, caps.perEndpoint, caps.perOrganization, reserve],
    );
  },

  /**
   * Records an attempt and the delivery's next state, if this worker still holds the lease (else only
   * the attempt is logged: the delivery moved on without it). Returns the attempt number.
   */
  async finishAttempt(
    db: Queryable,
    a: {
      deliveryId: string;
      leaseId: string;
      trigger: 'SCHEDULED' | 'MANUAL';
      startedAt: string;
      statusCode: number | null;
      latencyMs: number;
      error: string | null;
      succeeded: boolean;
      next: { status: 'PENDING' | 'DELIVERED' | 'FAILED'; failures: number; nextAttemptAt: string; deliveredAt: string | null };
    },
  ): Promise<number> {
    // A redelivery asked for during this attempt (requeue) applies now: due at once, MANUAL, a fresh schedule.
    let rows = await db.query<{ attempts: number }>(
      `UPDATE webhook_deliveries SET attempts = attempts + 1,
         status = CASE WHEN redeliver_requested THEN 'PENDING' ELSE $3 END,
         failures = CASE WHEN redeliver_requested THEN 0 ELSE $4 END,
         next_attempt_at = CASE WHEN redeliver_requested THEN $7::timestamptz ELSE $5::timestamptz END,
         next_trigger = CASE WHEN redeliver_requested THEN 'MANUAL' ELSE 'SCHEDULED' END,
         delivered_at = COALESCE($6::timestamptz, delivered_at), redeliver_requested = false, lease_id = NULL, locked_until = NULL,
         updated_at = clock_timestamp()
       WHERE id = $1 AND lease_id = $2 RETURNING attempts`,
      [a.deliveryId, a.leaseId, a.next.status, a.next.failures, a.next.nextAttemptAt, a.next.deliveredAt, a.startedAt],
    );
    if (rows.length === 0) {
      rows = await db.query<{ attempts: number }>(
        'UPDATE webhook_deliveries SET attempts = attempts + 1, updated_at = clock_timestamp() WHERE id = $1 RETURNING attempts',
        [a.deliveryId],
      );
    }
    const attempt = rows[0]!.attempts;
    // The later pending deliveries of the resource wait for this one: never due before its retry (so a claim
    // does not read them while it waits), due as soon as it is done (if they have not failed themselves).
    await db.query(
      `UPDATE webhook_deliveries f SET next_attempt_at = CASE WHEN h.status = 'PENDING' THEN h.next_attempt_at ELSE $2::timestamptz END
       FROM webhook_deliveries h
       WHERE h.id = $1 AND f.endpoint_id = h.endpoint_id AND f.resource_id = h.resource_id AND f.status = 'PENDING' AND f.event_seq > h.event_seq
         AND CASE WHEN h.status = 'PENDING' THEN f.next_attempt_at < h.next_attempt_at ELSE f.failures = 0 AND f.next_attempt_at > $2::timestamptz END`,
      [a.deliveryId, a.startedAt],
    );
    await db.query(
      `INSERT INTO webhook_delivery_attempts (delivery_id, attempt, trigger, started_at, status_code, latency_ms, error, succeeded)
       VALUES ($1, $2, $3, $4::timestamptz, $5, $6, $7, $8)`,
      [a.deliveryId, attempt, a.trigger, a.startedAt, a.statusCode, a.latencyMs, a.error, a.succeeded],
    );
    return attempt;
  },

  /** Gives a claim back untouched (shutdown before the request went out). */
  async releaseLease(db: Queryable, deliveryId: string, leaseId: string): Promise<void> {
    await db.query('UPDATE webhook_deliveries SET lease_id = NULL, locked_until = NULL WHERE id = $1 AND lease_id = $2', [deliveryId, leaseId]);
  },

  /**
   * The queue for GET /metrics: pending deliveries of enabled endpoints due now and scheduled later, each
   * counted up to `cap` (a scrape must stay cheap however deep the backlog: past the cap the figure only says
   * "at least"), and how long the oldest due one has waited. A disabled endpoint's deliveries are held, not
   * late (claimDue skips them too), so they count in none of the three. Read per enabled endpoint from the
   * partial index on (endpoint_id, next_attempt_at) WHERE status = 'PENDING'.
   */
  async queueStats(db: Queryable, cap = QUEUE_STATS_CAP): Promise<{ due: number; scheduled: number; oldestDueSeconds: number }> {
    const rows = await db.query<{ due: number; scheduled: number; oldest_due_seconds: number | null }>(
      `WITH t AS (SELECT clock_timestamp() AS now), live AS (SELECT id FROM webhook_endpoints WHERE enabled AND deleted_at IS NULL)
       SELECT
         (SELECT count(*) FROM (SELECT 1 FROM live e CROSS JOIN LATERAL (
            SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.status = 'PENDING' AND d.next_attempt_at <= t.now LIMIT $1) x LIMIT $1) c)::int AS due,
         (SELECT count(*) FROM (SELECT 1 FROM live e CROSS JOIN LATERAL (
            SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.status = 'PENDING' AND d.next_attempt_at > t.now LIMIT $1) x LIMIT $1) c)::int AS scheduled,
         extract(epoch FROM t.now - (SELECT min(o.at) FROM live e CROSS JOIN LATERAL (
            SELECT min(d.next_attempt_at) AS at FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.status = 'PENDING' AND d.next_attempt_at <= t.now) o))::float8
           AS oldest_due_seconds
       FROM t`,
      [cap],
    );
    const row = rows[0]!;
    return { due: row.due, scheduled: row.scheduled, oldestDueSeconds: Math.max(0, row.oldest_due_seconds ?? 0) };
  },

  // ---- the delivery log

  async listDeliveries(
    db: Queryable,
    endpointId: string,
    filter: { eventId: string | null; status: string | null },
    limit: number,
    afterId: string | null,
  ): Promise<DeliveryRow[]> {
    return db.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
       WHERE endpoint_id = $1 AND ($2::text IS NULL OR event_id = $2) AND ($3::text IS NULL OR status = $3)
         AND ($4::text IS NULL OR (created_at, id) < (SELECT created_at, id FROM webhook_deliveries WHERE id = $4 AND endpoint_id = $1))
       ORDER BY created_at DESC, id DESC LIMIT $5`,
      [endpointId, filter.eventId, filter.status, afterId, limit],
    );
  },

  async deliveryExists(db: Queryable, endpointId: string, id: string): Promise<boolean> {
    return (await db.query('SELECT 1 FROM webhook_deliveries WHERE id = $1 AND endpoint_id = $2', [id, endpointId])).length > 0;
  },

  async findDelivery(db: Queryable, endpointId: string, id: string, forUpdate = false): Promise<DeliveryRow | undefined> {
    const rows = await db.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = $1 AND endpoint_id = $2${forUpdate ? ' FOR UPDATE' : ''}`,
      [id, endpointId],
    );
    return rows[0];
  },

  /** The latest `perDelivery` attempts of each delivery, oldest first. */
  async attemptsOf(db: Queryable, deliveryIds: readonly string[], perDelivery: number): Promise<AttemptRow[]> {
    if (deliveryIds.length === 0) return [];
    return db.query<AttemptRow>(
      `SELECT delivery_id, attempt, trigger, started_at, status_code, latency_ms, error, succeeded FROM (
         SELECT a.*, row_number() OVER (PARTITION BY delivery_id ORDER BY attempt DESC) AS rn
         FROM webhook_delivery_attempts a WHERE delivery_id = ANY($1::text[])
       ) latest WHERE rn <= $2 ORDER BY delivery_id, attempt`,
      [deliveryIds, perDelivery],
    );
  },

  /**
   * Queues a delivery for an immediate manual attempt with a fresh retry schedule. While an attempt holds a
   * live lease, the lease stays (never two attempts of one delivery at once, and the caps keep counting it):
   * the request is noted and finishAttempt applies it when that attempt ends (due at once then). An expired
   * lease (its worker gone) is dropped as before.
   */
  async requeue(db: Queryable, id: string, now: string): Promise<DeliveryRow> {
    const rows = await db.query<DeliveryRow>(
      `UPDATE webhook_deliveries SET
         redeliver_requested = COALESCE(locked_until > $2::timestamptz, false),
         status = CASE WHEN locked_until > $2::timestamptz THEN status ELSE 'PENDING' END,
         failures = CASE WHEN locked_until > $2::timestamptz THEN failures ELSE 0 END,
         next_trigger = 'MANUAL',
         next_attempt_at = CASE WHEN locked_until > $2::timestamptz THEN next_attempt_at ELSE $2::timestamptz END,
         lease_id = CASE WHEN locked_until > $2::timestamptz THEN lease_id END,
         locked_until = CASE WHEN locked_until > $2::timestamptz THEN locked_until END,
         updated_at = clock_timestamp()
       WHERE id = $1 RETURNING ${DELIVERY_COLUMNS}`,
      [id, now],
    );
    return rows[0]!;
  },

  // ---- the event log (GET /v1/events)

  /**
   * The organization's events created at or after `since`, newest first, filtered by type and a
   * created_at range; the page starts after the event `afterId`.
   */
  async listEvents(
    db: Queryable,
    organizationId: string,
    filter: { since: string; type: string | null; createdGte: string | null; createdLt: string | null },
    limit: number,
    afterId: string | null,
  ): Promise<EventLogRow[]> {
    return db.query<EventLogRow>(
      `SELECT ${EVENT_LOG_COLUMNS} FROM webhook_events
       WHERE organization_id = $1 AND created_at >= $2::timestamptz AND ($3::text IS NULL OR type = $3)
         AND ($4::timestamptz IS NULL OR created_at >= $4::timestamptz) AND ($5::timestamptz IS NULL OR created_at < $5::timestamptz)
         AND ($6::text IS NULL OR (created_at, id) < (SELECT created_at, id FROM webhook_events WHERE id = $6 AND organization_id = $1))
       ORDER BY created_at DESC, id DESC LIMIT $7`,
      [organizationId, filter.since, filter.type, filter.createdGte, filter.createdLt, afterId, limit],
    );
  },

  async findEvent(db: Queryable, organizationId: string, id: string, since: string): Promise<EventLogRow | undefined> {
    const rows = await db.query<EventLogRow>(
      `SELECT ${EVENT_LOG_COLUMNS} FROM webhook_events WHERE id = $1 AND organization_id = $2 AND created_at >= $3::timestamptz`,
      [id, organizationId, since],
    );
    return rows[0];
  },
};

/** A webhook_events row as the event log reads it. */
export interface EventLogRow {
  id: string;
  account_id: string | null;
  type: string;
  data: unknown;
  created_at: string;
}
const EVENT_LOG_COLUMNS = 'id, account_id, type, data, created_at';
