import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { planRateLimitStore } from '../../leads/rate-limit.js';
import { JobParams, ProcessLeadBody } from '../../leads/schemas.js';
import type { JobView } from '../../leads/service.js';
import {
  bodyProblems,
  checked,
  controlCharacterProblems,
  type FormBody,
  formAsApiInput,
  formBody,
  pageNumber,
  problemsOf,
  queryText,
  text,
} from '../forms.js';
import { html, linkUrl } from '../html.js';
import { badge, checkboxes, csrfInput, emailView, errorSummary, field, type FormErrors, notice, pager, select, when } from '../layout.js';
import { noticeOf } from '../notices.js';
import type { DashboardOptions } from '../options.js';
import { render } from '../render.js';
import { ownerPrincipal, viewerOf } from '../session.js';
import { jobPath, jobsTable, leadTabs, liveRegion, RUNNING, templateOptions } from '../lead-views.js';

const JOBS_PER_PAGE = 20;
const RECENT_JOBS = 5;

const LABELS = { firstName: 'First name', lastName: 'Last name', email: 'Email', templateId: 'Template' };
const STATUS_FILTERS = ['pending', 'processing', 'scraping', 'generating', 'sending', 'completed', 'failed', 'rejected'] as const;

const STATUS_TEXT: Record<JobView['status'], string> = {
  pending: 'Waiting for a worker.',
  scraping: 'Reading the company’s website.',
  generating: 'Writing the email.',
  sending: 'Sending the email to you.',
  completed: 'Done.',
  failed: 'Failed.',
  rejected: 'Refused: not a business email address.',
};

interface LeadForm {
  firstName: string;
  lastName: string;
  email: string;
  templateId: string;
  sendToMe: boolean;
  errors?: FormErrors;
  /** A refused address still makes a job (ended `rejected`), as in the API. */
  rejectedJobId?: string;
}

function readLeadForm(body: FormBody): LeadForm {
  return {
    firstName: text(body, 'firstName'),
    lastName: text(body, 'lastName'),
    email: text(body, 'email').trim(),
    templateId: text(body, 'templateId').trim(),
    sendToMe: checked(body, 'send_to_me'),
  };
}

/** The form as the lead API's input: an empty template means the account's default. */
function leadInput(form: LeadForm): { firstName: string; lastName: string; email: string; templateId?: string } {
  return {
    firstName: form.firstName,
    lastName: form.lastName,
    email: form.email,
    ...(form.templateId ? { templateId: form.templateId } : {}),
  };
}

async function tryPage(request: FastifyRequest, reply: FastifyReply, status: number, options: DashboardOptions, form?: LeadForm) {
  const principal = ownerPrincipal(request);
  const viewer = viewerOf(request);
  const [templateChoices, usage, recent] = await Promise.all([
    templateOptions(options.templates, principal.accountId),
    options.leads.usage(principal.accountId, principal.plan),
    options.leads.listJobs(principal, { limit: RECENT_JOBS, page: 1 }),
  ]);
  const running = recent.jobs.some((job) => RUNNING.has(job.status));
  return render(request, reply, status, {
    title: 'Leads',
    section: 'leads',
    body: html`<h1>Leads</h1>
${leadTabs('try')}
${notice(noticeOf(request))}
<p class="muted">Process a lead exactly as <code>POST /api/client/process-lead</code> does: the business-email check, the
company research and the email, as a job you can follow. It counts against the plan’s quota:
<strong>${usage.leads} of ${usage.monthly_leads} leads</strong> used in ${usage.month}.</p>
${errorSummary(form?.errors, LABELS)}
${form?.rejectedJobId ? html`<p class="muted">The refusal is recorded as a job: <a href="${jobPath(form.rejectedJobId)}">see it</a>.</p>` : ''}
<form method="post" action="/leads" class="stack card narrow-form">
${csrfInput(request.dashboard.csrf)}
${field({ name: 'firstName', label: 'First name', value: form?.firstName, errors: form?.errors, required: true, maxLength: 100, autocomplete: 'off' })}
${field({ name: 'lastName', label: 'Last name', value: form?.lastName, errors: form?.errors, required: true, maxLength: 100, autocomplete: 'off' })}
${field({ name: 'email', label: 'Email', type: 'email', value: form?.email, errors: form?.errors, required: true, maxLength: 320, autocomplete: 'off', hint: 'A business address: free-mail and disposable domains are refused.' })}
${select({ name: 'templateId', label: 'Template', options: templateChoices, value: form?.templateId ?? '', errors: form?.errors })}
${
  options.canSendEmail
    ? checkboxes({
        legend: 'Demo',
        boxes: [
          {
            name: 'send_to_me',
            label: `Send it to me at ${viewer.email} (the job passes “sending”)`,
            checked: form?.sendToMe ?? false,
            id: 'field-send_to_me',
          },
        ],
      })
    : ''
}
<div><button type="submit">Process lead</button></div>
</form>
<h2>Recent jobs</h2>
${liveRegion(
  'recent-jobs',
  running,
  recent.jobs.length === 0
    ? html`<p class="muted">No jobs yet.</p>`
    : html`${jobsTable(recent.jobs, 'Recent jobs')}<p><a href="/leads/jobs">All jobs</a></p>`,
)}`,
  });
}

async function jobsPage(request: FastifyRequest, reply: FastifyReply, options: DashboardOptions) {
  const principal = ownerPrincipal(request);
  const statusText = queryText(request, 'status') ?? '';
  const filterError = statusText === '' || (STATUS_FILTERS as readonly string[]).includes(statusText) ? undefined : 'Is not a status';
  const status = filterError ? undefined : statusText || undefined;
  const page = pageNumber(queryText(request, 'page'));
  const result = await options.leads.listJobs(principal, { limit: JOBS_PER_PAGE, page, ...(status ? { status } : {}) });
  const href = (to: number) => `/leads/jobs?${new URLSearchParams({ ...(status ? { status } : {}), page: String(to) }).toString()}`;
  const running = result.jobs.some((job) => RUNNING.has(job.status));
  const { total } = result.pagination;
  return render(request, reply, filterError ? 400 : 200, {
    title: 'Jobs · Leads',
    section: 'leads',
    body: html`<h1>Leads</h1>
${leadTabs('jobs')}
<form method="get" action="/leads/jobs" class="inline card">
${select({
  name: 'status',
  label: 'Status',
  value: status ?? '',
  errors: filterError ? { status: filterError } : undefined,
  options: [
    { value: '', label: 'all statuses' },
    ...STATUS_FILTERS.map((value) => ({ value, label: value === 'processing' ? 'processing (scraping, generating or sending)' : value })),
  ],
})}
<div><button type="submit">Filter</button>${status ? html` <a href="/leads/jobs">Show all</a>` : ''}</div>
</form>
${liveRegion(
  'jobs-live',
  running,
  html`<p role="status">${total} ${total === 1 ? 'job' : 'jobs'}${status ? html` with status ${status}` : ''}, newest first.</p>
${
  result.jobs.length === 0
    ? html`<p class="muted">${total > 0 ? 'There are no jobs on this page.' : status ? 'No job has this status.' : 'No jobs yet: process a lead on the “Try it” tab or through the API.'}</p>`
    : jobsTable(result.jobs, 'Jobs')
}
${pager(page, result.pagination.pages, total, href)}`,
)}`,
  });
}

async function jobPage(request: FastifyRequest, reply: FastifyReply, options: DashboardOptions, id: string) {
  const principal = ownerPrincipal(request);
  const job = await options.leads.getJob(principal, id);
  const template = job.template_id
    ? await options.templates.get(principal.accountId, job.template_id).catch((error: unknown) => {
        if (error instanceof AppError && error.code === 'not_found') return undefined;
        throw error;
      })
    : undefined;
  const running = RUNNING.has(job.status);
  const sent = job.transitions.some((step) => step.status === 'sending');
  const company = job.company;
  const website = linkUrl(company?.links.website);
  return render(request, reply, 200, {
    title: `${job.first_name} ${job.last_name} · Jobs`,
    section: 'leads',
    body: html`<p class="crumbs"><a href="/leads/jobs">Jobs</a> › ${job.first_name} ${job.last_name}</p>
<h1>${job.first_name} ${job.last_name}</h1>
${notice(noticeOf(request))}
${liveRegion(
  'job-live',
  running,
  html`<section class="card" aria-labelledby="job-title">
<h2 id="job-title">Job</h2>
<p role="status">${badge(job.status)} ${STATUS_TEXT[job.status]}${running ? html` <span class="muted">This page follows it.</span>` : ''}</p>
<dl class="facts">
<dt>Email</dt><dd class="mono">${job.email}</dd>
<dt>Template</dt><dd>${template ? html`<a href="/templates/${template.id}">${template.name}</a>` : job.template_id ? 'a deleted template' : 'none'}</dd>
<dt>Job id</dt><dd class="mono">${job.id}</dd>
</dl>
<h3>Steps</h3>
<ol class="steps">${job.transitions.map((step) => html`<li>${badge(step.status)} <time datetime="${step.at}">${when(step.at, 'seconds')}</time></li>`)}</ol>
</section>
${
  job.email_subject !== null && job.email_body !== null && !running
    ? html`<section class="card" aria-labelledby="email-title">
<h2 id="email-title">Generated email</h2>
<p class="muted">Written by ${job.generator === 'llm' ? 'the LLM' : 'the built-in generator'}${
        sent
          ? job.status === 'completed'
            ? html`; <strong>sent to you by email</strong>`
            : html`; <strong>not sent</strong>: the delivery failed`
          : ''
      }.</p>
${emailView(job.email_subject, job.email_body)}
</section>`
    : ''
}
${job.status === 'failed' ? html`<div class="alert" role="alert"><strong>The job failed.</strong> ${job.error_message ?? ''}</div>` : ''}
${
  job.status === 'rejected'
    ? html`<div class="alert" role="alert"><strong>Not a business email.</strong> ${job.error_message ?? ''}${
        job.rejection_reason ? html` <span class="muted">(${job.rejection_reason})</span>` : ''
      }</div>`
    : ''
}
${
  company
    ? html`<section class="card" aria-labelledby="company-title">
<h2 id="company-title">Company research</h2>
<dl class="facts">
<dt>Company</dt><dd>${company.name}</dd>
<dt>Read from</dt><dd>${company.source === 'site' ? 'its website' : 'its domain only'}${job.research_note ? html` <span class="muted">(${job.research_note})</span>` : ''}</dd>
${company.description ? html`<dt>Description</dt><dd>${company.description}</dd>` : ''}
${company.product_description ? html`<dt>Products</dt><dd>${company.product_description}</dd>` : ''}
${company.industry.length > 0 ? html`<dt>Industry</dt><dd>${company.industry.join(', ')}</dd>` : ''}
${website ? html`<dt>Website</dt><dd class="mono"><a href="${website}" rel="noopener noreferrer">${website}</a></dd>` : ''}
</dl>
</section>`
    : ''
}`,
)}`,
  });
}

/** The try-it form spends the lead API's requests a minute: the same plan limit, the same count as the API's. */
async function leadRateLimiter(app: FastifyInstance, options: DashboardOptions) {
  const { plans } = options.leadRateLimit;
  await app.register(rateLimit, {
    global: false,
    timeWindow: 60_000,
    max: async (request) => plans[ownerPrincipal(request).plan].requestsPerMinute,
    keyGenerator: (request) => `account:${ownerPrincipal(request).accountId}`,
    ...planRateLimitStore(options.leadRateLimit),
  });
  const check = app.createRateLimit();
  return async (request: FastifyRequest): Promise<void> => {
    const verdict = await check(request);
    if (verdict.isAllowed || !verdict.isExceeded) return;
    options.leadRateLimit.metrics?.refused('requests_per_minute');
    throw new AppError(
      'rate_limited',
      `The ${ownerPrincipal(request).plan} plan allows ${verdict.max} lead requests a minute; try again in ${verdict.ttlInSeconds} seconds.`,
      [],
      Math.max(1, verdict.ttlInSeconds),
    );
  };
}

export async function registerLeadPages(app: FastifyInstance, options: DashboardOptions): Promise<void> {
  const { leads } = options;
  const limitLeadRequests = await leadRateLimiter(app, options);

  app.get('/leads', async (request, reply) => tryPage(request, reply, 200, options));

  // The form shows control characters at the field itself (controlCharacterProblems), not as the generic 400.
  app.post(
    '/leads',
    {
      schema: { body: ProcessLeadBody },
      attachValidation: true,
      preValidation: formAsApiInput((body) => leadInput(readLeadForm(body))),
      config: { controlCharactersAtFields: ['firstName', 'lastName', 'email', 'templateId'] },
    },
    async (request, reply) => {
      const principal = ownerPrincipal(request);
      await limitLeadRequests(request);
      const form = readLeadForm(formBody(request));
      const input = leadInput(form);
      const problems = { ...controlCharacterProblems(input), ...bodyProblems(request) };
      if (Object.keys(problems).length > 0) return tryPage(request, reply, 400, options, { ...form, errors: problems });
      const sendTo = options.canSendEmail && form.sendToMe ? viewerOf(request).email : undefined;
      let outcome;
      try {
        outcome = await leads.processLead(principal, input, { respondAsync: true, ...(sendTo ? { sendTo } : {}) });
      } catch (error) {
        const errors = problemsOf(error);
        if (!errors) throw error;
        return tryPage(request, reply, 400, options, { ...form, errors });
      }
      if (outcome.kind === 'rejected') {
        return tryPage(request, reply, 400, options, { ...form, errors: { email: outcome.message }, rejectedJobId: outcome.jobId });
      }
      return reply.redirect(`${jobPath(outcome.jobId)}?notice=lead-queued`, 303);
    },
  );

  app.get('/leads/jobs', async (request, reply) => jobsPage(request, reply, options));

  app.get('/leads/jobs/:id', { schema: { params: JobParams } }, async (request, reply) => {
    const { id } = request.params as { id: string };
    return jobPage(request, reply, options, id);
  });
}
