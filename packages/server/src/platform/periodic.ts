/**
 * A background run repeated every `intervalMs` on this instance: the next run is scheduled only after the
 * previous one ended (never two at once), a failed run is logged and the next one retries, and `stop()`
 * waits for a run in progress. Shared by the workers that poll the database (retention, async expiry).
 */
export class PeriodicRun {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;

  constructor(
    private readonly run: () => Promise<unknown>,
    private readonly intervalMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** True once stop() was called: a long run checks it to end early. */
  get isStopped(): boolean {
    return this.stopped;
  }

  start(): void {
    this.stopped = false;
    const schedule = () => {
      this.timer = setTimeout(() => {
        this.running = this.run()
          .catch(this.onError)
          .finally(() => {
            this.running = undefined;
            if (!this.stopped) schedule();
          });
      }, this.intervalMs);
      this.timer.unref?.();
    };
    schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
