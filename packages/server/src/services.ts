/**
 * Builds the long-lived services handlers use (see AppServices in context.ts). A domain that needs one
 * adds it here.
 */
import type { AppServices } from './context.js';
import type { Database } from './db/database.js';
import type { Config } from './platform/config.js';
import type { Logger } from './platform/logger.js';

export async function buildServices(_deps: { db: Database; config: Config; log: Logger }): Promise<AppServices> {
  return {};
}
