import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';

/**
 * The Redis client of `REDIS_URL`, shared by whatever counts across instances (the lead API's rate limits). A command
 * Redis does not answer within a second fails, and the rate limit counts in memory instead (leads/rate-limit.ts).
 * Close it with `disconnect()`, not `quit()`: quit would wait for a Redis that may be down.
 */
export function connectRedis(url: string, log: FastifyBaseLogger): Redis {
  const redis = new Redis(url, { connectTimeout: 1000, commandTimeout: 1000, maxRetriesPerRequest: 1, enableOfflineQueue: true, lazyConnect: false });
  // Said once an outage (ioredis reports every reconnection attempt), and again when Redis is back.
  let down = false;
  redis.on('error', (error) => {
    if (down) return;
    down = true;
    log.warn({ err: error }, 'Redis is unreachable: rate limits hold per process until it is back');
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    log.info('Redis is back: rate limits are shared across instances again');
  });
  return redis;
}
