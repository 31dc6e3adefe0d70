import type { OperationId } from '@payorch/types';
import type { Handlers } from './context.js';
import { NotImplementedError } from './http/errors.js';

/** A placeholder for an operation of the contract not built yet: answers 501 NOT_IMPLEMENTED. */
export function notImplemented<K extends OperationId>(operationId: K): Handlers[K] {
  return (async () => {
    throw new NotImplementedError(operationId);
  }) as unknown as Handlers[K];
}
