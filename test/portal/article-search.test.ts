import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DIALECTS } from '../helpers/app.js';
import { PORTAL, useTenants } from '../helpers/portal.js';

// The text filter splits words at punctuation on both databases, so the same filter finds the same articles.
for (const dialect of DIALECTS) {
  describe(`article search across punctuation (${dialect})`, () => {
    const s = useTenants(dialect);
    const search = async (filter: string) =>
      ((await s.api.get(`${PORTAL}/articles/${s.appId}/page/1?filter=${encodeURIComponent(filter)}`)).body.records as { title: string }[])
        .map((article) => article.title)
        .sort();

    it('finds words inside host names, versions and hyphenated words', async () => {
      for (const title of ['Visit example.com today', 'Release v1.2.3 notes', 'A well-known story', 'Unrelated']) {
        assert.equal((await s.api.post(`${PORTAL}/articles/${s.appId}`, { title })).status, 201);
      }
      assert.deepEqual(await search('com'), ['Visit example.com today']);
      assert.deepEqual(await search('example'), ['Visit example.com today']);
      assert.deepEqual(await search('2'), ['Release v1.2.3 notes']);
      assert.deepEqual(await search('known'), ['A well-known story']);
      assert.deepEqual(await search('well known'), ['A well-known story']);
    });
  });
}
