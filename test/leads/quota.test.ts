import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { client, createOwner, DIALECTS, expectError, startApp } from '../helpers/app.js';
import { chatAnswer, companyHome, LEADS, lead, serveCompany, siteEnv, startLeadWorker, waitForJob } from '../helpers/leads.js';
import { json, startLocalServer } from '../helpers/local-server.js';

// A lead counts against the monthly quota when its job is accepted (in the same transaction as the job, so concurrent
// requests cannot pass the quota together) and is given back when its job fails: failed leads do not use the quota.

const COMPLETIONS = '/v1/chat/completions';
const DOMAIN = 'quota-works.example.com';

/** The played LLM: a 500 (with Retry-After: 0, so retries are at once) for prompts naming `fail`, an email otherwise. */
function answer(response: ServerResponse, prompt: string, failure: 'status' | 'nonsense'): void {
  if (!prompt.includes('fail')) return chatAnswer(response, JSON.stringify({ subject: 'Hello', body: 'A short note.' }));
  if (failure === 'status') return json(response, { error: { message: 'the model is down' } }, 500, { 'retry-after': '0' });
  chatAnswer(response, 'Sorry, no JSON today.');
}

async function setUp(dialect: (typeof DIALECTS)[number], quota: number, failure: 'status' | 'nonsense', extra: Record<string, string> = {}) {
  const site = await startLocalServer();
  serveCompany(site, DOMAIN, companyHome({ name: 'Quota Works', description: 'Quota Works makes meters.', product: 'Meters' }));
  const llm = await startLocalServer();
  let gate: Promise<void> = Promise.resolve();
  llm.routes.set(COMPLETIONS, async (_request, response, body) => {
    const prompt = JSON.parse(body).messages.at(-1).content as string;
    if (prompt.includes('slow')) await gate;
    answer(response, prompt, failure);
  });
  const test = await startApp(dialect, {
    ...siteEnv(site, { PLAN_FREE_MONTHLY_LEADS: String(quota), PLAN_FREE_RPM: '1000', LEAD_WORKER_POLL_MS: '25', ...extra }),
    LLM_BASE_URL: `${llm.base}/v1`,
  });
  const owner = await createOwner(test.storage);
  const api = client(test.app, owner.apiKey);
  const usage = async () =>
    (await test.storage.db.selectFrom('lead_usage').select('leads').where('account_id', '=', owner.accountId).executeTakeFirst())?.leads ?? 0;
  return {
    test,
    owner,
    api,
    llm,
    usage,
    /** Prompts naming `slow` wait until the returned function is called. */
    hold(): () => void {
      let open!: () => void;
      gate = new Promise<void>((resolve) => (open = resolve));
      return open;
    },
    async close() {
      await test.close();
      await site.close();
      await llm.close();
    },
  };
}

for (const dialect of DIALECTS) {
  describe(`monthly quota and failed leads (${dialect})`, () => {
    it('a failed generation (the LLM answers 500) does not use the quota: two failed leads, then a third is accepted', async () => {
      const s = await setUp(dialect, 2, 'status');
      try {
        for (const name of ['fail-one', 'fail-two']) {
          const failed = await s.api.post(`${LEADS}/process-lead`, lead(`${name}@${DOMAIN}`));
          expectError(failed, 502, 'generation_failed');
          assert.equal((await s.api.get(`${LEADS}/jobs/${failed.body.jobId}`)).body.status, 'failed');
        }
        assert.equal(await s.usage(), 0);
        // The quota of 2 is whole: two leads that succeed, then the third is over it.
        for (const name of ['ada', 'grace']) assert.equal((await s.api.post(`${LEADS}/process-lead`, lead(`${name}@${DOMAIN}`))).status, 200);
        assert.equal(await s.usage(), 2);
        expectError(await s.api.post(`${LEADS}/process-lead`, lead(`third@${DOMAIN}`)), 429, 'quota_exceeded');
        // Every lead that passed the check has its job: two failed, two completed; the refused one made none.
        assert.equal((await s.api.get(`${LEADS}/jobs`)).body.pagination.total, 4);
      } finally {
        await s.close();
      }
    });

    it('queued leads the worker fails (the LLM answers nonsense) are given back too', async () => {
      const s = await setUp(dialect, 2, 'nonsense');
      try {
        for (const name of ['fail-one', 'fail-two']) {
          const queued = await s.api.post(`${LEADS}/process-lead`, lead(`${name}@${DOMAIN}`), { prefer: 'respond-async' });
          assert.equal(queued.status, 202, queued.raw);
          const job = await waitForJob(s.api, queued.body.jobId);
          assert.equal(job.status, 'failed');
          assert.match(job.error_message, /could not be generated/);
        }
        assert.equal(await s.usage(), 0);
        const third = await s.api.post(`${LEADS}/process-lead`, lead(`third@${DOMAIN}`), { prefer: 'respond-async' });
        assert.equal(third.status, 202, third.raw);
        assert.equal((await waitForJob(s.api, third.body.jobId)).status, 'completed');
        assert.equal(await s.usage(), 1);
      } finally {
        await s.close();
      }
    });

    it('a queued lead given up on our side (its instance stopped three times) is given back', async () => {
      const s = await setUp(dialect, 1, 'status', { LEAD_WORKER: 'false' });
      let worker: ReturnType<typeof startLeadWorker> | undefined;
      try {
        const queued = await s.api.post(`${LEADS}/process-lead`, lead(`stuck@${DOMAIN}`), { prefer: 'respond-async' });
        assert.equal(queued.status, 202, queued.raw);
        expectError(await s.api.post(`${LEADS}/process-lead`, lead(`next@${DOMAIN}`), { prefer: 'respond-async' }), 429, 'quota_exceeded');
        // As three instances that claimed it and died leave it: mid-way, its lease run out.
        await s.test.storage.db
          .updateTable('lead_jobs')
          .set({ status: 'generating', attempts: 3, lease_owner: 'gone', lease_until: new Date(Date.now() - 60_000).toISOString() })
          .where('id', '=', queued.body.jobId)
          .execute();
        worker = startLeadWorker(s.test, {});
        const job = await waitForJob(s.api, queued.body.jobId);
        assert.equal(job.status, 'failed');
        assert.match(job.error_message, /Gave up after 3 attempts/);
        assert.equal(await s.usage(), 0);
        assert.equal((await s.api.post(`${LEADS}/process-lead`, lead(`next@${DOMAIN}`))).status, 200);
      } finally {
        await worker?.close();
        await s.close();
      }
    });

    it('concurrent requests cannot pass the quota: leads in flight count until they fail, then their room is given back once', async () => {
      const s = await setUp(dialect, 3, 'status', { LEAD_WORKER: 'false' });
      try {
        const open = s.hold();
        // Three leads that will fail hold the whole quota while the LLM keeps them waiting.
        const slow = ['slow-fail-1', 'slow-fail-2', 'slow-fail-3'].map((name) => s.api.post(`${LEADS}/process-lead`, lead(`${name}@${DOMAIN}`)));
        for (let waited = 0; s.llm.requests.length < 3; waited += 10) {
          assert.ok(waited < 10_000, 'the slow leads reached the LLM');
          await sleep(10);
        }
        const meanwhile = await Promise.all(
          Array.from({ length: 6 }, (_, index) =>
            s.api.post(`${LEADS}/process-lead`, lead(`meanwhile${index}@${DOMAIN}`), index % 2 === 0 ? {} : { prefer: 'respond-async' }),
          ),
        );
        for (const refused of meanwhile) expectError(refused, 429, 'quota_exceeded');
        open();
        for (const failed of await Promise.all(slow)) expectError(failed, 502, 'generation_failed');
        assert.equal(await s.usage(), 0);
        // Their room is given back once: of ten at once, exactly three are accepted.
        const answers = await Promise.all(
          Array.from({ length: 10 }, (_, index) =>
            s.api.post(`${LEADS}/process-lead`, lead(`after${index}@${DOMAIN}`), index % 2 === 0 ? {} : { prefer: 'respond-async' }),
          ),
        );
        const accepted = answers.filter((response) => response.status === 200 || response.status === 202);
        assert.equal(accepted.length, 3, answers.map((response) => response.status).join(' '));
        for (const refused of answers.filter((response) => response.status === 429)) expectError(refused, 429, 'quota_exceeded');
        assert.equal(await s.usage(), 3);
      } finally {
        await s.close();
      }
    });
  });
}
