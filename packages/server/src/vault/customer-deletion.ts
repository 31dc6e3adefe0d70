/**
 * The vault's side of a customer's deletion, as customers declares it (customers/payment-methods-port.ts):
 * the customer's methods shredded in the deletion's transaction (shred.ts), the destroyed data keys'
 * dead rows pruned after the commit (prune.ts). Wired into AppServices once (src/services.ts).
 */
import type { CustomerPaymentMethods } from '../customers/payment-methods-port.js';
import { pruneDeadRows } from './prune.js';
import { shredPaymentMethods } from './shred.js';

export const customerPaymentMethods: CustomerPaymentMethods = {
  async shredAll(tx, scope) {
    await shredPaymentMethods(tx, scope);
  },
  pruneDestroyedKeys: (db, log) => pruneDeadRows(db, ['payment_method_keys'], log),
};
