import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { client, createOwner, createPublication, DIALECTS, expectError, startApp, type TestApp } from '../helpers/app.js';
import { PORTAL } from '../helpers/portal.js';

/** Dates that name a real moment, but whose UTC year is outside 1–9999 once the offset is applied (or before). */
const OUT_OF_RANGE = [
  '0000-01-01T00:00:00+14:00',
  '0001-01-01T00:00:00+00:01',
  '9999-12-31T23:59:59-14:00',
  '9999-12-31T23:30:00-00:30',
  '0000-06-01',
  '0000-12-31 23:59:59',
];

/** The edges that stay inside, as the portal returns them. */
const AT_THE_EDGES: [string, string][] = [
  ['0001-01-01T00:00:00Z', '0001-01-01 00:00:00'],
  ['0001-01-01T10:00:00+09:00', '0001-01-01 01:00:00'],
  ['9999-12-31T23:59:59Z', '9999-12-31 23:59:59'],
  ['9999-12-31T09:59:59-14:00', '9999-12-31 23:59:59'],
  ['0001-01-01', '0001-01-01 00:00:00'],
];

for (const dialect of DIALECTS) {
  describe(`article and issue dates outside the years 1 to 9999 (${dialect})`, () => {
    let t: TestApp;
    let api: ReturnType<typeof client>;
    let articles: string;
    let issues: string;
    before(async () => {
      t = await startApp(dialect);
      const owner = await createOwner(t.storage);
      api = client(t.app, owner.apiKey);
      const { app_id: appId } = await createPublication(t.storage, owner.accountId);
      articles = `${PORTAL}/articles/${appId}`;
      issues = `${PORTAL}/issues/${appId}`;
    });
    after(() => t.close());

    async function stored(): Promise<unknown[]> {
      const rows = await t.storage.db.selectFrom('articles').select(['id', 'date']).orderBy('id').execute();
      const issueRows = await t.storage.db.selectFrom('issues').select(['id', 'date']).orderBy('id').execute();
      return [...rows, ...issueRows];
    }

    it('are a 400 naming the field on create, update and import, and nothing is stored', async () => {
      const existing = await api.post(articles, { title: 'Kept', date: '2026-01-01' });
      assert.equal(existing.status, 201, existing.raw);
      const before = await stored();
      for (const date of OUT_OF_RANGE) {
        const created = expectError(await api.post(articles, { title: 'Too far', date }), 400, 'validation_failed');
        assert.equal(created.details[0]?.path, '/date', date);
        assert.match(created.message, /^date must be a date from year 1 to 9999/);
        const updated = expectError(await api.put(`${articles}/${existing.body.id}`, { date }), 400, 'validation_failed');
        assert.equal(updated.details[0]?.path, '/date', date);
        const imported = expectError(
          await api.post(`${articles}/flexpdf-import`, { articles: [{ title: 'Fine' }, { title: 'Too far', date }] }),
          400,
          'validation_failed',
        );
        assert.equal(imported.details[0]?.path, '/articles/1/date', date);
        const issue = expectError(await api.post(issues, { name: 'Too far', date }), 400, 'validation_failed');
        assert.equal(issue.details[0]?.path, '/date', date);
      }
      assert.deepEqual(await stored(), before);
      assert.equal((await api.get(`${articles}/${existing.body.id}`)).body.date, '2026-01-01 00:00:00');
    });

    it('at the edges are stored and returned in the timestamp shape, and sort as dates', async () => {
      const ids: number[] = [];
      for (const [date, expected] of AT_THE_EDGES) {
        const response = await api.post(articles, { title: `Edge ${date}`, date });
        assert.equal(response.status, 201, `${date}: ${response.raw}`);
        assert.equal(response.body.date, expected, date);
        assert.equal((await api.get(`${articles}/${response.body.id}`)).body.date, expected, date);
        ids.push(response.body.id);
      }
      const page = await api.get(`${articles}/page/1?order_by=date&order_dir=asc&per_page=100`);
      const dates = (page.body.records as { id: number; date: string }[]).filter((record) => ids.includes(record.id)).map((record) => record.date);
      assert.deepEqual(dates, [...dates].sort());
      assert.equal(dates[0], '0001-01-01 00:00:00');
      assert.equal(dates.at(-1), '9999-12-31 23:59:59');
    });
  });
}
