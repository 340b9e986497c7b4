// Deep pages of the plain list start from remembered page starts (src/portal/articles/page-anchors.ts): every page
// must stay exactly the page OFFSET gives, through creates and deletes by the API and by another instance.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { client, createOwner, createPublication, DIALECTS, startApp, type TestApp } from '../helpers/app.js';
import { PORTAL } from '../helpers/portal.js';

for (const dialect of DIALECTS) {
  describe(`deep pages of the article list (${dialect})`, () => {
    let t: TestApp;
    let api: ReturnType<typeof client>;
    let appId: string;
    let publicationId: number;

    before(async () => {
      t = await startApp(dialect);
      const owner = await createOwner(t.storage);
      const publication = await createPublication(t.storage, owner.accountId);
      appId = publication.app_id;
      publicationId = publication.id;
      api = client(t.app, owner.apiKey);
      // Another publication's articles interleave with these ids.
      const other = await createPublication(t.storage, owner.accountId);
      for (const [target, count] of [
        [appId, 500],
        [other.app_id, 50],
        [appId, 500],
        [appId, 150],
      ] as const) {
        const articles = Array.from({ length: count }, (_, n) => ({ title: `Article ${n}` }));
        const response = await api.post(`${PORTAL}/articles/${target}/flexpdf-import`, { articles });
        assert.equal(response.status, 201, response.raw);
      }
    });
    after(() => t?.close());

    /** Every id of the publication in the order, straight from the database. */
    const allIds = async (direction: 'asc' | 'desc') =>
      (await t.storage.db.selectFrom('articles').select('id').where('publication_id', '=', publicationId).orderBy('id', direction).execute()).map(
        (row) => row.id,
      );
    const page = async (number: number, direction: 'asc' | 'desc' = 'desc') => {
      const response = await api.get(`${PORTAL}/articles/${appId}/page/${number}?per_page=20&order_dir=${direction}`);
      assert.equal(response.status, 200, response.raw);
      return (response.body.records as { id: number }[]).map((record) => record.id);
    };
    const expectPages = async (numbers: number[], direction: 'asc' | 'desc' = 'desc') => {
      const ids = await allIds(direction);
      for (const number of numbers) {
        assert.deepEqual(await page(number, direction), ids.slice((number - 1) * 20, number * 20), `page ${number} ${direction}`);
      }
    };

    it('gives the same pages read again, and the pages after a remembered start', async () => {
      await expectPages([53, 53, 54, 57, 56, 58]);
      await expectPages([51, 52, 52, 58], 'asc');
    });

    it('moves every page after a delete and a create through the API', async () => {
      const ids = await allIds('desc');
      assert.equal((await api.delete(`${PORTAL}/articles/${appId}/${ids[10]}`)).status, 204);
      await expectPages([53, 54, 57]);
      assert.equal((await api.post(`${PORTAL}/articles/${appId}`, { title: 'Newest' })).status, 201);
      await expectPages([53, 54, 57]);
      await expectPages([52, 58], 'asc');
    });

    it('moves them after a delete by another instance (straight in the database), and after a delete then a create', async () => {
      await expectPages([53, 55]);
      const ids = await allIds('desc');
      await t.storage.db.deleteFrom('articles').where('id', '=', ids[3]!).execute();
      await expectPages([53, 55]);
      // As many articles as before, and a new one: only the highest id tells the lists apart.
      await t.storage.db.deleteFrom('articles').where('id', '=', ids[1_100]!).execute();
      assert.equal((await api.post(`${PORTAL}/articles/${appId}`, { title: 'Newer' })).status, 201);
      await expectPages([53, 55, 56]);
    });
  });
}
