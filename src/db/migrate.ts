import { type Kysely, type Migration, type MigrationResult, Migrator, sql } from 'kysely';
import type { Dialect } from './connection.js';
import * as initial from './migrations/001_initial.js';

type DialectMigration = { up(db: Kysely<any>, dialect: Dialect): Promise<void> };

// Migrations are listed here, in order, so that they ship inside the build and never depend on the file system.
const MIGRATIONS: Record<string, DialectMigration> = {
  '001_initial': initial,
};

export async function migrateToLatest(db: Kysely<any>, dialect: Dialect): Promise<MigrationResult[]> {
  const migrations: Record<string, Migration> = {};
  for (const [name, migration] of Object.entries(MIGRATIONS)) {
    migrations[name] = { up: (database) => migration.up(database, dialect) };
  }
  // Kysely looks for its bookkeeping tables in every schema unless told which one: on PostgreSQL a database holding
  // another Masthead (or test) schema would make it skip creating them in ours. Name the schema the tables live in.
  const migrationTableSchema = dialect === 'postgres' ? await currentSchema(db) : undefined;
  const migrator = new Migrator({ db, migrationTableSchema, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
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
