import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { client, DIALECTS, expectError } from '../helpers/app.js';
import { startAppWithRoutes } from './helpers.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

for (const dialect of DIALECTS) {
  describe(`request ids (${dialect})`, () => {
    let t: Awaited<ReturnType<typeof startAppWithRoutes>>;
    before(async () => {
      t = await startAppWithRoutes(dialect, {}, (app) => {
        app.get('/boom', async () => {
          throw new Error('something internal');
        });
        // The id a request's log lines carry (Fastify logs request.id as reqId).
        app.get('/request-id', async (request) => ({ id: request.id }));
      });
    });
    after(() => t.close());

    async function boom(requestId?: string) {
      const response = await client(t.app).get('/boom', requestId === undefined ? {} : { 'x-request-id': requestId });
      const body = expectError(response, 500, 'internal') as unknown as { request_id: string };
      const logged = (await client(t.app).get('/request-id', requestId === undefined ? {} : { 'x-request-id': requestId })).body.id as string;
      return { response, id: body.request_id, logged };
    }

    it('a short safe x-request-id is kept: in the 500 body and the logs', async () => {
      for (const given of ['abc-123', 'A.b_c-9', 'x'.repeat(64), '3f2c1a9e-8d4b-4c6e-9f1a-2b3c4d5e6f70']) {
        const { id, logged } = await boom(given);
        assert.equal(id, given);
        assert.equal(logged, given);
      }
    });

    it('a long or unsafe x-request-id is replaced by an id of ours, echoed nowhere', async () => {
      const hostile = ['x'.repeat(65), 'y'.repeat(8000), '<script>alert(1)</script>', 'abc def', 'id"},{"admin":true', 'a,b', '../../etc/passwd', ''];
      for (const given of hostile) {
        const { response, id, logged } = await boom(given);
        assert.match(id, UUID, `for ${JSON.stringify(given.slice(0, 40))}`);
        assert.match(logged, UUID);
        if (given !== '') {
          assert.ok(!response.raw.includes(given), 'not in the body');
          for (const [name, value] of Object.entries(response.headers)) {
            assert.ok(!String(value).includes(given), `not in the ${name} header`);
          }
        }
      }
    });

    it('without an x-request-id each request gets an id of its own', async () => {
      const first = await boom();
      const second = await boom();
      assert.match(first.id, UUID);
      assert.notEqual(first.id, second.id);
    });
  });
}
