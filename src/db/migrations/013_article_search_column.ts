import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../connection.js';

/**
 * On PostgreSQL the words an article filter searches (title and info, punctuation as spaces, accents removed) are a
 * stored generated column with the GIN index on it, rather than an index on the expression: a filter that walks rows
 * in id order reads the stored value instead of recomputing regexp_replace, unaccent and to_tsvector for every row it
 * passes, and the column is the one place the expression is written (the query names the column). Adding it rewrites
 * the table once. SQLite searches its FTS5 table (migration 001), unchanged. (Generated columns need PostgreSQL 12.)
 */
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`alter table articles add column search tsvector generated always as
    (to_tsvector('simple', masthead_unaccent(regexp_replace(coalesce(title, '') || ' ' || coalesce(info, ''), '[[:punct:]]+', ' ', 'g')))) stored`.execute(
    db,
  );
  await sql`drop index articles_search_idx`.execute(db);
  // Without GIN's pending list (fastupdate): new articles go into the index as they are written, so a search never
  // has to scan a list of recent, unindexed ones (about 10 ms a query after a large import) until a vacuum merges it.
  await sql`create index articles_search_idx on articles using gin (search) with (fastupdate = off)`.execute(db);
}
