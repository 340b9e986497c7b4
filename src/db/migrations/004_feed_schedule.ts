import type { Kysely } from 'kysely';
import type { Dialect } from '../connection.js';

// Background synchronization of RSS feeds: when each feed is due, how often it fails, and manual runs queued for
// the scheduler. A feed's run itself is leased through job_status = 'running' and job_started_at (003).
export async function up(db: Kysely<any>, _dialect: Dialect): Promise<void> {
  // Existing feeds are due at once: the epoch sorts before any real time.
  await db.schema
    .alterTable('rss_feeds')
    .addColumn('next_sync_at', 'text', (c) => c.notNull().defaultTo('1970-01-01T00:00:00.000Z'))
    .execute();
  await db.schema
    .alterTable('rss_feeds')
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // The interval the feed's own posting rate suggested at its last successful parse (minutes); kept for 304s.
  await db.schema.alterTable('rss_feeds').addColumn('sync_interval_minutes', 'integer').execute();
  // The feed's server answered 429/503 with Retry-After: no fetch of any kind before this time.
  await db.schema.alterTable('rss_feeds').addColumn('retry_not_before', 'text').execute();
  // A manual synchronize queued with `Prefer: respond-async`, waiting for the scheduler (runs even if inactive).
  await db.schema.alterTable('rss_feeds').addColumn('queued_at', 'text').execute();
  await db.schema.createIndex('rss_feeds_next_sync_idx').on('rss_feeds').column('next_sync_at').execute();
}
