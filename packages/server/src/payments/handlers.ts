import type { Handlers } from '../context.js';
import { notImplemented } from '../not-implemented.js';

export const paymentHandlers = {
  createPayment: notImplemented('createPayment'),
  getPayment: notImplemented('getPayment'),
  disputeChargeback: notImplemented('disputeChargeback'),
  addDisputeEvidence: notImplemented('addDisputeEvidence'),
  createSandboxChargeback: notImplemented('createSandboxChargeback'),
  resolveSandboxDispute: notImplemented('resolveSandboxDispute'),
  receiveProviderNotification: notImplemented('receiveProviderNotification'),
} satisfies Partial<Handlers>;
