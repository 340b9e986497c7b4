// The hot point lookups (the key with the publication it names, the article) run as named statements on PostgreSQL:
// parsed and planned once per connection, then only bound and executed. Observed in pg_prepared_statements on the
// app's one pooled connection.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { client, createOwner, createPublication, POSTGRES_URL, startApp, type TestApp } from '../helpers/app.js';
import { PORTAL } from '../helpers/portal.js';

describe('prepared statements on PostgreSQL', { skip: !POSTGRES_URL && 'no TEST_POSTGRES_URL' }, () => {
  let t: TestApp;
  let api: ReturnType<typeof client>;
  let appId: string;

  before(async () => {
    t = await startApp('postgres', { DATABASE_POOL_SIZE: '1' });
    const owner = await createOwner(t.storage);
    appId = (await createPublication(t.storage, owner.accountId)).app_id;
    api = client(t.app, owner.apiKey);
  });
  after(() => t?.close());

  const prepared = async () =>
    (
      await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements where name like 'masthead_%'`.execute(
        t.storage.db,
      )
    ).rows;

  it('names the key lookup and the article read, once each, and reuses them', async () => {
    const created = await api.post(`${PORTAL}/articles/${appId}`, { title: 'Prepared', category_ids: [] });
    assert.equal(created.status, 201);
    for (let round = 0; round < 3; round++) {
      const read = await api.get(`${PORTAL}/articles/${appId}/${created.body.id}`);
      assert.equal(read.status, 200);
      assert.equal(read.body.title, 'Prepared');
    }
    const statements = await prepared();
    assert.ok(
      statements.some((row) => row.statement.includes('"api_keys"') && row.statement.includes('"publications"')),
      'the key lookup',
    );
    assert.ok(
      statements.some((row) => row.statement.includes('from "articles"') && row.statement.includes('json_agg')),
      'the article read',
    );
    assert.equal(new Set(statements.map((row) => row.statement)).size, statements.length, 'one name per statement');
  });

  it('prepares them again on a new connection after the old one is lost', async () => {
    await sql`select pg_terminate_backend(pg_backend_pid())`.execute(t.storage.db).catch(() => undefined);
    let read = await api.get(`${PORTAL}/articles/${appId}`);
    // The pool may hand out the dead connection once before noticing: a 503 that the next request does not repeat.
    if (read.status === 503) read = await api.get(`${PORTAL}/articles/${appId}`);
    assert.equal(read.status, 200);
    const [one] = read.body as { id: number }[];
    assert.equal((await api.get(`${PORTAL}/articles/${appId}/${one!.id}`)).status, 200);
    assert.ok((await prepared()).length >= 2);
  });
});
