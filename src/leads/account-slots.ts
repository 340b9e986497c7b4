/**
 * At most `limit` leads of one account (its plan's concurrentLeads) are researched and generated at once in this process; the others wait
 * their turn, first come first served. One busy account thus cannot take every outbound connection (or every LLM
 * call) of the instance.
 *
 * Synchronous requests wait in line (`run`); the worker takes a slot only when one is free (`tryAcquire`) and
 * leaves a queued job in the database otherwise, so that it claims only jobs that can start now.
 */
export class AccountSlots {
  private readonly running = new Map<number, number>();
  private readonly waiting = new Map<number, (() => void)[]>();

  async run<T>(accountId: number, limit: number, work: () => Promise<T>): Promise<T> {
    await this.acquire(accountId, limit);
    try {
      return await work();
    } finally {
      this.release(accountId);
    }
  }

  /** Takes a slot if one is free now (nobody waits for one then); the caller must release it. */
  tryAcquire(accountId: number, limit: number): boolean {
    const running = this.running.get(accountId) ?? 0;
    if (running >= limit) return false;
    this.running.set(accountId, running + 1);
    return true;
  }

  private acquire(accountId: number, limit: number): Promise<void> {
    if (this.tryAcquire(accountId, limit)) return Promise.resolve();
    return new Promise((resolve) => {
      const queue = this.waiting.get(accountId) ?? [];
      queue.push(resolve);
      this.waiting.set(accountId, queue);
    });
  }

  release(accountId: number): void {
    const queue = this.waiting.get(accountId);
    const next = queue?.shift();
    if (next) {
      // The slot passes straight to the next in line: the running count stays the same.
      if (queue!.length === 0) this.waiting.delete(accountId);
      next();
      return;
    }
    const running = (this.running.get(accountId) ?? 1) - 1;
    if (running === 0) this.running.delete(accountId);
    else this.running.set(accountId, running);
  }
}
