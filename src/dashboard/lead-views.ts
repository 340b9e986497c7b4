import type { JobView } from '../leads/service.js';
import type { TemplateService } from '../leads/templates/service.js';
import { html, type SafeHtml } from './html.js';
import { badge, table, when } from './layout.js';

// What the lead pages share: their tabs, the jobs table, and the region that follows running work.

/** How often a page showing running jobs asks for their news. */
const LIVE_SECONDS = 1;

/** A job's statuses before it ends. */
export const RUNNING = new Set<string>(['pending', 'scraping', 'generating', 'sending']);

export const jobPath = (id: string) => `/leads/jobs/${id}`;

export function leadTabs(current: 'try' | 'jobs' | 'batches'): SafeHtml {
  const tabs = [
    { key: 'try', label: 'Try it', href: '/leads' },
    { key: 'jobs', label: 'Jobs', href: '/leads/jobs' },
    { key: 'batches', label: 'Batches', href: '/leads/batches' },
  ] as const;
  return html`<nav aria-label="Leads"><ul class="tabs">${tabs.map(
    (tab) => html`<li><a href="${tab.href}"${tab.key === current ? html` aria-current="page"` : ''}>${tab.label}</a></li>`,
  )}</ul></nav>`;
}

/**
 * A part of a page that follows running work: while `live`, the script fetches the page again every few seconds
 * and swaps this element for its new version (no reload, focus and scroll kept), and stops once it comes back
 * without the attribute. Without JavaScript, reloading the page shows the same.
 */
export function liveRegion(id: string, live: boolean, content: SafeHtml): SafeHtml {
  return html`<div id="${id}"${live ? html` data-live-seconds="${LIVE_SECONDS}"` : ''}>${content}</div>`;
}

export function jobsTable(jobs: JobView[], caption: string): SafeHtml {
  return table(
    ['Lead', 'Email', 'Status', 'Created', 'Ended'],
    jobs.map(
      (job) => html`<tr>
<td class="title"><a href="${jobPath(job.id)}">${job.first_name} ${job.last_name}</a></td>
<td class="mono">${job.email}</td>
<td>${badge(job.status)}</td>
<td>${when(job.created_at)}</td>
<td>${when(job.completed_at)}</td>
</tr>`,
    ),
    caption,
  );
}

/** The template choices of a lead form: the account's default (named), then each template. */
export async function templateOptions(templates: TemplateService, accountId: number) {
  const list = await templates.list(accountId);
  const fallback = list.find((template) => template.is_default);
  return [
    { value: '', label: fallback ? `Account default (${fallback.name})` : 'Account default (none: the built-in generator)' },
    ...list.map((template) => ({ value: template.id, label: template.name })),
  ];
}
