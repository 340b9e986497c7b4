import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../../accounts/service.js';
import { forbidden } from '../../errors.js';
import { AppIdAndIdParams, AppIdParams } from '../../http/schemas.js';
import type { RequestContext } from '../../portal/audit/service.js';
import { ClientCreate, type ClientCreateInput, type ClientView } from '../../portal/clients/schemas.js';
import type { PublicationAccess } from '../../portal/publications/service.js';
import { type AccessLevel, CLIENT_ACCESS_LEVELS, type ClientAccessLevel } from '../../portal/permissions.js';
import { bodyProblems, type FormBody, formAsApiInput, formBody, pageNumber, problemsOf, queryText, text } from '../forms.js';
import { html, type SafeHtml } from '../html.js';
import { csrfInput, errorSummary, field, type FormErrors, notice, pager, select, table, when } from '../layout.js';
import { noticeOf } from '../notices.js';
import type { DashboardOptions } from '../options.js';
import { managesClients, publicationHeader } from '../publication-header.js';
import { render } from '../render.js';
import { principalOf } from '../session.js';

const CLIENTS_PER_PAGE = 20;
const NO_ROLE = 'none';
const ADD_LABELS = { email: 'Email', access_level: 'Role' };
const CREATE_LABELS = { email: 'Email', firstname: 'First name', lastname: 'Last name', password: 'Password', access_level: 'Role' };

/** The levels the caller may hand out here: admins never grant the admin level (the clients service holds this too). */
function grantableLevels(level: AccessLevel): readonly ClientAccessLevel[] {
  return level === 'owner' ? CLIENT_ACCESS_LEVELS : CLIENT_ACCESS_LEVELS.filter((candidate) => candidate !== 'admin');
}

function levelOptions(levels: readonly ClientAccessLevel[], withNone: boolean) {
  return [...levels.map((level) => ({ value: level, label: level })), ...(withNone ? [{ value: NO_ROLE, label: 'no role here' }] : [])];
}

interface ClientForms {
  add?: { email: string; accessLevel: string; errors?: FormErrors };
  create?: { email: string; firstname: string; lastname: string; accessLevel: string; errors?: FormErrors };
}

/** The publication, when the caller manages its clients: 404 when it cannot see it, 403 when it may only look. */
async function managedPublication(options: DashboardOptions, principal: Principal, appId: string) {
  const access = await options.publications.access(principal, appId);
  if (!managesClients(access.level)) throw forbidden('Only the account owner and the admins of this publication manage its clients');
  return access;
}

async function clientsPage(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  options: DashboardOptions,
  appId: string,
  forms: ClientForms = {},
) {
  const principal = principalOf(request);
  const { publication, level } = await managedPublication(options, principal, appId);
  const page = pageNumber(queryText(request, 'page'));
  const [result, visible] = await Promise.all([
    options.clients.page(principal, page, { publication_id: publication.id, per_page: CLIENTS_PER_PAGE, order_by: 'id', order_dir: 'asc' }),
    options.publications.listVisible(principal),
  ]);
  const names = new Map(visible.map((candidate) => [candidate.id, candidate.name]));
  const pages = Math.ceil(result.total / CLIENTS_PER_PAGE);
  const base = `/publications/${encodeURIComponent(publication.app_id)}/clients`;
  const csrf = request.dashboard.csrf;
  const grantable = grantableLevels(level);
  return render(request, reply, status, {
    title: `Clients · ${publication.name}`,
    section: 'publications',
    body: html`${publicationHeader(publication, level, 'clients')}
${notice(noticeOf(request))}
<p class="muted">Clients are the people of your account who sign in with their own email. Each holds one role per publication:
a viewer reads; an author writes and changes its own articles; an editor changes any article and manages feeds, categories and issues;
an admin also manages clients${level === 'admin' ? ' (admins see and manage only the clients whose every role is below admin on publications they administer, and may not grant the admin level)' : ''}.</p>
${
  result.records.length === 0
    ? html`<p class="muted">No client holds a role on this publication yet.</p>`
    : table(
        ['Client', 'Role here', 'Other publications', 'Last seen'],
        result.records.map((client) => clientRow(client, publication, level, grantable, names, base, csrf)),
        'Clients of this publication',
      )
}
${pager(page, pages, result.total, (to) => `${base}?page=${to}`)}
<div class="grid2">
${addForm(base, csrf, grantable, forms.add)}
${createForm(base, csrf, grantable, forms.create)}
</div>`,
  });
}

function clientRow(
  client: ClientView,
  publication: PublicationAccess['publication'],
  level: AccessLevel,
  grantable: readonly ClientAccessLevel[],
  names: Map<number, string>,
  base: string,
  csrf: string,
): SafeHtml {
  const here = client.roles.find((role) => role.publication_id === publication.id);
  const others = client.roles.filter((role) => role.publication_id !== publication.id);
  // Admins may not change another admin (anywhere): the service refuses it, so the page offers no control.
  const editable = level === 'owner' || !client.roles.some((role) => role.access_level === 'admin');
  const name = `${client.firstname} ${client.lastname}`.trim();
  return html`<tr>
<td class="title">${name}<br><span class="muted">${client.email}</span></td>
<td>${
    editable
      ? html`<form method="post" action="${base}/${client.id}/role" class="inline">
${csrfInput(csrf)}
${select({ name: 'access_level', label: `Role of ${client.email} here`, id: `role-${client.id}`, compact: true, value: here?.access_level, options: levelOptions(grantable, true) })}
<button type="submit" class="small">Save<span class="vh"> role of ${client.email}</span></button>
</form>`
      : html`${here?.access_level ?? '—'}`
  }</td>
<td>${
    others.length === 0
      ? '—'
      : others.map(
          (role, index) =>
            html`${index > 0 ? ', ' : ''}${names.get(role.publication_id) ?? `publication ${role.publication_id}`} (${role.access_level})`,
        )
  }</td>
<td>${when(client.last_seen_at)}</td>
</tr>`;
}

function addForm(base: string, csrf: string, grantable: readonly ClientAccessLevel[], form: ClientForms['add']): SafeHtml {
  return html`<section aria-labelledby="add-client-title" class="card">
<h2 id="add-client-title">Give a client a role here</h2>
<p class="muted">A client of your account who holds no role here yet.</p>
${errorSummary(form?.errors, ADD_LABELS, 'add-')}
<form method="post" action="${base}/add" class="stack">
${csrfInput(csrf)}
${field({ name: 'email', id: 'add-email', label: 'Email', type: 'email', value: form?.email, errors: form?.errors, required: true, maxLength: 320 })}
${select({ name: 'access_level', id: 'add-access_level', label: 'Role', value: form?.accessLevel ?? 'viewer', errors: form?.errors, options: levelOptions(grantable, false) })}
<div><button type="submit">Give the role</button></div>
</form>
</section>`;
}

function createForm(base: string, csrf: string, grantable: readonly ClientAccessLevel[], form: ClientForms['create']): SafeHtml {
  return html`<section aria-labelledby="new-client-title" class="card">
<h2 id="new-client-title">Create a client</h2>
<p class="muted">A new person of your account, with a role on this publication.</p>
${errorSummary(form?.errors, CREATE_LABELS, 'new-')}
<form method="post" action="${base}" class="stack">
${csrfInput(csrf)}
${field({ name: 'email', id: 'new-email', label: 'Email', type: 'email', value: form?.email, errors: form?.errors, required: true, maxLength: 320, autocomplete: 'off' })}
${field({ name: 'firstname', id: 'new-firstname', label: 'First name', value: form?.firstname, errors: form?.errors, required: true, maxLength: 100 })}
${field({ name: 'lastname', id: 'new-lastname', label: 'Last name', value: form?.lastname, errors: form?.errors, required: true, maxLength: 100 })}
${field({ name: 'password', id: 'new-password', label: 'Password', type: 'password', errors: form?.errors, required: true, maxLength: 1024, autocomplete: 'new-password', hint: 'At least 10 characters, not the email. Tell it to the client.' })}
${select({ name: 'access_level', id: 'new-access_level', label: 'Role', value: form?.accessLevel ?? 'viewer', errors: form?.errors, options: levelOptions(grantable, false) })}
<div><button type="submit">Create the client</button></div>
</form>
</section>`;
}

type CreateForm = NonNullable<ClientForms['create']>;

function readCreateForm(body: FormBody): CreateForm {
  return {
    email: text(body, 'email').trim(),
    firstname: text(body, 'firstname'),
    lastname: text(body, 'lastname'),
    accessLevel: text(body, 'access_level'),
  };
}

/** The create form as the API's create input, but for the role (added once the publication is known). */
function createInput(body: FormBody): ClientCreateInput {
  const form = readCreateForm(body);
  return { email: form.email, firstname: form.firstname, lastname: form.lastname, password: text(body, 'password') };
}

function contextOf(request: FastifyRequest): RequestContext {
  return { principal: principalOf(request), ip: request.ip ?? null };
}

function isLevel(value: string): value is ClientAccessLevel {
  return (CLIENT_ACCESS_LEVELS as readonly string[]).includes(value);
}

/** Replaces the client's role on one publication (none: takes it away), keeping its roles elsewhere. */
async function setRole(
  options: DashboardOptions,
  request: FastifyRequest,
  client: ClientView,
  publicationId: number,
  level: ClientAccessLevel | null,
) {
  const roles = client.roles
    .filter((role) => role.publication_id !== publicationId)
    .map((role) => ({ publication_id: role.publication_id, access_level: role.access_level as ClientAccessLevel }));
  if (level !== null) roles.push({ publication_id: publicationId, access_level: level });
  await options.clients.update(contextOf(request), client.id, { roles });
}

export function registerClientPages(app: FastifyInstance, options: DashboardOptions): void {
  const { clients } = options;

  app.get('/publications/:app_id/clients', { schema: { params: AppIdParams } }, async (request, reply) => {
    const { app_id: appId } = request.params as { app_id: string };
    return clientsPage(request, reply, 200, options, appId);
  });

  app.post('/publications/:app_id/clients/:id/role', { schema: { params: AppIdAndIdParams } }, async (request, reply) => {
    const { app_id: appId, id } = request.params as { app_id: string; id: number };
    const principal = principalOf(request);
    const { publication } = await managedPublication(options, principal, appId);
    const chosen = text(formBody(request), 'access_level');
    if (chosen !== NO_ROLE && !isLevel(chosen)) return clientsPage(request, reply, 400, options, appId);
    const client = await clients.get(principal, id);
    await setRole(options, request, client, publication.id, chosen === NO_ROLE ? null : chosen);
    return reply.redirect(`/publications/${encodeURIComponent(appId)}/clients?notice=${chosen === NO_ROLE ? 'role-removed' : 'role-saved'}`, 303);
  });

  app.post('/publications/:app_id/clients/add', { schema: { params: AppIdParams } }, async (request, reply) => {
    const { app_id: appId } = request.params as { app_id: string };
    const principal = principalOf(request);
    const { publication, level } = await managedPublication(options, principal, appId);
    const body = formBody(request);
    const form = { email: text(body, 'email').trim(), accessLevel: text(body, 'access_level') };
    const fail = (errors: FormErrors) => clientsPage(request, reply, 400, options, appId, { add: { ...form, errors } });
    if (!isLevel(form.accessLevel)) return fail({ access_level: 'Choose a role' });
    if (form.email === '') return fail({ email: 'Is required' });
    // The clients listing's own search (name or email) finds the candidates; only the exact email counts. An admin's
    // listing holds only the clients it manages, so it finds no other.
    const email = form.email.toLowerCase();
    const found = email.length <= 200 ? await clients.page(principal, 1, { filter: email, per_page: 100 }) : { records: [] };
    const client = found.records.find((candidate) => candidate.email === email);
    if (!client) {
      return fail({
        email:
          level === 'owner'
            ? 'No client of your account has this email; create the client instead'
            : 'No client you manage has this email; create the client instead, or ask the account owner',
      });
    }
    if (client.roles.some((role) => role.publication_id === publication.id)) {
      return fail({ email: 'This client holds a role here already; change it in the list' });
    }
    try {
      await setRole(options, request, client, publication.id, form.accessLevel);
    } catch (error) {
      const errors = problemsOf(error);
      if (!errors) throw error;
      return fail(errors);
    }
    return reply.redirect(`/publications/${encodeURIComponent(appId)}/clients?notice=role-saved`, 303);
  });

  app.post(
    '/publications/:app_id/clients',
    { schema: { params: AppIdParams, body: ClientCreate }, attachValidation: true, preValidation: formAsApiInput(createInput) },
    async (request, reply) => {
      const { app_id: appId } = request.params as { app_id: string };
      const principal = principalOf(request);
      const { publication } = await managedPublication(options, principal, appId);
      const form = readCreateForm(formBody(request));
      const fail = (errors: FormErrors) => clientsPage(request, reply, 400, options, appId, { create: { ...form, errors } });
      if (!isLevel(form.accessLevel)) return fail({ access_level: 'Choose a role' });
      const problems = bodyProblems(request);
      if (problems) return fail(problems);
      const input = { ...(request.body as ClientCreateInput), roles: [{ publication_id: publication.id, access_level: form.accessLevel }] };
      try {
        await clients.create(contextOf(request), input);
      } catch (error) {
        const errors = problemsOf(error, 'email');
        if (!errors) throw error;
        // A role problem belongs to the role field of this form.
        if (errors.roles) errors.access_level = errors.roles;
        delete errors.roles;
        return fail(errors);
      }
      return reply.redirect(`/publications/${encodeURIComponent(appId)}/clients?notice=client-created`, 303);
    },
  );
}
