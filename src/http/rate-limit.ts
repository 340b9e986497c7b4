import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import rateLimit, { type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import type { PlanLimits, PlanName } from '../config.js';
import { AppError } from '../errors.js';
import { principalOf } from '../accounts/api-key-hook.js';

export interface PlanRateLimitOptions {
  plans: Record<PlanName, PlanLimits>;
  /** Shared store: limits hold across instances. Without it (or while it is unreachable) they hold per process. */
  redis: Redis | undefined;
  keyPrefix: string;
}

type Counted = { current: number; ttl: number };
type Callback = (error: Error | null, result?: Counted) => void;
/** The store interface of @fastify/rate-limit (its RedisStore and LocalStore have `read` too). */
interface RateStore {
  incr(key: string, callback: Callback, timeWindow: number, max: number): void;
  read(key: string, callback: Callback, timeWindow: number, max: number): void;
  child(routeOptions: unknown): RateStore;
}

// The plugin's own two stores (CommonJS, no exports map): the Redis one, and the in-memory one it uses without Redis.
const require = createRequire(import.meta.url);
const RedisStore = require('@fastify/rate-limit/store/RedisStore.js') as new (continueExceeding: boolean, exponentialBackoff: boolean, redis: Redis, key: string) => RateStore;
const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as new (continueExceeding: boolean, exponentialBackoff: boolean, cache?: number) => RateStore;

/**
 * Whether Redis is worth asking: not after a command failed or the connection closed, until it is ready again. While
 * it is not, requests are counted in memory at once rather than waiting for a Redis that is down.
 */
class RedisHealth {
  private down = false;

  constructor(private readonly redis: Redis) {
    redis.on('ready', () => (this.down = false));
    redis.on('close', () => (this.down = true));
  }

  usable(): boolean {
    const status = this.redis.status;
    return !this.down && status !== 'close' && status !== 'reconnecting' && status !== 'end';
  }

  failed(): void {
    this.down = true;
  }
}

const healthOf = new WeakMap<Redis, RedisHealth>();

/** Counts in Redis while it answers, else in this process's memory: limits hold across instances, or per process. */
class SharedOrLocalStore implements RateStore {
  constructor(
    private readonly shared: RateStore,
    private readonly local: RateStore,
    private readonly health: RedisHealth,
  ) {}

  incr(key: string, callback: Callback, timeWindow: number, max: number): void {
    this.either('incr', key, callback, timeWindow, max);
  }

  read(key: string, callback: Callback, timeWindow: number, max: number): void {
    this.either('read', key, callback, timeWindow, max);
  }

  child(routeOptions: unknown): RateStore {
    return new SharedOrLocalStore(this.shared.child(routeOptions), this.local.child(routeOptions), this.health);
  }

  private either(method: 'incr' | 'read', key: string, callback: Callback, timeWindow: number, max: number): void {
    if (!this.health.usable()) return this.local[method](key, callback, timeWindow, max);
    this.shared[method](
      key,
      (error, result) => {
        if (!error) return callback(null, result);
        this.health.failed();
        this.local[method](key, callback, timeWindow, max);
      },
      timeWindow,
      max,
    );
  }
}

const storesByOptions = new WeakMap<PlanRateLimitOptions, RateStore>();

/**
 * The `store` option for @fastify/rate-limit from the plan settings: one count per account, whichever registration
 * asks (the lead API, the dashboard's try-it form), so that both spend the same requests a minute. With Redis the
 * count is shared through it and falls back to this process's memory whenever Redis fails (never unlimited);
 * without Redis it is in this process's memory.
 */
export function planRateLimitStore(options: PlanRateLimitOptions): { store: FastifyRateLimitStoreCtor } {
  let store = storesByOptions.get(options);
  if (!store) {
    const local = new LocalStore(false, false);
    const { redis } = options;
    if (redis) {
      let health = healthOf.get(redis);
      if (!health) {
        health = new RedisHealth(redis);
        healthOf.set(redis, health);
      }
      store = new SharedOrLocalStore(new RedisStore(false, false, redis, `${options.keyPrefix}rate:`), local, health);
    } else {
      store = local;
    }
    storesByOptions.set(options, store);
  }
  const shared = store;
  // The plugin calls `new Store(params)`; a constructor that returns an object gives that object.
  return { store: function SharedPlanStore() { return shared; } as unknown as FastifyRateLimitStoreCtor };
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
    errorResponseBuilder: (request, context) =>
      new AppError(
        'rate_limited',
        `The ${principalOf(request).plan} plan allows ${context.max} requests a minute; retry in ${context.after}`,
        [],
        Math.max(1, Math.ceil(context.ttl / 1000)),
      ),
  });
}
