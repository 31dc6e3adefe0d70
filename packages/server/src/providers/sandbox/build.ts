/**
 * Builds the two sandbox adapters for the service: starts the acquirers in-process (loopback, ephemeral
 * ports) unless SANDBOX_A_URL / SANDBOX_B_URL name where they run, and stops what it started on close.
 * The acquirers it starts keep their ledgers in the service's database (sql-ledger.ts), so what they
 * authorized before a restart can be captured, refunded and looked up after it.
 * Sandbox mode only: it refuses to build them otherwise.
 */
import type { Config } from '../../platform/config.js';
import type { Queryable } from '../../db/database.js';
import type { PurposeBox } from '../../keyring/secret-box.js';
import { SANDBOX_A, SANDBOX_B } from '../registry.js';
import { startAcquirerA } from './acquirer-a/server.js';
import { startAcquirerB } from './acquirer-b/server.js';
import type { RunningAcquirer } from './acquirer/kit.js';
import { memoryLedgers } from './acquirer/ledger.js';
import { sqlLedgers } from './acquirer/sql-ledger.js';
import { SANDBOX_A_DEFAULT_CREDENTIALS, SandboxAProvider } from './sandbox-a-provider.js';
import { SANDBOX_B_DEFAULT_CREDENTIALS, SandboxBProvider } from './sandbox-b-provider.js';
import { SandboxShared } from './sandbox-provider.js';

export interface SandboxAdapters {
  a: SandboxAProvider;
  b: SandboxBProvider;
  /** The acquirers this process started (none when both URLs are configured). */
  started: RunningAcquirer[];
}

export async function buildSandboxAdapters(
  config: Pick<Config, 'sandbox' | 'sandboxAUrl' | 'sandboxBUrl' | 'providerTimeoutMs'>,
  options: { db?: Queryable; secrets?: PurposeBox; onClose?: (hook: () => Promise<void>) => void },
): Promise<SandboxAdapters> {
  // Outside sandbox mode no sandbox provider exists (its acquirers answer any card, and expose unauthenticated /_sandbox routes).
  if (!config.sandbox) throw new Error('the sandbox providers exist in sandbox mode only (SANDBOX=true)');
  const started: RunningAcquirer[] = [];
  const close = async () => void (await Promise.all(started.map((s) => s.close())));
  options.onClose?.(close);
  try {
    const ledgers = options.db ? sqlLedgers(options.db) : memoryLedgers();
    const urlA = config.sandboxAUrl ?? (await track(startAcquirerA({ ledgers }), started));
    const urlB = config.sandboxBUrl ?? (await track(startAcquirerB({ ledgers }), started));
    const shared = new SandboxShared({ db: options.db, secrets: options.secrets, sandboxMode: config.sandbox });
    const timeoutMs = config.providerTimeoutMs;
    return {
      a: new SandboxAProvider(shared, { url: urlA, defaultConnection: { connectionId: `${SANDBOX_A.toLowerCase()}-default`, credentials: SANDBOX_A_DEFAULT_CREDENTIALS, timeoutMs } }),
      b: new SandboxBProvider(shared, { url: urlB, defaultConnection: { connectionId: `${SANDBOX_B.toLowerCase()}-default`, credentials: SANDBOX_B_DEFAULT_CREDENTIALS, timeoutMs } }),
      started,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

async function track(starting: Promise<RunningAcquirer>, started: RunningAcquirer[]): Promise<string> {
  const acquirer = await starting;
  started.push(acquirer);
  return acquirer.url;
}
