/**
 * What a customer's deletion needs of the vault, where the customer's payment methods live: shredding them
 * in the deletion's transaction, and pruning the destroyed data keys once it committed. Declared here so
 * customers imports nothing of the vault: the vault builds on customers (an enrollment or an unenroll looks
 * its customer up), never the reverse. The vault implements it (vault/customer-deletion.ts), wired once
 * into AppServices (src/services.ts).
 */
import type { Queryable } from '../db/database.js';
import type { Logger } from '../platform/logger.js';

export interface CustomerPaymentMethods {
  /**
   * In the deletion's transaction: every payment method of the customer shredded (each not unenrolled yet
   * announced as enrollment.unenrolled), and the card copies of all the customer's payments redacted.
   */
  shredAll(tx: Queryable, scope: { organizationId: string; customerId: string; baseUrl: string; now: Date }): Promise<void>;
  /** After the commit: the destroyed data keys' dead row versions, which still unwrap with the keyring, pruned (best effort). */
  pruneDestroyedKeys(db: Queryable, log: Logger): Promise<void>;
}

declare module '../context.js' {
  interface AppServices {
    /** The vault's side of a customer's deletion (customers/payment-methods-port.ts). */
    customerPaymentMethods: CustomerPaymentMethods;
  }
}
