import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { client, createOwner, DIALECTS, expectError, startApp, type TestApp } from '../helpers/app.js';
import { companyHome, LEADS, lead, serveCompany, siteEnv, waitForJob } from '../helpers/leads.js';
import { html, type LocalServer, startLocalServer } from '../helpers/local-server.js';

for (const dialect of DIALECTS) {
  describe(`GET /api/client/jobs (${dialect})`, () => {
    let site: LocalServer;
    let test: TestApp;
    let api: ReturnType<typeof client>;
    let other: ReturnType<typeof client>;
    const created: string[] = [];

    before(async () => {
      site = await startLocalServer();
      serveCompany(site, 'listing.example.com', companyHome({ name: 'Listing', description: 'Lists things.', product: 'Lists' }));
      test = await startApp(dialect, siteEnv(site, { PLAN_FREE_RPM: '1000', LEAD_WORKER: 'false' }));
      api = client(test.app, (await createOwner(test.storage)).apiKey);
      other = client(test.app, (await createOwner(test.storage)).apiKey);
      // 12 completed, 3 rejected, 2 queued (no worker runs them here), in this order.
      for (let index = 0; index < 12; index += 1)
        created.push((await api.post(`${LEADS}/process-lead`, lead(`p${index}@listing.example.com`))).body.jobId);
      for (let index = 0; index < 3; index += 1) created.push((await api.post(`${LEADS}/process-lead`, lead(`p${index}@gmail.com`))).body.jobId);
      for (let index = 0; index < 2; index += 1) {
        const queued = await api.post(`${LEADS}/process-lead`, lead(`q${index}@listing.example.com`), { prefer: 'respond-async' });
        assert.equal(queued.status, 202);
        created.push(queued.body.jobId);
      }
      await other.post(`${LEADS}/process-lead`, lead('someone@listing.example.com'));
    });
    after(async () => {
      await test.close();
      await site.close();
    });

    it('pages the account’s jobs, newest first, 10 by default', async () => {
      const { status, body } = await api.get(`${LEADS}/jobs`);
      assert.equal(status, 200);
      assert.deepEqual(body.pagination, { total: 17, page: 1, limit: 10, pages: 2 });
      assert.deepEqual(
        body.jobs.map((job: { id: string }) => job.id),
        created.slice(-10).reverse(),
      );
      const job = body.jobs[0];
      assert.deepEqual(Object.keys(job).sort(), [
        'batch_id',
        'completed_at',
        'created_at',
        'domain',
        'email',
        'error_message',
        'first_name',
        'id',
        'last_name',
        'status',
        'updated_at',
      ]);
      const second = await api.get(`${LEADS}/jobs?page=2`);
      assert.deepEqual(
        second.body.jobs.map((row: { id: string }) => row.id),
        created.slice(0, 7).reverse(),
      );
      const beyond = await api.get(`${LEADS}/jobs?page=9`);
      assert.deepEqual(beyond.body.jobs, []);
      assert.equal(beyond.body.pagination.total, 17);
    });

    it('takes limit from 1 to 100', async () => {
      assert.equal((await api.get(`${LEADS}/jobs?limit=100`)).body.jobs.length, 17);
      const three = await api.get(`${LEADS}/jobs?limit=3&page=2`);
      assert.deepEqual(three.body.pagination, { total: 17, page: 2, limit: 3, pages: 6 });
      assert.deepEqual(
        three.body.jobs.map((job: { id: string }) => job.id),
        created.slice(-6, -3).reverse(),
      );
    });

    it('filters by status; processing means scraping, generating or sending', async () => {
      const completed = await api.get(`${LEADS}/jobs?status=completed&limit=100`);
      assert.equal(completed.body.pagination.total, 12);
      assert.ok(completed.body.jobs.every((job: { status: string }) => job.status === 'completed'));
      assert.equal((await api.get(`${LEADS}/jobs?status=rejected`)).body.pagination.total, 3);
      assert.equal((await api.get(`${LEADS}/jobs?status=pending`)).body.pagination.total, 2);
      assert.equal((await api.get(`${LEADS}/jobs?status=failed`)).body.pagination.total, 0);
      assert.equal((await api.get(`${LEADS}/jobs?status=processing`)).body.pagination.total, 0);
      await test.storage.db.updateTable('lead_jobs').set({ status: 'generating' }).where('id', '=', created.at(-1)!).execute();
      const processing = await api.get(`${LEADS}/jobs?status=processing`);
      assert.deepEqual(
        processing.body.jobs.map((job: { id: string }) => job.id),
        [created.at(-1)],
      );
      await test.storage.db.updateTable('lead_jobs').set({ status: 'pending' }).where('id', '=', created.at(-1)!).execute();
    });

    it('refuses invalid query values with 400', async () => {
      for (const query of ['limit=0', 'limit=101', 'limit=abc', 'page=0', 'page=-1', 'page=1.5', 'status=done', 'status=']) {
        expectError(await api.get(`${LEADS}/jobs?${query}`), 400, 'validation_failed');
      }
    });

    it('shows an account nothing of another’s jobs', async () => {
      const theirs = await other.get(`${LEADS}/jobs`);
      assert.equal(theirs.body.pagination.total, 1);
      assert.ok(!created.includes(theirs.body.jobs[0].id));
      expectError(await other.get(`${LEADS}/jobs/${created[0]}`), 404, 'not_found');
      expectError(await api.get(`${LEADS}/jobs/${theirs.body.jobs[0].id}`), 404, 'not_found');
      expectError(await api.get(`${LEADS}/jobs/not-a-uuid`), 400, 'validation_failed');
    });
  });

  describe(`Prefer: respond-async and the worker (${dialect})`, () => {
    let site: LocalServer;
    let test: TestApp;
    let api: ReturnType<typeof client>;

    before(async () => {
      site = await startLocalServer();
      serveCompany(site, 'async.example.com', companyHome({ name: 'Async Works', description: 'Async Works runs things later.', product: 'Later' }));
      test = await startApp(dialect, siteEnv(site, { PLAN_FREE_RPM: '1000' }));
      await test.app.listen({ port: 0, host: '127.0.0.1' });
      api = client(test.app, (await createOwner(test.storage)).apiKey);
    });
    after(async () => {
      await test.close();
      await site.close();
    });

    it('answers 202 at once and the worker completes the job', async () => {
      let releaseSite!: () => void;
      const siteAnswered = new Promise<void>((resolve) => (releaseSite = resolve));
      site.routes.set('/slow-async.example.com/', async (_request, response) => {
        await siteAnswered;
        html(response, companyHome({ name: 'Slow Async', description: 'Slow Async takes its time.', product: 'Patience' }));
      });
      const response = await api.post(`${LEADS}/process-lead`, lead('ada@slow-async.example.com'), { prefer: 'respond-async' });
      assert.equal(response.status, 202, response.raw);
      assert.equal(response.body.success, true);
      assert.equal(response.body.status, 'pending');
      assert.equal(response.headers['preference-applied'], 'respond-async');
      assert.equal(response.headers.location, `/api/client/jobs/${response.body.jobId}`);
      // The site has not answered yet, so the job is still on its way.
      const running = await waitForJob(api, response.body.jobId, ['scraping']);
      assert.equal(running.email_subject, null);
      releaseSite();
      const job = await waitForJob(api, response.body.jobId);
      assert.equal(job.status, 'completed');
      assert.equal(job.company.name, 'Slow Async');
      assert.ok(job.email_body.includes('Ada'));
      assert.deepEqual(
        job.transitions.map((step: { status: string }) => step.status),
        ['pending', 'scraping', 'generating', 'completed'],
      );
    });

    it('answers a non-business address at once, even when asked to respond asynchronously', async () => {
      const response = await api.post(`${LEADS}/process-lead`, lead('ada@gmail.com'), { prefer: 'respond-async' });
      assert.equal(response.status, 200);
      assert.equal(response.body.businessEmail, false);
    });

    it('replays a 202 for the same Idempotency-Key', async () => {
      const headers = { prefer: 'respond-async', 'idempotency-key': 'async-1' };
      const first = await api.post(`${LEADS}/process-lead`, lead('grace@async.example.com'), headers);
      const second = await api.post(`${LEADS}/process-lead`, lead('grace@async.example.com'), headers);
      assert.equal(first.status, 202);
      assert.equal(second.status, 202);
      assert.equal(second.body.jobId, first.body.jobId);
      await waitForJob(api, first.body.jobId);
    });
  });
}
