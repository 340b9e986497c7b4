import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../../src/app.js';
import { openStorage, type Storage } from '../../../src/db/connection.js';
import type { RssFeedRow } from '../../../src/db/types.js';
import { client, createOwner, createPublication, DIALECTS, expectError, startApp, type TestApp } from '../../helpers/app.js';
import { PORTAL } from '../../helpers/portal.js';
import { feedServer, type FeedServer, type Handler, type Item, rss, serveFeed } from './fixtures.js';

// Background synchronization: which feeds are due, when each is due next, back-off and deactivation, queued
// (Prefer: respond-async) runs, leases across instances, and the timer loop's start and stop.

const MINUTE = 60_000;

/** Minutes from `from` to the feed's next_sync_at. */
function minutesUntil(row: RssFeedRow, from: number): number {
  return (Date.parse(row.next_sync_at) - from) / MINUTE;
}

function assertAbout(actual: number, expected: number, message: string): void {
  assert.ok(Math.abs(actual - expected) < 0.5, `${message}: expected about ${expected}, got ${actual}`);
}

let counter = 0;

for (const dialect of DIALECTS) {
  describe(`feed scheduler (${dialect})`, () => {
    let server: FeedServer;
    let t: TestApp;
    let api: ReturnType<typeof client>;
    let appId: string;

    before(async () => {
      server = await feedServer();
      t = await startApp(dialect, { OUTBOUND_ALLOW: `127.0.0.1:${server.port}` });
      const owner = await createOwner(t.storage);
      appId = (await createPublication(t.storage, owner.accountId)).app_id;
      api = client(t.app, owner.apiKey);
    });
    after(async () => {
      await t.close();
      await server.close();
    });

    const feeds = (id?: number) => `${PORTAL}/rss_feeds/${appId}${id === undefined ? '' : `/${id}`}`;
    const row = (id: number) => t.storage.db.selectFrom('rss_feeds').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const requestsTo = (path: string) => server.requests.filter((request) => request.path === path).length;

    /** A feed served at a path of its own (the handler may be replaced later); created through the API. */
    async function createFeed(handler: Handler, body: Record<string, unknown> = {}) {
      const path = `/scheduled-${++counter}.xml`;
      server.routes.set(path, handler);
      const created = await api.post(feeds(), { url: `${server.base}${path}`, ...body });
      assert.equal(created.status, 201, created.raw);
      return { id: created.body.id as number, path };
    }

    /** Makes every feed but these not due, so that a runDue touches only the feeds of the test. */
    async function onlyDue(ids: number[]) {
      await t.storage.db.updateTable('rss_feeds').set({ next_sync_at: '2999-01-01T00:00:00.000Z' }).where('id', 'not in', ids).execute();
    }

    it('synchronizes due active feeds (new feeds are due at once), not inactive or later ones', async () => {
      const due = await createFeed(serveFeed(() => rss([{ guid: 'd1', title: 'Due one' }])));
      const inactive = await createFeed(
        serveFeed(() => rss([{ guid: 'i1', title: 'Inactive' }])),
        { active: false },
      );
      const later = await createFeed(serveFeed(() => rss([{ guid: 'l1', title: 'Later' }])));
      await onlyDue([due.id, inactive.id, later.id]);
      await t.storage.db
        .updateTable('rss_feeds')
        .set({ next_sync_at: new Date(Date.now() + 5 * MINUTE).toISOString() })
        .where('id', '=', later.id)
        .execute();
      assert.equal((await row(due.id)).job_status, 'pending', 'a new feed waits for its first import');

      const runs = await t.app.feedScheduler.runDue();
      assert.deepEqual(
        runs.map((run) => run.feedId),
        [due.id],
      );
      assert.equal(runs[0]!.result.job_status, 'completed');
      assert.equal(runs[0]!.result.imported, 1);
      const synced = await row(due.id);
      assert.equal(synced.job_status, 'completed');
      assert.equal(synced.job_id, runs[0]!.result.job_id);
      assert.match(synced.job_id!, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.ok(synced.imported_at);
      assert.equal((await t.storage.db.selectFrom('articles').select('id').where('rss_feed_id', '=', due.id).execute()).length, 1);
      assert.equal((await row(inactive.id)).job_status, 'pending');
      assert.equal((await row(later.id)).job_status, 'pending');
      assert.deepEqual(await t.app.feedScheduler.runDue(), [], 'nothing is due twice');

      // Five minutes on, the later feed is due; the synchronized one is not (an hour).
      const ahead = await t.app.feedScheduler.runDue(new Date(Date.now() + 6 * MINUTE));
      assert.deepEqual(
        ahead.map((run) => run.feedId),
        [later.id],
      );
    });

    it('schedules the next sync an interval on, sooner for a feed that posts often, never sooner than its TTL or cache headers allow', async () => {
      const now = Date.now();
      const recent = (minutesAgo: number) => new Date(now - minutesAgo * MINUTE).toUTCString();
      const rarely: Item[] = [
        { guid: 'r1', title: 'Old', date: recent(3 * 24 * 60) },
        { guid: 'r2', title: 'Older', date: recent(5 * 24 * 60) },
      ];
      // 400 posts ten minutes apart: 400 in the last week, one every 25 minutes on average.
      const often: Item[] = Array.from({ length: 400 }, (_, i) => ({ guid: `o${i}`, title: `Post ${i}`, date: recent(10 * i + 1) }));
      const withHeaders =
        (headers: Record<string, string>, body: string): Handler =>
        (_request, response) => {
          response.writeHead(200, { 'content-type': 'application/rss+xml', ...headers }).end(body);
        };
      const cases: [label: string, handler: Handler, minutes: number][] = [
        ['rarely', serveFeed(() => rss(rarely)), 60],
        ['often', serveFeed(() => rss(often)), 25],
        ['often, with <ttl>180</ttl>', serveFeed(() => rss(often).replace('<channel>', '<channel><ttl>180</ttl>')), 180],
        ['a <ttl> of a year, capped at a day', serveFeed(() => rss(rarely).replace('<channel>', '<channel><ttl>525600</ttl>')), 24 * 60],
        ['often, Cache-Control max-age=7200', withHeaders({ 'cache-control': 'public, max-age=7200' }, rss(often)), 120],
        ['often, max-age but no-cache', withHeaders({ 'cache-control': 'no-cache, max-age=7200' }, rss(often)), 25],
        [
          'often, Expires in 90 minutes',
          withHeaders({ date: new Date(now).toUTCString(), expires: new Date(now + 90 * MINUTE).toUTCString() }, rss(often)),
          90,
        ],
      ];
      const created = [];
      for (const [label, handler, minutes] of cases) created.push({ label, minutes, ...(await createFeed(handler)) });
      await onlyDue(created.map((feed) => feed.id));
      const startedAt = Date.now();
      const runs = await t.app.feedScheduler.runDue();
      assert.equal(runs.length, cases.length);
      for (const feed of created) {
        const stored = await row(feed.id);
        assert.equal(stored.job_status, 'completed', `${feed.label}: ${stored.last_error}`);
        assertAbout(minutesUntil(stored, startedAt), feed.minutes, feed.label);
      }

      // A 304 keeps the interval the content asked for last time.
      const often304 = created[1]!;
      server.routes.set(often304.path, (_request, response) => response.writeHead(304).end());
      const clock = new Date(Date.parse((await row(often304.id)).next_sync_at));
      const before304 = Math.max(Date.now(), clock.getTime());
      const again = await t.app.feedScheduler.runDue(clock);
      assert.ok(again.some((run) => run.feedId === often304.id && run.result.not_modified));
      assertAbout(minutesUntil(await row(often304.id), before304), 25, 'after a 304');
    });

    it('backs off exponentially after failures, deactivates after 10 in a row, and starts afresh when switched on again', async () => {
      const failing = await createFeed(serveFeed(() => rss([])));
      await onlyDue([failing.id]);
      server.routes.set(failing.path, (_request, response) => response.writeHead(500).end('down'));
      let clock = new Date();
      const waits: number[] = [];
      for (let failure = 1; failure <= 10; failure++) {
        const from = Math.max(Date.now(), clock.getTime());
        const runs = await t.app.feedScheduler.runDue(clock);
        assert.equal(runs.length, 1, `run ${failure}`);
        assert.equal(runs[0]!.result.job_status, 'failed');
        const stored = await row(failing.id);
        assert.equal(stored.consecutive_failures, failure);
        waits.push(Math.round(minutesUntil(stored, from)));
        clock = new Date(Date.parse(stored.next_sync_at));
      }
      assert.deepEqual(waits, [60, 120, 240, 480, 960, 1440, 1440, 1440, 1440, 1440]);
      const stored = await row(failing.id);
      assert.equal(stored.active, 0);
      assert.match(stored.last_error!, /HTTP 500.*deactivated after 10 failed synchronizations in a row/);
      assert.deepEqual(await t.app.feedScheduler.runDue(new Date(Date.now() + 365 * 24 * 60 * MINUTE)), [], 'an inactive feed is not run');
      const view = (await api.get(feeds(failing.id))).body;
      assert.equal(view.active, false);
      assert.match(view.last_error, /deactivated/);

      // Switched on again: due at once, with a clean count; a success resets it too.
      server.routes.set(
        failing.path,
        serveFeed(() => rss([{ guid: 'back', title: 'Back' }])),
      );
      assert.equal((await api.put(feeds(failing.id), { active: true })).status, 200);
      const restarted = await row(failing.id);
      assert.equal(restarted.consecutive_failures, 0);
      assert.ok(Date.parse(restarted.next_sync_at) <= Date.now());
      const runs = await t.app.feedScheduler.runDue();
      assert.equal(runs[0]!.result.job_status, 'completed');
      assert.equal((await row(failing.id)).last_error, null);
    });

    it('honours 429 and 503 Retry-After: no fetch before it, manual synchronize answers 429 with Retry-After', async () => {
      const limited = await createFeed(serveFeed(() => rss([{ guid: 'x', title: 'X' }])));
      await onlyDue([limited.id]);
      server.routes.set(limited.path, (_request, response) => response.writeHead(429, { 'retry-after': '7200' }).end('slow down'));
      const startedAt = Date.now();
      const failed = await api.post(`${feeds(limited.id)}/synchronize`);
      assert.equal(failed.status, 200, failed.raw);
      assert.equal(failed.body.job_status, 'failed');
      assert.match(failed.body.errors[0], /HTTP 429 \(too many requests\) and asked to wait 7200 s/);
      const stored = await row(limited.id);
      assert.ok(minutesUntil(stored, startedAt) >= 120, 'the next sync is not before Retry-After');
      assert.ok(Date.parse(stored.retry_not_before!) >= startedAt + 7200 * 1000);

      const requestsBefore = requestsTo(limited.path);
      const refused = await api.post(`${feeds(limited.id)}/synchronize`);
      const problem = expectError(refused, 429, 'rate_limited');
      assert.match(problem.message, /asked not to be fetched before/);
      const retryAfter = Number(refused.headers['retry-after']);
      assert.ok(retryAfter > 7100 && retryAfter <= 7200, `Retry-After ${retryAfter}`);
      expectError(await api.post(`${feeds(limited.id)}/synchronize`, {}, { prefer: 'respond-async' }), 429, 'rate_limited');
      // Not even a queued run or a schedule running ahead of time fetches it: only past Retry-After.
      assert.deepEqual(await t.app.feedScheduler.runDue(new Date(Date.now() + 119 * MINUTE)), []);
      assert.equal(requestsTo(limited.path), requestsBefore, 'nothing reached the server');

      // 503 with an HTTP date works the same way, through the scheduler.
      server.routes.set(limited.path, (_request, response) =>
        response.writeHead(503, { 'retry-after': new Date(Date.now() + 3 * 60 * MINUTE).toUTCString() }).end('maintenance'),
      );
      const afterLimit = new Date(Date.parse(stored.next_sync_at) + 1000);
      const runs = await t.app.feedScheduler.runDue(afterLimit);
      assert.match(runs[0]!.result.errors[0]!, /HTTP 503 \(unavailable\) and asked to wait/);
      const after503 = await row(limited.id);
      assert.ok(Date.parse(after503.next_sync_at) >= Date.now() + 179 * MINUTE);
      assert.equal(after503.consecutive_failures, 2);
    });

    it('queues a synchronize with Prefer: respond-async (202, pending) and runs it on the next pass, even for an inactive feed', async () => {
      const queued = await createFeed(
        serveFeed(() =>
          rss([
            { guid: 'q1', title: 'Queued one' },
            { guid: 'q2', title: 'Queued two' },
          ]),
        ),
        { active: false },
      );
      await onlyDue([queued.id]);
      const before = requestsTo(queued.path);
      const accepted = await api.post(`${feeds(queued.id)}/synchronize`, {}, { prefer: 'respond-async, wait=5' });
      assert.equal(accepted.status, 202, accepted.raw);
      assert.equal(accepted.headers['preference-applied'], 'respond-async');
      assert.equal(accepted.headers.location, feeds(queued.id), 'where the outcome will show');
      assert.equal(accepted.body.job_status, 'pending');
      assert.match(accepted.body.job_id, /^[0-9a-f-]{36}$/);
      assert.equal(accepted.body.imported, 0);
      const view = (await api.get(feeds(queued.id))).body;
      assert.equal(view.job_status, 'pending');
      assert.equal(view.job_id, accepted.body.job_id);
      assert.equal(requestsTo(queued.path), before, 'nothing was fetched yet');

      // Asking again while it waits gives the same job.
      const again = await api.post(`${feeds(queued.id)}/synchronize`, {}, { prefer: 'respond-async' });
      assert.equal(again.status, 202);
      assert.equal(again.body.job_id, accepted.body.job_id);

      const runs = await t.app.feedScheduler.runDue();
      assert.deepEqual(
        runs.map((run) => [run.feedId, run.result.job_id, run.result.imported]),
        [[queued.id, accepted.body.job_id, 2]],
      );
      const done = (await api.get(feeds(queued.id))).body;
      assert.equal(done.job_status, 'completed');
      assert.equal(done.job_id, accepted.body.job_id);
      assert.equal(done.active, false, 'a manual run does not switch the feed on');
      assert.equal((await row(queued.id)).queued_at, null);
      assert.deepEqual(await t.app.feedScheduler.runDue(), [], 'inactive and no longer queued');

      // While a run holds the feed, queueing is a 409 like a synchronize.
      await t.storage.db
        .updateTable('rss_feeds')
        .set({ job_status: 'running', job_started_at: new Date().toISOString() })
        .where('id', '=', queued.id)
        .execute();
      expectError(await api.post(`${feeds(queued.id)}/synchronize`, {}, { prefer: 'respond-async' }), 409, 'conflict');
      await t.storage.db.updateTable('rss_feeds').set({ job_status: 'completed' }).where('id', '=', queued.id).execute();
      // Without the preference (or with another one) the synchronize runs inline as before.
      const inline = await api.post(`${feeds(queued.id)}/synchronize`, {}, { prefer: 'return=minimal' });
      assert.equal(inline.status, 200);
      assert.equal(inline.body.job_status, 'completed');
    });

    it('runs each due feed once when passes overlap, and takes over a run cut off long ago', async () => {
      const slow: Handler = (request, response) =>
        setTimeout(() => serveFeed(() => rss([{ guid: 'c', title: 'Concurrent' }]))(request, response), 30);
      const created = [];
      for (let i = 0; i < 10; i++) created.push(await createFeed(slow));
      await onlyDue(created.map((feed) => feed.id));
      server.requests.length = 0;
      const [first, second] = await Promise.all([t.app.feedScheduler.runDue(), t.app.feedScheduler.runDue()]);
      const ran = [...first!, ...second!].map((run) => run.feedId).sort((a, b) => a - b);
      assert.deepEqual(
        ran,
        created.map((feed) => feed.id),
      );
      for (const feed of created) assert.equal(requestsTo(feed.path), 1, feed.path);

      // A run left 'running' by a crash 11 minutes ago is taken over; one started a minute ago is not.
      const [crashed, busy] = created;
      const due = { next_sync_at: new Date(Date.now() - MINUTE).toISOString(), job_status: 'running' as const };
      await t.storage.db
        .updateTable('rss_feeds')
        .set({ ...due, job_started_at: new Date(Date.now() - 11 * MINUTE).toISOString() })
        .where('id', '=', crashed!.id)
        .execute();
      await t.storage.db
        .updateTable('rss_feeds')
        .set({ ...due, job_started_at: new Date(Date.now() - MINUTE).toISOString() })
        .where('id', '=', busy!.id)
        .execute();
      const runs = await t.app.feedScheduler.runDue();
      assert.deepEqual(
        runs.map((run) => run.feedId),
        [crashed!.id],
      );
    });
  });

  describe(`feed scheduler loop (${dialect})`, () => {
    let server: FeedServer;
    let t: TestApp;

    before(async () => {
      server = await feedServer();
      t = await startApp(dialect, { OUTBOUND_ALLOW: `127.0.0.1:${server.port}`, FEED_SCHEDULER: 'on', FEED_SYNC_INTERVAL_MINUTES: '15' });
    });
    after(async () => {
      await t.close();
      await server.close();
    });

    it('runs on its own when on: a queued synchronize completes without a test calling it; close waits for the run', async () => {
      const owner = await createOwner(t.storage);
      const appId = (await createPublication(t.storage, owner.accountId)).app_id;
      const api = client(t.app, owner.apiKey);
      let release: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let fetches = 0;
      server.routes.set('/loop.xml', (request, response) => {
        fetches += 1;
        // The first fetch (create) answers at once; the scheduled one waits for the gate.
        const answer = () => serveFeed(() => rss([{ guid: 'loop', title: 'Looped' }]))(request, response);
        if (fetches === 1) answer();
        else void gate.then(answer);
      });
      const created = await api.post(`${PORTAL}/rss_feeds/${appId}`, { url: `${server.base}/loop.xml` });
      assert.equal(created.status, 201, created.raw);
      const accepted = await api.post(`${PORTAL}/rss_feeds/${appId}/${created.body.id}/synchronize`, {}, { prefer: 'respond-async' });
      assert.equal(accepted.status, 202);
      const deadline = Date.now() + 10_000;
      while (fetches < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(fetches, 2, 'the scheduler fetched the feed by itself');
      const running = await t.storage.db.selectFrom('rss_feeds').selectAll().where('id', '=', created.body.id).executeTakeFirstOrThrow();
      assert.equal(running.job_status, 'running');

      // Stopping waits for the run in progress, which then completes normally.
      const stopped = t.app.feedScheduler.stop();
      setTimeout(release, 50);
      await stopped;
      const done = await t.storage.db.selectFrom('rss_feeds').selectAll().where('id', '=', created.body.id).executeTakeFirstOrThrow();
      assert.equal(done.job_status, 'completed');
      assert.equal(done.job_id, accepted.body.job_id);
      // FEED_SYNC_INTERVAL_MINUTES=15: the next sync is a quarter of an hour on.
      assertAbout((Date.parse(done.next_sync_at) - Date.parse(done.job_started_at!)) / MINUTE, 15, 'the configured interval');
    });
  });
}

describe('feed scheduler: two instances on one PostgreSQL', { skip: !DIALECTS.includes('postgres') && 'TEST_POSTGRES_URL is not set' }, () => {
  let server: FeedServer;
  let t: TestApp;
  let secondStorage: Storage;
  let second: FastifyInstance;

  before(async () => {
    server = await feedServer();
    t = await startApp('postgres', { OUTBOUND_ALLOW: `127.0.0.1:${server.port}` });
    // Another Masthead on the same schema: its own storage (connection pool), services and scheduler.
    secondStorage = openStorage(t.config.databaseUrl);
    second = await buildApp({ config: t.config, storage: secondStorage, logRequests: false });
    await second.ready();
  });
  after(async () => {
    await second.close();
    await secondStorage.close();
    await t.close();
    await server.close();
  });

  it('synchronizes each due feed exactly once when both instances pass at the same time', async () => {
    const owner = await createOwner(t.storage);
    const appId = (await createPublication(t.storage, owner.accountId)).app_id;
    const api = client(t.app, owner.apiKey);
    const ids: number[] = [];
    const paths: string[] = [];
    for (let i = 0; i < 24; i++) {
      const path = `/shared-${i}.xml`;
      // A little latency, so that both instances are busy claiming and running at once.
      server.routes.set(path, (request, response) =>
        setTimeout(() => serveFeed(() => rss([{ guid: `s${i}`, title: `Shared ${i}` }]))(request, response), 20),
      );
      const created = await api.post(`${PORTAL}/rss_feeds/${appId}`, { url: `${server.base}${path}` });
      assert.equal(created.status, 201, created.raw);
      ids.push(created.body.id);
      paths.push(path);
    }
    // Three rounds (all due again each time): a lease that lets a feed through twice shows up within them.
    for (let round = 1; round <= 3; round++) {
      server.requests.length = 0;
      await t.storage.db
        .updateTable('rss_feeds')
        .set({ next_sync_at: new Date(Date.now() - 1000).toISOString() })
        .where('id', 'in', ids)
        .execute();
      const [mine, theirs] = await Promise.all([t.app.feedScheduler.runDue(), second.feedScheduler.runDue()]);
      const ran = [...mine!, ...theirs!].map((run) => run.feedId);
      assert.equal(ran.length, ids.length, `round ${round}: every feed ran once in all`);
      assert.deepEqual(
        [...ran].sort((a, b) => a - b),
        ids,
      );
      assert.ok(mine!.length > 0 && theirs!.length > 0, `both instances took a share (${mine!.length} and ${theirs!.length})`);
      for (const path of paths) assert.equal(server.requests.filter((request) => request.path === path).length, 1, `round ${round}: ${path}`);
    }
    const articles = await t.storage.db.selectFrom('articles').select('rss_feed_id').where('rss_feed_id', 'in', ids).execute();
    assert.equal(articles.length, ids.length, 'one article per feed, none twice');
  });
});
