import { type ExpressionBuilder, type Kysely, sql } from 'kysely';
import type { Dialect } from '../../db/connection.js';
import type { Database, NewRssFeed, RssFeedRow } from '../../db/types.js';

export async function findFeed(db: Kysely<Database>, publicationId: number, id: number): Promise<RssFeedRow | undefined> {
  return db.selectFrom('rss_feeds').selectAll().where('id', '=', id).where('publication_id', '=', publicationId).executeTakeFirst();
}

export async function listFeeds(db: Kysely<Database>, publicationId: number): Promise<RssFeedRow[]> {
  return db.selectFrom('rss_feeds').selectAll().where('publication_id', '=', publicationId).orderBy('id').execute();
}

/** The feed of the publication that holds `normalizedUrl` (other than `exceptId`), if any. */
export async function feedHoldingUrl(
  db: Kysely<Database>,
  publicationId: number,
  normalizedUrl: string,
  exceptId?: number,
): Promise<{ id: number } | undefined> {
  return db
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
export async function insertFeed(db: Kysely<Database>, values: NewRssFeed): Promise<RssFeedRow | undefined> {
  return db
    .insertInto('rss_feeds')
    .values(values)
    .onConflict((conflict) => conflict.columns(['publication_id', 'normalized_url']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** Whether a write failed on a unique index (SQLite or PostgreSQL). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
}

/** Category ids of each feed, in id order. */
export async function feedCategoryIds(db: Kysely<Database>, feedIds: number[]): Promise<Map<number, number[]>> {
  const byFeed = new Map<number, number[]>();
  if (feedIds.length === 0) return byFeed;
  const rows = await db
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

export async function setFeedCategories(db: Kysely<Database>, feedId: number, categoryIds: number[]): Promise<void> {
  await db.deleteFrom('rss_feed_categories').where('feed_id', '=', feedId).execute();
  if (categoryIds.length === 0) return;
  await db
    .insertInto('rss_feed_categories')
    .values(categoryIds.map((category_id) => ({ feed_id: feedId, category_id })))
    .execute();
}

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

/** What the feed imported before, with each article's current updated_at. */
export async function importedEntries(db: Kysely<Database>, feedId: number): Promise<ImportedEntry[]> {
  return db
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

/** Leases the feed's run for a synchronize started now; undefined when a run holds it. */
export async function claimFeedRun(db: Kysely<Database>, id: number, jobId: string, now: string, stale: string): Promise<RssFeedRow | undefined> {
  return db
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
export async function queueFeedRun(db: Kysely<Database>, id: number, jobId: string, now: string, stale: string): Promise<RssFeedRow | undefined> {
  return db
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

/** A new random (version 4) UUID as text, made by the database for each row it claims. */
function randomUuid(dialect: Dialect) {
  if (dialect === 'postgres') return sql<string>`gen_random_uuid()::text`;
  return sql<string>`lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' ||
    substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))`;
}

/**
 * Leases the runs of up to `limit` feeds that are due at `now` (active and past next_sync_at, or queued by a
 * manual synchronize), earliest first, and returns them. PostgreSQL: the candidates are locked with FOR UPDATE SKIP
 * LOCKED, so instances claiming at the same moment take disjoint sets without waiting for each other; SQLite has a
 * single writer, so the one statement is atomic as it is. A queued run keeps the job id its caller was given.
 */
export async function claimDueFeeds(db: Kysely<Database>, dialect: Dialect, now: string, stale: string, limit: number): Promise<RssFeedRow[]> {
  return db
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
