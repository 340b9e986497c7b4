import type { FastifyReply, FastifyRequest } from 'fastify';
import { MAX_KEY_NAME_LENGTH } from '../accounts/service.js';
import { html, type SafeHtml } from './html.js';
import { csrfInput, errorSummary, field, type FormErrors, notice, table, type Viewer, when } from './layout.js';
import type { DashboardOptions } from './options.js';
import { render } from './render.js';
import { principalOf, viewerOf } from './session.js';

// The API keys page is the settings' first tab and also where signing up ends (showing the account's first key),
// so the settings pages and the sign-up page both take it from here.

export type SettingsTab = 'api' | 'sender' | 'password';

/** The settings pages' tabs; the email sender is the owner's only. */
export function settingsTabs(viewer: Viewer, current: SettingsTab): SafeHtml {
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
${
  view.newKey
    ? html`<section class="secret" aria-labelledby="new-key-title">
<h2 id="new-key-title">Your new API key “${view.newKey.name}”</h2>
<p><strong>Copy it now: you will not see this again.</strong> Masthead keeps only a hash of it; if you lose it, revoke it and generate another.</p>
<div class="key"><output id="new-key" class="mono" aria-label="The new API key">${view.newKey.key}</output>
<button type="button" class="secondary" data-copy="new-key">Copy</button></div>
<p class="muted">Send it as <code>x-api-key: KEY</code> (or <code>Authorization: Bearer KEY</code> to the Portal API).</p>
</section>`
    : ''
}
${plan}
<section aria-labelledby="keys-title">
<h2 id="keys-title">API keys</h2>
${
  keys.length === 0
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
      )
}
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
