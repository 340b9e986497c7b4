import type { FastifyInstance } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import type { PlanLimits, PlanName } from '../config.js';
import { AppError } from '../errors.js';
import { principalOf } from './auth.js';

export interface PlanRateLimitOptions {
  plans: Record<PlanName, PlanLimits>;
  /** Shared store: limits hold across instances. Without it they hold per process. */
  redis: Redis | undefined;
  keyPrefix: string;
}

/**
 * Requests a minute per account, by plan (@fastify/rate-limit). Runs after authentication, before the body is
 * parsed; every answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset, a 429 also Retry-After.
 */
export async function registerPlanRateLimit(app: FastifyInstance, options: PlanRateLimitOptions): Promise<void> {
  await app.register(rateLimit, {
    hook: 'preParsing',
    timeWindow: 60_000,
    max: async (request) => options.plans[principalOf(request).plan].requestsPerMinute,
    keyGenerator: (request) => `account:${principalOf(request).accountId}`,
    ...(options.redis ? { redis: options.redis } : {}),
    nameSpace: `${options.keyPrefix}rate:`,
    // A Redis outage must not take the lead API down with it: requests pass unlimited until it is back.
    skipOnError: true,
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
