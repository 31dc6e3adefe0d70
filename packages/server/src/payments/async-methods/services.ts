/** The expiry worker as a long-lived service: started with the server, stopped before the database closes. */
import type { ServiceDeps } from '../../services.js';
import { ExpiryWorker } from './expiry-worker.js';

declare module '../../context.js' {
  interface AppServices {
    /** Expires asynchronous payments at their action's deadline (payments/async-methods/expiry-worker.ts). */
    asyncExpiry: ExpiryWorker;
  }
}

export function buildAsyncMethodServices(deps: ServiceDeps): { asyncExpiry: ExpiryWorker } {
  const asyncExpiry = new ExpiryWorker({ db: deps.db, log: deps.log });
  if (deps.onClose) {
    asyncExpiry.start();
    deps.onClose(() => asyncExpiry.stop());
  }
  return { asyncExpiry };
}
