/**
 * The sandbox acquirers as their own process (tests that SIGKILL the service keep the acquirers'
 * ledgers alive; the bench's provider "elsewhere"): prints `{"SANDBOX_A_URL": …, "SANDBOX_B_URL": …}` on
 * one line, serves until killed.
 *   node dist/providers/sandbox/acquirers-main.js   (or: npx tsx src/providers/sandbox/acquirers-main.ts)
 * With DATABASE_URL (a PostgreSQL database, migrated here if needed) the ledgers are kept there and
 * survive this process; without it (or empty) they are in this process's memory and die with it. PGlite
 * is not an option: one process owns a PGlite data directory, and the service's is the service's.
 */
import { migrate } from '../../db/migrate.js';
import { openPostgres } from '../../db/postgres.js';
import { memoryLedgers } from './acquirer/ledger.js';
import { sqlLedgers } from './acquirer/sql-ledger.js';
import { startSandboxAcquirers } from './acquirers.js';

const url = process.env.DATABASE_URL || undefined;
const db = url ? await openPostgres(url, { max: 4 }) : undefined;
if (db) await migrate(db);
const acquirers = await startSandboxAcquirers({ ledgers: db ? sqlLedgers(db) : memoryLedgers() });
process.stdout.write(`${JSON.stringify({ SANDBOX_A_URL: acquirers.a.url, SANDBOX_B_URL: acquirers.b.url })}\n`);
// The servers are unref'd (they never keep a service alive); this process exists to serve them.
const keepAlive = setInterval(() => {}, 1 << 30);
const stop = () => {
  clearInterval(keepAlive);
  void acquirers
    .close()
    .then(() => db?.close())
    .then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
