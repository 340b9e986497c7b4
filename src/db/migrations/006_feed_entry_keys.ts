import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../connection.js';

// Entry keys that carry their kind, and a key criterion per feed (see src/reader/dedupe.ts).
export async function up(db: Kysely<any>, _dialect: Dialect): Promise<void> {
  // guid, link or hash: what the feed's entries are keyed by first. It only ever steps down, once the feed was seen
  // repeating its guids (then its links).
  await db.schema
    .alterTable('rss_feeds')
    .addColumn('entry_key_criterion', 'text', (c) => c.notNull().defaultTo('guid'))
    .execute();
  // What identified the entry besides its key, so that its article is found again when the feed's criterion changes.
  await db.schema.alterTable('feed_entries').addColumn('entry_link', 'text').execute();
  await db.schema.alterTable('feed_entries').addColumn('entry_hash', 'text').execute();
  // Keys stored before had no kind, so it cannot be told whether one was a guid or a link. They are marked, and the
  // importer finds them by the entry's guid, link or hash and gives them their new key on the next synchronize.
  await sql`update feed_entries set entry_key = 'legacy:' || entry_key`.execute(db);
}
