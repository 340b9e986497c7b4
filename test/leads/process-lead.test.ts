import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { client, createOwner, DIALECTS, expectError, type Owner, startApp, type TestApp } from '../helpers/app.js';
import { IDEMPOTENCY_ABANDONED_MS } from '../../src/leads/idempotency/store.js';
import { companyHome, LEADS, lead, serveCompany, siteEnv, waitForJob } from '../helpers/leads.js';
import { html, type LocalServer, startLocalServer } from '../helpers/local-server.js';
import { createClientUser } from '../helpers/roles.js';
import { TemplateQueries } from '../../src/leads/templates/queries.js';
import { TemplateService } from '../../src/leads/templates/service.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

for (const dialect of DIALECTS) {
  describe(`POST /api/client/process-lead (${dialect})`, () => {
    let site: LocalServer;
    let test: TestApp;
    let owner: Owner;
    let api: ReturnType<typeof client>;

    before(async () => {
      site = await startLocalServer();
      test = await startApp(dialect, siteEnv(site, { PLAN_FREE_RPM: '1000' }));
      owner = await createOwner(test.storage);
      api = client(test.app, owner.apiKey);
      serveCompany(
        site,
        'zeppelin-works.com',
        companyHome({
          name: 'Zeppelin Works',
          description: 'Zeppelin Works builds quiet electric airships for regional cargo.',
          product: 'Electric airships for cargo',
        }),
      );
    });
    after(async () => {
      await test.close();
      await site.close();
    });

    it('writes a personalized email from the company site and stores every step of the job', async () => {
      const response = await api.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'));
      assert.equal(response.status, 200, response.raw);
      const body = response.body;
      assert.equal(body.success, true);
      assert.match(body.jobId, UUID);
      assert.equal(typeof body.emailSubject, 'string');
      assert.ok(body.emailBody.includes('Ada'), body.emailBody);
      assert.ok(`${body.emailSubject} ${body.emailBody}`.includes('Zeppelin Works'));
      assert.equal(body.emailDraft, `${body.emailSubject}\n\n${body.emailBody}`);
      assert.equal(typeof body.message, 'string');

      const job = (await api.get(`${LEADS}/jobs/${body.jobId}`)).body;
      assert.equal(job.status, 'completed');
      assert.equal(job.email, 'ada@zeppelin-works.com');
      assert.equal(job.domain, 'zeppelin-works.com');
      assert.equal(job.first_name, 'Ada');
      assert.equal(job.last_name, 'Lovelace');
      assert.equal(job.error_message, null);
      assert.match(job.created_at, ISO);
      assert.match(job.completed_at, ISO);
      assert.deepEqual(
        job.transitions.map((step: { status: string }) => step.status),
        ['pending', 'scraping', 'generating', 'completed'],
      );
      assert.equal(job.email_subject, body.emailSubject);
      assert.equal(job.email_body, body.emailBody);
      assert.equal(job.company.name, 'Zeppelin Works');
      assert.equal(job.company.source, 'site');
      assert.equal(job.generator, 'builtin');
    });

    it('trims the fields and compares the address case-insensitively', async () => {
      const response = await api.post(`${LEADS}/process-lead`, { firstName: '  Grace ', lastName: ' Hopper ', email: ' Grace@Zeppelin-Works.COM ' });
      assert.equal(response.status, 200, response.raw);
      const job = (await api.get(`${LEADS}/jobs/${response.body.jobId}`)).body;
      assert.equal(job.first_name, 'Grace');
      assert.equal(job.last_name, 'Hopper');
      assert.equal(job.domain, 'zeppelin-works.com');
      assert.ok(response.body.emailBody.includes('Grace'));
    });

    it('reuses the research of a domain: many leads of one company cost one fetch', async () => {
      serveCompany(site, 'cached-co.com', companyHome({ name: 'Cached Co', description: 'Cached Co sells caches.', product: 'Caches' }));
      const before = site.requests.filter((request) => request.path.startsWith('/cached-co.com/')).length;
      const responses = await Promise.all(['a', 'b', 'c', 'd'].map((name) => api.post(`${LEADS}/process-lead`, lead(`${name}@cached-co.com`))));
      for (const response of responses) assert.equal(response.status, 200, response.raw);
      await api.post(`${LEADS}/process-lead`, lead('e@cached-co.com'));
      const homeFetches = site.requests.filter((request) => request.path === '/cached-co.com/').length;
      assert.equal(before, 0);
      assert.equal(homeFetches, 1);
    });

    it('degrades to what the domain tells when the site is unreachable, and says so on the job', async () => {
      const response = await api.post(`${LEADS}/process-lead`, lead('ada@acme-corp.com'));
      assert.equal(response.status, 200, response.raw);
      assert.equal(response.body.success, true);
      assert.ok(`${response.body.emailSubject} ${response.body.emailBody}`.includes('Acme Corp'));
      const job = (await api.get(`${LEADS}/jobs/${response.body.jobId}`)).body;
      assert.equal(job.status, 'completed');
      assert.equal(job.company.source, 'domain');
      assert.equal(job.company.name, 'Acme Corp');
      assert.match(job.research_note, /not used/);
    });

    for (const [email, reason] of [
      ['ada@gmail.com', 'free_provider'],
      ['ada@mail.yahoo.co.uk', 'free_provider'],
      ['ada@mailinator.com', 'disposable'],
      ['not-an-address', 'invalid_syntax'],
      ['ada@@example.com', 'invalid_syntax'],
    ] as const) {
      it(`rejects ${email} (${reason}) with 200, businessEmail false and a rejected job`, async () => {
        const response = await api.post(`${LEADS}/process-lead`, lead(email));
        assert.equal(response.status, 200, response.raw);
        assert.equal(response.body.success, false);
        assert.equal(response.body.businessEmail, false);
        assert.equal(response.body.reason, reason);
        assert.equal(typeof response.body.error, 'string');
        assert.ok(response.body.error.length > 10);
        const job = (await api.get(`${LEADS}/jobs/${response.body.jobId}`)).body;
        assert.equal(job.status, 'rejected');
        assert.equal(job.error_message, response.body.error);
        assert.equal(job.rejection_reason, reason);
        assert.match(job.completed_at, ISO);
      });
    }

    it('refuses bad bodies with 400 in the error shape, and creates no job', async () => {
      const { body: before } = await api.get(`${LEADS}/jobs?limit=1`);
      expectError(await api.post(`${LEADS}/process-lead`, { lastName: 'L', email: 'a@zeppelin-works.com' }), 400, 'validation_failed');
      expectError(await api.post(`${LEADS}/process-lead`, { firstName: 1, lastName: 'L', email: 'a@zeppelin-works.com' }), 400, 'validation_failed');
      const empty = expectError(
        await api.post(`${LEADS}/process-lead`, lead('a@zeppelin-works.com', { firstName: '   ' })),
        400,
        'validation_failed',
      );
      assert.equal(empty.details[0]!.path, '/firstName');
      expectError(await api.post(`${LEADS}/process-lead`, lead('a@zeppelin-works.com', { lastName: 'x'.repeat(101) })), 400, 'validation_failed');
      const nul = expectError(
        await api.post(`${LEADS}/process-lead`, lead('a@zeppelin-works.com', { firstName: 'A\u0000da' })),
        400,
        'validation_failed',
      );
      assert.equal(nul.details[0]!.path, '/firstName');
      expectError(await api.post(`${LEADS}/process-lead`, lead('a\u0000@zeppelin-works.com')), 400, 'validation_failed');
      expectError(await api.post(`${LEADS}/process-lead`, lead(`${'a'.repeat(320)}@x.com`)), 400, 'validation_failed');
      expectError(await api.post(`${LEADS}/process-lead`, lead('a@zeppelin-works.com', { templateId: 'not-a-uuid' })), 400, 'validation_failed');
      expectError(await api.post(`${LEADS}/process-lead`, '{"firstName": '), 400, 'validation_failed');
      expectError(
        await api.post(`${LEADS}/process-lead`, 'firstName=a', { 'content-type': 'application/x-www-form-urlencoded' }),
        415,
        'unsupported_media_type',
      );
      const { body: afterwards } = await api.get(`${LEADS}/jobs?limit=1`);
      assert.equal(afterwards.pagination.total, before.pagination.total);
    });

    it('needs a valid x-api-key: missing, unknown and revoked keys are 401', async () => {
      expectError(await client(test.app).post(`${LEADS}/process-lead`, lead('a@zeppelin-works.com')), 401, 'unauthorized');
      expectError(await client(test.app, 'mh_live_unknown').post(`${LEADS}/process-lead`, lead('a@zeppelin-works.com')), 401, 'unauthorized');
      expectError(await client(test.app).get(`${LEADS}/jobs`, { authorization: `Bearer ${owner.apiKey}` }), 401, 'unauthorized');
      const other = await createOwner(test.storage);
      await test.storage.db.updateTable('api_keys').set({ revoked_at: new Date().toISOString() }).where('user_id', '=', other.userId).execute();
      expectError(await client(test.app, other.apiKey).get(`${LEADS}/jobs`), 401, 'unauthorized');
    });

    it('is for the account owner: a portal client key is 403', async () => {
      const clientUser = await createClientUser(test.storage, owner.accountId, []);
      expectError(await client(test.app, clientUser.apiKey).post(`${LEADS}/process-lead`, lead('a@zeppelin-works.com')), 403, 'forbidden');
      expectError(await client(test.app, clientUser.apiKey).get(`${LEADS}/jobs`), 403, 'forbidden');
    });

    describe('templates', () => {
      it('renders the chosen template; an unknown or foreign template is 404 and creates no job', async () => {
        const templates = new TemplateService(new TemplateQueries(test.storage.db));
        const chosen = await templates.create(owner.accountId, {
          name: 'Chosen',
          subject: 'A note for {{companyName}}',
          body: 'Hello {{firstName}},\n\nI read that {{companyName}} does this: {{companyDescription}}\n\n{{senderName}}',
        });
        const response = await api.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com', { templateId: chosen.id }));
        assert.equal(response.status, 200, response.raw);
        assert.equal(response.body.emailSubject, 'A note for Zeppelin Works');
        assert.match(response.body.emailBody, /^Hello Ada,/);
        assert.ok(response.body.emailBody.includes('quiet electric airships'));

        const stranger = await createOwner(test.storage);
        const foreign = await templates.create(stranger.accountId, { name: 'Theirs', body: 'Hi {{firstName}}' });
        const { body: before } = await api.get(`${LEADS}/jobs?limit=1`);
        expectError(await api.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com', { templateId: foreign.id })), 404, 'not_found');
        expectError(
          await api.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com', { templateId: '7d9f1c2e-4b1a-4c3d-9e8f-0a1b2c3d4e5f' })),
          404,
          'not_found',
        );
        const { body: afterwards } = await api.get(`${LEADS}/jobs?limit=1`);
        assert.equal(afterwards.pagination.total, before.pagination.total);
      });

      it("uses the account's default template when none is named", async () => {
        const account = await createOwner(test.storage);
        const templates = new TemplateService(new TemplateQueries(test.storage.db));
        await templates.create(account.accountId, {
          name: 'Default',
          subject: 'Default for {{firstName}}',
          body: 'Body for {{fullName}} at {{domain}}',
          isDefault: true,
        });
        const response = await client(test.app, account.apiKey).post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'));
        assert.equal(response.body.emailSubject, 'Default for Ada');
        assert.equal(response.body.emailBody, 'Body for Ada Lovelace at zeppelin-works.com');
      });
    });

    describe('Idempotency-Key', () => {
      it('replays the first response for the same key and body, and creates one job', async () => {
        const account = await createOwner(test.storage);
        const own = client(test.app, account.apiKey);
        const headers = { 'idempotency-key': 'order-42' };
        const first = await own.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'), headers);
        const second = await own.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'), headers);
        assert.equal(first.status, 200);
        assert.equal(second.status, 200);
        assert.deepEqual(second.body, first.body);
        assert.equal(second.headers['idempotent-replayed'], 'true');
        assert.equal(first.headers['idempotent-replayed'], undefined);
        assert.equal((await own.get(`${LEADS}/jobs`)).body.pagination.total, 1);

        expectError(await own.post(`${LEADS}/process-lead`, lead('grace@zeppelin-works.com'), headers), 409, 'conflict');
        // Keys belong to an account: another account's same key is another request.
        const otherResponse = await api.post(`${LEADS}/process-lead`, lead('grace@zeppelin-works.com'), headers);
        assert.equal(otherResponse.status, 200);
        assert.notEqual(otherResponse.body.jobId, first.body.jobId);
      });

      it('replays rejections too, and refuses a malformed key', async () => {
        const headers = { 'idempotency-key': `reject-${Date.now()}` };
        const first = await api.post(`${LEADS}/process-lead`, lead('ada@gmail.com'), headers);
        const second = await api.post(`${LEADS}/process-lead`, lead('ada@gmail.com'), headers);
        assert.deepEqual(second.body, first.body);
        expectError(await api.post(`${LEADS}/process-lead`, lead('ada@gmail.com'), { 'idempotency-key': 'x'.repeat(256) }), 400, 'validation_failed');
      });

      it('takes the Prefer choice as part of the request: the same key with the other choice is 409, not a replay', async () => {
        const own = client(test.app, (await createOwner(test.storage)).apiKey);
        const syncFirst = { 'idempotency-key': 'prefer-1' };
        assert.equal((await own.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'), syncFirst)).status, 200);
        expectError(
          await own.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'), { ...syncFirst, prefer: 'respond-async' }),
          409,
          'conflict',
        );
        const asyncFirst = { 'idempotency-key': 'prefer-2', prefer: 'respond-async' };
        const queued = await own.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'), asyncFirst);
        assert.equal(queued.status, 202, queued.raw);
        expectError(await own.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'), { 'idempotency-key': 'prefer-2' }), 409, 'conflict');
        // The same choice again is still a replay.
        const again = await own.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'), asyncFirst);
        assert.equal(again.status, 202);
        assert.equal(again.body.jobId, queued.body.jobId);
        assert.equal(again.headers['idempotent-replayed'], 'true');
        await waitForJob(own, queued.body.jobId);
      });

      it('is 409 while the first request with the key still runs, then replays its answer', async () => {
        let releaseSite!: () => void;
        const siteReleased = new Promise<void>((resolve) => (releaseSite = resolve));
        site.routes.set('/slow-idem.example.com/', async (_request, response) => {
          await siteReleased;
          html(response, companyHome({ name: 'Slow Idem', description: 'Slow Idem takes its time.', product: 'Patience' }));
        });
        const own = client(test.app, (await createOwner(test.storage)).apiKey);
        const headers = { 'idempotency-key': 'running-1' };
        const first = own.post(`${LEADS}/process-lead`, lead('ada@slow-idem.example.com'), headers);
        while (!site.requests.some((request) => request.path === '/slow-idem.example.com/')) await sleep(10);
        const meanwhile = expectError(await own.post(`${LEADS}/process-lead`, lead('ada@slow-idem.example.com'), headers), 409, 'conflict');
        assert.match(meanwhile.message, /being processed/);
        releaseSite();
        const answer = await first;
        assert.equal(answer.status, 200, answer.raw);
        const replay = await own.post(`${LEADS}/process-lead`, lead('ada@slow-idem.example.com'), headers);
        assert.deepEqual(replay.body, answer.body);
        assert.equal(replay.headers['idempotent-replayed'], 'true');
        assert.equal((await own.get(`${LEADS}/jobs`)).body.pagination.total, 1);
      });

      it('lets a retry take over a key left in progress by a process that died, not one still alive', async () => {
        const account = await createOwner(test.storage);
        const own = client(test.app, account.apiKey);
        const headers = { 'idempotency-key': 'orphan-1' };
        const first = await own.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'), headers);
        assert.equal(first.status, 200, first.raw);
        // The key as a request that died before answering leaves it: in progress, its last sign of life `at`.
        const leftInProgress = (at: number) =>
          test.storage.db
            .updateTable('idempotency_keys')
            .set({ status_code: null, response: null, created_at: new Date(at).toISOString(), renewed_at: null })
            .where('account_id', '=', account.accountId)
            .where('key', '=', 'orphan-1')
            .execute();
        // Recently: its process may well be running it still.
        await leftInProgress(Date.now() - 5_000);
        expectError(await own.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'), headers), 409, 'conflict');
        // Silent for longer than a live request ever is (it renews the key while it runs): the retry takes it over.
        await leftInProgress(Date.now() - IDEMPOTENCY_ABANDONED_MS - 1_000);
        // Not with another body, though.
        expectError(await own.post(`${LEADS}/process-lead`, lead('grace@zeppelin-works.com'), headers), 409, 'conflict');
        const retried = await own.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'), headers);
        assert.equal(retried.status, 200, retried.raw);
        assert.equal(retried.headers['idempotent-replayed'], undefined);
        assert.notEqual(retried.body.jobId, first.body.jobId);
        // Its answer is the key's answer from now on.
        const replay = await own.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'), headers);
        assert.equal(replay.body.jobId, retried.body.jobId);
        assert.equal(replay.headers['idempotent-replayed'], 'true');
      });
    });

    describe('leads in flight', () => {
      it('processes an account’s leads concurrently, at most its plan’s number at once; the others wait their turn', async () => {
        const limited = await startApp(dialect, siteEnv(site, { PLAN_FREE_CONCURRENCY: '2', PLAN_FREE_RPM: '1000' }));
        try {
          let inFlight = 0;
          let most = 0;
          const waiting: (() => void)[] = [];
          for (let index = 0; index < 5; index += 1) {
            site.routes.set(`/inflight-${index}.example.com/`, async (_request, response) => {
              inFlight += 1;
              most = Math.max(most, inFlight);
              await new Promise<void>((resolve) => waiting.push(resolve));
              inFlight -= 1;
              response.writeHead(200, { 'content-type': 'text/html' }).end(`<title>Inflight ${index}</title>`);
            });
          }
          const own = client(limited.app, (await createOwner(limited.storage)).apiKey);
          const other = client(limited.app, (await createOwner(limited.storage)).apiKey);
          const leads = Array.from({ length: 5 }, (_, index) => own.post(`${LEADS}/process-lead`, lead(`a@inflight-${index}.example.com`)));
          while (waiting.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
          // Another account is not held up by the first one's queue.
          assert.equal((await other.post(`${LEADS}/process-lead`, lead('b@zeppelin-works.com'))).status, 200);
          await new Promise((resolve) => setTimeout(resolve, 50));
          assert.equal(waiting.length, 2, 'two of the five leads are researched at once');
          // Let the site answer one request at a time until every lead is done.
          let finished = false;
          const all = Promise.all(leads).finally(() => (finished = true));
          while (!finished) {
            waiting.shift()?.();
            await new Promise((resolve) => setTimeout(resolve, 10));
          }
          const responses = await all;
          for (const response of responses) assert.equal(response.status, 200, response.raw);
          assert.equal(most, 2);
        } finally {
          await limited.close();
        }
      });
    });

    describe('quota', () => {
      it('counts leads that pass the business-email check; over the monthly quota is 429 quota_exceeded', async () => {
        const quotaApp = await startApp(dialect, siteEnv(site, { PLAN_FREE_MONTHLY_LEADS: '2', PLAN_FREE_RPM: '1000' }));
        try {
          const account = await createOwner(quotaApp.storage);
          const own = client(quotaApp.app, account.apiKey);
          assert.equal((await own.post(`${LEADS}/process-lead`, lead('a@zeppelin-works.com'))).body.success, true);
          assert.equal((await own.post(`${LEADS}/process-lead`, lead('a@gmail.com'))).body.businessEmail, false);
          assert.equal((await own.post(`${LEADS}/process-lead`, lead('b@zeppelin-works.com'))).body.success, true);
          const over = await own.post(`${LEADS}/process-lead`, lead('c@zeppelin-works.com'));
          const error = expectError(over, 429, 'quota_exceeded');
          assert.match(error.message, /2 leads a month/);
          assert.ok(Number(over.headers['retry-after']) > 0);
          // A non-business address is still answered: rejections cost nothing.
          assert.equal((await own.post(`${LEADS}/process-lead`, lead('d@gmail.com'))).body.businessEmail, false);
          assert.equal((await own.get(`${LEADS}/jobs`)).body.pagination.total, 4);
        } finally {
          await quotaApp.close();
        }
      });

      it('holds under concurrent requests: of 10 at once with 8 leads left, exactly 8 are accepted', async () => {
        const quotaApp = await startApp(dialect, siteEnv(site, { PLAN_FREE_MONTHLY_LEADS: '8', PLAN_FREE_RPM: '1000', LEAD_WORKER: 'false' }));
        try {
          const account = await createOwner(quotaApp.storage);
          const own = client(quotaApp.app, account.apiKey);
          // Both ways of asking: answered with the email, and queued.
          const answers = await Promise.all(
            Array.from({ length: 10 }, (_, index) =>
              own.post(`${LEADS}/process-lead`, lead(`q${index}@zeppelin-works.com`), index % 2 === 0 ? {} : { prefer: 'respond-async' }),
            ),
          );
          const accepted = answers.filter((answer) => answer.status === 200 || answer.status === 202);
          const refused = answers.filter((answer) => answer.status === 429);
          assert.equal(accepted.length, 8, answers.map((answer) => answer.status).join(' '));
          for (const answer of refused) expectError(answer, 429, 'quota_exceeded');
          assert.equal(refused.length, 2);
          const usage = await quotaApp.storage.db.selectFrom('lead_usage').select('leads').where('account_id', '=', account.accountId).execute();
          assert.deepEqual(usage, [{ leads: 8 }]);
          // A refused request leaves no job behind.
          assert.equal((await own.get(`${LEADS}/jobs`)).body.pagination.total, 8);
        } finally {
          await quotaApp.close();
        }
      });
    });
  });
}
