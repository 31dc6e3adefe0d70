/**
 * The outbox worker: polls for due messages, hands each to its topic's handler, and acknowledges it
 * once the handler succeeded; a failure is retried with exponential backoff (with jitter), forever,
 * capped at maxBackoffMs, unless the recipient refused the message for good (DeliveryRefused: given up).
 * Handlers receive the message id as an idempotency reference, so a message delivered again after a crash
 * between "delivered" and "acknowledged" has no second effect. Messages
 * of one ordering key are delivered one at a time, in the order they were written (repository.ts claim).
 */
import type { Database, Queryable } from '../../db/database.js';
import type { Logger } from '../../platform/logger.js';
import { outboxRepository as repo, type OutboxMessage } from './repository.js';

/**
 * Delivers one message. May return a step that runs in the acknowledging transaction (bookkeeping that
 * must commit together with "delivered").
 */
export type OutboxHandler = (message: OutboxMessage) => Promise<void | ((tx: Queryable) => Promise<void>)>;

/**
 * Thrown by a handler when the recipient refused the message for good (a provider's definitive 4xx):
 * sending it again would be refused again. The message is given up (recorded, logged as an error), not
 * retried, and no longer holds back the later messages of its ordering key.
 */
export class DeliveryRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DeliveryRefused';
  }
}

/** Thrown by a fault hook to simulate the process dying at that point: nothing more is written. */
export class WorkerKilled extends Error {
  constructor(at: string) {
    super(`outbox worker killed ${at}`);
    this.name = 'WorkerKilled';
  }
}

export interface OutboxWorkerOptions {
  db: Database;
  log: Logger;
  handlers: Readonly<Record<string, OutboxHandler>>;
  /** Idle wait between polls. */
  pollIntervalMs?: number;
  /** How long a claimed message stays with this worker before another may take it over. */
  leaseMs?: number;
  batchSize?: number;
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** Test seams: called around each delivery; throwing WorkerKilled there acts as a crash. */
  faults?: {
    beforeDeliver?(message: OutboxMessage): void | Promise<void>;
    afterDeliver?(message: OutboxMessage): void | Promise<void>;
  };
}

/** Claims per pass at most: a steady inflow does not keep one pass going for ever (the loop polls again at once). */
const MAX_ROUNDS = 5;

export interface RunResult {
  delivered: number;
  failed: number;
}

export class OutboxWorker {
  private readonly pollIntervalMs: number;
  private readonly leaseMs: number;
  private readonly batchSize: number;
  private readonly baseBackoffMs: number;
  private readonly maxBackoffMs: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<RunResult> | undefined;
  private started = false;
  private killed = false;

  constructor(private readonly options: OutboxWorkerOptions) {
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.leaseMs = options.leaseMs ?? 60_000;
    this.batchSize = options.batchSize ?? 10;
    this.baseBackoffMs = options.baseBackoffMs ?? 1000;
    this.maxBackoffMs = options.maxBackoffMs ?? 60 * 60 * 1000;
  }

  /** Starts polling in the background. */
  start(): void {
    if (this.started || this.killed) return;
    this.started = true;
    this.schedule(0);
  }

  /** Stops polling and waits for the delivery in progress, if any. */
  async stop(): Promise<void> {
    this.started = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /**
   * One pass: claims the messages due now and delivers them one by one. The deterministic entry point
   * (tests, tooling) and the body of the polling loop. Passes of one worker run one after another, so a
   * call always starts a pass that sees everything committed before it.
   */
  runOnce(): Promise<RunResult> {
    if (this.killed) return Promise.reject(new Error('outbox worker was killed'));
    const pass = (this.running ?? Promise.resolve()).catch(() => undefined).then(() => {
      if (this.killed) throw new Error('outbox worker was killed');
      return this.pass();
    });
    this.running = pass;
    void pass.catch(() => undefined).finally(() => {
      if (this.running === pass) this.running = undefined;
    });
    return pass;
  }

  private schedule(delayMs: number): void {
    if (!this.started) return;
    this.timer = setTimeout(() => {
      this.runOnce().then(
        (r) => this.schedule(r.delivered + r.failed > 0 ? 0 : this.pollIntervalMs),
        (err: unknown) => {
          if (err instanceof WorkerKilled) return;
          this.options.log.error({ err }, 'outbox poll failed');
          this.schedule(this.pollIntervalMs);
        },
      );
    }, delayMs);
    this.timer.unref();
  }

  /**
   * Claims and delivers until a claim settles nothing (at most MAX_ROUNDS claims): a message with an
   * ordering key is claimable only once the one before it is delivered or given up (repository.ts claim),
   * so a dispute's second batch goes out in the pass that settled its first, after it.
   */
  private async pass(): Promise<RunResult> {
    const result: RunResult = { delivered: 0, failed: 0 };
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      // Only a message delivered or given up lets the next of its key through; one retried later does not.
      const settled = await this.round(result);
      if (settled === 0) break;
    }
    return result;
  }

  /** One claim and its deliveries, counted into `result`; returns how many messages were delivered or given up. */
  private async round(result: RunResult): Promise<number> {
    let settled = 0;
    const { db, log, handlers, faults } = this.options;
    const messages = await repo.claim(db, this.batchSize, this.leaseMs);
    for (const message of messages) {
      try {
        await faults?.beforeDeliver?.(message);
        const handler = handlers[message.topic];
        if (!handler) throw new Error(`no handler for outbox topic ${message.topic}`);
        const onAcknowledged = await handler(message);
        await faults?.afterDeliver?.(message);
        await db.transaction(async (tx) => {
          if (onAcknowledged) await onAcknowledged(tx);
          await repo.acknowledge(tx, message.id);
        });
        result.delivered += 1;
        settled += 1;
        log.info({ outboxId: message.id, topic: message.topic, attempts: message.attempts }, 'outbox message delivered');
      } catch (err) {
        if (err instanceof WorkerKilled) {
          // A crash: no acknowledgement, no retry bookkeeping; the lease runs out and another worker takes over.
          this.killed = true;
          this.started = false;
          throw err;
        }
        const reason = err instanceof Error ? err.message : String(err);
        if (err instanceof DeliveryRefused) {
          await repo.giveUp(db, message.id, reason);
          result.failed += 1;
          log.error({ outboxId: message.id, topic: message.topic, attempts: message.attempts, err }, 'outbox message refused by its recipient; given up, not retried');
          settled += 1;
          continue;
        }
        const delayMs = this.backoff(message.attempts);
        await repo.retryLater(db, message.id, reason, delayMs);
        result.failed += 1;
        log.warn({ outboxId: message.id, topic: message.topic, attempts: message.attempts, retryInMs: delayMs, err }, 'outbox delivery failed; will retry');
      }
    }
    return settled;
  }

  /** Exponential backoff with equal jitter: half the step fixed, half random. */
  private backoff(attempts: number): number {
    const step = Math.min(this.maxBackoffMs, this.baseBackoffMs * 2 ** Math.max(0, attempts - 1));
    return Math.round(step / 2 + Math.random() * (step / 2));
  }
}
