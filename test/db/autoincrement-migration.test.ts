import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { AccountQueries } from '../../src/accounts/queries.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { type Dialect, openStorage, type Storage } from '../../src/db/connection.js';
import { migrateToLatest, migrateUpTo } from '../../src/db/migrate.js';
import { client, createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/app.js';
import { PORTAL } from '../helpers/portal.js';
import { ALL_TABLES } from '../helpers/schema.js';

/** The tables a database made by the migrations up to 009 holds (011 made the webhook tables, 014 lead_batches). */
const TABLES = ALL_TABLES.filter((table) => !table.startsWith('webhook_') && table !== 'lead_batches');

// 009 rebuilds SQLite's tables with AUTOINCREMENT (ids never reused); on PostgreSQL it does nothing. A database made
// by the migrations before it, holding data, keeps every row, id, relation, index, trigger and the search index.

/** Every row of every table, in a stable order. */
async function snapshot(db: Kysely<any>): Promise<Record<string, unknown[]>> {
  const tables: Record<string, unknown[]> = {};
  for (const table of TABLES) {
    const rows = await db.selectFrom(table).selectAll().execute();
    tables[table] = rows.map((row) => JSON.stringify(row)).sort();
  }
  return tables;
}

/** Indexes, triggers, foreign keys (with their ON DELETE actions) and table definitions. */
async function schema(db: Kysely<any>, dialect: Dialect) {
  if (dialect === 'sqlite') {
    const objects = (
      await sql<{ type: string; name: string; tbl_name: string; sql: string | null }>`
      select type, name, tbl_name, sql from sqlite_master where name not like 'sqlite_%' order by type, name`.execute(db)
    ).rows;
    const foreignKeys: Record<string, unknown[]> = {};
    for (const table of TABLES) {
      foreignKeys[table] = (
        await sql`select "table", "from", "to", on_update, on_delete from pragma_foreign_key_list(${table}) order by id, seq`.execute(db)
      ).rows;
    }
    return { objects, foreignKeys };
  }
  const indexes = (
    await sql`select tablename, indexname, indexdef from pg_indexes where schemaname = current_schema() order by indexname`.execute(db)
  ).rows;
  const triggers = (
    await sql`select event_object_table, trigger_name, event_manipulation, action_statement from information_schema.triggers
    where trigger_schema = current_schema() order by trigger_name, event_manipulation`.execute(db)
  ).rows;
  const foreignKeys = (
    await sql`select conrelid::regclass::text as child, conname, pg_get_constraintdef(oid) as definition from pg_constraint
    where contype = 'f' and connamespace = current_schema()::regnamespace order by conname`.execute(db)
  ).rows;
  const columns = (
    await sql`select table_name, column_name, data_type, column_default, is_nullable from information_schema.columns
    where table_schema = current_schema() order by table_name, ordinal_position`.execute(db)
  ).rows;
  return { indexes, triggers, foreignKeys, columns };
}

interface Seeded {
  apiKey: string;
  appId: string;
  ownerId: number;
  clientId: number;
  /** A client deleted before the migration; the audit log still names it. */
  deletedClientId: number;
  articleIds: number[];
  /** The newest article, deleted before the migration; nothing names it. */
  deletedArticleId: number;
  issueId: number;
  categoryIds: number[];
  /** A feed deleted before the migration; an article's rss_feed_id still names it. */
  deletedFeedId: number;
}

/** Data in every table, written as the application before 009 wrote it. */
async function seed(db: Kysely<any>): Promise<Seeded> {
  const at = '2026-01-15T10:00:00.000Z';
  const stamps = { created_at: at, updated_at: at };
  const id = async (table: string, values: Record<string, unknown>) =>
    (await db.insertInto(table).values(values).returning('id').executeTakeFirstOrThrow()).id as number;
  const accountId = await id('accounts', { name: 'Before', plan: 'pro', sender_name: 'Ada', sender_offer: 'Airships', ...stamps });
  await id('accounts', { name: 'Neighbour', plan: 'free', ...stamps });
  const ownerId = await id('users', {
    account_id: accountId,
    email: 'owner@before.example.com',
    firstname: 'Olive',
    lastname: 'Owner',
    password_hash: 'x',
    kind: 'owner',
    ...stamps,
  });
  const clientId = await id('users', {
    account_id: accountId,
    email: 'client@before.example.com',
    firstname: 'Cleo',
    kind: 'client',
    sign_in_count: 3,
    last_seen_at: at,
    ...stamps,
  });
  const deletedClientId = await id('users', { account_id: accountId, email: 'gone@before.example.com', kind: 'client', ...stamps });
  const keys = new AccountQueries(db);
  const apiKey = await keys.insertKey({ userId: ownerId, name: 'owner key' }, at);
  await keys.insertKey({ userId: clientId, name: 'client key' }, at);
  await keys.insertKey({ userId: deletedClientId, name: 'session', kind: 'session', expiresAt: '2026-01-16T10:00:00.000Z' }, at);
  const publicationId = await id('publications', { account_id: accountId, app_id: 'before-009', name: 'Before', ...stamps });
  await id('publications', { account_id: accountId, app_id: 'before-009-b', name: 'Before B', ...stamps });
  const categoryIds = [
    await id('categories', { publication_id: publicationId, name: 'Travel', ...stamps }),
    await id('categories', { publication_id: publicationId, name: 'Food', ...stamps }),
  ];
  const issueId = await id('issues', { publication_id: publicationId, name: 'Winter', date: '2026-01-01', ...stamps });
  const feedId = await id('rss_feeds', {
    publication_id: publicationId,
    url: 'https://before.example.com/feed.xml',
    title: 'Before feed',
    etag: '"e1"',
    next_sync_at: at,
    ...stamps,
  });
  const deletedFeedId = await id('rss_feeds', {
    publication_id: publicationId,
    url: 'https://before.example.com/gone.xml',
    title: 'Gone feed',
    ...stamps,
  });
  const articleIds = [
    await id('articles', {
      publication_id: publicationId,
      title: 'Lisbon in winter',
      info: 'Where to eat',
      html: '<p>Market</p>',
      date: '2026-01-02',
      issue_id: issueId,
      position: 1,
      author_id: clientId,
      ...stamps,
    }),
    await id('articles', {
      publication_id: publicationId,
      title: 'Porto by night',
      info: 'Bridges',
      rss_feed_id: deletedFeedId,
      source: 'https://before.example.com/1',
      visible: 0,
      ...stamps,
    }),
    await id('articles', { publication_id: publicationId, title: 'Zeppelin days', rss_feed_id: feedId, unlock_type: 'paid', ...stamps }),
  ];
  const deletedArticleId = await id('articles', { publication_id: publicationId, title: 'Deleted before', ...stamps });
  await db.deleteFrom('articles').where('id', '=', deletedArticleId).execute();
  await db
    .insertInto('article_categories')
    .values([
      { article_id: articleIds[0], category_id: categoryIds[0] },
      { article_id: articleIds[1], category_id: categoryIds[1] },
    ])
    .execute();
  await id('roles', { user_id: clientId, publication_id: publicationId, access_level: 'editor', ...stamps });
  await id('roles', { user_id: deletedClientId, publication_id: publicationId, access_level: 'viewer', ...stamps });
  await db.insertInto('rss_feed_categories').values({ feed_id: feedId, category_id: categoryIds[0] }).execute();
  await id('feed_entries', {
    feed_id: feedId,
    entry_key: 'guid:1',
    article_id: articleIds[2],
    content_hash: 'h1',
    synced_at: at,
    entry_link: 'https://before.example.com/z',
  });
  await id('feed_entries', { feed_id: deletedFeedId, entry_key: 'guid:2', article_id: articleIds[1], content_hash: 'h2', synced_at: at });
  await id('audit_log', {
    account_id: accountId,
    actor_id: ownerId,
    action: 'client.create',
    target_user_id: deletedClientId,
    ip: '127.0.0.1',
    details: '{"email":"gone@before.example.com"}',
    created_at: at,
  });
  await id('audit_log', { account_id: accountId, actor_id: ownerId, action: 'client.delete', target_user_id: deletedClientId, created_at: at });
  await id('sign_in_failures', { scope: 'email:owner@before.example.com', failed_at: at });
  const templateId = '0b7e6f7c-2f0a-4a57-9d6e-7a3c1b1f2e10';
  await db
    .insertInto('lead_templates')
    .values({ id: templateId, account_id: accountId, name: 'Intro', subject: 'Hi {{firstName}}', body: 'Hello', is_default: 1, ...stamps })
    .execute();
  const job = { account_id: accountId, first_name: 'Ada', last_name: 'Lovelace', domain: 'zeppelin.example.com', ...stamps };
  await db
    .insertInto('lead_jobs')
    .values({
      ...job,
      id: '6f1d2f38-9f1e-4c1b-8d0a-1f2e3d4c5b6a',
      user_id: ownerId,
      template_id: templateId,
      email: 'ada@zeppelin.example.com',
      status: 'completed',
      email_subject: 'S',
      email_body: 'B',
      generator: 'builtin',
      completed_at: at,
    })
    .execute();
  await db
    .insertInto('lead_jobs')
    .values({
      ...job,
      id: '7a2e3f49-0a2f-4d2c-9e1b-2a3f4e5d6c7b',
      user_id: clientId,
      email: 'bob@zeppelin.example.com',
      status: 'pending',
      run_async: 1,
      attempts: 1,
      lease_owner: 'x',
      lease_until: at,
    })
    .execute();
  await db
    .insertInto('company_profiles')
    .values({ domain: 'zeppelin.example.com', profile: '{}', source: 'domain', fetched_at: at, expires_at: '2099-01-01T00:00:00.000Z' })
    .execute();
  await db
    .insertInto('idempotency_keys')
    .values({
      account_id: accountId,
      key: 'k1',
      request_hash: 'h',
      status_code: 200,
      response: '{}',
      created_at: at,
      expires_at: '2099-01-01T00:00:00.000Z',
    })
    .execute();
  await db.insertInto('lead_usage').values({ account_id: accountId, month: '2026-01', leads: 7 }).execute();
  // Deleted before the migration, while foreign keys were on: the client's keys and role go with it, its feed's
  // entries and categories with the feed, and the rows that still name them (audit log, rss_feed_id) stay.
  await db.deleteFrom('users').where('id', '=', deletedClientId).execute();
  await db.deleteFrom('rss_feeds').where('id', '=', deletedFeedId).execute();
  return { apiKey, appId: 'before-009', ownerId, clientId, deletedClientId, articleIds, deletedArticleId, issueId, categoryIds, deletedFeedId };
}

for (const dialect of DIALECTS) {
  describe(`009_ids_never_reused on a database with data made before it (${dialect})`, () => {
    let database: TestDatabase;
    let storage: Storage;
    let seeded: Seeded;
    let rowsBefore: Record<string, unknown[]>;
    let schemaBefore: Awaited<ReturnType<typeof schema>>;

    before(async () => {
      database = await createTestDatabase(dialect);
      storage = openStorage(database.url);
      await migrateUpTo(storage.db, storage.dialect, '008_search_unaccent');
      seeded = await seed(storage.db);
      rowsBefore = await snapshot(storage.db);
      schemaBefore = await schema(storage.db, dialect);
      const applied = await migrateUpTo(storage.db, storage.dialect, '009_ids_never_reused');
      assert.deepEqual(
        applied.map((result) => [result.migrationName, result.status]),
        [['009_ids_never_reused', 'Success']],
      );
    });
    after(async () => {
      await storage.close();
      await database.drop();
    });

    it('keeps every row of every table, with its id and every column', async () => {
      assert.deepEqual(await snapshot(storage.db), rowsBefore);
    });

    it('keeps every index, trigger and foreign key with its ON DELETE action; only AUTOINCREMENT is added (SQLite)', async () => {
      const after = await schema(storage.db, dialect);
      if (dialect === 'postgres') {
        assert.deepEqual(after, schemaBefore);
        return;
      }
      const before = schemaBefore as Extract<typeof schemaBefore, { objects: unknown }>;
      const now = after as typeof before;
      assert.deepEqual(now.foreignKeys, before.foreignKeys);
      const rebuilt = [
        'accounts',
        'users',
        'api_keys',
        'publications',
        'categories',
        'issues',
        'articles',
        'roles',
        'audit_log',
        'sign_in_failures',
        'rss_feeds',
        'feed_entries',
        'lead_jobs',
      ];
      const expected = before.objects.map((object) =>
        object.type === 'table' && rebuilt.includes(object.name)
          ? { ...object, sql: object.sql!.replace(/^(CREATE TABLE "\w+" \("\w+" integer primary key)/, '$1 autoincrement') }
          : object,
      );
      assert.deepEqual(now.objects, expected);
      for (const name of rebuilt) assert.match(now.objects.find((object) => object.name === name)!.sql!, / integer primary key autoincrement,/, name);
      // Foreign keys are enforced again, and every row's parent is there.
      assert.deepEqual((await sql`pragma foreign_keys`.execute(storage.db)).rows, [{ foreign_keys: 1 }]);
      assert.deepEqual((await sql`pragma foreign_key_check`.execute(storage.db)).rows, []);
      // The FTS5 index still matches the articles it indexes.
      await sql`insert into articles_fts(articles_fts) values ('integrity-check')`.execute(storage.db);
    });

    it('keeps search, counts, ON DELETE actions working, and gives new rows ids never given before', async () => {
      // The app runs on the latest schema: the migrations after 009 are applied on the migrated data first.
      await migrateToLatest(storage.db, storage.dialect);
      const config = loadConfig({ FEED_SCHEDULER: 'off', LEAD_WORKER: 'false', DATABASE_URL: database.url, LOG_LEVEL: 'silent' });
      const app = await buildApp({ config, storage, logRequests: false });
      try {
        const api = client(app, seeded.apiKey);
        const articles = `${PORTAL}/articles/${seeded.appId}`;
        const search = async (filter: string) => {
          const page = await api.get(`${articles}/page/1?filter=${encodeURIComponent(filter)}`);
          assert.equal(page.status, 200, page.raw);
          return (page.body.records as { id: number }[]).map((record) => record.id);
        };
        assert.deepEqual(await search('lisbon'), [seeded.articleIds[0]]);
        assert.deepEqual(await search('bridges'), [seeded.articleIds[1]]);
        assert.equal((await api.get(`${articles}/page/1`)).body.total, 3);
        const one = await api.get(`${articles}/${seeded.articleIds[0]}`);
        assert.equal(one.status, 200, one.raw);
        assert.equal(one.body.title, 'Lisbon in winter');

        // A new article: a new id, found by search, counted; deleted, and the next one gets another new id.
        const created = await api.post(articles, { title: 'Madeira in spring', info: 'Levadas' });
        assert.equal(created.status, 201, created.raw);
        // Above every id in use. An article deleted before the migration that nothing names any more is not known on
        // SQLite (its largest id was not kept then), so its id may be given once more; PostgreSQL's sequence has it.
        assert.ok(created.body.id > Math.max(...seeded.articleIds));
        if (dialect === 'postgres') assert.ok(created.body.id > seeded.deletedArticleId);
        assert.deepEqual(await search('levadas'), [created.body.id]);
        assert.equal((await api.get(`${articles}/page/1`)).body.total, 4);
        assert.equal((await api.delete(`${articles}/${created.body.id}`)).status, 204);
        assert.deepEqual(await search('levadas'), []);
        const again = await api.post(articles, { title: 'Azores' });
        assert.ok(again.body.id > created.body.id);
        assert.equal((await api.get(`${articles}/page/1`)).body.total, 4);
        // Edits reach the search index.
        assert.equal((await api.put(`${articles}/${seeded.articleIds[2]}`, { title: 'Airship days' })).status, 200);
        assert.deepEqual(await search('airship'), [seeded.articleIds[2]]);
        assert.deepEqual(await search('zeppelin'), []);

        // ON DELETE: an issue's articles lose it (set null); a category's links go (cascade).
        assert.equal((await api.delete(`${PORTAL}/issues/${seeded.appId}/${seeded.issueId}`)).status, 204);
        const unissued = await storage.db.selectFrom('articles').select('issue_id').where('id', '=', seeded.articleIds[0]!).executeTakeFirstOrThrow();
        assert.equal(unissued.issue_id, null);
        assert.equal((await api.delete(`${PORTAL}/categories/${seeded.appId}/${seeded.categoryIds[0]}`)).status, 204);
        const links = await storage.db.selectFrom('article_categories').select('article_id').execute();
        assert.deepEqual(links, [{ article_id: seeded.articleIds[1] }]);
        assert.deepEqual(await storage.db.selectFrom('rss_feed_categories').selectAll().execute(), []);

        // The client deleted before the migration is still named by the audit log: no new user gets its id.
        const newClient = await api.post(`${PORTAL}/clients/`, {
          email: 'new@before.example.com',
          firstname: 'New',
          lastname: 'Client',
          password: 'correct horse battery',
        });
        assert.equal(newClient.status, 201, newClient.raw);
        assert.ok(newClient.body.id > seeded.deletedClientId, `new client ${newClient.body.id}, deleted ${seeded.deletedClientId}`);
        // Deleting a client takes its keys and roles with it (cascade) and keeps its articles, unattributed (set null).
        assert.equal((await api.delete(`${PORTAL}/clients/${seeded.clientId}`)).status, 204);
        assert.deepEqual(await storage.db.selectFrom('api_keys').select('user_id').where('user_id', '=', seeded.clientId).execute(), []);
        assert.deepEqual(await storage.db.selectFrom('roles').select('user_id').where('user_id', '=', seeded.clientId).execute(), []);
        const unattributed = await storage.db
          .selectFrom('articles')
          .select('author_id')
          .where('id', '=', seeded.articleIds[0]!)
          .executeTakeFirstOrThrow();
        assert.equal(unattributed.author_id, null);

        // The feed deleted before the migration is still named by an article's rss_feed_id: no new feed gets its id.
        const at = new Date().toISOString();
        const feed = await (storage.db as Kysely<any>)
          .insertInto('rss_feeds')
          .values({
            publication_id: (await storage.db.selectFrom('publications').select('id').where('app_id', '=', seeded.appId).executeTakeFirstOrThrow())
              .id,
            url: 'https://before.example.com/new.xml',
            title: 'New',
            created_at: at,
            updated_at: at,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        assert.ok(feed.id > seeded.deletedFeedId, `new feed ${feed.id}, deleted ${seeded.deletedFeedId}`);
      } finally {
        await app.close();
      }
    });
  });
}

describe('tables made by any migration (sqlite)', () => {
  it('generate their integer keys with AUTOINCREMENT, except article_counts (keyed by a publication)', async () => {
    const storage = openStorage(':memory:');
    try {
      await migrateToLatest(storage.db, storage.dialect);
      const tables = (
        await sql<{
          name: string;
          sql: string;
        }>`select name, sql from sqlite_master where type = 'table' and name not like 'sqlite_%' and sql not like 'CREATE VIRTUAL%'`.execute(
          storage.db,
        )
      ).rows;
      const rowidKeys: string[] = [];
      for (const table of tables) {
        const key = (
          await sql<{ name: string; type: string; pk: number }>`select name, type, pk from pragma_table_info(${table.name})`.execute(storage.db)
        ).rows.filter((column) => column.pk > 0);
        // A single INTEGER PRIMARY KEY column is the rowid, which SQLite hands out itself.
        if (key.length === 1 && key[0]!.type.toLowerCase() === 'integer' && !/WITHOUT ROWID/i.test(table.sql)) rowidKeys.push(table.name);
      }
      assert.ok(rowidKeys.includes('articles'));
      for (const name of rowidKeys) {
        if (name === 'article_counts' || name.startsWith('articles_fts_')) continue;
        assert.match(
          tables.find((table) => table.name === name)!.sql,
          /integer primary key autoincrement/i,
          `${name}: make its id with primaryId() from src/db/migrations/columns.ts`,
        );
      }
    } finally {
      await storage.close();
    }
  });
});
