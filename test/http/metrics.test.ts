import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { client, createOwner, createPublication, DIALECTS, expectError, startApp, type TestApp } from '../helpers/app.js';
import { companyHome, LEADS, lead, serveCompany, siteEnv } from '../helpers/leads.js';
import { type LocalServer, startLocalServer } from '../helpers/local-server.js';
import { PORTAL } from '../helpers/portal.js';
import { feedServer, rss, serveFeed } from '../portal/feeds/fixtures.js';

const TOKEN = 'a-metrics-token-of-32-characters';

/** Scrapes /metrics and returns the samples as `name{labels}` -> value (the text format, line by line). */
async function scrape(test: TestApp, token = TOKEN): Promise<Map<string, number>> {
  const response = await test.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(response.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  const samples = new Map<string, number>();
  for (const line of response.body.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{.*\})?) (\S+)$/.exec(line);
    assert.ok(match, `not a sample line: ${line}`);
    samples.set(match[1]!, Number(match[2]));
  }
  return samples;
}

describe('GET /metrics when METRICS is off (the default)', () => {
  let test: TestApp;
  before(async () => {
    test = await startApp('sqlite');
  });
  after(() => test.close());

  it('is a 404 like any unknown route', async () => {
    expectError(await client(test.app).get('/metrics'), 404, 'not_found');
  });
});

for (const dialect of DIALECTS) {
  describe(`GET /metrics (${dialect})`, () => {
    let site: LocalServer;
    let feeds: Awaited<ReturnType<typeof feedServer>>;
    let test: TestApp;

    before(async () => {
      site = await startLocalServer();
      feeds = await feedServer();
      serveCompany(site, 'zeppelin-works.com', companyHome({ name: 'Zeppelin Works', description: 'Airships.', product: 'Airships' }));
      test = await startApp(
        dialect,
        siteEnv(site, {
          METRICS: 'on',
          METRICS_TOKEN: TOKEN,
          PLAN_FREE_RPM: '2',
          PLAN_PRO_MONTHLY_LEADS: '1',
          OUTBOUND_ALLOW: `${site.hostPort},127.0.0.1:${feeds.port}`,
        }),
      );
    });
    after(async () => {
      await test.close();
      await site.close();
      await feeds.close();
    });

    it('needs the token: 401 in the error shape without it or with another one', async () => {
      const without = await client(test.app).get('/metrics');
      expectError(without, 401, 'unauthorized');
      assert.equal(without.headers['www-authenticate'], 'Bearer realm="metrics"');
      expectError(await client(test.app).get('/metrics', { authorization: `Bearer ${TOKEN}x` }), 401, 'unauthorized');
      expectError(await client(test.app).get('/metrics', { authorization: TOKEN }), 401, 'unauthorized');
    });

    it('counts requests by route template and status, never by the raw URL', async () => {
      const owner = await createOwner(test.storage);
      const api = client(test.app, owner.apiKey);
      const { app_id: appId } = await createPublication(test.storage, owner.accountId);
      assert.equal((await api.get(`${PORTAL}/articles/${appId}/999999`)).status, 404);
      assert.equal((await api.get(`${PORTAL}/articles/${appId}`)).status, 200);
      await api.get('/no-such-address-here');
      const samples = await scrape(test);
      const route = `${PORTAL}/articles/:app_id`;
      assert.equal(samples.get(`masthead_http_requests_total{method="GET",route="${route}",status="200"}`), 1);
      assert.equal(samples.get(`masthead_http_requests_total{method="GET",route="${route}/:id",status="404"}`), 1);
      assert.equal(samples.get(`masthead_http_request_duration_seconds_count{method="GET",route="${route}",status="200"}`), 1);
      assert.ok((samples.get('masthead_http_requests_total{method="GET",route="unmatched",status="404"}') ?? 0) >= 1);
      assert.ok(![...samples.keys()].some((name) => name.includes(appId) || name.includes('no-such-address')));
      assert.ok(samples.has('nodejs_eventloop_lag_p99_seconds'));
      assert.ok(samples.has('nodejs_eventloop_lag_max_seconds'));
    });

    it(dialect === 'postgres' ? 'reports the connection pool' : 'reports no pool on SQLite', async () => {
      const samples = await scrape(test);
      if (dialect === 'postgres') {
        assert.ok((samples.get('masthead_db_pool_connections{state="idle"}') ?? -1) >= 0);
        assert.ok((samples.get('masthead_db_pool_connections{state="in_use"}') ?? -1) >= 0);
        assert.equal(samples.get('masthead_db_pool_waiting_queries'), 0);
        assert.equal(samples.get('masthead_db_pool_max_connections'), 10);
      } else {
        assert.ok(![...samples.keys()].some((name) => name.startsWith('masthead_db_pool')));
      }
    });

    it('counts feed synchronizations by outcome: a server answering 500 is a failed one', async () => {
      const owner = await createOwner(test.storage);
      const api = client(test.app, owner.apiKey);
      const { app_id: appId } = await createPublication(test.storage, owner.accountId);
      let broken = false;
      const serve = serveFeed(() => rss([{ title: 'One', link: 'https://blog.example.com/one', guid: 'one' }]));
      feeds.routes.set('/metrics-feed.xml', (request, response) => (broken ? response.writeHead(500).end('down') : serve(request, response)));
      const created = await api.post(`${PORTAL}/rss_feeds/${appId}`, { url: `${feeds.base}/metrics-feed.xml` });
      assert.equal(created.status, 201, created.raw);
      const ok = await api.post(`${PORTAL}/rss_feeds/${appId}/${created.body.id}/synchronize`);
      assert.equal(ok.body.job_status, 'completed', ok.raw);
      broken = true;
      const failed = await api.post(`${PORTAL}/rss_feeds/${appId}/${created.body.id}/synchronize`);
      assert.equal(failed.body.job_status, 'failed', failed.raw);
      const samples = await scrape(test);
      assert.equal(samples.get('masthead_feed_syncs_total{outcome="ok"}'), 1);
      assert.equal(samples.get('masthead_feed_syncs_total{outcome="failed"}'), 1);
      assert.equal(samples.get('masthead_feed_sync_duration_seconds_count{outcome="failed"}'), 1);
    });

    it('counts lead jobs by final status, and the requests a minute refused', async () => {
      const owner = await createOwner(test.storage);
      const api = client(test.app, owner.apiKey);
      const completed = await api.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'));
      assert.equal(completed.status, 200, completed.raw);
      const rejected = await api.post(`${LEADS}/process-lead`, lead('ada@gmail.com'));
      assert.equal(rejected.status, 200, rejected.raw);
      assert.equal(rejected.body.success, false);
      expectError(await api.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com')), 429, 'rate_limited');
      const samples = await scrape(test);
      assert.equal(samples.get('masthead_lead_jobs_total{status="completed"}'), 1);
      assert.equal(samples.get('masthead_lead_jobs_total{status="rejected"}'), 1);
      assert.equal(samples.get('masthead_lead_job_duration_seconds_count{status="completed"}'), 1);
      assert.equal(samples.get('masthead_rate_limit_refusals_total{reason="requests_per_minute"}'), 1);
    });

    it('counts the monthly quota refused', async () => {
      const owner = await createOwner(test.storage, 'pro');
      const api = client(test.app, owner.apiKey);
      const before = (await scrape(test)).get('masthead_rate_limit_refusals_total{reason="monthly_quota"}') ?? 0;
      assert.equal((await api.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'))).status, 200);
      expectError(await api.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com')), 429, 'quota_exceeded');
      assert.equal((await scrape(test)).get('masthead_rate_limit_refusals_total{reason="monthly_quota"}'), before + 1);
    });
  });
}
