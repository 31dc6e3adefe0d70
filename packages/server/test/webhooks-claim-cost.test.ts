/**
 * What one claim of due webhook deliveries reads is bounded whatever the backlog: one organization's 20,000
 * due deliveries (its receivers hang or fail) do not make every claim of the service read them all. Measured
 * as the rows the claim statement's scans of webhook_deliveries touch (EXPLAIN ANALYZE: rows returned plus
 * rows removed by filters, times loops), never as time; the claim still takes the other organization's
 * delivery first and keeps the caps. Figures in docs/benchmarks.md.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Queryable } from '../src/db/database.js';
import { claimDueSql, DEFAULT_CLAIM_CAPS } from '../src/webhooks/repository.js';
import { backends, useServer } from './support/harness.js';

interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** Rows of webhook_deliveries the plan's scans touched. */
function deliveryRowsTouched(node: PlanNode): number {
  const own = node['Relation Name'] === 'webhook_deliveries'
    ? ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) * (node['Actual Loops'] ?? 1)
    : 0;
  return own + (node.Plans ?? []).reduce((s, p) => s + deliveryRowsTouched(p), 0);
}

class Rollback extends Error {}

/** Runs one claim (16 slots, reserve 4, the default caps) under EXPLAIN ANALYZE and rolls it back: what it took and what it read. */
async function measureClaim(db: Queryable): Promise<{ touched: number; claimedOrgs: string[] }> {
  let result: { touched: number; claimedOrgs: string[] } | undefined;
  const now = new Date(Date.now() + 1_000).toISOString();
  const params = [now, 16, randomUUID(), new Date(Date.now() + 60_000).toISOString(), DEFAULT_CLAIM_CAPS.perEndpoint, DEFAULT_CLAIM_CAPS.perOrganization, 4];
  await db
    .transaction(async (tx) => {
      const [row] = await tx.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] | string }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${claimDueSql()}`, params);
      const raw = row!['QUERY PLAN'];
      const plan = (typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: PlanNode }];
      const claimed = await tx.query<{ organization_id: string }>('SELECT organization_id FROM webhook_deliveries WHERE lease_id IS NOT NULL AND locked_until > $1::timestamptz', [now]);
      result = { touched: deliveryRowsTouched(plan[0].Plan), claimedOrgs: claimed.map((c) => c.organization_id) };
      if (process.env.CLAIM_COST_PLAN) console.log(JSON.stringify(plan[0].Plan, (k, v) => (['Output', 'Sort Key'].includes(k) ? undefined : v)));
      throw new Rollback();
    })
    .catch((err: unknown) => {
      if (!(err instanceof Rollback)) throw err;
    });
  return result!;
}

async function organizationWithEndpoint(db: Queryable): Promise<{ org: string; endpoint: string }> {
  const org = randomUUID();
  const endpoint = randomUUID();
  await db.query('INSERT INTO organizations (id, name, pci_certified) VALUES ($1, $1, false)', [org]);
  await db.query(`INSERT INTO webhook_endpoints (id, organization_id, url, events) VALUES ($1, $2, 'https://hooks.example.com/h', '["*"]')`, [endpoint, org]);
  return { org, endpoint };
}

/** `n` due deliveries (distinct resources) of the organization's endpoint, written directly. */
async function backlog(db: Queryable, to: { org: string; endpoint: string }, n: number, tag: string): Promise<void> {
  await db.query(
    `WITH ev AS (
       INSERT INTO webhook_events (id, organization_id, type, resource_id, data)
       SELECT $3 || g, $1, 'payment.succeeded', $3 || g, '{}'::jsonb FROM generate_series(1, $4::int) g
       RETURNING id, seq, organization_id, type, resource_id
     )
     INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_seq, event_type, resource_id, next_attempt_at)
     SELECT 'd-' || ev.id, ev.organization_id, $2, ev.id, ev.seq, ev.type, ev.resource_id, clock_timestamp() - interval '1 minute' FROM ev`,
    [to.org, to.endpoint, `${tag}-`, n],
  );
}

for (const backend of backends()) {
  describe(`webhook claim cost on ${backend}`, () => {
    const t = useServer(backend);

    it("a claim reads a bounded number of deliveries whatever one organization's backlog, and still takes the others' first", async () => {
      await t.running.deps.services.webhooks.worker.stop();
      await t.db.query("UPDATE webhook_deliveries SET status = 'CANCELED' WHERE status = 'PENDING'");
      const busy = await organizationWithEndpoint(t.db);
      const other = await organizationWithEndpoint(t.db);
      await backlog(t.db, busy, 50, 'small');
      await backlog(t.db, other, 1, 'other');
      const small = await measureClaim(t.db);
      expect(small.claimedOrgs.filter((o) => o === other.org)).toHaveLength(1);
      expect(small.claimedOrgs.filter((o) => o === busy.org)).toHaveLength(DEFAULT_CLAIM_CAPS.perEndpoint);
      // Organizations with deliveries in flight at their endpoint cap: their backlog is not read at all.

      await backlog(t.db, busy, 20_000, 'large');
      // As written (PGlite has no autovacuum: no statistics), then with the table analyzed (PostgreSQL's autovacuum).
      const large = await measureClaim(t.db);
      await t.db.query('ANALYZE webhook_deliveries');
      const analyzed = await measureClaim(t.db);
      if (process.env.CLAIM_COST_REPORT) console.log(`${backend}: a claim touched ${small.touched} delivery rows at 51 due, ${large.touched} at 20,051 (${analyzed.touched} analyzed)`);
      for (const m of [large, analyzed]) {
        expect(m.claimedOrgs.filter((o) => o === other.org)).toHaveLength(1);
        expect(m.claimedOrgs.filter((o) => o === busy.org)).toHaveLength(DEFAULT_CLAIM_CAPS.perEndpoint);
        // Bounded: a few rows per endpoint (its room under the caps, the leases, the order check), not every due row.
        expect(m.touched, `rows touched: ${small.touched} at 51 due, ${large.touched} / ${analyzed.touched} at 20,051`).toBeLessThan(100);
      }
    });
  });
}
