/**
 * What a handler gets besides its request. `AppServices` is open: a domain that needs a long-lived
 * service (the vault's keys, a payment provider) adds it with declaration merging and builds it in
 * services.ts, so handlers stay typed without a central god-object.
 */
import type { Handlers as HandlersOf } from '@payorch/types';
import type { Database, Queryable } from './db/database.js';
import type { Config } from './platform/config.js';
import type { IdempotencyBinding, Recoverers } from './idempotency/idempotency.js';
import type { Logger } from './platform/logger.js';
import type { PaymentProvider } from './providers/provider.js';

export interface AppServices {
  /**
   * The provider adapter for what is not routed yet (card verification, non-card enrollment, the
   * sandbox's notifications and chargebacks): SANDBOX_A in sandbox mode; none outside it, where no
   * sandbox provider exists (docs/design.md "Sandbox mode").
   */
  provider: PaymentProvider | undefined;
  /**
   * Deferred idempotency's recoverers by resource type ('payment' → payments/created-reply.ts): they
   * build a deferred operation's reply from the database when its own request died before storing it.
   */
  idempotencyRecoverers: Recoverers;
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
  /** Authenticated by the public key alone (the `public` operations: a shopper's browser). */
  publicOnly?: boolean;
}

export interface RequestContext {
  /**
   * Where the operation's SQL goes: the operation's transaction for idempotency-keyed operations in atomic
   * mode; the pool in deferred mode (operations that call a provider open their own short transactions).
   */
  db: Queryable;
  /** Deferred mode: binds the request's idempotency record to what it creates (a no-op otherwise). */
  idempotency: IdempotencyBinding;
  deps: AppDeps;
  log: Logger;
  requestId: string;
  /** The caller; present on every operation whose security is the merchant key pair. */
  merchant: MerchantAuth;
  /** The public base address of this service (for links such as icons and redirect pages). */
  baseUrl: string;
  /**
   * Work to run once the operation's writes are committed, before the reply is sent (e.g. VACUUM, which
   * cannot run in a transaction). Skipped when the operation throws; a task's failure is the task's to log.
   */
  afterCommit(task: () => Promise<void>): void;
}

/** The handler map every operation of the spec must have: `handlers satisfies Handlers`. */
export type Handlers = HandlersOf<RequestContext>;
