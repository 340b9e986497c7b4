// A dropped PostgreSQL connection (a restart, a failover, a proxy reaping connections) costs some retryable 503s,
// never the process: the broken connection is discarded, the next query opens a new one, and the background work
// (feed scheduler, lead worker) goes on. The faults are real: the test's own backends are terminated with
// pg_terminate_backend (found by an application_name no other test uses), and a TCP proxy in front of PostgreSQL
// cuts, refuses or stalls connections. An unhandled 'error' event would end this test process itself.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openStorage, type Storage } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import {
  client,
  createOwner,
  createPublication,
  createTestDatabase,
  expectError,
  POSTGRES_URL,
  type Response,
  startApp,
  type TestApp,
  type TestDatabase,
} from '../helpers/app.js';
import { chatAnswer, companyHome, LEADS, lead, serveCompany, siteEnv, waitForJob } from '../helpers/leads.js';
import { type LocalServer, startLocalServer } from '../helpers/local-server.js';
import { PORTAL } from '../helpers/portal.js';
import { startTcpProxy, type TcpProxy, terminateBackends } from '../helpers/db-faults.js';
import { feedServer, rss, serveFeed } from '../portal/feeds/fixtures.js';

const skip = POSTGRES_URL ? false : 'needs TEST_POSTGRES_URL';

async function backendCount(applicationName: string): Promise<number> {
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  try {
    return (await admin.query('select count(*)::int as n from pg_stat_activity where application_name = $1', [applicationName])).rows[0].n;
  } finally {
    await admin.end();
  }
}

/** Retries `check` until it holds (the pool reconnects on the next query) or `timeoutMs` passes. */
async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await sleep(50);
  }
}

function expectUnavailable(response: Response): void {
  expectError(response, 503, 'unavailable');
  assert.ok(Number(response.headers['retry-after']) >= 1, 'a 503 says when to retry');
}

const applicationName = () => `masthead-test-${randomBytes(4).toString('hex')}`;

describe('PostgreSQL connections dropped under the service', { skip }, () => {
  describe("pg_terminate_backend on the service's connections", () => {
    let t: TestApp;
    let name: string;
    let api: ReturnType<typeof client>;
    let articles: string;
    let site: LocalServer;
    let llm: LocalServer;
    let feeds: Awaited<ReturnType<typeof feedServer>>;

    before(async () => {
      name = applicationName();
      site = await startLocalServer();
      llm = await startLocalServer();
      llm.routes.set('/v1/chat/completions', (_request, response) =>
        chatAnswer(response, JSON.stringify({ subject: 'Hello', body: 'Hi Ada, a short note.' })),
      );
      feeds = await feedServer();
      feeds.routes.set(
        '/feed.xml',
        serveFeed(() =>
          rss([
            { guid: 'a', title: 'First post' },
            { guid: 'b', title: 'Second post' },
          ]),
        ),
      );
      t = await startApp('postgres', {
        ...siteEnv(site, { OUTBOUND_ALLOW: `${site.hostPort},127.0.0.1:${feeds.port}` }),
        DATABASE_APPLICATION_NAME: name,
        LLM_BASE_URL: `${llm.base}/v1`,
        // Both background loops run, and the lead worker polls the database all the time.
        FEED_SCHEDULER: 'on',
        LEAD_WORKER_POLL_MS: '20',
        PLAN_BUSINESS_RPM: '100000',
      });
      const owner = await createOwner(t.storage, 'business');
      const publication = await createPublication(t.storage, owner.accountId);
      api = client(t.app, owner.apiKey);
      articles = `${PORTAL}/articles/${publication.app_id}`;
      for (let index = 0; index < 5; index += 1) assert.equal((await api.post(articles, { title: `Before ${index}` })).status, 201);
    });
    after(async () => {
      await t?.close();
      await Promise.all([site?.close(), llm?.close(), feeds?.close()]);
    });

    it('terminated twice under concurrent requests: some requests get a retryable 503, none a 500, and the service answers again', async () => {
      const statuses: number[] = [];
      const unexpected: string[] = [];
      let running = true;
      const worker = async (index: number) => {
        for (let round = 0; running; round += 1) {
          const response =
            round % 3 === 0
              ? await api.post(articles, { title: `Load ${index}-${round}`, html: '<p>Body</p>' })
              : await api.get(`${articles}/page/1?per_page=5`);
          statuses.push(response.status);
          if (response.status === 503) expectUnavailable(response);
          else if (response.status !== 200 && response.status !== 201) unexpected.push(`${response.status} ${response.raw.slice(0, 200)}`);
        }
      };
      const load = Array.from({ length: 8 }, (_, index) => worker(index));
      // Counted, not timed: each round terminates while requests are being answered, however slow the machine.
      const answered = (more: number) => {
        const target = statuses.length + more;
        return eventually(`${more} more answers`, async () => statuses.length >= target, 30_000);
      };
      await answered(16);
      const first = await terminateBackends(name);
      await answered(16);
      const second = await terminateBackends(name);
      await answered(16);
      running = false;
      await Promise.all(load);

      assert.ok(first > 0 && second > 0, `both rounds terminated connections of the service (${first}, ${second})`);
      assert.deepEqual(unexpected, [], 'only 2xx and 503 answers');
      await eventually('a page read', async () => (await api.get(`${articles}/page/1`)).status === 200);
      assert.equal((await api.post(articles, { title: 'After' })).status, 201);
      assert.equal((await client(t.app).get('/readyz')).status, 200);
    });

    it('a request running on the dropped connection gets a 503 in the error shape, and nothing half-written', async () => {
      // The request waits on a row lock held by another session (not the service's), so it is surely running on its
      // connection when that connection is terminated.
      const admin = new pg.Client({ connectionString: t.config.databaseUrl });
      await admin.connect();
      try {
        const target = (await api.post(articles, { title: 'Locked' })).body.id as number;
        await admin.query('begin');
        await admin.query('select id from articles where id = $1 for update', [target]);
        const pending = api.put(`${articles}/${target}`, { title: 'Changed while locked' });
        await eventually('the update to wait on the lock', async () => {
          const waiting = await admin.query(
            "select count(*)::int as n from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'",
            [name],
          );
          return waiting.rows[0].n > 0;
        });
        assert.ok((await terminateBackends(name)) > 0);
        expectUnavailable(await pending);
        await admin.query('rollback');
        const stored = await api.get(`${articles}/${target}`);
        assert.equal(stored.status, 200);
        assert.equal(stored.body.title, 'Locked', 'the cut-off update left nothing behind');
      } finally {
        await admin.end();
      }
    });

    it('the lead worker and the feed scheduler keep running after their connections are terminated', async () => {
      await eventually('the service to be connected', async () => (await backendCount(name)) > 0);
      assert.ok((await terminateBackends(name)) > 0);
      await sleep(100);
      assert.ok((await terminateBackends(name)) > 0, 'the worker had connected again');

      serveCompany(site, 'zeppelin-works.com', companyHome({ name: 'Zeppelin Works', description: 'We build airships.', product: 'Airships' }));
      let queued: Response | undefined;
      await eventually('a lead to be accepted', async () => {
        queued = await api.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'), { prefer: 'respond-async' });
        return queued.status === 202;
      });
      const job = await waitForJob(api, queued!.body.jobId);
      assert.equal(job.status, 'completed', JSON.stringify(job));

      const created = await api.post(`${PORTAL}/rss_feeds/${articles.split('/').pop()}`, { url: `${feeds.base}/feed.xml` });
      assert.equal(created.status, 201, created.raw);
      const feedPath = `${PORTAL}/rss_feeds/${articles.split('/').pop()}/${created.body.id}`;
      await terminateBackends(name);
      await eventually(
        'a synchronize to be queued',
        async () => (await api.post(`${feedPath}/synchronize`, {}, { prefer: 'respond-async' })).status === 202,
      );
      await eventually('the scheduler to run it', async () => {
        const feed = await api.get(feedPath);
        return feed.status === 200 && feed.body.job_status === 'completed';
      });
      const imported = await api.get(`${articles}/page/1?filter=post`);
      assert.equal(imported.body.total, 2);
    });
  });

  describe('PostgreSQL behind a proxy that cuts, refuses and stalls connections', () => {
    let database: TestDatabase;
    let proxy: TcpProxy;
    let app: FastifyInstance;
    let storage: Storage;
    let api: ReturnType<typeof client>;
    let articles: string;

    before(async () => {
      database = await createTestDatabase('postgres');
      const upstream = new URL(POSTGRES_URL!);
      proxy = await startTcpProxy({ host: upstream.hostname, port: Number(upstream.port || 5432) });
      const url = new URL(database.url);
      url.port = String(proxy.port);
      const config = loadConfig({ DATABASE_URL: url.toString(), DATABASE_CONNECT_TIMEOUT_MS: '1000', FEED_SCHEDULER: 'off', LOG_LEVEL: 'silent' });
      storage = openStorage(config.databaseUrl, config.postgresPool);
      await migrateToLatest(storage.db, storage.dialect);
      app = await buildApp({ config, storage, logRequests: false });
      await app.ready();
      const owner = await createOwner(storage);
      const publication = await createPublication(storage, owner.accountId);
      api = client(app, owner.apiKey);
      articles = `${PORTAL}/articles/${publication.app_id}`;
    });
    after(async () => {
      await app?.close();
      await storage?.close();
      await proxy?.close();
      await database?.drop();
    });

    it('every connection cut at once: 503s at most, then answers again', async () => {
      assert.equal((await api.post(articles, { title: 'One' })).status, 201);
      const inFlight = Array.from({ length: 6 }, () => api.get(`${articles}/page/1`));
      proxy.cutAll();
      for (const response of await Promise.all(inFlight)) {
        if (response.status !== 200) expectUnavailable(response);
      }
      await eventually('a page read', async () => (await api.get(`${articles}/page/1`)).status === 200);
    });

    it('the database down: requests and /readyz answer 503 at once; back up: both recover', async () => {
      await proxy.down();
      expectUnavailable(await api.get(`${articles}/page/1`));
      expectUnavailable(await api.post(articles, { title: 'While down' }));
      const ready = await client(app).get('/readyz');
      assert.equal(ready.status, 503);
      assert.equal(ready.body.status, 'database unreachable');

      await proxy.up();
      await eventually('/readyz', async () => (await client(app).get('/readyz')).status === 200);
      assert.equal((await api.post(articles, { title: 'Back' })).status, 201);
      const titles = (await api.get(articles)).body.map((article: { title: string }) => article.title);
      assert.ok(!titles.includes('While down'), 'a refused write was not stored');
    });

    it('a database that accepts connections and never answers: 503 after the connect timeout, /readyz 503, never a hung request', async () => {
      // Connections already open still work through the proxy; new ones stall. Drop the open ones first.
      proxy.stall(true);
      proxy.cutAll();
      const started = performance.now();
      expectUnavailable(await api.get(`${articles}/page/1`));
      // The point is a bound (a hung request never answers): ten times DATABASE_CONNECT_TIMEOUT_MS, for a loaded machine.
      assert.ok(performance.now() - started < 10_000, 'bounded by DATABASE_CONNECT_TIMEOUT_MS, not hung');
      assert.equal((await client(app).get('/readyz')).status, 503);

      proxy.stall(false);
      proxy.cutAll();
      await eventually('a page read', async () => (await api.get(`${articles}/page/1`)).status === 200);
      assert.equal((await client(app).get('/readyz')).status, 200);
    });
  });
});

describe('SQLite locked by another process for longer than busy_timeout', () => {
  it('a write answers a retryable 503 instead of a 500, and succeeds once the lock is gone', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'masthead-locked-'));
    const config = loadConfig({ DATABASE_URL: join(folder, 'locked.sqlite'), FEED_SCHEDULER: 'off', LOG_LEVEL: 'silent' });
    const storage = openStorage(config.databaseUrl, config.postgresPool);
    const other = new SQLite(config.databaseUrl);
    try {
      await migrateToLatest(storage.db, storage.dialect);
      const app = await buildApp({ config, storage, logRequests: false });
      try {
        const owner = await createOwner(storage);
        const publication = await createPublication(storage, owner.accountId);
        const api = client(app, owner.apiKey);
        const articles = `${PORTAL}/articles/${publication.app_id}`;
        // A backup, a migration or a sqlite3 shell holding the write lock.
        other.exec('begin immediate');
        expectUnavailable(await api.post(articles, { title: 'While locked' }));
        other.exec('rollback');
        assert.equal((await api.post(articles, { title: 'After' })).status, 201);
      } finally {
        await app.close();
      }
    } finally {
      other.close();
      await storage.close();
      await rm(folder, { recursive: true, force: true });
    }
  });
});
