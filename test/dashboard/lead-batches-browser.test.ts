import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'csv-parse/sync';
import { DIALECTS, startApp, type TestApp } from '../helpers/app.js';
import { companyHome, siteEnv } from '../helpers/leads.js';
import { html, type LocalServer, startLocalServer } from '../helpers/local-server.js';
import { type BrowserSession, openBrowser, screenshot, signUpIn, skipWithoutChromium } from './browser.js';

const ZEPPELIN = companyHome({
  name: 'Zeppelin Works',
  description: 'Zeppelin Works builds quiet electric airships for regional cargo.',
  product: 'Electric airships for regional cargo',
});

// A list of leads through Debian's Chromium: the file chosen in a real file input, the preview, the progress bar
// following the batch in place, the download (lead-batches.test.ts covers both databases with inject).
describe('lead batches in Chromium', { skip: skipWithoutChromium }, () => {
  let t: TestApp;
  let site: LocalServer;
  let chromium: BrowserSession;

  before(async () => {
    site = await startLocalServer();
    // A company site slow enough for the batch page to show the batch running before it completes.
    site.routes.set('/zeppelin-works.com/', async (_request, response) => {
      await sleep(700);
      html(response, ZEPPELIN);
    });
    t = await startApp(DIALECTS[0]!, siteEnv(site, { LEAD_WORKER_POLL_MS: '50', PLAN_FREE_CONCURRENCY: '1' }));
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    chromium = await openBrowser(`http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`);
  });
  after(async () => {
    await chromium?.close();
    await t?.close();
    await site?.close();
  });

  it('uploads a CSV, previews it, follows the progress bar to the end and downloads the results', async () => {
    const page = await chromium.newPage();
    await signUpIn(page);
    await page.getByRole('link', { name: 'Leads' }).click();
    await page.getByRole('link', { name: 'Batches' }).click();
    await page.getByText('No batches yet.').waitFor();
    const file = [
      'First Name,Last Name,Email',
      'Ada,Lovelace,ada@zeppelin-works.com',
      'Grace,Hopper,grace@zeppelin-works.com',
      'Alan,Turing,alan@gmail.com',
      'Katherine,Johnson,katherine@zeppelin-works.com',
    ].join('\r\n');
    await page.getByLabel('CSV file').setInputFiles({ name: 'crm-export.csv', mimeType: 'text/csv', buffer: Buffer.from(file) });
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByText('3 of 4 leads can be queued; 1 will be refused.').waitFor();
    assert.match((await page.locator('table', { hasText: 'Why' }).textContent())!, /alan@gmail\.com.*free email provider/);
    await screenshot(page, 'batch-preview');
    await page.getByRole('button', { name: 'Queue 3 leads' }).click();
    await page.getByText('The batch is queued: this page follows its jobs as they run.').waitFor();

    await page.evaluate(() => ((window as unknown as { __sameDocument?: boolean }).__sameDocument = true));
    const live = page.locator('#batch-live');
    assert.equal(await live.getAttribute('data-live-seconds'), '1', 'the page follows a running batch');
    const bar = live.locator('progress');
    assert.equal(await bar.getAttribute('max'), '3');
    await live.locator('[role="status"] .badge.completed').waitFor({ timeout: 30_000 });
    assert.equal(await page.locator('#batch-live progress').getAttribute('value'), '3');
    assert.equal(
      await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument),
      true,
      'updated in place, not reloaded',
    );
    assert.equal(await live.getAttribute('data-live-seconds'), null, 'it stops following a finished batch');
    await screenshot(page, 'batch');

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download CSV' }).click()]);
    assert.match(download.suggestedFilename(), /^lead-batch-[0-9a-f-]+\.csv$/);
    const rows = parse(await readFile((await download.path())!), { columns: true }) as Record<string, string>[];
    assert.deepEqual(
      rows.map((row) => [row.first_name, row.status, row.company_name]),
      [
        ['Ada', 'completed', 'Zeppelin Works'],
        ['Grace', 'completed', 'Zeppelin Works'],
        ['Katherine', 'completed', 'Zeppelin Works'],
      ],
    );
    assert.match(rows[0]!.email_body!, /Ada/);
  });

  it('shows why a file is refused at the file field', async () => {
    const page = await chromium.newPage();
    await signUpIn(page);
    await page.goto('/leads/batches');
    await page.getByLabel('CSV file').setInputFiles({ name: 'contacts.csv', mimeType: 'text/csv', buffer: Buffer.from('name,phone\nAda,123\n') });
    await page.getByRole('button', { name: 'Preview' }).click();
    const error = page.locator('#field-file-error');
    await error.waitFor();
    assert.match((await error.textContent())!, /no first name, no last name, no email column/);
    assert.equal(await page.getByLabel('CSV file').getAttribute('aria-invalid'), 'true');
  });
});
