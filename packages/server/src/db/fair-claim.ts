/**
 * Fair claiming of a queue that many organizations share (webhook deliveries, reconciliation's unsettled
 * transactions): the SQL pieces both claims are built from, so the rule is written once.
 *
 *   - a cap per group (an organization, an endpoint) on the rows it holds at once, counted over every
 *     instance on the database (its leases still running): a group whose work hangs holds at most its cap;
 *   - round robin over groups: every group's earliest due row before anyone's second.
 *
 * Claims run under one transaction-scoped advisory lock per queue (`serializeClaims`): two claims at once
 * would each see the other's new leases as free, and the caps would no longer hold.
 */
import type { Queryable } from './database.js';

export interface FairShare {
  /** A CTE (or table) of candidate rows: due, not leased; it has the `group` and `order` columns. */
  from: string;
  /** The column rows are grouped (capped) by, e.g. organization_id. */
  group: string;
  /** Due order within a group, earliest first (columns of `from`). */
  order: readonly string[];
  /** A CTE of (`group`, n): how many rows each group holds now (leases still running). */
  held: string;
  /** SQL for the cap per group (a parameter such as `$4::int`). */
  cap: string;
}

/**
 * The candidates that fit under their group's cap, each with its rank in the group (`rank`, 1 = the
 * group's earliest due): a SELECT for a CTE.
 */
export function fairShare(s: FairShare & { rank: string }): string {
  const order = s.order.map((c) => `c.${c}`).join(', ');
  return `SELECT ranked.* FROM (
      SELECT c.*, row_number() OVER (PARTITION BY c.${s.group} ORDER BY ${order}) AS ${s.rank} FROM ${s.from} c
    ) ranked
    LEFT JOIN ${s.held} h ON h.${s.group} = ranked.${s.group}
    WHERE ranked.${s.rank} <= ${s.cap} - COALESCE(h.n, 0)`;
}

/** The ids of up to `limit` candidates, fairly: under the caps, round robin over groups. A SELECT for a CTE. */
export function fairPick(s: FairShare & { limit: string }): string {
  const order = s.order.map((c) => `f.${c}`).join(', ');
  return `SELECT f.id FROM (${fairShare({ ...s, rank: 'fair_rank' })}) f ORDER BY f.fair_rank, ${order} LIMIT ${s.limit}`;
}

/** Serializes the claims of one queue across instances until the transaction ends (`lockKey`: the queue's constant). */
export async function serializeClaims(tx: Queryable, lockKey: number): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1)', [lockKey]);
}
