import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { client, createOwner, createPublication, DIALECTS, expectError, startApp, type TestApp } from '../helpers/app.js';
import { PORTAL } from '../helpers/portal.js';
import { appRoutes } from '../helpers/routes.js';

for (const dialect of DIALECTS) {
  describe(`a NUL character in a query string (${dialect})`, () => {
    let t: TestApp;
    let api: ReturnType<typeof client>;
    let appId: string;
    before(async () => {
      t = await startApp(dialect);
      const owner = await createOwner(t.storage);
      api = client(t.app, owner.apiKey);
      appId = (await createPublication(t.storage, owner.accountId)).app_id;
    });
    after(() => t.close());

    it('is a 400 naming the parameter, for every query parameter of every GET route with a querystring schema', async () => {
      const routes = appRoutes(t.app, 'GET');
      // The parameters each route declares, from its querystring schema (the OpenAPI document is built from them).
      const doc = (await api.get('/openapi.json')).body as { paths: Record<string, { get?: { parameters?: { in: string; name: string }[] } }> };
      const declared = new Map<string, string[]>();
      for (const route of routes) {
        const parameters = doc.paths[route.replace(/:(\w+)/g, '{$1}')]?.get?.parameters ?? [];
        const query = parameters.filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name);
        if (query.length > 0) declared.set(route, query);
      }
      // The routes with a querystring schema today; a new one is covered by the same hook, and belongs here.
      assert.deepEqual([...declared.keys()].sort(), [
        '/api/client/jobs',
        '/api/client/lead-batches',
        '/api/client/lead-batches/:id',
        '/api/client/lead-batches/:id/results.csv',
        '/api/client/webhooks/:id/deliveries',
        `${PORTAL}/articles/:app_id`,
        `${PORTAL}/articles/:app_id/page/:page`,
        `${PORTAL}/audit`,
        `${PORTAL}/clients/`,
        `${PORTAL}/clients/page/:page`,
      ]);
      for (const [route, names] of declared) {
        const path = route.replace(':app_id', appId).replace(':page', '1').replace(':id', '1');
        for (const name of names) {
          for (const value of ['%00', 'a%00b', 'abc%00']) {
            const url = `${path}?${name}=${value}`;
            const problem = expectError(await api.get(url), 400, 'validation_failed');
            assert.deepEqual(problem.details, [{ path: `/querystring/${name}`, message: 'must not contain the NUL character (\\u0000)' }], url);
            assert.equal(problem.message, `querystring.${name} must not contain the NUL character (\\u0000)`);
          }
        }
      }
    });

    it("is a 400 on every other GET route too, declared parameter or not (the dashboard's pages answer a page)", async () => {
      const routes = appRoutes(t.app, 'GET');
      assert.ok(routes.length > 20, `routes read from Fastify: ${routes.join(', ')}`);
      for (const route of routes) {
        const path = route.replace(':app_id', appId).replace(/:\w+/g, '1').replace('*', 'x');
        for (const query of ['filter=a%00b', 'next=%00', 'a%00b=1', 'list=a&list=b%00']) {
          const response = await api.get(`${path}?${query}`);
          assert.equal(response.status, 400, `${path}?${query}: ${response.raw.slice(0, 200)}`);
        }
      }
    });

    it('the searches the issue named answer 400, and text that only looks like a NUL is searched as it is', async () => {
      for (const url of [`${PORTAL}/clients/?filter=%00`, `${PORTAL}/clients/page/1?filter=a%00b`, `${PORTAL}/articles/${appId}?filter=%00`]) {
        expectError(await api.get(url), 400, 'validation_failed');
      }
      // %2500 is the three characters "%00"; an escaped backslash-u is text too.
      for (const url of [
        `${PORTAL}/clients/?filter=%2500`,
        `${PORTAL}/clients/page/1?filter=%5Cu0000`,
        `${PORTAL}/articles/${appId}?filter=a%2500b`,
      ]) {
        const response = await api.get(url);
        assert.equal(response.status, 200, `${url}: ${response.raw.slice(0, 200)}`);
      }
    });
  });
}
