import { randomUUID } from 'node:crypto';
import type { Principal } from '../../accounts/service.js';
import type { LeadSettings } from '../../config.js';
import type { LeadJobStatus, LeadTemplateTable } from '../../db/types.js';
import { AppError, type FieldProblem, notFound, validationError } from '../../errors.js';
import { type DomainMetrics, NO_METRICS } from '../../infra/metrics.js';
import { nowIso } from '../../time.js';
import { slicer } from '../../workers/slices.js';
import type { EmailCheck } from '../email-check.js';
import { type LeadJobRow, type LeadQueries, newJob } from '../queries.js';
import type { CompanyProfile } from '../research/index.js';
import { assertLeadApiUser, type JobEndedListener, type LeadInput, normalizedLead, presentJob, quotaExceeded } from '../service.js';
import type { TemplateService } from '../templates/service.js';
import type { LeadBatchQueries, LeadBatchRow, NotAcceptedLead, StatusCounts } from './queries.js';
import type { CsvTableLimits, CsvTableOutcome } from '../../content/csv-table.js';
import { type LeadFile, leadFileError, leadsOfTable } from './lead-file.js';
import { LEAD_FILE_LIMITS, MAX_BATCH_LEADS, MAX_LEAD_FILE_BYTES } from './limits.js';

export interface BatchInput {
  leads: LeadInput[];
  /** The template of every lead that names none; default: the account's default template, else the built-in one. */
  templateId?: string;
  name?: string;
}

const STATUSES: LeadJobStatus[] = ['pending', 'scraping', 'generating', 'sending', 'completed', 'failed', 'rejected'];
const ENDED: LeadJobStatus[] = ['completed', 'failed', 'rejected'];

export interface BatchView {
  id: string;
  name: string | null;
  /** processing until every job ended, then completed. */
  status: 'processing' | 'completed';
  template_id: string | null;
  /** Leads sent. */
  total: number;
  /** Leads that became jobs (rejected addresses included); the rest are `not_accepted`. */
  accepted: number;
  not_accepted: (NotAcceptedLead & { message: string })[];
  counts: Record<LeadJobStatus, number>;
  /** Jobs ended of the batch's jobs, and that as a whole percentage. */
  progress: { ended: number; jobs: number; percent: number };
  created_at: string;
  completed_at: string | null;
}

/** One lead's line in a batch's results, in list order. */
export interface BatchResult {
  position: number;
  first_name: string;
  last_name: string;
  email: string;
  /** The job's status, or not_accepted (the quota left the lead out). */
  status: LeadJobStatus | 'not_accepted';
  job_id: string | null;
  company_name: string | null;
  company_description: string | null;
  company_website: string | null;
  email_subject: string | null;
  email_body: string | null;
  error: string | null;
  completed_at: string | null;
}

export interface LeadBatchServiceDeps {
  queries: LeadBatchQueries;
  leadQueries: LeadQueries;
  settings: LeadSettings;
  /** The address checks that need no network (syntax, free-mail and disposable lists); the mail-server look-up runs in the job. */
  checkEmailLocally: (email: string) => Promise<EmailCheck>;
  templates: TemplateService;
  /** Told when jobs are queued, so that this instance's worker starts on them at once. */
  onQueued?: () => void;
  /** Told of each job ended at submission (a rejected address). Must not throw. */
  onJobEnded?: JobEndedListener;
  /** Told once when every job of a batch ended. Must not throw. */
  onBatchCompleted?: (accountId: number, batch: BatchView) => Promise<unknown>;
  metrics?: Pick<DomainMetrics, 'leadJobEnded' | 'refused'>;
  /** Reads a CSV file's records (off the event loop when it is large). */
  readCsv: (bytes: Buffer, limits: CsvTableLimits) => Promise<CsvTableOutcome>;
}

/**
 * Lists of leads: each lead of a batch is a queued job, counted against the plan as a lead sent alone is (the monthly
 * quota, and the concurrency, which the worker keeps). A batch is accepted as far as the quota allows: the first leads
 * that fit become jobs, the rest are reported as not accepted; when none fits, the batch is refused whole (429).
 */
export class LeadBatchService {
  private readonly metrics: Pick<DomainMetrics, 'leadJobEnded' | 'refused'>;

  constructor(private readonly deps: LeadBatchServiceDeps) {
    this.metrics = deps.metrics ?? NO_METRICS;
  }

  async submit(principal: Principal, input: BatchInput): Promise<BatchView> {
    assertLeadApiUser(principal);
    const leads = normalizedLeads(input.leads);
    const templates = await this.templatesOf(principal.accountId, input.templateId?.toLowerCase(), leads);
    const now = nowIso();
    const batchId = randomUUID();
    const queued: LeadJobRow[] = [];
    const ended: LeadJobRow[] = [];
    // A thousand address checks take tens of milliseconds: other requests get their turns in between.
    const letOthersRun = slicer();
    for (const [index, lead] of leads.entries()) {
      await letOthersRun();
      const check = await this.deps.checkEmailLocally(lead.email);
      const job = newJob(
        {
          id: randomUUID(),
          account_id: principal.accountId,
          user_id: principal.userId,
          template_id: templates.get(lead.templateId ?? input.templateId?.toLowerCase())?.id ?? null,
          first_name: lead.firstName,
          last_name: lead.lastName,
          email: check.email,
          domain: check.domain,
          created_at: now,
        },
        { run_async: 1, batch_id: batchId, batch_position: index + 1 },
      );
      if (check.ok) queued.push(job);
      else {
        const message = check.message ?? 'The address is not a business email';
        ended.push({ ...job, status: 'rejected', rejection_reason: check.reason ?? null, error_message: message, completed_at: now });
      }
    }
    const { plan } = principal;
    const quota = this.deps.settings.plans[plan].monthlyLeads;
    const batch = {
      id: batchId,
      account_id: principal.accountId,
      user_id: principal.userId,
      template_id: templates.get(input.templateId?.toLowerCase())?.id ?? null,
      name: input.name?.trim() || null,
      total: leads.length,
      created_at: now,
      completed_at: null,
    };
    const counted = await this.deps.queries.insertBatch(batch, queued, ended, quota);
    if (counted < queued.length) this.metrics.refused('monthly_quota');
    if (queued.length > 0 && counted === 0) throw quotaExceeded(plan, quota);
    for (const job of ended) {
      this.metrics.leadJobEnded('rejected', 0);
      await this.deps.onJobEnded?.(principal.accountId, presentJob(job));
    }
    if (counted > 0) this.deps.onQueued?.();
    else await this.jobEnded(principal.accountId, batchId);
    return this.get(principal, batchId);
  }

  async get(principal: Principal, id: string): Promise<BatchView> {
    assertLeadApiUser(principal);
    const batch = await this.deps.queries.findBatch(principal.accountId, id.toLowerCase());
    if (!batch) throw notFound(`Batch ${id}`);
    const counts = await this.deps.queries.statusCounts([batch.id]);
    const view = presentBatch(batch, counts.get(batch.id) ?? {});
    // Every job ended but the batch is not marked yet: its last job's end is being told right now, or telling it
    // failed (a database fault). Completing it here is the same conditional write, so it still happens once.
    if (view.status === 'completed' && view.completed_at === null) {
      await this.jobEnded(principal.accountId, batch.id);
      return presentBatch((await this.deps.queries.findBatch(principal.accountId, batch.id)) ?? batch, counts.get(batch.id) ?? {});
    }
    return view;
  }

  /** The account's batches, newest first. */
  async list(principal: Principal, query: { limit: number; page: number }) {
    assertLeadApiUser(principal);
    const { total, batches } = await this.deps.queries.pageOfBatches(principal.accountId, query.limit, (query.page - 1) * query.limit);
    const counts = await this.deps.queries.statusCounts(batches.map((batch) => batch.id));
    return {
      batches: batches.map((batch) => presentBatch(batch, counts.get(batch.id) ?? {})),
      pagination: { total, page: query.page, limit: query.limit, pages: Math.ceil(total / query.limit) },
    };
  }

  /** A page of the batch's jobs, as the jobs listing pages them (newest first). */
  async jobs(principal: Principal, id: string, query: { limit: number; page: number }) {
    const batch = await this.get(principal, id);
    const { total, jobs } = await this.deps.leadQueries.pageOfJobs(principal.accountId, {
      statuses: undefined,
      batchId: batch.id,
      limit: query.limit,
      offset: (query.page - 1) * query.limit,
    });
    return { batch, jobs: jobs.map(presentJob), pagination: { total, page: query.page, limit: query.limit, pages: Math.ceil(total / query.limit) } };
  }

  /** One line per lead sent, in list order: the job's outcome, or why the lead was not accepted. */
  async results(principal: Principal, id: string): Promise<{ batch: BatchView; results: BatchResult[] }> {
    const batch = await this.get(principal, id);
    const jobs = await this.deps.queries.jobsInOrder(batch.id);
    const results: BatchResult[] = [...jobs.map(jobResult), ...batch.not_accepted.map(notAcceptedResult)];
    results.sort((a, b) => a.position - b.position);
    return { batch, results };
  }

  /** The leads of an uploaded CSV file, or a 400 saying why the file is not a lead list. */
  async readFile(bytes: Buffer): Promise<LeadFile> {
    if (bytes.length === 0) throw leadFileError('The file is empty.');
    if (bytes.length > MAX_LEAD_FILE_BYTES) {
      throw leadFileError(`The file is larger than ${MAX_LEAD_FILE_BYTES / 1024 / 1024} MB; a batch takes at most ${MAX_BATCH_LEADS} leads.`);
    }
    const outcome = await this.deps.readCsv(bytes, LEAD_FILE_LIMITS);
    if (!outcome.ok) throw leadFileError(outcome.message);
    return leadsOfTable(outcome.table);
  }

  /**
   * Which leads of a list a batch would take, before anything is queued (the dashboard's preview of an uploaded
   * file): those failing a lead's checks or the address checks that need no network, and repeated addresses, are
   * refused with the reason; `quotaLeft` says how many of the rest this month's quota still takes.
   */
  async screen<T extends LeadInput>(principal: Principal, leads: T[]): Promise<ScreenedLeads<T>> {
    assertLeadApiUser(principal);
    const accepted: T[] = [];
    const refused: (T & { reason: string })[] = [];
    const seen = new Set<string>();
    const letOthersRun = slicer();
    for (const lead of leads) {
      await letOthersRun();
      const problem = leadProblem(lead);
      if (problem) {
        refused.push({ ...lead, reason: problem });
        continue;
      }
      const check = await this.deps.checkEmailLocally(lead.email);
      if (!check.ok) refused.push({ ...lead, reason: check.message ?? 'Not a business email address' });
      else if (seen.has(check.email.toLowerCase())) refused.push({ ...lead, reason: 'The same address is on an earlier line' });
      else {
        seen.add(check.email.toLowerCase());
        accepted.push(lead);
      }
    }
    const used = await this.deps.leadQueries.monthlyUsage(principal.accountId, nowIso().slice(0, 7));
    return { accepted, refused, quotaLeft: Math.max(0, this.deps.settings.plans[principal.plan].monthlyLeads - used) };
  }

  /** A job of the batch ended: when it was the last, the batch is completed and batch.completed told, once. */
  async jobEnded(accountId: number, batchId: string): Promise<void> {
    if (!(await this.deps.queries.completeIfDone(batchId, nowIso()))) return;
    const batch = await this.deps.queries.findBatch(accountId, batchId);
    if (!batch || !this.deps.onBatchCompleted) return;
    const counts = await this.deps.queries.statusCounts([batchId]);
    await this.deps.onBatchCompleted(accountId, presentBatch(batch, counts.get(batchId) ?? {}));
  }

  /** The templates the batch's leads name (each checked to be the account's: 404 otherwise), and the default one. */
  private async templatesOf(accountId: number, batchTemplateId: string | undefined, leads: LeadInput[]) {
    const ids = new Set<string | undefined>([batchTemplateId, ...leads.map((lead) => lead.templateId ?? batchTemplateId)]);
    const templates = new Map<string | undefined, LeadTemplateTable | undefined>();
    for (const id of ids) templates.set(id, await this.deps.templates.forLead(accountId, id));
    return templates;
  }
}

export interface ScreenedLeads<T> {
  accepted: T[];
  refused: (T & { reason: string })[];
  quotaLeft: number;
}

/** What is wrong with a lead's fields, in a sentence, or undefined. */
function leadProblem(lead: LeadInput): string | undefined {
  if (lead.email.length > MAX_EMAIL_LENGTH) return `The email is longer than ${MAX_EMAIL_LENGTH} characters`;
  try {
    normalizedLead(lead);
    return undefined;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return error.details.map((problem) => `${FIELD_NAMES[problem.path] ?? problem.path.slice(1)} ${problem.message}`).join('; ');
  }
}

const MAX_EMAIL_LENGTH = 320;
const FIELD_NAMES: Record<string, string> = { '/firstName': 'The first name', '/lastName': 'The last name', '/email': 'The email' };

/** Each lead trimmed and checked as a lead sent alone is, or one 400 naming every problem by its place in the list. */
function normalizedLeads(leads: LeadInput[]): LeadInput[] {
  const problems: FieldProblem[] = [];
  const normalized: LeadInput[] = [];
  for (const [index, lead] of leads.entries()) {
    try {
      normalized.push(normalizedLead(lead));
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      problems.push(...error.details.map((problem) => ({ ...problem, path: `/leads/${index}${problem.path}` })));
    }
  }
  if (problems.length > 0) throw validationError(problems);
  return normalized;
}

function presentBatch(batch: LeadBatchRow, counted: StatusCounts): BatchView {
  const counts = Object.fromEntries(STATUSES.map((status) => [status, counted[status] ?? 0])) as Record<LeadJobStatus, number>;
  const jobs = STATUSES.reduce((sum, status) => sum + counts[status], 0);
  const ended = ENDED.reduce((sum, status) => sum + counts[status], 0);
  const notAccepted = JSON.parse(batch.not_accepted) as NotAcceptedLead[];
  return {
    id: batch.id,
    name: batch.name,
    status: ended === jobs ? 'completed' : 'processing',
    template_id: batch.template_id,
    total: batch.total,
    accepted: batch.accepted,
    not_accepted: notAccepted.map((lead) => ({ ...lead, message: NOT_ACCEPTED_MESSAGE })),
    counts,
    progress: { ended, jobs, percent: jobs === 0 ? 100 : Math.floor((ended * 100) / jobs) },
    created_at: batch.created_at,
    completed_at: batch.completed_at,
  };
}

const NOT_ACCEPTED_MESSAGE = 'Not accepted: the monthly lead quota was used up by the leads before it';

function jobResult(job: LeadJobRow): BatchResult {
  const company = job.company ? (JSON.parse(job.company) as CompanyProfile) : null;
  return {
    position: job.batch_position ?? 0,
    first_name: job.first_name,
    last_name: job.last_name,
    email: job.email,
    status: job.status,
    job_id: job.id,
    company_name: company?.name ?? null,
    company_description: company?.description ?? null,
    company_website: company?.links.website ?? null,
    email_subject: job.email_subject,
    email_body: job.email_body,
    error: job.error_message,
    completed_at: job.completed_at,
  };
}

function notAcceptedResult(lead: NotAcceptedLead & { message: string }): BatchResult {
  return {
    position: lead.position,
    first_name: lead.first_name,
    last_name: lead.last_name,
    email: lead.email,
    status: 'not_accepted',
    job_id: null,
    company_name: null,
    company_description: null,
    company_website: null,
    email_subject: null,
    email_body: null,
    error: lead.message,
    completed_at: null,
  };
}
