import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { client, createOwner, DIALECTS, expectError, startApp, type TestApp } from '../helpers/app.js';
import { companyHome, LEADS, lead, serveCompany, siteEnv, startLeadWorker } from '../helpers/leads.js';
import { type LocalServer, startLocalServer } from '../helpers/local-server.js';
import { startReceiver, WEBHOOKS } from '../helpers/webhooks.js';

const BATCHES = `${LEADS}/lead-batches`;
type Api = ReturnType<typeof client>;

/** Polls a batch until every job ended. */
async function waitForBatch(api: Api, id: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await api.get(`${BATCHES}/${id}`);
    assert.equal(response.status, 200, response.raw);
    if (response.body.batch.status === 'completed') return response.body;
    if (Date.now() > deadline) throw new Error(`batch ${id} still processing: ${JSON.stringify(response.body.batch.counts)}`);
    await sleep(25);
  }
}

for (const dialect of DIALECTS) {
  describe(`lead batches (${dialect})`, () => {
    let site: LocalServer;
    let test: TestApp;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;

    before(async () => {
      site = await startLocalServer();
      receiver = await startReceiver();
      serveCompany(
        site,
        'acme.example.com',
        companyHome({ name: 'Acme Widgets', description: 'Acme makes widgets for factories.', product: 'Widgets' }),
      );
      serveCompany(site, 'zeta.example.com', companyHome({ name: 'Zeta Labs', description: 'Zeta Labs tests paint.', product: 'Paint tests' }));
      test = await startApp(
        dialect,
        siteEnv(site, {
          PLAN_FREE_RPM: '1000',
          PLAN_FREE_MONTHLY_LEADS: '5',
          LEAD_WORKER_POLL_MS: '20',
          WEBHOOK_WORKER: 'off',
          OUTBOUND_ALLOW: `${site.hostPort},${receiver.server.hostPort}`,
        }),
      );
    });
    after(async () => {
      await test.close();
      await site.close();
      await receiver.close();
    });

    it('runs every lead as a job, counts them by status, and gives the results in list order as JSON and CSV', async () => {
      const owner = await createOwner(test.storage, 'business');
      const api = client(test.app, owner.apiKey);
      const hook = await api.post(WEBHOOKS, { url: receiver.url('/batches'), events: ['batch.completed', 'job.rejected'] });
      receiver.expect('/batches', hook.body.secret);
      const submitted = await api.post(BATCHES, {
        name: 'October fair',
        leads: [
          lead('grace@acme.example.com', { firstName: 'Grace', lastName: 'Hopper' }),
          lead('someone@gmail.com'),
          lead('=cmd@zeta.example.com', { firstName: '=HYPERLINK("http://x.example","y")', lastName: 'Quote "Me", Twice' }),
        ],
      });
      assert.equal(submitted.status, 202, submitted.raw);
      assert.equal(submitted.headers.location, `${BATCHES}/${submitted.body.id}`);
      assert.equal(submitted.body.name, 'October fair');
      assert.equal(submitted.body.total, 3);
      assert.equal(submitted.body.accepted, 3);
      assert.deepEqual(submitted.body.not_accepted, []);
      // The free-mail address is rejected at once; the others wait for the worker.
      assert.equal(submitted.body.counts.rejected, 1);
      assert.equal(
        submitted.body.counts.pending + submitted.body.counts.scraping + submitted.body.counts.generating + submitted.body.counts.completed,
        2,
      );

      const done = await waitForBatch(api, submitted.body.id);
      assert.deepEqual(
        { completed: done.batch.counts.completed, rejected: done.batch.counts.rejected, failed: done.batch.counts.failed },
        { completed: 2, rejected: 1, failed: 0 },
      );
      assert.deepEqual(done.batch.progress, { ended: 3, jobs: 3, percent: 100 });
      assert.ok(done.batch.completed_at);
      assert.equal(done.jobs.length, 3);
      assert.ok(done.jobs.every((job: { batch_id: string }) => job.batch_id === submitted.body.id));

      const filtered = await api.get(`${LEADS}/jobs?batch=${submitted.body.id}&limit=2`);
      assert.equal(filtered.status, 200);
      assert.deepEqual(filtered.body.pagination, { total: 3, page: 1, limit: 2, pages: 2 });
      const unfiltered = await api.get(`${LEADS}/jobs?limit=100`);
      assert.equal(unfiltered.body.pagination.total, 3);

      const results = await api.get(`${BATCHES}/${submitted.body.id}/results.json`);
      assert.equal(results.status, 200);
      assert.deepEqual(
        results.body.results.map((row: { position: number; status: string; company_name: string | null }) => [
          row.position,
          row.status,
          row.company_name,
        ]),
        [
          [1, 'completed', 'Acme Widgets'],
          [2, 'rejected', null],
          [3, 'completed', 'Zeta Labs'],
        ],
      );
      const [grace, rejected] = results.body.results;
      assert.match(grace.email_body, /Grace/);
      assert.equal(grace.company_description, 'Acme makes widgets for factories.');
      assert.match(rejected.error, /free/i);

      const csv = await api.get(`${BATCHES}/${submitted.body.id}/results.csv`);
      assert.equal(csv.status, 200);
      assert.match(String(csv.headers['content-type']), /^text\/csv; charset=utf-8/);
      assert.match(String(csv.headers['content-disposition']), /attachment; filename="lead-batch-[0-9a-f-]+\.csv"/);
      assert.ok(!csv.raw.startsWith('\ufeff'));
      assert.match(csv.raw, /^"position","first_name",.*\r\n/);
      const rows = parse(csv.raw, { columns: true }) as Record<string, string>[];
      assert.equal(rows.length, 3);
      assert.equal(rows[0]!.email_body, grace.email_body);
      // Cells a spreadsheet would run as formulas start with a quote; quotes and commas survive the round trip.
      assert.equal(rows[2]!.first_name, `'=HYPERLINK("http://x.example","y")`);
      assert.equal(rows[2]!.email, `'=cmd@zeta.example.com`);
      assert.equal(rows[2]!.last_name, 'Quote "Me", Twice');
      const withBom = await api.get(`${BATCHES}/${submitted.body.id}/results.csv?bom=true`);
      assert.ok(withBom.raw.startsWith('\ufeff"position"'));

      // batch.completed, signed, once; job.rejected for the free-mail address.
      assert.equal(await test.app.webhookWorker.runDue(), 2);
      const events = receiver.at('/batches');
      assert.deepEqual(
        events.map((event) => event.verifyError),
        [undefined, undefined],
      );
      assert.deepEqual(events.map((event) => event.payload.type).sort(), ['batch.completed', 'job.rejected']);
      const completed = events.find((event) => event.payload.type === 'batch.completed')!;
      assert.equal(completed.payload.data.id, submitted.body.id);
      assert.equal(completed.payload.data.counts.completed, 2);
    });

    it('accepts a batch as far as the monthly quota allows and refuses one when none fits, storing nothing', async () => {
      const owner = await createOwner(test.storage, 'free');
      const api = client(test.app, owner.apiKey);
      const leads = [1, 2, 3, 4, 5, 6, 7].map((n) => lead(`p${n}@acme.example.com`));
      leads.splice(1, 0, lead('x@gmail.com'));
      const submitted = await api.post(BATCHES, { leads });
      assert.equal(submitted.status, 202, submitted.raw);
      // Free plan: 5 leads a month. The free-mail address is rejected and counts against nothing.
      assert.equal(submitted.body.total, 8);
      assert.equal(submitted.body.accepted, 6);
      assert.deepEqual(
        submitted.body.not_accepted.map((entry: { position: number; email: string; reason: string }) => [entry.position, entry.email, entry.reason]),
        [
          [7, 'p6@acme.example.com', 'quota_exceeded'],
          [8, 'p7@acme.example.com', 'quota_exceeded'],
        ],
      );
      const done = await waitForBatch(api, submitted.body.id);
      assert.equal(done.batch.counts.completed, 5);
      const results = await api.get(`${BATCHES}/${submitted.body.id}/results.json`);
      assert.deepEqual(
        results.body.results.map((row: { status: string }) => row.status),
        ['completed', 'rejected', 'completed', 'completed', 'completed', 'completed', 'not_accepted', 'not_accepted'],
      );

      const refused = await api.post(BATCHES, { leads: [lead('again@acme.example.com')] });
      expectError(refused, 429, 'quota_exceeded');
      assert.ok(Number(refused.headers['retry-after']) > 0);
      const listed = await api.get(BATCHES);
      assert.equal(listed.body.pagination.total, 1);
      const jobs = await api.get(`${LEADS}/jobs?limit=100`);
      assert.equal(jobs.body.pagination.total, 6);
    });

    it('refuses a malformed batch whole, naming each lead’s problem by its place in the list', async () => {
      const owner = await createOwner(test.storage, 'business');
      const api = client(test.app, owner.apiKey);
      const blank = await api.post(BATCHES, { leads: [lead('a@acme.example.com'), lead('b@acme.example.com', { firstName: '  ' })] });
      const body = expectError(blank, 400, 'validation_failed');
      assert.deepEqual(body.details, [{ path: '/leads/1/firstName', message: 'must not be empty' }]);
      expectError(await api.post(BATCHES, { leads: [] }), 400, 'validation_failed');
      const tooMany = Array.from({ length: 1001 }, (_, n) => lead(`p${n}@acme.example.com`));
      expectError(await api.post(BATCHES, { leads: tooMany }), 400, 'validation_failed');
      expectError(await api.post(BATCHES, { leads: [lead('a@acme.example.com')], templateId: crypto.randomUUID() }), 404, 'not_found');
      expectError(await api.post(BATCHES, { leads: [lead('a@acme.example.com', { templateId: crypto.randomUUID() })] }), 404, 'not_found');
      expectError(await api.post(BATCHES, { leads: 'all of them' }), 400, 'validation_failed');
      assert.equal((await api.get(BATCHES)).body.pagination.total, 0);
      assert.equal((await api.get(`${LEADS}/jobs`)).body.pagination.total, 0);
    });

    it('replays an Idempotency-Key’s batch, and keeps each account’s batches its own', async () => {
      const owner = await createOwner(test.storage, 'business');
      const api = client(test.app, owner.apiKey);
      const body = { leads: [lead('once@acme.example.com')] };
      const first = await api.post(BATCHES, body, { 'idempotency-key': 'crm-export-7' });
      const again = await api.post(BATCHES, body, { 'idempotency-key': 'crm-export-7' });
      assert.equal(first.status, 202);
      assert.equal(again.status, 202);
      assert.equal(again.body.id, first.body.id);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      expectError(await api.post(BATCHES, { leads: [lead('other@acme.example.com')] }, { 'idempotency-key': 'crm-export-7' }), 409, 'conflict');
      assert.equal((await api.get(BATCHES)).body.pagination.total, 1);

      const stranger = client(test.app, (await createOwner(test.storage, 'business')).apiKey);
      expectError(await stranger.get(`${BATCHES}/${first.body.id}`), 404, 'not_found');
      expectError(await stranger.get(`${BATCHES}/${first.body.id}/results.csv`), 404, 'not_found');
      assert.equal((await stranger.get(`${LEADS}/jobs?batch=${first.body.id}`)).body.pagination.total, 0);
      expectError(await api.get(`${BATCHES}/not-a-uuid`), 400, 'validation_failed');
    });
  });

  describe(`lead batches with the mail-server look-up (${dialect})`, () => {
    let site: LocalServer;
    let test: TestApp;

    before(async () => {
      site = await startLocalServer();
      serveCompany(site, 'acme.example.com', companyHome({ name: 'Acme Widgets', description: 'Acme makes widgets.', product: 'Widgets' }));
      test = await startApp(dialect, siteEnv(site, { PLAN_FREE_RPM: '1000', PLAN_FREE_MONTHLY_LEADS: '3', LEAD_WORKER: 'false' }));
    });
    after(async () => {
      await test.close();
      await site.close();
    });

    it('looks the mail server up in the job, ends an address without one rejected, and gives its lead back', async () => {
      const owner = await createOwner(test.storage, 'free');
      const api = client(test.app, owner.apiKey);
      const looked: string[] = [];
      const mailServers = {
        async resolveMx(domain: string) {
          looked.push(domain);
          if (domain === 'acme.example.com') return [{ exchange: 'mx.acme.example.com', priority: 10 }];
          const error = new Error(`queryMx ENOTFOUND ${domain}`) as Error & { code: string };
          error.code = 'ENOTFOUND';
          throw error;
        },
      };
      const submitted = await api.post(BATCHES, { leads: [lead('a@acme.example.com'), lead('b@nomail.example.org')] });
      assert.equal(submitted.status, 202, submitted.raw);
      // Accepting needs no network: nothing was looked up yet.
      assert.deepEqual(looked, []);
      const worker = startLeadWorker(test, { leaseMs: 5_000 }, { checkMx: true, mailServers });
      try {
        const done = await waitForBatch(api, submitted.body.id);
        assert.deepEqual([done.batch.counts.completed, done.batch.counts.rejected], [1, 1]);
      } finally {
        await worker.close();
      }
      assert.deepEqual(looked.sort(), ['acme.example.com', 'nomail.example.org']);
      const results = (await api.get(`${BATCHES}/${submitted.body.id}/results.json`)).body.results;
      assert.equal(results[1].status, 'rejected');
      assert.match(results[1].error, /mail/i);
      // The rejected lead was given back: two more fit in the quota of three.
      const more = await api.post(BATCHES, { leads: [lead('c@acme.example.com'), lead('d@acme.example.com'), lead('e@acme.example.com')] });
      assert.equal(more.status, 202);
      assert.equal(more.body.not_accepted.length, 1);
    });
  });
}
