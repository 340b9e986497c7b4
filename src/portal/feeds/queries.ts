import type { Kysely } from 'kysely';
import type { Database, RssFeedRow } from '../../db/types.js';

export async function findFeed(db: Kysely<Database>, publicationId: number, id: number): Promise<RssFeedRow | undefined> {
  return db.selectFrom('rss_feeds').selectAll().where('id', '=', id).where('publication_id', '=', publicationId).executeTakeFirst();
}

export async function listFeeds(db: Kysely<Database>, publicationId: number): Promise<RssFeedRow[]> {
  return db.selectFrom('rss_feeds').selectAll().where('publication_id', '=', publicationId).orderBy('id').execute();
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
  await db.insertInto('rss_feed_categories').values(categoryIds.map((category_id) => ({ feed_id: feedId, category_id }))).execute();
}

export interface ImportedEntry {
  entry_key: string;
  /** Null when a person deleted the article. */
  article_id: number | null;
  content_hash: string;
  synced_at: string;
  article_updated_at: string | null;
}

/** What the feed imported before, by entry key, with each article's current updated_at. */
export async function importedEntries(db: Kysely<Database>, feedId: number): Promise<Map<string, ImportedEntry>> {
  const rows = await db
    .selectFrom('feed_entries')
    .leftJoin('articles', 'articles.id', 'feed_entries.article_id')
    .select([
      'feed_entries.entry_key',
      'feed_entries.article_id',
      'feed_entries.content_hash',
      'feed_entries.synced_at',
      'articles.updated_at as article_updated_at',
    ])
    .where('feed_entries.feed_id', '=', feedId)
    .execute();
  return new Map(rows.map((row) => [row.entry_key, row]));
}
