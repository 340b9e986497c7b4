import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { client, createOwner, createPublication, DIALECTS, type Owner, startApp, type TestApp } from '../helpers/app.js';
import { clientBody } from '../helpers/clients.js';
import { type LocalServer, startLocalServer } from '../helpers/local-server.js';
import { PORTAL } from '../helpers/portal.js';

const RSS = `<?xml version="1.0"?><rss version="2.0"><channel><title>Ids</title><link>https://ids.example.com/</link>
<description>Ids</description><item><title>One</title><link>https://ids.example.com/1</link><guid>1</guid></item></channel></rss>`;

// A deleted row's id is never given to a new row: whatever still names it (a link, the audit log's target_user_id)
// must not come to name another record. Each case creates two rows, deletes the newer one, creates again.
for (const dialect of DIALECTS) {
  describe(`ids are never reused (${dialect})`, () => {
    let test: TestApp;
    let owner: Owner;
    let api: ReturnType<typeof client>;
    let appId: string;
    let site: LocalServer;

    before(async () => {
      site = await startLocalServer();
      site.routes.set('/feed.xml', (_request, response) => void response.writeHead(200, { 'content-type': 'application/rss+xml' }).end(RSS));
      test = await startApp(dialect, { OUTBOUND_ALLOW: site.hostPort });
      owner = await createOwner(test.storage);
      api = client(test.app, owner.apiKey);
      appId = (await createPublication(test.storage, owner.accountId)).app_id;
    });
    after(async () => {
      await test.close();
      await site.close();
    });

    async function created(url: string, body: Record<string, unknown>): Promise<number> {
      const response = await api.post(url, body);
      assert.equal(response.status, 201, response.raw);
      return response.body.id as number;
    }

    async function deleted(url: string): Promise<void> {
      const response = await api.delete(url);
      assert.equal(response.status, 204, response.raw);
    }

    it('articles', async () => {
      const articles = `${PORTAL}/articles/${appId}`;
      const first = await created(articles, { title: 'First' });
      const newest = await created(articles, { title: 'Second' });
      assert.ok(newest > first);
      await deleted(`${articles}/${newest}`);
      const next = await created(articles, { title: 'Third' });
      assert.ok(next > newest, `the new article got id ${next}, the deleted one had ${newest}`);
      // The deleted id stays gone: it names nothing, not the new article.
      assert.equal((await api.get(`${articles}/${newest}`)).status, 404);
    });

    it('RSS feeds', async () => {
      const feeds = `${PORTAL}/rss_feeds/${appId}`;
      await created(feeds, { url: `${site.base}/feed.xml?one` });
      const newest = await created(feeds, { url: `${site.base}/feed.xml?two` });
      await deleted(`${feeds}/${newest}`);
      const next = await created(feeds, { url: `${site.base}/feed.xml?three` });
      assert.ok(next > newest, `the new feed got id ${next}, the deleted one had ${newest}`);
    });

    it('users (clients), and the audit log names the deleted client, not the new one', async () => {
      const clients = `${PORTAL}/clients`;
      await created(`${clients}/`, clientBody());
      const newest = await created(`${clients}/`, clientBody());
      await deleted(`${clients}/${newest}`);
      const next = await created(`${clients}/`, clientBody());
      assert.ok(next > newest, `the new client got id ${next}, the deleted one had ${newest}`);
      const audit = (await api.get(`${PORTAL}/audit?per_page=100`)).body.records as { action: string; target_user_id: number }[];
      const deletion = audit.find((entry) => entry.action === 'client.delete');
      assert.equal(deletion?.target_user_id, newest);
      assert.notEqual(deletion?.target_user_id, next);
    });

    it('API keys', async () => {
      const keyIds = async () => (await test.storage.db.selectFrom('api_keys').select('id').orderBy('id').execute()).map((row) => row.id);
      const clients = `${PORTAL}/clients`;
      const kept = await created(`${clients}/`, clientBody());
      const gone = await created(`${clients}/`, clientBody());
      assert.equal((await api.get(`${clients}/${kept}/become`)).status, 200);
      // "become" gives the client a key, the newest one; deleting the client deletes its keys.
      assert.equal((await api.get(`${clients}/${gone}/become`)).status, 200);
      const newest = Math.max(...(await keyIds()));
      await deleted(`${clients}/${gone}`);
      assert.ok(!(await keyIds()).includes(newest));
      assert.equal((await api.get(`${clients}/${kept}/become`)).status, 200);
      const next = Math.max(...(await keyIds()));
      assert.ok(next > newest, `the new key got id ${next}, the deleted one had ${newest}`);
    });

    it('audit entries', async () => {
      const clients = `${PORTAL}/clients`;
      const entries = () =>
        test.storage.db.selectFrom('audit_log').select(['id', 'action']).where('account_id', '=', owner.accountId).orderBy('id').execute();
      await created(`${clients}/`, clientBody());
      const newest = (await entries()).at(-1)!.id;
      // Audit entries are never deleted through the API (an account's go with it): the newest one is deleted here.
      await sql`delete from audit_log where id = ${newest}`.execute(test.storage.db);
      await created(`${clients}/`, clientBody());
      const next = (await entries()).at(-1)!.id;
      assert.ok(next > newest, `the new entry got id ${next}, the deleted one had ${newest}`);
    });
  });
}
