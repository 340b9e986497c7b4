import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createPublication, DIALECTS, startApp, type TestApp } from '../helpers/app.js';
import { appRoutes } from '../helpers/routes.js';
import { expectPage, expectRedirect, PASSWORD, type PageClient, pageClient, signIn, signUp, uniqueEmail } from './helpers.js';

/** Everything stored, table by table (on either database): a refused form must leave it as it was. */
async function snapshot(t: TestApp): Promise<string> {
  // On PostgreSQL, the tables of this app's schema only: the database holds other tests' schemas (and the bench's).
  const schema =
    t.storage.dialect === 'postgres' ? (await sql<{ name: string }>`select current_schema() as name`.execute(t.storage.db)).rows[0]!.name : undefined;
  const tables = (await t.storage.db.introspection.getTables())
    .filter((table) => schema === undefined || table.schema === schema)
    .map((table) => table.name)
    .sort();
  const rows: Record<string, unknown[]> = {};
  for (const name of tables) rows[name] = (await sql.raw(`select * from "${name}" order by 1`).execute(t.storage.db)).rows;
  return JSON.stringify(rows);
}

/** A 400 page saying which field holds the NUL (the generic refusal), or the form again with the field's error. */
function expectRefused(page: string, field: string): void {
  const named = page.includes(`${field} must not contain the NUL character`);
  const atField = new RegExp(`id="field-${field}-error">Must not contain control characters<`).test(page);
  assert.ok(named || atField, `the page names ${field}: ${page.slice(0, 1500)}`);
}

for (const dialect of DIALECTS) {
  describe(`a NUL character in a dashboard form (${dialect})`, () => {
    let t: TestApp;
    let owner: PageClient;
    let ownerEmail: string;
    let appId: string;
    before(async () => {
      t = await startApp(dialect);
      owner = pageClient(t.app);
      ownerEmail = (await signUp(owner)).email;
      const user = await t.storage.db.selectFrom('users').select(['account_id']).where('email', '=', ownerEmail).executeTakeFirstOrThrow();
      appId = (await createPublication(t.storage, user.account_id)).app_id;
    });
    after(() => t.close());

    it('sign-in and sign-up: a 400 page naming the email, nothing stored, and the same form without it works', async () => {
      const visitor = pageClient(t.app);
      await visitor.get('/sign-in');
      let before = await snapshot(t);
      // (Each post with the token of a fresh form: the error page has none.)
      for (const email of ['\u0000', `a\u0000${ownerEmail}`, `${ownerEmail}\u0000`]) {
        await visitor.get('/sign-in');
        expectRefused(expectPage(await visitor.post('/sign-in', { email, password: PASSWORD }), 400), 'email');
      }
      await visitor.get('/sign-in');
      expectRefused(expectPage(await visitor.post('/sign-in', { email: ownerEmail, password: `x\u0000y` }), 400), 'password');
      assert.equal(await snapshot(t), before, 'no failed attempt is counted, no session opened');
      await signIn(visitor, ownerEmail);

      const newcomer = pageClient(t.app);
      await newcomer.get('/sign-up');
      before = await snapshot(t);
      const email = uniqueEmail('nul');
      expectRefused(
        expectPage(
          await newcomer.post('/sign-up', { name: 'Acme', email: `x\u0000${email}`, password: PASSWORD, password_confirmation: PASSWORD }),
          400,
        ),
        'email',
      );
      await newcomer.get('/sign-up');
      expectRefused(
        expectPage(await newcomer.post('/sign-up', { name: 'Ac\u0000me', email, password: PASSWORD, password_confirmation: PASSWORD }), 400),
        'name',
      );
      assert.equal(await snapshot(t), before, 'no account made');
      await signUp(newcomer, email);
    });

    it("an API key's name: a 400 page naming it, no key made", async () => {
      await owner.get('/settings/api');
      const before = await snapshot(t);
      expectRefused(expectPage(await owner.post('/settings/api/keys', { name: 'ci\u0000' }), 400), 'name');
      assert.equal(await snapshot(t), before);
      await owner.get('/settings/api');
      expectPage(await owner.post('/settings/api/keys', { name: 'ci' }), 201);
    });

    it("a client's email (creating one, or giving one a role): a 400 page naming it, nothing stored", async () => {
      await owner.get(`/publications/${appId}/clients`);
      const before = await snapshot(t);
      const client = { firstname: 'Ada', lastname: 'Lovelace', password: 'a client password', access_level: 'editor' };
      expectRefused(expectPage(await owner.post(`/publications/${appId}/clients`, { ...client, email: `ada\u0000@example.com` }), 400), 'email');
      expectRefused(
        expectPage(await owner.post(`/publications/${appId}/clients`, { ...client, email: 'ada@example.com', firstname: 'A\u0000da' }), 400),
        'firstname',
      );
      expectRefused(
        expectPage(await owner.post(`/publications/${appId}/clients/add`, { email: `ada\u0000@example.com`, access_level: 'editor' }), 400),
        'email',
      );
      assert.equal(await snapshot(t), before);
      await owner.get(`/publications/${appId}/clients`);
      expectRedirect(await owner.post(`/publications/${appId}/clients`, { ...client, email: 'ada@example.com' }), /clients\?notice=/);
    });

    it('every dashboard form refuses a NUL in any field, before anything changes', async () => {
      const routes = appRoutes(t.app, 'POST').filter((path) => !path.startsWith('/api/') && !path.endsWith('*'));
      assert.ok(routes.length >= 19, routes.join(', '));
      const fields = [
        'name',
        'email',
        'password',
        'current_password',
        'new_password',
        'url',
        'role',
        'firstName',
        'lastName',
        'subject',
        'body',
        'title',
      ];
      // A template of the account's, so that its editor (which checks its fields itself) reaches them.
      await owner.get('/templates/new');
      const created = await owner.post('/templates', { name: 'Intro', subject: '', body: 'Hi {{firstName}}' });
      expectRedirect(created, /^\/templates\/[0-9a-f-]{36}\?/);
      const templateId = /\/templates\/([0-9a-f-]{36})/.exec(created.location!)![1]!;
      await owner.get('/settings/api');
      const before = await snapshot(t);
      for (const route of routes) {
        const path = route
          .replace(':app_id', appId)
          .replace(':id', route.startsWith('/templates/') ? templateId : '1')
          .replace(':deliveryId', '1');
        for (const field of fields) {
          const form = Object.fromEntries(fields.map((name) => [name, name === field ? 'a\u0000b' : 'ok']));
          const response = await owner.post(path, form);
          assert.equal(response.status, 400, `${path} with a NUL in ${field}: ${response.status} ${response.body.slice(0, 300)}`);
        }
        // The name of a field, too.
        assert.equal((await owner.post(path, { 'na\u0000me': 'x' })).status, 400, `${path} with a NUL in a field's name`);
      }
      assert.equal(await snapshot(t), before);
    });
  });
}
