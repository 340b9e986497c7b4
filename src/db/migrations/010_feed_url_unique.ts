import type { Kysely } from 'kysely';
import type { Dialect } from '../connection.js';

/**
 * One publication takes a feed once: `rss_feeds.normalized_url`, unique per publication, is the feed's URL in the
 * form the app compares (src/portal/feeds/feed-url.ts normalizeFeedUrl), so that two creates of one URL at the same
 * moment cannot both succeed.
 *
 * Feeds added twice before this migration are kept, articles and all: the oldest (lowest id) of each group of feeds
 * of one publication whose URLs normalize alike gets the normalized URL; each later one keeps a null normalized_url
 * (so the unique index lets it be) and is deactivated with a last_error naming the feed it duplicates, so that its
 * posts are not imported twice. Run by hand, such a feed fails with that reason while the older one exists; once
 * the older one is deleted, its next run takes the URL over.
 */
export async function up(db: Kysely<any>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('rss_feeds').addColumn('normalized_url', 'text').execute();
  const feeds: { id: number; publication_id: number; url: string }[] = await db
    .selectFrom('rss_feeds')
    .select(['id', 'publication_id', 'url'])
    .orderBy('id')
    .execute();
  const holders = new Map<string, number>();
  for (const feed of feeds) {
    const url = normalized(feed.url);
    const key = `${feed.publication_id} ${url}`;
    const holder = holders.get(key);
    if (holder === undefined) {
      holders.set(key, feed.id);
      await db.updateTable('rss_feeds').set({ normalized_url: url }).where('id', '=', feed.id).execute();
      continue;
    }
    await db
      .updateTable('rss_feeds')
      .set({
        active: 0,
        job_status: 'failed',
        queued_at: null,
        last_error:
          `the same feed as RSS feed ${holder} of this publication (${url}); deactivated when duplicate feeds stopped being allowed, ` +
          `so that its posts are not imported twice. Its articles are kept. Delete this feed, or delete RSS feed ${holder} and synchronize this one.`,
      })
      .where('id', '=', feed.id)
      .execute();
  }
  await db.schema.createIndex('rss_feeds_publication_url_unique').on('rss_feeds').columns(['publication_id', 'normalized_url']).unique().execute();
}

/** normalizeFeedUrl as this migration was written (a migration does not change with the app's code). */
function normalized(text: string): string {
  try {
    const url = new URL(text);
    url.hash = '';
    return url.href;
  } catch {
    return text;
  }
}
