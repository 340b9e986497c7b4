// One synchronization of a feed whose run is leased (job_status 'running', job_id set by the claim): fetch, import
// in one transaction, and the bookkeeping of the schedule (next sync, failures in a row, Retry-After, deactivation).
// Used by the manual synchronize and by the scheduler alike.

import type { RssFeedRow } from '../../db/types.js';
import { type FeedSyncOutcome, type DomainMetrics, NO_METRICS } from '../../infra/metrics.js';
import { nowIso } from '../../time.js';
import { type FeedQueries, isUniqueViolation } from './queries.js';
import {
  contentIntervalMinutes,
  DEACTIVATE_AFTER_FAILURES,
  freshnessMinutes,
  nextSyncAfterFailure,
  nextSyncAfterSuccess,
  type ScheduleSettings,
} from './schedule.js';
import type { SyncResultView } from './schemas.js';
import { cleanEntriesForImport, FeedReadError, type FeedSource, fetchFeed, importEntries } from './sync.js';
import { normalizeFeedUrl } from './feed-url.js';

/** The run's lease was taken over (it outlived the stale limit): its writes are rolled back. */
class LeaseLost extends Error {}

/** Another feed of the publication holds the URL this feed is (or moved) at: nothing is imported. */
class HeldUrl extends Error {
  constructor(feed: RssFeedRow, url: string, holderId: number | undefined) {
    const holder = holderId === undefined ? 'another RSS feed of this publication' : `RSS feed ${holderId} of this publication`;
    const moved = normalizeFeedUrl(feed.url) !== url;
    super(
      (moved ? `the feed moved permanently to ${url}, which ${holder} already imports` : `${holder} already imports ${url}`) +
        '; nothing was imported, so that its posts are not imported twice (delete one of the two feeds)',
    );
  }
}

export function emptyResult(jobId: string, status: SyncResultView['job_status']): SyncResultView {
  return {
    job_id: jobId,
    job_status: status,
    imported: 0,
    updated: 0,
    skipped: 0,
    unchanged: 0,
    failed: 0,
    not_modified: false,
    articles: [],
    errors: [],
  };
}

/** A synchronization that ran to its end (not one whose lease was taken over), once its outcome is stored. */
export interface FeedRunOutcome {
  publicationId: number;
  feed: { id: number; url: string; title: string };
  result: SyncResultView;
}

/** The articles' upkeep after an import (ArticleQueries.refreshStatistics). */
export interface ArticleStatistics {
  refreshStatistics(added: number): Promise<void>;
}

export class FeedRunner {
  constructor(
    private readonly queries: FeedQueries,
    private readonly articles: ArticleStatistics,
    private readonly source: FeedSource,
    readonly settings: ScheduleSettings,
    /** Told of every run's outcome (webhooks publish feed.synchronized and feed.failed). Must not throw. */
    private readonly onFinished: (outcome: FeedRunOutcome) => Promise<unknown> = async () => undefined,
    private readonly metrics: Pick<DomainMetrics, 'feedSynchronized'> = NO_METRICS,
  ) {}

  /** The synchronization below, counted by outcome (one that throws, the database failing, counts as failed). */
  async run(feed: RssFeedRow, clock: Date = new Date()): Promise<SyncResultView> {
    const started = performance.now();
    let outcome: FeedSyncOutcome = 'failed';
    try {
      const result = await this.synchronize(feed, clock);
      outcome = result.job_status === 'failed' ? 'failed' : result.not_modified ? 'not_modified' : 'ok';
      return result;
    } finally {
      this.metrics.feedSynchronized(outcome, (performance.now() - started) / 1000);
    }
  }

  /**
   * Runs the leased synchronization of `feed` to its end and records the outcome on the feed. A feed that cannot be
   * read is a `failed` result, not an exception. `clock` is the scheduler's time (tests run the schedule ahead):
   * the next sync is reckoned from it or from the real time, whichever is later.
   */
  private async synchronize(feed: RssFeedRow, clock: Date): Promise<SyncResultView> {
    const jobId = feed.job_id!;
    const result = emptyResult(jobId, 'completed');
    const now = new Date(Math.max(clock.getTime(), Date.now()));
    try {
      const fetched = await fetchFeed(this.source, feed.url, { etag: feed.etag, lastModified: feed.last_modified });
      // The entries the import writes are cleaned in worker threads first, outside the transaction.
      if (fetched.feed) await cleanEntriesForImport(this.queries, feed, fetched.feed.entries, this.source.reader);
      const categoryIds = (await this.queries.categoryIds([feed.id])).get(feed.id) ?? [];
      const headers = fetched.response.headers;
      const contentMinutes = fetched.feed
        ? contentIntervalMinutes(fetched.feed.entries, fetched.feed.ttlMinutes, now, this.settings)
        : (feed.sync_interval_minutes ?? this.settings.intervalMinutes);
      const nextSync = nextSyncAfterSuccess(now, contentMinutes, freshnessMinutes(headers, now));
      // The URL the permanent redirects led to: another feed of the publication may hold it (both moved to one URL,
      // or this one is a duplicate kept from before 010), and then this one imports nothing rather than everything twice.
      const url = normalizeFeedUrl(fetched.permanentUrl);
      await this.queries.transaction(async (writes) => {
        const holder = await writes.feeds.holdingUrl(feed.publication_id, url, feed.id);
        if (holder) throw new HeldUrl(feed, url, holder.id);
        let leased;
        try {
          leased = await writes.feeds.endLeasedRun(feed.id, jobId, {
            url,
            normalized_url: url,
            etag: fetched.feed ? (headers.etag ?? null) : feed.etag,
            last_modified: fetched.feed ? (headers['last-modified'] ?? null) : feed.last_modified,
            imported_at: nowIso(),
            job_status: 'completed',
            last_error: null,
            consecutive_failures: 0,
            sync_interval_minutes: contentMinutes,
            next_sync_at: nextSync.toISOString(),
            retry_not_before: null,
          });
        } catch (error) {
          // Two feeds moving to one URL at the same moment: the unique index stops the later.
          if (isUniqueViolation(error)) throw new HeldUrl(feed, url, undefined);
          throw error;
        }
        if (!leased) throw new LeaseLost();
        if (fetched.feed) Object.assign(result, await importEntries(writes, feed, categoryIds, fetched.feed.entries));
        else result.not_modified = true;
      });
      if (result.imported > 0) await this.articles.refreshStatistics(result.imported);
    } catch (error) {
      Object.assign(result, emptyResult(jobId, 'failed'), { failed: 1 });
      if (error instanceof LeaseLost) {
        result.errors = ['the run took too long and was taken over by another; nothing was imported by this one'];
        return result;
      }
      const message =
        error instanceof FeedReadError || error instanceof HeldUrl
          ? error.message
          : `the import failed: ${error instanceof Error ? error.message : String(error)}`;
      result.errors = [message];
      await this.recordFailure(feed, jobId, message, now, error instanceof FeedReadError ? error.retryAfterSeconds : undefined);
    }
    await this.onFinished({ publicationId: feed.publication_id, feed: { id: feed.id, url: feed.url, title: feed.title }, result });
    return result;
  }

  private async recordFailure(feed: RssFeedRow, jobId: string, message: string, now: Date, retryAfter: number | undefined): Promise<void> {
    const failures = feed.consecutive_failures + 1;
    const retryNotBefore = retryAfter === undefined ? undefined : new Date(now.getTime() + retryAfter * 1000);
    const deactivate = feed.active === 1 && failures >= DEACTIVATE_AFTER_FAILURES;
    await this.queries.recordFailedRun(feed.id, jobId, {
      job_status: 'failed',
      last_error: deactivate ? `${message} (deactivated after ${failures} failed synchronizations in a row)` : message,
      consecutive_failures: failures,
      next_sync_at: nextSyncAfterFailure(now, failures, this.settings, retryNotBefore).toISOString(),
      retry_not_before: retryNotBefore?.toISOString() ?? null,
      ...(deactivate ? { active: 0 } : {}),
    });
  }
}
