/**
 * A small FIFO semaphore with two lanes: work that must finish (its request already called a provider)
 * goes before work that would start something. Waiters hold nothing but a promise: no database
 * connection, no lock. Used per organization (db/organization-gate.ts) and per payment
 * (payments/payment-lock.ts).
 */
interface Waiter {
  admit: () => void;
  timer?: NodeJS.Timeout;
}

export class Admission {
  private active = 0;
  private readonly urgent: Waiter[] = [];
  private readonly normal: Waiter[] = [];

  constructor(private readonly permits: number) {}

  /** Nobody holds or waits: the owner of a map of these may drop it. */
  get idle(): boolean {
    return this.active === 0 && this.urgent.length === 0 && this.normal.length === 0;
  }

  get waiting(): number {
    return this.urgent.length + this.normal.length;
  }

  /** Takes a permit now if one is free and nobody waits for it; false otherwise (then nothing is held). */
  tryAcquire(): boolean {
    if (this.active < this.permits && this.waiting === 0) {
      this.active++;
      return true;
    }
    return false;
  }

  /**
   * Resolves true once admitted; false when `waitMs` passed first (then nothing is held). Without
   * `waitMs`, waits as long as it takes.
   */
  acquire(urgent: boolean, waitMs?: number): Promise<boolean> {
    if (this.tryAcquire()) return Promise.resolve(true);
    const lane = urgent ? this.urgent : this.normal;
    return new Promise<boolean>((resolve) => {
      const waiter: Waiter = {
        admit: () => {
          if (waiter.timer) clearTimeout(waiter.timer);
          resolve(true);
        },
      };
      if (waitMs !== undefined) {
        waiter.timer = setTimeout(() => {
          const i = lane.indexOf(waiter);
          if (i >= 0) lane.splice(i, 1);
          resolve(false);
        }, waitMs);
      }
      lane.push(waiter);
    });
  }

  release(): void {
    const next = this.urgent.shift() ?? this.normal.shift();
    if (next) next.admit(); // the permit passes on
    else this.active--;
  }
}
