import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Storage } from '../../src/db/connection.js';
import { TEMPLATE_VARIABLES } from '../../src/leads/templates/engine.js';
import { TemplateQueries } from '../../src/leads/templates/queries.js';
import { TemplateService } from '../../src/leads/templates/service.js';
import { client, createPublication, DIALECTS, startApp, type TestApp } from '../helpers/app.js';
import { chatAnswer, companyHome, LEADS, lead, serveCompany, siteEnv } from '../helpers/leads.js';
import { html, json, type LocalServer, startLocalServer } from '../helpers/local-server.js';
import { createClientUser } from '../helpers/roles.js';
import { decodeEntities, expectPage, expectRedirect, fieldError, PASSWORD, type PageClient, pageClient, signIn, signUp } from './helpers.js';
import { startSmtpServer } from './smtp.js';

const ZEPPELIN = companyHome({
  name: 'Zeppelin Works',
  description: 'Zeppelin Works builds quiet electric airships for regional cargo.',
  product: 'Electric airships for regional cargo',
});
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

async function accountOf(storage: Storage, email: string) {
  const user = await storage.db.selectFrom('users').select(['id', 'account_id']).where('email', '=', email).executeTakeFirstOrThrow();
  return { userId: user.id, accountId: user.account_id };
}

async function jobCount(storage: Storage, accountId: number): Promise<number> {
  return (await storage.db.selectFrom('lead_jobs').select('id').where('account_id', '=', accountId).execute()).length;
}

/** The job's id in a redirect to its page. */
function jobIdOf(location: string | undefined): string {
  const id = new RegExp(`^/leads/jobs/(${UUID})\\?notice=lead-queued$`).exec(location ?? '')?.[1];
  assert.ok(id, `not a job page: ${location}`);
  return id;
}

/** Reads the job's page until it no longer follows a running job (the page a browser's script would fetch). */
async function waitForJobPage(visitor: PageClient, id: string, timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const page = expectPage(await visitor.get(`/leads/jobs/${id}`), 200);
    if (!page.includes('data-live-seconds')) return page;
    if (Date.now() > deadline) throw new Error(`job ${id} still running after ${timeoutMs} ms`);
    await sleep(25);
  }
}

/** The statuses listed in a job page's steps, in order. */
function stepsOf(page: string): string[] {
  const steps = /<ol class="steps">([\s\S]*?)<\/ol>/.exec(page)?.[1] ?? '';
  return [...steps.matchAll(/<span class="badge (\w+)">/g)].map((match) => match[1]!);
}

/** The generated email a page shows: its subject and body, as text. */
function emailIn(page: string): { subject: string; body: string } {
  const subject = /<p class="email-subject"><span class="muted">Subject:<\/span> <strong>([^<]*)<\/strong><\/p>/.exec(page)?.[1];
  const body = /<pre class="email-body">([^<]*)<\/pre>/.exec(page)?.[1];
  assert.ok(subject !== undefined && body !== undefined, 'the page shows an email');
  return { subject: decodeEntities(subject), body: decodeEntities(body) };
}

let addressCounter = 0;
const nextAddress = () => `10.8.${Math.floor(++addressCounter / 250)}.${addressCounter % 250}`;

for (const dialect of DIALECTS) {
  describe(`dashboard templates, leads and jobs (${dialect})`, () => {
    let t: TestApp;
    let site: LocalServer;
    let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
    before(async () => {
      site = await startLocalServer();
      serveCompany(site, 'zeppelin-works.com', ZEPPELIN);
      // A site that answers slowly: its jobs are seen running.
      site.routes.set('/slow-airships.com/', async (_request, response) => {
        await sleep(1200);
        html(response, ZEPPELIN);
      });
      smtp = await startSmtpServer();
      t = await startApp(dialect, siteEnv(site, { SMTP_URL: smtp.url, PLAN_FREE_RPM: '1000' }));
    });
    after(async () => {
      await t.close();
      await site.close();
      await smtp.close();
    });
    const browser = () => pageClient(t.app, { remoteAddress: nextAddress() });

    it('creates, lists, edits, previews, makes default and deletes templates, with problems at their field', async () => {
      const visitor = browser();
      const { email } = await signUp(visitor);
      const { accountId } = await accountOf(t.storage, email);
      const count = async () => (await new TemplateService(new TemplateQueries(t.storage.db)).list(accountId)).length;
      let page = expectPage(await visitor.get('/templates'), 200);
      assert.match(page, /<a href="\/templates" aria-current="page">Templates<\/a>/);
      assert.match(page, /You have no templates yet/);
      page = expectPage(await visitor.get('/templates/new'), 200);
      for (const name of TEMPLATE_VARIABLES) assert.ok(page.includes(`data-insert="{{${name}}}"`), name);

      // An unknown variable: refused at the body, with its line and column and the closest name; nothing saved.
      const unknown = { name: 'Intro', subject: 'A note for {{companyName}}', body: 'Hi {{firstName}},\r\nabout {{compnyName}}.' };
      page = expectPage(await visitor.post('/templates', unknown), 400);
      assert.match(fieldError(page, 'field-body') ?? '', /^Line 2, column 7: Unknown variable "compnyName" .*Did you mean \{\{companyName\}\}\?/);
      assert.equal(fieldError(page, 'field-subject'), undefined);
      assert.match(page, /<a href="#field-body">Body: Line 2, column 7/, 'the summary links to the field');
      assert.match(page, /value="Intro"/);
      assert.ok(page.includes('about {{compnyName}}.</textarea>'), 'the text typed is kept');
      page = expectPage(await visitor.post('/templates', { name: 'Intro', subject: 'Hello {{#company}}', body: 'Hi' }), 400);
      assert.match(fieldError(page, 'field-subject') ?? '', /^Line 1, column 7: .*template logic/);
      page = expectPage(await visitor.post('/templates', { name: 'Intro\u0000', subject: 'Hi\u0007', body: 'Hi\u0000' }), 400);
      for (const name of ['name', 'subject', 'body']) assert.equal(fieldError(page, `field-${name}`), 'Must not contain control characters');
      page = expectPage(await visitor.post('/templates', { name: 'Intro', subject: '', body: 'Hi\u0000', intent: 'preview' }), 400);
      assert.equal(fieldError(page, 'field-body'), 'Must not contain control characters');
      page = expectPage(await visitor.post('/templates', { name: ' ', subject: '', body: 'Hi' }), 400);
      assert.match(fieldError(page, 'field-name') ?? '', /required/);
      assert.equal(await count(), 0);

      const good = {
        name: '<script>alert(1)</script> Intro',
        subject: 'A note for {{companyName}}',
        body: 'Hi {{firstName}},\r\n\r\nI read that {{companyName}} builds airships.\r\n\r\n{{senderName}}',
        is_default: 'on',
      };
      const created = await visitor.post('/templates', good);
      expectRedirect(created, new RegExp(`^/templates/(${UUID})\\?notice=template-created$`));
      const path = created.location!.split('?')[0]!;
      page = expectPage(await visitor.get(created.location!), 200);
      assert.match(page, /The template is saved/);
      assert.ok(page.includes('&lt;script&gt;alert(1)&lt;/script&gt; Intro'));
      assert.ok(!page.includes('<script>alert(1)'));
      page = expectPage(await visitor.get('/templates'), 200);
      assert.ok(page.includes('&lt;script&gt;alert(1)&lt;/script&gt; Intro</a> <span class="badge default">default</span>'));
      assert.ok(!page.includes('<script>alert(1)'));
      page = expectPage(await visitor.post('/templates', { ...good, is_default: [] }), 409);
      assert.match(fieldError(page, 'field-name') ?? '', /already exists/);

      // Preview: the form's texts for a sample lead, nothing saved; problems at their field.
      await visitor.get(path);
      page = expectPage(
        await visitor.post(path, { ...good, subject: 'Airships for {{companyName}}, {{firstName}}', intent: 'preview', sample_first_name: 'Grace' }),
        200,
      );
      assert.deepEqual(emailIn(page), {
        subject: 'Airships for Zeppelin Works, Grace',
        body: `Hi Grace,\n\nI read that Zeppelin Works builds airships.\n\nThe Acme Media team`,
      });
      assert.match(page, /written by the built-in generator/);
      assert.ok(page.includes('value="Airships for {{companyName}}, {{firstName}}"'), 'the form keeps what was typed');
      assert.equal(
        (await new TemplateService(new TemplateQueries(t.storage.db)).list(accountId))[0]!.subject,
        'A note for {{companyName}}',
        'a preview saves nothing',
      );
      page = expectPage(await visitor.post(path, { ...good, body: 'Hi {{first_name}}', intent: 'preview' }), 400);
      assert.match(fieldError(page, 'field-body') ?? '', /^Line 1, column 4: Unknown variable "first_name".*\{\{firstName\}\}/);
      assert.doesNotMatch(page, /id="preview"/);

      // Edit: rename, and stop being the default.
      expectRedirect(
        await visitor.post(path, { name: 'Intro for publishers', subject: good.subject, body: good.body }),
        `${path}?notice=template-saved`,
      );
      let templates = await new TemplateService(new TemplateQueries(t.storage.db)).list(accountId);
      assert.deepEqual(
        templates.map((template) => [template.name, template.is_default]),
        [['Intro for publishers', false]],
      );
      assert.equal(templates[0]!.body, 'Hi {{firstName}},\n\nI read that {{companyName}} builds airships.\n\n{{senderName}}');

      // A second one; make the first the default from the list, then delete it.
      await visitor.get('/templates/new');
      expectRedirect(
        await visitor.post('/templates', { name: 'Follow-up', subject: '', body: 'Hello again {{firstName}}' }),
        /notice=template-created/,
      );
      page = expectPage(await visitor.get('/templates'), 200);
      assert.match(page, /written by the generator/);
      expectRedirect(await visitor.post(`${path}/default`), '/templates?notice=template-default');
      templates = await new TemplateService(new TemplateQueries(t.storage.db)).list(accountId);
      assert.deepEqual(
        templates.map((template) => [template.name, template.is_default]),
        [
          ['Follow-up', false],
          ['Intro for publishers', true],
        ],
      );
      page = expectPage(await visitor.get('/templates?notice=template-default'), 200);
      assert.match(page, /This is now the account’s default template/);
      assert.match(page, new RegExp(`data-confirm="Delete the template “Intro for publishers”\\?`));
      expectRedirect(await visitor.post(`${path}/delete`), '/templates?notice=template-deleted');
      assert.deepEqual(
        (await new TemplateService(new TemplateQueries(t.storage.db)).list(accountId)).map((template) => template.name),
        ['Follow-up'],
      );
      expectPage(await visitor.get(path), 404);
    });

    it('refuses template forms without a valid CSRF token, and changes nothing', async () => {
      const visitor = browser();
      const { email } = await signUp(visitor);
      const { accountId } = await accountOf(t.storage, email);
      const templates = new TemplateService(new TemplateQueries(t.storage.db));
      const template = await templates.create(accountId, { name: 'Kept', body: 'Hi {{firstName}}' });
      const form = { name: 'Planted', subject: '', body: 'Hi' };
      expectPage(await visitor.postRaw('/templates', form), 403);
      expectPage(await visitor.postRaw(`/templates/${template.id}`, { ...form, _csrf: 'x'.repeat(43) }), 403);
      await visitor.get('/templates');
      expectPage(await visitor.post(`/templates/${template.id}/delete`, {}, { origin: 'https://evil.example' }), 403);
      expectPage(await visitor.postRaw(`/templates/${template.id}/default`, {}), 403);
      assert.deepEqual(
        (await templates.list(accountId)).map((row) => [row.name, row.is_default]),
        [['Kept', false]],
      );
    });

    it("answers another account's templates and jobs, and malformed ids, with 404 pages", async () => {
      const owner = browser();
      const { email, apiKey } = await signUp(owner);
      const { accountId } = await accountOf(t.storage, email);
      const template = await new TemplateService(new TemplateQueries(t.storage.db)).create(accountId, {
        name: 'Private <b>plan</b>',
        body: 'Hi {{firstName}}',
      });
      const job = (await client(t.app, apiKey).post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'))).body.jobId as string;

      const stranger = browser();
      const { email: strangerEmail } = await signUp(stranger);
      const strangerAccount = await accountOf(t.storage, strangerEmail);
      await stranger.get('/templates');
      for (const response of [
        await stranger.get(`/templates/${template.id}`),
        await stranger.post(`/templates/${template.id}`, { name: 'Mine now', body: 'x' }),
        await stranger.post(`/templates/${template.id}/default`),
        await stranger.post(`/templates/${template.id}/delete`),
        await stranger.get(`/leads/jobs/${job}`),
        await stranger.post('/leads', { firstName: 'Ada', lastName: 'L', email: 'ada@zeppelin-works.com', templateId: template.id }),
      ]) {
        const page = expectPage(response, 404);
        assert.ok(!page.includes('Private'));
        assert.ok(!page.includes('ada@zeppelin-works.com'));
      }
      assert.equal(await jobCount(t.storage, strangerAccount.accountId), 0, 'no job was made with a foreign template');
      assert.equal((await new TemplateService(new TemplateQueries(t.storage.db)).get(accountId, template.id)).name, 'Private <b>plan</b>');
      const jobs = expectPage(await stranger.get('/leads/jobs'), 200);
      assert.match(jobs, /No jobs yet/);
      assert.ok(!expectPage(await stranger.get('/templates'), 200).includes('Private'));
      for (const path of ['/templates/not-a-uuid', '/leads/jobs/123', '/leads/nothing', '/templates/x/y']) expectPage(await stranger.get(path), 404);
    });

    it('processes a lead through the form as the API does, and follows its job until it completes', async () => {
      const visitor = browser();
      const { email } = await signUp(visitor);
      const { accountId } = await accountOf(t.storage, email);
      let page = expectPage(await visitor.get('/leads'), 200);
      assert.match(page, /<a href="\/leads" aria-current="page">Leads<\/a>/);
      assert.match(page, /<option value="" selected>Account default \(none: the built-in generator\)<\/option>/);
      assert.match(page, /<strong>0 of 100 leads<\/strong> used in \d{4}-\d{2}/);
      assert.match(page, /No jobs yet/);

      const submitted = await visitor.post('/leads', {
        firstName: '<img src=x onerror=alert(1)>',
        lastName: 'Lovelace',
        email: 'ada@zeppelin-works.com',
        templateId: '',
      });
      const id = jobIdOf(submitted.location);
      page = await waitForJobPage(visitor, id);
      assert.ok(page.includes('&lt;img src=x onerror=alert(1)&gt; Lovelace'));
      assert.ok(!page.includes('<img src=x'));
      assert.match(page, /<span class="badge completed">completed<\/span> Done\./);
      assert.deepEqual(stepsOf(page), ['pending', 'scraping', 'generating', 'completed']);
      const shown = emailIn(page);
      const api = await t.storage.db
        .selectFrom('lead_jobs')
        .select(['email_subject', 'email_body', 'generator'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(shown, { subject: api.email_subject, body: api.email_body });
      assert.match(shown.body, /^Hi <img src=x onerror=alert\(1\)>,/i, 'the name is in the email, as text');
      assert.match(page, /Written by the built-in generator\./);
      assert.doesNotMatch(page, /sent to you by email/);
      assert.match(page, /<dt>Company<\/dt><dd>Zeppelin Works<\/dd>/);
      assert.match(page, /<dt>Read from<\/dt><dd>its website/);
      assert.match(page, /<dt>Template<\/dt><dd>none<\/dd>/);

      page = expectPage(await visitor.get('/leads'), 200);
      assert.match(page, /<strong>1 of 100 leads<\/strong>/);
      assert.ok(page.includes(`<a href="/leads/jobs/${id}">&lt;img src=x onerror=alert(1)&gt; Lovelace</a>`));
      assert.equal(await jobCount(t.storage, accountId), 1);
    });

    it('uses the template chosen, or the account default', async () => {
      const visitor = browser();
      const { email } = await signUp(visitor);
      const { accountId } = await accountOf(t.storage, email);
      const templates = new TemplateService(new TemplateQueries(t.storage.db));
      const chosen = await templates.create(accountId, {
        name: 'Chosen',
        subject: 'Chosen for {{companyName}}',
        body: 'Hello {{firstName}} of {{companyName}}',
      });
      await templates.create(accountId, { name: 'Fallback', subject: 'Default for {{firstName}}', body: 'Hi {{firstName}}', isDefault: true });
      let page = expectPage(await visitor.get('/leads'), 200);
      assert.match(page, /<option value="" selected>Account default \(Fallback\)<\/option>/);
      assert.ok(page.includes(`<option value="${chosen.id}">Chosen</option>`));

      let id = jobIdOf(
        (await visitor.post('/leads', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@zeppelin-works.com', templateId: chosen.id })).location,
      );
      page = await waitForJobPage(visitor, id);
      assert.deepEqual(emailIn(page), { subject: 'Chosen for Zeppelin Works', body: 'Hello Ada of Zeppelin Works' });
      assert.ok(page.includes(`<dd><a href="/templates/${chosen.id}">Chosen</a></dd>`));
      await visitor.get('/leads');
      id = jobIdOf((await visitor.post('/leads', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@zeppelin-works.com' })).location);
      assert.equal(emailIn(await waitForJobPage(visitor, id)).subject, 'Default for Ada');
    });

    it('shows a refused address, and other problems, next to their field', async () => {
      const visitor = browser();
      const { email } = await signUp(visitor);
      const { accountId } = await accountOf(t.storage, email);
      await visitor.get('/leads');
      let page = expectPage(await visitor.post('/leads', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@gmail.com' }), 400);
      assert.match(fieldError(page, 'field-email') ?? '', /gmail\.com is .*business email address/);
      assert.match(page, /value="ada@gmail.com"/);
      const rejected = new RegExp(`The refusal is recorded as a job: <a href="/leads/jobs/(${UUID})">`).exec(page)?.[1];
      assert.ok(rejected);
      const jobPage = expectPage(await visitor.get(`/leads/jobs/${rejected}`), 200);
      assert.match(jobPage, /<strong>Not a business email\.<\/strong> gmail\.com is/);
      assert.match(jobPage, /\(free_provider\)/);
      assert.doesNotMatch(jobPage, /data-live-seconds/);
      assert.deepEqual(stepsOf(jobPage), ['pending', 'rejected']);

      page = expectPage(await visitor.post('/leads', { firstName: '  ', lastName: 'Lovelace', email: 'ada@zeppelin-works.com' }), 400);
      assert.equal(fieldError(page, 'field-firstName'), 'Must not be empty');
      page = expectPage(await visitor.post('/leads', { firstName: 'Ada', lastName: 'L'.repeat(101), email: 'ada@zeppelin-works.com' }), 400);
      assert.equal(fieldError(page, 'field-lastName'), 'Must be at most 100 characters');
      page = expectPage(
        await visitor.post('/leads', { firstName: 'Ada', lastName: 'Lovelace', email: `${'a'.repeat(320)}@zeppelin-works.com` }),
        400,
      );
      assert.equal(fieldError(page, 'field-email'), 'Must be at most 320 characters');
      page = expectPage(await visitor.post('/leads', { firstName: 'Ada', lastName: 'Lovelace', email: 'not an address' }), 400);
      assert.match(fieldError(page, 'field-email') ?? '', /.+/);
      assert.equal(await jobCount(t.storage, accountId), 2, 'refused addresses are jobs (as in the API); other problems are not');

      // Control characters (PostgreSQL cannot store a NUL) are refused at the field, never a 500.
      page = expectPage(await visitor.post('/leads', { firstName: 'A\u0000da', lastName: 'Love\tlace', email: 'ada@zeppelin-works.com' }), 400);
      assert.equal(fieldError(page, 'field-firstName'), 'Must not contain control characters');
      assert.equal(fieldError(page, 'field-lastName'), 'Must not contain control characters');
      page = expectPage(await visitor.post('/leads', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada\u0000@zeppelin-works.com' }), 400);
      assert.equal(fieldError(page, 'field-email'), 'Must not contain control characters');
      assert.equal(await jobCount(t.storage, accountId), 2);

      // No token: refused, no job.
      expectPage(await visitor.postRaw('/leads', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@zeppelin-works.com' }), 403);
      assert.equal(await jobCount(t.storage, accountId), 2);
    });

    it('follows a running job: its page and the jobs table refresh until it ends', async () => {
      const visitor = browser();
      await signUp(visitor);
      await visitor.get('/leads');
      const id = jobIdOf((await visitor.post('/leads', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@slow-airships.com' })).location);
      let page = expectPage(await visitor.get(`/leads/jobs/${id}?notice=lead-queued`), 200);
      assert.match(page, /The lead is accepted: this page follows its job\./);
      assert.match(page, /<div id="job-live" data-live-seconds="1">/);
      assert.match(page, /<span class="badge (pending|scraping)">/);
      assert.match(page, /This page follows it\./);
      page = expectPage(await visitor.get('/leads/jobs'), 200);
      assert.match(page, /<div id="jobs-live" data-live-seconds="1">/);
      // The worker takes it up (scraping: the slow site answers in over a second).
      const deadline = Date.now() + 5000;
      while (!(page = expectPage(await visitor.get('/leads/jobs?status=processing'), 200)).includes('1 job with status processing')) {
        assert.ok(Date.now() < deadline, 'the job never ran');
        await sleep(20);
      }
      assert.match(page, /<div id="jobs-live" data-live-seconds="1">/);
      assert.match(
        expectPage(await visitor.get(`/leads/jobs/${id}`), 200),
        /<span class="badge scraping">scraping<\/span> Reading the company’s website\./,
      );
      page = await waitForJobPage(visitor, id);
      assert.match(page, /<div id="job-live">/);
      assert.match(page, /badge completed/);
      page = expectPage(await visitor.get('/leads/jobs'), 200);
      assert.match(page, /<div id="jobs-live">/);
      assert.match(expectPage(await visitor.get('/leads/jobs?status=processing'), 200), /No job has this status/);
    });

    it('lists jobs newest first, filtered by status and paged; each row links to its job', async () => {
      const visitor = browser();
      const { apiKey } = await signUp(visitor);
      const api = client(t.app, apiKey);
      const ids: string[] = [];
      for (let index = 0; index < 21; index += 1)
        ids.push((await api.post(`${LEADS}/process-lead`, lead(`p${index}@zeppelin-works.com`))).body.jobId);
      for (let index = 0; index < 2; index += 1) ids.push((await api.post(`${LEADS}/process-lead`, lead(`p${index}@gmail.com`))).body.jobId);
      const linked = (page: string) => [...page.matchAll(new RegExp(`<a href="/leads/jobs/(${UUID})">`, 'g'))].map((match) => match[1]!);

      let page = expectPage(await visitor.get('/leads/jobs'), 200);
      assert.match(page, /<a href="\/leads\/jobs" aria-current="page">Jobs<\/a>/);
      assert.match(page, /23 jobs, newest first\./);
      assert.deepEqual(linked(page), ids.slice(-20).reverse());
      assert.match(page, /Page 1 of 2 \(23\)/);
      assert.match(page, /<a href="\/leads\/jobs\?page=2" rel="next">/);
      page = expectPage(await visitor.get('/leads/jobs?page=2'), 200);
      assert.deepEqual(linked(page), ids.slice(0, 3).reverse());
      page = expectPage(await visitor.get('/leads/jobs?status=rejected'), 200);
      assert.match(page, /2 jobs with status rejected/);
      assert.match(page, /<option value="rejected" selected>rejected<\/option>/);
      assert.deepEqual(linked(page), ids.slice(-2).reverse());
      page = expectPage(await visitor.get('/leads/jobs?status=completed&page=2'), 200);
      assert.deepEqual(linked(page), [ids[0]]);
      assert.match(page, /<a href="\/leads\/jobs\?status=completed&amp;page=1" rel="prev">/);
      page = expectPage(await visitor.get('/leads/jobs?status=bogus'), 400);
      assert.equal(fieldError(page, 'field-status'), 'Is not a status');
      page = expectPage(await visitor.get('/leads/jobs?page=9'), 200);
      assert.match(page, /There are no jobs on this page/);
      page = expectPage(await visitor.get(`/leads/jobs/${ids[0]}`), 200);
      assert.match(page, /p0@zeppelin-works\.com/);
    });

    it('sends the email to the signed-in user over SMTP when asked: the job passes sending', async () => {
      const visitor = browser();
      const { email } = await signUp(visitor);
      let page = expectPage(await visitor.get('/leads'), 200);
      assert.ok(page.includes(`Send it to me at ${email}`));
      const before = smtp.messages.length;
      const id = jobIdOf(
        (await visitor.post('/leads', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@zeppelin-works.com', send_to_me: 'on' })).location,
      );
      page = await waitForJobPage(visitor, id);
      assert.deepEqual(stepsOf(page), ['pending', 'scraping', 'generating', 'sending', 'completed']);
      assert.match(page, /<strong>sent to you by email<\/strong>/);
      const message = await smtp.waitForMessage(before + 1);
      assert.deepEqual(message.to, [email]);
      assert.deepEqual({ subject: message.subject, body: message.text }, emailIn(page));
      assert.match(message.text, /^Hi Ada,/);
    });

    it('shows the plan, its limits and this month’s usage on Settings, and saves the email sender', async () => {
      const visitor = browser();
      const { email, apiKey } = await signUp(visitor, undefined, 'Airship Media');
      const { accountId } = await accountOf(t.storage, email);
      await client(t.app, apiKey).post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'));
      await client(t.app, apiKey).post(`${LEADS}/process-lead`, lead('ada@gmail.com'));
      const month = new Date().toISOString().slice(0, 7);
      let page = expectPage(await visitor.get('/settings/api'), 200);
      const slot = /<div class="card" id="plan-usage" data-slot="plan-limits-and-usage">([\s\S]*?)<\/div>\n<\/section>/.exec(page)?.[1] ?? '';
      assert.match(slot, /<dt>Plan<\/dt><dd><strong>free<\/strong><\/dd>/);
      assert.match(slot, new RegExp(`<strong>1 of 100 leads</strong> in ${month}`), 'a refused address does not count');
      assert.match(slot, /<dt>Requests a minute<\/dt><dd>1,000<\/dd>/);
      assert.match(slot, /<dt>Leads at once<\/dt><dd>5 per server/);
      assert.match(slot, /<meter min="0" max="100" value="1"/);

      page = expectPage(await visitor.get('/settings/sender'), 200);
      assert.match(page, /<a href="\/settings\/sender" aria-current="page">Email sender<\/a>/);
      assert.match(page, /“The Airship Media team”/);
      page = expectPage(await visitor.post('/settings/sender', { sender_name: 'G'.repeat(101), sender_offer: 'x' }), 400);
      assert.equal(fieldError(page, 'field-sender_name'), 'Must be at most 100 characters');
      page = expectPage(await visitor.post('/settings/sender', { sender_name: 'Grace', sender_offer: 'o'.repeat(501) }), 400);
      assert.equal(fieldError(page, 'field-sender_offer'), 'Must be at most 500 characters');
      expectPage(await visitor.postRaw('/settings/sender', { sender_name: 'Planted', sender_offer: '' }), 403);
      expectRedirect(
        await visitor.post('/settings/sender', { sender_name: ' Grace <Hopper> ', sender_offer: 'help publishers grow their newsletter revenue.' }),
        '/settings/sender?notice=sender-saved',
      );
      const account = await t.storage.db
        .selectFrom('accounts')
        .select(['sender_name', 'sender_offer'])
        .where('id', '=', accountId)
        .executeTakeFirstOrThrow();
      assert.deepEqual(account, { sender_name: 'Grace <Hopper>', sender_offer: 'help publishers grow their newsletter revenue.' });
      page = expectPage(await visitor.get('/settings/sender?notice=sender-saved'), 200);
      assert.match(page, /The email sender is saved/);
      assert.match(page, /value="Grace &lt;Hopper&gt;"/);

      // The generator signs with it.
      await visitor.get('/templates/new');
      page = expectPage(
        await visitor.post('/templates', { name: 'x', subject: '', body: 'Best, {{senderName}} of {{senderCompany}}', intent: 'preview' }),
        200,
      );
      assert.equal(emailIn(page).body, 'Best, Grace <Hopper> of Airship Media');
      await visitor.get('/leads');
      const id = jobIdOf((await visitor.post('/leads', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@zeppelin-works.com' })).location);
      const body = emailIn(await waitForJobPage(visitor, id)).body;
      assert.match(body, /grow their newsletter revenue/);
      assert.match(body, /Grace <Hopper>\nAirship Media$/);
    });

    it('keeps templates, leads and the email sender from clients (hidden, and 403 pages)', async () => {
      const owner = browser();
      const { email } = await signUp(owner);
      const { accountId } = await accountOf(t.storage, email);
      const template = await new TemplateService(new TemplateQueries(t.storage.db)).create(accountId, {
        name: 'Owner only',
        body: 'Hi {{firstName}}',
      });
      const publication = await createPublication(t.storage, accountId);
      const member = await createClientUser(t.storage, accountId, [{ publicationId: publication.id, accessLevel: 'admin' }], { password: PASSWORD });
      const visitor = browser();
      await signIn(visitor, member.email);
      let page = expectPage(await visitor.get('/publications'), 200);
      assert.doesNotMatch(page, /href="\/templates"/);
      assert.doesNotMatch(page, /href="\/leads"/);
      page = expectPage(await visitor.get('/settings/api'), 200);
      assert.doesNotMatch(page, /href="\/settings\/sender"/);
      assert.doesNotMatch(page, /Lead API/);
      assert.match(page, /<dt>Plan<\/dt><dd><strong>free<\/strong><\/dd>/);
      for (const path of ['/templates', '/templates/new', `/templates/${template.id}`, '/leads', '/leads/jobs', '/settings/sender']) {
        assert.match(expectPage(await visitor.get(path), 403), /belong to the account owner/, path);
      }
      for (const [path, form] of [
        ['/leads', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@zeppelin-works.com' }],
        ['/templates', { name: 'Client made', body: 'Hi' }],
        [`/templates/${template.id}/delete`, {}],
        ['/settings/sender', { sender_name: 'Client', sender_offer: '' }],
      ] as const) {
        await visitor.get('/publications');
        expectPage(await visitor.post(path, form), 403);
      }
      assert.equal(await jobCount(t.storage, accountId), 0);
      assert.deepEqual(
        (await new TemplateService(new TemplateQueries(t.storage.db)).list(accountId)).map((row) => row.name),
        ['Owner only'],
      );
    });
  });
}

describe('the try-it form without SMTP, and its requests-a-minute limit', () => {
  let t: TestApp;
  let site: LocalServer;
  before(async () => {
    site = await startLocalServer();
    serveCompany(site, 'zeppelin-works.com', ZEPPELIN);
    t = await startApp(DIALECTS[0]!, siteEnv(site, { PLAN_FREE_RPM: '2' }));
  });
  after(async () => {
    await t.close();
    await site.close();
  });

  it('offers no "send it to me", ignores the field, and answers 429 past the plan’s limit', async () => {
    const visitor = pageClient(t.app);
    await signUp(visitor);
    let page = expectPage(await visitor.get('/leads'), 200);
    assert.doesNotMatch(page, /Send it to me/);
    const id = jobIdOf(
      (await visitor.post('/leads', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@zeppelin-works.com', send_to_me: 'on' })).location,
    );
    page = await waitForJobPage(visitor, id);
    assert.deepEqual(stepsOf(page), ['pending', 'scraping', 'generating', 'completed']);
    await visitor.get('/leads');
    expectPage(await visitor.post('/leads', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@gmail.com' }), 400);
    const limited = await visitor.post('/leads', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@zeppelin-works.com' });
    page = expectPage(limited, 429);
    assert.match(page, /The free plan allows 2 lead requests a minute/);
    assert.ok(Number(limited.headers['retry-after']) > 0);
    // Pages are not limited.
    expectPage(await visitor.get('/leads'), 200);
    expectPage(await visitor.get('/leads/jobs'), 200);
  });

  it('spends one count with the lead API: the form and the API together get the plan’s requests a minute', async () => {
    const visitor = pageClient(t.app);
    const { apiKey } = await signUp(visitor);
    assert.equal((await client(t.app, apiKey).post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'))).status, 200);
    await visitor.get('/leads');
    jobIdOf((await visitor.post('/leads', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@zeppelin-works.com' })).location);
    await visitor.get('/leads');
    expectPage(await visitor.post('/leads', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@zeppelin-works.com' }), 429);
    const limited = await client(t.app, apiKey).post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'));
    assert.equal(limited.status, 429);
    assert.equal(limited.headers['ratelimit-remaining'], '0');
  });
});

describe('a job whose email the relay refuses', () => {
  let t: TestApp;
  let site: LocalServer;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  before(async () => {
    site = await startLocalServer();
    serveCompany(site, 'zeppelin-works.com', ZEPPELIN);
    smtp = await startSmtpServer({ rejectRecipients: true });
    t = await startApp(DIALECTS[0]!, siteEnv(site, { SMTP_URL: smtp.url }));
  });
  after(async () => {
    await t.close();
    await site.close();
    await smtp.close();
  });

  it('fails, and its page shows the error beside the email that was written but not sent', async () => {
    const visitor = pageClient(t.app);
    await signUp(visitor);
    await visitor.get('/leads');
    const id = jobIdOf(
      (await visitor.post('/leads', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@zeppelin-works.com', send_to_me: 'on' })).location,
    );
    const page = await waitForJobPage(visitor, id);
    assert.deepEqual(stepsOf(page), ['pending', 'scraping', 'generating', 'sending', 'failed']);
    assert.match(page, /<div class="alert" role="alert"><strong>The job failed\.<\/strong> The email could not be sent: [^<]*550/);
    assert.match(page, /<strong>not sent<\/strong>: the delivery failed/);
    assert.match(emailIn(page).body, /^Hi Ada,/);
    assert.equal(smtp.messages.length, 0);
  });
});

describe('the template preview with an LLM configured', () => {
  let t: TestApp;
  let llm: LocalServer;
  before(async () => {
    llm = await startLocalServer();
    t = await startApp(DIALECTS[0]!, { LLM_BASE_URL: `${llm.base}/v1`, LLM_MODEL: 'test-model' });
  });
  after(async () => {
    await t.close();
    await llm.close();
  });

  it('previews with the model (the rendered template is its prompt), and shows its failure in the preview', async () => {
    const visitor = pageClient(t.app);
    await signUp(visitor);
    await visitor.get('/templates/new');
    llm.routes.set('/v1/chat/completions', (_request, response) =>
      chatAnswer(response, JSON.stringify({ subject: 'From the model', body: 'Dear <Ada>, a model wrote this.' })),
    );
    const form = { name: 'LLM', subject: '', body: 'Write to {{firstName}} at {{companyName}}.', intent: 'preview', sample_first_name: 'Grace' };
    let page = expectPage(await visitor.post('/templates', form), 200);
    assert.deepEqual(emailIn(page), { subject: 'From the model', body: 'Dear <Ada>, a model wrote this.' });
    assert.match(page, /written by the LLM/);
    const prompt = llm.requests.at(-1)!.body;
    assert.match(prompt, /Write to Grace at Zeppelin Works\./);

    llm.routes.set('/v1/chat/completions', (_request, response) => json(response, { error: { message: 'invalid api key' } }, 401));
    page = expectPage(await visitor.post('/templates', form), 502);
    assert.match(page, /<p class="alert" role="alert">The LLM could not write the preview: [^<]*401/);
    assert.doesNotMatch(page, /class="email-subject"/);
    assert.deepEqual(await t.storage.db.selectFrom('lead_templates').select('id').execute(), [], 'a preview saves nothing');
  });
});
