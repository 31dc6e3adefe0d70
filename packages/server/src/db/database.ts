/**
 * The one database abstraction: PostgreSQL SQL over either PGlite (embedded, default) or a pg pool
 * (DATABASE_URL). Repositories are the only callers of `query`; services open transactions.
 */
import type { DatabaseCounters } from './counters.js';

export interface Queryable {
  /** Runs one statement with $1… parameters and returns its rows. */
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /** Runs fn in a transaction (a savepoint when already inside one); rolls back if fn throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
}

export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** What was sent, counted by the adapter (counters.ts); wrappers pass their database's on. */
  readonly counters?: DatabaseCounters;
  /** True when the database answers a trivial query. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * A nested transaction on one connection: SAVEPOINT, run, RELEASE — or ROLLBACK TO on a throw. Both
 * adapters use it, so nesting behaves the same on PGlite and PostgreSQL.
 */
export async function inSavepoint<T>(run: (sql: string) => Promise<unknown>, depth: number, fn: () => Promise<T>): Promise<T> {
  const sp = `sp_${depth}`;
  await run(`SAVEPOINT ${sp}`);
  try {
    const out = await fn();
    await run(`RELEASE SAVEPOINT ${sp}`);
    return out;
  } catch (err) {
    await run(`ROLLBACK TO SAVEPOINT ${sp}`);
    throw err;
  }
}

/** Errors that mean "the database is unreachable", answered with 503 rather than 500. */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: string }).code;
  if (code && ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH'].includes(code)) return true;
  // 57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now, 08xxx connection exceptions.
  if (code && (/^08/.test(code) || ['57P01', '57P02', '57P03', '53300'].includes(code))) return true;
  return /Connection terminated|connection timeout|Client has encountered a connection error|timeout exceeded when trying to connect|database is closed|PGlite is closed|Cannot use a pool after calling end/i.test(
    err.message,
  );
}

/** Postgres text timestamps ('2026-11-22 03:04:05.1234+00') as the API's ISO form with microseconds. */
export function toIsoMicros(value: string): string;
export function toIsoMicros(value: string | null): string | null;
export function toIsoMicros(value: string | null): string | null {
  if (value === null) return null;
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?(?:\+00(?::00)?|Z)$/.exec(value);
  if (!m) throw new Error(`unexpected timestamp format from the database: ${value}`);
  return `${m[1]}T${m[2]}.${(m[3] ?? '').padEnd(6, '0')}Z`;
}

/** Postgres NUMERIC (a string, exact) as a JSON number at the API edge. */
export function toAmount(value: string | number): number;
export function toAmount(value: string | number | null): number | null;
export function toAmount(value: string | number | null): number | null {
  return value === null ? null : Number(value);
}
