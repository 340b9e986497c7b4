import multipart, { type MultipartFile } from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { resultsCsv } from '../../leads/batches/results-csv.js';
import { BatchParams } from '../../leads/batches/schemas.js';
import type { BatchView } from '../../leads/batches/service.js';
import { type FileLead, leadFileError } from '../../leads/batches/lead-file.js';
import { pathOfNul } from '../../http/nul.js';
import { MAX_BATCH_LEADS, MAX_BATCH_NAME_LENGTH, MAX_LEAD_FILE_BYTES } from '../../leads/batches/limits.js';
import { type FormBody, formBody, pageNumber, problemsOf, queryText, text } from '../forms.js';
import { html, type SafeHtml } from '../html.js';
import { badge, csrfInput, errorSummary, type FormErrors, notice, pager, select, table, when } from '../layout.js';
import { jobsTable, leadTabs, liveRegion, templateOptions } from '../lead-views.js';
import { noticeOf } from '../notices.js';
import type { DashboardOptions } from '../options.js';
import { render } from '../render.js';
import { ownerPrincipal } from '../session.js';

const BATCHES_PER_PAGE = 20;
const JOBS_PER_PAGE = 20;
/** Lines of the file shown in the preview, and refused lines listed at most. */
const PREVIEW_ROWS = 10;
const REFUSED_ROWS = 200;
/** The preview's leads travel back with the confirmation as JSON: 1,000 leads of the longest fields fit. */
const MAX_LEADS_FIELD_BYTES = 1024 * 1024;

const LABELS = { file: 'CSV file', templateId: 'Template', name: 'Name' };

/** An uploaded file as the multipart parser hands it to the route (onFile below). */
interface Upload {
  filename: string;
  bytes: Buffer;
  /** Longer than the limit: the bytes stop there. */
  tooLarge: boolean;
}

const batchPath = (id: string) => `/leads/batches/${id}`;

function isUpload(value: unknown): value is Upload {
  return typeof value === 'object' && value !== null && Buffer.isBuffer((value as Upload).bytes);
}

function progressBar(batch: BatchView): SafeHtml {
  return html`<progress value="${batch.progress.ended}" max="${Math.max(1, batch.progress.jobs)}" aria-label="Jobs ended">${batch.progress.percent}%</progress>`;
}

function countsText(batch: BatchView): string {
  const parts = Object.entries(batch.counts)
    .filter(([, count]) => count > 0)
    .map(([status, count]) => `${count} ${status}`);
  if (batch.not_accepted.length > 0) parts.push(`${batch.not_accepted.length} not accepted`);
  return parts.join(' · ') || 'no jobs';
}

function batchTitle(batch: BatchView): string {
  return batch.name ?? `Batch of ${when(batch.created_at)}`;
}

async function batchesPage(request: FastifyRequest, reply: FastifyReply, status: number, options: DashboardOptions, errors?: FormErrors) {
  const principal = ownerPrincipal(request);
  const page = pageNumber(queryText(request, 'page'));
  const [list, usage, templates] = await Promise.all([
    options.batches.list(principal, { limit: BATCHES_PER_PAGE, page }),
    options.leads.usage(principal.accountId, principal.plan),
    templateOptions(options.templates, principal.accountId),
  ]);
  const running = list.batches.some((batch) => batch.status === 'processing');
  const { total } = list.pagination;
  return render(request, reply, status, {
    title: 'Batches · Leads',
    section: 'leads',
    body: html`<h1>Leads</h1>
${leadTabs('batches')}
${notice(noticeOf(request))}
<section class="card" aria-labelledby="upload-title">
<h2 id="upload-title">Upload a list</h2>
<p class="muted">A CSV file whose first line names the <strong>first name</strong>, <strong>last name</strong> and
<strong>email</strong> columns (other columns are ignored), up to ${MAX_BATCH_LEADS} leads and ${MAX_LEAD_FILE_BYTES / 1024 / 1024} MB,
UTF-8 or UTF-16. You see what will be queued and what will be refused before anything is. Each lead counts against the
plan: <strong>${usage.leads} of ${usage.monthly_leads}</strong> used in ${usage.month}.</p>
${errorSummary(errors, LABELS)}
<form method="post" action="/leads/batches/preview" enctype="multipart/form-data" class="stack narrow-form">
${csrfInput(request.dashboard.csrf)}
<div class="field">
<label for="field-file">CSV file</label>
<input id="field-file" name="file" type="file" accept=".csv,.tsv,.txt,text/csv" required${
      errors?.file ? html` aria-invalid="true" aria-describedby="field-file-error"` : ''
    }>
${errors?.file ? html`<span class="error" id="field-file-error">${errors.file}</span>` : ''}
</div>
${select({ name: 'templateId', label: 'Template', options: templates, value: '', errors })}
<div><button type="submit">Preview</button></div>
</form>
</section>
<h2>Batches</h2>
${liveRegion(
  'batches-live',
  running,
  list.batches.length === 0
    ? html`<p class="muted">No batches yet.</p>`
    : html`${table(
        ['Batch', 'Created', 'Status', 'Progress', 'Jobs'],
        list.batches.map(
          (batch) => html`<tr>
<td class="title"><a href="${batchPath(batch.id)}">${batchTitle(batch)}</a></td>
<td>${when(batch.created_at)}</td>
<td>${badge(batch.status)}</td>
<td>${progressBar(batch)} ${batch.progress.percent}%</td>
<td>${countsText(batch)}</td>
</tr>`,
        ),
        'Batches',
      )}
${pager(page, list.pagination.pages, total, (to) => `/leads/batches?page=${to}`)}`,
)}`,
  });
}

/** What the preview shows of an uploaded file, and sends back with its confirmation. */
async function previewPage(request: FastifyRequest, reply: FastifyReply, options: DashboardOptions, upload: Upload, templateId: string) {
  const principal = ownerPrincipal(request);
  const file = await options.batches.readFile(upload.bytes);
  const screened = await options.batches.screen(principal, file.rows);
  const templates = await templateOptions(options.templates, principal.accountId);
  const queued = Math.min(screened.accepted.length, screened.quotaLeft);
  const leads = screened.accepted.map(({ firstName, lastName, email }) => ({ firstName, lastName, email }));
  const name = upload.filename.slice(0, MAX_BATCH_NAME_LENGTH);
  const leadRows = (rows: FileLead[]) =>
    rows.map((row) => html`<tr><td>${row.line}</td><td>${row.firstName} ${row.lastName}</td><td class="mono">${row.email}</td></tr>`);
  return render(request, reply, 200, {
    title: 'Preview · Batches',
    section: 'leads',
    body: html`<p class="crumbs"><a href="/leads/batches">Batches</a> › Preview</p>
<h1>${name || 'Preview'}</h1>
<p role="status"><strong>${screened.accepted.length}</strong> of ${file.rows.length} ${file.rows.length === 1 ? 'lead' : 'leads'} can be queued;
<strong>${screened.refused.length}</strong> will be refused. Columns read: “${file.columns.firstName}”, “${file.columns.lastName}”, “${file.columns.email}”.</p>
${
  screened.accepted.length > screened.quotaLeft
    ? html`<div class="alert" role="alert">The plan takes ${screened.quotaLeft} more ${screened.quotaLeft === 1 ? 'lead' : 'leads'} this month: the first
${screened.quotaLeft} will be queued and the other ${screened.accepted.length - screened.quotaLeft} not accepted.</div>`
    : ''
}
${
  screened.accepted.length > 0
    ? html`<h2>First leads</h2>
${table(['Line', 'Name', 'Email'], leadRows(screened.accepted.slice(0, PREVIEW_ROWS)), 'First leads')}`
    : ''
}
${
  screened.refused.length > 0
    ? html`<h2>Refused</h2>
${table(
  ['Line', 'Name', 'Email', 'Why'],
  screened.refused
    .slice(0, REFUSED_ROWS)
    .map(
      (row) => html`<tr><td>${row.line}</td><td>${row.firstName} ${row.lastName}</td><td class="mono">${row.email}</td><td>${row.reason}</td></tr>`,
    ),
  'Refused lines',
)}
${screened.refused.length > REFUSED_ROWS ? html`<p class="muted">and ${screened.refused.length - REFUSED_ROWS} more.</p>` : ''}`
    : ''
}
${
  queued > 0
    ? html`<form method="post" action="/leads/batches" enctype="multipart/form-data" class="stack card narrow-form">
${csrfInput(request.dashboard.csrf)}
<input type="hidden" name="leads" value="${JSON.stringify(leads)}">
<div class="field"><label for="field-name">Name</label>
<input id="field-name" name="name" type="text" value="${name}" maxlength="${MAX_BATCH_NAME_LENGTH}"></div>
${select({ name: 'templateId', label: 'Template', options: templates, value: templateId })}
<div><button type="submit">Queue ${queued} ${queued === 1 ? 'lead' : 'leads'}</button> <a href="/leads/batches">Choose another file</a></div>
</form>`
    : html`<p><strong>Nothing can be queued from this file.</strong> <a href="/leads/batches">Choose another file</a></p>`
}`,
  });
}

async function batchPage(request: FastifyRequest, reply: FastifyReply, options: DashboardOptions, id: string) {
  const principal = ownerPrincipal(request);
  const page = pageNumber(queryText(request, 'page'));
  const { batch, jobs, pagination } = await options.batches.jobs(principal, id, { limit: JOBS_PER_PAGE, page });
  const running = batch.status === 'processing';
  const download = `${batchPath(batch.id)}/results`;
  return render(request, reply, 200, {
    title: `${batchTitle(batch)} · Batches`,
    section: 'leads',
    body: html`<p class="crumbs"><a href="/leads/batches">Batches</a> › ${batchTitle(batch)}</p>
<h1>${batchTitle(batch)}</h1>
${notice(noticeOf(request))}
${liveRegion(
  'batch-live',
  running,
  html`<section class="card" aria-labelledby="progress-title">
<h2 id="progress-title">Progress</h2>
<p role="status">${badge(batch.status)} ${progressBar(batch)} <strong>${batch.progress.percent}%</strong>:
${batch.progress.ended} of ${batch.progress.jobs} jobs ended${running ? html` <span class="muted">This page follows them.</span>` : ''}</p>
<dl class="facts">
${Object.entries(batch.counts).map(([status, count]) => html`<dt>${status}</dt><dd>${count}</dd>`)}
${batch.not_accepted.length > 0 ? html`<dt>not accepted</dt><dd>${batch.not_accepted.length} (the monthly quota was used up)</dd>` : ''}
</dl>
<p class="buttons"><a class="button" href="${download}.csv" download>Download CSV</a>
<a class="button secondary" href="${download}.csv?bom=true" download>CSV for Excel</a>
<a class="button secondary" href="${download}.json" download>JSON</a></p>
</section>
<h2>Jobs</h2>
${jobs.length === 0 ? html`<p class="muted">No jobs in this batch.</p>` : jobsTable(jobs, 'Jobs of the batch')}
${pager(page, pagination.pages, pagination.total, (to) => `${batchPath(batch.id)}?page=${to}`)}`,
)}
${
  batch.not_accepted.length > 0
    ? html`<h2>Not accepted</h2>
<p class="muted">The monthly lead quota was used up by the leads before these: they have no job and count nothing. Send them
again next month, or on a larger plan.</p>
${table(
  ['#', 'Name', 'Email'],
  batch.not_accepted.map(
    (lead) => html`<tr><td>${lead.position}</td><td>${lead.first_name} ${lead.last_name}</td><td class="mono">${lead.email}</td></tr>`,
  ),
  'Leads not accepted',
)}`
    : ''
}`,
  });
}

/** The confirmed preview's leads, as they were shown (or a 400 when the field did not arrive whole). */
function confirmedLeads(body: FormBody) {
  let leads: unknown;
  try {
    leads = JSON.parse(text(body, 'leads'));
  } catch {
    leads = undefined;
  }
  const valid =
    Array.isArray(leads) &&
    leads.length > 0 &&
    leads.length <= MAX_BATCH_LEADS &&
    leads.every(
      (lead: Record<string, unknown>) =>
        typeof lead === 'object' && lead !== null && ['firstName', 'lastName', 'email'].every((key) => typeof lead[key] === 'string'),
    );
  if (!valid || pathOfNul(leads, '') !== undefined) throw leadFileError('The preview’s leads did not arrive whole: upload the file again.');
  return leads as { firstName: string; lastName: string; email: string }[];
}

/**
 * The batch pages: upload a CSV file, see what will be queued and refused, queue it, follow it, download the
 * results. The two uploads are multipart forms, parsed in this scope only (the rest of the dashboard takes
 * url-encoded forms); the dashboard's session and CSRF checks run after the parts are read.
 */
export async function registerLeadBatchPages(app: FastifyInstance, options: DashboardOptions): Promise<void> {
  app.get('/leads/batches', async (request, reply) => batchesPage(request, reply, 200, options));

  await app.register(async (uploads) => {
    await uploads.register(multipart, {
      attachFieldsToBody: 'keyValues',
      throwFileSizeLimit: false,
      limits: { fileSize: MAX_LEAD_FILE_BYTES, files: 1, fields: 5, fieldSize: MAX_LEADS_FIELD_BYTES, parts: 6 },
      async onFile(part: MultipartFile) {
        const bytes = await part.toBuffer();
        part.value = { filename: part.filename, bytes, tooLarge: part.file.truncated } satisfies Upload;
      },
    });

    // The file is read by the page (readFile), never by the generic control-character check of form fields.
    uploads.post('/leads/batches/preview', { config: { controlCharactersAtFields: ['file'] } }, async (request, reply) => {
      const body = formBody(request) as Record<string, unknown>;
      const upload = body.file;
      const templateId = typeof body.templateId === 'string' ? body.templateId : '';
      if (!isUpload(upload) || upload.bytes.length === 0) return batchesPage(request, reply, 400, options, { file: 'Choose a CSV file.' });
      if (upload.tooLarge) {
        return batchesPage(request, reply, 413, options, {
          file: `The file is larger than ${MAX_LEAD_FILE_BYTES / 1024 / 1024} MB; a batch takes at most ${MAX_BATCH_LEADS} leads.`,
        });
      }
      try {
        return await previewPage(request, reply, options, upload, templateId);
      } catch (error) {
        const errors = problemsOf(error);
        if (!errors) throw error;
        return batchesPage(request, reply, 400, options, errors);
      }
    });

    uploads.post('/leads/batches', async (request, reply) => {
      const principal = ownerPrincipal(request);
      const body = formBody(request);
      const templateId = text(body, 'templateId').trim();
      const name = text(body, 'name').trim();
      try {
        const batch = await options.batches.submit(principal, {
          leads: confirmedLeads(body),
          ...(templateId ? { templateId } : {}),
          ...(name ? { name: name.slice(0, MAX_BATCH_NAME_LENGTH) } : {}),
        });
        return reply.redirect(`${batchPath(batch.id)}?notice=batch-queued`, 303);
      } catch (error) {
        const errors = problemsOf(error) ?? (error instanceof AppError && error.code === 'quota_exceeded' ? { file: error.message } : undefined);
        if (!errors) throw error;
        return batchesPage(request, reply, error instanceof AppError && error.code === 'quota_exceeded' ? 429 : 400, options, errors);
      }
    });
  });

  app.get('/leads/batches/:id', { schema: { params: BatchParams } }, async (request, reply) => {
    const { id } = request.params as { id: string };
    return batchPage(request, reply, options, id);
  });

  app.get('/leads/batches/:id/results.csv', { schema: { params: BatchParams } }, async (request, reply) => {
    const { id } = request.params as { id: string };
    const { batch, results } = await options.batches.results(ownerPrincipal(request), id);
    return reply
      .type('text/csv; charset=utf-8; header=present')
      .header('content-disposition', `attachment; filename="lead-batch-${batch.id}.csv"`)
      .send(resultsCsv(results, { bom: queryText(request, 'bom') === 'true' }));
  });

  app.get('/leads/batches/:id/results.json', { schema: { params: BatchParams } }, async (request, reply) => {
    const { id } = request.params as { id: string };
    const results = await options.batches.results(ownerPrincipal(request), id);
    return reply.header('content-disposition', `attachment; filename="lead-batch-${id}.json"`).send(results);
  });
}
