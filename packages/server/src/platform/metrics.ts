/**
 * What the service reports to operators (GET /metrics, Prometheus format). Domain code records through
 * this interface only; services.ts builds the prom-client implementation (one registry per server, so
 * several servers in one test process do not mix their figures).
 */

/** How one provider call ended: the provider's answer, or why there was none (ProviderUnavailableError kinds). */
export const PROVIDER_CALL_OUTCOMES = ['SUCCEEDED', 'DECLINED', 'ERROR', 'NOT_SENT', 'TIMEOUT', 'CONNECTION_CUT', 'BAD_RESPONSE'] as const;
export type ProviderCallOutcome = (typeof PROVIDER_CALL_OUTCOMES)[number];

/** The provider operations calls are counted by. */
export const PROVIDER_OPERATIONS = ['purchase', 'authorize', 'capture', 'void', 'refund', 'verify', 'lookup'] as const;

/** A label value outside its fixed list. */
export const OTHER_LABEL = 'OTHER';

/** `value` when it is one of `allowed`, else OTHER: a metric's label never takes a value from outside its list. */
export function labelFrom(value: string, allowed: ReadonlySet<string>): string {
  return allowed.has(value) ? value : OTHER_LABEL;
}

export type CircuitState = 'CLOSED' | 'OPEN' | 'HALF_OPEN';

export interface OrchestrationMetrics {
  /** One provider call: purchase, authorize, capture, void, refund, verify or lookup. */
  providerCall(labels: { providerId: string; connectionId: string; operation: string; outcome: ProviderCallOutcome }, seconds: number): void;
  /** A connection's circuit changed state (or was first used). */
  circuitState(labels: { providerId: string; connectionId: string }, state: CircuitState): void;
  /** A payment moved on to the next step of its route after a soft failure. */
  failover(labels: { fromProviderId: string; toProviderId: string; reason: string }): void;
  /** What the reconciliation worker has yet to settle, after each of its passes. */
  reconciliationBacklog(count: number, oldestAgeSeconds: number): void;
}

/** For code run without a server's registry (scripts, unit tests of a module): records nothing. */
export const NO_METRICS: OrchestrationMetrics = {
  providerCall() {},
  circuitState() {},
  failover() {},
  reconciliationBacklog() {},
};
