import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Dialect } from '../../src/db/connection.js';
import { client, createOwner, createPublication, DIALECTS, startApp, type TestApp } from '../helpers/app.js';
import { startInstances } from '../helpers/leads.js';
import { PORTAL } from '../helpers/portal.js';
import { feedServer, rss } from '../dashboard/helpers.js';
import { startReceiver, WEBHOOKS } from '../helpers/webhooks.js';

for (const dialect of DIALECTS as Dialect[]) {
  describe(`webhook events of feeds, and several instances (${dialect})`, () => {
    let t: TestApp;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let blog: Awaited<ReturnType<typeof feedServer>>;
    before(async () => {
      receiver = await startReceiver();
      blog = await feedServer();
      t = await startApp(dialect, { OUTBOUND_ALLOW: `${receiver.server.hostPort},127.0.0.1:${blog.port}`, WEBHOOK_WORKER: 'off' });
    });
    after(async () => {
      await t.close();
      await receiver.close();
      await blog.close();
    });

    it('tells feed.synchronized with its counts and feed.failed with its error, to the publication’s account only', async () => {
      const owner = await createOwner(t.storage, 'business');
      const stranger = await createOwner(t.storage, 'business');
      const { app_id: appId } = await createPublication(t.storage, owner.accountId);
      for (const [who, path] of [
        [owner, '/feeds'],
        [stranger, '/stranger-feeds'],
      ] as const) {
        const created = await client(t.app, who.apiKey).post(WEBHOOKS, { url: receiver.url(path), events: ['feed.synchronized', 'feed.failed'] });
        receiver.expect(path, created.body.secret);
      }
      blog.feeds.set(
        '/feed.xml',
        rss('The blog', [
          { guid: 'a', title: 'First' },
          { guid: 'b', title: 'Second' },
        ]),
      );
      const api = client(t.app, owner.apiKey);
      const feed = (await api.post(`${PORTAL}/rss_feeds/${appId}`, { url: `${blog.base}/feed.xml` })).body;
      assert.ok(feed.id, JSON.stringify(feed));
      const synced = await api.post(`${PORTAL}/rss_feeds/${appId}/${feed.id}/synchronize`);
      assert.equal(synced.body.imported, 2);
      blog.feeds.delete('/feed.xml');
      const failed = await api.post(`${PORTAL}/rss_feeds/${appId}/${feed.id}/synchronize`);
      assert.equal(failed.body.job_status, 'failed');

      assert.equal(await t.app.webhookWorker.runDue(), 2);
      const [first, second] = receiver.at('/feeds');
      assert.ok(first && second && first.verifyError === undefined && second.verifyError === undefined);
      assert.equal(first.payload.type, 'feed.synchronized');
      assert.deepEqual(
        {
          app_id: first.payload.data.app_id,
          feed: first.payload.data.feed.id,
          imported: first.payload.data.imported,
          job: first.payload.data.job_id,
        },
        { app_id: appId, feed: feed.id, imported: 2, job: synced.body.job_id },
      );
      assert.equal(second.payload.type, 'feed.failed');
      assert.match(second.payload.data.error, /404/);
      assert.equal(receiver.at('/stranger-feeds').length, 0);
    });
  });

  describe(`webhook deliveries from two instances on one database (${dialect})`, () => {
    it('sends each event exactly once, whichever instance claims it', async () => {
      const receiver = await startReceiver();
      const shared = await startInstances(dialect, 2, { OUTBOUND_ALLOW: receiver.server.hostPort, WEBHOOK_WORKER: 'off', FEED_SCHEDULER: 'off' });
      try {
        const [first, second] = shared.instances;
        const owner = await createOwner(first!.storage, 'business');
        const api = client(first!.app, owner.apiKey);
        const created = await api.post(WEBHOOKS, { url: receiver.url('/shared'), events: ['job.completed'] });
        receiver.expect('/shared', created.body.secret);
        // Slow answers, so that both instances have deliveries in hand at once.
        receiver.setDelay(15);
        const events = 30;
        for (let index = 0; index < events; index += 1) {
          assert.equal((await client(index % 2 ? second!.app : first!.app, owner.apiKey).post(`${WEBHOOKS}/${created.body.id}/test`)).status, 202);
        }
        const counts: number[] = await Promise.all([
          first!.app.webhookWorker.runDue(),
          second!.app.webhookWorker.runDue(),
          first!.app.webhookWorker.runDue(),
          second!.app.webhookWorker.runDue(),
        ]);
        assert.equal(
          counts.reduce((sum, count) => sum + count, 0),
          events,
        );
        const ids = receiver.at('/shared').map((request) => String(request.headers['webhook-id']));
        assert.equal(ids.length, events);
        assert.equal(new Set(ids).size, events, 'no event was sent twice');
        assert.ok(receiver.at('/shared').every((request) => request.verifyError === undefined));
        const page = (await api.get(`${WEBHOOKS}/${created.body.id}/deliveries?limit=100`)).body;
        assert.equal(page.pagination.total, events);
        assert.ok(page.deliveries.every((delivery: any) => delivery.status === 'succeeded' && delivery.attempts === 1));
      } finally {
        await shared.close();
        await receiver.close();
      }
    });
  });
}
