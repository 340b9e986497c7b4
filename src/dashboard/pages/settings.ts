import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MAX_KEY_NAME_LENGTH, MAX_SENDER_NAME_LENGTH, MAX_SENDER_OFFER_LENGTH } from '../../accounts/service.js';
import { Id } from '../../http/schemas.js';
import { renderApiKeys, settingsTabs } from '../api-keys-page.js';
import { formBody, problemsOf, text } from '../forms.js';
import { html } from '../html.js';
import { csrfInput, errorSummary, field, type FormErrors, notice, textArea } from '../layout.js';
import { noticeOf } from '../notices.js';
import type { DashboardOptions } from '../options.js';
import { render } from '../render.js';
import { ownerPrincipal, principalOf, viewerOf } from '../session.js';

const SENDER_LABELS = { sender_name: 'Sender name', sender_offer: 'What you offer' };
const PASSWORD_LABELS = { current_password: 'Current password', password: 'New password', password_confirmation: 'Repeat the new password' };

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

  app.post('/settings/api/keys/:id/revoke', { schema: { params: Type.Object({ id: Id }) } }, async (request, reply) => {
    const { id } = request.params as { id: number };
    await accounts.revokeKey(principalOf(request).userId, id);
    return reply.redirect('/settings/api?notice=key-revoked', 303);
  });

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
