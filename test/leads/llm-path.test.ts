import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { client, createOwner, DIALECTS, expectError, startApp, type TestApp } from '../helpers/app.js';
import { chatAnswer, companyHome, LEADS, lead, serveCompany, siteEnv, waitForJob } from '../helpers/leads.js';
import { json, type LocalServer, startLocalServer } from '../helpers/local-server.js';
import { TemplateQueries } from '../../src/leads/templates/queries.js';
import { TemplateService } from '../../src/leads/templates/service.js';

const COMPLETIONS = '/v1/chat/completions';

for (const dialect of DIALECTS) {
  describe(`process-lead with an OpenAI-compatible LLM (${dialect})`, () => {
    let site: LocalServer;
    let llm: LocalServer;
    let test: TestApp;
    let api: ReturnType<typeof client>;
    let accountId: number;

    before(async () => {
      site = await startLocalServer();
      llm = await startLocalServer();
      serveCompany(
        site,
        'zeppelin-works.com',
        companyHome({ name: 'Zeppelin Works', description: 'Zeppelin Works builds quiet electric airships.', product: 'Airships' }),
      );
      test = await startApp(dialect, {
        ...siteEnv(site, { PLAN_FREE_RPM: '1000' }),
        LLM_BASE_URL: `${llm.base}/v1`,
        LLM_API_KEY: 'sk-test-secret',
        LLM_MODEL: 'test-model',
      });
      const owner = await createOwner(test.storage);
      accountId = owner.accountId;
      api = client(test.app, owner.apiKey);
    });
    after(async () => {
      await test.close();
      await site.close();
      await llm.close();
    });

    it('sends the rendered prompt and returns the model’s subject and body', async () => {
      llm.requests.length = 0;
      llm.routes.set(COMPLETIONS, (_request, response) =>
        chatAnswer(response, JSON.stringify({ subject: 'Airships and you', body: 'Dear Ada, a model wrote this.' })),
      );
      const response = await api.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'));
      assert.equal(response.status, 200, response.raw);
      assert.equal(response.body.emailSubject, 'Airships and you');
      assert.equal(response.body.emailBody, 'Dear Ada, a model wrote this.');
      assert.equal(llm.requests.length, 1);
      const sent = llm.requests[0]!;
      assert.equal(sent.headers.authorization, 'Bearer sk-test-secret');
      const payload = JSON.parse(sent.body);
      assert.equal(payload.model, 'test-model');
      const prompt = payload.messages.at(-1).content as string;
      assert.ok(prompt.includes('Ada Lovelace'), prompt);
      assert.ok(prompt.includes('quiet electric airships'), prompt);
      const job = (await api.get(`${LEADS}/jobs/${response.body.jobId}`)).body;
      assert.equal(job.generator, 'llm');
      assert.equal(job.status, 'completed');
    });

    it('uses a template as the prompt, and its subject template for the subject', async () => {
      const template = await new TemplateService(new TemplateQueries(test.storage.db)).create(accountId, {
        name: 'LLM prompt',
        subject: '{{companyName}}: a question',
        body: 'Write to {{firstName}} about {{productDescription}}.',
      });
      llm.requests.length = 0;
      llm.routes.set(COMPLETIONS, (_request, response) => chatAnswer(response, '```json\n{"subject": "ignored", "body": "Hello Ada"}\n```'));
      const response = await api.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com', { templateId: template.id }));
      assert.equal(response.status, 200, response.raw);
      assert.equal(response.body.emailSubject, 'Zeppelin Works: a question');
      assert.equal(response.body.emailBody, 'Hello Ada');
      const prompt = JSON.parse(llm.requests[0]!.body).messages.at(-1).content as string;
      assert.match(prompt, /^Write to Ada about /);
    });

    it('retries a 503 and succeeds', async () => {
      let calls = 0;
      llm.routes.set(COMPLETIONS, (_request, response) => {
        calls += 1;
        if (calls === 1) return json(response, { error: { message: 'overloaded' } }, 503, { 'retry-after': '0' });
        chatAnswer(response, JSON.stringify({ subject: 'Second time lucky', body: 'Body' }));
      });
      const response = await api.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'));
      assert.equal(response.status, 200, response.raw);
      assert.equal(response.body.emailSubject, 'Second time lucky');
      assert.equal(calls, 2);
    });

    it('fails the job with a clear message when the model keeps answering nonsense', async () => {
      let calls = 0;
      llm.routes.set(COMPLETIONS, (_request, response) => {
        calls += 1;
        chatAnswer(response, 'I am sorry, I cannot write JSON today.');
      });
      const response = await api.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'), { 'idempotency-key': 'nonsense-1' });
      const error = expectError(response, 502, 'generation_failed');
      assert.match(error.message, /could not be generated/);
      assert.equal(calls, 2, 'invalid output is retried once');
      const jobId = response.body.jobId as string;
      const job = (await api.get(`${LEADS}/jobs/${jobId}`)).body;
      assert.equal(job.status, 'failed');
      assert.equal(job.error_message, error.message);
      assert.deepEqual(
        job.transitions.map((step: { status: string }) => step.status),
        ['pending', 'scraping', 'generating', 'failed'],
      );
      assert.ok(!JSON.stringify(job).includes('sk-test-secret'));
      // The failure is the request's answer: the same key replays it.
      const replay = await api.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'), { 'idempotency-key': 'nonsense-1' });
      assert.equal(replay.status, 502);
      assert.equal(replay.body.jobId, jobId);
      assert.equal(calls, 2);
    });

    it('fails a queued job the same way, visible in the jobs listing', async () => {
      llm.routes.set(COMPLETIONS, (_request, response) => json(response, { error: { message: 'invalid api key' } }, 401));
      const queued = await api.post(`${LEADS}/process-lead`, lead('grace@zeppelin-works.com'), { prefer: 'respond-async' });
      assert.equal(queued.status, 202);
      const job = await waitForJob(api, queued.body.jobId);
      assert.equal(job.status, 'failed');
      assert.match(job.error_message, /could not be generated/);
      const failed = await api.get(`${LEADS}/jobs?status=failed`);
      assert.ok(failed.body.jobs.some((row: { id: string }) => row.id === queued.body.jobId));
    });
  });
}
