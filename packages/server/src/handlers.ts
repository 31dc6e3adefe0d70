/**
 * Every operation of the spec, by operationId. `satisfies Handlers` is the conformance proof: a missing
 * operation, a wrong status or a body of the wrong shape is a compile error.
 */
import type { Handlers } from './context.js';
import { checkoutHandlers } from './checkout/handlers.js';
import { customerHandlers } from './customers/handlers.js';
import { healthHandlers } from './health/handlers.js';
import { paymentHandlers } from './payments/handlers.js';
import { routingHandlers } from './routing/handlers.js';
import { adminHandlers } from './tenancy/handlers.js';
import { vaultHandlers } from './vault/handlers.js';
import { webhookHandlers } from './webhooks/handlers.js';

export const handlers = {
  ...healthHandlers,
  ...adminHandlers,
  ...customerHandlers,
  ...vaultHandlers,
  ...paymentHandlers,
  ...webhookHandlers,
  ...routingHandlers,
  ...checkoutHandlers,
} satisfies Handlers;
