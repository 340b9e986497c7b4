// DATABASE_STATEMENT_TIMEOUT_MS: PostgreSQL cancels a statement that runs (or waits for a lock) longer; the request
// is answered 503 `unavailable` with Retry-After, and the next one is served as usual.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { client, createOwner, createPublication, expectError, POSTGRES_URL, startApp, type TestApp } from '../helpers/app.js';
import { PORTAL } from '../helpers/portal.js';

describe('statement timeout (postgres)', { skip: !POSTGRES_URL && 'no TEST_POSTGRES_URL' }, () => {
  let t: TestApp;
  let api: ReturnType<typeof client>;
  let appId: string;
  let articleId: number;

  before(async () => {
    t = await startApp('postgres', { DATABASE_STATEMENT_TIMEOUT_MS: '300' });
    const owner = await createOwner(t.storage);
    appId = (await createPublication(t.storage, owner.accountId)).app_id;
    api = client(t.app, owner.apiKey);
    const created = await api.post(`${PORTAL}/articles/${appId}`, { title: 'Locked away' });
    assert.equal(created.status, 201, created.raw);
    articleId = created.body.id;
  });
  after(() => t?.close());

  it('answers 503 when a statement waits past the limit, and serves the next request', async () => {
    const url = new URL(POSTGRES_URL!);
    url.searchParams.set('options', new URL(t.config.databaseUrl).searchParams.get('options')!);
    const locker = new pg.Client({ connectionString: url.toString() });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table articles in access exclusive mode');
      const blocked = await api.get(`${PORTAL}/articles/${appId}/${articleId}`);
      expectError(blocked, 503, 'unavailable');
      assert.equal(blocked.headers['retry-after'], '2');
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
    const read = await api.get(`${PORTAL}/articles/${appId}/${articleId}`);
    assert.equal(read.status, 200, read.raw);
    assert.equal(read.body.title, 'Locked away');
  });
});
