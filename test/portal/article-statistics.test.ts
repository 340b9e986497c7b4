// PostgreSQL plans article reads from the table's statistics; an import that adds many rows refreshes them at once
// (ANALYZE) rather than leaving the planner blind until autovacuum's next round.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { client, createOwner, createPublication, POSTGRES_URL, startApp, type TestApp } from '../helpers/app.js';
import { PORTAL } from '../helpers/portal.js';

describe('article statistics after an import (postgres)', { skip: !POSTGRES_URL && 'no TEST_POSTGRES_URL' }, () => {
  let t: TestApp;
  let api: ReturnType<typeof client>;
  let appId: string;

  before(async () => {
    t = await startApp('postgres');
    const owner = await createOwner(t.storage);
    appId = (await createPublication(t.storage, owner.accountId)).app_id;
    api = client(t.app, owner.apiKey);
  });
  after(() => t?.close());

  const analyzed = async () =>
    Number(
      (
        await sql<{ n: number }>`select count(*) as n from pg_stats where schemaname = current_schema() and tablename = 'articles'`.execute(
          t.storage.db,
        )
      ).rows[0]!.n,
    );
  const importArticles = async (count: number) => {
    const articles = Array.from({ length: count }, (_, n) => ({ title: `Imported ${n}`, info: `Number ${n}` }));
    const response = await api.post(`${PORTAL}/articles/${appId}/flexpdf-import`, { articles });
    assert.equal(response.status, 201, response.raw);
  };

  it('leaves a few rows to autovacuum', async () => {
    await importArticles(10);
    assert.equal(await analyzed(), 0);
  });

  it('analyzes the articles once an import brings the changes past the threshold', async () => {
    await importArticles(60);
    assert.ok((await analyzed()) > 0, 'pg_stats holds the articles columns');
    const total = await api.get(`${PORTAL}/articles/${appId}/page/1?per_page=5`);
    assert.equal(total.body.total, 70);
  });
});
