/**
 * What a handler gets besides its request. `AppServices` is open: a domain that needs a long-lived
 * service (the vault's keys, a payment provider) adds it with declaration merging and builds it in
 * services.ts, so handlers stay typed without a central god-object.
 */
import type { Handlers as HandlersOf } from '@payorch/types';
import type { Database, Queryable } from './db/database.js';
import type { Config } from './platform/config.js';
import type { Logger } from './platform/logger.js';
import type { PaymentProvider } from './providers/provider.js';

export interface AppServices {
  /** The payment provider adapter (the sandbox acquirer). */
  provider: PaymentProvider;
}

export interface AppDeps {
  db: Database;
  config: Config;
  log: Logger;
  services: AppServices;
}

/** The authenticated merchant (from the key pair). */
export interface MerchantAuth {
  organizationId: string;
  pciCertified: boolean;
  publicKey: string;
}

export interface RequestContext {
  /** Where the operation's SQL goes: the operation's transaction for idempotency-keyed operations. */
  db: Queryable;
  deps: AppDeps;
  log: Logger;
  requestId: string;
  /** The caller; present on every operation whose security is the merchant key pair. */
  merchant: MerchantAuth;
  /** The public base address of this service (for links such as icons and redirect pages). */
  baseUrl: string;
}

/** The handler map every operation of the spec must have: `handlers satisfies Handlers`. */
export type Handlers = HandlersOf<RequestContext>;
