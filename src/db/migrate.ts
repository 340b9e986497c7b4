import { type Kysely, type Migration, type MigrationResult, Migrator } from 'kysely';
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
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === 'Error');
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`Migration ${failed?.migrationName ?? ''} failed: ${reason}`.replace('  ', ' '));
  }
  return results ?? [];
}
