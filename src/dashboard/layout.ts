import { SCRIPT, STYLESHEET } from './assets.js';
import { CSRF_FIELD } from './csrf.js';
import { html, type HtmlValue, type SafeHtml } from './html.js';

/** The signed-in user as pages show them. */
export interface Viewer {
  userId: number;
  email: string;
  kind: 'owner' | 'client';
  accountName: string;
  plan: string;
  /** Webhook endpoints Masthead disabled after days of failures (the owner's): a banner on every page. */
  disabledWebhooks?: number;
}

/**
 * The top navigation; pages pass their entry's key as `section`. Templates and leads belong to the account (the
 * lead API is for its owner), so clients do not see them.
 */
const NAV = [
  { key: 'publications', label: 'Publications', href: '/publications', ownerOnly: false },
  { key: 'templates', label: 'Templates', href: '/templates', ownerOnly: true },
  { key: 'leads', label: 'Leads', href: '/leads', ownerOnly: true },
  { key: 'webhooks', label: 'Webhooks', href: '/webhooks', ownerOnly: true },
  { key: 'settings', label: 'Settings', href: '/settings/api', ownerOnly: false },
] as const;
export type Section = (typeof NAV)[number]['key'];

export interface PageOptions {
  title: string;
  /** The CSRF token for the forms of the page (the sign-out form included). */
  csrf: string;
  viewer?: Viewer | null;
  section?: Section;
  body: SafeHtml;
  /** Sign-in and sign-up: a narrow column. */
  narrow?: boolean;
}

export function page(options: PageOptions): string {
  const { viewer } = options;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · Masthead</title>
<link rel="stylesheet" href="${STYLESHEET.path}">
<script src="${SCRIPT.path}" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><div class="bar">
<a class="brand" href="/">Masthead</a>
${
  viewer
    ? html`<nav aria-label="Main"><ul>${NAV.filter((entry) => !entry.ownerOnly || viewer.kind === 'owner').map(
        (entry) => html`<li><a href="${entry.href}"${options.section === entry.key ? html` aria-current="page"` : ''}>${entry.label}</a></li>`,
      )}</ul></nav>
<div class="who"><span>${viewer.email}</span>
<form method="post" action="/sign-out" class="inline">${csrfInput(options.csrf)}<button type="submit">Sign out</button></form></div>`
    : ''
}
</div></header>
<main id="main" tabindex="-1"${options.narrow ? html` class="narrow"` : ''}>
${
  viewer?.disabledWebhooks && options.section !== 'webhooks'
    ? html`<p class="alert" role="alert">${viewer.disabledWebhooks === 1 ? 'A webhook endpoint was' : `${viewer.disabledWebhooks} webhook endpoints were`} disabled
after its deliveries failed for days: <a href="/webhooks">see Webhooks</a>.</p>`
    : ''
}
${options.body}
</main>
</body>
</html>`.value;
}

export function csrfInput(token: string): SafeHtml {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${token}">`;
}

/** Field name -> what is wrong with it; the key `form` holds a problem of the whole form. */
export type FormErrors = Record<string, string>;

export interface FieldOptions {
  name: string;
  label: string;
  type?: 'text' | 'email' | 'password' | 'url' | 'search';
  value?: string;
  errors?: FormErrors;
  hint?: string;
  required?: boolean;
  autocomplete?: string;
  maxLength?: number;
  /** An id when the name is used by more than one form on the page. */
  id?: string;
}

/** A labelled input with its hint and its error next to it (tied by aria-describedby). */
export function field(options: FieldOptions): SafeHtml {
  const id = options.id ?? `field-${options.name}`;
  const error = options.errors?.[options.name];
  const described = [options.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`<div class="field">
<label for="${id}">${options.label}</label>
${options.hint ? html`<span class="hint" id="${id}-hint">${options.hint}</span>` : ''}
<input id="${id}" name="${options.name}" type="${options.type ?? 'text'}" value="${options.type === 'password' ? '' : (options.value ?? '')}"${
    options.required ? html` required` : ''
  }${options.autocomplete ? html` autocomplete="${options.autocomplete}"` : ''}${
    options.maxLength ? html` maxlength="${options.maxLength}"` : ''
  }${described ? html` aria-describedby="${described}"` : ''}${error ? html` aria-invalid="true"` : ''}>
${error ? html`<span class="error" id="${id}-error">${error}</span>` : ''}
</div>`;
}

export interface SelectOptions {
  name: string;
  label: string;
  options: readonly { value: string; label: string }[];
  value?: string;
  errors?: FormErrors;
  id?: string;
  /** Hide the label visually (it stays for screen readers) in compact table rows. */
  compact?: boolean;
}

export function select(options: SelectOptions): SafeHtml {
  const id = options.id ?? `field-${options.name}`;
  const error = options.errors?.[options.name];
  return html`<div class="field">
<label for="${id}"${options.compact ? html` class="vh"` : ''}>${options.label}</label>
<select id="${id}" name="${options.name}"${error ? html` aria-invalid="true" aria-describedby="${id}-error"` : ''}>
${options.options.map(
  (option) => html`<option value="${option.value}"${option.value === options.value ? html` selected` : ''}>${option.label}</option>`,
)}
</select>
${error ? html`<span class="error" id="${id}-error">${error}</span>` : ''}
</div>`;
}

export interface TextAreaOptions {
  name: string;
  label: string;
  value?: string;
  errors?: FormErrors;
  hint?: string;
  maxLength?: number;
  rows?: number;
  required?: boolean;
}

export function textArea(options: TextAreaOptions): SafeHtml {
  const id = `field-${options.name}`;
  const error = options.errors?.[options.name];
  const described = [options.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`<div class="field">
<label for="${id}">${options.label}</label>
${options.hint ? html`<span class="hint" id="${id}-hint">${options.hint}</span>` : ''}
<textarea id="${id}" name="${options.name}"${options.maxLength ? html` maxlength="${options.maxLength}"` : ''}${
    options.rows ? html` rows="${options.rows}"` : ''
  }${options.required ? html` required` : ''}${
    described ? html` aria-describedby="${described}"` : ''
  }${error ? html` aria-invalid="true"` : ''}>${options.value ?? ''}</textarea>
${error ? html`<span class="error" id="${id}-error">${error}</span>` : ''}
</div>`;
}

/** Checkboxes under one legend: a flag each (`name` per box), or several values of one name. */
export function checkboxes(options: {
  legend: string;
  boxes: readonly { name: string; value?: string; label: string; checked: boolean; id: string }[];
  error?: string;
  errorId?: string;
}): SafeHtml {
  return html`<fieldset class="field"${options.error ? html` aria-describedby="${options.errorId}"` : ''}>
<legend>${options.legend}</legend>
<div class="checks">${options.boxes.map(
    (box) =>
      html`<label for="${box.id}"><input type="checkbox" id="${box.id}" name="${box.name}" value="${box.value ?? 'on'}"${
        box.checked ? html` checked` : ''
      }> ${box.label}</label>`,
  )}</div>
${options.error ? html`<span class="error" id="${options.errorId}">${options.error}</span>` : ''}
</fieldset>`;
}

/**
 * The list of a form's problems at its top, each linking to its field, so that keyboard and screen-reader users
 * find them; `labels` names the fields.
 */
export function errorSummary(errors: FormErrors | undefined, labels: Record<string, string> = {}, idPrefix = 'field-'): SafeHtml {
  const entries = Object.entries(errors ?? {});
  if (entries.length === 0) return html``;
  return html`<div class="alert" role="alert"><strong>${entries.length === 1 ? 'There is a problem' : 'There are problems'}</strong>
<ul>${entries.map(([name, message]) =>
    name === 'form' || !labels[name] ? html`<li>${message}</li>` : html`<li><a href="#${idPrefix}${name}">${labels[name]}: ${message}</a></li>`,
  )}</ul></div>`;
}

export function notice(text: string | undefined): SafeHtml {
  return text ? html`<p class="notice" role="status">${text}</p>` : html``;
}

export function badge(status: string): SafeHtml {
  return html`<span class="badge ${status}">${status}</span>`;
}

/**
 * `2026-01-31T12:00:05.123Z` as `2026-01-31 12:00 UTC` (or `2026-01-31 12:00:05 UTC` to the second, for a job's
 * steps, which are seconds apart); empty as a dash.
 */
export function when(iso: string | null | undefined, precision: 'minutes' | 'seconds' = 'minutes'): string {
  if (!iso) return '—';
  return `${iso.slice(0, 10)} ${iso.slice(11, precision === 'seconds' ? 19 : 16)} UTC`;
}

export function table(headers: readonly string[], rows: readonly HtmlValue[], caption?: string): SafeHtml {
  return html`<div class="table-wrap"><table>
${caption ? html`<caption class="vh">${caption}</caption>` : ''}
<thead><tr>${headers.map((header) => html`<th scope="col">${header}</th>`)}</tr></thead>
<tbody>${rows}</tbody>
</table></div>`;
}

/** Previous / next links for a paged list; `href` builds the address of a page. */
export function pager(page: number, pages: number, total: number, href: (page: number) => string): SafeHtml {
  if (pages <= 1) return html``;
  return html`<nav class="pager" aria-label="Pages">
${page > 1 ? html`<a href="${href(page - 1)}" rel="prev">← Previous</a>` : ''}
<span>Page ${page} of ${pages} (${total})</span>
${page < pages ? html`<a href="${href(page + 1)}" rel="next">Next →</a>` : ''}
</nav>`;
}

/** A generated email as text: subject, then the body with its line breaks (never read as HTML). */
export function emailView(subject: string, body: string): SafeHtml {
  return html`<div class="email">
<p class="email-subject"><span class="muted">Subject:</span> <strong>${subject}</strong></p>
<pre class="email-body">${body}</pre>
</div>`;
}
