import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'csv-parse/sync';
import type { Storage } from '../../src/db/connection.js';
import { DIALECTS, startApp, type TestApp } from '../helpers/app.js';
import { companyHome, serveCompany, siteEnv } from '../helpers/leads.js';
import { type LocalServer, startLocalServer } from '../helpers/local-server.js';
import { decodeEntities, expectPage, expectRedirect, type PageClient, pageClient, signUp } from './helpers.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

async function counts(storage: Storage) {
  const jobs = await storage.db.selectFrom('lead_jobs').select('id').execute();
  const batches = await storage.db.selectFrom('lead_batches').select('id').execute();
  return { jobs: jobs.length, batches: batches.length };
}

/** The text of an HTML page, tags dropped, entities decoded, spaces collapsed. */
function textOf(page: string): string {
  return decodeEntities(page.replace(/<[^>]+>/g, ' '))
    .replace(/\s+/g, ' ')
    .trim();
}

const csvFile = (content: string | Buffer, filename = 'leads.csv') => [
  { field: 'file', filename, content: Buffer.isBuffer(content) ? content : Buffer.from(content) },
];

async function waitForBatchPage(visitor: PageClient, path: string, timeoutMs = 15_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const page = expectPage(await visitor.get(path), 200);
    if (!page.includes('data-live-seconds')) return page;
    if (Date.now() > deadline) throw new Error(`${path} still following running jobs after ${timeoutMs} ms`);
    await sleep(25);
  }
}

for (const dialect of DIALECTS) {
  describe(`dashboard lead batches (${dialect})`, () => {
    let t: TestApp;
    let site: LocalServer;
    let visitor: PageClient;

    before(async () => {
      site = await startLocalServer();
      serveCompany(site, 'acme.example.com', companyHome({ name: 'Acme Widgets', description: 'Acme makes widgets.', product: 'Widgets' }));
      t = await startApp(dialect, siteEnv(site, { LEAD_WORKER_POLL_MS: '20' }));
      visitor = pageClient(t.app);
      await signUp(visitor);
    });
    after(async () => {
      await t.close();
      await site.close();
    });

    it('previews a file (columns by header name, refused lines and why) before anything is queued, then follows the batch to its results', async () => {
      const file =
        '\ufeffE-Mail Address;First  Name;SURNAME;Company\r\n' +
        'grace@acme.example.com;Grace;Hopper;Acme\r\n' +
        'someone@gmail.com;Some;One;Gmail\r\n' +
        'ada@acme.example.com;;Lovelace;Acme\r\n' +
        '\r\n' +
        'GRACE@acme.example.com;Grace;Again;Acme\r\n' +
        '"=1+2@acme.example.com";"José ""Pepe""";Núñez;Acme\r\n';
      expectPage(await visitor.get('/leads/batches'), 200);
      const preview = expectPage(await visitor.postMultipart('/leads/batches/preview', {}, csvFile(file, 'fair-2026.csv')), 200);
      const shown = textOf(preview);
      assert.match(shown, /2 of 5 leads can be queued; 3 will be refused/);
      assert.match(shown, /Columns read: “First Name”, “SURNAME”, “E-Mail Address”/);
      assert.match(shown, /3 Some One someone@gmail\.com gmail\.com is a free email provider/);
      assert.match(shown, /4 Lovelace ada@acme\.example\.com The first name must not be empty/);
      assert.match(shown, /6 Grace Again GRACE@acme\.example\.com The same address is on an earlier line/);
      assert.match(shown, /Queue 2 leads/);
      assert.deepEqual(await counts(t.storage), { jobs: 0, batches: 0 }, 'a preview queues nothing');

      const leads = decodeEntities(/name="leads" value="([^"]*)"/.exec(preview)![1]!);
      const queued = await visitor.postMultipart('/leads/batches', { leads, name: 'Fair leads', templateId: '' });
      expectRedirect(queued, new RegExp(`^/leads/batches/${UUID}\\?notice=batch-queued$`));
      const path = queued.location!.split('?')[0]!;
      const done = textOf(await waitForBatchPage(visitor, path));
      assert.match(done, /Fair leads/);
      assert.match(done, /Progress completed .*100% ?: 2 of 2 jobs ended/);
      assert.match(done, /completed 2 failed 0 rejected 0/);

      const csv = await visitor.get(`${path}/results.csv?bom=true`);
      assert.equal(csv.status, 200);
      assert.match(String(csv.headers['content-disposition']), /^attachment; filename="lead-batch-/);
      assert.ok(csv.body.startsWith('\ufeff'));
      const rows = parse(csv.body, { columns: true, bom: true }) as Record<string, string>[];
      assert.deepEqual(
        rows.map((row) => [row.first_name, row.email, row.status, row.company_name]),
        [
          ['Grace', 'grace@acme.example.com', 'completed', 'Acme Widgets'],
          ['José "Pepe"', "'=1+2@acme.example.com", 'completed', 'Acme Widgets'],
        ],
      );
      const list = textOf(expectPage(await visitor.get('/leads/batches'), 200));
      assert.match(list, /Fair leads .* completed .*100% 2 completed/);
    });

    it('refuses files that are not lead lists with a clear message, queuing nothing', async () => {
      const before = await counts(t.storage);
      const refusals: [string, Buffer, number, RegExp][] = [
        ['Latin-1', Buffer.from('first name,last name,email\nJos\xe9,N\xfa\xf1ez,j@acme.example.com\n', 'latin1'), 400, /not UTF-8 text/],
        ['no email column', Buffer.from('first name,last name,phone\nA,B,123\n'), 400, /no email column/],
        ['a header only', Buffer.from('first name,last name,email\n'), 400, /no leads/],
        ['binary', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]), 400, /not (UTF-8|a CSV)/],
        [
          '100,000 rows',
          Buffer.from('first name,last name,email\n' + 'Ada,Lovelace,ada@acme.example.com\n'.repeat(100_000)),
          413,
          /larger than 2 MB/,
        ],
        ['1,001 rows', Buffer.from('first name,last name,email\n' + 'Ada,Lovelace,ada@acme.example.com\n'.repeat(1001)), 400, /more than 1000 leads/],
        ['an open quote', Buffer.from('first name,last name,email\n"Ada,Lovelace,ada@acme.example.com\n'), 400, /not valid CSV/],
        ['nothing', Buffer.alloc(0), 400, /Choose a CSV file/],
      ];
      for (const [what, content, status, message] of refusals) {
        await visitor.get('/leads/batches');
        const page = expectPage(await visitor.postMultipart('/leads/batches/preview', {}, csvFile(content)), status);
        assert.match(textOf(page), message, what);
        assert.match(page, /id="field-file-error"/, what);
      }
      // 10 MB of garbage stops at the upload limit.
      await visitor.get('/leads/batches');
      const garbage = Buffer.alloc(10 * 1024 * 1024, 0x41);
      assert.match(textOf(expectPage(await visitor.postMultipart('/leads/batches/preview', {}, csvFile(garbage)), 413)), /larger than 2 MB/);
      // A confirmation whose leads were tampered with or cut short.
      await visitor.get('/leads/batches');
      assert.match(textOf(expectPage(await visitor.postMultipart('/leads/batches', { leads: '[{"firstName":"A"' }), 400)), /did not arrive whole/);
      await visitor.get('/leads/batches');
      const nul = JSON.stringify([{ firstName: 'A\u0000', lastName: 'B', email: 'a@acme.example.com' }]);
      assert.match(textOf(expectPage(await visitor.postMultipart('/leads/batches', { leads: nul }), 400)), /did not arrive whole/);
      assert.deepEqual(await counts(t.storage), before);
    });

    it('reads a 1,000-lead CRM export with its other columns (over 64 KB: read in a worker thread)', async () => {
      const notes = 'Met at the fair; wants a call back after the holidays, about the blue widgets. '.repeat(2);
      const lines = Array.from({ length: 1000 }, (_, n) => `"${notes}",Lead${n},Person,p${n}@acme.example.com,+1 555 0100`);
      const file = `Notes,First name,Last name,Work Email,Phone\n${lines.join('\n')}\n`;
      assert.ok(file.length > 150_000);
      await visitor.get('/leads/batches');
      const preview = textOf(expectPage(await visitor.postMultipart('/leads/batches/preview', {}, csvFile(file)), 200));
      assert.match(preview, /1000 of 1000 leads can be queued; 0 will be refused/);
      assert.match(preview, /2 Lead0 Person p0@acme\.example\.com/);
    });

    it('refuses an upload without the CSRF token, and shows no other account’s batch', async () => {
      await visitor.get('/leads/batches');
      const forged = await visitor.postMultipart(
        '/leads/batches/preview',
        { _csrf: 'forged' },
        csvFile('first name,last name,email\nA,B,a@acme.example.com\n'),
      );
      assert.equal(forged.status, 403);
      const stranger = pageClient(t.app);
      await signUp(stranger);
      const [batch] = await t.storage.db.selectFrom('lead_batches').select('id').execute();
      assert.ok(batch);
      expectPage(await stranger.get(`/leads/batches/${batch.id}`), 404);
      assert.equal((await stranger.get(`/leads/batches/${batch.id}/results.csv`)).status, 404);
    });
  });

  describe(`dashboard lead batches past the quota (${dialect})`, () => {
    let t: TestApp;
    let site: LocalServer;
    let visitor: PageClient;

    before(async () => {
      site = await startLocalServer();
      serveCompany(site, 'acme.example.com', companyHome({ name: 'Acme Widgets', description: 'Acme makes widgets.', product: 'Widgets' }));
      t = await startApp(dialect, siteEnv(site, { LEAD_WORKER_POLL_MS: '20', PLAN_FREE_MONTHLY_LEADS: '2' }));
      visitor = pageClient(t.app);
      await signUp(visitor);
    });
    after(async () => {
      await t.close();
      await site.close();
    });

    it('says before queuing how many the quota takes, and lists the leads it left out on the batch page', async () => {
      const file = 'first name,last name,email\nAda,One,a1@acme.example.com\nAda,Two,a2@acme.example.com\nAda,Three,a3@acme.example.com\n';
      await visitor.get('/leads/batches');
      const preview = expectPage(await visitor.postMultipart('/leads/batches/preview', {}, csvFile(file)), 200);
      assert.match(textOf(preview), /The plan takes 2 more leads this month: the first 2 will be queued and the other 1 not accepted/);
      const leads = decodeEntities(/name="leads" value="([^"]*)"/.exec(preview)![1]!);
      const queued = await visitor.postMultipart('/leads/batches', { leads, name: 'Over the quota' });
      expectRedirect(queued, new RegExp(`^/leads/batches/${UUID}\\?notice=batch-queued$`));
      const page = textOf(await waitForBatchPage(visitor, queued.location!.split('?')[0]!));
      assert.match(page, /completed 2 /);
      assert.match(page, /Not accepted .* 3 Ada Three a3@acme\.example\.com/);
      // The quota is used up now: the next batch is refused whole, at the file field, and nothing is queued.
      const jobsBefore = (await counts(t.storage)).jobs;
      await visitor.get('/leads/batches');
      const again = expectPage(
        await visitor.postMultipart('/leads/batches', { leads: JSON.stringify([{ firstName: 'A', lastName: 'B', email: 'b@acme.example.com' }]) }),
        429,
      );
      assert.match(textOf(again), /includes 2 leads a month, all used/);
      assert.equal((await counts(t.storage)).jobs, jobsBefore);
    });
  });
}
