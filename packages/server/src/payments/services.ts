/**
 * Long-lived services of payments: the outbox worker that forwards dispute evidence (and delivers the
 * sandbox acquirer's chargeback notifications). It starts with the server and stops before the
 * database closes (ServiceDeps.onClose).
 */
import type { PaymentProvider } from '../providers/provider.js';
import { adapterOf } from '../providers/normalized-provider.js';
import { SandboxProvider } from '../providers/sandbox/sandbox-provider.js';
import type { ServiceDeps } from '../services.js';
import { OutboxWorker } from './outbox/worker.js';
import { paymentOutboxHandlers, type EvidenceReach } from './outbox-topics.js';

export interface PaymentServices {
  /** The outbox worker; `runOnce()` delivers what is due now (tests, operations tooling). */
  outbox: OutboxWorker;
}

declare module '../context.js' {
  interface AppServices {
    /** Payments' workers (payments/services.ts). */
    payments: PaymentServices;
  }
}

/** `reach`: where dispute evidence goes (the chargeback's provider and connection); without it, to `provider`. */
export async function buildPaymentServices(deps: ServiceDeps, provider: PaymentProvider | undefined, reach?: EvidenceReach): Promise<{ payments: PaymentServices }> {
  // The sandbox acquirer's signing secret exists from the first start on (generated once, stored).
  const adapter = provider && adapterOf(provider);
  if (adapter instanceof SandboxProvider) await adapter.notificationSecret();
  const outbox = new OutboxWorker({ db: deps.db, log: deps.log, handlers: paymentOutboxHandlers({ db: deps.db, provider, log: deps.log, ...(reach ? { reach } : {}) }) });
  outbox.start();
  deps.onClose?.(() => outbox.stop());
  return { payments: { outbox } };
}
