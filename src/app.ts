import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { AccountQueries, SessionQueries } from './accounts/queries.js';
import { AccountService } from './accounts/service.js';
import { SessionService } from './accounts/sessions.js';
import type { Config } from './config.js';
import type { Storage } from './db/connection.js';
import { dashboardRoutes } from './dashboard/routes.js';
import { ErrorBody, registerErrorHandling } from './http/errors.js';
import { registerHealthRoutes } from './http/health.js';
import { registerJsonBodyParser } from './http/json-body.js';
import { registerMetricsRoute, registerRequestMetrics } from './http/metrics.js';
import { serverOptions } from './http/server.js';
import { registerValidation } from './http/validation.js';
import { type DomainMetrics, Metrics, NO_METRICS } from './infra/metrics.js';
import { connectRedis } from './infra/redis.js';
import { createLlmClient } from './leads/generation/llm.js';
import { createSmtpMailer } from './leads/mailer.js';
import { leadRoutes } from './leads/routes.js';
import { TemplateQueries } from './leads/templates/queries.js';
import { TemplateService } from './leads/templates/service.js';
import { pooledPageExtractor } from './leads/research/index.js';
import { wireLeadDomain } from './leads/wiring.js';
import { createSafeFetcher } from './net/safe-fetch.js';
import { ArticleQueries } from './portal/articles/queries.js';
import { ArticleService } from './portal/articles/service.js';
import { AuditQueries } from './portal/audit/queries.js';
import { AuditService } from './portal/audit/service.js';
import { CategoryQueries } from './portal/categories/queries.js';
import { CategoryService } from './portal/categories/service.js';
import { ClientQueries } from './portal/clients/queries.js';
import { ClientService } from './portal/clients/service.js';
import { FeedQueries } from './portal/feeds/queries.js';
import { FeedRunner } from './portal/feeds/runner.js';
import { FeedScheduler } from './portal/feeds/scheduler.js';
import { FeedService } from './portal/feeds/service.js';
import type { FeedSource } from './portal/feeds/sync.js';
import { IssueQueries } from './portal/issues/queries.js';
import { IssueService } from './portal/issues/service.js';
import { PublicationQueries } from './portal/publications/queries.js';
import { PublicationService } from './portal/publications/service.js';
import { type PortalServices, portalRoutes, portalSchemas } from './portal/routes.js';
import { sessionRoutes } from './portal/sessions/routes.js';
import { pooledFeedReader } from './reader/index.js';
import { WebhookQueries } from './webhooks/queries.js';
import { webhookRoutes } from './webhooks/routes.js';
import { WebhookService } from './webhooks/service.js';
import { WebhookWorker } from './webhooks/worker.js';
import { readCsvInPool, sanitizeArticlesInPool, WorkerPool } from './workers/pool.js';

export interface AppDeps {
  config: Config;
  storage: Storage;
  /** Log requests (JSON lines, at config.logLevel). Off in tests. */
  logRequests?: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The background synchronization of RSS feeds; tests drive it with runDue(). */
    feedScheduler: FeedScheduler;
    /** Worker threads for CPU-heavy work on user-sized input (routes parse large bodies there). */
    workers: WorkerPool;
    /** Sends queued webhook deliveries; tests drive it with runDue(). */
    webhookWorker: WebhookWorker;
  }
}

export const FEED_USER_AGENT = 'Masthead/1.0 (feed importer; +https://github.com/masthead)';
export const WEBHOOK_USER_AGENT = 'Masthead-Webhooks/1.0 (+https://www.standardwebhooks.com/)';
export const RESEARCH_USER_AGENT = 'Masthead/1.0 (company research for a sales email; +https://github.com/masthead)';

export const DEFAULT_BODY_LIMIT = 2 * 1024 * 1024;

function trustHops(hops: number) {
  return (_address: string, hop: number) => hop < hops;
}

/** The services the CLI's admin commands use (account, publication, key, template), built here as for the app. */
export function buildAdminServices({ db }: Storage) {
  return {
    accounts: new AccountService(new AccountQueries(db)),
    publications: new PublicationService(new PublicationQueries(db)),
    templates: new TemplateService(new TemplateQueries(db)),
  };
}

/** The one composition root: builds every service from its dependencies and mounts both APIs. */
export async function buildApp({ config, storage, logRequests = true }: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: logRequests
      ? {
          level: config.logLevel,
          redact: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie'],
        }
      : false,
    bodyLimit: DEFAULT_BODY_LIMIT,
    // Timeouts for stalled clients, request ids (a client's x-request-id only when short and safe), Node's refusals.
    ...serverOptions(config.http),
    return503OnClosing: true,
    // A number of hops is what Fastify does at run time too (its types only take a function for it).
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
  });
  app.decorateRequest('principal', null);
  registerValidation(app);
  registerJsonBodyParser(app);
  registerErrorHandling(app);
  // Before any route, so that every route (and the 404 handler) inherits the request hook.
  let metrics: DomainMetrics = NO_METRICS;
  if (config.metrics.enabled) {
    const prometheus = new Metrics(() => storage.poolStats());
    app.addHook('onClose', async () => prometheus.close());
    registerRequestMetrics(app, prometheus);
    registerMetricsRoute(app, prometheus, config.metrics.token);
    metrics = prometheus;
  }
  app.addSchema(ErrorBody);
  for (const schema of portalSchemas) app.addSchema(schema);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Masthead',
        version: '1.0.0',
        description: 'The Publication Portal API (/api/portal/v1) and the Lead Email Generation API (/api/client).',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          bearer: { type: 'http', scheme: 'bearer' },
        },
      },
      security: [{ apiKey: [] }, { bearer: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, index) => String(json.$id ?? `def-${index}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  registerHealthRoutes(app, storage);
  storage.onConnectionLost((error) =>
    app.log.warn({ err: error }, 'a database connection was dropped; it is discarded and the next query opens a new one'),
  );

  const { db, dialect } = storage;
  const accountQueries = new AccountQueries(db);
  const accounts = new AccountService(accountQueries);
  const publications = new PublicationService(new PublicationQueries(db));
  // Registered before the hooks of everything that uses the workers, so closed after them (last-registered first).
  const workers = new WorkerPool({ onError: (error) => app.log.error({ err: error }, 'a worker thread failed') });
  app.decorate('workers', workers);
  app.addHook('onClose', () => workers.close());
  const fetcher = createSafeFetcher({ allow: config.outboundAllow, userAgent: FEED_USER_AGENT });
  app.addHook('onClose', () => fetcher.close());
  // Webhooks: the events other domains publish are queued in the database and sent by the worker (started on ready).
  const webhookFetcher = createSafeFetcher({ allow: config.outboundAllow, userAgent: WEBHOOK_USER_AGENT });
  app.addHook('onClose', () => webhookFetcher.close());
  const webhookQueries = new WebhookQueries(db, dialect);
  const webhookWorker = new WebhookWorker({
    queries: webhookQueries,
    fetcher: webhookFetcher,
    log: app.log,
    pollMs: config.webhooks.pollMs,
    disableAfterDays: config.webhooks.disableAfterDays,
  });
  const webhooks = new WebhookService({
    queries: webhookQueries,
    outboundAllow: config.outboundAllow,
    log: app.log,
    onQueued: () => webhookWorker.wake(),
  });
  app.decorate('webhookWorker', webhookWorker);
  app.addHook('onReady', async () => {
    if (config.webhooks.worker) webhookWorker.start();
  });
  // Registered after its fetcher's hook, so run before it: attempts in flight end with their connections open.
  app.addHook('onClose', () => webhookWorker.stop());
  // Feeds are read in the worker threads; the manual and the scheduled synchronize share one runner.
  const feedSource: FeedSource = { fetch: (url, options) => fetcher.fetch(url, options), reader: pooledFeedReader(workers) };
  const articleQueries = new ArticleQueries(db, dialect);
  const feedQueries = new FeedQueries(db, dialect);
  const feedRunner = new FeedRunner(
    feedQueries,
    articleQueries,
    feedSource,
    { intervalMinutes: config.feeds.syncIntervalMinutes },
    (outcome) => webhooks.publishFeedSync(outcome),
    metrics,
  );
  const feedScheduler = new FeedScheduler(feedQueries, feedRunner, { logger: app.log });
  const feeds = new FeedService(feedQueries, publications, feedSource, feedRunner, () => feedScheduler.wake());
  app.decorate('feedScheduler', feedScheduler);
  app.addHook('onReady', async () => {
    if (config.feeds.scheduler) feedScheduler.start();
  });
  // Registered after the fetcher's hook, so run before it (onClose hooks run last-registered first).
  app.addHook('onClose', () => feedScheduler.stop());
  const portal: PortalServices = {
    accounts,
    publications,
    articles: new ArticleService(articleQueries, publications, (htmls) => sanitizeArticlesInPool(workers, htmls)),
    categories: new CategoryService(new CategoryQueries(db), publications),
    issues: new IssueService(new IssueQueries(db), publications),
    clients: new ClientService(new ClientQueries(db)),
    audit: new AuditService(new AuditQueries(db)),
    feeds,
  };
  await app.register(portalRoutes, { prefix: '/api/portal/v1', ...portal });
  // Signing in needs no key, so it sits beside the portal's authenticated scope (same prefix), not inside it.
  const sessions = new SessionService(accountQueries, new SessionQueries(db, dialect));
  await app.register(sessionRoutes, { prefix: '/api/portal/v1', sessions, accounts });

  // The lead API's infrastructure: company research's fetcher, the LLM, the mailer, the Redis of its rate limits.
  const researchFetcher = createSafeFetcher({ allow: config.outboundAllow, userAgent: RESEARCH_USER_AGENT });
  const llm = config.llm.baseUrl ? createLlmClient({ baseUrl: config.llm.baseUrl, apiKey: config.llm.apiKey, model: config.llm.model }) : undefined;
  const mailer = config.smtpUrl ? createSmtpMailer(config.smtpUrl, config.mailFrom) : undefined;
  const redis = config.redisUrl ? connectRedis(config.redisUrl, app.log) : undefined;
  app.addHook('onClose', async () => {
    redis?.disconnect();
    mailer?.close();
    await Promise.all([researchFetcher.close(), llm?.close()]);
  });
  const leadDomain = wireLeadDomain({
    storage,
    settings: config.leads,
    companySiteUrl: config.companySiteUrl,
    fetcher: researchFetcher,
    llm,
    mailer,
    log: app.log,
    onJobEnded: (accountId, job) => webhooks.publish(accountId, `job.${job.status as 'completed' | 'failed' | 'rejected'}`, job),
    onBatchCompleted: (accountId, batch) => webhooks.publish(accountId, 'batch.completed', batch),
    readCsv: (bytes, limits) => readCsvInPool(workers, bytes, limits),
    extractPage: pooledPageExtractor(workers),
    metrics,
  });
  app.addHook('onReady', async () => {
    await leadDomain.prepare();
    leadDomain.start();
  });
  // Registered after the infrastructure's hook, so run before it: running jobs finish with their connections open.
  app.addHook('onClose', () => leadDomain.stop());
  // One object for the API and the dashboard's try-it form: they spend one count per account (leads/rate-limit.ts).
  const leadRateLimit = { plans: config.leads.plans, redis, keyPrefix: config.leads.redisKeyPrefix, metrics };
  await app.register(leadRoutes, {
    prefix: '/api/client',
    accounts,
    leads: leadDomain.leads,
    batches: leadDomain.batches,
    idempotency: leadDomain.idempotency,
    rateLimit: leadRateLimit,
  });
  await app.register(webhookRoutes, { prefix: '/api/client', accounts, webhooks, rateLimit: leadRateLimit });

  // The web dashboard at /: the same services, through pages with sessions and CSRF-checked forms.
  await app.register(dashboardRoutes, {
    ...portal,
    sessions,
    leads: leadDomain.leads,
    batches: leadDomain.batches,
    templates: leadDomain.templates,
    webhooks,
    leadRateLimit,
    allowSignup: config.allowSignup,
    canSendEmail: config.smtpUrl !== undefined,
  });

  return app;
}
