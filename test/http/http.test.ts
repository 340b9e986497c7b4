import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashApiKey } from '../../src/accounts/keys.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openStorage } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { client, createOwner, createPublication, DIALECTS, expectError, type Owner, type Response, startApp, type TestApp } from '../helpers/app.js';
import { PORTAL } from '../helpers/portal.js';

const PUBLICATIONS = `${PORTAL}/publications`;

/** Every operation the Portal API documents, by OpenAPI path. */
const PORTAL_OPERATIONS: Record<string, string[]> = {
  '/api/portal/v1/publications': ['get'],
  '/api/portal/v1/articles/{app_id}': ['get', 'post'],
  '/api/portal/v1/articles/{app_id}/page/{page}': ['get'],
  '/api/portal/v1/articles/{app_id}/{id}': ['delete', 'get', 'put'],
  '/api/portal/v1/articles/{app_id}/flexpdf-import': ['post'],
  '/api/portal/v1/categories/{app_id}': ['get', 'post'],
  '/api/portal/v1/categories/{app_id}/{id}': ['delete', 'get', 'put'],
  '/api/portal/v1/issues/{app_id}': ['get', 'post'],
  '/api/portal/v1/issues/{app_id}/{id}': ['delete', 'get', 'put'],
  '/api/portal/v1/rss_feeds/{app_id}': ['get', 'post'],
  '/api/portal/v1/rss_feeds/{app_id}/{id}': ['delete', 'get', 'put'],
  '/api/portal/v1/rss_feeds/{app_id}/{id}/synchronize': ['post'],
  '/api/portal/v1/clients/': ['get', 'post'],
  '/api/portal/v1/clients/page/{page}': ['get'],
  '/api/portal/v1/clients/{id}': ['delete', 'get', 'put'],
  '/api/portal/v1/clients/{id}/become': ['get'],
  '/api/portal/v1/audit': ['get'],
  '/api/portal/v1/sessions': ['delete', 'post'],
};

/** Fails unless a body looks like a 500 that tells nothing of the code behind it. */
function expectOpaqueInternalError(response: Response) {
  expectError(response, 500, 'internal');
  assert.equal(typeof response.body.request_id, 'string');
  assert.notEqual(response.body.request_id, '');
  assert.doesNotMatch(response.raw, /\bat .*\.(ts|js):\d+|stack|node_modules/i);
}

describe("the one error shape for the framework's own failures", () => {
  let t: TestApp;
  let api: ReturnType<typeof client>;
  let categories: string;
  before(async () => {
    t = await startApp('sqlite');
    const owner = await createOwner(t.storage);
    api = client(t.app, owner.apiKey);
    categories = `${PORTAL}/categories/${(await createPublication(t.storage, owner.accountId)).app_id}`;
  });
  after(() => t.close());

  it('an unknown route is 404 not_found', async () => {
    expectError(await api.get('/no/such/route'), 404, 'not_found');
    expectError(await api.get(`${PORTAL}/no-such-collection`), 404, 'not_found');
    expectError(await api.post(`${PORTAL}/publications`, {}), 404, 'not_found');
  });

  it('a body that is not JSON is 400 validation_failed', async () => {
    expectError(await api.post(categories, '{"name": "unterminated'), 400, 'validation_failed');
    expectError(await api.post(categories, ''), 400, 'validation_failed');
  });

  it('a body larger than the limit is 413 payload_too_large', async () => {
    expectError(await api.post(categories, JSON.stringify({ name: 'x'.repeat(3 * 1024 * 1024) })), 413, 'payload_too_large');
  });

  it('a body that is not application/json is 415 unsupported_media_type', async () => {
    expectError(await api.post(categories, 'name=Sport', { 'content-type': 'text/plain' }), 415, 'unsupported_media_type');
    expectError(await api.post(categories, 'name=Sport', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'unsupported_media_type');
  });

  it('a body that is not valid UTF-8 is 400 validation_failed', async () => {
    const body = Buffer.concat([Buffer.from('{"name": "'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]);
    const problem = expectError(await api.post(categories, body), 400, 'validation_failed');
    assert.match(problem.message, /UTF-8/);
  });

  it('a body nested too deep is 400 validation_failed', async () => {
    const deepArray = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const deepObject = `${'{"a":'.repeat(100)}1${'}'.repeat(100)}`;
    for (const body of [deepArray, deepObject]) {
      const problem = expectError(await api.post(categories, body), 400, 'validation_failed');
      assert.match(problem.message, /nested/);
    }
  });

  it('a NUL character in any string of the body is 400 naming where (PostgreSQL text cannot hold one)', async () => {
    const problem = expectError(await api.post(categories, '{"name": "Sp\\u0000ort"}'), 400, 'validation_failed');
    assert.equal(problem.details[0]?.path, '/name');
    const nested = expectError(await api.post(categories, '{"a": [{"b\\u0000": 1}]}'), 400, 'validation_failed');
    assert.equal(nested.details[0]?.path, '/a/0/b\u0000');
    // An escaped backslash followed by "u0000" is six ordinary characters, not a NUL.
    const plain = await api.post(categories, '{"name": "C:\\\\u0000"}');
    assert.equal(plain.status, 201, plain.raw);
    assert.equal(plain.body.name, 'C:\\u0000');
  });

  it('a body field of the wrong type is 400 with its path in details', async () => {
    const problem = expectError(await api.post(categories, { name: ['Sport'] }), 400, 'validation_failed');
    assert.equal(problem.details[0]?.path, '/name');
  });

  it('a 500 tells nothing but a request id', async () => {
    const storage = openStorage(':memory:');
    await migrateToLatest(storage.db, storage.dialect);
    const app = await buildApp({ config: loadConfig({ DATABASE_URL: ':memory:' }), storage, logRequests: false });
    app.get('/boom', async () => {
      throw new Error('secret internals at /srv/app/src/secret.ts:12');
    });
    app.get('/boom-status', async () => {
      throw Object.assign(new Error('upstream exploded'), { statusCode: 502 });
    });
    await app.ready();
    try {
      for (const url of ['/boom', '/boom-status']) {
        const response = await client(app).get(url);
        expectOpaqueInternalError(response);
        assert.doesNotMatch(response.raw, /secret|exploded/);
      }
    } finally {
      await app.close();
      await storage.close();
    }
  });
});

describe('OpenAPI and docs', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp('sqlite');
  });
  after(() => t.close());

  it('serves an OpenAPI 3.1.0 document of every portal operation, without a key', async () => {
    const response = await client(t.app).get('/openapi.json');
    assert.equal(response.status, 200);
    const doc = response.body;
    assert.equal(doc.openapi, '3.1.0');
    const portal = Object.fromEntries(
      Object.entries<Record<string, unknown>>(doc.paths)
        .filter(([path]) => path.startsWith(PORTAL))
        .map(([path, operations]) => [path, Object.keys(operations).sort()]),
    );
    assert.deepEqual(portal, PORTAL_OPERATIONS);
    const articleOperations = Object.entries(portal)
      .filter(([path]) => path.startsWith(`${PORTAL}/articles`))
      .flatMap(([, methods]) => methods);
    assert.equal(articleOperations.length, 7);
    assert.ok(doc.paths['/healthz']?.get && doc.paths['/readyz']?.get);
    assert.ok(!('/openapi.json' in doc.paths));
  });

  it('names the shared schemas, and every portal error response is the ErrorBody', async () => {
    const doc = (await client(t.app).get('/openapi.json')).body;
    for (const name of ['ErrorBody', 'Article', 'Category', 'Issue', 'RssFeed', 'RssFeedSyncResult']) assert.ok(doc.components.schemas[name], name);
    assert.deepEqual(doc.components.schemas.ErrorBody.required, ['success', 'status', 'error', 'message']);
    for (const [path, operations] of Object.entries<Record<string, { responses: Record<string, any> }>>(doc.paths)) {
      if (!path.startsWith(PORTAL)) continue;
      for (const [method, operation] of Object.entries(operations)) {
        const errors = Object.entries(operation.responses).filter(([status]) => Number(status) >= 400);
        assert.ok(
          errors.some(([status]) => status === '401'),
          `${method} ${path} documents 401`,
        );
        for (const [status, response] of errors) {
          assert.equal(response.content['application/json'].schema.$ref, '#/components/schemas/ErrorBody', `${method} ${path} ${status}`);
        }
      }
    }
  });

  it('documents the lead API: its operations, its answers and the error shape of its failures', async () => {
    const doc = (await client(t.app).get('/openapi.json')).body;
    const lead = Object.fromEntries(
      Object.entries<Record<string, unknown>>(doc.paths)
        .filter(([path]) => path.startsWith('/api/client') && !path.startsWith('/api/client/webhooks'))
        .map(([path, operations]) => [path, Object.keys(operations).sort()]),
    );
    assert.deepEqual(lead, {
      '/api/client/process-lead': ['post'],
      '/api/client/jobs': ['get'],
      '/api/client/jobs/{id}': ['get'],
      '/api/client/lead-batches': ['get', 'post'],
      '/api/client/lead-batches/{id}': ['get'],
      '/api/client/lead-batches/{id}/results.json': ['get'],
      '/api/client/lead-batches/{id}/results.csv': ['get'],
    });
    const webhooks = Object.fromEntries(
      Object.entries<Record<string, unknown>>(doc.paths)
        .filter(([path]) => path.startsWith('/api/client/webhooks'))
        .map(([path, operations]) => [path, Object.keys(operations).sort()]),
    );
    assert.deepEqual(webhooks, {
      '/api/client/webhooks': ['get', 'post'],
      '/api/client/webhooks/{id}': ['delete', 'get', 'patch'],
      '/api/client/webhooks/{id}/rotate-secret': ['post'],
      '/api/client/webhooks/{id}/deliveries': ['get'],
      '/api/client/webhooks/{id}/deliveries/{deliveryId}': ['get'],
      '/api/client/webhooks/{id}/test': ['post'],
      '/api/client/webhooks/{id}/deliveries/{deliveryId}/retry': ['post'],
    });
    const processLead = doc.paths['/api/client/process-lead'].post;
    assert.deepEqual(Object.keys(processLead.responses).sort(), ['200', '202', '400', '401', '403', '404', '409', '413', '415', '429', '502']);
    assert.equal(processLead.responses['429'].content['application/json'].schema.$ref, '#/components/schemas/ErrorBody');
    assert.ok(
      processLead.parameters.some((parameter: { name: string; in: string }) => parameter.name === 'idempotency-key' && parameter.in === 'header'),
    );
    const jobs = doc.paths['/api/client/jobs'].get;
    assert.deepEqual(jobs.parameters.map((parameter: { name: string }) => parameter.name).sort(), ['batch', 'limit', 'page', 'status']);
  });

  it('serves the interactive reference at /docs/', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/docs/' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /text\/html/);
    assert.match(response.body, /<html/i);
  });
});

for (const dialect of DIALECTS) {
  describe(`API keys (${dialect})`, () => {
    let t: TestApp;
    let owner: Owner;
    before(async () => {
      t = await startApp(dialect);
      owner = await createOwner(t.storage);
    });
    after(() => t.close());

    const keyRow = (key: string) => t.storage.db.selectFrom('api_keys').selectAll().where('key_hash', '=', hashApiKey(key)).executeTakeFirstOrThrow();
    const setKey = (key: string, changes: { revoked_at?: string | null; expires_at?: string | null }) =>
      t.storage.db.updateTable('api_keys').set(changes).where('key_hash', '=', hashApiKey(key)).execute();
    const minutesFromNow = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();

    it('answers 401 unauthorized without a key, and with an unknown or malformed one', async () => {
      expectError(await client(t.app).get(PUBLICATIONS), 401, 'unauthorized');
      for (const key of [`mh_live_${'A'.repeat(43)}`, 'not-a-key', `${owner.apiKey}x`, 'x'.repeat(5000)]) {
        expectError(await client(t.app, key).get(PUBLICATIONS), 401, 'unauthorized');
      }
      expectError(await client(t.app).get(PUBLICATIONS, { authorization: 'Bearer' }), 401, 'unauthorized');
      expectError(await client(t.app).get(PUBLICATIONS, { authorization: `Basic ${owner.apiKey}` }), 401, 'unauthorized');
    });

    it('accepts the key as x-api-key or as Authorization: Bearer', async () => {
      assert.equal((await client(t.app, owner.apiKey).get(PUBLICATIONS)).status, 200);
      assert.equal((await client(t.app).get(PUBLICATIONS, { authorization: `Bearer ${owner.apiKey}` })).status, 200);
      assert.equal((await client(t.app).get(PUBLICATIONS, { authorization: `bearer ${owner.apiKey}` })).status, 200);
    });

    it('refuses a revoked key with 401', async () => {
      const { apiKey } = await createOwner(t.storage);
      await setKey(apiKey, { revoked_at: minutesFromNow(-1) });
      expectError(await client(t.app, apiKey).get(PUBLICATIONS), 401, 'unauthorized');
      expectError(await client(t.app).get(PUBLICATIONS, { authorization: `Bearer ${apiKey}` }), 401, 'unauthorized');
    });

    it('refuses an expired key with 401 and accepts one that expires later', async () => {
      const { apiKey } = await createOwner(t.storage);
      await setKey(apiKey, { expires_at: minutesFromNow(60) });
      assert.equal((await client(t.app, apiKey).get(PUBLICATIONS)).status, 200);
      await setKey(apiKey, { expires_at: minutesFromNow(-1) });
      expectError(await client(t.app, apiKey).get(PUBLICATIONS), 401, 'unauthorized');
    });

    it('records when a key was last used, and when its user was last seen', async () => {
      const fresh = await createOwner(t.storage);
      assert.equal((await keyRow(fresh.apiKey)).last_used_at, null);
      const start = Date.now();
      assert.equal((await client(t.app, fresh.apiKey).get(PUBLICATIONS)).status, 200);
      const lastUsed = (await keyRow(fresh.apiKey)).last_used_at;
      assert.ok(lastUsed !== null && Date.parse(lastUsed) >= start - 1000 && Date.parse(lastUsed) <= Date.now(), String(lastUsed));
      const user = await t.storage.db.selectFrom('users').select('last_seen_at').where('id', '=', fresh.userId).executeTakeFirstOrThrow();
      assert.equal(user.last_seen_at, lastUsed);
    });
  });

  describe(`health (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(dialect);
    });
    after(() => t.close());

    it('/healthz is 200 {status: ok} and needs no key', async () => {
      const response = await client(t.app).get('/healthz');
      assert.equal(response.status, 200);
      assert.deepEqual(response.body, { status: 'ok' });
    });

    it('/readyz is 200 while the database answers, 503 once it does not; requests then fail as an opaque 500', async () => {
      const ready = await client(t.app).get('/readyz');
      assert.equal(ready.status, 200);
      assert.deepEqual(ready.body, { status: 'ready' });
      const owner = await createOwner(t.storage);
      await t.storage.close();
      const unready = await client(t.app).get('/readyz');
      assert.equal(unready.status, 503);
      assert.equal(typeof unready.body.status, 'string');
      assert.equal((await client(t.app).get('/healthz')).status, 200);
      expectOpaqueInternalError(await client(t.app, owner.apiKey).get(PUBLICATIONS));
    });
  });
}
