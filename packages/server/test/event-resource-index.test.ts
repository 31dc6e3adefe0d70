/**
 * The event log is read by resource when a card is shredded (vault/copies-repository.ts eventsOf: the events
 * of a customer's methods and payments, on every unenroll and customer deletion). Without an index on
 * resource_id that read walked every event of the organization (the only index led by organization_id is
 * ordered by created_at). The plan of the repository's own statement must use webhook_events_resource_idx
 * (migration 0033); sequential scans are turned off so the plan does not depend on the table's size.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, Queryable } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { vaultCopiesRepository } from '../src/vault/copies-repository.js';
import { backends, openTestDatabase } from './support/harness.js';

describe.each(backends())('the event log read by resource on %s', (backend) => {
  let db: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ db, drop } = await openTestDatabase(backend));
    await migrate(db);
  });
  afterAll(async () => drop?.());

  it("a shred's read of the events of its resources goes through the (organization_id, resource_id) index", async () => {
    const plan = await db.transaction(async (tx) => {
      await tx.query('SET LOCAL enable_seqscan = off');
      const lines: string[] = [];
      // The repository's statement, explained instead of run.
      const explaining: Queryable = {
        query: async <R,>(text: string, params?: readonly unknown[]) => {
          const rows = await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, params);
          lines.push(...rows.map((r) => r['QUERY PLAN']));
          return [] as R[];
        },
        exec: (sql) => tx.exec(sql),
        transaction: (fn) => tx.transaction(fn),
      };
      await vaultCopiesRepository.eventsOf(explaining, 'org-1', ['tok-1', 'pay-1']);
      return lines.join('\n');
    });
    expect(plan).toContain('webhook_events_resource_idx');
    expect(plan).toMatch(/Index Cond: .*resource_id/);
  });
});
