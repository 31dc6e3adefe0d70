/**
 * Retention (issue 15): removes what is past its documented lifetime — webhook events (and their
 * deliveries and attempts) 30 days after created_at (EVENT_RETENTION_DAYS), idempotency records once
 * expired (24 hours), the sealed cards of one-time tokens that expired unused, payment links' checkout
 * sessions that expired unpaid (a link's page makes one per shopper who submits). Every instance runs it; each batch is one short transaction of at most
 * `batchSize` rows claimed with SKIP LOCKED, with a pause between batches, so it never holds locks a
 * request waits for and two instances never do the same work. Reads already hide expired events
 * (webhooks/event-log.ts), so a late or slow run changes no answer.
 */
import { PeriodicRun } from '../platform/periodic.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../platform/logger.js';
import { EVENT_RETENTION_DAYS } from '../webhooks/event-log.js';
import { checkoutRepository } from '../checkout/repository.js';
import { retentionRepository as repo } from './repository.js';

export interface RetentionOptions {
  db: Database;
  log: Logger;
  /** Rows per transaction (default 500). */
  batchSize?: number;
  /** At most this many batches of each kind per run (default 100), then the next run goes on. */
  maxBatches?: number;
  /** Between runs (default 10 minutes). */
  intervalMs?: number;
  /** Between batches (default 50 ms), so requests get the database in between. */
  pauseMs?: number;
  clock?: () => Date;
}

export interface RetentionReport {
  events: number;
  idempotencyKeys: number;
  /** One-time tokens that expired unused whose sealed card was destroyed (checkout/tokens.ts). */
  expiredTokens: number;
  /** Payment links' checkout sessions that expired unpaid, deleted with their tokens (checkout/payment-links.ts). */
  unpaidLinkSessions: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.());

export class RetentionJob {
  private readonly periodic: PeriodicRun;

  constructor(private readonly options: RetentionOptions) {
    this.periodic = new PeriodicRun(() => this.runOnce(), options.intervalMs ?? 600_000, (err: unknown) => this.options.log.error({ err }, 'retention run failed'));
  }

  start(): void {
    this.periodic.start();
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /** One run: batches of each kind until one comes back short (or maxBatches), in small transactions. */
  async runOnce(): Promise<RetentionReport> {
    const { db, batchSize = 500, maxBatches = 100, pauseMs = 50 } = this.options;
    const now = (this.options.clock ?? (() => new Date()))();
    const before = new Date(now.getTime() - EVENT_RETENTION_DAYS * 86_400_000).toISOString();
    const drain = async (batch: () => Promise<number>) => {
      let total = 0;
      for (let i = 0; i < maxBatches && !this.periodic.isStopped; i++) {
        const n = await batch();
        total += n;
        if (n < batchSize) break;
        await sleep(pauseMs);
      }
      return total;
    };
    const report = {
      events: await drain(() => db.transaction((tx) => repo.purgeEvents(tx, before, batchSize))),
      idempotencyKeys: await drain(() => db.transaction((tx) => repo.purgeIdempotencyKeys(tx, batchSize))),
      expiredTokens: await drain(() => db.transaction((tx) => checkoutRepository.shredExpiredTokens(tx, batchSize))),
      unpaidLinkSessions: await drain(() => db.transaction((tx) => checkoutRepository.purgeUnpaidLinkSessions(tx, batchSize))),
    };
    if (report.events + report.idempotencyKeys + report.expiredTokens + report.unpaidLinkSessions > 0) this.options.log.info(report, 'retention removed expired records');
    return report;
  }
}
