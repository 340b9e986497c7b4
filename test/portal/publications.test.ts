import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { client, createOwner, DIALECTS, expectError } from '../helpers/app.js';
import { PORTAL, TIMESTAMP, useTenants } from '../helpers/portal.js';

const PUBLICATIONS = `${PORTAL}/publications`;

for (const dialect of DIALECTS) {
  describe(`publications (${dialect})`, () => {
    const s = useTenants(dialect);

    it("lists the caller's account's publications only, in creation order", async () => {
      const response = await s.api.get(PUBLICATIONS);
      assert.equal(response.status, 200);
      assert.deepEqual(
        response.body.map((publication: { app_id: string }) => publication.app_id),
        [s.appId, s.secondAppId],
      );
      const theirs = await s.strangerApi.get(PUBLICATIONS);
      assert.deepEqual(
        theirs.body.map((publication: { app_id: string }) => publication.app_id),
        [s.strangerAppId],
      );
    });

    it('returns id, app_id, name, access_level, created_at and updated_at, timestamps as YYYY-MM-DD HH:MM:SS', async () => {
      const [first] = (await s.api.get(PUBLICATIONS)).body;
      assert.deepEqual(Object.keys(first).sort(), ['access_level', 'app_id', 'created_at', 'id', 'name', 'updated_at']);
      assert.equal(first.id, s.publicationId);
      assert.equal(first.name, s.appId, 'the name defaults to the app id');
      assert.equal(first.access_level, 'owner');
      assert.match(first.created_at, TIMESTAMP);
      assert.match(first.updated_at, TIMESTAMP);
    });

    it('answers an account without publications with an empty list', async () => {
      const lonely = await createOwner(s.t.storage);
      const response = await client(s.t.app, lonely.apiKey).get(PUBLICATIONS);
      assert.equal(response.status, 200);
      assert.deepEqual(response.body, []);
    });

    it('answers 401 without a key', async () => {
      expectError(await client(s.t.app).get(PUBLICATIONS), 401, 'unauthorized');
    });
  });
}
