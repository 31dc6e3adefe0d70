/**
 * Every operation of the spec, by operationId. `satisfies Handlers` is the conformance proof: a missing
 * operation, a wrong status or a body of the wrong shape is a compile error.
 */
import type { Handlers } from './context.js';
import { customerHandlers } from './customers/handlers.js';
import { healthHandlers } from './health/handlers.js';
import { notImplemented } from './not-implemented.js';
import { adminHandlers } from './tenancy/handlers.js';

export const handlers = {
  ...healthHandlers,
  ...adminHandlers,
  ...customerHandlers,
  enrollPaymentMethod: notImplemented('enrollPaymentMethod'),
  listPaymentMethods: notImplemented('listPaymentMethods'),
  createPayment: notImplemented('createPayment'),
  getPayment: notImplemented('getPayment'),
  disputeChargeback: notImplemented('disputeChargeback'),
  addDisputeEvidence: notImplemented('addDisputeEvidence'),
  createSandboxChargeback: notImplemented('createSandboxChargeback'),
  resolveSandboxDispute: notImplemented('resolveSandboxDispute'),
  receiveProviderNotification: notImplemented('receiveProviderNotification'),
} satisfies Handlers;
