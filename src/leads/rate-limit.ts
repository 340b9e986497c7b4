import type { FastifyInstance } from 'fastify';
import rateLimit, { type FastifyRateLimitStore, type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import type { PlanLimits, PlanName } from '../config.js';
import { AppError } from '../errors.js';
import type { DomainMetrics } from '../infra/metrics.js';
import { principalOf } from '../accounts/api-key-hook.js';

export interface PlanRateLimitOptions {
  plans: Record<PlanName, PlanLimits>;
  /** Shared store: limits hold across instances. Without it (or while it is unreachable) they hold per process. */
  redis: Redis | undefined;
  keyPrefix: string;
  /** Counts the requests refused (METRICS). */
  metrics?: Pick<DomainMetrics, 'refused'>;
}

/** A request counted: the count in the current window, and the milliseconds left of that window. */
interface Counted {
  current: number;
  ttl: number;
}

// The plugin's public `store` option takes any counter; this one is built on ioredis and a Map alone, not on the
// plugin's own store files (not exported). Both count as the plugin's stores do: a fixed window that the first
// request starts, its count reset when it ends.

/** INCR, starting the window on the first request (a key left without one gets one too). */
const INCREMENT_LUA = `
local current = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if current == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {current, ttl}`;
const INCREMENT_COMMAND = 'mastheadRateLimitIncrement';

type CountingRedis = Redis & { [INCREMENT_COMMAND](key: string, timeWindow: number): Promise<[number, number]> };

/** After a failed command on a connection that stays up (a timeout under load), Redis is asked again this much later. */
const RETRY_REDIS_AFTER_MS = 5_000;

/**
 * Counts in Redis while it is worth asking: not after the connection closed, until it is ready again, and not for a
 * few seconds after a command failed. Meanwhile the store counts in memory at once rather than waiting for a Redis
 * that is down.
 */
class RedisCounter {
  private down = false;
  private failedAt = 0;
  private readonly redis: CountingRedis;

  constructor(redis: Redis) {
    redis.defineCommand(INCREMENT_COMMAND, { numberOfKeys: 1, lua: INCREMENT_LUA });
    redis.on('ready', () => (this.down = false));
    redis.on('close', () => (this.down = true));
    this.redis = redis as CountingRedis;
  }

  usable(): boolean {
    const status = this.redis.status;
    return !this.down && Date.now() - this.failedAt >= RETRY_REDIS_AFTER_MS && status !== 'close' && status !== 'reconnecting' && status !== 'end';
  }

  async increment(key: string, timeWindow: number): Promise<Counted> {
    try {
      const [current, ttl] = await this.redis[INCREMENT_COMMAND](key, timeWindow);
      return { current, ttl };
    } catch (error) {
      this.failedAt = Date.now();
      throw error;
    }
  }
}

const redisCounters = new WeakMap<Redis, RedisCounter>();

/** Counts in this process's memory. Windows that have ended are dropped once a window's time has passed. */
class MemoryCounter {
  private readonly windows = new Map<string, { count: number; endsAt: number }>();
  private nextSweep = 0;

  increment(key: string, timeWindow: number): Counted {
    const now = Date.now();
    if (now >= this.nextSweep) {
      for (const [counted, window] of this.windows) if (window.endsAt <= now) this.windows.delete(counted);
      this.nextSweep = now + timeWindow;
    }
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      window = { count: 0, endsAt: now + timeWindow };
      this.windows.set(key, window);
    }
    window.count += 1;
    return { current: window.count, ttl: window.endsAt - now };
  }
}

/** Counts in Redis while it answers, else in this process's memory: limits hold across instances, or per process. */
class SharedOrLocalStore implements FastifyRateLimitStore {
  constructor(
    private readonly local: MemoryCounter,
    private readonly shared: { counter: RedisCounter; keyPrefix: string } | undefined,
  ) {}

  incr(key: string, callback: (error: Error | null, result?: Counted) => void, timeWindow: number): void {
    const { shared, local } = this;
    if (!shared?.counter.usable()) return callback(null, local.increment(key, timeWindow));
    shared.counter.increment(`${shared.keyPrefix}${key}`, timeWindow).then(
      (counted) => callback(null, counted),
      () => callback(null, local.increment(key, timeWindow)),
    );
  }

  /** No route sets a rate limit of its own: every registration and route spends the one count per account. */
  child(): FastifyRateLimitStore {
    return this;
  }
}

const storesByOptions = new WeakMap<PlanRateLimitOptions, SharedOrLocalStore>();

/**
 * The `store` option for @fastify/rate-limit from the plan settings: one count per account, whichever registration
 * asks (the lead API, the dashboard's try-it form), so that both spend the same requests a minute. With Redis the
 * count is shared through it and falls back to this process's memory whenever Redis fails (never unlimited);
 * without Redis it is in this process's memory.
 */
export function planRateLimitStore(options: PlanRateLimitOptions): { store: FastifyRateLimitStoreCtor } {
  let store = storesByOptions.get(options);
  if (!store) {
    const { redis } = options;
    let shared: { counter: RedisCounter; keyPrefix: string } | undefined;
    if (redis) {
      let counter = redisCounters.get(redis);
      if (!counter) {
        counter = new RedisCounter(redis);
        redisCounters.set(redis, counter);
      }
      shared = { counter, keyPrefix: `${options.keyPrefix}rate:` };
    }
    store = new SharedOrLocalStore(new MemoryCounter(), shared);
    storesByOptions.set(options, store);
  }
  const planStore = store;
  // The plugin calls `new Store(params)`; a constructor that returns an object gives that object.
  return {
    store: function SharedPlanStore() {
      return planStore;
    } as unknown as FastifyRateLimitStoreCtor,
  };
}

/**
 * Requests a minute per account, by plan (@fastify/rate-limit). Runs in preParsing: after the routes' onRequest hooks,
 * which must authenticate the caller and refuse what it may not do (a refused request then spends nothing of the
 * account's count), and before the body is parsed. Every answer it counts carries RateLimit-Limit,
 * RateLimit-Remaining and RateLimit-Reset, a 429 also Retry-After.
 * With Redis the count is shared by every instance; while Redis is unreachable, each process counts alone.
 */
export async function registerPlanRateLimit(app: FastifyInstance, options: PlanRateLimitOptions): Promise<void> {
  await app.register(rateLimit, {
    hook: 'preParsing',
    timeWindow: 60_000,
    max: async (request) => options.plans[principalOf(request).plan].requestsPerMinute,
    keyGenerator: (request) => `account:${principalOf(request).accountId}`,
    ...planRateLimitStore(options),
    enableDraftSpec: true,
    onExceeded: () => options.metrics?.refused('requests_per_minute'),
    errorResponseBuilder: (request, context) =>
      new AppError(
        'rate_limited',
        `The ${principalOf(request).plan} plan allows ${context.max} requests a minute; retry in ${context.after}`,
        [],
        Math.max(1, Math.ceil(context.ttl / 1000)),
      ),
  });
}
