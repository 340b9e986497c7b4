import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DIALECTS, type Owner, client, createOwner, createPublication, startApp, type TestApp } from '../helpers/app.js';

for (const dialect of DIALECTS) {
  describe(`articles smoke (${dialect})`, () => {
    let t: TestApp;
    let owner: Owner;
    let appId: string;
    before(async () => {
      t = await startApp(dialect);
      owner = await createOwner(t.storage);
      appId = (await createPublication(t.storage, owner.accountId)).app_id;
    });
    after(() => t.close());

    it('creates and searches an article', async () => {
      const api = client(t.app, owner.apiKey);
      const created = await api.post(`/api/portal/v1/articles/${appId}`, { title: 'Hello world', info: 'Café culture' });
      assert.equal(created.status, 201);
      const page = await api.get(`/api/portal/v1/articles/${appId}/page/1?filter=cult`);
      assert.equal(page.status, 200);
      assert.equal(page.body.total, 1);
      assert.equal(page.body.records[0].title, 'Hello world');
    });
  });
}
