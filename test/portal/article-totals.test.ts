import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DIALECTS, expectError } from '../helpers/app.js';
import { PORTAL, useTenants } from '../helpers/portal.js';

// Page totals come from a per-publication counter kept by triggers; these check it follows every kind of write.
for (const dialect of DIALECTS) {
  describe(`article totals and unique names under concurrency (${dialect})`, () => {
    const s = useTenants(dialect);
    const articles = (appId = s.appId) => `${PORTAL}/articles/${appId}`;
    const total = async (appId = s.appId) => (await s.api.get(`${articles(appId)}/page/1`)).body.total as number;

    it("keeps each publication's total through create, import and delete", async () => {
      const before = await total();
      const otherBefore = await total(s.secondAppId);
      const created = await s.api.post(articles(), { title: 'Counted' });
      assert.equal(created.status, 201);
      const imported = await s.api.post(`${articles()}/flexpdf-import`, { articles: [{ title: 'One' }, { title: 'Two' }] });
      assert.equal(imported.status, 201);
      assert.equal(await total(), before + 3);
      const failed = await s.api.post(`${articles()}/flexpdf-import`, { articles: [{ title: 'Three' }, { title: 5 }] });
      expectError(failed, 400, 'validation_failed');
      assert.equal(await total(), before + 3);
      assert.equal((await s.api.delete(`${articles()}/${created.body.id}`)).status, 204);
      assert.equal(await total(), before + 2);
      assert.equal(await total(s.secondAppId), otherBefore);
      assert.equal((await s.api.get(articles())).headers['x-total-count'], String(before + 2));
    });

    it('lets exactly one of two simultaneous creates of the same category name win', async () => {
      const name = `Race ${dialect}`;
      const answers = await Promise.all([1, 2, 3].map(() => s.api.post(`${PORTAL}/categories/${s.appId}`, { name })));
      assert.deepEqual(answers.map((answer) => answer.status).sort(), [201, 409, 409]);
      for (const answer of answers.filter((candidate) => candidate.status === 409)) expectError(answer, 409, 'conflict');
    });
  });
}
