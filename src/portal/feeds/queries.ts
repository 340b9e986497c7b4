import { type ExpressionBuilder, type Insertable, type Kysely, sql, type Updateable } from 'kysely';
import type { Dialect } from '../../db/connection.js';
import type { Database, FeedEntryTable, NewRssFeed, RssFeedRow, RssFeedTable } from '../../db/types.js';
import { ArticleQueries } from '../articles/queries.js';

export type RssFeedChanges = Updateable<RssFeedTable>;
export type NewFeedEntry = Insertable<FeedEntryTable>;
export type FeedEntryChanges = Updateable<FeedEntryTable>;

export interface ImportedEntry {
  id: number;
  entry_key: string;
  /** Null when a person deleted the article. */
  article_id: number | null;
  content_hash: string;
  synced_at: string;
  /** Null for entries stored before 006 (their key is `legacy:...`). */
  entry_link: string | null;
  entry_hash: string | null;
  article_updated_at: string | null;
}

/** The handles a feed's import writes through, both on one transaction (feeds write the articles they import). */
export interface FeedWrites {
  feeds: FeedQueries;
  articles: ArticleQueries;
}

/** Whether a write failed on a unique index (SQLite or PostgreSQL). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
}

// --- Leases on a feed's run -------------------------------------------------------------------------------------
// A run is leased by setting job_status 'running' in one conditional UPDATE, so that of two claimants (a manual
// synchronize, the scheduler of any instance) exactly one gets it. A run still 'running' after `stale` was cut off
// (a crash, a restart) and may be taken over.

/** Longer than any run can take (a 20 s fetch and one transaction): a run older than this is abandoned. */
export const STALE_RUN_MS = 10 * 60 * 1000;

function notRunning(stale: string) {
  return (eb: ExpressionBuilder<Database, 'rss_feeds'>) =>
    eb.or([eb('job_status', '!=', 'running'), eb('job_started_at', 'is', null), eb('job_started_at', '<', stale)]);
}

/** A new random (version 4) UUID as text, made by the database for each row it claims. */
function randomUuid(dialect: Dialect) {
  if (dialect === 'postgres') return sql<string>`gen_random_uuid()::text`;
  return sql<string>`lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' ||
    substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))`;
}

/**
 * RSS feeds, their categories, the entries they imported and the leases on their runs. Built on the database or on a
 * transaction's handle: `transaction` hands the work the feed and article queries of one transaction, so that a
 * feed's change (or an import and the bookkeeping of its run) is kept whole or not at all.
 */
export class FeedQueries {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  transaction<T>(work: (writes: FeedWrites) => Promise<T>): Promise<T> {
    return this.db
      .transaction()
      .execute((trx) => work({ feeds: new FeedQueries(trx, this.dialect), articles: new ArticleQueries(trx, this.dialect) }));
  }

  find(publicationId: number, id: number): Promise<RssFeedRow | undefined> {
    return this.db.selectFrom('rss_feeds').selectAll().where('id', '=', id).where('publication_id', '=', publicationId).executeTakeFirst();
  }

  list(publicationId: number): Promise<RssFeedRow[]> {
    return this.db.selectFrom('rss_feeds').selectAll().where('publication_id', '=', publicationId).orderBy('id').execute();
  }

  /** The feed of the publication that holds `normalizedUrl` (other than `exceptId`), if any. */
  holdingUrl(publicationId: number, normalizedUrl: string, exceptId?: number): Promise<{ id: number } | undefined> {
    return this.db
      .selectFrom('rss_feeds')
      .select('id')
      .where('publication_id', '=', publicationId)
      .where('normalized_url', '=', normalizedUrl)
      .$if(exceptId !== undefined, (query) => query.where('id', '!=', exceptId!))
      .executeTakeFirst();
  }

  /**
   * Inserts a feed; undefined when its publication holds its normalized URL already (the unique index decides, so that
   * of two creates of one URL at the same moment exactly one gets a row).
   */
  insert(values: NewRssFeed): Promise<RssFeedRow | undefined> {
    return this.db
      .insertInto('rss_feeds')
      .values(values)
      .onConflict((conflict) => conflict.columns(['publication_id', 'normalized_url']).doNothing())
      .returningAll()
      .executeTakeFirst();
  }

  async update(id: number, changes: RssFeedChanges): Promise<void> {
    await this.db.updateTable('rss_feeds').set(changes).where('id', '=', id).execute();
  }

  /** The articles the feed imported no longer name it (they are kept when the feed is deleted). */
  async unlinkArticles(publicationId: number, feedId: number): Promise<void> {
    await this.db
      .updateTable('articles')
      .set({ rss_feed_id: null })
      .where('rss_feed_id', '=', feedId)
      .where('publication_id', '=', publicationId)
      .execute();
  }

  async delete(publicationId: number, id: number): Promise<void> {
    await this.db.deleteFrom('rss_feeds').where('id', '=', id).where('publication_id', '=', publicationId).execute();
  }

  /** Category ids of each feed, in id order. */
  async categoryIds(feedIds: number[]): Promise<Map<number, number[]>> {
    const byFeed = new Map<number, number[]>();
    if (feedIds.length === 0) return byFeed;
    const rows = await this.db
      .selectFrom('rss_feed_categories')
      .select(['feed_id', 'category_id'])
      .where('feed_id', 'in', feedIds)
      .orderBy('category_id')
      .execute();
    for (const row of rows) {
      const list = byFeed.get(row.feed_id) ?? [];
      list.push(row.category_id);
      byFeed.set(row.feed_id, list);
    }
    return byFeed;
  }

  /** Makes the feed's categories exactly `categoryIds` (in a transaction: run it in one). */
  async setCategories(feedId: number, categoryIds: number[]): Promise<void> {
    await this.db.deleteFrom('rss_feed_categories').where('feed_id', '=', feedId).execute();
    if (categoryIds.length === 0) return;
    await this.db
      .insertInto('rss_feed_categories')
      .values(categoryIds.map((category_id) => ({ feed_id: feedId, category_id })))
      .execute();
  }

  // --- What a feed imported -------------------------------------------------------------------------------------

  /** What the feed imported before, with each article's current updated_at. */
  importedEntries(feedId: number): Promise<ImportedEntry[]> {
    return this.db
      .selectFrom('feed_entries')
      .leftJoin('articles', 'articles.id', 'feed_entries.article_id')
      .select([
        'feed_entries.id',
        'feed_entries.entry_key',
        'feed_entries.article_id',
        'feed_entries.content_hash',
        'feed_entries.synced_at',
        'feed_entries.entry_link',
        'feed_entries.entry_hash',
        'articles.updated_at as article_updated_at',
      ])
      .where('feed_entries.feed_id', '=', feedId)
      .orderBy('feed_entries.id')
      .execute();
  }

  /** What the feed's entries are keyed by first, once it stepped down (src/reader/dedupe.ts). */
  async setEntryKeyCriterion(feedId: number, criterion: RssFeedRow['entry_key_criterion']): Promise<void> {
    await this.db.updateTable('rss_feeds').set({ entry_key_criterion: criterion }).where('id', '=', feedId).execute();
  }

  async insertEntry(values: NewFeedEntry): Promise<void> {
    await this.db.insertInto('feed_entries').values(values).execute();
  }

  async updateEntry(id: number, changes: FeedEntryChanges): Promise<void> {
    await this.db.updateTable('feed_entries').set(changes).where('id', '=', id).execute();
  }

  // --- Leases on runs (see above) -------------------------------------------------------------------------------

  /** Leases the feed's run for a synchronize started now; undefined when a run holds it. */
  claimRun(id: number, jobId: string, now: string, stale: string): Promise<RssFeedRow | undefined> {
    return this.db
      .updateTable('rss_feeds')
      .set({ job_id: jobId, job_status: 'running', job_started_at: now, queued_at: null })
      .where('id', '=', id)
      .where(notRunning(stale))
      .returningAll()
      .executeTakeFirst();
  }

  /**
   * Queues a synchronize for the scheduler: job_status 'pending', due now. A synchronize already queued keeps its
   * job id. Undefined when a run holds the feed.
   */
  queueRun(id: number, jobId: string, now: string, stale: string): Promise<RssFeedRow | undefined> {
    return this.db
      .updateTable('rss_feeds')
      .set((eb) => ({
        job_id: eb.case().when('queued_at', 'is not', null).then(eb.ref('job_id')).else(jobId).end(),
        job_status: 'pending',
        queued_at: eb.fn.coalesce('queued_at', eb.val(now)),
        next_sync_at: now,
      }))
      .where('id', '=', id)
      .where(notRunning(stale))
      .returningAll()
      .executeTakeFirst();
  }

  /**
   * Leases the runs of up to `limit` feeds that are due at `now` (active and past next_sync_at, or queued by a
   * manual synchronize), earliest first, and returns them. PostgreSQL: the candidates are locked with FOR UPDATE SKIP
   * LOCKED, so instances claiming at the same moment take disjoint sets without waiting for each other; SQLite has a
   * single writer, so the one statement is atomic as it is. A queued run keeps the job id its caller was given.
   */
  claimDue(now: string, stale: string, limit: number): Promise<RssFeedRow[]> {
    const dialect = this.dialect;
    return this.db
      .updateTable('rss_feeds')
      .set((eb) => ({
        job_id: eb
          .case()
          .when(eb.and([eb('queued_at', 'is not', null), eb('job_id', 'is not', null)]))
          .then(eb.ref('job_id'))
          .else(randomUuid(dialect))
          .end(),
        job_status: 'running',
        job_started_at: now,
        queued_at: null,
      }))
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('rss_feeds')
          .select('id')
          .where('next_sync_at', '<=', now)
          .where((inner) => inner.or([inner('active', '=', 1), inner('queued_at', 'is not', null)]))
          .where((inner) => inner.or([inner('retry_not_before', 'is', null), inner('retry_not_before', '<=', now)]))
          .where(notRunning(stale))
          .orderBy('next_sync_at')
          .orderBy('id')
          .limit(limit)
          .$if(dialect === 'postgres', (query) => query.forUpdate().skipLocked()),
      )
      .returningAll()
      .execute();
  }

  /**
   * Records the outcome of the run `jobId` of the feed while its lease holds (job_status still 'running' under that
   * job id); false when the lease was taken over and nothing was written.
   */
  async endLeasedRun(feedId: number, jobId: string, changes: RssFeedChanges): Promise<boolean> {
    const result = await this.db
      .updateTable('rss_feeds')
      .set(changes)
      .where('id', '=', feedId)
      .where('job_id', '=', jobId)
      .where('job_status', '=', 'running')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Records a failed run `jobId` of the feed, unless another run has taken the feed since. */
  async recordFailedRun(feedId: number, jobId: string, changes: RssFeedChanges): Promise<void> {
    await this.db.updateTable('rss_feeds').set(changes).where('id', '=', feedId).where('job_id', '=', jobId).execute();
  }
}
