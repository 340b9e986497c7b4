// The plan rate limit's store (leads/rate-limit.ts), on its own: fixed windows that the first request starts, counted
// in memory or in Redis, as @fastify/rate-limit's own stores count. The routes' limits are tested in leads/rate-limit.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyRateLimitOptions, FastifyRateLimitStore } from '@fastify/rate-limit';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config.js';
import { type PlanRateLimitOptions, planRateLimitStore } from '../../src/leads/rate-limit.js';

const REDIS_URL = process.env.TEST_REDIS_URL;
const WINDOW_MS = 60_000;

function storeOf(options: PlanRateLimitOptions): FastifyRateLimitStore {
  const { store: Store } = planRateLimitStore(options);
  return new Store({} as FastifyRateLimitOptions);
}

function count(store: FastifyRateLimitStore, key: string, timeWindow = WINDOW_MS): Promise<{ current: number; ttl: number }> {
  return new Promise((resolve, reject) => store.incr(key, (error, result) => (error ? reject(error) : resolve(result!)), timeWindow, 10));
}

const plans = loadConfig({}).leads.plans;

describe('the plan rate limit store in memory', () => {
  it('counts each key in a window the first request starts, and starts afresh when it ends', async (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
    const store = storeOf({ plans, redis: undefined, keyPrefix: 'unused:' });
    assert.deepEqual(await count(store, 'account:1'), { current: 1, ttl: WINDOW_MS });
    t.mock.timers.tick(20_000);
    assert.deepEqual(await count(store, 'account:1'), { current: 2, ttl: WINDOW_MS - 20_000 });
    assert.deepEqual(await count(store, 'account:2'), { current: 1, ttl: WINDOW_MS });
    t.mock.timers.tick(40_000);
    assert.deepEqual(await count(store, 'account:1'), { current: 1, ttl: WINDOW_MS }, 'a new window');
    assert.deepEqual(await count(store, 'account:2'), { current: 2, ttl: 20_000 });
  });

  it('is one count for every registration given the same options (the API and the dashboard’s form)', async () => {
    const options = { plans, redis: undefined, keyPrefix: 'unused:' };
    await count(storeOf(options), 'account:1');
    assert.equal((await count(storeOf(options), 'account:1')).current, 2);
    assert.equal((await count(storeOf(options).child({} as never), 'account:1')).current, 3);
    assert.equal((await count(storeOf({ ...options }), 'account:1')).current, 1, 'other options, another count');
  });
});

describe('the plan rate limit store in Redis', { skip: REDIS_URL ? false : 'TEST_REDIS_URL is not set' }, () => {
  const clients: Redis[] = [];
  const connect = () => {
    const redis = new Redis(REDIS_URL!);
    clients.push(redis);
    return redis;
  };
  after(() => {
    for (const redis of clients) redis.disconnect();
  });

  it('counts in Redis under the key prefix, shared by every client of it (every instance)', async () => {
    const keyPrefix = `masthead-test-${randomBytes(6).toString('hex')}:`;
    const first = storeOf({ plans, redis: connect(), keyPrefix });
    const second = storeOf({ plans, redis: connect(), keyPrefix });
    assert.deepEqual(await count(first, 'account:1'), { current: 1, ttl: WINDOW_MS });
    const { current, ttl } = await count(second, 'account:1');
    assert.equal(current, 2);
    assert.ok(ttl > 0 && ttl <= WINDOW_MS, String(ttl));
    const inspect = connect();
    assert.equal(await inspect.get(`${keyPrefix}rate:account:1`), '2');
    const pttl = await inspect.pttl(`${keyPrefix}rate:account:1`);
    assert.ok(pttl > 0 && pttl <= WINDOW_MS, String(pttl));
  });

  it('counts in memory for a few seconds after a command fails on a connection that stays up, then in Redis again', async (t) => {
    const keyPrefix = `masthead-test-${randomBytes(6).toString('hex')}:`;
    const redis = connect();
    const store = storeOf({ plans, redis, keyPrefix });
    assert.equal((await count(store, 'account:1')).current, 1);
    // A command that fails while the connection stays up (here: the key holds text, so INCR refuses it).
    const inspect = connect();
    await inspect.set(`${keyPrefix}rate:account:1`, 'not a number');
    t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
    assert.deepEqual(await count(store, 'account:1'), { current: 1, ttl: WINDOW_MS }, 'counted in memory');
    assert.equal((await count(store, 'account:1')).current, 2, 'still in memory: Redis is not asked again at once');
    assert.equal(await inspect.get(`${keyPrefix}rate:account:1`), 'not a number');
    await inspect.del(`${keyPrefix}rate:account:1`);
    t.mock.timers.tick(5_000);
    assert.equal((await count(store, 'account:1')).current, 1, 'in Redis again');
    assert.equal(await inspect.get(`${keyPrefix}rate:account:1`), '1');
  });

  it('starts afresh when the window ends', async () => {
    const keyPrefix = `masthead-test-${randomBytes(6).toString('hex')}:`;
    const store = storeOf({ plans, redis: connect(), keyPrefix });
    assert.equal((await count(store, 'account:1', 100)).current, 1);
    assert.equal((await count(store, 'account:1', 100)).current, 2);
    await sleep(200); // Redis expires the key after 100 ms: a slow machine only waits longer
    assert.deepEqual(await count(store, 'account:1', 100), { current: 1, ttl: 100 });
  });
});
