import type { FastifyInstance } from 'fastify';
import { AppIdParams } from '../../http/schemas.js';
import { truncate } from '../../content/text.js';
import { pageNumber, queryText } from '../forms.js';
import { html } from '../html.js';
import { notice, pager, table, when } from '../layout.js';
import { noticeOf } from '../notices.js';
import type { DashboardOptions } from '../options.js';
import { managesClients, publicationHeader } from '../publication-header.js';
import { render } from '../render.js';
import { principalOf } from '../session.js';

const ARTICLES_PER_PAGE = 20;
const MAX_FILTER_LENGTH = 200;

export function registerPublicationPages(app: FastifyInstance, { publications, articles }: DashboardOptions): void {
  app.get('/publications', async (request, reply) => {
    const visible = await publications.listVisible(principalOf(request));
    return render(request, reply, 200, {
      title: 'Publications',
      section: 'publications',
      body: html`<h1>Publications</h1>
${notice(noticeOf(request))}
${
  visible.length === 0
    ? html`<div class="card"><p>You hold no publications yet.</p>
<p class="muted">The account owner creates them with <code>npx masthead publication create --account ID --app-id APP_ID</code>, and gives clients a role on them.</p></div>`
    : table(
        ['Publication', 'App ID', 'Your access', ''],
        visible.map((publication) => {
          const base = `/publications/${encodeURIComponent(publication.app_id)}`;
          return html`<tr>
<td class="title"><a href="${base}/articles">${publication.name}</a></td>
<td><code>${publication.app_id}</code></td>
<td>${publication.access_level}</td>
<td><a href="${base}/feeds">RSS feeds</a>${managesClients(publication.access_level) ? html` · <a href="${base}/clients">Clients</a>` : ''}</td>
</tr>`;
        }),
        'Your publications',
      )
}`,
    });
  });

  app.get('/publications/:app_id', { schema: { params: AppIdParams } }, async (request, reply) => {
    const { app_id: appId } = request.params as { app_id: string };
    return reply.redirect(`/publications/${encodeURIComponent(appId)}/articles`, 303);
  });

  app.get('/publications/:app_id/articles', { schema: { params: AppIdParams } }, async (request, reply) => {
    const principal = principalOf(request);
    const { app_id: appId } = request.params as { app_id: string };
    const { publication, level } = await publications.access(principal, appId);
    const page = pageNumber(queryText(request, 'page'));
    const filterText = (queryText(request, 'filter') ?? '').trim();
    const filterError = filterText.length > MAX_FILTER_LENGTH ? `Must be at most ${MAX_FILTER_LENGTH} characters` : undefined;
    const filter = filterError ? '' : filterText;
    // The API's own page query: the same search (word prefixes through the full-text index), newest first.
    const result = await articles.page(principal, appId, page, { per_page: ARTICLES_PER_PAGE, filter: filter || undefined });
    const pages = Math.ceil(result.total / ARTICLES_PER_PAGE);
    const base = `/publications/${encodeURIComponent(publication.app_id)}/articles`;
    const href = (to: number) => `${base}?${new URLSearchParams({ ...(filter ? { filter } : {}), page: String(to) }).toString()}`;
    return render(request, reply, filterError ? 400 : 200, {
      title: `Articles · ${publication.name}`,
      section: 'publications',
      body: html`${publicationHeader(publication, level, 'articles')}
<form method="get" action="${base}" role="search" class="inline card">
<div class="field">
<label for="field-filter">Search articles</label>
<span class="hint" id="field-filter-hint">Words in the title or description; “lisb” finds “Lisbon”.</span>
<input id="field-filter" name="filter" type="search" value="${filterText.slice(0, MAX_FILTER_LENGTH)}" maxlength="${MAX_FILTER_LENGTH}"${
        filterError ? html` aria-invalid="true" aria-describedby="field-filter-hint field-filter-error"` : html` aria-describedby="field-filter-hint"`
      }>
${filterError ? html`<span class="error" id="field-filter-error">${filterError}</span>` : ''}
</div>
<div><button type="submit">Search</button>${filter ? html` <a href="${base}">Clear</a>` : ''}</div>
</form>
<p role="status">${filter ? `${result.total} ${result.total === 1 ? 'article matches' : 'articles match'} “${filter}”.` : `${result.total} ${result.total === 1 ? 'article' : 'articles'}.`}</p>
${
  result.records.length === 0
    ? html`<p class="muted">${result.total > 0 ? 'There are no articles on this page.' : filter ? 'No article matches.' : 'This publication has no articles yet.'}</p>`
    : table(
        ['Title', 'Date', 'Source', 'Visible', 'Updated'],
        result.records.map(
          (article) => html`<tr>
<td class="title">${article.title}${article.info ? html`<br><span class="muted">${truncate(article.info, 160)}</span>` : ''}</td>
<td>${article.date ? article.date.slice(0, 10) : '—'}</td>
<td>${article.source ?? '—'}</td>
<td>${article.visible ? 'yes' : 'no'}</td>
<td>${when(article.updated_at)}</td>
</tr>`,
        ),
        'Articles',
      )
}
${pager(page, pages, result.total, href)}`,
    });
  });
}
