import { randomUUID } from 'node:crypto';
import type { Principal } from '../accounts/service.js';
import type { LeadSettings, PlanName } from '../config.js';
import type { LeadJobStatus, LeadTemplateTable } from '../db/types.js';
import { AppError, type FieldProblem, forbidden, notFound, validationError } from '../errors.js';
import { type DomainMetrics, type LeadJobEnd, NO_METRICS } from '../infra/metrics.js';
import { nowIso } from '../time.js';
import type { AccountSlots } from './account-slots.js';
import type { CompanyDirectory } from './company-directory.js';
import type { EmailCheck, EmailRejection } from './email-check.js';
import type { EmailWriter, TemplateText, WrittenEmail } from './email-writer.js';
import type { LeadFacts } from './generation/builtin.js';
import type { CompanyProfile } from './research/index.js';
import { LlmError } from './generation/llm.js';
import { MailError, type Mailer } from './mailer.js';
import { type LeadJobRow, type LeadQueries, newJob, statusesOf } from './queries.js';
import { checkedTemplate, type TemplateService } from './templates/service.js';

export interface LeadInput {
  firstName: string;
  lastName: string;
  email: string;
  templateId?: string;
}

export interface ProcessOptions {
  /** Queue the job for the worker and return at once (the API's `Prefer: respond-async`). */
  respondAsync?: boolean;
  /** Demo flow: deliver the generated email to this address (the job passes `sending`). */
  sendTo?: string;
}

/** What became of a lead; the API and the dashboard each tell it their way. */
export type LeadOutcome =
  /** The email was written (and sent, with `sentTo`). */
  | { kind: 'completed'; jobId: string; subject: string; body: string; sentTo: string | null }
  /** The job waits for the worker (`respondAsync`). */
  | { kind: 'queued'; jobId: string }
  /** Not a business address: the job ended `rejected`. */
  | { kind: 'rejected'; jobId: string; message: string; reason: EmailRejection | undefined }
  /** The LLM or the mail delivery failed: the job ended `failed`. */
  | { kind: 'generation_failed'; jobId: string; message: string };

export interface LeadServiceDeps {
  queries: LeadQueries;
  settings: LeadSettings;
  checkEmail: (email: string) => Promise<EmailCheck>;
  companies: CompanyDirectory;
  writer: EmailWriter;
  templates: TemplateService;
  slots: AccountSlots;
  mailer?: Mailer;
  /** Told when a job is queued, so that this instance's worker starts on it at once. */
  onQueued?: () => void;
  /** Told right after a job's end (completed, failed or rejected) is stored: webhooks publish it. Must not throw. */
  onJobEnded?: JobEndedListener;
  /** Counts jobs reaching a final status, and quota refusals. */
  metrics?: Pick<DomainMetrics, 'leadJobEnded' | 'refused'>;
}

/** Hears of each job that ended, with the job as the jobs listing shows it. */
export type JobEndedListener = (accountId: number, job: JobView) => Promise<unknown>;

export interface JobView {
  id: string;
  first_name: string;
  last_name: string;
  email: string;
  domain: string;
  status: LeadJobStatus;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  error_message: string | null;
  /** The batch the lead came in, if it came in one. */
  batch_id: string | null;
}

const NAME_MAX_LENGTH = 100;

/** A queued job's run lost its lease to another claim (its instance stalled past the lease): it stops, writing nothing. */
export class LeaseLostError extends Error {
  constructor(jobId: string) {
    super(`Job ${jobId} was taken over by another claim`);
  }
}

interface RunOptions {
  /** The worker's claim: every write names it, so that a run whose job was taken over changes nothing. */
  leaseOwner?: string;
  /** The worker took the account's slot already (it claims only jobs that can start at once). */
  slotHeld?: boolean;
}

/** The company a template preview is written for. */
const SAMPLE_COMPANY: CompanyProfile = {
  name: 'Zeppelin Works',
  description: 'Zeppelin Works builds quiet electric airships for regional cargo.',
  product_description: 'Electric airships. Cargo routes between regional airfields.',
  industry: ['aviation', 'logistics'],
  logo: null,
  links: { website: 'https://zeppelin-works.example/' },
  language: 'en',
  source: 'site',
};

/** The lead pipeline: business-email check, company research, generation; every submission a job. */
export class LeadService {
  private readonly metrics: Pick<DomainMetrics, 'leadJobEnded' | 'refused'>;

  constructor(private readonly deps: LeadServiceDeps) {
    this.metrics = deps.metrics ?? NO_METRICS;
  }

  private ended(job: Pick<LeadJobRow, 'created_at'>, status: LeadJobEnd, at: string): void {
    this.metrics.leadJobEnded(status, (Date.parse(at) - Date.parse(job.created_at)) / 1000);
  }

  /** Throws 403 unless the caller may use the lead API (the account owner's keys, not portal clients'). */
  assertMayUse(principal: Principal): void {
    assertLeadApiUser(principal);
  }

  /** Checks the address, counts the lead against the quota and runs its job (or queues it, with `respondAsync`). */
  async processLead(principal: Principal, input: LeadInput, options: ProcessOptions = {}): Promise<LeadOutcome> {
    assertLeadApiUser(principal);
    const lead = normalizedLead(input);
    const template = await this.deps.templates.forLead(principal.accountId, lead.templateId);
    const check = await this.deps.checkEmail(lead.email);
    const now = nowIso();
    const job = newJob(
      {
        id: randomUUID(),
        account_id: principal.accountId,
        user_id: principal.userId,
        template_id: template?.id ?? null,
        first_name: lead.firstName,
        last_name: lead.lastName,
        email: check.email,
        domain: check.domain || domainPart(check.email),
        created_at: now,
      },
      { run_async: options.respondAsync ? 1 : 0, send_to: options.sendTo ?? null },
    );
    if (!check.ok) {
      const message = check.message ?? 'The address is not a business email';
      await this.deps.queries.insertJob({
        ...job,
        status: 'rejected',
        rejection_reason: check.reason ?? null,
        error_message: message,
        completed_at: now,
      });
      await this.deps.onJobEnded?.(job.account_id, presentJob({ ...job, status: 'rejected', error_message: message, completed_at: now }));
      this.ended(job, 'rejected', now);
      return { kind: 'rejected', jobId: job.id, message, reason: check.reason };
    }
    // The lead is counted and its job inserted together, and the count refuses past the quota: concurrent requests
    // cannot pass the quota together, and a refused one leaves nothing behind.
    const limits = this.deps.settings.plans[principal.plan];
    // A synchronous lead whose account has a free slot starts at once: its job is stored as `scraping` already.
    const slotHeld = !options.respondAsync && this.deps.slots.tryAcquire(principal.accountId, limits.concurrentLeads);
    const stored: LeadJobRow = slotHeld ? { ...job, status: 'scraping', scraping_at: now } : job;
    let counted: boolean;
    try {
      counted = await this.deps.queries.insertJobWithinQuota(stored, limits.monthlyLeads);
    } catch (error) {
      if (slotHeld) this.deps.slots.release(principal.accountId);
      throw error;
    }
    if (!counted) {
      if (slotHeld) this.deps.slots.release(principal.accountId);
      this.metrics.refused('monthly_quota');
      throw quotaExceeded(principal.plan, limits.monthlyLeads);
    }
    if (options.respondAsync) {
      this.deps.onQueued?.();
      return { kind: 'queued', jobId: job.id };
    }
    let finished: LeadJobRow;
    try {
      finished = await this.run(stored, template, { slotHeld });
    } finally {
      if (slotHeld) this.deps.slots.release(principal.accountId);
    }
    // A completed job has its email, a failed one its error message (run() writes them with the status).
    if (finished.status === 'completed') {
      return {
        kind: 'completed',
        jobId: finished.id,
        subject: finished.email_subject ?? '',
        body: finished.email_body ?? '',
        sentTo: finished.send_to,
      };
    }
    return { kind: 'generation_failed', jobId: finished.id, message: finished.error_message ?? '' };
  }

  /**
   * Runs a queued job the worker has claimed as `leaseOwner`, holding the account's slot for it. Throws
   * LeaseLostError when another claim took the job over meanwhile (nothing more is written then).
   */
  async runClaimed(job: LeadJobRow, leaseOwner: string): Promise<LeadJobRow> {
    const template = job.template_id ? await this.deps.templates.forLead(job.account_id, job.template_id).catch(() => undefined) : undefined;
    return this.run(job, template ?? (await this.deps.templates.forLead(job.account_id, undefined)), { leaseOwner, slotHeld: true });
  }

  /** Research and generation; every step is stored as it happens. Returns the job as it ended. */
  private async run(job: LeadJobRow, template: LeadTemplateTable | undefined, options: RunOptions = {}): Promise<LeadJobRow> {
    const { queries } = this.deps;
    let current = job;
    const step = async (changes: Partial<LeadJobRow>) => {
      current = { ...current, ...changes, updated_at: nowIso() };
      const written = await queries.updateJob(job.id, { ...changes, updated_at: current.updated_at }, options.leaseOwner);
      if (!written && options.leaseOwner !== undefined) throw new LeaseLostError(job.id);
    };
    try {
      // A batch's lead had only the checks that need no network when it was accepted: the mail-server look-up is
      // its job's first step. An address found unable to receive mail ends the job rejected, and its lead given back.
      if (job.batch_id !== null && current.status === 'pending') {
        const check = await this.deps.checkEmail(job.email);
        if (!check.ok) return await this.reject(job, check, options.leaseOwner);
      }
      // Read beside the company lookup when nothing waits for it first (a job that holds its slot already).
      const senderRead = this.sender(job.account_id);
      senderRead.catch(() => undefined);
      const inSlot = async <T>(work: () => Promise<T>) =>
        options.slotHeld ? work() : this.deps.slots.run(job.account_id, this.deps.settings.plans[(await senderRead).plan].concurrentLeads, work);
      const email = await inSlot(async () => {
        // Research starts now that the lead has its slot (until then it waited, pending).
        if (current.status === 'pending') await step({ status: 'scraping', scraping_at: nowIso() });
        const company = await this.deps.companies.lookup(job.domain);
        await step({
          status: 'generating',
          generating_at: nowIso(),
          company: JSON.stringify(company.profile),
          research_note: company.fallbackReason ? `Company site not used: ${company.fallbackReason}` : null,
        });
        const facts: LeadFacts = {
          firstName: job.first_name,
          lastName: job.last_name,
          email: job.email,
          domain: job.domain,
          company: company.profile,
          sender: await senderRead,
        };
        return this.deps.writer.write(facts, template ? { subject: template.subject, body: template.body } : undefined);
      });
      const written = { email_subject: email.subject, email_body: email.body, generator: email.generator };
      if (current.send_to && this.deps.mailer) {
        await step({ ...written, status: 'sending', sending_at: nowIso() });
        await this.deps.mailer.send({ to: current.send_to, subject: email.subject, text: email.body });
        await step({ status: 'completed', completed_at: nowIso(), lease_until: null });
      } else {
        await step({ ...written, status: 'completed', completed_at: nowIso(), lease_until: null });
      }
      this.ended(job, 'completed', current.completed_at!);
    } catch (error) {
      if (error instanceof LeaseLostError) throw error;
      // A failed job's lead does not count against the monthly quota: it is given back as the job fails.
      const at = nowIso();
      const ended = { error_message: failureMessage(error), completed_at: at, lease_until: null, updated_at: at };
      const failed = await queries.failJob(job, ended, options.leaseOwner);
      if (!failed && options.leaseOwner !== undefined) throw new LeaseLostError(job.id);
      if (failed) this.ended(job, 'failed', at);
      current = { ...current, ...ended, status: 'failed' };
      await this.deps.onJobEnded?.(job.account_id, presentJob(current));
      if (!(error instanceof LlmError) && !(error instanceof MailError)) throw error;
      return current;
    }
    await this.deps.onJobEnded?.(job.account_id, presentJob(current));
    return current;
  }

  /** Ends a queued job rejected (its lead given back to the quota), unless another claim took it over. */
  private async reject(job: LeadJobRow, check: EmailCheck, leaseOwner: string | undefined): Promise<LeadJobRow> {
    const at = nowIso();
    const message = check.message ?? 'The address is not a business email';
    const ended = { error_message: message, rejection_reason: check.reason ?? null, completed_at: at, lease_until: null, updated_at: at };
    const rejected = await this.deps.queries.failJob(job, ended, leaseOwner, 'rejected');
    if (!rejected && leaseOwner !== undefined) throw new LeaseLostError(job.id);
    const current: LeadJobRow = { ...job, ...ended, status: 'rejected' };
    if (rejected) {
      this.ended(job, 'rejected', at);
      await this.deps.onJobEnded?.(job.account_id, presentJob(current));
    }
    return current;
  }

  /**
   * The email a template would give for a sample lead (the dashboard's preview): the template is checked first, the
   * research is a fixed sample company (nothing is fetched), and the writer is the one leads get (built-in or LLM).
   */
  async preview(accountId: number, template: TemplateText, lead: Partial<LeadInput> = {}): Promise<WrittenEmail> {
    const checked = checkedTemplate({ name: 'preview', ...template });
    const sender = await this.sender(accountId);
    const facts: LeadFacts = {
      firstName: lead.firstName?.trim() || 'Ada',
      lastName: lead.lastName?.trim() || 'Lovelace',
      email: lead.email?.trim() || 'ada@zeppelin-works.example',
      domain: domainPart(lead.email?.trim() || 'ada@zeppelin-works.example'),
      company: SAMPLE_COMPANY,
      sender,
    };
    return this.deps.writer.write(facts, { subject: checked.subject, body: checked.body });
  }

  /** Who signs the email, and the account's plan (which bounds its leads in flight). */
  private async sender(accountId: number): Promise<LeadFacts['sender'] & { plan: PlanName }> {
    const account = await this.deps.queries.sender(accountId);
    const ownerName = [account.firstname, account.lastname].filter(Boolean).join(' ').trim();
    return {
      plan: account.plan,
      name: account.sender_name || ownerName || `The ${account.name} team`,
      company: account.name,
      offer: account.sender_offer ?? '',
    };
  }

  async getJob(principal: Principal, id: string) {
    assertLeadApiUser(principal);
    const job = await this.deps.queries.findJob(principal.accountId, id.toLowerCase());
    if (!job) throw notFound(`Job ${id}`);
    const company = job.company ? (JSON.parse(job.company) as CompanyProfile) : null;
    return {
      ...presentJob(job),
      template_id: job.template_id,
      send_to: job.send_to,
      email_subject: job.email_subject,
      email_body: job.email_body,
      company,
      research_note: job.research_note,
      generator: job.generator,
      rejection_reason: job.rejection_reason,
      transitions: transitions(job),
    };
  }

  async listJobs(principal: Principal, query: { limit: number; page: number; status?: string; batch?: string }) {
    assertLeadApiUser(principal);
    const { total, jobs } = await this.deps.queries.pageOfJobs(principal.accountId, {
      statuses: query.status ? statusesOf(query.status) : undefined,
      batchId: query.batch?.toLowerCase(),
      limit: query.limit,
      offset: (query.page - 1) * query.limit,
    });
    return { jobs: jobs.map(presentJob), pagination: { total, page: query.page, limit: query.limit, pages: Math.ceil(total / query.limit) } };
  }

  /** The plan's limits and this month's use of the quota (for the dashboard). */
  async usage(accountId: number, plan: Principal['plan']) {
    const month = nowIso().slice(0, 7);
    const limits = this.deps.settings.plans[plan];
    return {
      plan,
      month,
      leads: await this.deps.queries.monthlyUsage(accountId, month),
      monthly_leads: limits.monthlyLeads,
      requests_per_minute: limits.requestsPerMinute,
    };
  }
}

/** The lead API belongs to the account: its owner's keys, not those of portal clients. */
export function assertLeadApiUser(principal: Principal): void {
  if (principal.kind !== 'owner') throw forbidden('The lead API is for the account owner’s keys; portal client keys cannot use it');
}

/** The lead's fields trimmed (the template id lower-cased), or a 400 naming each empty or overlong one. */
export function normalizedLead(input: LeadInput): LeadInput {
  const firstName = input.firstName.trim();
  const lastName = input.lastName.trim();
  const email = input.email.trim();
  const problems: FieldProblem[] = [];
  if (firstName === '') problems.push({ path: '/firstName', message: 'must not be empty' });
  if (lastName === '') problems.push({ path: '/lastName', message: 'must not be empty' });
  if (email === '') problems.push({ path: '/email', message: 'must not be empty' });
  if (firstName.length > NAME_MAX_LENGTH) problems.push({ path: '/firstName', message: `must be at most ${NAME_MAX_LENGTH} characters` });
  if (lastName.length > NAME_MAX_LENGTH) problems.push({ path: '/lastName', message: `must be at most ${NAME_MAX_LENGTH} characters` });
  if (problems.length > 0) throw validationError(problems);
  return { firstName, lastName, email, ...(input.templateId === undefined ? {} : { templateId: input.templateId.toLowerCase() }) };
}

/** 429 quota_exceeded, with Retry-After until the quota renews on the 1st of next month (UTC). */
export function quotaExceeded(plan: PlanName, quota: number): AppError {
  const now = new Date();
  const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return new AppError(
    'quota_exceeded',
    `The ${plan} plan includes ${quota} leads a month, all used; the quota renews on ${new Date(nextMonth).toISOString().slice(0, 10)}`,
    [],
    Math.ceil((nextMonth - now.getTime()) / 1000),
  );
}

function domainPart(email: string): string {
  const at = email.lastIndexOf('@');
  return at === -1
    ? ''
    : email
        .slice(at + 1)
        .toLowerCase()
        .slice(0, 255);
}

function failureMessage(error: unknown): string {
  if (error instanceof LlmError) return `The email could not be generated: ${error.message}`;
  if (error instanceof MailError) return `The email could not be sent: ${error.message}`;
  return 'The job failed on our side';
}

export function presentJob(job: LeadJobRow): JobView {
  return {
    id: job.id,
    first_name: job.first_name,
    last_name: job.last_name,
    email: job.email,
    domain: job.domain,
    status: job.status,
    created_at: job.created_at,
    updated_at: job.updated_at,
    completed_at: job.completed_at,
    error_message: job.error_message,
    batch_id: job.batch_id,
  };
}

function transitions(job: LeadJobRow) {
  const steps: { status: LeadJobStatus; at: string | null }[] = [
    { status: 'pending', at: job.created_at },
    { status: 'scraping', at: job.scraping_at },
    { status: 'generating', at: job.generating_at },
    { status: 'sending', at: job.sending_at },
  ];
  if (job.status === 'completed' || job.status === 'failed' || job.status === 'rejected') steps.push({ status: job.status, at: job.completed_at });
  return steps.filter((step): step is { status: LeadJobStatus; at: string } => step.at !== null);
}
