import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openStorage, type Storage } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/app.js';

const ALL_MIGRATIONS = ['001_initial', '002_clients', '003_feeds', '004_feed_schedule', '005_leads', '006_feed_entry_keys', '007_lead_fixes', '008_search_unaccent', '009_ids_never_reused'];

const TABLES = ['accounts', 'users', 'api_keys', 'publications', 'categories', 'issues', 'articles', 'article_categories', 'article_counts', 'roles', 'audit_log', 'sign_in_failures', 'rss_feeds', 'rss_feed_categories', 'feed_entries', 'lead_templates', 'lead_jobs', 'company_profiles', 'idempotency_keys', 'lead_usage'];

/** Rows in a table of the storage's own schema; throws when the table does not exist. */
async function countRows(storage: Storage, table: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(storage.db);
  return Number(rows[0]!.n);
}

for (const dialect of DIALECTS) {
  describe(`migrations (${dialect})`, () => {
    let database: TestDatabase;
    let storage: Storage;
    before(async () => {
      database = await createTestDatabase(dialect);
      storage = openStorage(database.url);
    });
    after(async () => {
      await storage.close();
      await database.drop();
    });

    it('applies every migration to an empty database and creates every table, empty', async () => {
      await assert.rejects(countRows(storage, 'accounts'), 'the database starts empty');
      const results = await migrateToLatest(storage.db, storage.dialect);
      assert.deepEqual(
        results.map(({ migrationName, direction, status }) => ({ migrationName, direction, status })),
        ALL_MIGRATIONS.map((migrationName) => ({ migrationName, direction: 'Up', status: 'Success' })),
      );
      for (const table of TABLES) assert.equal(await countRows(storage, table), 0, table);
    });

    it('applies nothing when run again, and keeps the data', async () => {
      const now = new Date().toISOString();
      await storage.db.insertInto('accounts').values({ name: 'Kept', plan: 'pro', created_at: now, updated_at: now }).execute();
      assert.deepEqual(await migrateToLatest(storage.db, storage.dialect), []);
      assert.deepEqual(await migrateToLatest(storage.db, storage.dialect), []);
      const accounts = await storage.db.selectFrom('accounts').select(['name', 'plan']).execute();
      assert.deepEqual(accounts, [{ name: 'Kept', plan: 'pro' }]);
    });

    it('keeps to its own database when another one beside it is migrated already', async () => {
      // Two PostgreSQL schemas in one database (or two SQLite files) each get their own tables and bookkeeping.
      const neighbour = await createTestDatabase(dialect);
      const other = openStorage(neighbour.url);
      try {
        const results = await migrateToLatest(other.db, other.dialect);
        assert.deepEqual(results.map((result) => result.migrationName), ALL_MIGRATIONS);
        assert.equal(await countRows(other, 'accounts'), 0);
        assert.equal(await countRows(storage, 'accounts'), 1);
      } finally {
        await other.close();
        await neighbour.drop();
      }
    });
  });
}

const run = promisify(execFile);

describe('migrations started together on one new SQLite file', () => {
  it('are applied by exactly one process; the others wait and find nothing to do', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'masthead-migrate-'));
    const env = { ...process.env, DATABASE_URL: join(folder, 'shared.sqlite') };
    try {
      const outputs = await Promise.all(
        Array.from({ length: 4 }, () => run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'migrate'], { env, timeout: 60_000 })),
      );
      const applied = outputs.map(({ stdout }) => (JSON.parse(stdout) as { applied: string[] }).applied.length);
      assert.deepEqual(applied.sort(), [0, 0, 0, ALL_MIGRATIONS.length]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
