import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { renderApiKeys } from '../api-keys-page.js';
import { errorPage } from '../errors.js';
import { formBody, problemsOf, queryText, text } from '../forms.js';
import { html } from '../html.js';
import { csrfInput, errorSummary, field, type FormErrors, notice } from '../layout.js';
import { noticeOf } from '../notices.js';
import type { DashboardOptions } from '../options.js';
import { render } from '../render.js';
import { adoptSession, endSession, ensurePreSession, localPath, principalOf } from '../session.js';

const MAX_EMAIL_LENGTH = 320;
const MAX_PASSWORD_LENGTH = 1024;
const MAX_ACCOUNT_NAME_LENGTH = 100;

const SIGN_IN_LABELS = { email: 'Email', password: 'Password' };
const SIGN_UP_LABELS = { name: 'Organisation', email: 'Email', password: 'Password', password_confirmation: 'Repeat the password' };

interface SignInForm {
  email: string;
  next?: string;
  errors?: FormErrors;
}

function signInPage(request: FastifyRequest, reply: FastifyReply, status: number, form: SignInForm, allowSignup: boolean) {
  ensurePreSession(request, reply);
  return render(request, reply, status, {
    title: 'Sign in',
    narrow: true,
    body: html`<h1>Sign in</h1>
${notice(noticeOf(request))}
${errorSummary(form.errors, SIGN_IN_LABELS)}
<form method="post" action="/sign-in" class="stack card">
${csrfInput(request.dashboard.csrf)}
${form.next ? html`<input type="hidden" name="next" value="${form.next}">` : ''}
${field({ name: 'email', label: 'Email', type: 'email', value: form.email, errors: form.errors, required: true, autocomplete: 'username', maxLength: MAX_EMAIL_LENGTH })}
${field({ name: 'password', label: 'Password', type: 'password', errors: form.errors, required: true, autocomplete: 'current-password', maxLength: MAX_PASSWORD_LENGTH })}
<div><button type="submit">Sign in</button></div>
</form>
${allowSignup ? html`<p>No account yet? <a href="/sign-up">Create one</a>.</p>` : ''}`,
  });
}

interface SignUpForm {
  name: string;
  email: string;
  errors?: FormErrors;
}

function signUpPage(request: FastifyRequest, reply: FastifyReply, status: number, form: SignUpForm) {
  ensurePreSession(request, reply);
  return render(request, reply, status, {
    title: 'Create an account',
    narrow: true,
    body: html`<h1>Create an account</h1>
<p class="muted">A new account starts on the free plan. You will be its owner.</p>
${errorSummary(form.errors, SIGN_UP_LABELS)}
<form method="post" action="/sign-up" class="stack card">
${csrfInput(request.dashboard.csrf)}
${field({ name: 'name', label: 'Organisation', value: form.name, errors: form.errors, autocomplete: 'organization', maxLength: MAX_ACCOUNT_NAME_LENGTH, hint: 'Optional: your company or publishing house.' })}
${field({ name: 'email', label: 'Email', type: 'email', value: form.email, errors: form.errors, required: true, autocomplete: 'username', maxLength: MAX_EMAIL_LENGTH })}
${field({ name: 'password', label: 'Password', type: 'password', errors: form.errors, required: true, autocomplete: 'new-password', maxLength: MAX_PASSWORD_LENGTH, hint: 'At least 10 characters, not your email.' })}
${field({ name: 'password_confirmation', label: 'Repeat the password', type: 'password', errors: form.errors, required: true, autocomplete: 'new-password', maxLength: MAX_PASSWORD_LENGTH })}
<div><button type="submit">Create the account</button></div>
</form>
<p>Already have an account? <a href="/sign-in">Sign in</a>.</p>`,
  });
}

function signUpTurnedOff(request: FastifyRequest, reply: FastifyReply) {
  return errorPage(request, reply, 404, 'Sign-up is turned off on this server. Ask its administrator for an account.');
}

export function registerAuthPages(app: FastifyInstance, options: DashboardOptions): void {
  const { accounts, sessions, allowSignup } = options;

  app.get('/sign-in', { config: { signedOut: true } }, async (request, reply) => {
    if (request.dashboard.viewer) return reply.redirect('/publications', 303);
    return signInPage(request, reply, 200, { email: '', next: localPath(queryText(request, 'next')) }, allowSignup);
  });

  app.post('/sign-in', { config: { signedOut: true } }, async (request, reply) => {
    const body = formBody(request);
    const email = text(body, 'email').trim();
    const password = text(body, 'password');
    const form: SignInForm = { email: email.slice(0, MAX_EMAIL_LENGTH), next: localPath(text(body, 'next')) };
    const errors: FormErrors = {};
    if (email === '') errors.email = 'Is required';
    else if (email.length > MAX_EMAIL_LENGTH) errors.email = `Must be at most ${MAX_EMAIL_LENGTH} characters`;
    if (password === '') errors.password = 'Is required';
    else if (password.length > MAX_PASSWORD_LENGTH) errors.password = `Must be at most ${MAX_PASSWORD_LENGTH} characters`;
    if (Object.keys(errors).length > 0) return signInPage(request, reply, 400, { ...form, errors }, allowSignup);
    try {
      const signedIn = await sessions.signIn({ email, password, ip: request.ip });
      await adoptSession(accounts, request, reply, signedIn.api_key);
    } catch (error) {
      if (!(error instanceof AppError) || (error.code !== 'unauthorized' && error.code !== 'rate_limited')) throw error;
      if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
      const status = error.code === 'rate_limited' ? 429 : 401;
      return signInPage(request, reply, status, { ...form, errors: { form: error.message } }, allowSignup);
    }
    return reply.redirect(form.next ?? '/publications', 303);
  });

  app.get('/sign-up', { config: { signedOut: true } }, async (request, reply) => {
    if (!allowSignup) return signUpTurnedOff(request, reply);
    if (request.dashboard.viewer) return reply.redirect('/publications', 303);
    return signUpPage(request, reply, 200, { name: '', email: '' });
  });

  app.post('/sign-up', { config: { signedOut: true } }, async (request, reply) => {
    if (!allowSignup) return signUpTurnedOff(request, reply);
    const body = formBody(request);
    const form: SignUpForm = { name: text(body, 'name').trim(), email: text(body, 'email').trim() };
    const password = text(body, 'password');
    const errors: FormErrors = {};
    if (form.name.length > MAX_ACCOUNT_NAME_LENGTH) errors.name = `Must be at most ${MAX_ACCOUNT_NAME_LENGTH} characters`;
    if (form.email === '') errors.email = 'Is required';
    else if (form.email.length > MAX_EMAIL_LENGTH) errors.email = `Must be at most ${MAX_EMAIL_LENGTH} characters`;
    if (password.length > MAX_PASSWORD_LENGTH) errors.password = `Must be at most ${MAX_PASSWORD_LENGTH} characters`;
    else if (text(body, 'password_confirmation') !== password) errors.password_confirmation = 'Must match the password';
    if (Object.keys(errors).length > 0) return signUpPage(request, reply, 400, { ...form, errors });
    let signedUp;
    try {
      // One attempt counted like a sign-in's before anything is made: an address or email past the sign-in limit is
      // refused here (429), never after its account exists. A taken email is answered without saying that it is.
      signedUp = await sessions.signUp({ email: form.email, ip: request.ip }, () =>
        accounts.createAccount({ email: form.email, password, name: form.name || undefined, plan: 'free' }),
      );
    } catch (error) {
      if (error instanceof AppError && error.code === 'rate_limited') {
        if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
        return signUpPage(request, reply, 429, { ...form, errors: { form: error.message } });
      }
      if (error instanceof AppError && error.code === 'conflict') {
        return signUpPage(request, reply, 400, { ...form, errors: { form: error.message } });
      }
      const problems = problemsOf(error, 'email');
      if (!problems) throw error;
      return signUpPage(request, reply, 400, { ...form, errors: problems });
    }
    await adoptSession(accounts, request, reply, signedUp.session.api_key);
    // The account's first key, made with it: shown here, once, like every new key.
    return renderApiKeys(request, reply, 201, {
      options,
      notice: 'Your account is ready. Here is its first API key.',
      newKey: { name: 'default', key: signedUp.created.api_key },
    });
  });

  app.post('/sign-out', async (request, reply) => {
    await sessions.signOut(principalOf(request));
    endSession(request, reply);
    return reply.redirect('/sign-in?notice=signed-out', 303);
  });
}
