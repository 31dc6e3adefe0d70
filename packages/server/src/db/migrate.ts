import type { Database } from './database.js';
import { migrations } from './migrations/index.js';

export interface Migration {
  /** Sortable, unique: '0001_platform'. */
  version: string;
  sql: string;
}

const MIGRATION_LOCK = 727_001; // arbitrary, constant: one migrator at a time across processes

/**
 * Applies the versioned migrations that are missing, all in one transaction under an advisory lock, so
 * several processes starting at once apply each migration exactly once. Returns the versions applied.
 */
export async function migrate(db: Database, list: readonly Migration[] = migrations): Promise<string[]> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )`);
    const done = new Set((await tx.query<{ version: string }>('SELECT version FROM schema_migrations')).map((r) => r.version));
    const applied: string[] = [];
    for (const m of [...list].sort((a, b) => a.version.localeCompare(b.version))) {
      if (done.has(m.version)) continue;
      await tx.exec(m.sql);
      await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [m.version]);
      applied.push(m.version);
    }
    return applied;
  });
}
