import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Id } from '../../http/schemas.js';
import { EVENT_DESCRIPTIONS, WEBHOOK_EVENT_TYPES } from '../../webhooks/events.js';
import { EndpointBody } from '../../webhooks/schemas.js';
import { MAX_DESCRIPTION_LENGTH, type EndpointView } from '../../webhooks/service.js';
import {
  allValues,
  bodyProblems,
  controlCharacterProblems,
  type FormBody,
  formAsApiInput,
  formBody,
  pageNumber,
  problemsOf,
  queryText,
  text,
} from '../forms.js';
import { html, type HtmlValue, type SafeHtml } from '../html.js';
import { badge, checkboxes, csrfInput, errorSummary, field, type FormErrors, notice, pager, table, when } from '../layout.js';
import { noticeOf } from '../notices.js';
import type { DashboardOptions } from '../options.js';
import { render } from '../render.js';
import { ownerPrincipal } from '../session.js';

const DELIVERIES_PER_PAGE = 20;
const LABELS = { url: 'URL', description: 'Description', events: 'Events' };
const endpointPath = (id: number) => `/webhooks/${id}`;

interface EndpointForm {
  url: string;
  description: string;
  events: string[];
  errors?: FormErrors;
}

function readForm(body: FormBody): EndpointForm {
  return { url: text(body, 'url').trim(), description: text(body, 'description'), events: allValues(body, 'events') };
}

function formInput(form: EndpointForm) {
  return { url: form.url, description: form.description.trim() || null, events: form.events };
}

/** The secret of an endpoint just made or rotated: shown this once, with a copy button. */
function secretSection(secret: string, what: HtmlValue): SafeHtml {
  return html`<section class="secret" aria-labelledby="secret-title">
<h2 id="secret-title">The signing secret of ${what}</h2>
<p><strong>Copy it now: you will not see it again.</strong> Your endpoint verifies each delivery's <code>webhook-signature</code> with it
(Standard Webhooks: HMAC-SHA256 of <code>webhook-id.webhook-timestamp.body</code>).</p>
<div class="key"><output id="new-secret" class="mono" aria-label="The signing secret">${secret}</output>
<button type="button" class="secondary" data-copy="new-secret">Copy</button></div>
</section>`;
}

function endpointStatus(endpoint: EndpointView): SafeHtml {
  return badge(endpoint.enabled ? 'enabled' : 'disabled');
}

/** What Masthead disabled, said at the top of the page (the owner's only notice of it besides the banner). */
function disabledNotices(endpoints: EndpointView[]): SafeHtml {
  const disabled = endpoints.filter((endpoint) => !endpoint.enabled && endpoint.disabled_reason);
  return html`${disabled.map(
    (endpoint) => html`<div class="alert" role="alert"><strong>Endpoint <a href="${endpointPath(endpoint.id)}">${endpoint.url}</a> was disabled
${when(endpoint.disabled_at)}.</strong> ${endpoint.disabled_reason}</div>`,
  )}`;
}

async function listPage(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  options: DashboardOptions,
  view: { form?: EndpointForm; created?: { endpoint: EndpointView; secret: string } } = {},
) {
  const principal = ownerPrincipal(request);
  const endpoints = await options.webhooks.list(principal);
  const csrf = request.dashboard.csrf;
  const form = view.form;
  return render(request, reply, status, {
    title: 'Webhooks',
    section: 'webhooks',
    body: html`<h1>Webhooks</h1>
${notice(noticeOf(request))}
${view.created ? secretSection(view.created.secret, html`<a href="${endpointPath(view.created.endpoint.id)}">${view.created.endpoint.url}</a>`) : ''}
${disabledNotices(endpoints)}
<p class="muted">Masthead sends the events you choose to your endpoints as they happen: a signed <code>POST</code> with
<code>{"type", "timestamp", "data"}</code>, retried for about a day when it fails (see each endpoint's delivery log). The same
endpoints are at <code>/api/client/webhooks</code>.</p>
${
  endpoints.length === 0
    ? html`<p class="muted">No endpoints yet. Add one below.</p>`
    : table(
        ['URL', 'Events', 'Status', 'Added'],
        endpoints.map(
          (endpoint) => html`<tr>
<td class="title mono"><a href="${endpointPath(endpoint.id)}">${endpoint.url}</a>${endpoint.description ? html`<br><span class="muted">${endpoint.description}</span>` : ''}</td>
<td>${endpoint.events.join(', ')}</td>
<td>${endpointStatus(endpoint)}${endpoint.failing_since && endpoint.enabled ? html` <span class="muted">failing since ${when(endpoint.failing_since)}</span>` : ''}</td>
<td>${when(endpoint.created_at)}</td>
</tr>`,
        ),
        'Your webhook endpoints',
      )
}
<section aria-labelledby="add-title">
<h2 id="add-title">Add an endpoint</h2>
${errorSummary(form?.errors, LABELS)}
<form method="post" action="/webhooks" class="stack card">
${csrfInput(csrf)}
${field({ name: 'url', label: 'URL', type: 'url', value: form?.url, errors: form?.errors, required: true, maxLength: 2048, hint: 'An https address of a public host.' })}
${field({ name: 'description', label: 'Description', value: form?.description, errors: form?.errors, maxLength: MAX_DESCRIPTION_LENGTH, hint: 'Optional: what it is, e.g. “CRM sync”.' })}
${checkboxes({
  legend: 'Events',
  // The first box carries the field's id, which the list of problems links to.
  boxes: WEBHOOK_EVENT_TYPES.map((type, index) => ({
    name: 'events',
    value: type,
    label: `${type}: ${EVENT_DESCRIPTIONS[type]}`,
    checked: form?.events.includes(type) ?? false,
    id: index === 0 ? 'field-events' : `field-events-${type.replace('.', '-')}`,
  })),
  error: form?.errors?.events,
  errorId: 'field-events-error',
})}
<div><button type="submit">Add endpoint</button></div>
</form>
</section>`,
  });
}

async function endpointPage(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  options: DashboardOptions,
  id: number,
  rotatedSecret?: string,
) {
  const principal = ownerPrincipal(request);
  const endpoint = await options.webhooks.get(principal, id);
  const page = pageNumber(queryText(request, 'page'));
  const { deliveries, pagination } = await options.webhooks.listDeliveries(principal, id, { limit: DELIVERIES_PER_PAGE, page });
  const csrf = request.dashboard.csrf;
  const base = endpointPath(id);
  return render(request, reply, status, {
    title: `${endpoint.url} · Webhooks`,
    section: 'webhooks',
    body: html`<p class="crumbs"><a href="/webhooks">Webhooks</a> › endpoint ${endpoint.id}</p>
<h1 class="mono">${endpoint.url}</h1>
${notice(noticeOf(request))}
${rotatedSecret ? secretSection(rotatedSecret, 'this endpoint (the old one also signs for 24 hours)') : ''}
${disabledNotices([endpoint])}
<section class="card" aria-labelledby="endpoint-title">
<h2 id="endpoint-title">Endpoint</h2>
<dl class="facts">
<dt>Status</dt><dd>${endpointStatus(endpoint)}${endpoint.failing_since && endpoint.enabled ? html` <span class="muted">every attempt has failed since ${when(endpoint.failing_since)}</span>` : ''}</dd>
<dt>Events</dt><dd>${endpoint.events.join(', ')}</dd>
${endpoint.description ? html`<dt>Description</dt><dd>${endpoint.description}</dd>` : ''}
<dt>Added</dt><dd>${when(endpoint.created_at)}</dd>
</dl>
<div class="actions">
${
  endpoint.enabled
    ? html`<form method="post" action="${base}/test">${csrfInput(csrf)}<button type="submit">Send a test event</button></form>
<form method="post" action="${base}/disable">${csrfInput(csrf)}<button type="submit" class="secondary">Disable</button></form>`
    : html`<form method="post" action="${base}/enable">${csrfInput(csrf)}<button type="submit">Enable</button></form>`
}
<form method="post" action="${base}/rotate" data-confirm="Make a new signing secret? The old one keeps signing for 24 hours.">${csrfInput(csrf)}<button type="submit" class="secondary">Rotate the secret</button></form>
<form method="post" action="${base}/delete" data-confirm="Delete the endpoint ${endpoint.url} and its delivery log?">${csrfInput(csrf)}<button type="submit" class="danger">Delete</button></form>
</div>
</section>
<section aria-labelledby="deliveries-title">
<h2 id="deliveries-title">Deliveries</h2>
<p role="status">${pagination.total} ${pagination.total === 1 ? 'delivery' : 'deliveries'}, newest first.</p>
${
  deliveries.length === 0
    ? html`<p class="muted">No deliveries yet.</p>`
    : table(
        ['Event', 'Status', 'Attempts', 'Last answer', 'Next retry', ''],
        deliveries.map(
          (delivery) => html`<tr>
<td><span class="mono">${delivery.event_type}</span><br><span class="muted small">${when(delivery.created_at, 'seconds')} · ${delivery.event_id}</span></td>
<td>${badge(delivery.status)}</td>
<td>${delivery.attempts}</td>
<td>${
            delivery.last_attempt_at
              ? html`${delivery.last_status_code === null ? 'no answer' : html`HTTP ${delivery.last_status_code}`} in ${delivery.last_duration_ms ?? 0} ms
<br><span class="muted small">${when(delivery.last_attempt_at, 'seconds')}</span>${delivery.last_error ? html`<br><span class="small">${delivery.last_error}</span>` : ''}`
              : '—'
          }</td>
<td>${delivery.next_attempt_at ? when(delivery.next_attempt_at, 'seconds') : '—'}</td>
<td>${
            endpoint.enabled
              ? html`<form method="post" action="${base}/deliveries/${delivery.id}/retry">${csrfInput(csrf)}<button type="submit" class="small secondary">Send again<span class="vh"> delivery ${delivery.id}</span></button></form>`
              : ''
          }</td>
</tr>`,
        ),
        'Deliveries',
      )
}
${pager(page, pagination.pages, pagination.total, (to) => `${base}?page=${to}`)}
</section>`,
  });
}

const Params = Type.Object({ id: Id });
const DeliveryParams = Type.Object({ id: Id, deliveryId: Id });

export function registerWebhookPages(app: FastifyInstance, options: DashboardOptions): void {
  const { webhooks } = options;

  app.get('/webhooks', async (request, reply) => listPage(request, reply, 200, options));

  app.post(
    '/webhooks',
    {
      schema: { body: EndpointBody },
      attachValidation: true,
      preValidation: formAsApiInput((body) => formInput(readForm(body))),
      config: { controlCharactersAtFields: ['url', 'description'] },
    },
    async (request, reply) => {
      const principal = ownerPrincipal(request);
      const form = readForm(formBody(request));
      const problems = { ...controlCharacterProblems({ url: form.url, description: form.description }), ...bodyProblems(request) };
      if (Object.keys(problems).length > 0) return listPage(request, reply, 400, options, { form: { ...form, errors: problems } });
      try {
        const created = await webhooks.create(principal, formInput(form));
        return listPage(request, reply, 201, options, { created });
      } catch (error) {
        const errors = problemsOf(error);
        if (!errors) throw error;
        return listPage(request, reply, 400, options, { form: { ...form, errors } });
      }
    },
  );

  app.get('/webhooks/:id', { schema: { params: Params } }, async (request, reply) => {
    const { id } = request.params as { id: number };
    return endpointPage(request, reply, 200, options, id);
  });

  const action = (path: string, run: (request: FastifyRequest, id: number) => Promise<unknown>, noticeCode: string) =>
    app.post(`/webhooks/:id/${path}`, { schema: { params: Params } }, async (request, reply) => {
      const { id } = request.params as { id: number };
      await run(request, id);
      return reply.redirect(`${endpointPath(id)}?notice=${noticeCode}`, 303);
    });
  action('enable', (request, id) => webhooks.update(ownerPrincipal(request), id, { enabled: true }), 'webhook-enabled');
  action('disable', (request, id) => webhooks.update(ownerPrincipal(request), id, { enabled: false }), 'webhook-disabled');
  action('test', (request, id) => webhooks.sendTest(ownerPrincipal(request), id), 'webhook-test-queued');

  app.post('/webhooks/:id/rotate', { schema: { params: Params } }, async (request, reply) => {
    const { id } = request.params as { id: number };
    const { secret } = await webhooks.rotateSecret(ownerPrincipal(request), id);
    return endpointPage(request, reply, 200, options, id, secret);
  });

  app.post('/webhooks/:id/delete', { schema: { params: Params } }, async (request, reply) => {
    const { id } = request.params as { id: number };
    await webhooks.delete(ownerPrincipal(request), id);
    return reply.redirect('/webhooks?notice=webhook-deleted', 303);
  });

  app.post('/webhooks/:id/deliveries/:deliveryId/retry', { schema: { params: DeliveryParams } }, async (request, reply) => {
    const { id, deliveryId } = request.params as { id: number; deliveryId: number };
    await webhooks.retryDelivery(ownerPrincipal(request), id, deliveryId);
    return reply.redirect(`${endpointPath(id)}?notice=delivery-queued`, 303);
  });
}
