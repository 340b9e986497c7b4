import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DIALECTS, expectError } from '../helpers/app.js';
import { itFollowsTheCollectionContract, PORTAL, useTenants } from '../helpers/portal.js';

/** Accepted date inputs and how the API returns them (UTC, `YYYY-MM-DD HH:MM:SS`). */
const DATES: [input: string, returned: string][] = [
  ['2026-03-01', '2026-03-01 00:00:00'],
  ['2026-03-01 10:30', '2026-03-01 10:30:00'],
  ['2026-03-01 10:30:15', '2026-03-01 10:30:15'],
  ['2026-03-01T10:30:15Z', '2026-03-01 10:30:15'],
  ['2026-03-01T10:30:15.123Z', '2026-03-01 10:30:15'],
  ['2026-03-01T01:30:00+02:00', '2026-02-28 23:30:00'],
  ['2024-02-29', '2024-02-29 00:00:00'],
];

const BAD_DATES: unknown[] = [
  'tomorrow',
  '',
  '2026-02-30',
  '2025-02-29',
  '2026-13-01',
  '2026-03-01 24:00:00',
  '01/03/2026',
  '2026-03-01T10:30:15+25:00',
  20260301,
  true,
  '2'.repeat(41),
];

for (const dialect of DIALECTS) {
  describe(`issues (${dialect})`, () => {
    const s = useTenants(dialect);
    const issues = () => `${PORTAL}/issues/${s.appId}`;

    itFollowsTheCollectionContract(s, {
      path: 'issues',
      fields: ['id', 'publication_id', 'name', 'date', 'created_at', 'updated_at'],
      create: () => ({ name: ' Spring issue ', date: '2026-03-01' }),
      update: { body: { name: 'Summer issue', date: '2026-06-01 08:00:00' }, expect: { name: 'Summer issue', date: '2026-06-01 08:00:00' } },
    });

    it('accepts YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS] and ISO 8601 dates and returns them as YYYY-MM-DD HH:MM:SS UTC', async () => {
      for (const [input, returned] of DATES) {
        const created = await s.api.post(issues(), { name: 'Dated', date: input });
        assert.equal(created.status, 201, `${input}: ${created.raw}`);
        assert.equal(created.body.date, returned, input);
        assert.equal((await s.api.get(`${issues()}/${created.body.id}`)).body.date, returned, input);
      }
    });

    it('stores no date when it is left out or null', async () => {
      assert.equal((await s.api.post(issues(), { name: 'Undated' })).body.date, null);
      assert.equal((await s.api.post(issues(), { name: 'Undated', date: null })).body.date, null);
    });

    it('refuses a date that is not one, or names no real day, with 400 on /date', async () => {
      const issue = (await s.api.post(issues(), { name: 'Target', date: '2026-01-01' })).body;
      for (const date of BAD_DATES) {
        const problem = expectError(await s.api.post(issues(), { name: 'Bad', date }), 400, 'validation_failed');
        assert.equal(problem.details[0]?.path, '/date', String(date));
        expectError(await s.api.put(`${issues()}/${issue.id}`, { date }), 400, 'validation_failed');
      }
      assert.equal((await s.api.get(`${issues()}/${issue.id}`)).body.date, '2026-01-01 00:00:00');
    });

    it('updates only what the body names: a name alone keeps the date, a null date clears it', async () => {
      const issue = (await s.api.post(issues(), { name: 'Autumn', date: '2026-09-01' })).body;
      const url = `${issues()}/${issue.id}`;
      const renamed = await s.api.put(url, { name: 'Fall' });
      assert.equal(renamed.status, 200);
      assert.equal(renamed.body.name, 'Fall');
      assert.equal(renamed.body.date, '2026-09-01 00:00:00');
      const moved = await s.api.put(url, { date: '2026-10-01' });
      assert.equal(moved.body.name, 'Fall');
      assert.equal(moved.body.date, '2026-10-01 00:00:00');
      const cleared = await s.api.put(url, { date: null });
      assert.equal(cleared.status, 200);
      assert.equal(cleared.body.date, null);
    });

    it("lists a publication's issues newest first", async () => {
      const ids = (await s.api.get(issues())).body.map((row: { id: number }) => row.id);
      assert.ok(ids.length > 1);
      assert.deepEqual(
        ids,
        [...ids].sort((a: number, b: number) => b - a),
      );
    });
  });
}
