/**
 * Removing dead row versions now instead of at the next autovacuum. A deleted data-key row stays on its page
 * as a dead version, which the keyring still unwraps, until PostgreSQL prunes it; the vault asks for that
 * right after a shred (and after moving old rows to data keys). Best effort: VACUUM cannot run inside a
 * transaction, SKIP_LOCKED leaves a table another vacuum is working on to that vacuum, and a version that a
 * still-running transaction may see is kept by PostgreSQL until that transaction ends (autovacuum then
 * removes it). INDEX_CLEANUP OFF: only the heap pages with dead rows are visited, no index scan (the dead
 * line pointers, which hold no data, are reclaimed by autovacuum).
 */
import type { Queryable } from '../db/database.js';
import type { Logger } from '../platform/logger.js';

export type PrunableTable = 'payment_method_keys' | 'payment_methods';

export async function pruneDeadRows(db: Queryable, tables: readonly PrunableTable[], log?: Logger): Promise<void> {
  for (const table of tables) {
    try {
      await db.query(`VACUUM (INDEX_CLEANUP OFF, TRUNCATE OFF, SKIP_LOCKED) ${table}`);
    } catch (err) {
      log?.warn({ table, code: (err as { code?: unknown }).code }, 'pruning dead rows failed; autovacuum will do it');
    }
  }
}
