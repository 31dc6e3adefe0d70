/**
 * The test suite's PGlite databases, reused within a test process: opening PGlite from the migrated image
 * costs ~0.85 s of CPU each time (the WASM Postgres starts and unpacks a 40 MB data directory), and the
 * suite opens one or more per file and backend. A database a test is done with is returned here and, when
 * the next test asks for one, emptied and migrated again (~0.15 s: the schema dropped and recreated, the
 * session reset with DISCARD ALL) instead of opening a new instance. Every test still gets a database
 * of its own, migrated and empty, and nothing of an earlier test's data, settings or locks.
 *
 * A lease ends when its holder closes it (the harness does at the end of the file): from then on its
 * queries fail as on a closed PGlite, so a worker that outlives its test can never write into the next
 * test's database.
 */
import type { Database, Queryable } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { openPglite, type PgliteDatabase } from '../../src/db/pglite.js';

/** Idle instances kept for reuse: the most any file holds at once, per test process. */
const KEEP = 4;
const idle: PgliteDatabase[] = [];

/** A migrated, empty PGlite database of the caller's own; close() gives it back. */
export async function leasePglite(image: () => Promise<Blob>): Promise<Database> {
  let pg: PgliteDatabase | undefined;
  while (!pg && idle.length > 0) {
    const candidate = idle.pop()!;
    try {
      await reset(candidate);
      pg = candidate;
    } catch {
      await candidate.close().catch(() => {});
    }
  }
  pg ??= await openPglite('memory://', { loadDataDir: await image() });
  return lease(pg);
}

/** Back to a freshly migrated database: no table, row, sequence, setting, prepared statement or lock of before. */
async function reset(pg: PgliteDatabase): Promise<void> {
  await pg.exec(`DISCARD ALL; DROP SCHEMA public CASCADE; CREATE SCHEMA public; SET TIME ZONE 'UTC'`);
  await migrate(pg);
}

function lease(pg: PgliteDatabase): Database {
  let closed = false;
  // The message isDatabaseUnavailable() knows: code using a closed lease sees a closed database.
  const open = () => {
    if (closed) throw new Error('PGlite is closed (this test database was given back)');
  };
  const guarded = (q: Queryable): Queryable => ({
    query: async (text, params) => {
      open();
      return q.query(text, params);
    },
    exec: async (sql) => {
      open();
      return q.exec(sql);
    },
    transaction: async (fn) => {
      open();
      return q.transaction((tx) => fn(guarded(tx)));
    },
  });
  return {
    kind: 'pglite',
    ...(pg.counters ? { counters: pg.counters } : {}),
    ...guarded(pg),
    ping: async () => !closed && pg.ping(),
    async close() {
      if (closed) return;
      closed = true;
      if (idle.length < KEEP && (await pg.ping())) idle.push(pg);
      else await pg.close();
    },
  };
}
