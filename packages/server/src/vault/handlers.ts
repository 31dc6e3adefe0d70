import type { Handlers } from '../context.js';
import { notImplemented } from '../not-implemented.js';

export const vaultHandlers = {
  enrollPaymentMethod: notImplemented('enrollPaymentMethod'),
  listPaymentMethods: notImplemented('listPaymentMethods'),
} satisfies Partial<Handlers>;
