/**
 * What the service asks of its database, counted by the adapters themselves (postgres.ts, pglite.ts):
 * statements, round trips (statements plus BEGIN / COMMIT / savepoints) and commits. Deterministic,
 * unlike timings: the benchmark prints them per payment and tests assert them (issue 26: two commits per
 * payment on the happy path). Work done for an API request (platform/request-scope.ts) is counted apart
 * from the workers' background work, so a test can read what its own requests cost while the workers poll.
 *
 * A commit is what makes something durable (a commit record PostgreSQL flushes): the COMMIT of a
 * transaction that wrote, or a write sent outside a transaction (it commits on its own). A write is any
 * statement but a plain SELECT; SELECT … FOR UPDATE / FOR SHARE counts as one (row locks are written).
 * Transactions that only read are counted as transactions, not as commits.
 */
import type { DatabaseCounts, DatabaseCountsReading } from '../platform/prometheus.js';
import { currentRequestScope } from '../platform/request-scope.js';

/** The counts kept per kind of work: the shape GET /metrics reads (platform/prometheus.ts DatabaseCounts). */
export type StatementCounts = DatabaseCounts;

const zero = (): StatementCounts => ({ statements: 0, roundTrips: 0, commits: 0, transactions: 0, rollbacks: 0 });

/** A plain read: SELECT without a row lock. Anything else writes (or locks rows, which writes too). */
const READ = /^\s*select\b/i;
const ROW_LOCK = /\bfor\s+(update|no\s+key\s+update|share|key\s+share)\b/i;
const isWrite = (text: string) => !READ.test(text) || ROW_LOCK.test(text);

/** One open transaction: whether it wrote anything yet. */
export interface TransactionMark {
  wrote: boolean;
}

/** GET /metrics reads these through the interface platform/prometheus.ts declares (platform imports nothing of db). */
export class DatabaseCounters implements DatabaseCountsReading {
  /** Work done inside an API request's scope. */
  readonly request: StatementCounts = zero();
  /** Everything else: workers, start-up, migrations. */
  readonly background: StatementCounts = zero();

  private bucket(): StatementCounts {
    return currentRequestScope() ? this.request : this.background;
  }

  /** A statement, inside the transaction `tx` or on its own. */
  statement(text: string, tx: TransactionMark | null): void {
    const b = this.bucket();
    b.statements++;
    b.roundTrips++;
    if (!isWrite(text)) return;
    if (tx) tx.wrote = true;
    else b.commits++;
  }

  /** Savepoint statements (SAVEPOINT, RELEASE, ROLLBACK TO). */
  control(count = 1): void {
    this.bucket().roundTrips += count;
  }

  /** BEGIN. */
  begin(): TransactionMark {
    const b = this.bucket();
    b.roundTrips++;
    b.transactions++;
    return { wrote: false };
  }

  /** COMMIT or ROLLBACK. */
  end(tx: TransactionMark, committed: boolean): void {
    const b = this.bucket();
    b.roundTrips++;
    if (!committed) b.rollbacks++;
    else if (tx.wrote) b.commits++;
  }

  /** A copy of both buckets, for differences. */
  snapshot(): { request: StatementCounts; background: StatementCounts } {
    return { request: { ...this.request }, background: { ...this.background } };
  }
}

/** b − a, field by field. */
export function countsSince(a: StatementCounts, b: StatementCounts): StatementCounts {
  return {
    statements: b.statements - a.statements,
    roundTrips: b.roundTrips - a.roundTrips,
    commits: b.commits - a.commits,
    transactions: b.transactions - a.transactions,
    rollbacks: b.rollbacks - a.rollbacks,
  };
}
