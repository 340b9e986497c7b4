// A value outside a fixed set of choices (a union of literals in the schema) is one readable problem that lists the
// allowed values, not one "must be equal to constant" per choice and a "must match a schema in anyOf".

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { client, createOwner, createPublication, DIALECTS, expectError, startApp, type TestApp } from '../helpers/app.js';
import { LEADS } from '../helpers/leads.js';
import { PORTAL } from '../helpers/portal.js';

for (const dialect of DIALECTS) {
  describe(`fixed choices in validation messages (${dialect})`, () => {
    let t: TestApp;
    let api: ReturnType<typeof client>;
    let articles: string;

    before(async () => {
      t = await startApp(dialect);
      const owner = await createOwner(t.storage);
      articles = `${PORTAL}/articles/${(await createPublication(t.storage, owner.accountId)).app_id}`;
      api = client(t.app, owner.apiKey);
    });
    after(() => t.close());

    const cases: [what: string, send: () => Promise<Parameters<typeof expectError>[0]>, path: string, message: string][] = [
      [
        'unlock_type in a body',
        () => api.post(articles, { title: 'x', unlock_type: 'gold' }),
        '/unlock_type',
        'unlock_type must be one of free, paid, subscription',
      ],
      [
        'order_by in a query',
        () => api.get(`${articles}/page/1?order_by=colour`),
        '/querystring/order_by',
        'querystring.order_by must be one of id, title, date, position, created_at, updated_at',
      ],
      [
        'order_dir in a query',
        () => api.get(`${articles}/page/1?order_dir=up`),
        '/querystring/order_dir',
        'querystring.order_dir must be one of asc, desc',
      ],
      [
        'a job status in a query',
        () => api.get(`${LEADS}/jobs?status=done`),
        '/querystring/status',
        'querystring.status must be one of pending, scraping, generating, sending, completed, failed, rejected, processing',
      ],
    ];
    for (const [what, send, path, message] of cases) {
      it(`names the allowed values once: ${what}`, async () => {
        const body = expectError(await send(), 400, 'validation_failed');
        assert.equal(body.message, message);
        assert.deepEqual(body.details, [{ path, message: message.slice(message.indexOf(' must') + 1) }]);
      });
    }

    it('nothing was stored by the refused create', async () => {
      assert.deepEqual((await api.get(articles)).body, []);
    });
  });
}
