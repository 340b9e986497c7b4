import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { client, createOwner, createPublication, DIALECTS, expectError, type Owner, startApp, type TestApp } from '../helpers/app.js';
import { createClientUser } from '../helpers/roles.js';
import { type Receiver, startReceiver, WEBHOOKS } from '../helpers/webhooks.js';

for (const dialect of DIALECTS) {
  describe(`webhook endpoints API (${dialect})`, () => {
    let t: TestApp;
    let receiver: Receiver;
    let owner: Owner;
    let stranger: Owner;
    before(async () => {
      receiver = await startReceiver();
      t = await startApp(dialect, { OUTBOUND_ALLOW: receiver.server.hostPort, WEBHOOK_WORKER: 'off' });
      owner = await createOwner(t.storage, 'business');
      stranger = await createOwner(t.storage, 'business');
    });
    after(async () => {
      await t.close();
      await receiver.close();
    });

    it('creates an endpoint with a whsec_ secret shown once, lists, changes and deletes it', async () => {
      const api = client(t.app, owner.apiKey);
      const created = await api.post(WEBHOOKS, { url: receiver.url('/crud'), events: ['job.completed', 'feed.failed'], description: ' CRM ' });
      assert.equal(created.status, 201, created.raw);
      assert.match(created.body.secret, /^whsec_[A-Za-z0-9+/]+={0,2}$/);
      assert.equal(Buffer.from(created.body.secret.slice('whsec_'.length), 'base64').length, 32);
      assert.deepEqual(
        { url: created.body.url, events: created.body.events, enabled: created.body.enabled, description: created.body.description },
        { url: receiver.url('/crud'), events: ['job.completed', 'feed.failed'], enabled: true, description: 'CRM' },
      );
      const id = created.body.id;

      const list = await api.get(WEBHOOKS);
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.endpoints.map((endpoint: any) => endpoint.id),
        [id],
      );
      assert.equal(list.body.endpoints[0].secret, undefined, 'the secret is never shown again');
      assert.equal((await api.get(`${WEBHOOKS}/${id}`)).body.secret, undefined);

      const changed = await t.app.inject({
        method: 'PATCH',
        url: `${WEBHOOKS}/${id}`,
        headers: { 'x-api-key': owner.apiKey, 'content-type': 'application/json' },
        payload: JSON.stringify({ events: ['job.failed'], enabled: false }),
      });
      assert.equal(changed.statusCode, 200, changed.body);
      assert.deepEqual(JSON.parse(changed.body).events, ['job.failed']);
      assert.equal(JSON.parse(changed.body).enabled, false);

      const rotated = await api.post(`${WEBHOOKS}/${id}/rotate-secret`);
      assert.equal(rotated.status, 200);
      assert.match(rotated.body.secret, /^whsec_/);
      assert.notEqual(rotated.body.secret, created.body.secret);

      assert.equal((await api.delete(`${WEBHOOKS}/${id}`)).status, 204);
      expectError(await api.get(`${WEBHOOKS}/${id}`), 404, 'not_found');
    });

    it('refuses bad input with 400 in the one error shape: private, plain-http and malformed URLs, unknown events', async () => {
      const api = client(t.app, owner.apiKey);
      const refused = async (body: unknown, path: string) => {
        const problem = expectError(await api.post(WEBHOOKS, body), 400, 'validation_failed');
        assert.ok(
          problem.details.some((detail) => detail.path === path || detail.path.startsWith(`${path}/`)),
          `${JSON.stringify(body)}: ${JSON.stringify(problem.details)}`,
        );
        return problem;
      };
      const events = ['job.completed'];
      assert.match((await refused({ url: 'https://10.1.2.3/hook', events }, '/url')).message, /private/);
      await refused({ url: 'https://127.0.0.1:8443/hook', events }, '/url');
      await refused({ url: 'https://[::1]/hook', events }, '/url');
      await refused({ url: 'https://localhost/hook', events }, '/url');
      assert.match((await refused({ url: 'http://hooks.example.com/in', events }, '/url')).message, /https/);
      await refused({ url: 'https://user:secret@hooks.example.com/in', events }, '/url');
      await refused({ url: 'not a url', events }, '/url');
      await refused({ url: 'https://hooks.example.com/in', events: [] }, '/events');
      await refused({ url: 'https://hooks.example.com/in', events: ['job.exploded'] }, '/events');
      await refused({ url: 'https://hooks.example.com/in' }, '/events');
      // A public https URL is fine (nothing is fetched at create).
      assert.equal((await api.post(WEBHOOKS, { url: 'https://hooks.example.com/in', events })).status, 201);
      assert.equal((await api.post(WEBHOOKS, { url: 'https://[2001:4860:4860::8888]/in', events })).status, 201);
    });

    it('keeps tenants apart: another account’s endpoint is a 404 everywhere, and a portal client key is a 403', async () => {
      const api = client(t.app, owner.apiKey);
      const other = client(t.app, stranger.apiKey);
      const { body } = await api.post(WEBHOOKS, { url: receiver.url('/mine'), events: ['job.completed'] });
      const id = body.id;
      expectError(await other.get(`${WEBHOOKS}/${id}`), 404, 'not_found');
      expectError(await other.get(`${WEBHOOKS}/${id}/deliveries`), 404, 'not_found');
      expectError(await other.post(`${WEBHOOKS}/${id}/test`), 404, 'not_found');
      expectError(await other.post(`${WEBHOOKS}/${id}/rotate-secret`), 404, 'not_found');
      expectError(await other.post(`${WEBHOOKS}/${id}/deliveries/1/retry`), 404, 'not_found');
      expectError(await other.delete(`${WEBHOOKS}/${id}`), 404, 'not_found');
      const patch = await t.app.inject({
        method: 'PATCH',
        url: `${WEBHOOKS}/${id}`,
        headers: { 'x-api-key': stranger.apiKey, 'content-type': 'application/json' },
        payload: '{"enabled":false}',
      });
      assert.equal(patch.statusCode, 404);
      assert.deepEqual((await other.get(WEBHOOKS)).body.endpoints, []);
      assert.equal((await api.get(`${WEBHOOKS}/${id}`)).body.enabled, true, 'unchanged by the stranger');

      const publication = await createPublication(t.storage, owner.accountId);
      const portalClient = await createClientUser(t.storage, owner.accountId, [{ publicationId: publication.id, accessLevel: 'admin' }]);
      expectError(await client(t.app, portalClient.apiKey).get(WEBHOOKS), 403, 'forbidden');
      expectError(await client(t.app).get(WEBHOOKS), 401, 'unauthorized');
    });

    it('bounds the endpoints of an account (20) with a 409', async () => {
      const bounded = await createOwner(t.storage, 'business');
      const api = client(t.app, bounded.apiKey);
      for (let index = 0; index < 20; index += 1) {
        assert.equal((await api.post(WEBHOOKS, { url: `https://hooks.example.com/${index}`, events: ['job.failed'] })).status, 201);
      }
      assert.match(
        expectError(await api.post(WEBHOOKS, { url: 'https://hooks.example.com/21', events: ['job.failed'] }), 409, 'conflict').message,
        /20/,
      );
    });
  });
}
