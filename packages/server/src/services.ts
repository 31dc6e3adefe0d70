/**
 * Builds the long-lived services handlers use (AppServices in context.ts). A domain that needs its own
 * adds them in its services.ts (declaration-merging its members into AppServices) and is called here.
 */
import type { AppServices } from './context.js';
import type { Database } from './db/database.js';
import type { Config } from './platform/config.js';
import type { Logger } from './platform/logger.js';
import { buildPaymentServices } from './payments/services.js';
import { SandboxProvider } from './providers/sandbox/sandbox-provider.js';
import { buildVaultServices } from './vault/services.js';

export interface ServiceDeps {
  db: Database;
  config: Config;
  log: Logger;
}

export async function buildServices(deps: ServiceDeps): Promise<AppServices> {
  const provider = new SandboxProvider();
  return {
    provider,
    ...(await buildVaultServices(deps)),
    ...(await buildPaymentServices(deps, provider)),
  };
}
