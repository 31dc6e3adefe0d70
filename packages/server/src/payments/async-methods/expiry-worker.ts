/**
 * The expiry worker (on every instance): asynchronous payments whose action passed its deadline unpaid
 * become EXPIRED (settle.ts: the attempt and the payment, history, payment.expired), exactly once. Each
 * batch is one transaction that claims its payments with FOR UPDATE SKIP LOCKED and expires them before
 * it commits: a payment another instance (or a request) holds is skipped and comes again in the next
 * batch, and once committed it is no longer PENDING, so no other worker can claim it again. No provider
 * is called: the provider's own deadline is the same one (it refuses a late payment; if one is reported
 * paid all the same, the notification takes it: settle.ts).
 */
import { PeriodicRun } from '../../platform/periodic.js';
import type { Database } from '../../db/database.js';
import type { Logger } from '../../platform/logger.js';
import { expireAsyncPayment } from './settle.js';
import { asyncPaymentsRepository as repo } from './repository.js';

export interface ExpiryWorkerOptions {
  db: Database;
  log: Logger;
  /** Between two runs (default 5 s: a deadline is kept to within that). */
  intervalMs?: number;
  /** Payments per transaction (default 100). */
  batch?: number;
}

export class ExpiryWorker {
  private readonly periodic: PeriodicRun;

  constructor(private readonly options: ExpiryWorkerOptions) {
    this.periodic = new PeriodicRun(() => this.runOnce(), options.intervalMs ?? 5_000, (err: unknown) => this.options.log.warn({ err }, 'expiry worker: a run failed; the next one retries'));
  }

  start(): void {
    this.periodic.start();
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /** Expires every payment past its deadline at `now` (tests pass a later clock); how many this worker expired. */
  async runOnce(now: Date = new Date()): Promise<number> {
    const batch = this.options.batch ?? 100;
    let expired = 0;
    for (;;) {
      const { claimed, done } = await this.options.db.transaction(async (tx) => {
        const ids = await repo.claimExpired(tx, now, batch);
        let n = 0;
        for (const id of ids) if (await expireAsyncPayment(tx, id)) n++;
        return { claimed: ids.length, done: n };
      });
      expired += done;
      if (claimed < batch) return expired;
    }
  }
}
