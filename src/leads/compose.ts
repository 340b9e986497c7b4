import dns from 'node:dns';
import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';
import type { Config } from '../config.js';
import type { Storage } from '../db/connection.js';
import type { PlanRateLimitOptions } from '../http/rate-limit.js';
import { createSafeFetcher } from '../net/safe-fetch.js';
import { AccountSlots } from './account-slots.js';
import { CompanyDirectory } from './company-directory.js';
import { createEmailChecker } from './email-check.js';
import { EmailWriter } from './email-writer.js';
import { createLlmClient } from './generation/llm.js';
import { IdempotencyStore } from './idempotency.js';
import { createSmtpMailer } from './mailer.js';
import { researchCompany } from './research/index.js';
import { LeadService } from './service.js';
import { TemplateService } from './templates/service.js';
import { LeadWorker } from './worker.js';

export const RESEARCH_USER_AGENT = 'Masthead/1.0 (company research for a sales email; +https://github.com/masthead)';

/** Jobs one instance's worker runs at once, all accounts together. */
const WORKER_CONCURRENCY = 32;
const HOUR_MS = 60 * 60 * 1000;

export interface LeadApi {
  leads: LeadService;
  templates: TemplateService;
  rateLimit: PlanRateLimitOptions;
  /** Starts the worker (when enabled). */
  start(): void;
  /** Stops the worker (letting running jobs finish) and closes outbound connections. */
  close(): Promise<void>;
}

export interface LeadApiDeps {
  config: Config;
  storage: Storage;
  log: FastifyBaseLogger;
  /** The worker's lease and how often it is renewed (defaults: LEASE_MS, a quarter of it); tests shorten them. */
  worker?: { leaseMs?: number; renewEveryMs?: number };
}

/** Builds the lead pipeline from the configuration: what app.ts, the composition root, mounts. */
export function buildLeadApi({ config, storage, log, worker: workerOptions = {} }: LeadApiDeps): LeadApi {
  const { db, dialect } = storage;
  const settings = config.leads;
  const fetcher = createSafeFetcher({ allow: config.outboundAllow, userAgent: RESEARCH_USER_AGENT });
  const llm = config.llm.baseUrl ? createLlmClient({ baseUrl: config.llm.baseUrl, apiKey: config.llm.apiKey, model: config.llm.model }) : undefined;
  const writer = new EmailWriter(llm);
  const mailer = config.smtpUrl ? createSmtpMailer(config.smtpUrl, config.mailFrom) : undefined;
  // A command Redis does not answer within a second fails, and the rate limit counts in memory instead (http/rate-limit.ts).
  const redis = config.redisUrl
    ? new Redis(config.redisUrl, { connectTimeout: 1000, commandTimeout: 1000, maxRetriesPerRequest: 1, enableOfflineQueue: true, lazyConnect: false })
    : undefined;
  // Said once an outage (ioredis reports every reconnection attempt), and again when Redis is back.
  let redisDown = false;
  redis?.on('error', (error) => {
    if (redisDown) return;
    redisDown = true;
    log.warn({ err: error }, 'Redis is unreachable: rate limits hold per process until it is back');
  });
  redis?.on('ready', () => {
    if (!redisDown) return;
    redisDown = false;
    log.info('Redis is back: rate limits are shared across instances again');
  });
  const checker = createEmailChecker({ mx: settings.checkMx ? dns.promises : undefined });
  const templates = new TemplateService(db);
  let worker: LeadWorker | undefined;
  const slots = new AccountSlots();
  const leads = new LeadService({
    db,
    dialect,
    settings,
    checkEmail: (email) => checker.check(email),
    companies: new CompanyDirectory(db, (domain) => researchCompany(domain, { fetcher, siteUrlTemplate: config.companySiteUrl }), settings.companyCacheTtlHours * HOUR_MS),
    writer,
    templates,
    slots,
    ...(mailer ? { mailer } : {}),
    onQueued: () => worker?.wake(),
  });
  if (settings.worker) {
    worker = new LeadWorker({ db, dialect, leads, slots, plans: settings.plans, pollMs: settings.workerPollMs, concurrency: WORKER_CONCURRENCY, log, ...workerOptions });
  }
  const idempotency = new IdempotencyStore(db);
  let sweeper: NodeJS.Timeout | undefined;
  return {
    leads,
    templates,
    rateLimit: { plans: settings.plans, redis, keyPrefix: settings.redisKeyPrefix },
    start() {
      worker?.start();
      sweeper = setInterval(() => idempotency.deleteExpired().catch((error) => log.warn({ err: error }, 'could not delete expired idempotency keys')), HOUR_MS);
      sweeper.unref();
    },
    async close() {
      clearInterval(sweeper);
      await worker?.stop();
      // disconnect, not quit: quit would wait for a Redis that may be down.
      redis?.disconnect();
      await Promise.all([fetcher.close(), writer.close()]);
      mailer?.close();
    },
  };
}
