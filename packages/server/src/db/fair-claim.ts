/**
 * Fair claiming of a queue that many organizations share (webhook deliveries, reconciliation's unsettled
 * transactions): the SQL pieces both claims are built from, so the rule is written once.
 *
 *   - a cap per group (an organization, an endpoint) on the rows it holds at once, counted over every
 *     instance on the database (its leases still running): a group whose work hangs holds at most its cap;
 *   - round robin over groups, counting what each already holds: a group's k-th candidate ranks as its
 *     leases held plus k, so a group holding nothing goes before the next row of one holding several (two
 *     organizations whose work hangs cannot keep the freed slots between them: a backlog is no claim);
 *   - a reserve of an instance's free slots for groups holding nothing: work of groups already holding some
 *     fills the free slots only up to the reserve, so however many organizations hang at their caps, one
 *     with nothing in flight finds a slot at the next poll.
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
 * group's earliest due) and that rank plus what the group holds (`<rank>_load`): a SELECT for a CTE.
 */
export function fairShare(s: FairShare & { rank: string }): string {
  const order = s.order.map((c) => `c.${c}`).join(', ');
  return `SELECT ranked.*, COALESCE(h.n, 0) + ranked.${s.rank} AS ${s.rank}_load FROM (
      SELECT c.*, row_number() OVER (PARTITION BY c.${s.group} ORDER BY ${order}) AS ${s.rank} FROM ${s.from} c
    ) ranked
    LEFT JOIN ${s.held} h ON h.${s.group} = ranked.${s.group}
    WHERE ranked.${s.rank} <= ${s.cap} - COALESCE(h.n, 0)`;
}

/**
 * The ids of up to `limit` candidates, fairly: under the caps, round robin over groups by load, and the
 * last `reserve` of the `limit` only for a group's first row while it holds nothing. A SELECT for a CTE.
 */
export function fairPick(s: FairShare & { limit: string; reserve?: string }): string {
  const order = s.order.map((c) => `f.${c}`).join(', ');
  return `SELECT p.id FROM (
      SELECT f.id, f.fair_rank_load, row_number() OVER (ORDER BY f.fair_rank_load, ${order}) AS fair_pos
      FROM (${fairShare({ ...s, rank: 'fair_rank' })}) f
    ) p
    WHERE p.fair_pos <= ${s.limit} AND (p.fair_rank_load = 1 OR p.fair_pos <= ${s.limit} - ${s.reserve ?? '0'})`;
}

/**
 * The reserve of an instance with `slots` slots: a quarter. Two organizations hanging at their caps (8 + 8
 * of a webhook worker's 16) would otherwise leave another none until one of their attempts times out.
 */
export const reserveOf = (slots: number): number => Math.floor(slots / 4);

/** Serializes the claims of one queue across instances until the transaction ends (`lockKey`: the queue's constant). */
export async function serializeClaims(tx: Queryable, lockKey: number): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1)', [lockKey]);
}
