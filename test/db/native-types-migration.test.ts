import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { type Kysely, sql } from 'kysely';
import { SessionQueries } from '../../src/accounts/queries.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { type Dialect, openStorage, parseBool, parseTimestamptz, type Storage } from '../../src/db/connection.js';
import { migrateToLatest, migrateUpTo } from '../../src/db/migrate.js';
import { LeadQueries } from '../../src/leads/queries.js';
import { FeedQueries } from '../../src/portal/feeds/queries.js';
import { WebhookQueries } from '../../src/webhooks/queries.js';
import { client, createOwner, createPublication, createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/app.js';
import { PORTAL } from '../helpers/portal.js';
import { WEBHOOKS } from '../helpers/webhooks.js';

// 015_postgres_native_types: on PostgreSQL timestamps become timestamptz and 0/1 flags boolean; the API shows exactly
// what it showed before, and the same on both databases. On SQLite the migration does nothing.

/** Integer columns that hold numbers (ids, counts, sizes, codes), not 0/1 flags: any other integer column is a flag left behind. */
const NUMBER_COLUMNS = new Set([
  'accounts.id',
  'users.id',
  'users.account_id',
  'users.sign_in_count',
  'api_keys.id',
  'api_keys.user_id',
  'api_keys.impersonator_id',
  'publications.id',
  'publications.account_id',
  'categories.id',
  'categories.publication_id',
  'issues.id',
  'issues.publication_id',
  'articles.id',
  'articles.publication_id',
  'articles.issue_id',
  'articles.position',
  'articles.rss_feed_id',
  'articles.author_id',
  'article_categories.article_id',
  'article_categories.category_id',
  'article_counts.publication_id',
  'article_counts.total',
  'roles.id',
  'roles.user_id',
  'roles.publication_id',
  'audit_log.id',
  'audit_log.account_id',
  'audit_log.actor_id',
  'audit_log.impersonator_id',
  'audit_log.target_user_id',
  'sign_in_failures.id',
  'rss_feeds.id',
  'rss_feeds.publication_id',
  'rss_feeds.consecutive_failures',
  'rss_feeds.sync_interval_minutes',
  'rss_feed_categories.feed_id',
  'rss_feed_categories.category_id',
  'feed_entries.id',
  'feed_entries.feed_id',
  'feed_entries.article_id',
  'lead_templates.account_id',
  'lead_jobs.seq',
  'lead_jobs.account_id',
  'lead_jobs.user_id',
  'lead_jobs.attempts',
  'lead_jobs.batch_position',
  'lead_batches.account_id',
  'lead_batches.user_id',
  'lead_batches.total',
  'lead_batches.accepted',
  'idempotency_keys.account_id',
  'idempotency_keys.status_code',
  'lead_usage.account_id',
  'lead_usage.leads',
  'webhook_endpoints.id',
  'webhook_endpoints.account_id',
  'webhook_deliveries.id',
  'webhook_deliveries.endpoint_id',
  'webhook_deliveries.account_id',
  'webhook_deliveries.attempts',
  'webhook_deliveries.round_attempts',
  'webhook_deliveries.last_status_code',
  'webhook_deliveries.last_duration_ms',
  'webhook_attempts.id',
  'webhook_attempts.delivery_id',
  'webhook_attempts.status_code',
  'webhook_attempts.duration_ms',
]);

/** A column named as a time (`*_at`, `*_until`, `*_before`, `date`). */
const TIME_NAME = /(^date|_at|_until|_before)$/;

const FLAGS = [
  'articles.visible',
  'rss_feeds.active',
  'rss_feeds.import_source',
  'rss_feeds.import_author',
  'rss_feeds.auto_publish',
  'rss_feeds.show_related_articles',
  'lead_templates.is_default',
  'lead_jobs.run_async',
  'webhook_endpoints.enabled',
  'webhook_attempts.succeeded',
];

const JOB_DONE = '6f1d2f38-9f1e-4c1b-8d0a-1f2e3d4c5b6a';
const JOB_QUEUED = '7a2e3f49-0a2f-4d2c-9e1b-2a3f4e5d6c7b';
const JOB_HELD = '8b3f4a5a-1b3a-4e3d-8f2c-3b4a5f6e7d8c';
const BATCH = '9c4a5b6b-2c4b-4f4e-9a3d-4c5b6a7f8e9d';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

interface Seeded {
  apiKey: string;
  appId: string;
  articleIds: number[];
  issueId: number;
  feedId: number;
  endpointIds: number[];
  deliveryIds: number[];
}

/** Data in every converted column, written as the application wrote it before 015 (ISO 8601 text, 0/1). */
async function seed(storage: Storage): Promise<Seeded> {
  const db = storage.db as Kysely<any>;
  const owner = await createOwner(storage, 'pro');
  const publication = await createPublication(storage, owner.accountId, 'native-types');
  const id = async (table: string, values: Record<string, unknown>) =>
    (await db.insertInto(table).values(values).returning('id').executeTakeFirstOrThrow()).id as number;
  const at = '2026-11-25T10:36:01.123Z';
  const later = '2026-11-25T10:40:00.456Z';
  const stamps = { created_at: at, updated_at: later };
  const categoryId = await id('categories', { publication_id: publication.id, name: 'Travel', ...stamps });
  const issueId = await id('issues', { publication_id: publication.id, name: 'Winter', date: '2026-12-01T00:00:00.000Z', ...stamps });
  const feedId = await id('rss_feeds', {
    publication_id: publication.id,
    url: 'https://native.example.com/feed.xml',
    normalized_url: 'https://native.example.com/feed.xml',
    title: 'Native feed',
    active: 1,
    auto_publish: 1,
    import_source: 0,
    import_author: 1,
    show_related_articles: 1,
    job_id: 'b7a1c1e2-2f0a-4a57-9d6e-7a3c1b1f2e10',
    job_status: 'completed',
    job_started_at: '2026-11-25T09:00:00.001Z',
    imported_at: '2026-11-25T09:00:02.789Z',
    last_modified: 'Wed, 25 Nov 2026 08:59:00 GMT',
    next_sync_at: '2026-11-25T11:00:00.000Z',
    ...stamps,
  });
  await db.insertInto('rss_feed_categories').values({ feed_id: feedId, category_id: categoryId }).execute();
  const articleIds = [
    await id('articles', {
      publication_id: publication.id,
      title: 'Lisbon in winter',
      date: '2026-11-24T18:30:00.000Z',
      issue_id: issueId,
      visible: 0,
      ...stamps,
    }),
    await id('articles', {
      publication_id: publication.id,
      title: 'Porto by night',
      rss_feed_id: feedId,
      visible: 1,
      created_at: at,
      updated_at: at,
    }),
    // Year 1, as a date may be: the earliest the API takes.
    await id('articles', { publication_id: publication.id, title: 'Ancient', date: '0001-01-01T00:00:00.000Z', ...stamps }),
  ];
  await db.insertInto('article_categories').values({ article_id: articleIds[0], category_id: categoryId }).execute();
  await id('feed_entries', { feed_id: feedId, entry_key: 'guid:1', article_id: articleIds[1], content_hash: 'h', synced_at: at });
  await id('sign_in_failures', { scope: 'email:someone@native.example.com', failed_at: at });
  await db
    .insertInto('lead_templates')
    .values({
      id: '0b7e6f7c-2f0a-4a57-9d6e-7a3c1b1f2e10',
      account_id: owner.accountId,
      name: 'Intro',
      subject: 'Hi',
      body: 'Hello',
      is_default: 1,
      ...stamps,
    })
    .execute();
  await db
    .insertInto('lead_batches')
    .values({
      id: BATCH,
      account_id: owner.accountId,
      user_id: owner.userId,
      name: 'list.csv',
      total: 2,
      accepted: 2,
      not_accepted: '[]',
      created_at: at,
    })
    .execute();
  const job = { account_id: owner.accountId, user_id: owner.userId, first_name: 'Ada', last_name: 'Lovelace', domain: 'zeppelin.example.com' };
  // One row at a time: SQLite has no DEFAULT in a VALUES list, so Kysely would fill a row's missing columns with null.
  const jobs = [
    {
      ...job,
      id: JOB_DONE,
      batch_id: BATCH,
      batch_position: 1,
      email: 'ada@zeppelin.example.com',
      status: 'completed',
      email_subject: 'S',
      email_body: 'B',
      generator: 'builtin',
      created_at: at,
      updated_at: '2026-11-25T10:36:04.000Z',
      scraping_at: '2026-11-25T10:36:01.500Z',
      generating_at: '2026-11-25T10:36:02.250Z',
      sending_at: '2026-11-25T10:36:03.999Z',
      completed_at: '2026-11-25T10:36:04.000Z',
    },
    // Queued, its lease run out: the worker may take it.
    {
      ...job,
      id: JOB_QUEUED,
      batch_id: BATCH,
      batch_position: 2,
      email: 'bob@zeppelin.example.com',
      status: 'pending',
      run_async: 1,
      attempts: 1,
      lease_owner: 'x',
      lease_until: at,
      ...stamps,
    },
    // Queued, leased far ahead: held.
    {
      ...job,
      id: JOB_HELD,
      email: 'cy@zeppelin.example.com',
      status: 'scraping',
      run_async: 1,
      lease_owner: 'y',
      lease_until: '2999-01-01T00:00:00.000Z',
      ...stamps,
    },
  ];
  for (const values of jobs) await db.insertInto('lead_jobs').values(values).execute();
  await db.insertInto('lead_usage').values({ account_id: owner.accountId, month: '2026-11', leads: 3 }).execute();
  await db
    .insertInto('company_profiles')
    .values({ domain: 'zeppelin.example.com', profile: '{}', source: 'domain', fetched_at: at, expires_at: '2099-01-01T00:00:00.000Z' })
    .execute();
  await db
    .insertInto('idempotency_keys')
    .values({ account_id: owner.accountId, key: 'k1', request_hash: 'h', created_at: at, expires_at: '2026-11-26T10:36:01.123Z', renewed_at: later })
    .execute();
  const endpoint = { account_id: owner.accountId, events: '["lead.completed"]', secret: SECRET, ...stamps };
  const endpointIds = [
    await id('webhook_endpoints', {
      ...endpoint,
      url: 'https://hooks.native.example.com/a',
      enabled: 1,
      previous_secret: 'whsec_b2xkb2xkb2xkb2xkb2xkb2xkb2xkb2xk',
      previous_secret_until: '2026-11-26T10:36:01.123Z',
      failing_since: '2026-11-25T10:00:00.000Z',
    }),
    await id('webhook_endpoints', {
      ...endpoint,
      url: 'https://hooks.native.example.com/b',
      enabled: 0,
      disabled_reason: 'Disabled by Masthead',
      disabled_at: later,
    }),
  ];
  const delivery = {
    account_id: owner.accountId,
    event_type: 'lead.completed',
    payload: JSON.stringify({ type: 'lead.completed', timestamp: at, data: { job_id: JOB_DONE } }),
    ...stamps,
  };
  const deliveryIds = [
    // Due, on the enabled endpoint: the worker takes it.
    await id('webhook_deliveries', {
      ...delivery,
      endpoint_id: endpointIds[0],
      event_id: 'msg_1',
      status: 'pending',
      attempts: 1,
      round_attempts: 1,
      next_attempt_at: '2026-11-25T10:45:00.000Z',
      last_attempt_at: later,
      last_status_code: 500,
      last_duration_ms: 12,
    }),
    await id('webhook_deliveries', {
      ...delivery,
      endpoint_id: endpointIds[0],
      event_id: 'msg_2',
      status: 'succeeded',
      attempts: 1,
      last_attempt_at: later,
      last_status_code: 200,
      delivered_at: later,
    }),
    // Due, but its endpoint is disabled.
    await id('webhook_deliveries', { ...delivery, endpoint_id: endpointIds[1], event_id: 'msg_3', status: 'pending', next_attempt_at: at }),
  ];
  await id('webhook_attempts', {
    delivery_id: deliveryIds[0],
    attempted_at: later,
    status_code: 500,
    duration_ms: 12,
    error: 'HTTP 500',
    succeeded: 0,
  });
  await id('webhook_attempts', { delivery_id: deliveryIds[1], attempted_at: later, status_code: 200, duration_ms: 8, succeeded: 1 });
  return { apiKey: owner.apiKey, appId: publication.app_id, articleIds, issueId, feedId, endpointIds, deliveryIds };
}

/** What the API shows of the seeded data. */
async function apiView(app: FastifyInstance, seeded: Seeded): Promise<Record<string, unknown>> {
  const api = client(app, seeded.apiKey);
  const view: Record<string, unknown> = {};
  const read = async (name: string, url: string) => {
    const response = await api.get(url);
    assert.equal(response.status, 200, `${url}: ${response.raw}`);
    view[name] = response.body;
  };
  const articles = `${PORTAL}/articles/${seeded.appId}`;
  for (const id of seeded.articleIds) await read(`article ${id}`, `${articles}/${id}`);
  await read('articles by date', `${articles}/page/1?order_by=date&order_dir=asc`);
  await read('articles by created_at', `${articles}/page/1?order_by=created_at&order_dir=desc`);
  await read('issue', `${PORTAL}/issues/${seeded.appId}/${seeded.issueId}`);
  await read('feed', `${PORTAL}/rss_feeds/${seeded.appId}/${seeded.feedId}`);
  for (const id of [JOB_DONE, JOB_QUEUED, JOB_HELD]) await read(`job ${id}`, `/api/client/jobs/${id}`);
  await read('jobs', '/api/client/jobs');
  await read('batch', `/api/client/lead-batches/${BATCH}`);
  await read('batches', '/api/client/lead-batches');
  await read('webhooks', WEBHOOKS);
  for (const id of seeded.endpointIds) await read(`webhook ${id}`, `${WEBHOOKS}/${id}`);
  await read('deliveries', `${WEBHOOKS}/${seeded.endpointIds[0]}/deliveries`);
  for (const id of seeded.deliveryIds.slice(0, 2)) await read(`delivery ${id}`, `${WEBHOOKS}/${seeded.endpointIds[0]}/deliveries/${id}`);
  return view;
}

async function startApp(storage: Storage, url: string): Promise<FastifyInstance> {
  const config = loadConfig({ FEED_SCHEDULER: 'off', LEAD_WORKER: 'false', WEBHOOK_WORKER: 'false', DATABASE_URL: url, LOG_LEVEL: 'silent' });
  const app = await buildApp({ config, storage, logRequests: false });
  await app.ready();
  return app;
}

async function columnTypes(db: Kysely<any>) {
  return (
    await sql<{ name: string; data_type: string; column_default: string | null }>`
      select table_name || '.' || column_name as name, data_type, column_default from information_schema.columns
      where table_schema = current_schema() and table_name not like 'kysely_%' order by table_name, ordinal_position`.execute(db)
  ).rows;
}

/** The API's view of the seeded data on each database, after the migration. */
const views = new Map<Dialect, Record<string, unknown>>();

for (const dialect of DIALECTS) {
  describe(`015_postgres_native_types on a database with data made before it (${dialect})`, () => {
    let database: TestDatabase;
    let storage: Storage;
    let seeded: Seeded;
    let before015: Record<string, unknown>;
    let app: FastifyInstance;

    before(async () => {
      database = await createTestDatabase(dialect);
      storage = openStorage(database.url);
      await migrateUpTo(storage.db, storage.dialect, '014_lead_batches');
      seeded = await seed(storage);
      const old = await startApp(storage, database.url);
      try {
        before015 = await apiView(old, seeded);
      } finally {
        await old.close();
      }
      const applied = await migrateToLatest(storage.db, storage.dialect);
      assert.deepEqual(
        applied.map((result) => [result.migrationName, result.status]),
        [['015_postgres_native_types', 'Success']],
      );
      // A new process serves the migrated database (migrations run at start): statements the old one prepared on
      // its connections named the old column types. (An in-memory SQLite lives only as long as its connection.)
      if (dialect === 'postgres') {
        await storage.close();
        storage = openStorage(database.url);
      }
      app = await startApp(storage, database.url);
    });
    after(async () => {
      await app?.close();
      await storage?.close();
      await database?.drop();
    });

    it('leaves no timestamp as text and no flag as an integer (PostgreSQL); changes nothing on SQLite', async () => {
      if (dialect === 'sqlite') {
        const visible = (await sql<{ type: string }>`select type from pragma_table_info('articles') where name = 'visible'`.execute(storage.db)).rows;
        assert.deepEqual(visible, [{ type: 'INTEGER' }]);
        return;
      }
      const columns = await columnTypes(storage.db);
      const textTimes = columns.filter((column) => TIME_NAME.test(column.name.split('.')[1]!) && column.data_type !== 'timestamp with time zone');
      assert.deepEqual(textTimes, [], 'every time column is a timestamptz');
      const integers = columns.filter((column) => ['integer', 'bigint', 'smallint'].includes(column.data_type) && !NUMBER_COLUMNS.has(column.name));
      assert.deepEqual(integers, [], 'an integer column that is not a number (a 0/1 flag?): make it boolean, or list it in NUMBER_COLUMNS');
      const flags = columns.filter((column) => FLAGS.includes(column.name));
      assert.deepEqual(
        flags.map((column) => [column.name, column.data_type, column.column_default]),
        [
          ['articles.visible', 'boolean', 'true'],
          ['lead_jobs.run_async', 'boolean', 'false'],
          ['lead_templates.is_default', 'boolean', 'false'],
          ['rss_feeds.active', 'boolean', 'true'],
          ['rss_feeds.import_source', 'boolean', 'false'],
          ['rss_feeds.import_author', 'boolean', 'false'],
          ['rss_feeds.auto_publish', 'boolean', 'false'],
          ['rss_feeds.show_related_articles', 'boolean', 'false'],
          ['webhook_attempts.succeeded', 'boolean', null],
          ['webhook_endpoints.enabled', 'boolean', 'true'],
        ],
      );
      // Timestamp defaults are timestamps (the epoch of 004), and what is left as text is not a time.
      const defaults = columns.filter((column) => column.data_type === 'timestamp with time zone' && column.column_default !== null);
      assert.deepEqual(
        defaults.map((column) => [column.name, column.column_default]),
        [['rss_feeds.next_sync_at', "'1970-01-01 00:00:00+00'::timestamp with time zone"]],
      );
      assert.ok(columns.some((column) => column.name === 'rss_feeds.last_modified' && column.data_type === 'text'));
      const inserted = await (storage.db as Kysely<any>)
        .insertInto('rss_feeds')
        .values({
          publication_id: 1,
          url: 'https://d.example.com/',
          title: 'D',
          created_at: '2026-01-01T00:00:00.000Z',
          updated_at: '2026-01-01T00:00:00.000Z',
        })
        .returning(['next_sync_at', 'active', 'auto_publish'])
        .executeTakeFirstOrThrow();
      assert.deepEqual(inserted, { next_sync_at: '1970-01-01T00:00:00.000Z', active: 1, auto_publish: 0 });
      await storage.db.deleteFrom('rss_feeds').where('url', '=', 'https://d.example.com/').execute();
    });

    it('leaves no index, constraint or trigger comparing a flag with a number or a time with text (PostgreSQL)', async (t) => {
      if (dialect === 'sqlite') return t.skip('nothing changes on SQLite');
      const indexes = (
        await sql<{ indexname: string; indexdef: string }>`select indexname, indexdef from pg_indexes where schemaname = current_schema()`.execute(
          storage.db,
        )
      ).rows;
      const constraints = (
        await sql<{ name: string; definition: string }>`select conname as name, pg_get_constraintdef(oid) as definition from pg_constraint
          where connamespace = current_schema()::regnamespace and contype = 'c'`.execute(storage.db)
      ).rows;
      const flagNames = FLAGS.map((flag) => flag.split('.')[1]!);
      for (const { name, definition } of [...indexes.map((index) => ({ name: index.indexname, definition: index.indexdef })), ...constraints]) {
        for (const flag of flagNames) assert.doesNotMatch(definition, new RegExp(`\\b${flag}\\b\\)? *(=|<>) *[01]\\b`), name);
        assert.doesNotMatch(definition, /_at\)?::text/, name);
      }
      const partial = Object.fromEntries(
        indexes.filter((index) => / WHERE /.test(index.indexdef)).map((index) => [index.indexname, index.indexdef.split(' WHERE ')[1]]),
      );
      assert.deepEqual(partial, {
        lead_jobs_queue_idx: 'run_async',
        lead_templates_one_default: 'is_default',
        webhook_deliveries_due_idx: "(status = 'pending'::text)",
      });
      // The time-ordered indexes are on the converted columns.
      for (const name of ['articles_publication_date_idx', 'rss_feeds_next_sync_idx', 'idempotency_keys_expires_idx', 'webhook_deliveries_due_idx']) {
        assert.ok(indexes.some((index) => index.indexname === name));
      }
      // At most one default template per account still holds.
      const template = {
        account_id: 1,
        name: 'Second',
        subject: 'S',
        body: 'B',
        is_default: 1,
        created_at: '2026-01-01T00:00:00.000Z',
        updated_at: '2026-01-01T00:00:00.000Z',
      };
      await assert.rejects(
        (storage.db as Kysely<any>)
          .insertInto('lead_templates')
          .values({ id: 'second', ...template })
          .execute(),
        /lead_templates_one_default/,
      );
    });

    it('shows every timestamp and flag through the API exactly as before', async () => {
      const now = await apiView(app, seeded);
      assert.deepEqual(now, before015);
      views.set(dialect, now);
      // Spot checks of the shapes: the portal's timestamp, the lead API's ISO 8601, flags as booleans.
      const article = now[`article ${seeded.articleIds[0]}`] as Record<string, unknown>;
      assert.equal(article.date, '2026-11-24 18:30:00');
      assert.equal(article.created_at, '2026-11-25 10:36:01');
      assert.equal(article.visible, false);
      assert.equal((now[`article ${seeded.articleIds[2]}`] as Record<string, unknown>).date, '0001-01-01 00:00:00');
      assert.equal((now.feed as Record<string, unknown>).imported_at, '2026-11-25 09:00:02');
      assert.equal((now.feed as Record<string, unknown>).auto_publish, true);
      const job = now[`job ${JOB_DONE}`] as Record<string, unknown>;
      assert.match(JSON.stringify(job), /2026-11-25T10:36:01\.123Z/);
      assert.match(JSON.stringify(now[`webhook ${seeded.endpointIds[1]}`]), /"enabled":false/);
      assert.equal((now.batch as { batch: { created_at: string } }).batch.created_at, '2026-11-25T10:36:01.123Z');
    });

    it('reads rows as before: ISO 8601 text with milliseconds, flags as 0/1', async () => {
      const row = await storage.db
        .selectFrom('lead_jobs')
        .select(['created_at', 'scraping_at', 'lease_until', 'run_async'])
        .where('id', '=', JOB_QUEUED)
        .executeTakeFirstOrThrow();
      assert.deepEqual(row, { created_at: '2026-11-25T10:36:01.123Z', scraping_at: null, lease_until: '2026-11-25T10:36:01.123Z', run_async: 1 });
      const usage = await storage.db.selectFrom('lead_usage').select(['month', 'leads']).executeTakeFirstOrThrow();
      assert.deepEqual(usage, { month: '2026-11', leads: 3 });
    });

    it('keeps time ranges and time order: leases, due deliveries, due feeds, the sign-in window', async () => {
      const leads = new LeadQueries(storage.db, storage.dialect);
      const plans = { free: 5, pro: 5, business: 5 };
      const candidates = await leads.queueCandidates('2026-11-25T12:00:00.000Z', plans, 10);
      assert.deepEqual(
        candidates.map((candidate) => candidate.id),
        [JOB_QUEUED],
      );
      assert.deepEqual(await leads.queueCandidates('2026-11-25T10:36:01.123Z', plans, 10), [], 'a lease ending exactly now still holds');
      const claimed = await leads.claimJobs([JOB_QUEUED, JOB_HELD], 'me', '2026-11-25T12:00:00.000Z', '2026-11-25T12:05:00.000Z');
      assert.deepEqual(
        claimed.map((job) => [job.id, job.lease_until, job.run_async]),
        [[JOB_QUEUED, '2026-11-25T12:05:00.000Z', 1]],
      );

      const webhooks = new WebhookQueries(storage.db, storage.dialect);
      assert.deepEqual(await webhooks.claimDue('w', '2026-11-25T10:44:59.999Z', '2026-11-25T10:46:00.000Z', 10), []);
      const due = await webhooks.claimDue('w', '2026-11-25T10:45:00.000Z', '2026-11-25T10:46:00.000Z', 10);
      assert.deepEqual(
        due.map((delivery) => [delivery.id, delivery.next_attempt_at, delivery.lease_until]),
        [[seeded.deliveryIds[0], '2026-11-25T10:45:00.000Z', '2026-11-25T10:46:00.000Z']],
      );

      const stale = '2026-11-25T00:00:00.000Z';
      const feedQueries = new FeedQueries(storage.db, storage.dialect);
      assert.deepEqual(await feedQueries.claimDue('2026-11-25T10:59:59.999Z', stale, 10), []);
      const feeds = await feedQueries.claimDue('2026-11-25T11:00:00.000Z', stale, 10);
      assert.deepEqual(
        feeds.map((feed) => [feed.id, feed.job_started_at, feed.active]),
        [[seeded.feedId, '2026-11-25T11:00:00.000Z', 1]],
      );

      const sessions = new SessionQueries(storage.db, storage.dialect);
      const scopes = { email: 'email:someone@native.example.com', ip: 'ip:192.0.2.1', maxPerEmail: 2, maxPerIp: 10 };
      assert.ok(
        await sessions.countAttempt(scopes, '2026-11-25T10:50:00.000Z', '2026-11-25T10:36:01.123Z'),
        'the seeded attempt is not after the window start',
      );
      assert.equal(
        await sessions.countAttempt(scopes, '2026-11-25T10:51:00.000Z', '2026-11-25T10:36:01.122Z'),
        undefined,
        'two attempts in the window',
      );
      const counted = await sessions.countedAttempts([scopes.email], '2026-11-25T10:00:00.000Z');
      assert.deepEqual(
        counted.map((attempt) => attempt.failed_at),
        ['2026-11-25T10:36:01.123Z', '2026-11-25T10:50:00.000Z'],
      );
    });
  });
}

describe('015_postgres_native_types: the API shows the same data the same way on both databases', () => {
  it('answers identically on SQLite and PostgreSQL', (t) => {
    if (!views.has('postgres')) return t.skip('TEST_POSTGRES_URL is not set');
    assert.deepEqual(views.get('postgres'), views.get('sqlite'));
  });
});

describe('PostgreSQL timestamps and booleans read back as SQLite gives them', () => {
  it('gives ISO 8601 UTC text with milliseconds, whatever the session time zone', () => {
    assert.equal(parseTimestamptz('2026-11-25 10:36:01.123+00'), '2026-11-25T10:36:01.123Z');
    assert.equal(parseTimestamptz('2026-11-25 10:36:01+00'), '2026-11-25T10:36:01.000Z');
    assert.equal(parseTimestamptz('2026-11-25 10:36:01.1+00'), '2026-11-25T10:36:01.100Z');
    assert.equal(parseTimestamptz('2026-11-25 10:36:01.123999+00'), '2026-11-25T10:36:01.123Z');
    assert.equal(parseTimestamptz('2026-11-25 16:21:01.123+05:45'), '2026-11-25T10:36:01.123Z');
    assert.equal(parseTimestamptz('2026-11-25 05:36:01.123-05'), '2026-11-25T10:36:01.123Z');
    assert.equal(parseTimestamptz('0001-01-01 00:00:00+00'), '0001-01-01T00:00:00.000Z');
    assert.equal(parseTimestamptz('9999-12-31 23:59:59.999+00'), '9999-12-31T23:59:59.999Z');
    assert.equal(parseBool('t'), 1);
    assert.equal(parseBool('f'), 0);
  });

  it('reads the same under another session time zone (PostgreSQL)', async (t) => {
    if (!DIALECTS.includes('postgres')) return t.skip('TEST_POSTGRES_URL is not set');
    const database = await createTestDatabase('postgres');
    const url = new URL(database.url);
    url.searchParams.set('options', `${url.searchParams.get('options')} -c TimeZone=Asia/Kathmandu`);
    const storage = openStorage(url.toString());
    try {
      await migrateToLatest(storage.db, storage.dialect);
      const zone = (await sql<{ zone: string }>`select current_setting('TimeZone') as zone`.execute(storage.db)).rows[0]?.zone;
      assert.equal(zone, 'Asia/Kathmandu');
      const at = '2026-11-25T23:59:59.999Z';
      await (storage.db as Kysely<any>)
        .insertInto('accounts')
        .values({ name: 'Zone', plan: 'free', created_at: at, updated_at: '0001-01-01T00:00:00.000Z' })
        .execute();
      const row = await storage.db.selectFrom('accounts').select(['created_at', 'updated_at']).executeTakeFirstOrThrow();
      assert.deepEqual(row, { created_at: at, updated_at: '0001-01-01T00:00:00.000Z' });
      const found = await storage.db.selectFrom('accounts').select('id').where('created_at', '=', at).execute();
      assert.equal(found.length, 1);
    } finally {
      await storage.close();
      await database.drop();
    }
  });
});
