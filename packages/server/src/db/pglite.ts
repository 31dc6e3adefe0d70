import { PGlite, types } from '@electric-sql/pglite';
import { ensurePrivateDir, restrictTree } from '../platform/private-files.js';
import { DatabaseCounters, type TransactionMark } from './counters.js';
import { inSavepoint, type Database, type Queryable } from './database.js';

// Timestamps and numerics stay strings (exact, microseconds kept); int8 becomes a number like with pg.
const parsers = {
  [types.TIMESTAMPTZ]: (v: string) => v,
  [types.TIMESTAMP]: (v: string) => v,
  [types.DATE]: (v: string) => v,
  [types.NUMERIC]: (v: string) => v,
  [types.INT8]: (v: string) => Number(v),
  // bytea with Node's native hex codec: PGlite's own converts one byte at a time in JavaScript (~300 ms for
  // a 1 MB evidence file, on the event-loop thread). Buffers, as pg gives them.
  [types.BYTEA]: (v: string) => Buffer.from(v.slice(2), 'hex'),
};
const serializers = {
  [types.BYTEA]: (v: unknown) => {
    if (!(v instanceof Uint8Array)) throw new TypeError('a bytea parameter must be a Buffer or Uint8Array');
    return `\\x${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex')}`;
  },
};

type PgliteTx = Pick<PGlite, 'query' | 'exec'>;

function wrap(tx: PgliteTx, counters: DatabaseCounters, mark: TransactionMark | null, depth = 0): Queryable {
  return {
    async query<R>(text: string, params: readonly unknown[] = []) {
      counters.statement(text, mark);
      const res = await tx.query<R>(text, params as unknown[]);
      return res.rows;
    },
    async exec(sql: string) {
      counters.statement(sql, mark);
      await tx.exec(sql);
    },
    async transaction<T>(fn: (inner: Queryable) => Promise<T>) {
      const control = (sql: string) => {
        counters.control();
        return tx.query(sql);
      };
      return inSavepoint(control, depth, () => fn(wrap(tx, counters, mark, depth + 1)));
    },
  };
}

/**
 * Embedded PostgreSQL in `dataDir` (or in memory for "memory://"). Queries run on the event-loop thread
 * and PGlite has one connection, so transactions are serialized by PGlite's own lock.
 */
export interface PgliteDatabase extends Database {
  /** A tarball of the data directory; tests open migrated copies from it (~0.6 s instead of initdb). */
  dump(): Promise<Blob>;
}

export async function openPglite(dataDir: string, options: { loadDataDir?: Blob | File } = {}): Promise<PgliteDatabase> {
  const onDisk = !dataDir.startsWith('memory://');
  if (onDisk) await ensurePrivateDir(dataDir);
  // One options object: PGlite ignores the second argument when the first is not a string.
  const pg = new PGlite({
    ...(onDisk ? { dataDir } : {}),
    parsers,
    serializers,
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
  });
  await pg.waitReady;
  await pg.exec("SET TIME ZONE 'UTC'");
  // After the start: initdb's files and the relcache files written at start are world-readable otherwise.
  if (onDisk) await restrictTree(dataDir);
  const counters = new DatabaseCounters();
  const top = wrap(pg, counters, null);
  return {
    kind: 'pglite',
    counters,
    query: top.query,
    exec: top.exec,
    async transaction<T>(fn: (tx: Queryable) => Promise<T>) {
      // PGlite sends BEGIN and COMMIT (or ROLLBACK) itself.
      const mark = counters.begin();
      try {
        const out = await pg.transaction((tx) => fn(wrap(tx, counters, mark, 1)));
        counters.end(mark, true);
        return out;
      } catch (err) {
        counters.end(mark, false);
        throw err;
      }
    },
    async ping() {
      try {
        await pg.query('SELECT 1');
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      if (!pg.closed) await pg.close();
    },
    async dump() {
      return pg.dumpDataDir('none');
    },
  };
}

