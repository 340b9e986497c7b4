import { type Kysely, type Migration, type MigrationResult, type MigrationResultSet, Migrator, sql } from 'kysely';
import type { Dialect } from './connection.js';
import * as initial from './migrations/001_initial.js';
import * as clients from './migrations/002_clients.js';
import * as feeds from './migrations/003_feeds.js';
import * as feedSchedule from './migrations/004_feed_schedule.js';
import * as leads from './migrations/005_leads.js';
import * as feedEntryKeys from './migrations/006_feed_entry_keys.js';
import * as leadFixes from './migrations/007_lead_fixes.js';
import * as searchUnaccent from './migrations/008_search_unaccent.js';
import * as idsNeverReused from './migrations/009_ids_never_reused.js';
import * as feedUrlUnique from './migrations/010_feed_url_unique.js';
import * as webhooks from './migrations/011_webhooks.js';
import * as articleSearchColumn from './migrations/013_article_search_column.js';
import * as leadBatches from './migrations/014_lead_batches.js';
import * as postgresNativeTypes from './migrations/015_postgres_native_types.js';

type DialectMigration = { up(db: Kysely<any>, dialect: Dialect): Promise<void> };

// Migrations are listed here, in order, so that they ship inside the build and never depend on the file system.
const MIGRATIONS: Record<string, DialectMigration> = {
  '001_initial': initial,
  '002_clients': clients,
  '003_feeds': feeds,
  '004_feed_schedule': feedSchedule,
  '005_leads': leads,
  '006_feed_entry_keys': feedEntryKeys,
  '007_lead_fixes': leadFixes,
  '008_search_unaccent': searchUnaccent,
  '009_ids_never_reused': idsNeverReused,
  '010_feed_url_unique': feedUrlUnique,
  '011_webhooks': webhooks,
  '013_article_search_column': articleSearchColumn,
  '014_lead_batches': leadBatches,
  '015_postgres_native_types': postgresNativeTypes,
};

export async function migrateToLatest(db: Kysely<any>, dialect: Dialect): Promise<MigrationResult[]> {
  return migrate(db, dialect, (migrator) => migrator.migrateToLatest());
}

/** Applies the migrations up to `name` only (tests make a database as an older Masthead left it). */
export async function migrateUpTo(db: Kysely<any>, dialect: Dialect, name: string): Promise<MigrationResult[]> {
  if (!(name in MIGRATIONS)) throw new Error(`No migration ${name}`);
  return migrate(db, dialect, (migrator) => migrator.migrateTo(name));
}

async function migrate(db: Kysely<any>, dialect: Dialect, run: (migrator: Migrator) => Promise<MigrationResultSet>): Promise<MigrationResult[]> {
  const migrations: Record<string, Migration> = {};
  for (const [name, migration] of Object.entries(MIGRATIONS)) {
    migrations[name] = {
      up: async (database) => {
        // A migration may rewrite a large table: DATABASE_STATEMENT_TIMEOUT_MS is for requests, not for it.
        if (dialect === 'postgres') await sql`set local statement_timeout = 0`.execute(database);
        await migration.up(database, dialect);
      },
    };
  }
  // Kysely looks for its bookkeeping tables in every schema unless told which one: on PostgreSQL a database holding
  // another Masthead (or test) schema would make it skip creating them in ours. Name the schema the tables live in.
  const migrationTableSchema = dialect === 'postgres' ? await currentSchema(db) : undefined;
  const migrator = new Migrator({ db, migrationTableSchema, provider: { getMigrations: async () => migrations } });
  const apply = () => run(migrator);
  const { error, results } = dialect === 'sqlite' ? await inSqliteWriteTransaction(db, apply) : await apply();
  if (error) {
    const failed = results?.find((result) => result.status === 'Error');
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`Migration ${failed?.migrationName ?? ''} failed: ${reason}`.replace('  ', ' '));
  }
  return results ?? [];
}

async function currentSchema(db: Kysely<any>): Promise<string> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema;
  if (!schema) throw new Error('Migration failed: the PostgreSQL search_path names no schema');
  return schema;
}

/**
 * Kysely takes no lock on SQLite, so two processes starting together on a new file would both create the tables.
 * BEGIN IMMEDIATE holds the database's write lock for the whole run (the other waits, then finds nothing to do),
 * and as SQLite's DDL is transactional, a failed migration leaves no half-made schema behind.
 *
 * Foreign keys are off while migrations run, as SQLite's procedure for table changes asks
 * (https://www.sqlite.org/lang_altertable.html#otheralter): a migration that rebuilds a table drops the old one, and
 * with foreign keys on, that drop would first delete its rows and so delete (or null) its children's rows through
 * their ON DELETE actions. The pragma cannot change inside a transaction, so it is turned off before BEGIN and back on
 * after the end; before committing, `PRAGMA foreign_key_check` must find no row naming a missing parent, else
 * nothing is committed. (So a migration cannot rely on ON DELETE actions either: a delete that would cascade leaves
 * orphans, which the check refuses.)
 */
async function inSqliteWriteTransaction<T extends { error?: unknown }>(db: Kysely<any>, run: () => Promise<T>): Promise<T> {
  const foreignKeys = (await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(db)).rows[0]?.foreign_keys === 1;
  if (foreignKeys) await sql`pragma foreign_keys = off`.execute(db);
  try {
    await sql`begin immediate`.execute(db);
    let outcome: T;
    try {
      outcome = await run();
      if (!outcome.error && foreignKeys) await assertForeignKeysHold(db);
    } catch (error) {
      await sql`rollback`.execute(db);
      throw error;
    }
    await sql.raw(outcome.error ? 'rollback' : 'commit').execute(db);
    return outcome;
  } finally {
    if (foreignKeys) await sql`pragma foreign_keys = on`.execute(db);
  }
}

async function assertForeignKeysHold(db: Kysely<any>): Promise<void> {
  const { rows } = await sql<{ table: string; rowid: number | null; parent: string }>`pragma foreign_key_check`.execute(db);
  if (rows.length === 0) return;
  const first = rows[0]!;
  throw new Error(
    `Migration failed: ${rows.length} row(s) name a missing parent row (the first: ${first.table} rowid ${first.rowid} -> ${first.parent}); nothing was applied`,
  );
}
