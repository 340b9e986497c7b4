import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPublication, DIALECTS, startApp, type TestApp } from '../helpers/app.js';
import { expectPage, expectRedirect, fieldError, PASSWORD, pageClient, signUp, uniqueEmail } from './helpers.js';

let addressCounter = 0;
const nextAddress = () => `10.11.${Math.floor(++addressCounter / 250)}.${addressCounter % 250}`;

// The forms that are an API's input in other words (adding and editing a feed, creating a client) are checked by
// Fastify against that API's own body schema (`schema.body` with `attachValidation`), after the page has trimmed and
// read the form as it always did: the same problems, at the same fields.
for (const dialect of DIALECTS) {
  describe(`dashboard forms checked against the API's body schemas (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(dialect);
    });
    after(async () => {
      await t.close();
    });
    const browser = () => pageClient(t.app, { remoteAddress: nextAddress() });

    async function owner() {
      const visitor = browser();
      const { email } = await signUp(visitor);
      const user = await t.storage.db.selectFrom('users').select('account_id').where('email', '=', email).executeTakeFirstOrThrow();
      const publication = await createPublication(t.storage, user.account_id);
      return { visitor, publication };
    }

    const feedCount = async (publicationId: number) =>
      (await t.storage.db.selectFrom('rss_feeds').select('id').where('publication_id', '=', publicationId).execute()).length;

    it('shows a feed form’s problems next to its fields, the text trimmed first', async () => {
      const { visitor, publication } = await owner();
      const base = `/publications/${publication.app_id}/feeds`;
      await visitor.get(base);
      let page = expectPage(await visitor.post(base, { url: '   ' }), 400);
      assert.equal(fieldError(page, 'field-url'), 'Is required');
      page = expectPage(await visitor.post(base, { url: `https://example.com/${'a'.repeat(2048)}` }), 400);
      assert.equal(fieldError(page, 'field-url'), 'Must be at most 2048 characters');
      page = expectPage(await visitor.post(base, { url: 'https://example.com/feed.xml', title: `  ${'t'.repeat(501)}  ` }), 400);
      assert.equal(fieldError(page, 'field-title'), 'Must be at most 500 characters');
      assert.match(page, /value="https:\/\/example.com\/feed.xml"/, 'the form comes back as it was sent');
      const ids = Array.from({ length: 101 }, (_, index) => String(index + 1));
      page = expectPage(await visitor.post(base, { url: 'https://example.com/feed.xml', category_ids: [...ids, '1', 'x'] }), 400);
      assert.match(page, /Categories: Must name at most 100/);
      assert.equal(await feedCount(publication.id), 0);
    });

    it('shows a client form’s problems next to its fields', async () => {
      const { visitor, publication } = await owner();
      const base = `/publications/${publication.app_id}/clients`;
      await visitor.get(base);
      const client = { email: uniqueEmail('client'), firstname: 'Ada', lastname: 'Lovelace', password: PASSWORD, access_level: 'viewer' };
      let page = expectPage(await visitor.post(base, { ...client, email: ' ab ' }), 400);
      assert.equal(fieldError(page, 'new-email'), 'Must be at least 3 characters');
      page = expectPage(await visitor.post(base, { ...client, lastname: 'L'.repeat(101) }), 400);
      assert.equal(fieldError(page, 'new-lastname'), 'Must be at most 100 characters');
      page = expectPage(await visitor.post(base, { ...client, password: 'p'.repeat(1025) }), 400);
      assert.equal(fieldError(page, 'new-password'), 'Must be at most 1024 characters');
      page = expectPage(await visitor.post(base, { ...client, firstname: '', access_level: 'owner' }), 400);
      assert.equal(fieldError(page, 'new-access_level'), 'Choose a role', 'the role is checked first, as before');
      expectRedirect(await visitor.post(base, client), `${base}?notice=client-created`);
    });

    it('answers a malformed address with the 404 page before looking at the form, signed in or not, token or not', async () => {
      const { visitor, publication } = await owner();
      await visitor.get(`/publications/${publication.app_id}/feeds`);
      for (const path of [
        '/publications/no%20such%20id/feeds',
        `/publications/${publication.app_id}/feeds/0`,
        '/publications/no%20such%20id/clients',
      ]) {
        assert.match(expectPage(await visitor.post(path, { url: '', title: '' }), 404), /There is no such page\./, path);
        expectPage(await visitor.postRaw(path, { url: '' }), 404);
        expectPage(await browser().postRaw(path, { url: '' }), 404);
      }
      // A well-formed address without the token is refused before the form is looked at.
      expectPage(await visitor.postRaw(`/publications/${publication.app_id}/feeds`, { url: '' }), 403);
    });
  });
}
