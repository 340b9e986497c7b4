import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.js';

/** Fails unless loading this one variable stops with one clear ConfigError line that names it. */
function expectConfigError(variable: string, value: string) {
  assert.throws(
    () => loadConfig({ [variable]: value }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, `${variable}=${value}: expected a ConfigError, got ${String(error)}`);
      assert.doesNotMatch(error.message, /\n/);
      assert.ok(error.message.includes(variable), `the message names ${variable}: ${error.message}`);
      return true;
    },
  );
}

describe('loadConfig', () => {
  it("defaults every setting as DESIGN.md's table says", () => {
    assert.deepEqual(loadConfig({}), {
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: './data/masthead.sqlite',
      postgresPool: { size: 10, connectTimeoutMs: 5000, idleTimeoutMs: 30000, applicationName: 'masthead', statementTimeoutMs: 30000 },
      redisUrl: undefined,
      outboundAllow: [],
      companySiteUrl: 'https://{domain}/',
      llm: { baseUrl: undefined, apiKey: undefined, model: undefined },
      logLevel: 'info',
      trustProxy: false,
      allowSignup: true,
      smtpUrl: undefined,
      mailFrom: 'Masthead <masthead@localhost>',
      leads: {
        plans: {
          free: { requestsPerMinute: 10, monthlyLeads: 100, concurrentLeads: 5 },
          pro: { requestsPerMinute: 120, monthlyLeads: 5_000, concurrentLeads: 50 },
          business: { requestsPerMinute: 600, monthlyLeads: 50_000, concurrentLeads: 200 },
        },
        checkMx: false,
        companyCacheTtlHours: 168,
        redisKeyPrefix: 'masthead:',
        worker: true,
        workerPollMs: 1000,
      },
      feeds: { scheduler: true, syncIntervalMinutes: 60 },
      http: { headersTimeoutSeconds: 60, requestTimeoutSeconds: 60, keepAliveTimeoutSeconds: 75 },
      webhooks: { worker: true, pollMs: 1000, disableAfterDays: 5 },
      metrics: { enabled: false, token: undefined },
    });
  });

  it('reads every setting from the environment', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://masthead:secret@db.internal:5432/masthead',
      REDIS_URL: 'redis://cache.internal:6379/0',
      OUTBOUND_ALLOW: '127.0.0.1:8081, Localhost:9000,[::1]:80',
      COMPANY_SITE_URL: 'http://127.0.0.1:8081/sites/{domain}/',
      LLM_BASE_URL: 'http://127.0.0.1:11434/v1',
      LLM_API_KEY: 'sk-test',
      LLM_MODEL: 'llama3',
      LOG_LEVEL: 'debug',
      TRUST_PROXY: '10.0.0.0/8, loopback',
      ALLOW_SIGNUP: 'false',
      SMTP_URL: 'smtp://user:pass@mail.internal:587',
      MAIL_FROM: 'Sales <sales@example.com>',
      PLAN_FREE_RPM: '5',
      PLAN_FREE_MONTHLY_LEADS: '50',
      PLAN_PRO_RPM: '100',
      PLAN_PRO_MONTHLY_LEADS: '1000',
      PLAN_BUSINESS_RPM: '1000',
      PLAN_BUSINESS_MONTHLY_LEADS: '100000',
      CHECK_MX: 'true',
      COMPANY_CACHE_TTL_HOURS: '24',
      PLAN_FREE_CONCURRENCY: '3',
      PLAN_PRO_CONCURRENCY: '5',
      PLAN_BUSINESS_CONCURRENCY: '5',
      REDIS_KEY_PREFIX: 'prod:',
      LEAD_WORKER: 'off',
      LEAD_WORKER_POLL_MS: '250',
      FEED_SCHEDULER: 'off',
      FEED_SYNC_INTERVAL_MINUTES: '15',
      HTTP_HEADERS_TIMEOUT_SECONDS: '10',
      HTTP_REQUEST_TIMEOUT_SECONDS: '300',
      HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: '65',
      DATABASE_POOL_SIZE: '4',
      DATABASE_CONNECT_TIMEOUT_MS: '2500',
      DATABASE_IDLE_TIMEOUT_MS: '60000',
      DATABASE_APPLICATION_NAME: 'masthead-eu-1',
      DATABASE_STATEMENT_TIMEOUT_MS: '0',
      WEBHOOK_WORKER: 'off',
      WEBHOOK_WORKER_POLL_MS: '500',
      WEBHOOK_DISABLE_AFTER_DAYS: '3',
    });
    assert.deepEqual(config, {
      port: 8080,
      host: '0.0.0.0',
      databaseUrl: 'postgres://masthead:secret@db.internal:5432/masthead',
      postgresPool: { size: 4, connectTimeoutMs: 2500, idleTimeoutMs: 60000, applicationName: 'masthead-eu-1', statementTimeoutMs: 0 },
      redisUrl: 'redis://cache.internal:6379/0',
      outboundAllow: ['127.0.0.1:8081', 'localhost:9000', '[::1]:80'],
      companySiteUrl: 'http://127.0.0.1:8081/sites/{domain}/',
      llm: { baseUrl: 'http://127.0.0.1:11434/v1', apiKey: 'sk-test', model: 'llama3' },
      logLevel: 'debug',
      trustProxy: ['10.0.0.0/8', 'loopback'],
      allowSignup: false,
      smtpUrl: 'smtp://user:pass@mail.internal:587',
      mailFrom: 'Sales <sales@example.com>',
      leads: {
        plans: {
          free: { requestsPerMinute: 5, monthlyLeads: 50, concurrentLeads: 3 },
          pro: { requestsPerMinute: 100, monthlyLeads: 1000, concurrentLeads: 5 },
          business: { requestsPerMinute: 1000, monthlyLeads: 100_000, concurrentLeads: 5 },
        },
        checkMx: true,
        companyCacheTtlHours: 24,
        redisKeyPrefix: 'prod:',
        worker: false,
        workerPollMs: 250,
      },
      feeds: { scheduler: false, syncIntervalMinutes: 15 },
      http: { headersTimeoutSeconds: 10, requestTimeoutSeconds: 300, keepAliveTimeoutSeconds: 65 },
      webhooks: { worker: false, pollMs: 500, disableAfterDays: 3 },
      metrics: { enabled: false, token: undefined },
    });
  });

  it("HTTP_*_TIMEOUT_SECONDS are whole seconds from 1 to 3600, the headers' at most the request's", () => {
    // A shorter request timeout alone shortens the headers' too (they are part of the request).
    assert.deepEqual(loadConfig({ HTTP_REQUEST_TIMEOUT_SECONDS: '30' }).http, {
      headersTimeoutSeconds: 30,
      requestTimeoutSeconds: 30,
      keepAliveTimeoutSeconds: 75,
    });
    assert.deepEqual(loadConfig({ HTTP_REQUEST_TIMEOUT_SECONDS: '600' }).http.headersTimeoutSeconds, 60);
    assert.equal(loadConfig({ HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: '1' }).http.keepAliveTimeoutSeconds, 1);
    for (const name of ['HTTP_HEADERS_TIMEOUT_SECONDS', 'HTTP_REQUEST_TIMEOUT_SECONDS', 'HTTP_KEEP_ALIVE_TIMEOUT_SECONDS']) {
      // 60000 is milliseconds written for seconds.
      for (const value of ['0', '-1', '1.5', 'soon', '60000']) expectConfigError(name, value);
    }
    assert.throws(
      () => loadConfig({ HTTP_HEADERS_TIMEOUT_SECONDS: '120', HTTP_REQUEST_TIMEOUT_SECONDS: '60' }),
      (error: unknown) =>
        error instanceof ConfigError &&
        /HTTP_HEADERS_TIMEOUT_SECONDS \(120\) must not be longer than HTTP_REQUEST_TIMEOUT_SECONDS \(60\)/.test(error.message),
    );
  });

  it('takes a SQLite path, :memory: or a postgresql:// URL as DATABASE_URL', () => {
    for (const url of ['/var/lib/masthead/db.sqlite', 'relative.sqlite', ':memory:', 'postgresql://localhost/masthead']) {
      assert.equal(loadConfig({ DATABASE_URL: url }).databaseUrl, url);
    }
  });

  it('METRICS is off unless on; METRICS_TOKEN is 16 or more printable characters without spaces', () => {
    assert.deepEqual(loadConfig({ METRICS: 'on', METRICS_TOKEN: 'abcdefghijklmnop' }).metrics, { enabled: true, token: 'abcdefghijklmnop' });
    assert.equal(loadConfig({ METRICS: 'off' }).metrics.enabled, false);
    expectConfigError('METRICS', 'sometimes');
    for (const value of ['short', 'sixteen chars with spaces', 'sixteen-chars-é-not-ascii']) expectConfigError('METRICS_TOKEN', value);
  });

  it("ALLOW_SIGNUP turns the dashboard's sign-up on (the default) or off, and refuses anything else", () => {
    assert.equal(loadConfig({}).allowSignup, true);
    assert.equal(loadConfig({ ALLOW_SIGNUP: '' }).allowSignup, true);
    for (const value of ['true', 'TRUE', '1', 'on', 'yes']) assert.equal(loadConfig({ ALLOW_SIGNUP: value }).allowSignup, true, value);
    for (const value of ['false', 'False', '0', 'off', 'no']) assert.equal(loadConfig({ ALLOW_SIGNUP: value }).allowSignup, false, value);
    for (const value of ['maybe', 'disabled', '2']) expectConfigError('ALLOW_SIGNUP', value);
  });

  it('TRUST_PROXY believes no proxy (the default), any, a number of hops, or the addresses and ranges listed', () => {
    for (const value of ['', 'false', 'off', '0']) assert.equal(loadConfig({ TRUST_PROXY: value }).trustProxy, false, value);
    for (const value of ['true', 'on']) assert.equal(loadConfig({ TRUST_PROXY: value }).trustProxy, true, value);
    assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2);
    assert.deepEqual(loadConfig({ TRUST_PROXY: '127.0.0.1,::1, 172.16.0.0/12,uniquelocal' }).trustProxy, [
      '127.0.0.1',
      '::1',
      '172.16.0.0/12',
      'uniquelocal',
    ]);
    for (const value of ['proxy.internal', '10.0.0.0/33', '127.0.0.1,,::1', 'maybe']) expectConfigError('TRUST_PROXY', value);
  });

  it('FEED_SCHEDULER turns background feed synchronization on (the default) or off; FEED_SYNC_INTERVAL_MINUTES is 1 to 10080', () => {
    for (const value of ['on', 'true', '1']) assert.equal(loadConfig({ FEED_SCHEDULER: value }).feeds.scheduler, true, value);
    for (const value of ['off', 'false', '0']) assert.equal(loadConfig({ FEED_SCHEDULER: value }).feeds.scheduler, false, value);
    assert.equal(loadConfig({ FEED_SYNC_INTERVAL_MINUTES: '1' }).feeds.syncIntervalMinutes, 1);
    assert.equal(loadConfig({ FEED_SYNC_INTERVAL_MINUTES: '10080' }).feeds.syncIntervalMinutes, 10_080);
    for (const value of ['sometimes', 'disabled']) expectConfigError('FEED_SCHEDULER', value);
    for (const value of ['0', '-5', '1.5', 'hourly', '10081']) expectConfigError('FEED_SYNC_INTERVAL_MINUTES', value);
  });

  it('accepts PORT 0 and 65535', () => {
    assert.equal(loadConfig({ PORT: '0' }).port, 0);
    assert.equal(loadConfig({ PORT: '65535' }).port, 65535);
  });

  it('stops on a bad value with one line that names the variable', () => {
    for (const [variable, value] of [
      ['PORT', 'abc'],
      ['PORT', '70000'],
      ['PORT', '-1'],
      ['PORT', '80.5'],
      ['HOST', '  '],
      ['LOG_LEVEL', 'loud'],
      ['DATABASE_URL', 'mysql://x'],
      ['DATABASE_URL', ''],
      ['REDIS_URL', 'http://cache:6379'],
      ['REDIS_URL', 'not a url'],
      ['OUTBOUND_ALLOW', 'nonsense'],
      ['OUTBOUND_ALLOW', '127.0.0.1:99999'],
      ['LLM_BASE_URL', 'ftp://x'],
      ['LLM_BASE_URL', 'not a url'],
      ['COMPANY_SITE_URL', 'https://example.com/'],
      ['COMPANY_SITE_URL', 'ftp://{domain}/'],
      ['PLAN_FREE_RPM', '0'],
      ['PLAN_PRO_MONTHLY_LEADS', 'lots'],
      ['COMPANY_CACHE_TTL_HOURS', '1.5'],
      ['CHECK_MX', 'maybe'],
      ['LEAD_WORKER', 'sometimes'],
      ['SMTP_URL', 'http://mail:25'],
      ['DATABASE_POOL_SIZE', '0'],
      ['DATABASE_CONNECT_TIMEOUT_MS', 'soon'],
      ['DATABASE_IDLE_TIMEOUT_MS', '-1'],
      ['DATABASE_APPLICATION_NAME', ' '],
      ['DATABASE_STATEMENT_TIMEOUT_MS', '-5'],
      ['DATABASE_STATEMENT_TIMEOUT_MS', '1e3'],
    ] as const) {
      expectConfigError(variable, value);
    }
  });
});
