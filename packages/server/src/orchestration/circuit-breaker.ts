/**
 * Per-connection health (a circuit breaker; Yuno calls these "monitors"), in memory, per process
 * (docs/design.md "Circuit breaker"). Each process learns on its own: a provider that is down costs each
 * instance one failed call before that instance skips it, which is what a shared store would save, at the
 * price of a database write on every provider call. Not worth it.
 *
 * CLOSED → OPEN when, for a connection:
 *   - a call got no answer at all (NOT_SENT, TIMEOUT, CONNECTION_CUT): `noAnswerThreshold` such calls in a
 *     row, 1 by default. A healthy provider answers (even "error") well within the connection timeout, so
 *     silence is strong evidence it is down or unreachable; every further payment sent its way would make
 *     its payer wait the whole timeout. Opening on the first one makes a down provider cost one timeout,
 *     not one per payment; a false alarm costs only a skip to the next step for one cool-down, and the
 *     half-open probe closes the circuit again on the first good answer.
 *   - `consecutiveFailures` failures in a row (5): provider errors, unreadable answers, silence.
 *   - a failure rate ≥ `failureRate` (50 %) over at least `minCalls` (10) calls in the last `windowMs` (30 s).
 * OPEN for `coolDownMs` (30 s, CIRCUIT_COOL_DOWN_MS): the connection's steps are skipped.
 * HALF_OPEN after the cool-down: exactly one call (the probe) goes through, the others still skip; a
 * success closes the circuit, a failure opens it for another cool-down. A probe that never reports (its
 * caller died) is forgotten after a cool-down, and another probe may go.
 *
 * Only the provider's health counts: an answered decline (hard or "try again later") is a working
 * provider, and so is an answer that it has not decided yet (Adyen's card Pending: ProviderUndecidedError);
 * issuer trouble is the issuer's, and the failover table routes those payments on anyway.
 */
import type { CircuitState, OrchestrationMetrics } from '../platform/metrics.js';

/** What a call says about the connection's health. */
export type CallHealth = 'SUCCESS' | 'FAILURE' | 'NO_ANSWER';

export interface CircuitBreakerOptions {
  consecutiveFailures: number;
  noAnswerThreshold: number;
  failureRate: number;
  minCalls: number;
  windowMs: number;
  coolDownMs: number;
}

export const DEFAULT_CIRCUIT_OPTIONS: CircuitBreakerOptions = {
  consecutiveFailures: 5,
  noAnswerThreshold: 1,
  failureRate: 0.5,
  minCalls: 10,
  windowMs: 30_000,
  coolDownMs: 30_000,
};

/** Whether a step may be called now: CALL (closed), PROBE (the one half-open call), SKIP (open). */
export type Admission = 'CALL' | 'PROBE' | 'SKIP';

interface Circuit {
  providerId: string;
  state: CircuitState;
  /** OPEN: when the cool-down ends. HALF_OPEN: when an unreported probe is given up. */
  until: number;
  consecutiveFailures: number;
  consecutiveNoAnswers: number;
  /** Recent calls in the window: [time, failed]. */
  recent: [number, boolean][];
}

export class CircuitBreaker {
  private readonly circuits = new Map<string, Circuit>();
  private readonly options: CircuitBreakerOptions;

  constructor(
    options: Partial<CircuitBreakerOptions> = {},
    private readonly metrics: OrchestrationMetrics,
    private readonly now: () => number = Date.now,
  ) {
    this.options = { ...DEFAULT_CIRCUIT_OPTIONS, ...options };
  }

  /** The connection's state now (OPEN turns HALF_OPEN only when a call is admitted). */
  stateOf(connectionId: string): CircuitState {
    return this.circuits.get(connectionId)?.state ?? 'CLOSED';
  }

  /** Asks to call the connection; PROBE takes the half-open circuit's one call. */
  admit(connectionId: string, providerId: string): Admission {
    const c = this.circuit(connectionId, providerId);
    const now = this.now();
    if (c.state === 'CLOSED') return 'CALL';
    if (now < c.until) return 'SKIP';
    // OPEN past its cool-down, or HALF_OPEN whose probe never reported: this call is the probe.
    this.transition(connectionId, c, 'HALF_OPEN', now + this.options.coolDownMs);
    return 'PROBE';
  }

  /**
   * Every step of a route is open: of these connections, the one whose cool-down ends first is called
   * anyway (as its probe) rather than refusing the payment. Returns its index in `steps`.
   */
  forceProbe(steps: readonly { connectionId: string; providerId: string }[]): number {
    let best = 0;
    steps.forEach((s, i) => {
      if (this.circuit(s.connectionId, s.providerId).until < this.circuit(steps[best]!.connectionId, steps[best]!.providerId).until) best = i;
    });
    const chosen = steps[best]!;
    const c = this.circuit(chosen.connectionId, chosen.providerId);
    this.transition(chosen.connectionId, c, 'HALF_OPEN', this.now() + this.options.coolDownMs);
    return best;
  }

  /** Records how a call went (a PROBE's result decides the half-open circuit). */
  record(connectionId: string, providerId: string, health: CallHealth): void {
    const c = this.circuit(connectionId, providerId);
    const now = this.now();
    const failed = health !== 'SUCCESS';
    c.recent.push([now, failed]);
    while (c.recent.length > 0 && c.recent[0]![0] <= now - this.options.windowMs) c.recent.shift();
    c.consecutiveFailures = failed ? c.consecutiveFailures + 1 : 0;
    c.consecutiveNoAnswers = health === 'NO_ANSWER' ? c.consecutiveNoAnswers + 1 : 0;

    if (c.state === 'HALF_OPEN') {
      if (failed) this.open(connectionId, c, now);
      else this.close(connectionId, c);
      return;
    }
    if (c.state === 'OPEN' || !failed) return; // (a call admitted before the circuit opened reports late)
    const failures = c.recent.filter(([, f]) => f).length;
    if (
      c.consecutiveNoAnswers >= this.options.noAnswerThreshold ||
      c.consecutiveFailures >= this.options.consecutiveFailures ||
      (c.recent.length >= this.options.minCalls && failures / c.recent.length >= this.options.failureRate)
    ) {
      this.open(connectionId, c, now);
    }
  }

  private circuit(connectionId: string, providerId: string): Circuit {
    let c = this.circuits.get(connectionId);
    if (!c) {
      c = { providerId, state: 'CLOSED', until: 0, consecutiveFailures: 0, consecutiveNoAnswers: 0, recent: [] };
      this.circuits.set(connectionId, c);
      this.metrics.circuitState({ providerId, connectionId }, 'CLOSED');
    }
    return c;
  }

  private open(connectionId: string, c: Circuit, now: number): void {
    this.transition(connectionId, c, 'OPEN', now + this.options.coolDownMs);
  }

  private close(connectionId: string, c: Circuit): void {
    c.consecutiveFailures = 0;
    c.consecutiveNoAnswers = 0;
    c.recent = [];
    this.transition(connectionId, c, 'CLOSED', 0);
  }

  private transition(connectionId: string, c: Circuit, state: CircuitState, until: number): void {
    c.until = until;
    if (c.state === state) return;
    c.state = state;
    this.metrics.circuitState({ providerId: c.providerId, connectionId }, state);
  }
}
