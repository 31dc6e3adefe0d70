/**
 * The per-connection circuit breaker (src/orchestration/circuit-breaker.ts) on a clock the test moves:
 * when it opens, what an open circuit admits, the half-open probe, and the state changes it reports.
 */
import { describe, expect, it } from 'vitest';
import { CircuitBreaker, type CallHealth } from '../src/orchestration/circuit-breaker.js';
import type { CircuitState, OrchestrationMetrics } from '../src/platform/metrics.js';
import { NO_METRICS } from '../src/platform/metrics.js';

function setUp(options: ConstructorParameters<typeof CircuitBreaker>[0] = {}) {
  let now = 1_000_000;
  const states: [string, CircuitState][] = [];
  const metrics: OrchestrationMetrics = { ...NO_METRICS, circuitState: (l, s) => states.push([l.connectionId, s]) };
  const breaker = new CircuitBreaker({ coolDownMs: 30_000, ...options }, metrics, () => now);
  const call = (health: CallHealth, conn = 'a') => {
    const admitted = breaker.admit(conn, 'SANDBOX_A');
    if (admitted !== 'SKIP') breaker.record(conn, 'SANDBOX_A', health);
    return admitted;
  };
  return { breaker, states, call, tick: (ms: number) => (now += ms) };
}

describe('circuit breaker', () => {
  it('one call without an answer opens the circuit: a down provider costs one timeout, not one per payment', () => {
    const { breaker, call, states } = setUp();
    expect(call('NO_ANSWER')).toBe('CALL');
    expect(breaker.stateOf('a')).toBe('OPEN');
    expect(breaker.admit('a', 'SANDBOX_A')).toBe('SKIP');
    expect(states).toEqual([['a', 'CLOSED'], ['a', 'OPEN']]);
  });

  it('answered failures open it after 5 in a row; a success in between starts the count again', () => {
    const { breaker, call } = setUp();
    for (let i = 0; i < 4; i++) call('FAILURE');
    call('SUCCESS');
    for (let i = 0; i < 4; i++) call('FAILURE');
    expect(breaker.stateOf('a')).toBe('CLOSED');
    call('FAILURE');
    expect(breaker.stateOf('a')).toBe('OPEN');
  });

  it('a failure rate of 50 % over at least 10 calls in the window opens it; older calls fall out of the window', () => {
    const { breaker, call } = setUp();
    for (let i = 0; i < 4; i++) {
      call('FAILURE');
      call('SUCCESS');
    }
    call('FAILURE');
    expect(breaker.stateOf('a')).toBe('CLOSED'); // 5 of 9: too few calls to judge
    call('SUCCESS'); // 5 of 10, but the last call succeeded: judged at the next failure
    call('FAILURE');
    expect(breaker.stateOf('a')).toBe('OPEN');

    const other = setUp();
    for (let i = 0; i < 4; i++) {
      other.call('FAILURE');
      other.call('SUCCESS');
    }
    other.tick(31_000);
    for (let i = 0; i < 4; i++) other.call('SUCCESS');
    other.call('FAILURE');
    expect(other.breaker.stateOf('a')).toBe('CLOSED'); // 1 of 5 in the window
  });

  it('after the cool-down exactly one probe goes through; a good probe closes, a bad one re-opens', () => {
    const { breaker, call, tick, states } = setUp();
    call('NO_ANSWER');
    tick(29_999);
    expect(breaker.admit('a', 'SANDBOX_A')).toBe('SKIP');
    tick(1);
    expect(breaker.admit('a', 'SANDBOX_A')).toBe('PROBE');
    expect(breaker.admit('a', 'SANDBOX_A')).toBe('SKIP'); // the probe is in flight
    breaker.record('a', 'SANDBOX_A', 'NO_ANSWER');
    expect(breaker.stateOf('a')).toBe('OPEN');
    tick(30_000);
    expect(call('SUCCESS')).toBe('PROBE');
    expect(breaker.stateOf('a')).toBe('CLOSED');
    expect(call('SUCCESS')).toBe('CALL');
    expect(states.map(([, s]) => s)).toEqual(['CLOSED', 'OPEN', 'HALF_OPEN', 'OPEN', 'HALF_OPEN', 'CLOSED']);
  });

  it('a probe that never reports is given up after a cool-down', () => {
    const { breaker, call, tick } = setUp();
    call('NO_ANSWER');
    tick(30_000);
    expect(breaker.admit('a', 'SANDBOX_A')).toBe('PROBE');
    tick(29_000);
    expect(breaker.admit('a', 'SANDBOX_A')).toBe('SKIP');
    tick(1_000);
    expect(breaker.admit('a', 'SANDBOX_A')).toBe('PROBE');
  });

  it('connections are independent; when all of a route is open, the one re-opening first is probed', () => {
    const { breaker, call, tick } = setUp();
    call('NO_ANSWER', 'a');
    tick(10_000);
    call('NO_ANSWER', 'b');
    expect(breaker.stateOf('c')).toBe('CLOSED');
    const steps = [
      { connectionId: 'b', providerId: 'SANDBOX_B' },
      { connectionId: 'a', providerId: 'SANDBOX_A' },
    ];
    expect(steps.map((s) => breaker.admit(s.connectionId, s.providerId))).toEqual(['SKIP', 'SKIP']);
    expect(breaker.forceProbe(steps)).toBe(1);
    expect(breaker.stateOf('a')).toBe('HALF_OPEN');
    breaker.record('a', 'SANDBOX_A', 'SUCCESS');
    expect(breaker.stateOf('a')).toBe('CLOSED');
  });
});
