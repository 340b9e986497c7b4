import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DIALECTS, expectError } from '../helpers/app.js';
import { itFollowsTheCollectionContract, PORTAL, useTenants } from '../helpers/portal.js';

let counter = 0;
const uniqueName = (stem = 'Category') => `${stem} ${++counter}`;

for (const dialect of DIALECTS) {
  describe(`categories (${dialect})`, () => {
    const s = useTenants(dialect);
    const categories = (appId = s.appId) => `${PORTAL}/categories/${appId}`;

    itFollowsTheCollectionContract(s, {
      path: 'categories',
      fields: ['id', 'publication_id', 'name', 'created_at', 'updated_at'],
      create: () => ({ name: `  ${uniqueName()}  ` }),
      update: { body: { name: 'Renamed category' }, expect: { name: 'Renamed category' } },
    });

    it('refuses a second category of the same name in one publication with 409', async () => {
      const name = uniqueName('Politics');
      assert.equal((await s.api.post(categories(), { name })).status, 201);
      const problem = expectError(await s.api.post(categories(), { name }), 409, 'conflict');
      assert.match(problem.message, new RegExp(name));
      // Names are compared after trimming.
      expectError(await s.api.post(categories(), { name: ` ${name} ` }), 409, 'conflict');
    });

    it('allows the same name in another publication, of the same account or another', async () => {
      const name = uniqueName('Sport');
      assert.equal((await s.api.post(categories(), { name })).status, 201);
      assert.equal((await s.api.post(categories(s.secondAppId), { name })).status, 201);
      assert.equal((await s.strangerApi.post(categories(s.strangerAppId), { name })).status, 201);
    });

    it("refuses to rename a category to another one's name with 409, but keeps its own name", async () => {
      const taken = (await s.api.post(categories(), { name: uniqueName('Taken') })).body;
      const category = (await s.api.post(categories(), { name: uniqueName('Free') })).body;
      expectError(await s.api.put(`${categories()}/${category.id}`, { name: taken.name }), 409, 'conflict');
      const same = await s.api.put(`${categories()}/${category.id}`, { name: category.name });
      assert.equal(same.status, 200);
      assert.equal(same.body.name, category.name);
      // An empty update changes nothing.
      const empty = await s.api.put(`${categories()}/${category.id}`, {});
      assert.equal(empty.status, 200);
      assert.equal(empty.body.name, category.name);
    });

    it("lists a publication's categories by name", async () => {
      const appId = s.secondAppId;
      for (const name of ['Zebra', 'Apple', 'Mango']) await s.api.post(categories(appId), { name: `${name} ${counter}` });
      const names = (await s.api.get(categories(appId))).body.map((row: { name: string }) => row.name);
      assert.deepEqual(names, [...names].sort());
      assert.ok(names.length >= 3);
    });
  });
}
