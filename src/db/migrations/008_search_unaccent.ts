import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../connection.js';

// Article search ignores accents on PostgreSQL as it does on SQLite (FTS5's remove_diacritics): `cafe` finds
// "Café". PostgreSQL's `unaccent` extension ships with the server (contrib: in Debian's postgresql package and the
// official Docker image) and is trusted, so a database owner may create it. Where it cannot be created, search works
// as before (accents matter) rather than the migration failing. Its function is not immutable (it reads a
// dictionary by name), so an index needs the usual immutable wrapper, masthead_unaccent, naming the dictionary by
// schema. The extension goes into `public` (or stays where it already is): a database holds it once, whatever
// schema Masthead uses, and dropping one Masthead schema must not take it from another.
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  if (dialect !== 'postgres') return;
  const schema = await unaccentSchema(db);
  if (schema) {
    const unaccent = `${quoteIdentifier(schema)}.unaccent`;
    await sql
      .raw(
        `create function masthead_unaccent(text) returns text language sql immutable strict parallel safe
        as $$ select ${unaccent}('${unaccent.replace(/'/g, "''")}'::regdictionary, $1) $$`,
      )
      .execute(db);
  } else {
    await sql`create function masthead_unaccent(text) returns text language sql immutable strict parallel safe as $$ select $1 $$`.execute(db);
  }
  await sql`drop index articles_search_idx`.execute(db);
  await sql`create index articles_search_idx on articles
    using gin (to_tsvector('simple', masthead_unaccent(regexp_replace(coalesce(title, '') || ' ' || coalesce(info, ''), '[[:punct:]]+', ' ', 'g'))))`.execute(
    db,
  );
}

/** The schema holding the unaccent extension, creating it if it is missing and may be created; undefined if not. */
async function unaccentSchema(db: Kysely<any>): Promise<string | undefined> {
  const installed = async () =>
    (
      await sql<{
        schema: string;
      }>`select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'unaccent'`.execute(db)
    ).rows[0]?.schema;
  const found = await installed();
  if (found) return found;
  // A savepoint: a refused CREATE EXTENSION must not abort the migration's transaction.
  await sql`savepoint masthead_unaccent`.execute(db);
  try {
    await sql`create extension if not exists unaccent schema public`.execute(db);
    await sql`release savepoint masthead_unaccent`.execute(db);
  } catch {
    await sql`rollback to savepoint masthead_unaccent`.execute(db);
  }
  // Another process may have created it meanwhile.
  return installed();
}

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
