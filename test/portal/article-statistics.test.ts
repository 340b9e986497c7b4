// PostgreSQL plans article reads from the table's statistics; an import that adds many rows refreshes them at once
// (ANALYZE) rather than leaving the planner blind until autovacuum's next round, and marks them all-visible (VACUUM).
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

  it('vacuums them once 1,000 were inserted since the last vacuum, so that their index entries need no heap visit', async () => {
    const vacuumed = async () =>
      (await sql<{ at: unknown }>`select last_vacuum as at from pg_stat_user_tables where relid = 'articles'::regclass`.execute(t.storage.db)).rows[0]
        ?.at;
    assert.equal(await vacuumed(), null);
    await importArticles(500);
    assert.equal(await vacuumed(), null);
    await importArticles(500);
    assert.ok(await vacuumed(), 'last_vacuum is set');
    const visible = await sql<{
      all: number;
      pages: number;
    }>`select relallvisible as all, relpages as pages from pg_class where oid = 'articles'::regclass`.execute(t.storage.db);
    assert.ok(visible.rows[0]!.all > 0 && visible.rows[0]!.all >= visible.rows[0]!.pages - 1, 'the pages are marked all-visible');
  });
});
