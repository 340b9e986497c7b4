// The background loop of the workers whose queue is the database (webhook deliveries, feed synchronizations, lead
// jobs): a pass now, then one every poll interval after the last ended; a wake-up runs a pass at once.

export interface PollLoopOptions {
  /** One pass: does what is due. Passes never overlap. */
  pass: () => Promise<unknown>;
  /** How long after a pass ends the next one starts, unless woken sooner. */
  intervalMs: number;
  /** A pass that failed (threw or rejected); the loop goes on, the next pass after the interval. Must not throw. */
  onError: (error: unknown) => void;
}

/**
 * Runs `pass` in the background while started, one pass at a time:
 *
 * - start(): a pass now, then one `intervalMs` after each pass ends (a failed pass included: it is reported to
 *   onError and the loop waits the interval, so a failing database is not hammered);
 * - wake(): a pass as soon as possible: now when none runs, else right after the one running (however many wakes);
 * - stop(): no pass is started any more; resolves when the one running has ended. `stopping` tells a long pass to
 *   finish early.
 *
 * The timer is unref'ed: a started loop does not keep the process alive. start() after stop() starts it again.
 */
export class PollLoop {
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<void> | undefined;
  private started = false;
  private stopRequested = false;
  private wakeRequested = false;

  constructor(private readonly options: PollLoopOptions) {}

  /** Whether the loop was stopped (and not started since): a pass under way should end as soon as it can. */
  get stopping(): boolean {
    return this.stopRequested;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopRequested = false;
    void this.runPass();
  }

  wake(): void {
    if (!this.started) return;
    if (this.current) {
      this.wakeRequested = true;
      return;
    }
    clearTimeout(this.timer);
    void this.runPass();
  }

  async stop(): Promise<void> {
    this.started = false;
    this.stopRequested = true;
    this.wakeRequested = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.current;
  }

  private runPass(): Promise<void> {
    // (async) turns a pass that throws at once into a rejection too; `current` is set before the pass can end.
    this.current ??= (async () => this.options.pass())()
      .then(
        () => undefined,
        (error: unknown) => this.options.onError(error),
      )
      .finally(() => {
        this.current = undefined;
        this.scheduleNext();
      });
    return this.current;
  }

  private scheduleNext(): void {
    if (!this.started) return;
    const delay = this.wakeRequested ? 0 : this.options.intervalMs;
    this.wakeRequested = false;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.runPass(), delay);
    this.timer.unref();
  }
}
