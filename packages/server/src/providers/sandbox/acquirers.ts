/**
 * Starts both sandbox acquirers on loopback, ephemeral ports (acquirers-main.ts and tests; the service
 * starts its own in build.ts). Their ledgers live in `ledgers` (sql-ledger.ts: a database, surviving a
 * restart), or by default in this process's memory, living and dying with it.
 */
import { startAcquirerA } from './acquirer-a/server.js';
import { startAcquirerB } from './acquirer-b/server.js';
import type { RunningAcquirer } from './acquirer/kit.js';
import { memoryLedgers, type LedgerStore } from './acquirer/ledger.js';

export interface SandboxAcquirers {
  a: RunningAcquirer;
  b: RunningAcquirer;
  close(): Promise<void>;
}

export async function startSandboxAcquirers(options: { ledgers?: LedgerStore } = {}): Promise<SandboxAcquirers> {
  const ledgers = options.ledgers ?? memoryLedgers();
  const a = await startAcquirerA({ ledgers });
  const b = await startAcquirerB({ ledgers }).catch(async (err: unknown) => {
    await a.close();
    throw err;
  });
  return { a, b, close: async () => void (await Promise.all([a.close(), b.close()])) };
}
