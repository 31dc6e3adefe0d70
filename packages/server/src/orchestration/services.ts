/**
 * The orchestrator's long-lived parts: the per-process circuit breaker and the reconciliation worker
 * (started with the server, stopped on close before the database closes, like the outbox worker).
 */
import type { ProviderRegistry } from '../providers/registry.js';
import type { OrchestrationMetrics } from '../platform/metrics.js';
import type { ServiceDeps } from '../services.js';
import { CircuitBreaker } from './circuit-breaker.js';
import type { Orchestration, RoutingPort } from './orchestrator.js';
import type { PaymentPort } from './payment-port.js';
import { ReconciliationWorker, type FollowUpSettler } from './reconciliation.js';

export interface OrchestrationServices extends Orchestration {
  /** `runOnce()` settles what is due now (tests, tooling); `drain()` until nothing is. */
  reconciliation: ReconciliationWorker;
}

declare module '../context.js' {
  interface AppServices {
    /** Routing's walk through providers, the circuit breaker and the reconciliation worker (orchestration/). */
    orchestration: OrchestrationServices;
  }
}

export function buildOrchestrationServices(
  deps: ServiceDeps,
  parts: { providers: ProviderRegistry; routing: RoutingPort; payments: PaymentPort; metrics: OrchestrationMetrics; settleFollowUp?: FollowUpSettler },
): { orchestration: OrchestrationServices } {
  const base: Orchestration = {
    db: deps.db,
    routing: parts.routing,
    providers: parts.providers,
    breaker: new CircuitBreaker({ coolDownMs: deps.config.circuitCoolDownMs }, parts.metrics),
    metrics: parts.metrics,
    payments: parts.payments,
  };
  const reconciliation = new ReconciliationWorker({
    orchestration: base,
    log: deps.log,
    intervalMs: deps.config.reconciliationIntervalMs,
    lookupTimeoutMs: deps.config.providerLookupTimeoutMs,
    notFoundSettleMs: deps.config.reconciliationNotFoundSettleMs,
    ...(parts.settleFollowUp ? { settleFollowUp: parts.settleFollowUp } : {}),
  });
  reconciliation.start();
  deps.onClose?.(() => reconciliation.stop());
  return { orchestration: { ...base, reconciliation } };
}
