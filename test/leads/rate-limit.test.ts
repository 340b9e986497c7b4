import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { client, createOwner, DIALECTS, expectError, startApp, type TestApp } from '../helpers/app.js';
import { companyHome, LEADS, lead, serveCompany, siteEnv, startInstances } from '../helpers/leads.js';
import { type LocalServer, startLocalServer } from '../helpers/local-server.js';
import { createClientUser } from '../helpers/roles.js';

const REDIS_URL = process.env.TEST_REDIS_URL;

/** A port of 127.0.0.1 nothing listens on (taken, then given back). */
async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A TCP relay to Redis that the test can cut, as when Redis goes away under a running instance. */
async function startRelay(target: URL) {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    sockets.add(socket).add(upstream);
    socket.pipe(upstream).pipe(socket);
    const end = () => {
      socket.destroy();
      upstream.destroy();
    };
    socket.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}${target.pathname}`,
    async cut() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
if (process.env.CI === 'true' && !REDIS_URL) throw new Error('CI must run the Redis tests: set TEST_REDIS_URL');

/**
 * The bound of the tests that wait for Redis: for an instance's connection to come up, or (with Redis out of reach) for
 * an app whose requests or close would wait for it forever. Either fails the test after this rather than hangs it.
 */
const REDIS_TIMEOUT = { timeout: 60_000 };

/**
 * Waits until `instance` counts in Redis. On a loaded machine its connection may still be coming up, and requests
 * meanwhile are counted in its memory, as designed: a throwaway account's request is sent until it shows in Redis.
 */
async function untilCountingInRedis(instance: Pick<TestApp, 'app' | 'storage'>, keyPrefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL!);
  try {
    for (;;) {
      const probe = await createOwner(instance.storage);
      await client(instance.app, probe.apiKey).get(`${LEADS}/jobs`);
      if ((await redis.exists(`${keyPrefix}rate:account:${probe.accountId}`)) === 1) return;
      await sleep(50);
    }
  } finally {
    redis.disconnect();
  }
}

describe('plan rate limits on the lead API', () => {
  let site: LocalServer;
  let test: TestApp;

  before(async () => {
    site = await startLocalServer();
    serveCompany(site, 'limits.example.com', companyHome({ name: 'Limits', description: 'Limits limits.', product: 'Limits' }));
    test = await startApp('sqlite', siteEnv(site, { PLAN_FREE_RPM: '3', PLAN_PRO_RPM: '5' }));
  });
  after(async () => {
    await test.close();
    await site.close();
  });

  it('sends RateLimit headers on every answer and 429 with Retry-After over the plan’s limit', async () => {
    const api = client(test.app, (await createOwner(test.storage)).apiKey);
    const remaining: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      const response = index === 1 ? await api.get(`${LEADS}/jobs`) : await api.post(`${LEADS}/process-lead`, lead(`r${index}@limits.example.com`));
      assert.equal(response.status, 200, response.raw);
      assert.equal(response.headers['ratelimit-limit'], '3');
      assert.ok(Number(response.headers['ratelimit-reset']) > 0);
      remaining.push(String(response.headers['ratelimit-remaining']));
    }
    assert.deepEqual(remaining, ['2', '1', '0']);
    const refused = await api.post(`${LEADS}/process-lead`, lead('r4@limits.example.com'));
    const error = expectError(refused, 429, 'rate_limited');
    assert.match(error.message, /free plan allows 3 requests a minute/);
    assert.ok(Number(refused.headers['retry-after']) >= 1 && Number(refused.headers['retry-after']) <= 60);
    assert.equal(refused.headers['ratelimit-remaining'], '0');
    // The refused request created no job.
    const jobs = await test.storage.db.selectFrom('lead_jobs').select('email').where('email', '=', 'r4@limits.example.com').execute();
    assert.deepEqual(jobs, []);
  });

  it('counts per account, by the account’s plan', async () => {
    const pro = client(test.app, (await createOwner(test.storage, 'pro')).apiKey);
    const free = client(test.app, (await createOwner(test.storage, 'free')).apiKey);
    for (let index = 0; index < 5; index += 1) assert.equal((await pro.get(`${LEADS}/jobs`)).status, 200);
    expectError(await pro.get(`${LEADS}/jobs`), 429, 'rate_limited');
    const freeAnswer = await free.get(`${LEADS}/jobs`);
    assert.equal(freeAnswer.status, 200);
    assert.equal(freeAnswer.headers['ratelimit-limit'], '3');
  });

  it('counts per process when Redis is unreachable: past the plan’s limit is still 429, and it stops promptly', REDIS_TIMEOUT, async () => {
    const port = await unusedPort();
    const down = await startApp('sqlite', siteEnv(site, { REDIS_URL: `redis://127.0.0.1:${port}`, PLAN_FREE_RPM: '2', PLAN_PRO_RPM: '3' }));
    try {
      const api = client(down.app, (await createOwner(down.storage)).apiKey);
      const first = await api.get(`${LEADS}/jobs`);
      assert.equal(first.status, 200, first.raw);
      assert.equal(first.headers['ratelimit-limit'], '2');
      assert.equal(first.headers['ratelimit-remaining'], '1');
      assert.equal((await api.get(`${LEADS}/jobs`)).status, 200);
      const refused = await api.get(`${LEADS}/jobs`);
      expectError(refused, 429, 'rate_limited');
      assert.ok(Number(refused.headers['retry-after']) >= 1);
      // Still per account and by plan.
      const pro = client(down.app, (await createOwner(down.storage, 'pro')).apiKey);
      const statuses: number[] = [];
      for (let index = 0; index < 4; index += 1) statuses.push((await pro.get(`${LEADS}/jobs`)).status);
      assert.deepEqual(statuses, [200, 200, 200, 429]);
    } finally {
      await down.close(); // does not wait for Redis
    }
  });

  it('checks the key before the limit: unknown keys are 401, never 429', async () => {
    const stranger = client(test.app, 'mh_live_nobody');
    for (let index = 0; index < 5; index += 1) expectError(await stranger.get(`${LEADS}/jobs`), 401, 'unauthorized');
  });
});

for (const dialect of DIALECTS) {
  describe(`the rate limit counts only requests the caller may make (${dialect})`, () => {
    it('a portal client’s key is refused (403) without spending its owner’s requests a minute, and cannot lock the owner out', async () => {
      const site = await startLocalServer();
      serveCompany(site, 'limits.example.com', companyHome({ name: 'Limits', description: 'Limits limits.', product: 'Limits' }));
      const test = await startApp(dialect, siteEnv(site, { PLAN_FREE_RPM: '3', LEAD_WORKER: 'false' }));
      try {
        const owner = await createOwner(test.storage);
        const api = client(test.app, owner.apiKey);
        const first = await api.get(`${LEADS}/jobs`);
        assert.equal(first.status, 200, first.raw);
        assert.equal(first.headers['ratelimit-remaining'], '2');
        // The owner's client, on the free plan's limit of 3: ten refused requests, none of them a 429.
        const portalClient = client(test.app, (await createClientUser(test.storage, owner.accountId, [])).apiKey);
        for (let index = 0; index < 10; index += 1) {
          const refused =
            index % 2 === 0
              ? await portalClient.post(`${LEADS}/process-lead`, lead(`c${index}@limits.example.com`))
              : await portalClient.get(`${LEADS}/jobs`);
          expectError(refused, 403, 'forbidden');
        }
        // The owner's count is where the owner left it: two requests left, then the limit.
        const second = await api.post(`${LEADS}/process-lead`, lead('owner@limits.example.com'));
        assert.equal(second.status, 200, second.raw);
        assert.equal(second.headers['ratelimit-remaining'], '1');
        assert.equal((await api.get(`${LEADS}/jobs`)).headers['ratelimit-remaining'], '0');
        expectError(await api.get(`${LEADS}/jobs`), 429, 'rate_limited');
        // The refused requests made no job.
        const jobs = await test.storage.db.selectFrom('lead_jobs').select('email').where('account_id', '=', owner.accountId).execute();
        assert.deepEqual(jobs, [{ email: 'owner@limits.example.com' }]);
      } finally {
        await test.close();
        await site.close();
      }
    });
  });

  describe(`rate limits shared through Redis by two instances (${dialect})`, { skip: REDIS_URL ? false : 'TEST_REDIS_URL is not set' }, () => {
    it('holds the limit across instances', REDIS_TIMEOUT, async () => {
      const keyPrefix = `masthead-test-${randomBytes(6).toString('hex')}:`;
      const shared = await startInstances(dialect, 2, {
        REDIS_URL: REDIS_URL!,
        REDIS_KEY_PREFIX: keyPrefix,
        PLAN_FREE_RPM: '4',
        LEAD_WORKER: 'false',
      });
      try {
        for (const instance of shared.instances) await untilCountingInRedis(instance, keyPrefix);
        const [first, second] = shared.instances;
        const owner = await createOwner(first!.storage);
        const apis = [client(first!.app, owner.apiKey), client(second!.app, owner.apiKey)];
        const statuses: number[] = [];
        for (let index = 0; index < 6; index += 1) statuses.push((await apis[index % 2]!.get(`${LEADS}/jobs`)).status);
        assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429]);
        const last = await apis[1]!.get(`${LEADS}/jobs`);
        assert.equal(last.headers['ratelimit-remaining'], '0');
      } finally {
        await shared.close();
      }
    });
  });
}

describe('rate limits when Redis goes away under a running instance', { skip: REDIS_URL ? false : 'TEST_REDIS_URL is not set' }, () => {
  it('counts in Redis while it answers, then per process: never unlimited', REDIS_TIMEOUT, async () => {
    const relay = await startRelay(new URL(REDIS_URL!));
    const keyPrefix = `masthead-test-${randomBytes(6).toString('hex')}:`;
    const test = await startApp('sqlite', { REDIS_URL: relay.url, REDIS_KEY_PREFIX: keyPrefix, PLAN_FREE_RPM: '3', LEAD_WORKER: 'false' });
    try {
      await untilCountingInRedis(test, keyPrefix);
      const api = client(test.app, (await createOwner(test.storage)).apiKey);
      assert.equal((await api.get(`${LEADS}/jobs`)).headers['ratelimit-remaining'], '2');
      await relay.cut();
      // Redis's count is out of reach now; this process counts afresh, up to the plan's limit.
      const statuses: number[] = [];
      for (let index = 0; index < 4; index += 1) statuses.push((await api.get(`${LEADS}/jobs`)).status);
      assert.deepEqual(statuses, [200, 200, 200, 429]);
    } finally {
      await test.close(); // does not wait for Redis
    }
  });
});
