/**
 * The per-organization bound on concurrent database work (docs/design.md "Fairness under load"): one
 * tenant's burst must not take every pooled connection from the others, nor from authentication's key
 * lookup. A Database wrapper: each statement or transaction started for an organization's request
 * (platform/request-scope.ts) first takes one of that organization's permits (half the pool by
 * default); the rest wait in memory, holding no connection, in a queue of bounded length and for a
 * bounded time, then get 429 CONCURRENCY_LIMITED with Retry-After. Work whose request already called a
 * provider, and work holding a payment's queue (servedFirst), is served first and is never refused for a full queue (it is finishing what may have moved
 * money). Work outside a request (workers, the key lookup before the organization is known) and work
 * nested in an admitted transaction pass straight through (nested waits could deadlock).
 */
import { Admission } from '../platform/admission.js';
import { contextSlot } from '../platform/context-slots.js';
import { currentRequestScope } from '../platform/request-scope.js';
import type { Database, Queryable } from './database.js';

export interface OrganizationGateOptions {
  /** Concurrent statements or transactions per organization. */
  permits: number;
  /** Waiters per organization beyond which a new request is refused at once. */
  queueLimit: number;
  /** How long a request waits for a permit before it is refused. */
  waitMs: number;
  /** How long work that follows a provider call waits (it is refused only after this). */
  finishingWaitMs: number;
}

/** The defaults from the pool's size: at most half of it per organization. */
export function gateOptionsFor(poolSize: number): OrganizationGateOptions {
  return { permits: Math.max(1, Math.floor(poolSize / 2)), queueLimit: 500, waitMs: 10_000, finishingWaitMs: 30_000 };
}

/** Thrown when an organization's work could not get a permit in time: answered 429 CONCURRENCY_LIMITED. */
export class ConcurrencyLimitedError extends Error {
  constructor(
    readonly reason: 'queue full' | 'wait expired' | 'payment busy',
    readonly retryAfterSeconds = 1,
  ) {
    super(`too much concurrent work for one organization (${reason})`);
    this.name = 'ConcurrencyLimitedError';
  }
}

/** Marks the async work of an admitted statement or transaction: what it runs inside passes through. */
const admitted = contextSlot<true>('database work admitted');
/** Marks work others are queued behind (a payment's lock holder): served first, like finishing work. */
const ahead = contextSlot<true>('served first');

/**
 * Runs `fn` ahead of the organization's other waiting work: for work that holds something others wait
 * for (payments/payment-lock.ts), so a queue of one payment's operations does not also queue behind every
 * other request of its organization at each step.
 */
export function servedFirst<T>(fn: () => T): T {
  return ahead.run(true, fn);
}

export function gateByOrganization(db: Database, options: OrganizationGateOptions): Database {
  const lanes = new Map<string, Admission>();
  const release = (organizationId: string, lane: Admission) => {
    lane.release();
    if (lane.idle) lanes.delete(organizationId);
  };
  /** Runs `fn` holding a permit of `lane`, which it gives back when `fn` settles. */
  const admittedRun = <T>(organizationId: string, lane: Admission, fn: () => Promise<T>): Promise<T> => {
    let running: Promise<T>;
    try {
      running = admitted.run(true, fn);
    } catch (err) {
      release(organizationId, lane);
      return Promise.reject(err);
    }
    return running.finally(() => release(organizationId, lane));
  };
  const waitThenRun = async <T>(organizationId: string, lane: Admission, finishing: boolean, fn: () => Promise<T>): Promise<T> => {
    if (!finishing && lane.waiting >= options.queueLimit) throw new ConcurrencyLimitedError('queue full');
    if (!(await lane.acquire(finishing, finishing ? options.finishingWaitMs : options.waitMs))) {
      if (lane.idle) lanes.delete(organizationId);
      throw new ConcurrencyLimitedError('wait expired');
    }
    return admittedRun(organizationId, lane, fn);
  };
  // Not async itself: a free permit (the common case) is taken at once, without a promise of its own.
  const gated = <T>(fn: () => Promise<T>): Promise<T> => {
    const scope = currentRequestScope();
    const organizationId = scope?.organizationId;
    if (!organizationId || admitted.get()) return fn();
    let lane = lanes.get(organizationId);
    if (!lane) lanes.set(organizationId, (lane = new Admission(options.permits)));
    if (lane.tryAcquire()) return admittedRun(organizationId, lane, fn);
    return waitThenRun(organizationId, lane, scope.providerCalled || ahead.get() === true, fn);
  };
  return {
    kind: db.kind,
    ...(db.counters ? { counters: db.counters } : {}),
    query: <R>(text: string, params?: readonly unknown[]) => gated(() => db.query<R>(text, params)),
    exec: (sql: string) => gated(() => db.exec(sql)),
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) => gated(() => db.transaction(fn)),
    ping: () => db.ping(),
    close: () => db.close(),
  };
}
