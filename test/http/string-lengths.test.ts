// maxLength and minLength of JSON bodies count characters (code points), as JSON Schema and ajv do: an emoji is one
// character although JavaScript's length counts it twice. The body validator settles most strings from their length
// alone (so a 30 MB import is not walked character by character on the event loop); these are the edges where it
// must count, on the real app's routes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTenant, type Tenant } from '../helpers/articles.js';
import { DIALECTS, expectError, startApp, type TestApp } from '../helpers/app.js';

for (const dialect of DIALECTS) {
  describe(`String lengths of JSON bodies count characters (${dialect})`, () => {
    let t: TestApp;
    let tenant: Tenant;

    before(async () => {
      t = await startApp(dialect);
      tenant = await createTenant(t);
    });
    after(async () => t.close());

    it("takes a title of 500 emoji (1,000 UTF-16 units) and refuses 501, with ajv's message", async () => {
      const created = await tenant.api.post(tenant.articles, { title: '😀'.repeat(500) });
      assert.equal(created.status, 201, created.raw);
      assert.equal(created.body.title, '😀'.repeat(500));
      const mixed = await tenant.api.post(tenant.articles, { title: `${'a😀'.repeat(250)}` });
      assert.equal(mixed.status, 201, 'a mix of 500 characters');
      for (const title of ['😀'.repeat(501), `${'a😀'.repeat(250)}b`, 'x'.repeat(501)]) {
        const error = expectError(await tenant.api.post(tenant.articles, { title }), 400, 'validation_failed');
        assert.deepEqual(error.details, [{ path: '/title', message: 'must NOT have more than 500 characters' }]);
        assert.equal(error.message, 'title must NOT have more than 500 characters');
      }
    });

    it('refuses an empty title with the minLength message, and takes one emoji', async () => {
      const error = expectError(await tenant.api.post(tenant.articles, { title: '' }), 400, 'validation_failed');
      assert.ok(
        error.details.some((detail) => detail.path === '/title' && detail.message === 'must NOT have fewer than 1 characters'),
        JSON.stringify(error.details),
      );
      assert.equal((await tenant.api.post(tenant.articles, { title: '😀' })).status, 201);
      // Two emoji are four UTF-16 units but two characters: fewer than the email's three.
      const client = expectError(
        await tenant.api.post('/api/portal/v1/clients', { email: '😀😀', firstname: 'A', lastname: 'B', password: 'a long password 1', roles: [] }),
        400,
        'validation_failed',
      );
      assert.ok(
        client.details.some((detail) => detail.path === '/email' && detail.message === 'must NOT have fewer than 3 characters'),
        JSON.stringify(client.details),
      );
    });

    it('counts a million emoji of HTML as a million characters in an import (the limit), and refuses one more', async () => {
      const url = `${tenant.articles}/flexpdf-import`;
      const fits = await tenant.api.post(url, { articles: [{ title: 'Emoji', html: '😀'.repeat(1_000_000) }] });
      assert.equal(fits.status, 201, fits.raw.slice(0, 300));
      assert.equal(fits.body.articles[0].html, '😀'.repeat(1_000_000));
      const error = expectError(
        await tenant.api.post(url, { articles: [{ title: 'Emoji', html: '😀'.repeat(1_000_001) }] }),
        400,
        'validation_failed',
      );
      assert.deepEqual(error.details[0], { path: '/articles/0/html', message: 'must NOT have more than 1000000 characters' });
    });
  });
}
