import dns from 'node:dns';
import type { FastifyBaseLogger } from 'fastify';
import type { LeadSettings } from '../config.js';
import type { Storage } from '../db/connection.js';
import { type DomainMetrics, NO_METRICS } from '../infra/metrics.js';
import type { SafeFetcher } from '../net/safe-fetch.js';
import { AccountSlots } from './account-slots.js';
import { CompanyDirectory } from './company-directory.js';
import { createEmailChecker, type MailServerResolver } from './email-check.js';
import { EmailWriter } from './email-writer.js';
import type { LlmClient } from './generation/llm.js';
import { IdempotencyQueries } from './idempotency/queries.js';
import { IdempotencyStore } from './idempotency/store.js';
import type { Mailer } from './mailer.js';
import { CompanyProfileQueries, LeadQueries } from './queries.js';
import { LeadBatchQueries } from './batches/queries.js';
import { type BatchView, LeadBatchService, type LeadBatchServiceDeps } from './batches/service.js';
import { readCsvTable } from '../content/csv-table.js';
import { preloadDomainWords, researchCompany } from './research/index.js';
import type { PageExtractor } from './research/index.js';
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
  /** Reads fetched company pages (the composition root runs large ones in the worker threads). */
  extractPage?: PageExtractor;
  /** Reads uploaded lead files (the composition root runs large ones in the worker threads). */
  readCsv?: LeadBatchServiceDeps['readCsv'];
  /** Where the mail-server look-up (CHECK_MX) asks; default: the system's DNS. */
  mailServers?: MailServerResolver;
  /** Told once when every job of a batch ended (webhooks publish batch.completed). */
  onBatchCompleted?: (accountId: number, batch: BatchView) => Promise<unknown>;
}

export interface LeadDomain {
  leads: LeadService;
  batches: LeadBatchService;
  templates: TemplateService;
  idempotency: IdempotencyStore;
  /**
   * Loads what the research would otherwise read on first use, holding the event loop (the word list domains are
   * split with): run before the server takes requests.
   */
  prepare(): Promise<void>;
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
  onBatchCompleted,
  mailServers = dns.promises,
  readCsv = async (bytes, limits) => readCsvTable(bytes, limits),
  extractPage,
}: LeadDomainDeps): LeadDomain {
  const queries = new LeadQueries(storage.db, storage.dialect);
  const checker = createEmailChecker({ mx: settings.checkMx ? mailServers : undefined });
  const localChecker = createEmailChecker({});
  const templates = new TemplateService(new TemplateQueries(storage.db));
  const slots = new AccountSlots();
  const research = (domain: string) => researchCompany(domain, { fetcher, siteUrlTemplate: companySiteUrl, ...(extractPage ? { extractPage } : {}) });
  let worker: LeadWorker | undefined;
  const batches = new LeadBatchService({
    queries: new LeadBatchQueries(storage.db, storage.dialect),
    leadQueries: queries,
    settings,
    checkEmailLocally: (email) => localChecker.check(email),
    templates,
    onQueued: () => worker?.wake(),
    ...(onJobEnded ? { onJobEnded } : {}),
    ...(onBatchCompleted ? { onBatchCompleted } : {}),
    metrics,
    readCsv,
  });
  // Every job's end is told to the listener, and a batch's job's end may complete its batch.
  const jobEnded: JobEndedListener = async (accountId, job) => {
    await onJobEnded?.(accountId, job);
    if (job.batch_id === null) return;
    await batches
      .jobEnded(accountId, job.batch_id)
      .catch((error) => log.warn({ err: error, batch_id: job.batch_id }, 'could not check whether a batch completed'));
  };
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
    onJobEnded: jobEnded,
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
      onJobEnded: jobEnded,
    });
  }
  const idempotency = new IdempotencyStore(new IdempotencyQueries(storage.db));
  let sweeper: NodeJS.Timeout | undefined;
  return {
    leads,
    batches,
    templates,
    idempotency,
    prepare: preloadDomainWords,
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
