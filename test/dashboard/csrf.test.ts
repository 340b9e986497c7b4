import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createPublication, DIALECTS, startApp, type TestApp } from '../helpers/app.js';
import { appRoutes } from '../helpers/routes.js';
import { expectPage, expectRedirect, PASSWORD, pageClient, signIn, signUp } from './helpers.js';

/** Everything stored, table by table: a state-changing request that was refused must leave it as it was. */
async function snapshot(t: TestApp): Promise<string> {
  const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name`.execute(
    t.storage.db,
  );
  const rows: Record<string, unknown[]> = {};
  for (const { name } of tables.rows) rows[name] = (await sql.raw(`select * from "${name}"`).execute(t.storage.db)).rows;
  return JSON.stringify(rows);
}

describe('CSRF protection on every dashboard form', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp(DIALECTS[0]!);
  });
  after(async () => t.close());

  it('refuses each state-changing dashboard route without a valid token (403), and nothing changes', async () => {
    const visitor = pageClient(t.app);
    const { email } = await signUp(visitor);
    const user = await t.storage.db.selectFrom('users').select(['id', 'account_id']).where('email', '=', email).executeTakeFirstOrThrow();
    const { app_id: appId } = await createPublication(t.storage, user.account_id);
    const routes = appRoutes(t.app, 'POST').filter((path) => !path.startsWith('/api/') && !path.endsWith('*'));
    // The forms the dashboard has today; a new one is covered by the same hook, and must be added here.
    assert.deepEqual(routes.sort(), [
      '/leads',
      '/leads/batches',
      '/leads/batches/preview',
      '/publications/:app_id/clients',
      '/publications/:app_id/clients/:id/role',
      '/publications/:app_id/clients/add',
      '/publications/:app_id/feeds',
      '/publications/:app_id/feeds/:id',
      '/publications/:app_id/feeds/:id/delete',
      '/publications/:app_id/feeds/:id/synchronize',
      '/settings/api/keys',
      '/settings/api/keys/:id/revoke',
      '/settings/password',
      '/settings/sender',
      '/sign-in',
      '/sign-out',
      '/sign-up',
      '/templates',
      '/templates/:id',
      '/templates/:id/default',
      '/templates/:id/delete',
      '/webhooks',
      '/webhooks/:id/delete',
      '/webhooks/:id/deliveries/:deliveryId/retry',
      '/webhooks/:id/disable',
      '/webhooks/:id/enable',
      '/webhooks/:id/rotate',
      '/webhooks/:id/test',
    ]);
    const form = {
      name: 'x',
      email: `${email}.other`,
      password: 'another long password',
      current_password: PASSWORD,
      new_password: 'another long password',
      url: 'https://blog.example/feed',
      role: 'admin',
      firstName: 'Ada',
      lastName: 'Lovelace',
      subject: 'Hi',
      body: 'Hi {{firstName}}',
      events: 'job.completed',
    };
    await visitor.get('/settings/api');
    const before = await snapshot(t);
    for (const route of routes) {
      // Ids of the right shape (a malformed one is a 404 before anything else), of nothing that exists.
      const path = route
        .replace(':app_id', appId)
        .replace(':id', route.startsWith('/templates/') ? randomUUID() : '1')
        .replace(':deliveryId', '1');
      for (const csrf of [undefined, 'x'.repeat(43)]) {
        const response = await visitor.postRaw(path, csrf === undefined ? form : { ...form, _csrf: csrf });
        assert.equal(response.status, 403, `${path} with ${csrf ? 'a wrong' : 'no'} token`);
        assert.match(response.body, /did not come from this site/);
      }
    }
    assert.equal(await snapshot(t), before);
    // Still signed in, with the same password.
    expectPage(await visitor.get('/settings/api'), 200);
    const again = pageClient(t.app);
    await signIn(again, email);
    expectRedirect(await again.get('/'), '/publications');
  });
});
