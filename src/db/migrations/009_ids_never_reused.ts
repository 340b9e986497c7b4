import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../connection.js';

/**
 * Ids are never handed out twice. On SQLite a plain `integer primary key` gives the largest id in the table plus one,
 * so once the newest row was deleted its id went to the next new row, and whatever still named it (a link, the audit
 * log's target_user_id, an article's rss_feed_id) named another record. `AUTOINCREMENT` keeps the largest id ever
 * given instead. SQLite cannot add it to a table, so each table is rebuilt as its documented procedure for other
 * table changes says (https://www.sqlite.org/lang_altertable.html#otheralter): a new table, the rows copied with
 * their ids, the old one dropped, the new one renamed, its indexes and triggers made again — the FTS5 search index's
 * triggers and the article counter's among them. The search index keeps its rows: it refers to the articles by
 * their ids, which are kept. Foreign keys must be off meanwhile (dropping a parent table would otherwise delete or
 * null its children's rows through ON DELETE): migrate.ts runs SQLite's migrations with them off and checks every
 * foreign key before it commits.
 *
 * PostgreSQL's `serial` columns draw from sequences, which never hand a number out twice: nothing to do there.
 */

interface Rebuilt {
  table: string;
  /** Columns that hold this table's ids without a foreign key, so may still name ids whose rows are gone. */
  heldBy?: [table: string, column: string][];
}

/** Every table whose integer primary key the database generates (article_counts' key is a publication's id). */
const TABLES: Rebuilt[] = [
  { table: 'accounts' },
  {
    table: 'users',
    heldBy: [
      ['audit_log', 'actor_id'],
      ['audit_log', 'impersonator_id'],
      ['audit_log', 'target_user_id'],
    ],
  },
  { table: 'api_keys' },
  { table: 'publications' },
  { table: 'categories' },
  { table: 'issues' },
  { table: 'articles' },
  { table: 'roles' },
  { table: 'audit_log' },
  { table: 'sign_in_failures' },
  { table: 'rss_feeds', heldBy: [['articles', 'rss_feed_id']] },
  { table: 'feed_entries' },
  { table: 'lead_jobs' },
];

export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  if (dialect !== 'sqlite') return;
  const foreignKeys = await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(db);
  if (foreignKeys.rows[0]?.foreign_keys !== 0) {
    throw new Error('rebuilding tables needs foreign keys off (migrateToLatest turns them off on SQLite)');
  }
  // The renames must not rewrite anything but the renamed table itself.
  const legacy = (await sql<{ legacy_alter_table: number }>`pragma legacy_alter_table`.execute(db)).rows[0]?.legacy_alter_table ?? 0;
  await sql`pragma legacy_alter_table = on`.execute(db);
  try {
    for (const rebuilt of TABLES) await rebuild(db, rebuilt);
  } finally {
    await sql.raw(`pragma legacy_alter_table = ${legacy ? 'on' : 'off'}`).execute(db);
  }
}

async function rebuild(db: Kysely<any>, { table, heldBy = [] }: Rebuilt): Promise<void> {
  const definition = (await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = ${table}`.execute(db)).rows[0]?.sql;
  if (!definition) throw new Error(`table ${table} is missing`);
  // Every such table was made by Kysely as `CREATE TABLE "t" ("id" integer primary key, ...`: anything else is refused
  // rather than guessed at.
  const head = new RegExp(`^CREATE TABLE "${table}" \\("(\\w+)" integer primary key( autoincrement)?[,)]`);
  const match = head.exec(definition);
  if (!match) throw new Error(`table ${table} does not start with an integer primary key: ${definition.slice(0, 120)}`);
  const key = match[1]!;
  if (match[2]) return;
  const staging = `new_${table}`;
  const created = definition.replace(head, (found) => `CREATE TABLE "${staging}" ("${key}" integer primary key autoincrement${found.slice(-1)}`);
  // The indexes (those written out; a UNIQUE constraint's comes with the table) and triggers go with the old table.
  const attached = (
    await sql<{
      sql: string;
    }>`select sql from sqlite_master where tbl_name = ${table} and type in ('index', 'trigger') and sql is not null order by rowid`.execute(db)
  ).rows.map((row) => row.sql);
  const columns = (await sql<{ name: string }>`select name from pragma_table_info(${table}) order by cid`.execute(db)).rows.map((row) =>
    sql.id(row.name),
  );

  await sql.raw(created).execute(db);
  await sql`insert into ${sql.table(staging)} (${sql.join(columns)}) select ${sql.join(columns)} from ${sql.table(table)}`.execute(db);
  await sql`drop table ${sql.table(table)}`.execute(db);
  await sql`alter table ${sql.table(staging)} rename to ${sql.table(table)}`.execute(db);
  for (const statement of attached) await sql.raw(statement).execute(db);

  // The copy left the largest id in the table as the sequence's start; ids that rows elsewhere still name, although
  // their own row is gone, are never given again either.
  const largest = [
    sql`select max(${sql.id(key)}) as n from ${sql.table(table)}`,
    ...heldBy.map(([other, column]) => sql`select max(${sql.id(column)}) as n from ${sql.table(other)}`),
  ];
  const { rows } = await sql<{ n: number | null }>`select max(n) as n from (${sql.join(largest, sql` union all `)})`.execute(db);
  const start = Number(rows[0]?.n ?? 0);
  await sql`delete from sqlite_sequence where name = ${table}`.execute(db);
  if (start > 0) await sql`insert into sqlite_sequence (name, seq) values (${table}, ${start})`.execute(db);
}
