/**
 * The delivery worker: polls the outbox for due deliveries, claims them with a lease
 * (`FOR UPDATE SKIP LOCKED`, so any number of instances share the work on one database, PGlite or
 * PostgreSQL), POSTs each signed envelope, and records the attempt and the delivery's next state.
 *
 * Fair across organizations: claims go round-robin over organizations, with caps on what one endpoint
 * and one organization may have in flight at once across all instances (repository.claimDue), and each
 * slot refills as soon as its attempt ends. An organization whose receivers hang holds at most its cap
 * of slots for the 10 s deadline; the others' deliveries take the free ones at the next poll.
 *
 * - 2xx within the timeout: DELIVERED, never sent again (unless redelivered by hand).
 * - Anything else: retried after the next delay of the schedule (about 24 hours in all), then FAILED.
 * - In order per resource: a delivery waits while an earlier one of the same resource to the same
 *   endpoint is unfinished (see repository.claimDue).
 * - A crash mid-attempt leaves a lease that expires; the delivery is then taken over (at least once).
 *
 * The clock and the schedule are injectable so tests drive time; signatures always carry the real
 * time of sending (receivers compare it with their own clock).
 */
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import type { Logger } from '../platform/logger.js';
import { envelopeJson } from './events.js';
import { postWebhook, type SendResult } from './http-sender.js';
import { reserveOf } from '../db/fair-claim.js';
import { DEFAULT_CLAIM_CAPS, webhooksRepository as repo, type ClaimedDelivery } from './repository.js';
import type { SecretBox } from './secrets.js';
import { signatureHeaders, yunoHeaders } from './signing.js';
import { openCredential } from './yuno-view.js';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Delay after the 1st, 2nd, … failed attempt: 11 attempts over ~23.7 hours. */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [
  5 * SECOND, 30 * SECOND, 2 * MINUTE, 10 * MINUTE, 30 * MINUTE, 1 * HOUR, 2 * HOUR, 4 * HOUR, 8 * HOUR, 8 * HOUR,
];

export interface DeliveryWorkerOptions {
  db: Queryable;
  log: Logger;
  secrets: SecretBox;
  /** Sandbox mode: loopback receivers are allowed (never other non-public addresses). */
  allowLoopback: boolean;
  /** The scheduling clock (what is due, when to retry). Default: the system clock. */
  clock?: () => Date;
  retryScheduleMs?: readonly number[];
  /** Random spread of each retry delay, as a fraction (default 0.1; 0 in tests). */
  jitter?: number;
  /** Deadline for one HTTP attempt (default 10 s). */
  timeoutMs?: number;
  /** Deliveries in flight at once on this instance (default 16). */
  batchSize?: number;
  /**
   * Deliveries leased at once per endpoint and per organization, over every instance on the database
   * (default 4 and 8): a slow or failing organization holds at most that many of the slots.
   */
  caps?: { perEndpoint: number; perOrganization: number };
  /** Pause between polls when nothing finished in between (default 1 s). */
  pollIntervalMs?: number;
}

export class DeliveryWorker {
  readonly retryScheduleMs: readonly number[];
  private readonly clock: () => Date;
  private readonly jitter: number;
  private readonly timeoutMs: number;
  private readonly batchSize: number;
  private readonly caps: { perEndpoint: number; perOrganization: number };
  private readonly pollIntervalMs: number;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private ticking = false;
  private tickAgain = false;
  /** Claims never overlap within an instance (the slots they fill are counted here). */
  private filling: Promise<unknown> = Promise.resolve();
  private readonly inFlight = new Set<Promise<void>>();
  private abort = new AbortController();
  private lastPurge = 0;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.clock = options.clock ?? (() => new Date());
    this.retryScheduleMs = options.retryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS;
    this.jitter = options.jitter ?? 0.1;
    this.timeoutMs = options.timeoutMs ?? 10 * SECOND;
    this.batchSize = options.batchSize ?? 16;
    this.caps = options.caps ?? DEFAULT_CLAIM_CAPS;
    this.pollIntervalMs = options.pollIntervalMs ?? SECOND;
  }

  /**
   * Polls in the background until stop(). Slots refill as soon as an attempt finishes, not when a whole
   * batch has: a slow receiver holds only its own slot.
   */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  /** Stops polling, cuts attempts in flight short (they are retried) and waits for them to end. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.abort.abort();
    await this.filling.catch(() => undefined);
    await Promise.all(this.inFlight);
    this.abort = new AbortController();
  }

  /** Claims what is due into the free slots and waits for those attempts. Returns how many were attempted. */
  async runOnce(): Promise<number> {
    const started = await this.fill();
    await Promise.all(started);
    return started.length;
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    if (this.ticking) {
      this.tickAgain = true;
      return;
    }
    this.ticking = true;
    try {
      await this.fill();
    } catch (err) {
      this.options.log.warn({ err }, 'webhook delivery run failed; retrying');
    } finally {
      this.ticking = false;
    }
    const again = this.tickAgain;
    this.tickAgain = false;
    this.schedule(again ? 0 : this.pollIntervalMs);
  }

  /** Claims up to the free slots and starts the attempts (each frees its slot, and asks for a refill, when done). */
  private fill(): Promise<Promise<void>[]> {
    const run = this.filling.catch(() => undefined).then(() => this.claimAndStart());
    this.filling = run;
    return run;
  }

  private async claimAndStart(): Promise<Promise<void>[]> {
    const free = this.batchSize - this.inFlight.size;
    if (free <= 0) return [];
    const now = this.clock();
    if (now.getTime() - this.lastPurge > 10 * MINUTE) {
      await repo.purgeExpiredSecrets(this.options.db, now.toISOString());
      this.lastPurge = now.getTime();
    }
    const leaseId = randomUUID();
    // Long enough for the attempt and its bookkeeping; a crashed worker's claim expires after it.
    const leaseUntil = new Date(now.getTime() + this.timeoutMs + 30 * SECOND);
    const claimed = await this.options.db.transaction((tx) => repo.claimDue(tx, now.toISOString(), free, leaseId, leaseUntil.toISOString(), this.caps, reserveOf(this.batchSize)));
    const signal = this.abort.signal;
    return claimed.map((c) => {
      const attempt: Promise<void> = this.attempt(c, signal).finally(() => {
        this.inFlight.delete(attempt);
        this.schedule(0);
      });
      this.inFlight.add(attempt);
      return attempt;
    });
  }

  private async attempt(c: ClaimedDelivery, signal: AbortSignal): Promise<void> {
    const { db, log } = this.options;
    const startedAt = this.clock();
    let result: SendResult;
    try {
      const rows = await repo.signingSecrets(db, c.endpoint_id, startedAt.toISOString());
      const secrets = rows.map((r) => this.options.secrets.open(c.endpoint_id, r.id, { ciphertext: r.ciphertext, iv: r.iv, tag: r.tag, keyId: r.key_id }));
      if (secrets.length === 0) {
        result = { ok: false, statusCode: null, latencyMs: 0, error: 'the endpoint has no signing secret' };
      } else {
        const body = envelopeJson({ id: c.event_id, type: c.event_type, accountId: c.account_id, data: c.data, createdAt: c.event_created_at }, c.attempts);
        const headers = { ...yunoHeaders(body, (await repo.credentials(db, c.endpoint_id)).map((r) => [r.kind, openCredential(this.options.secrets, r)] as const)), ...signatureHeaders(c.event_id, new Date(), body, secrets) };
        result = await postWebhook(c.url, body, headers, { timeoutMs: this.timeoutMs, allowLoopback: this.options.allowLoopback, signal });
      }
    } catch (err) {
      // Our own fault (a secret that does not open…): keep the claim until its lease expires, log without data.
      log.error({ err, deliveryId: c.id, endpointId: c.endpoint_id }, 'webhook delivery could not be attempted');
      return;
    }
    const finishedAt = this.clock();
    const shutdown = signal.aborted && !result.ok;
    const failures = result.ok ? 0 : shutdown ? c.failures : c.failures + 1;
    const exhausted = !result.ok && failures > this.retryScheduleMs.length;
    const next = result.ok
      ? { status: 'DELIVERED' as const, failures, nextAttemptAt: finishedAt.toISOString(), deliveredAt: finishedAt.toISOString() }
      : exhausted
        ? { status: 'FAILED' as const, failures, nextAttemptAt: finishedAt.toISOString(), deliveredAt: null }
        : { status: 'PENDING' as const, failures, nextAttemptAt: new Date(finishedAt.getTime() + (shutdown ? 0 : this.delay(failures))).toISOString(), deliveredAt: null };
    try {
      const attempt = await db.transaction((tx) =>
        repo.finishAttempt(tx, {
          deliveryId: c.id,
          leaseId: c.lease_id,
          trigger: c.next_trigger,
          startedAt: startedAt.toISOString(),
          statusCode: result.statusCode,
          latencyMs: result.latencyMs,
          error: result.error,
          succeeded: result.ok,
          next,
        }),
      );
      log.info(
        { deliveryId: c.id, eventId: c.event_id, eventType: c.event_type, endpointId: c.endpoint_id, attempt, statusCode: result.statusCode, latencyMs: result.latencyMs, outcome: next.status },
        result.ok ? 'webhook delivered' : `webhook attempt failed: ${result.error}`,
      );
    } catch (err) {
      log.error({ err, deliveryId: c.id }, 'webhook attempt could not be recorded; it will be retried when its lease expires');
    }
  }

  /** The delay after the n-th consecutive failure (1-based), with jitter. */
  private delay(failures: number): number {
    const base = this.retryScheduleMs[Math.min(failures, this.retryScheduleMs.length) - 1] ?? 0;
    return Math.round(base * (1 + (Math.random() * 2 - 1) * this.jitter));
  }
}
