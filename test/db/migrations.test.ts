import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { openStorage, type Storage } from '../../src/db/connection.js';
import { migrateToLatest, migrateUpTo } from '../../src/db/migrate.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/app.js';
import { ALL_MIGRATIONS, ALL_TABLES as TABLES } from '../helpers/schema.js';

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
        assert.deepEqual(
          results.map((result) => result.migrationName),
          ALL_MIGRATIONS,
        );
        assert.equal(await countRows(other, 'accounts'), 0);
        assert.equal(await countRows(storage, 'accounts'), 1);
      } finally {
        await other.close();
        await neighbour.drop();
      }
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`010_feed_url_unique on feeds added twice before it (${dialect})`, () => {
    let database: TestDatabase;
    let storage: Storage;
    let db: Kysely<any>;
    const ids: Record<string, number> = {};

    before(async () => {
      database = await createTestDatabase(dialect);
      storage = openStorage(database.url);
      db = storage.db as Kysely<any>;
      await migrateUpTo(db, storage.dialect, '009_ids_never_reused');
      const at = '2026-01-15T10:00:00.000Z';
      const stamps = { created_at: at, updated_at: at };
      const id = async (table: string, values: Record<string, unknown>) =>
        (await db.insertInto(table).values(values).returning('id').executeTakeFirstOrThrow()).id as number;
      const accountId = await id('accounts', { name: 'Before', plan: 'pro', ...stamps });
      ids.pub = await id('publications', { account_id: accountId, app_id: 'before-010', name: 'Before', ...stamps });
      ids.otherPub = await id('publications', { account_id: accountId, app_id: 'before-010-b', name: 'Other', ...stamps });
      const feed = (publication: number, url: string, values: Record<string, unknown> = {}) =>
        id('rss_feeds', { publication_id: publication, url, title: url, next_sync_at: at, ...values, ...stamps });
      // One feed written three ways in one publication, the oldest first; https and another publication apart.
      ids.oldest = await feed(ids.pub, 'http://blog.example.com/feed#top');
      ids.same = await feed(ids.pub, 'http://blog.example.com/feed', { job_status: 'completed', queued_at: at });
      ids.again = await feed(ids.pub, 'http://blog.example.com/feed');
      ids.https = await feed(ids.pub, 'https://blog.example.com/feed');
      ids.elsewhere = await feed(ids.otherPub, 'http://blog.example.com/feed');
      for (const feedId of [ids.oldest, ids.same]) {
        const article = await id('articles', { publication_id: ids.pub, title: `From ${feedId}`, rss_feed_id: feedId, source: 'rss', ...stamps });
        await id('feed_entries', { feed_id: feedId, entry_key: 'guid:1', article_id: article, content_hash: 'h', synced_at: at });
      }
      const applied = await migrateUpTo(db, storage.dialect, '010_feed_url_unique');
      assert.deepEqual(
        applied.map((result) => [result.migrationName, result.status]),
        [['010_feed_url_unique', 'Success']],
      );
    });
    after(async () => {
      await storage.close();
      await database.drop();
    });

    it('gives the oldest the normalized URL and deactivates the later duplicates with the reason, keeping them and their articles', async () => {
      const rows = await db
        .selectFrom('rss_feeds')
        .select(['id', 'url', 'normalized_url', 'active', 'job_status', 'queued_at', 'last_error'])
        .orderBy('id')
        .execute();
      const byId = new Map(rows.map((row) => [row.id as number, row]));
      assert.equal(rows.length, 5, 'no feed is deleted');
      const url = 'http://blog.example.com/feed';
      assert.deepEqual(byId.get(ids.oldest), {
        id: ids.oldest,
        url: 'http://blog.example.com/feed#top',
        normalized_url: url,
        active: 1,
        job_status: 'pending',
        queued_at: null,
        last_error: null,
      });
      for (const duplicate of [ids.same, ids.again]) {
        const row = byId.get(duplicate)!;
        assert.equal(row.normalized_url, null);
        assert.equal(row.url, url, 'the URL stays as it was');
        assert.equal(row.active, 0);
        assert.equal(row.job_status, 'failed');
        assert.equal(row.queued_at, null);
        assert.match(
          row.last_error,
          new RegExp(`^the same feed as RSS feed ${ids.oldest} of this publication \\(http://blog\\.example\\.com/feed\\); deactivated`),
        );
      }
      assert.equal(byId.get(ids.https)!.normalized_url, 'https://blog.example.com/feed');
      assert.equal(byId.get(ids.https)!.active, 1);
      assert.equal(byId.get(ids.elsewhere)!.normalized_url, url);
      assert.equal(byId.get(ids.elsewhere)!.active, 1);
      assert.equal(
        Number(
          (
            await db
              .selectFrom('articles')
              .select((eb) => eb.fn.countAll().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        ),
        2,
      );
      assert.deepEqual(
        (await db.selectFrom('feed_entries').select('feed_id').orderBy('feed_id').execute()).map((row) => row.feed_id),
        [ids.oldest, ids.same],
      );
    });

    it('refuses from then on a feed whose normalized URL a feed of its publication holds', async () => {
      const at = new Date().toISOString();
      const values = (publication: number, normalized: string | null) => ({
        publication_id: publication,
        url: 'http://blog.example.com/feed',
        normalized_url: normalized,
        title: 'New',
        created_at: at,
        updated_at: at,
      });
      await assert.rejects(db.insertInto('rss_feeds').values(values(ids.pub, 'http://blog.example.com/feed')).execute(), /unique|duplicate/i);
      await assert.rejects(db.insertInto('rss_feeds').values(values(ids.otherPub, 'http://blog.example.com/feed')).execute(), /unique|duplicate/i);
      const third = await db
        .insertInto('rss_feeds')
        .values(values(ids.otherPub, 'http://blog.example.com/other'))
        .returning('id')
        .executeTakeFirstOrThrow();
      assert.ok(third.id > ids.elsewhere);
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
