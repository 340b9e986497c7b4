import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { LlmError } from '../../leads/generation/llm.js';
import { JobParams } from '../../leads/schemas.js';
import { MAX_NAME_CHARS, MAX_SUBJECT_CHARS, TEMPLATE_VARIABLES, type TemplateVariable } from '../../leads/templates/engine.js';
import type { TemplateView } from '../../leads/templates/service.js';
import { checked, controlCharacterProblems, type FormBody, formBody, problemsOf, text } from '../forms.js';
import { html, type SafeHtml } from '../html.js';
import { checkboxes, csrfInput, emailView, errorSummary, field, type FormErrors, notice, table, textArea, when } from '../layout.js';
import { noticeOf } from '../notices.js';
import type { DashboardOptions } from '../options.js';
import { render } from '../render.js';
import { ownerPrincipal } from '../session.js';

const LABELS = {
  name: 'Name',
  subject: 'Subject line',
  body: 'Body',
  sample_first_name: 'Sample first name',
  sample_last_name: 'Sample last name',
  sample_email: 'Sample email',
};

/** What each variable stands for, shown beside the editor (typed: a new variable must be described here). */
const VARIABLE_HINTS: Record<TemplateVariable, string> = {
  firstName: 'the lead’s first name',
  lastName: 'the lead’s last name',
  fullName: 'first and last name',
  email: 'the lead’s email address',
  domain: 'the domain of that address',
  companyName: 'the company, from its website (else from the domain)',
  companyDescription: 'what the company says it does',
  productDescription: 'its products, from its home page',
  industry: 'industry keywords',
  senderName: 'who signs (Settings → Email sender)',
  senderCompany: 'your account’s name',
};

const MAX_SAMPLE_NAME_LENGTH = 100;
const MAX_SAMPLE_EMAIL_LENGTH = 320;

interface TemplateForm {
  name: string;
  subject: string;
  body: string;
  isDefault: boolean;
  sample: { firstName: string; lastName: string; email: string };
  errors?: FormErrors;
}

/** The email a preview gave, or why there is none. */
type Preview = { subject: string; body: string; generator: 'builtin' | 'llm'; lead: string } | { failure: string };

const templatePath = (template: TemplateView) => `/templates/${template.id}`;

function formOf(template: TemplateView | undefined): TemplateForm {
  return {
    name: template?.name ?? '',
    subject: template?.subject ?? '',
    body: template?.body ?? '',
    isDefault: template?.is_default ?? false,
    sample: { firstName: '', lastName: '', email: '' },
  };
}

/** The fields whose control characters (NUL included) this page shows at the field, not as the generic 400. */
const TEMPLATE_FIELDS = ['name', 'subject', 'body'];

function readForm(body: FormBody): TemplateForm {
  const form: TemplateForm = {
    name: text(body, 'name'),
    subject: text(body, 'subject'),
    body: text(body, 'body'),
    isDefault: checked(body, 'is_default'),
    sample: {
      firstName: text(body, 'sample_first_name').trim().slice(0, MAX_SAMPLE_NAME_LENGTH),
      lastName: text(body, 'sample_last_name').trim().slice(0, MAX_SAMPLE_NAME_LENGTH),
      email: text(body, 'sample_email').trim().slice(0, MAX_SAMPLE_EMAIL_LENGTH),
    },
  };
  const errors = controlCharacterProblems({ name: form.name, subject: form.subject, body: form.body }, ['body']);
  return Object.keys(errors).length > 0 ? { ...form, errors } : form;
}

async function listPage(request: FastifyRequest, reply: FastifyReply, options: DashboardOptions) {
  const principal = ownerPrincipal(request);
  const templates = await options.templates.list(principal.accountId);
  const csrf = request.dashboard.csrf;
  return render(request, reply, 200, {
    title: 'Templates',
    section: 'templates',
    body: html`<h1>Templates</h1>
${notice(noticeOf(request))}
<p class="muted">A lead uses the template it names, else the account’s default template, else the built-in generator.
With an LLM configured, the body is also the prompt that writes the email.</p>
<p><a class="button" href="/templates/new">New template</a></p>
${
  templates.length === 0
    ? html`<p class="card">You have no templates yet: leads get the built-in generator’s email.</p>`
    : table(
        ['Name', 'Subject line', 'Updated', ''],
        templates.map(
          (template) => html`<tr>
<td class="title"><a href="${templatePath(template)}">${template.name}</a>${template.is_default ? html` <span class="badge default">default</span>` : ''}</td>
<td class="title">${template.subject || html`<span class="muted">written by the generator</span>`}</td>
<td>${when(template.updated_at)}</td>
<td><div class="actions">${
            template.is_default
              ? ''
              : html`<form method="post" action="${templatePath(template)}/default">${csrfInput(csrf)}<button type="submit" class="secondary small">Make default<span class="vh"> ${template.name}</span></button></form>`
          }
<form method="post" action="${templatePath(template)}/delete" data-confirm="Delete the template “${template.name}”? Jobs made with it keep their emails.">${csrfInput(csrf)}<button type="submit" class="danger small">Delete<span class="vh"> ${template.name}</span></button></form></div></td>
</tr>`,
        ),
        'Your templates',
      )
}`,
  });
}

function variablesPanel(): SafeHtml {
  return html`<section class="card" aria-labelledby="variables-title">
<h2 id="variables-title">Variables</h2>
<p class="muted small">Write them in double braces; nothing else is filled in. <code class="nowrap">\\{{</code> writes a literal <code>{{</code>.
The buttons insert one where the cursor was in the subject or the body.</p>
<ul class="variables" data-insert-fields="field-subject field-body">${TEMPLATE_VARIABLES.map(
    (name) =>
      html`<li><button type="button" class="chip" data-insert="{{${name}}}" aria-label="Insert {{${name}}}"><code>{{${name}}}</code></button> <span class="muted">${VARIABLE_HINTS[name]}</span></li>`,
  )}</ul>
</section>`;
}

function previewPanel(preview: Preview | undefined): SafeHtml {
  if (!preview) return html``;
  if ('failure' in preview) {
    return html`<section id="preview" class="card" aria-labelledby="preview-title" tabindex="-1">
<h2 id="preview-title">Preview</h2>
<p class="alert" role="alert">${preview.failure}</p>
</section>`;
  }
  return html`<section id="preview" class="card" aria-labelledby="preview-title" tabindex="-1">
<h2 id="preview-title">Preview</h2>
<p class="muted">For ${preview.lead} at Zeppelin Works (a sample company: nothing is fetched), written by ${
    preview.generator === 'llm' ? 'the LLM' : 'the built-in generator'
  }. Nothing is saved.</p>
${emailView(preview.subject, preview.body)}
</section>`;
}

async function editorPage(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  template: TemplateView | undefined,
  form: TemplateForm,
  preview?: Preview,
) {
  const csrf = request.dashboard.csrf;
  const action = template ? templatePath(template) : '/templates';
  const title = template ? template.name : 'New template';
  return render(request, reply, status, {
    title: `${title} · Templates`,
    section: 'templates',
    body: html`<p class="crumbs"><a href="/templates">Templates</a> › ${title}</p>
<h1>${template ? html`Edit “${template.name}”` : 'New template'}</h1>
${notice(noticeOf(request))}
${errorSummary(form.errors, LABELS)}
<div class="editor-grid">
<form method="post" action="${action}" class="stack card" id="template-form">
${csrfInput(csrf)}
${field({ name: 'name', label: 'Name', value: form.name, errors: form.errors, required: true, maxLength: MAX_NAME_CHARS, hint: 'Unique in your account, e.g. “Intro for publishers”.' })}
${field({ name: 'subject', label: 'Subject line', value: form.subject, errors: form.errors, maxLength: MAX_SUBJECT_CHARS, hint: 'One line. Leave it empty to let the generator write the subject.' })}
${textArea({ name: 'body', label: 'Body', value: form.body, errors: form.errors, rows: 14, required: true, hint: 'Plain text, at most 20 KB. With an LLM configured this is its prompt.' })}
${checkboxes({ legend: 'Default', boxes: [{ name: 'is_default', label: 'Use it for leads that name no template (the account’s default)', checked: form.isDefault, id: 'field-is_default' }] })}
<details class="sample"${form.sample.firstName || form.sample.lastName || form.sample.email ? html` open` : ''}>
<summary>Sample lead for the preview</summary>
<div class="stack">
${field({ name: 'sample_first_name', label: 'Sample first name', value: form.sample.firstName, errors: form.errors, maxLength: MAX_SAMPLE_NAME_LENGTH, hint: 'Default: Ada.' })}
${field({ name: 'sample_last_name', label: 'Sample last name', value: form.sample.lastName, errors: form.errors, maxLength: MAX_SAMPLE_NAME_LENGTH, hint: 'Default: Lovelace.' })}
${field({ name: 'sample_email', label: 'Sample email', type: 'email', value: form.sample.email, errors: form.errors, maxLength: MAX_SAMPLE_EMAIL_LENGTH, hint: 'Default: ada@zeppelin-works.example.' })}
</div>
</details>
<div class="buttons"><button type="submit">Save template</button>
<button type="submit" class="secondary" name="intent" value="preview" formaction="${action}#preview">Preview</button>
<a href="/templates">Cancel</a></div>
</form>
<div>
${previewPanel(preview)}
${variablesPanel()}
</div>
</div>
${
  template
    ? html`<form method="post" action="${templatePath(template)}/delete" data-confirm="Delete the template “${template.name}”? Jobs made with it keep their emails.">
${csrfInput(csrf)}<button type="submit" class="danger">Delete this template</button>
</form>`
    : ''
}`,
  });
}

/** Writes the preview of the form's texts: field problems go back to the form, an LLM failure to the panel. */
async function previewOf(
  request: FastifyRequest,
  options: DashboardOptions,
  form: TemplateForm,
): Promise<{ preview?: Preview; errors?: FormErrors }> {
  const principal = ownerPrincipal(request);
  try {
    const lead = { firstName: form.sample.firstName, lastName: form.sample.lastName, email: form.sample.email };
    const written = await options.leads.preview(principal.accountId, { subject: form.subject, body: form.body }, lead);
    const name = `${lead.firstName || 'Ada'} ${lead.lastName || 'Lovelace'}`;
    return {
      preview: {
        subject: written.subject,
        body: written.body,
        generator: written.generator,
        lead: `${name} <${lead.email || 'ada@zeppelin-works.example'}>`,
      },
    };
  } catch (error) {
    if (error instanceof LlmError) return { preview: { failure: `The LLM could not write the preview: ${error.message}` } };
    const errors = problemsOf(error);
    if (!errors) throw error;
    return { errors };
  }
}

/** 400 for the form's problems, 502 when the LLM failed (the editor is shown either way). */
function previewStatus(errors: FormErrors | undefined, preview: Preview | undefined): number {
  if (errors) return 400;
  return preview && 'failure' in preview ? 502 : 200;
}

function statusOf(error: unknown): number {
  return error instanceof AppError && error.code === 'conflict' ? 409 : 400;
}

export function registerTemplatePages(app: FastifyInstance, options: DashboardOptions): void {
  const { templates } = options;

  app.get('/templates', async (request, reply) => listPage(request, reply, options));

  app.get('/templates/new', async (request, reply) => {
    ownerPrincipal(request);
    return editorPage(request, reply, 200, undefined, formOf(undefined));
  });

  app.post('/templates', { config: { controlCharactersAtFields: TEMPLATE_FIELDS } }, async (request, reply) => {
    const principal = ownerPrincipal(request);
    const form = readForm(formBody(request));
    if (form.errors) return editorPage(request, reply, 400, undefined, form);
    if (text(formBody(request), 'intent') === 'preview') {
      const { preview, errors } = await previewOf(request, options, form);
      return editorPage(request, reply, previewStatus(errors, preview), undefined, { ...form, errors }, preview);
    }
    let created: TemplateView;
    try {
      created = await templates.create(principal.accountId, { name: form.name, subject: form.subject, body: form.body, isDefault: form.isDefault });
    } catch (error) {
      const errors = problemsOf(error, 'name');
      if (!errors) throw error;
      return editorPage(request, reply, statusOf(error), undefined, { ...form, errors });
    }
    return reply.redirect(`${templatePath(created)}?notice=template-created`, 303);
  });

  app.get('/templates/:id', { schema: { params: JobParams } }, async (request, reply) => {
    const principal = ownerPrincipal(request);
    const { id } = request.params as { id: string };
    const template = await templates.get(principal.accountId, id);
    return editorPage(request, reply, 200, template, formOf(template));
  });

  app.post('/templates/:id', { schema: { params: JobParams }, config: { controlCharactersAtFields: TEMPLATE_FIELDS } }, async (request, reply) => {
    const principal = ownerPrincipal(request);
    const { id } = request.params as { id: string };
    const template = await templates.get(principal.accountId, id);
    const form = readForm(formBody(request));
    if (form.errors) return editorPage(request, reply, 400, template, form);
    if (text(formBody(request), 'intent') === 'preview') {
      const { preview, errors } = await previewOf(request, options, form);
      return editorPage(request, reply, previewStatus(errors, preview), template, { ...form, errors }, preview);
    }
    try {
      await templates.update(principal.accountId, id, { name: form.name, subject: form.subject, body: form.body, isDefault: form.isDefault });
    } catch (error) {
      const errors = problemsOf(error, 'name');
      if (!errors) throw error;
      return editorPage(request, reply, statusOf(error), template, { ...form, errors });
    }
    return reply.redirect(`${templatePath(template)}?notice=template-saved`, 303);
  });

  app.post('/templates/:id/default', { schema: { params: JobParams } }, async (request, reply) => {
    const principal = ownerPrincipal(request);
    const { id } = request.params as { id: string };
    await templates.setDefault(principal.accountId, id);
    return reply.redirect('/templates?notice=template-default', 303);
  });

  app.post('/templates/:id/delete', { schema: { params: JobParams } }, async (request, reply) => {
    const principal = ownerPrincipal(request);
    const { id } = request.params as { id: string };
    await templates.delete(principal.accountId, id);
    return reply.redirect('/templates?notice=template-deleted', 303);
  });
}
