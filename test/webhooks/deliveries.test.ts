import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import type { Dialect } from '../../src/db/connection.js';
import { RETRY_DELAYS_MS } from '../../src/webhooks/worker.js';
import { client, createOwner, DIALECTS, expectError, type Owner, startApp, type TestApp } from '../helpers/app.js';
import { companyHome, LEADS, lead, serveCompany, siteEnv, waitForJob } from '../helpers/leads.js';
import { type LocalServer, startLocalServer } from '../helpers/local-server.js';
import { DAY_MS, type Receiver, startReceiver, WEBHOOKS } from '../helpers/webhooks.js';

for (const dialect of DIALECTS as Dialect[]) {
  describe(`webhook deliveries (${dialect})`, () => {
    let t: TestApp;
    let receiver: Receiver;
    let site: LocalServer;
    let owner: Owner;
    before(async () => {
      receiver = await startReceiver();
      site = await startLocalServer();
      t = await startApp(dialect, {
        ...siteEnv(site),
        OUTBOUND_ALLOW: `${site.hostPort},${receiver.server.hostPort}`,
        WEBHOOK_WORKER: 'off',
      });
      owner = await createOwner(t.storage, 'business');
      serveCompany(site, 'zeppelin-works.com', companyHome({ name: 'Zeppelin Works', description: 'Airships for cargo.', product: 'Airships' }));
    });
    after(async () => {
      await t.close();
      await receiver.close();
      await site.close();
    });

    async function endpoint(path: string, events: string[], answers: number[] = [], then = 200) {
      const created = await client(t.app, owner.apiKey).post(WEBHOOKS, { url: receiver.url(path), events });
      assert.equal(created.status, 201, created.raw);
      receiver.expect(path, created.body.secret, answers, then);
      return created.body as { id: number; secret: string };
    }

    it('sends one signed job.completed per completed lead, to the endpoints that take it, and nothing twice', async () => {
      const api = client(t.app, owner.apiKey);
      await endpoint('/completed', ['job.completed']);
      await endpoint('/rejected', ['job.rejected', 'job.failed']);
      const processed = await api.post(`${LEADS}/process-lead`, lead('ada@zeppelin-works.com'));
      assert.equal(processed.status, 200, processed.raw);
      const refused = await api.post(`${LEADS}/process-lead`, lead('ada@gmail.com'));
      assert.equal(refused.body.businessEmail, false);

      assert.equal(await t.app.webhookWorker.runDue(), 2);
      assert.equal(await t.app.webhookWorker.runDue(), 0, 'nothing is sent twice');
      const [completed, ...more] = receiver.at('/completed');
      assert.equal(more.length, 0);
      assert.equal(completed!.verifyError, undefined, 'the signature verifies with the endpoint secret');
      assert.equal(completed!.payload.type, 'job.completed');
      assert.match(completed!.payload.timestamp, /^\d{4}-\d{2}-\d{2}T/);
      const job = (await api.get(`${LEADS}/jobs/${processed.body.jobId}`)).body;
      // The job as the jobs listing shows it.
      const listed = (await api.get(`${LEADS}/jobs?limit=10`)).body.jobs.find((entry: any) => entry.id === job.id);
      assert.deepEqual(completed!.payload.data, listed);
      assert.equal(completed!.payload.data.status, 'completed');
      assert.match(String(completed!.headers['webhook-id']), /^msg_/);
      assert.match(String(completed!.headers['user-agent']), /Masthead-Webhooks/);

      const [rejected, ...others] = receiver.at('/rejected');
      assert.equal(others.length, 0);
      assert.equal(rejected!.verifyError, undefined);
      assert.equal(rejected!.payload.type, 'job.rejected');
      assert.equal(rejected!.payload.data.id, refused.body.jobId);

      // A signature made with another secret does not verify.
      assert.throws(() =>
        new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(completed!.body, completed!.headers as Record<string, string>),
      );
    });

    it('tells of a queued lead (Prefer: respond-async) once the lead worker has run it', async () => {
      const api = client(t.app, owner.apiKey);
      await endpoint('/queued', ['job.completed']);
      const queued = await api.post(`${LEADS}/process-lead`, lead('grace@zeppelin-works.com'), { prefer: 'respond-async' });
      assert.equal(queued.status, 202);
      await waitForJob(api, queued.body.jobId);
      await t.app.webhookWorker.runDue();
      const requests = receiver.at('/queued').filter((request) => request.payload?.data?.id === queued.body.jobId);
      assert.equal(requests.length, 1);
      assert.equal(requests[0]!.payload.type, 'job.completed');
      assert.equal(requests[0]!.verifyError, undefined);
    });

    it('retries a delivery the receiver refused (500, then 200) on the schedule, keeping its id, and logs every attempt', async () => {
      const api = client(t.app, owner.apiKey);
      const { id } = await endpoint('/flaky', ['job.failed'], [500]);
      const test = await api.post(`${WEBHOOKS}/${id}/test`);
      assert.equal(test.status, 202, test.raw);
      const t0 = new Date();
      assert.equal(await t.app.webhookWorker.runDue(t0), 1);
      let [delivery] = (await api.get(`${WEBHOOKS}/${id}/deliveries`)).body.deliveries;
      assert.equal(delivery.status, 'pending');
      assert.equal(delivery.attempts, 1);
      assert.equal(delivery.last_status_code, 500);
      assert.match(delivery.last_error, /HTTP 500: receiver says no/);
      const wait = Date.parse(delivery.next_attempt_at) - t0.getTime();
      assert.ok(wait >= RETRY_DELAYS_MS[0]! * 0.8 && wait <= RETRY_DELAYS_MS[0]! * 1.2 + 1000, `next attempt in ${wait} ms`);

      assert.equal(await t.app.webhookWorker.runDue(t0), 0, 'not before its time');
      assert.equal(await t.app.webhookWorker.runDue(new Date(t0.getTime() + 10_000)), 1);
      [delivery] = (await api.get(`${WEBHOOKS}/${id}/deliveries`)).body.deliveries;
      assert.equal(delivery.status, 'succeeded');
      assert.equal(delivery.attempts, 2);
      assert.equal(delivery.last_status_code, 200);
      assert.equal(delivery.next_attempt_at, null);

      const requests = receiver.at('/flaky');
      assert.equal(requests.length, 2);
      assert.ok(requests.every((request) => request.verifyError === undefined));
      assert.equal(requests[0]!.headers['webhook-id'], requests[1]!.headers['webhook-id']);
      assert.equal(requests[0]!.payload.type, 'webhook.test');

      const detail = (await api.get(`${WEBHOOKS}/${id}/deliveries/${delivery.id}`)).body;
      assert.deepEqual(
        detail.attempt_log.map((attempt: any) => [attempt.status_code, attempt.succeeded]),
        [
          [500, false],
          [200, true],
        ],
      );
      assert.equal(detail.payload.type, 'webhook.test');

      // Send again: the same event once more, at once.
      assert.equal((await api.post(`${WEBHOOKS}/${id}/deliveries/${delivery.id}/retry`)).status, 202);
      assert.equal(await t.app.webhookWorker.runDue(), 1);
      assert.equal(receiver.at('/flaky').length, 3);
      assert.equal(receiver.at('/flaky')[2]!.headers['webhook-id'], requests[0]!.headers['webhook-id']);
      expectError(await api.post(`${WEBHOOKS}/${id}/deliveries/999999/retry`), 404, 'not_found');
    });

    it('gives up after the last retry, and disables an endpoint failing for days (its waiting deliveries fail)', async () => {
      const api = client(t.app, owner.apiKey);
      const { id } = await endpoint('/down', ['job.failed'], [], 503);
      await api.post(`${WEBHOOKS}/${id}/test`);
      const t0 = Date.now();
      for (let attempt = 0; attempt <= RETRY_DELAYS_MS.length; attempt += 1) {
        assert.equal(await t.app.webhookWorker.runDue(new Date(t0 + attempt * (DAY_MS / 2))), 1, `attempt ${attempt + 1}`);
      }
      let [delivery] = (await api.get(`${WEBHOOKS}/${id}/deliveries`)).body.deliveries;
      assert.equal(delivery.status, 'failed');
      assert.equal(delivery.attempts, RETRY_DELAYS_MS.length + 1);
      assert.equal(delivery.next_attempt_at, null);
      let state = (await api.get(`${WEBHOOKS}/${id}`)).body;
      assert.equal(state.enabled, true, 'four days of failures: still enabled');
      assert.ok(state.failing_since);

      // Five days after the first failure, the next failed attempt disables it.
      await api.post(`${WEBHOOKS}/${id}/test`);
      await api.post(`${WEBHOOKS}/${id}/test`);
      assert.equal(await t.app.webhookWorker.runDue(new Date(t0 + 5 * DAY_MS + 1000)), 2);
      state = (await api.get(`${WEBHOOKS}/${id}`)).body;
      assert.equal(state.enabled, false);
      assert.match(state.disabled_reason, /failed for 5 days/);
      const deliveries = (await api.get(`${WEBHOOKS}/${id}/deliveries`)).body.deliveries;
      assert.deepEqual(
        deliveries.map((entry: any) => entry.status),
        ['failed', 'failed', 'failed'],
      );
      // Disabled: nothing is sent, nor can be sent again, until it is enabled.
      expectError(await api.post(`${WEBHOOKS}/${id}/test`), 409, 'conflict');
      expectError(await api.post(`${WEBHOOKS}/${id}/deliveries/${deliveries[0].id}/retry`), 409, 'conflict');
      const enabled = await t.app.inject({
        method: 'PATCH',
        url: `${WEBHOOKS}/${id}`,
        headers: { 'x-api-key': owner.apiKey, 'content-type': 'application/json' },
        payload: '{"enabled":true}',
      });
      assert.equal(enabled.statusCode, 200);
      assert.deepEqual([JSON.parse(enabled.body).disabled_reason, JSON.parse(enabled.body).failing_since], [null, null]);
      [delivery] = deliveries;
      assert.equal((await api.post(`${WEBHOOKS}/${id}/deliveries/${delivery.id}/retry`)).status, 202);
      assert.equal(await t.app.webhookWorker.runDue(), 1, 'enabled again, it is sent');
    });

    it('keeps ended deliveries 30 days in the log, waiting ones until they end', async () => {
      const api = client(t.app, owner.apiKey);
      const { id } = await endpoint('/kept', ['job.failed'], [500]);
      await api.post(`${WEBHOOKS}/${id}/test`);
      await api.post(`${WEBHOOKS}/${id}/test`);
      assert.equal(await t.app.webhookWorker.runDue(), 2);
      const log = () => api.get(`${WEBHOOKS}/${id}/deliveries`).then((response) => response.body.deliveries.map((d: any) => d.status).sort());
      assert.deepEqual(await log(), ['pending', 'succeeded']);
      assert.equal(await t.app.webhookWorker.prune(new Date(Date.now() + 29 * DAY_MS)), 0);
      assert.ok((await t.app.webhookWorker.prune(new Date(Date.now() + 31 * DAY_MS))) >= 1);
      assert.deepEqual(await log(), ['pending']);
      await t.app.webhookWorker.runDue(new Date(Date.now() + 60_000));
      assert.equal(receiver.at('/kept').length, 3, 'the waiting one is still sent');
      assert.deepEqual(await log(), ['succeeded']);
    });

    it('never reaches a private address unless allowed: the attempt fails without a request', async () => {
      // An instance whose OUTBOUND_ALLOW does not name the receiver, on the same database.
      const api = client(t.app, owner.apiKey);
      const { id } = await endpoint('/private', ['job.failed']);
      await t.storage.db.updateTable('webhook_endpoints').set({ url: 'http://127.0.0.2:9/private' }).where('id', '=', id).execute();
      await api.post(`${WEBHOOKS}/${id}/test`);
      assert.equal(await t.app.webhookWorker.runDue(), 1);
      const [delivery] = (await api.get(`${WEBHOOKS}/${id}/deliveries`)).body.deliveries;
      assert.equal(delivery.status, 'pending');
      assert.equal(delivery.last_status_code, null);
      assert.match(delivery.last_error, /not a public address/);
      assert.equal(receiver.at('/private').length, 0);
    });
  });
}
