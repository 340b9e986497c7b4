import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MAX_KEY_NAME_LENGTH, MAX_SENDER_NAME_LENGTH, MAX_SENDER_OFFER_LENGTH } from '../../accounts/service.js';
import { Id } from '../../http/schemas.js';
import { formBody, problemsOf, text } from '../forms.js';
import { html, type SafeHtml } from '../html.js';
import { csrfInput, errorSummary, field, type FormErrors, notice, table, textArea, type Viewer, when } from '../layout.js';
import type { DashboardOptions } from '../routes.js';
import { principalOf, viewerOf } from '../session.js';
import { noticeOf, ownerPrincipal, render } from './common.js';

const SENDER_LABELS = { sender_name: 'Sender name', sender_offer: 'What you offer' };
const PASSWORD_LABELS = { current_password: 'Current password', password: 'New password', password_confirmation: 'Repeat the new password' };

type SettingsTab = 'api' | 'sender' | 'password';

function settingsTabs(viewer: Viewer, current: SettingsTab): SafeHtml {
  const tabs = [
    { key: 'api', label: 'API keys', href: '/settings/api', ownerOnly: false },
    { key: 'sender', label: 'Email sender', href: '/settings/sender', ownerOnly: true },
    { key: 'password', label: 'Password', href: '/settings/password', ownerOnly: false },
  ] as const;
  return html`<nav aria-label="Settings"><ul class="tabs">${tabs
    .filter((tab) => !tab.ownerOnly || viewer.kind === 'owner')
    .map((tab) => html`<li><a href="${tab.href}"${tab.key === current ? html` aria-current="page"` : ''}>${tab.label}</a></li>`)}</ul></nav>`;
}

const numberFormat = new Intl.NumberFormat('en-US');

/**
 * The account's plan; for its owner also the lead API's limits and this month's use of the quota (clients do not
 * use the lead API).
 */
async function planSection(request: FastifyRequest, options: DashboardOptions): Promise<SafeHtml> {
  const viewer = viewerOf(request);
  const principal = principalOf(request);
  let limits: SafeHtml = html``;
  if (principal.kind === 'owner') {
    const usage = await options.leads.usage(principal.accountId, principal.plan);
    const concurrent = options.leadRateLimit.plans[principal.plan].concurrentLeads;
    const percent = usage.monthly_leads > 0 ? Math.min(100, Math.round((usage.leads / usage.monthly_leads) * 100)) : 100;
    limits = html`<h3>Lead API</h3>
<dl class="facts">
<dt>This month</dt><dd><strong>${numberFormat.format(usage.leads)} of ${numberFormat.format(usage.monthly_leads)} leads</strong> in ${usage.month}
<meter min="0" max="${usage.monthly_leads}" value="${Math.min(usage.leads, usage.monthly_leads)}" aria-label="Leads used this month">${percent}%</meter></dd>
<dt>Monthly quota</dt><dd>${numberFormat.format(usage.monthly_leads)} leads (only addresses that pass the business-email check count); it renews on the 1st</dd>
<dt>Requests a minute</dt><dd>${numberFormat.format(usage.requests_per_minute)}</dd>
<dt>Leads at once</dt><dd>${numberFormat.format(concurrent)} per server (the others wait their turn)</dd>
</dl>`;
  }
  return html`<section aria-labelledby="plan-title">
<h2 id="plan-title">Plan</h2>
<div class="card" id="plan-usage" data-slot="plan-limits-and-usage">
<dl class="facts"><dt>Account</dt><dd>${viewer.accountName}</dd><dt>Plan</dt><dd><strong>${viewer.plan}</strong></dd></dl>
${limits}
</div>
</section>`;
}

export interface ApiKeysView {
  options: DashboardOptions;
  notice?: string;
  /** A key just made: shown this once. */
  newKey?: { name: string; key: string };
  name?: string;
  errors?: FormErrors;
}

export async function renderApiKeys(request: FastifyRequest, reply: FastifyReply, status: number, view: ApiKeysView) {
  const viewer = viewerOf(request);
  const [keys, plan] = await Promise.all([view.options.accounts.listKeys(viewer.userId), planSection(request, view.options)]);
  const csrf = request.dashboard.csrf;
  return render(request, reply, status, {
    title: 'API keys',
    section: 'settings',
    body: html`<h1>Settings</h1>
${settingsTabs(viewer, 'api')}
${notice(view.notice)}
${view.newKey
  ? html`<section class="secret" aria-labelledby="new-key-title">
<h2 id="new-key-title">Your new API key “${view.newKey.name}”</h2>
<p><strong>Copy it now: you will not see this again.</strong> Masthead keeps only a hash of it; if you lose it, revoke it and generate another.</p>
<div class="key"><output id="new-key" class="mono" aria-label="The new API key">${view.newKey.key}</output>
<button type="button" class="secondary" data-copy="new-key">Copy</button></div>
<p class="muted">Send it as <code>x-api-key: KEY</code> (or <code>Authorization: Bearer KEY</code> to the Portal API).</p>
</section>`
  : ''}
${plan}
<section aria-labelledby="keys-title">
<h2 id="keys-title">API keys</h2>
${keys.length === 0
  ? html`<p class="muted">You have no API keys. Generate one below.</p>`
  : table(
      ['Name', 'Key', 'Created', 'Last used', ''],
      keys.map(
        (key) => html`<tr>
<td class="title">${key.name}</td>
<td><code>${key.prefix}…</code></td>
<td>${when(key.created_at)}</td>
<td>${key.last_used_at ? when(key.last_used_at) : 'never'}</td>
<td><form method="post" action="/settings/api/keys/${key.id}/revoke" data-confirm="Revoke the key “${key.name}”? Requests made with it will be refused.">
${csrfInput(csrf)}<button type="submit" class="danger small">Revoke<span class="vh"> ${key.name}</span></button></form></td>
</tr>`,
      ),
      'Your API keys',
    )}
</section>
<section aria-labelledby="generate-title">
<h2 id="generate-title">Generate a key</h2>
${errorSummary(view.errors, { name: 'Name' })}
<form method="post" action="/settings/api/keys" class="inline card">
${csrfInput(csrf)}
${field({ name: 'name', label: 'Name', value: view.name, errors: view.errors, required: true, maxLength: MAX_KEY_NAME_LENGTH, hint: 'What the key is for, e.g. “CRM import”.' })}
<div><button type="submit">Generate key</button></div>
</form>
</section>`,
  });
}

interface SenderForm {
  senderName: string;
  senderOffer: string;
  errors?: FormErrors;
}

async function senderPage(request: FastifyRequest, reply: FastifyReply, status: number, options: DashboardOptions, form?: SenderForm) {
  const principal = ownerPrincipal(request);
  const viewer = viewerOf(request);
  const account = await options.accounts.getAccount(principal.accountId);
  const values = form ?? { senderName: account.sender_name ?? '', senderOffer: account.sender_offer ?? '' };
  return render(request, reply, status, {
    title: 'Email sender',
    section: 'settings',
    body: html`<h1>Settings</h1>
${settingsTabs(viewer, 'sender')}
${notice(noticeOf(request))}
<h2>Email sender</h2>
<p class="muted">Who signs the generated emails and what they offer. Templates use them as <code>{{senderName}}</code> and
<code>{{senderCompany}}</code> (the account’s name, “${viewer.accountName}”); the built-in generator connects your offer to
what the lead’s company does.</p>
${errorSummary(values.errors, SENDER_LABELS)}
<form method="post" action="/settings/sender" class="stack card narrow-form">
${csrfInput(request.dashboard.csrf)}
${field({ name: 'sender_name', label: 'Sender name', value: values.senderName, errors: values.errors, maxLength: MAX_SENDER_NAME_LENGTH, autocomplete: 'name', hint: `Empty: the owner’s name, else “The ${viewer.accountName} team”.` })}
${textArea({ name: 'sender_offer', label: 'What you offer', value: values.senderOffer, errors: values.errors, maxLength: MAX_SENDER_OFFER_LENGTH, rows: 3, hint: 'A sentence, e.g. “help publishers grow their newsletter revenue”. Empty: the email says nothing of an offer.' })}
<div><button type="submit">Save sender</button></div>
</form>`,
  });
}

function passwordPage(request: FastifyRequest, reply: FastifyReply, status: number, errors?: FormErrors) {
  return render(request, reply, status, {
    title: 'Password',
    section: 'settings',
    body: html`<h1>Settings</h1>
${settingsTabs(viewerOf(request), 'password')}
${notice(noticeOf(request))}
<h2>Change your password</h2>
${errorSummary(errors, PASSWORD_LABELS)}
<form method="post" action="/settings/password" class="stack card narrow-form">
${csrfInput(request.dashboard.csrf)}
${field({ name: 'current_password', label: 'Current password', type: 'password', errors, required: true, autocomplete: 'current-password', maxLength: 1024 })}
${field({ name: 'password', label: 'New password', type: 'password', errors, required: true, autocomplete: 'new-password', maxLength: 1024, hint: 'At least 10 characters, not your email.' })}
${field({ name: 'password_confirmation', label: 'Repeat the new password', type: 'password', errors, required: true, autocomplete: 'new-password', maxLength: 1024 })}
<p class="muted">Your other sessions are signed out; your API keys keep working.</p>
<div><button type="submit">Change password</button></div>
</form>`,
  });
}

export function registerSettingsPages(app: FastifyInstance, options: DashboardOptions): void {
  const { accounts } = options;
  app.get('/settings', async (_request, reply) => reply.redirect('/settings/api', 303));

  app.get('/settings/api', async (request, reply) => renderApiKeys(request, reply, 200, { options, notice: noticeOf(request) }));

  app.post('/settings/api/keys', async (request, reply) => {
    const name = text(formBody(request), 'name').trim();
    if (name === '') return renderApiKeys(request, reply, 400, { options, name, errors: { name: 'Is required' } });
    let key: string;
    try {
      key = await accounts.createKey({ userId: principalOf(request).userId, name });
    } catch (error) {
      const errors = problemsOf(error, 'name');
      if (!errors) throw error;
      return renderApiKeys(request, reply, 400, { options, name: name.slice(0, MAX_KEY_NAME_LENGTH), errors });
    }
    return renderApiKeys(request, reply, 201, { options, newKey: { name, key } });
  });

  app.post(
    '/settings/api/keys/:id/revoke',
    { schema: { params: Type.Object({ id: Id }) } },
    async (request, reply) => {
      const { id } = request.params as { id: number };
      await accounts.revokeKey(principalOf(request).userId, id);
      return reply.redirect('/settings/api?notice=key-revoked', 303);
    },
  );

  app.get('/settings/sender', async (request, reply) => senderPage(request, reply, 200, options));

  app.post('/settings/sender', async (request, reply) => {
    const principal = ownerPrincipal(request);
    const body = formBody(request);
    const form: SenderForm = { senderName: text(body, 'sender_name'), senderOffer: text(body, 'sender_offer') };
    try {
      await accounts.updateSender(principal.accountId, form);
    } catch (error) {
      const errors = problemsOf(error);
      if (!errors) throw error;
      return senderPage(request, reply, 400, options, { ...form, errors });
    }
    return reply.redirect('/settings/sender?notice=sender-saved', 303);
  });

  app.get('/settings/password', async (request, reply) => passwordPage(request, reply, 200));

  app.post('/settings/password', async (request, reply) => {
    const body = formBody(request);
    const input = {
      currentPassword: text(body, 'current_password'),
      password: text(body, 'password'),
      passwordConfirmation: text(body, 'password_confirmation'),
    };
    if (input.currentPassword === '') return passwordPage(request, reply, 400, { current_password: 'Is required' });
    if (input.currentPassword.length > 1024) return passwordPage(request, reply, 400, { current_password: 'Is not your current password' });
    try {
      await accounts.changePassword(principalOf(request), input);
    } catch (error) {
      const errors = problemsOf(error);
      if (!errors) throw error;
      return passwordPage(request, reply, 400, errors);
    }
    return reply.redirect('/settings/password?notice=password-changed', 303);
  });
}
