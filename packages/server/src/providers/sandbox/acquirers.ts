/**
 * Starts both sandbox acquirers on loopback, ephemeral ports (services.ts in-process, acquirers-main.ts
 * standalone). Their state is in memory: it lives and dies with the process that runs them.
 */
import { startAcquirerA } from './acquirer-a/server.js';
import { startAcquirerB } from './acquirer-b/server.js';
import type { RunningAcquirer } from './acquirer/kit.js';

export interface SandboxAcquirers {
  a: RunningAcquirer;
  b: RunningAcquirer;
  close(): Promise<void>;
}

export async function startSandboxAcquirers(): Promise<SandboxAcquirers> {
  const a = await startAcquirerA();
  const b = await startAcquirerB().catch(async (err: unknown) => {
    await a.close();
    throw err;
  });
  return { a, b, close: async () => void (await Promise.all([a.close(), b.close()])) };
}
