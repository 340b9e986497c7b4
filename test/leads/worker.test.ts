import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Storage } from '../../src/db/connection.js';
import { insertJob, type LeadJobRow, newJob } from '../../src/leads/queries.js';
import { client, createOwner, DIALECTS, type Owner } from '../helpers/app.js';
import { chatAnswer, companyHome, LEADS, lead, serveCompany, siteEnv, startInstances, waitForJob } from '../helpers/leads.js';
import { startLocalServer } from '../helpers/local-server.js';

/** A queued job as an instance that claimed it and died leaves it (the state given overrides). */
async function insertStuckJob(storage: Storage, owner: Owner, email: string, state: Partial<LeadJobRow>): Promise<string> {
  const now = new Date().toISOString();
  const id = randomUUID();
  const identity = { id, account_id: owner.accountId, user_id: owner.userId, template_id: null, first_name: 'Ada', last_name: 'Lovelace', email, domain: email.split('@')[1]!, created_at: now };
  await insertJob(storage.db, newJob(identity, { run_async: 1, scraping_at: now, ...state }));
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
          serveCompany(site, `company${index}.example.com`, companyHome({ name: `Company ${index}`, description: `Company ${index} makes things.`, product: 'Things' }));
        }
        const ids: string[] = [];
        for (const [index, email] of emails.entries()) {
          const response = await apis[index % 2]!.post(`${LEADS}/process-lead`, lead(email), { prefer: 'respond-async' });
          assert.equal(response.status, 202, response.raw);
          ids.push(response.body.jobId);
        }
        for (const id of ids) assert.equal((await waitForJob(apis[0]!, id)).status, 'completed');
        const rows = await first!.storage.db.selectFrom('lead_jobs').select(['id', 'attempts']).where('id', 'in', ids).execute();
        assert.deepEqual(rows.map((row) => row.attempts), ids.map(() => 1));
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
        const stuck = await insertStuckJob(instance!.storage, owner, 'a@resume.example.com', { status: 'generating', lease_until: past, attempts: 1 });
        const hopeless = await insertStuckJob(instance!.storage, owner, 'b@resume.example.com', { status: 'scraping', lease_until: past, attempts: 3 });
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
  });
}
