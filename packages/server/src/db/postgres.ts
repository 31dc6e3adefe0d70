import pg from 'pg';
import { DatabaseCounters, type TransactionMark } from './counters.js';
import { inSavepoint, type Database, type Queryable } from './database.js';

// Same conventions as PGlite: timestamps and numerics as exact strings, int8 as a number.
const typeParsers = {
  getTypeParser(oid: number, format?: string) {
    if (oid === pg.types.builtins.TIMESTAMPTZ || oid === pg.types.builtins.TIMESTAMP || oid === pg.types.builtins.DATE || oid === pg.types.builtins.NUMERIC) {
      return (v: string) => v;
    }
    if (oid === pg.types.builtins.INT8) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, (format ?? 'text') as 'text');
  },
};

/**
 * Every statement the code sends is a fixed text, so each is prepared once per connection and then only
 * bound and executed: PostgreSQL skips parsing and planning (it shares the machine's CPU with us), and
 * the wire carries less. Names are handed out per distinct text; past the cap (a bug making texts
 * unbounded) statements simply go unnamed.
 */
class StatementNames {
  private readonly names = new Map<string, string>();
  constructor(private readonly cap = 2_000) {}
  config(text: string, values: readonly unknown[]): pg.QueryConfig {
    let name = this.names.get(text);
    if (!name && this.names.size < this.cap) this.names.set(text, (name = `s${this.names.size}`));
    return name ? { name, text, values: values as unknown[] } : { text, values: values as unknown[] };
  }
}

function wrapClient(client: pg.PoolClient, depth: number, statements: StatementNames, counters: DatabaseCounters, mark: TransactionMark): Queryable {
  return {
    async query<R>(text: string, params: readonly unknown[] = []) {
      counters.statement(text, mark);
      const res = await client.query(statements.config(text, params));
      return res.rows as R[];
    },
    async exec(sql: string) {
      counters.statement(sql, mark);
      await client.query(sql);
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>) {
      const control = (sql: string) => {
        counters.control();
        return client.query(sql);
      };
      return inSavepoint(control, depth, () => fn(wrapClient(client, depth + 1, statements, counters, mark)));
    },
  };
}

export interface PostgresOptions {
  /** Pool size; the default suits one process on a small machine. */
  max?: number;
  /** Schema to put first on the search_path (tests use one schema per suite). */
  schema?: string;
}

/** A pg pool against a real PostgreSQL server; sessions run in UTC. */
export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<Database> {
  const searchPath = options.schema ? ` -c search_path=${options.schema}` : '';
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: 2000,
    idleTimeoutMillis: 30_000,
    options: `-c TimeZone=UTC${searchPath}`,
    types: typeParsers,
  });
  const statements = new StatementNames();
  const counters = new DatabaseCounters();
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  return {
    kind: 'postgres',
    counters,
    // A plain `then` instead of async/await: one promise less per statement (issue 26).
    query<R>(text: string, params: readonly unknown[] = []): Promise<R[]> {
      try {
        counters.statement(text, null);
        return pool.query(statements.config(text, params)).then((res) => res.rows as R[]);
      } catch (err) {
        return Promise.reject(err);
      }
    },
    async exec(sql: string) {
      counters.statement(sql, null);
      await pool.query(sql);
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>) {
      const client = await pool.connect();
      let broken = false;
      const mark = counters.begin();
      try {
        await client.query('BEGIN');
        const out = await fn(wrapClient(client, 1, statements, counters, mark));
        await client.query('COMMIT');
        counters.end(mark, true);
        return out;
      } catch (err) {
        try {
          counters.end(mark, false);
          await client.query('ROLLBACK');
        } catch {
          broken = true;
        }
        throw err;
      } finally {
        client.release(broken);
      }
    },
    async ping() {
      try {
        await pool.query('SELECT 1');
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      await pool.end();
    },
  };
}
