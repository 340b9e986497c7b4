import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Storage } from '../../src/db/connection.js';
import { type LeadJobRow, LeadQueries, newJob } from '../../src/leads/queries.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { client, createOwner, DIALECTS, type Owner, startApp } from '../helpers/app.js';
import { chatAnswer, companyHome, LEADS, lead, serveCompany, siteEnv, startInstances, startLeadWorker, waitForJob } from '../helpers/leads.js';
import { html, startLocalServer } from '../helpers/local-server.js';

/** A queued job as an instance that claimed it and died leaves it (the state given overrides). */
async function insertStuckJob(storage: Storage, owner: Owner, email: string, state: Partial<LeadJobRow>): Promise<string> {
  const now = new Date().toISOString();
  const id = randomUUID();
  const identity = {
    id,
    account_id: owner.accountId,
    user_id: owner.userId,
    template_id: null,
    first_name: 'Ada',
    last_name: 'Lovelace',
    email,
    domain: email.split('@')[1]!,
    created_at: now,
  };
  await new LeadQueries(storage.db, storage.dialect).insertJob(newJob(identity, { run_async: 1, scraping_at: now, ...state }));
  return id;
}

for (const dialect of DIALECTS) {
  describe(`the lead worker (${dialect})`, () => {
    it('shares queued jobs between two instances: each job runs exactly once', async () => {
      const site = await startLocalServer();
      const llm = await startLocalServer();
      const prompts: string[] = [];
      llm.routes.set('/v1/chat/completions', async (_request, response, body) => {
        prompts.push(JSON.parse(body).messages.at(-1).content);
        // A little latency, so that both instances have jobs in hand at once.
        await new Promise((resolve) => setTimeout(resolve, 20));
        chatAnswer(response, JSON.stringify({ subject: 'Hi', body: 'Hello' }));
      });
      const shared = await startInstances(dialect, 2, {
        ...siteEnv(site, { PLAN_FREE_RPM: '1000', LEAD_WORKER_POLL_MS: '25' }),
        LLM_BASE_URL: `${llm.base}/v1`,
      });
      try {
        const [first, second] = shared.instances;
        const owner = await createOwner(first!.storage);
        const apis = [client(first!.app, owner.apiKey), client(second!.app, owner.apiKey)];
        const emails = Array.from({ length: 24 }, (_, index) => `lead${index}@company${index % 6}.example.com`);
        for (let index = 0; index < 6; index += 1) {
          serveCompany(
            site,
            `company${index}.example.com`,
            companyHome({ name: `Company ${index}`, description: `Company ${index} makes things.`, product: 'Things' }),
          );
        }
        const ids: string[] = [];
        for (const [index, email] of emails.entries()) {
          const response = await apis[index % 2]!.post(`${LEADS}/process-lead`, lead(email), { prefer: 'respond-async' });
          assert.equal(response.status, 202, response.raw);
          ids.push(response.body.jobId);
        }
        for (const id of ids) assert.equal((await waitForJob(apis[0]!, id)).status, 'completed');
        const rows = await first!.storage.db.selectFrom('lead_jobs').select(['id', 'attempts']).where('id', 'in', ids).execute();
        assert.deepEqual(
          rows.map((row) => row.attempts),
          ids.map(() => 1),
        );
        for (const email of emails) assert.equal(prompts.filter((prompt) => prompt.includes(`<${email}>`)).length, 1, email);
      } finally {
        await shared.close();
        await site.close();
        await llm.close();
      }
    });

    it('takes over a job whose instance stopped mid-way, and gives up after three interruptions', async () => {
      const site = await startLocalServer();
      serveCompany(site, 'resume.example.com', companyHome({ name: 'Resume', description: 'Resume resumes.', product: 'Resuming' }));
      const shared = await startInstances(dialect, 1, siteEnv(site, { PLAN_FREE_RPM: '1000', LEAD_WORKER_POLL_MS: '25' }));
      try {
        const [instance] = shared.instances;
        const owner = await createOwner(instance!.storage);
        const api = client(instance!.app, owner.apiKey);
        const past = new Date(Date.now() - 60_000).toISOString();
        // Two jobs as an instance that claimed them and died leaves them: running, with leases in the past.
        const stuck = await insertStuckJob(instance!.storage, owner, 'a@resume.example.com', {
          status: 'generating',
          lease_until: past,
          attempts: 1,
        });
        const hopeless = await insertStuckJob(instance!.storage, owner, 'b@resume.example.com', {
          status: 'scraping',
          lease_until: past,
          attempts: 3,
        });
        const resumed = await waitForJob(api, stuck);
        assert.equal(resumed.status, 'completed');
        const gaveUp = await waitForJob(api, hopeless);
        assert.equal(gaveUp.status, 'failed');
        assert.match(gaveUp.error_message, /Gave up after 3 attempts/);
      } finally {
        await shared.close();
        await site.close();
      }
    });

    describe('leases', () => {
      it('renews the lease of a slow job and of jobs waiting for their account’s slot: none runs twice', async () => {
        const site = await startLocalServer();
        serveCompany(site, 'slow-llm.example.com', companyHome({ name: 'Slow LLM', description: 'Slow LLM waits.', product: 'Waiting' }));
        const llm = await startLocalServer();
        const prompts: string[] = [];
        llm.routes.set('/v1/chat/completions', async (_request, response, body) => {
          prompts.push(JSON.parse(body).messages.at(-1).content);
          // Each answer takes several leases (300 ms): only renewals keep the jobs with their runners.
          await sleep(1_000);
          chatAnswer(response, JSON.stringify({ subject: 'Hi', body: 'Hello' }));
        });
        // The app queues; two other instances, with a 300 ms lease, run the queue. One lead of the account at a time,
        // so two of the three jobs wait for the account while the first runs.
        const test = await startApp(dialect, {
          ...siteEnv(site, { PLAN_FREE_RPM: '1000', PLAN_FREE_CONCURRENCY: '1', LEAD_WORKER: 'false', LEAD_WORKER_POLL_MS: '25' }),
          LLM_BASE_URL: `${llm.base}/v1`,
        });
        const workers = [startLeadWorker(test, { leaseMs: 300 }), startLeadWorker(test, { leaseMs: 300 })];
        try {
          const api = client(test.app, (await createOwner(test.storage)).apiKey);
          const emails = ['a@slow-llm.example.com', 'b@slow-llm.example.com', 'c@slow-llm.example.com'];
          const ids: string[] = [];
          for (const email of emails) ids.push((await api.post(`${LEADS}/process-lead`, lead(email), { prefer: 'respond-async' })).body.jobId);
          for (const id of ids) assert.equal((await waitForJob(api, id, undefined, 15_000)).status, 'completed');
          for (const email of emails) assert.equal(prompts.filter((prompt) => prompt.includes(`<${email}>`)).length, 1, email);
          const rows = await test.storage.db.selectFrom('lead_jobs').select(['attempts', 'lease_until']).where('id', 'in', ids).execute();
          assert.deepEqual(
            rows,
            ids.map(() => ({ attempts: 1, lease_until: null })),
          );
        } finally {
          for (const worker of workers) await worker.close();
          await test.close();
          await site.close();
          await llm.close();
        }
      });

      it('lets a run whose lease was taken over write nothing: the new run’s result stands', async () => {
        const site = await startLocalServer();
        serveCompany(site, 'stalled.example.com', companyHome({ name: 'Stalled', description: 'Stalled stalls.', product: 'Stalling' }));
        const llm = await startLocalServer();
        let releaseFirst!: () => void;
        const firstReleased = new Promise<void>((resolve) => (releaseFirst = resolve));
        let firstAnswered!: () => void;
        const firstDone = new Promise<void>((resolve) => (firstAnswered = resolve));
        let calls = 0;
        llm.routes.set('/v1/chat/completions', async (_request, response) => {
          calls += 1;
          if (calls === 1) {
            // The first runner stalls here past its lease (its renewals are off, as in a process that froze).
            await firstReleased;
            response.on('finish', () => firstAnswered());
            chatAnswer(response, JSON.stringify({ subject: 'Stale subject', body: 'Stale body' }));
            return;
          }
          chatAnswer(response, JSON.stringify({ subject: 'Fresh subject', body: 'Fresh body' }));
        });
        const test = await startApp(dialect, {
          ...siteEnv(site, { PLAN_FREE_RPM: '1000', LEAD_WORKER: 'false', LEAD_WORKER_POLL_MS: '25' }),
          LLM_BASE_URL: `${llm.base}/v1`,
        });
        const workers = [
          startLeadWorker(test, { leaseMs: 300, renewEveryMs: 60_000 }),
          startLeadWorker(test, { leaseMs: 300, renewEveryMs: 60_000 }),
        ];
        try {
          const api = client(test.app, (await createOwner(test.storage)).apiKey);
          const { jobId } = (await api.post(`${LEADS}/process-lead`, lead('ada@stalled.example.com'), { prefer: 'respond-async' })).body;
          // The lease runs out, another claim takes the job over and completes it.
          const fresh = await waitForJob(api, jobId);
          assert.equal(fresh.status, 'completed');
          assert.equal(fresh.email_subject, 'Fresh subject');
          // Now the stalled runner gets its answer: it must not overwrite the job.
          releaseFirst();
          await firstDone;
          await sleep(200);
          const after = (await api.get(`${LEADS}/jobs/${jobId}`)).body;
          assert.equal(after.status, 'completed');
          assert.equal(after.email_subject, 'Fresh subject');
          assert.equal(after.email_body, 'Fresh body');
          assert.equal(after.updated_at, fresh.updated_at);
          assert.equal(after.completed_at, fresh.completed_at);
          assert.equal(calls, 2);
          const row = await test.storage.db.selectFrom('lead_jobs').select('attempts').where('id', '=', jobId).executeTakeFirstOrThrow();
          assert.equal(row.attempts, 2);
        } finally {
          releaseFirst();
          for (const worker of workers) await worker.close();
          await test.close();
          await site.close();
          await llm.close();
        }
      });
    });

    it('claims fairly: another account’s job runs while one account has a big backlog', async () => {
      const site = await startLocalServer();
      let openSite!: () => void;
      const siteOpen = new Promise<void>((resolve) => (openSite = resolve));
      site.routes.set('/backlog.example.com/', async (_request, response) => {
        await siteOpen;
        html(response, companyHome({ name: 'Backlog', description: 'Backlog has many leads.', product: 'Leads' }));
      });
      serveCompany(site, 'quiet.example.com', companyHome({ name: 'Quiet', description: 'Quiet has one lead.', product: 'One lead' }));
      const shared = await startInstances(
        dialect,
        1,
        siteEnv(site, { PLAN_FREE_RPM: '1000', PLAN_FREE_CONCURRENCY: '2', LEAD_WORKER_POLL_MS: '25' }),
      );
      try {
        const [instance] = shared.instances;
        const busy = await createOwner(instance!.storage);
        const busyApi = client(instance!.app, busy.apiKey);
        const quietApi = client(instance!.app, (await createOwner(instance!.storage)).apiKey);
        // More queued jobs than the worker runs at once (32), all before the other account's one.
        const backlog: string[] = [];
        for (let index = 0; index < 40; index += 1) {
          backlog.push(
            (await busyApi.post(`${LEADS}/process-lead`, lead(`lead${index}@backlog.example.com`), { prefer: 'respond-async' })).body.jobId,
          );
        }
        const quiet = (await quietApi.post(`${LEADS}/process-lead`, lead('ada@quiet.example.com'), { prefer: 'respond-async' })).body.jobId;
        assert.equal((await waitForJob(quietApi, quiet, undefined, 5_000)).status, 'completed');
        // Only what could start was claimed: the account's two slots; the rest wait unclaimed, pending, not researched.
        const rows = await instance!.storage.db
          .selectFrom('lead_jobs')
          .select(['status', 'lease_until', 'scraping_at', 'attempts'])
          .where('account_id', '=', busy.accountId)
          .execute();
        assert.equal(rows.filter((row) => row.lease_until !== null).length, 2);
        assert.equal(rows.filter((row) => row.status === 'scraping' && row.scraping_at !== null).length, 2);
        assert.equal(rows.filter((row) => row.status === 'pending' && row.scraping_at === null && row.attempts === 0).length, 38);
        openSite();
        for (const id of backlog) assert.equal((await waitForJob(busyApi, id, undefined, 20_000)).status, 'completed');
      } finally {
        openSite();
        await shared.close();
        await site.close();
      }
    });
  });
}
