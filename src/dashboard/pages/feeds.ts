import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppIdAndIdParams, AppIdParams } from '../../http/schemas.js';
import {
  MAX_FEED_URL_LENGTH,
  RssFeedCreateBody,
  type RssFeedCreateInput,
  RssFeedUpdateBody,
  type RssFeedUpdateInput,
  type RssFeedView,
} from '../../portal/feeds/schemas.js';
import { allows } from '../../portal/permissions.js';
import type { PublicationAccess } from '../../portal/publications/service.js';
import { allValues, bodyProblems, checked, type FormBody, formAsApiInput, formBody, ids, problemsOf, queryText, text } from '../forms.js';
import { html, linkUrl, type SafeHtml } from '../html.js';
import { badge, checkboxes, csrfInput, errorSummary, field, type FormErrors, notice, table, textArea, when } from '../layout.js';
import { noticeOf } from '../notices.js';
import type { DashboardOptions } from '../options.js';
import { publicationHeader } from '../publication-header.js';
import { render } from '../render.js';
import { principalOf } from '../session.js';

const FEED_LABELS = { url: 'Feed URL', title: 'Title', description: 'Description', cover: 'Cover image URL', category_ids: 'Categories' };

const FLAGS = [
  { name: 'active', label: 'Active: synchronize it' },
  { name: 'auto_publish', label: 'Publish imported articles at once (otherwise they are hidden until a person publishes them)' },
  { name: 'import_source', label: 'Import the link to the original post' },
  { name: 'import_author', label: 'Import the author' },
  { name: 'show_related_articles', label: 'Show related articles' },
] as const;
type Flag = (typeof FLAGS)[number]['name'];

const feedsPath = (publication: PublicationAccess['publication']) => `/publications/${encodeURIComponent(publication.app_id)}/feeds`;

function categoryBoxes(
  categories: readonly { id: number; name: string }[],
  selected: number[],
  errors: FormErrors | undefined,
  idPrefix: string,
): SafeHtml {
  if (categories.length === 0) return html``;
  return checkboxes({
    legend: 'Categories of the imported articles',
    boxes: categories.map((category) => ({
      name: 'category_ids',
      value: String(category.id),
      label: category.name,
      checked: selected.includes(category.id),
      id: `${idPrefix}-category-${category.id}`,
    })),
    error: errors?.category_ids,
    errorId: `${idPrefix}-category-error`,
  });
}

interface AddFeedForm {
  url: string;
  title: string;
  autoPublish: boolean;
  categoryIds: number[];
  errors?: FormErrors;
}

async function feedsPage(request: FastifyRequest, reply: FastifyReply, status: number, options: DashboardOptions, appId: string, form?: AddFeedForm) {
  const principal = principalOf(request);
  const { publication, level } = await options.publications.access(principal, appId);
  const canManage = allows(level, 'manage_content');
  const [feeds, categories] = await Promise.all([
    options.feeds.list(principal, appId),
    canManage ? options.categories.list(principal, appId) : Promise.resolve([]),
  ]);
  const base = feedsPath(publication);
  const csrf = request.dashboard.csrf;
  return render(request, reply, status, {
    title: `RSS feeds · ${publication.name}`,
    section: 'publications',
    body: html`${publicationHeader(publication, level, 'feeds')}
${notice(noticeOf(request))}
${
  feeds.length === 0
    ? html`<p class="muted">This publication has no RSS feeds yet.</p>`
    : table(
        ['Feed', 'Status', 'Last synchronized', 'Last error', ''],
        feeds.map(
          (feed) => html`<tr>
<td class="title"><a href="${base}/${feed.id}">${feed.title}</a><br><span class="muted mono">${feed.url}</span></td>
<td>${badge(feed.job_status)}${feed.active ? '' : html` <span class="badge">inactive</span>`}</td>
<td>${when(feed.imported_at)}</td>
<td>${feed.last_error ?? '—'}</td>
<td>${canManage ? syncButton(base, feed, csrf) : ''}</td>
</tr>`,
        ),
        'RSS feeds',
      )
}
${
  canManage
    ? html`<section aria-labelledby="add-feed-title">
<h2 id="add-feed-title">Add a feed</h2>
${errorSummary(form?.errors, FEED_LABELS)}
<form method="post" action="${base}" class="stack card">
${csrfInput(csrf)}
${field({ name: 'url', label: 'Feed URL', type: 'url', value: form?.url, errors: form?.errors, required: true, maxLength: MAX_FEED_URL_LENGTH, hint: 'The address of an RSS, Atom or JSON feed, or of a page that links to one. It is fetched once now.' })}
${field({ name: 'title', label: 'Title', value: form?.title, errors: form?.errors, maxLength: 500, hint: 'Optional: the feed’s own title is used otherwise.' })}
${checkboxes({ legend: 'Publishing', boxes: [{ name: 'auto_publish', label: FLAGS[1].label, checked: form?.autoPublish ?? false, id: 'add-auto_publish' }] })}
${categoryBoxes(categories, form?.categoryIds ?? [], form?.errors, 'add')}
<div><button type="submit">Add feed</button></div>
</form>
</section>`
    : html`<p class="muted">Your access (${level}) lets you see feeds; editors, admins and the owner manage them.</p>`
}`,
  });
}

function syncButton(base: string, feed: RssFeedView, csrf: string): SafeHtml {
  return html`<form method="post" action="${base}/${feed.id}/synchronize">${csrfInput(csrf)}<button type="submit" class="secondary small">Synchronize<span class="vh"> ${feed.title}</span></button></form>`;
}

interface FeedForm {
  title: string;
  description: string;
  cover: string;
  flags: Record<Flag, boolean>;
  categoryIds: number[];
  errors?: FormErrors;
}

function formOf(feed: RssFeedView): FeedForm {
  return {
    title: feed.title,
    description: feed.description ?? '',
    cover: feed.cover ?? '',
    flags: Object.fromEntries(FLAGS.map((flag) => [flag.name, feed[flag.name]])) as Record<Flag, boolean>,
    categoryIds: feed.category_ids,
  };
}

/** The counts a synchronization reported, carried to the feed's page by the redirect (numbers only). */
function syncSummary(request: FastifyRequest, feed: RssFeedView): SafeHtml {
  if (queryText(request, 'synced') !== '1') return html``;
  if (feed.job_status === 'failed') {
    return html`<div class="alert" role="alert"><strong>The synchronization failed.</strong> ${feed.last_error ?? ''}</div>`;
  }
  if (queryText(request, 'not_modified') === '1') {
    return html`<p class="notice" role="status">Synchronized: the feed has not changed since the last time.</p>`;
  }
  const count = (name: string) => {
    const value = queryText(request, name);
    return value && /^\d{1,9}$/.test(value) ? Number(value) : 0;
  };
  return html`<p class="notice" role="status">Synchronized: ${count('imported')} imported, ${count('updated')} updated, ${count('unchanged')} unchanged, ${count('skipped')} skipped${
    count('failed') > 0 ? `, ${count('failed')} failed` : ''
  }.</p>`;
}

async function feedPage(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  options: DashboardOptions,
  appId: string,
  id: number,
  form?: FeedForm,
) {
  const principal = principalOf(request);
  const { publication, level } = await options.publications.access(principal, appId);
  const feed = await options.feeds.get(principal, appId, id);
  const canManage = allows(level, 'manage_content');
  const categories = canManage ? await options.categories.list(principal, appId) : [];
  const values = form ?? formOf(feed);
  const base = feedsPath(publication);
  const csrf = request.dashboard.csrf;
  const link = linkUrl(feed.url);
  return render(request, reply, status, {
    title: `${feed.title} · ${publication.name}`,
    section: 'publications',
    body: html`${publicationHeader(publication, level, 'feeds', feed.title)}
${notice(noticeOf(request))}
${syncSummary(request, feed)}
<section class="card" aria-labelledby="feed-title">
<h2 id="feed-title">${feed.title}</h2>
<dl class="facts">
<dt>URL</dt><dd class="mono">${link ? html`<a href="${link}" rel="noopener noreferrer">${feed.url}</a>` : feed.url}</dd>
<dt>Status</dt><dd>${badge(feed.job_status)}${feed.active ? '' : html` <span class="badge">inactive</span>`}</dd>
<dt>Last synchronized</dt><dd>${when(feed.imported_at)}</dd>
<dt>Last error</dt><dd>${feed.last_error ?? '—'}</dd>
<dt>Added</dt><dd>${when(feed.created_at)}</dd>
</dl>
${canManage ? html`<p>${syncButton(base, feed, csrf)}</p>` : ''}
</section>
${
  canManage
    ? html`<section aria-labelledby="edit-feed-title">
<h2 id="edit-feed-title">Settings</h2>
${errorSummary(values.errors, FEED_LABELS)}
<form method="post" action="${base}/${feed.id}" class="stack card">
${csrfInput(csrf)}
${field({ name: 'title', label: 'Title', value: values.title, errors: values.errors, required: true, maxLength: 500 })}
${textArea({ name: 'description', label: 'Description', value: values.description, errors: values.errors, maxLength: 10_000 })}
${field({ name: 'cover', label: 'Cover image URL', type: 'url', value: values.cover, errors: values.errors, maxLength: MAX_FEED_URL_LENGTH, hint: 'Optional: an http or https address.' })}
${checkboxes({ legend: 'Options', boxes: FLAGS.map((flag) => ({ name: flag.name, label: flag.label, checked: values.flags[flag.name], id: `edit-${flag.name}` })) })}
${categoryBoxes(categories, values.categoryIds, values.errors, 'edit')}
<div><button type="submit">Save settings</button></div>
</form>
</section>
<form method="post" action="${base}/${feed.id}/delete" data-confirm="Delete the feed “${feed.title}”? The articles it imported stay.">
${csrfInput(csrf)}<button type="submit" class="danger">Delete this feed</button>
</form>`
    : ''
}`,
  });
}

function readAddFeedForm(body: FormBody): AddFeedForm {
  return {
    url: text(body, 'url').trim(),
    title: text(body, 'title').trim(),
    autoPublish: checked(body, 'auto_publish'),
    categoryIds: ids(allValues(body, 'category_ids')),
  };
}

/** The add form as the API's create input: an empty title leaves the feed's own. */
function addFeedInput(form: AddFeedForm): RssFeedCreateInput {
  return {
    url: form.url,
    ...(form.title ? { title: form.title } : {}),
    auto_publish: form.autoPublish,
    category_ids: form.categoryIds,
  };
}

function readFeedForm(body: FormBody): FeedForm {
  return {
    title: text(body, 'title').trim(),
    description: text(body, 'description'),
    cover: text(body, 'cover').trim(),
    flags: Object.fromEntries(FLAGS.map((flag) => [flag.name, checked(body, flag.name)])) as Record<Flag, boolean>,
    categoryIds: ids(allValues(body, 'category_ids')),
  };
}

/** The settings form as the API's update input: an empty description or cover clears it. */
function feedUpdateInput(form: FeedForm): RssFeedUpdateInput {
  return {
    title: form.title,
    description: form.description.trim() === '' ? null : form.description,
    cover: form.cover === '' ? null : form.cover,
    ...form.flags,
    category_ids: form.categoryIds,
  };
}

export function registerFeedPages(app: FastifyInstance, options: DashboardOptions): void {
  const { feeds } = options;

  app.get('/publications/:app_id/feeds', { schema: { params: AppIdParams } }, async (request, reply) => {
    const { app_id: appId } = request.params as { app_id: string };
    return feedsPage(request, reply, 200, options, appId);
  });

  app.post(
    '/publications/:app_id/feeds',
    {
      schema: { params: AppIdParams, body: RssFeedCreateBody },
      attachValidation: true,
      preValidation: formAsApiInput((body) => addFeedInput(readAddFeedForm(body))),
    },
    async (request, reply) => {
      const { app_id: appId } = request.params as { app_id: string };
      const form = readAddFeedForm(formBody(request));
      const problems = bodyProblems(request);
      if (problems) return feedsPage(request, reply, 400, options, appId, { ...form, errors: problems });
      let created: RssFeedView;
      try {
        created = await feeds.create(principalOf(request), appId, request.body as RssFeedCreateInput);
      } catch (error) {
        const errors = problemsOf(error, 'url');
        if (!errors) throw error;
        return feedsPage(request, reply, 400, options, appId, { ...form, errors });
      }
      return reply.redirect(`/publications/${encodeURIComponent(appId)}/feeds/${created.id}?notice=feed-added`, 303);
    },
  );

  app.get('/publications/:app_id/feeds/:id', { schema: { params: AppIdAndIdParams } }, async (request, reply) => {
    const { app_id: appId, id } = request.params as { app_id: string; id: number };
    return feedPage(request, reply, 200, options, appId, id);
  });

  app.post(
    '/publications/:app_id/feeds/:id',
    {
      schema: { params: AppIdAndIdParams, body: RssFeedUpdateBody },
      attachValidation: true,
      preValidation: formAsApiInput((body) => feedUpdateInput(readFeedForm(body))),
    },
    async (request, reply) => {
      const { app_id: appId, id } = request.params as { app_id: string; id: number };
      const form = readFeedForm(formBody(request));
      const problems = bodyProblems(request);
      if (problems) return feedPage(request, reply, 400, options, appId, id, { ...form, errors: problems });
      try {
        await feeds.update(principalOf(request), appId, id, request.body as RssFeedUpdateInput);
      } catch (error) {
        const errors = problemsOf(error, 'title');
        if (!errors) throw error;
        return feedPage(request, reply, 400, options, appId, id, { ...form, errors });
      }
      return reply.redirect(`/publications/${encodeURIComponent(appId)}/feeds/${id}?notice=feed-saved`, 303);
    },
  );

  app.post('/publications/:app_id/feeds/:id/synchronize', { schema: { params: AppIdAndIdParams } }, async (request, reply) => {
    const { app_id: appId, id } = request.params as { app_id: string; id: number };
    const result = await feeds.synchronize(principalOf(request), appId, id);
    const counts = new URLSearchParams({
      synced: '1',
      imported: String(result.imported),
      updated: String(result.updated),
      unchanged: String(result.unchanged),
      skipped: String(result.skipped),
      failed: String(result.failed),
      not_modified: result.not_modified ? '1' : '0',
    });
    return reply.redirect(`/publications/${encodeURIComponent(appId)}/feeds/${id}?${counts.toString()}`, 303);
  });

  app.post('/publications/:app_id/feeds/:id/delete', { schema: { params: AppIdAndIdParams } }, async (request, reply) => {
    const { app_id: appId, id } = request.params as { app_id: string; id: number };
    await feeds.remove(principalOf(request), appId, id);
    return reply.redirect(`/publications/${encodeURIComponent(appId)}/feeds?notice=feed-deleted`, 303);
  });
}
