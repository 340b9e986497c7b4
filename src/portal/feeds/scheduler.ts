// Background synchronization: every poll, each instance leases the runs of due feeds in SQL (queries.ts,
// FeedQueries.claimDue) and runs them a few at a time. The database is the only queue: with several instances on one
// PostgreSQL each due feed is run by exactly one of them.

import { PollLoop } from '../../infra/poll-loop.js';
import { type FeedQueries, STALE_RUN_MS } from './queries.js';
import type { FeedRunner } from './runner.js';
import type { SyncResultView } from './schemas.js';

/** The part of a pino logger (app.log) the scheduler uses. */
export interface SchedulerLogger {
  debug(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface SchedulerOptions {
  /** How often the loop looks for due feeds (default 30 s). */
  pollMs?: number;
  /** Feeds synchronized at the same time by this instance (default 4); also the size of each claim. */
  concurrency?: number;
  logger?: SchedulerLogger;
}

export interface ScheduledRun {
  feedId: number;
  result: SyncResultView;
}

const DEFAULT_POLL_MS = 30_000;
const DEFAULT_CONCURRENCY = 4;

export class FeedScheduler {
  private readonly concurrency: number;
  private readonly loop: PollLoop;

  constructor(
    private readonly queries: FeedQueries,
    private readonly runner: FeedRunner,
    private readonly options: SchedulerOptions = {},
  ) {
    this.concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    this.loop = new PollLoop({
      pass: () => this.runDue(),
      intervalMs: options.pollMs ?? DEFAULT_POLL_MS,
      onError: (error) => this.options.logger?.error({ err: error }, 'feed scheduler pass failed'),
    });
  }

  /**
   * Synchronizes every feed due at `now`: claims up to `concurrency` at a time and runs them, until none is due.
   * A feed is run at most once per call (its next sync is reckoned from `now` or later). Returns what ran here.
   */
  async runDue(now: Date = new Date()): Promise<ScheduledRun[]> {
    const runs: ScheduledRun[] = [];
    const stale = new Date(Date.now() - STALE_RUN_MS).toISOString();
    while (!this.loop.stopping) {
      const claimed = await this.queries.claimDue(now.toISOString(), stale, this.concurrency);
      if (claimed.length === 0) break;
      const results = await Promise.all(
        claimed.map(async (feed) => {
          try {
            return { feedId: feed.id, result: await this.runner.run(feed, now) };
          } catch (error) {
            // Only the database failing lands here; the lease lapses and another poll takes the feed over.
            this.options.logger?.error({ feed_id: feed.id, err: error }, 'feed synchronization could not be recorded');
            return undefined;
          }
        }),
      );
      for (const run of results) {
        if (!run) continue;
        runs.push(run);
        const { result } = run;
        const details = {
          feed_id: run.feedId,
          job_id: result.job_id,
          job_status: result.job_status,
          imported: result.imported,
          updated: result.updated,
          errors: result.errors,
        };
        if (result.job_status === 'failed') this.options.logger?.warn(details, 'feed synchronization failed');
        else this.options.logger?.debug(details, 'feed synchronized');
      }
    }
    return runs;
  }

  /** Starts the loop: a pass now, then one every poll interval. */
  start(): void {
    this.loop.start();
  }

  /** Asks for a pass as soon as possible (a synchronize was queued); nothing when the loop is not started. */
  wake(): void {
    this.loop.wake();
  }

  /** Stops the loop and waits for the runs in progress to finish (their leases are released properly). */
  stop(): Promise<void> {
    return this.loop.stop();
  }
}
