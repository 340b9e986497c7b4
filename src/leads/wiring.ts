import dns from 'node:dns';
import type { FastifyBaseLogger } from 'fastify';
import type { LeadSettings } from '../config.js';
import type { Storage } from '../db/connection.js';
import { type DomainMetrics, NO_METRICS } from '../infra/metrics.js';
import type { SafeFetcher } from '../net/safe-fetch.js';
import { AccountSlots } from './account-slots.js';
import { CompanyDirectory } from './company-directory.js';
import { createEmailChecker } from './email-check.js';
import { EmailWriter } from './email-writer.js';
import type { LlmClient } from './generation/llm.js';
import { IdempotencyQueries } from './idempotency/queries.js';
import { IdempotencyStore } from './idempotency/store.js';
import type { Mailer } from './mailer.js';
import { CompanyProfileQueries, LeadQueries } from './queries.js';
import { researchCompany } from './research/index.js';
import { type JobEndedListener, LeadService } from './service.js';
import { TemplateQueries } from './templates/queries.js';
import { TemplateService } from './templates/service.js';
import { LeadWorker } from './worker.js';

/** Jobs one instance's worker runs at once, all accounts together. */
const WORKER_CONCURRENCY = 32;
const HOUR_MS = 60 * 60 * 1000;

/** What the lead domain is built from: the settings, and the infrastructure the composition root made (and closes). */
export interface LeadDomainDeps {
  storage: Storage;
  settings: LeadSettings;
  /** Where company research looks for a lead's website (COMPANY_SITE_URL). */
  companySiteUrl: string;
  /** The research's outbound fetcher. */
  fetcher: SafeFetcher;
  /** Writes the emails when set; the built-in generator does otherwise. */
  llm: LlmClient | undefined;
  /** Delivers the dashboard's "send it to me" when set. */
  mailer: Mailer | undefined;
  log: FastifyBaseLogger;
  /** Counts jobs ended and quota refusals (METRICS). */
  metrics?: DomainMetrics;
  /** The worker's lease and how often it is renewed (defaults: LEASE_MS, a quarter of it); tests shorten them. */
  worker?: { leaseMs?: number; renewEveryMs?: number };
  /** Told right after a job ends (webhooks publish job.completed, job.failed, job.rejected). */
  onJobEnded?: JobEndedListener;
}

export interface LeadDomain {
  leads: LeadService;
  templates: TemplateService;
  idempotency: IdempotencyStore;
  /** Starts the worker (when enabled) and the hourly removal of expired idempotency keys. */
  start(): void;
  /** Stops them, letting running jobs finish. */
  stop(): Promise<void>;
}

/** Wires the lead domain's queries, services and worker; app.ts, the composition root, builds it and mounts its routes. */
export function wireLeadDomain({
  storage,
  settings,
  companySiteUrl,
  fetcher,
  llm,
  mailer,
  log,
  metrics = NO_METRICS,
  worker: workerOptions = {},
  onJobEnded,
}: LeadDomainDeps): LeadDomain {
  const queries = new LeadQueries(storage.db, storage.dialect);
  const checker = createEmailChecker({ mx: settings.checkMx ? dns.promises : undefined });
  const templates = new TemplateService(new TemplateQueries(storage.db));
  const slots = new AccountSlots();
  const research = (domain: string) => researchCompany(domain, { fetcher, siteUrlTemplate: companySiteUrl });
  let worker: LeadWorker | undefined;
  const leads = new LeadService({
    queries,
    settings,
    checkEmail: (email) => checker.check(email),
    companies: new CompanyDirectory(new CompanyProfileQueries(storage.db), research, settings.companyCacheTtlHours * HOUR_MS),
    writer: new EmailWriter(llm),
    templates,
    slots,
    ...(mailer ? { mailer } : {}),
    onQueued: () => worker?.wake(),
    ...(onJobEnded ? { onJobEnded } : {}),
    metrics,
  });
  if (settings.worker) {
    worker = new LeadWorker({
      queries,
      leads,
      slots,
      plans: settings.plans,
      pollMs: settings.workerPollMs,
      concurrency: WORKER_CONCURRENCY,
      log,
      metrics,
      ...workerOptions,
      ...(onJobEnded ? { onJobEnded } : {}),
    });
  }
  const idempotency = new IdempotencyStore(new IdempotencyQueries(storage.db));
  let sweeper: NodeJS.Timeout | undefined;
  return {
    leads,
    templates,
    idempotency,
    start() {
      worker?.start();
      sweeper = setInterval(
        () => idempotency.deleteExpired().catch((error) => log.warn({ err: error }, 'could not delete expired idempotency keys')),
        HOUR_MS,
      );
      sweeper.unref();
    },
    async stop() {
      clearInterval(sweeper);
      await worker?.stop();
    },
  };
}
