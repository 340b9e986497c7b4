import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';
import { DIALECTS, startApp, type TestApp } from '../helpers/app.js';
import { companyHome, serveCompany, siteEnv } from '../helpers/leads.js';
import { html, type LocalServer, startLocalServer } from '../helpers/local-server.js';
import { type BrowserSession, openBrowser, screenshot, signUpIn, skipWithoutChromium } from './browser.js';
import { startSmtpServer } from './smtp.js';

const ZEPPELIN = companyHome({
  name: 'Zeppelin Works',
  description: 'Zeppelin Works builds quiet electric airships for regional cargo.',
  product: 'Electric airships for regional cargo',
});

// Templates, leads and jobs through Debian's Chromium, on the first database (pages.test.ts-style inject tests in
// leads.test.ts cover both databases): what only a browser shows — the editor's buttons, the job page following
// its job without reloading, forms as browsers send them, script not running.
describe('templates, leads and jobs in Chromium', { skip: skipWithoutChromium }, () => {
  let t: TestApp;
  let base: string;
  let chromium: BrowserSession;
  let site: LocalServer;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;

  before(async () => {
    site = await startLocalServer();
    serveCompany(site, 'zeppelin-works.com', ZEPPELIN);
    // A company site slow enough for the job page to show the job running before it completes.
    site.routes.set('/slow-zeppelin.com/', async (_request, response) => {
      await sleep(1500);
      html(response, ZEPPELIN);
    });
    smtp = await startSmtpServer();
    t = await startApp(DIALECTS[0]!, siteEnv(site, { SMTP_URL: smtp.url }));
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    chromium = await openBrowser(base);
  });
  after(async () => {
    await chromium?.close();
    await t?.close();
    await site?.close();
    await smtp?.close();
  });

  const newPage = (viewport?: { width: number; height: number }) => chromium.newPage(viewport);

  /** Fills the try-it form: the first name and address given, last name Lovelace. */
  async function fillLead(page: Page, firstName: string, email: string): Promise<void> {
    await page.getByLabel('First name').fill(firstName);
    await page.getByLabel('Last name').fill('Lovelace');
    await page.getByLabel('Email', { exact: true }).fill(email);
  }

  const owned = (page: Page) => page.evaluate(() => (window as unknown as { __owned?: number }).__owned);

  it('refuses a template with an unknown variable at the body, saves a good one, and previews it', async () => {
    const page = await newPage();
    await signUpIn(page);
    await page.getByRole('link', { name: 'Templates' }).click();
    await page.getByText('You have no templates yet').waitFor();
    await page.getByRole('link', { name: 'New template' }).click();

    const name = '<script>window.__owned = 1</script> Intro';
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByLabel('Subject line').fill('A note for {{companyName}}');
    await page.getByLabel('Body').fill('Hi {{firstName}},\n\n{{compnyName}} caught my eye.');
    await page.getByRole('button', { name: 'Save template' }).click();
    const bodyError = page.locator('#field-body-error');
    await bodyError.waitFor();
    assert.match((await bodyError.textContent())!, /^Line 3, column 1: Unknown variable "compnyName" .*Did you mean \{\{companyName\}\}\?/);
    const body = page.getByLabel('Body');
    assert.equal(await body.getAttribute('aria-invalid'), 'true');
    assert.match((await body.getAttribute('aria-describedby'))!, /field-body-error/);
    assert.equal(await page.locator('#field-subject-error').count(), 0);
    assert.equal(await page.getByLabel('Name', { exact: true }).inputValue(), name, 'what was typed is kept');

    // Fix it with the variable buttons: they insert where the cursor was, by keyboard too.
    await body.fill('Hi {{firstName}},\n\n caught my eye.\n\n');
    await body.evaluate((element: HTMLTextAreaElement) => element.setSelectionRange(19, 19));
    await page.getByRole('button', { name: 'Insert {{companyName}}' }).click();
    await body.press('Control+End');
    await page.getByRole('button', { name: 'Insert {{senderName}}' }).focus();
    await page.keyboard.press('Enter');
    assert.equal(await body.inputValue(), 'Hi {{firstName}},\n\n{{companyName}} caught my eye.\n\n{{senderName}}');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'field-body', 'focus goes back to the field');

    await page.getByLabel('Use it for leads that name no template').check();
    await page.getByText('Sample lead for the preview').click();
    await page.getByLabel('Sample first name').fill('Grace');
    await page.getByRole('button', { name: 'Preview' }).click();
    const preview = page.locator('#preview');
    await preview.waitFor();
    assert.equal(await preview.locator('.email-subject strong').textContent(), 'A note for Zeppelin Works');
    assert.equal(await preview.locator('pre.email-body').textContent(), 'Hi Grace,\n\nZeppelin Works caught my eye.\n\nThe Acme Media team');
    assert.equal(new URL(page.url()).hash, '#preview');
    await screenshot(page, 'template-editor');

    await page.getByRole('button', { name: 'Save template' }).click();
    await page.getByText('The template is saved.').waitFor();
    await page.getByRole('link', { name: 'Templates', exact: true }).first().click();
    const row = page.getByRole('row', { name: /Intro/ });
    assert.ok(await row.getByRole('link', { name }).isVisible(), 'the name shows as text');
    assert.ok(await row.getByText('default', { exact: true }).isVisible());
    assert.equal(await owned(page), undefined);
    await screenshot(page, 'templates');

    // Deleting asks first: dismissed, nothing happens; accepted, it is gone.
    page.once('dialog', (dialog) => void dialog.dismiss());
    await row.getByRole('button', { name: /Delete/ }).click();
    assert.equal(await page.getByRole('row', { name: /Intro/ }).count(), 1);
    page.once('dialog', (dialog) => {
      assert.match(dialog.message(), /Delete the template “<script>window.__owned = 1<\/script> Intro”\?/);
      void dialog.accept();
    });
    await row.getByRole('button', { name: /Delete/ }).click();
    await page.getByText('The template is deleted.').waitFor();
    assert.ok(await page.getByText('You have no templates yet').isVisible());
  });

  it('processes a lead through the form and follows its job to completion without reloading the page', async () => {
    const page = await newPage();
    const { email } = await signUpIn(page);
    await page.getByRole('link', { name: 'Leads' }).click();
    assert.ok(await page.getByText(`Send it to me at ${email}`).isVisible());
    await fillLead(page, 'Ada', 'ada@slow-zeppelin.com');
    await screenshot(page, 'leads');
    await page.getByRole('button', { name: 'Process lead' }).click();
    await page.getByText('The lead is accepted: this page follows its job.').waitFor();
    await page.evaluate(() => ((window as unknown as { __sameDocument?: boolean }).__sameDocument = true));
    const live = page.locator('#job-live');
    await live.locator('.badge.scraping').first().waitFor();
    assert.ok(await page.getByText('Reading the company’s website.').isVisible());
    await live.locator('[role="status"] .badge.completed').waitFor({ timeout: 20_000 });
    assert.equal(
      await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument),
      true,
      'updated in place, not reloaded',
    );
    assert.equal(await live.getAttribute('data-live-seconds'), null, 'it stops following a finished job');
    assert.deepEqual(await live.locator('ol.steps .badge').allTextContents(), ['pending', 'scraping', 'generating', 'completed']);
    assert.match((await live.locator('pre.email-body').textContent())!, /^Hi Ada,/);
    await screenshot(page, 'job');
  });

  it('shows a lead’s markup as text on its job page', async () => {
    const page = await newPage();
    await signUpIn(page);
    await page.goto('/leads');
    await fillLead(page, '<img src=x onerror="window.__owned = 2">', 'ada@zeppelin-works.com');
    await page.getByRole('button', { name: 'Process lead' }).click();
    const live = page.locator('#job-live');
    await live.locator('[role="status"] .badge.completed').waitFor();
    assert.match((await live.locator('pre.email-body').textContent())!, /^Hi <img src=x onerror="window.__owned = 2">,/i);
    assert.ok(await page.getByRole('heading', { name: '<img src=x onerror="window.__owned = 2"> Lovelace' }).isVisible());
    assert.equal(await owned(page), undefined);
    assert.equal(await page.locator('main img').count(), 0);
  });

  it('shows a refused address at the email field, and filters the jobs table', async () => {
    const page = await newPage();
    await signUpIn(page);
    await page.goto('/leads');
    const submit = async (first: string, address: string) => {
      await fillLead(page, first, address);
      await page.getByRole('button', { name: 'Process lead' }).click();
    };
    await submit('Ada', 'ada@gmail.com');
    const error = page.locator('#field-email-error');
    await error.waitFor();
    assert.match((await error.textContent())!, /gmail\.com is .*business email address/);
    assert.equal(await page.getByLabel('Email', { exact: true }).getAttribute('aria-invalid'), 'true');
    for (const first of ['Grace', 'Katherine']) {
      await page.goto('/leads');
      await submit(first, `${first.toLowerCase()}@zeppelin-works.com`);
      await page.locator('#job-live [role="status"] .badge.completed').waitFor();
    }

    await page.getByRole('link', { name: 'Jobs', exact: true }).click();
    await page.getByText('3 jobs, newest first.').waitFor();
    const leadsInTable = () => page.locator('#jobs-live tbody td.title').allTextContents();
    assert.deepEqual(await leadsInTable(), ['Katherine Lovelace', 'Grace Lovelace', 'Ada Lovelace']);
    await page.getByLabel('Status').selectOption('rejected');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('1 job with status rejected, newest first.').waitFor();
    assert.deepEqual(await leadsInTable(), ['Ada Lovelace']);
    await page.getByLabel('Status').selectOption('completed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('2 jobs with status completed, newest first.').waitFor();
    assert.deepEqual(await leadsInTable(), ['Katherine Lovelace', 'Grace Lovelace']);
    await screenshot(page, 'jobs');
    await page.getByRole('link', { name: 'Grace Lovelace' }).click();
    await page.getByRole('heading', { name: 'Generated email' }).waitFor();
    assert.ok(await page.getByText('grace@zeppelin-works.com').isVisible());
  });

  it('sends the generated email to the signed-in user over SMTP ("send it to me")', async () => {
    const page = await newPage();
    const { email } = await signUpIn(page);
    await page.goto('/leads');
    await fillLead(page, 'Ada', 'ada@zeppelin-works.com');
    await page.getByLabel(`Send it to me at ${email}`).check();
    const before = smtp.messages.length;
    await page.getByRole('button', { name: 'Process lead' }).click();
    const live = page.locator('#job-live');
    await live.locator('[role="status"] .badge.completed').waitFor();
    assert.deepEqual(await live.locator('ol.steps .badge').allTextContents(), ['pending', 'scraping', 'generating', 'sending', 'completed']);
    assert.ok(await page.getByText('sent to you by email').isVisible());
    const message = await smtp.waitForMessage(before + 1);
    assert.deepEqual(message.to, [email]);
    assert.equal(message.subject, await live.locator('.email-subject strong').textContent());
    assert.equal(message.text, await live.locator('pre.email-body').textContent());
    assert.match(message.text, /^Hi Ada,/);
  });

  it('shows the plan’s limits and usage on Settings, and saves the email sender', async () => {
    const page = await newPage();
    await signUpIn(page, undefined, 'Airship Media');
    await page.goto('/leads');
    await fillLead(page, 'Ada', 'ada@zeppelin-works.com');
    await page.getByRole('button', { name: 'Process lead' }).click();
    await page.locator('#job-live [role="status"] .badge.completed').waitFor();

    await page.getByRole('link', { name: 'Settings' }).click();
    const plan = page.locator('[data-slot="plan-limits-and-usage"]');
    assert.match((await plan.textContent())!, new RegExp(`1 of 100 leads in ${new Date().toISOString().slice(0, 7)}`));
    assert.ok(await plan.getByText('10', { exact: true }).isVisible(), 'the free plan’s requests a minute');
    await screenshot(page, 'settings-plan');

    await page.getByRole('link', { name: 'Email sender' }).click();
    await page.getByLabel('Sender name').fill('Grace Hopper');
    await page.getByLabel('What you offer').fill('help publishers grow their newsletter revenue');
    await page.getByRole('button', { name: 'Save sender' }).click();
    await page.getByText('The email sender is saved.').waitFor();
    assert.equal(await page.getByLabel('Sender name').inputValue(), 'Grace Hopper');
    await screenshot(page, 'email-sender');
  });

  it('keeps the new pages readable at phone width', async () => {
    const page = await newPage({ width: 390, height: 844 });
    await signUpIn(page);
    await page.goto('/templates/new');
    await page.getByLabel('Name', { exact: true }).fill('Phone');
    await page.getByLabel('Body').fill('Hi {{firstName}}, about {{companyName}}.');
    await page.getByRole('button', { name: 'Save template' }).click();
    await page.getByText('The template is saved.').waitFor();
    const editor = new URL(page.url()).pathname;
    await page.goto('/leads');
    await fillLead(page, 'Ada', 'ada@zeppelin-works.com');
    await page.getByRole('button', { name: 'Process lead' }).click();
    await page.locator('#job-live [role="status"] .badge.completed').waitFor();
    const job = new URL(page.url()).pathname;
    for (const path of ['/templates', editor, '/leads', '/leads/jobs', job, '/settings/sender']) {
      await page.goto(path);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `${path} is ${overflow}px wider than the screen`);
    }
    await page.goto(job);
    await screenshot(page, 'phone-job');
  });
});
