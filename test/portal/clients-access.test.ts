// Who may manage clients (the clients column of the role table, cell by cell), "become" and its limits, and the
// audit log.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ClientAccessLevel } from '../../src/portal/permissions.js';
import { client, createOwner, createPublication, DIALECTS, expectError, type Owner, type Response, startApp, type TestApp } from '../helpers/app.js';
import {
  AUDIT,
  CLIENTS,
  type ClientView,
  PASSWORD,
  auditRows,
  clientBody,
  createClient,
  expectStatus,
  seedClient,
  type SeededClient,
} from '../helpers/clients.js';
import { type Api, PORTAL, TIMESTAMP } from '../helpers/portal.js';

type Roles = [publicationId: number, level: ClientAccessLevel][];

function levels(view: ClientView): [number, string][] {
  return view.roles.map((role) => [role.publication_id, role.access_level]);
}

/** Every clients endpoint (and the audit log) on one target client, as one caller. */
function everyEndpoint(api: Api, targetId: number): [string, () => Promise<Response>][] {
  return [
    ['GET /clients/', () => api.get(`${CLIENTS}/`)],
    ['GET /clients', () => api.get(CLIENTS)],
    ['GET /clients/page/1', () => api.get(`${CLIENTS}/page/1`)],
    ['GET /clients/:id', () => api.get(`${CLIENTS}/${targetId}`)],
    ['POST /clients/', () => api.post(`${CLIENTS}/`, clientBody())],
    ['PUT /clients/:id', () => api.put(`${CLIENTS}/${targetId}`, { firstname: 'Changed' })],
    ['DELETE /clients/:id', () => api.delete(`${CLIENTS}/${targetId}`)],
    ['GET /clients/:id/become', () => api.get(`${CLIENTS}/${targetId}/become`)],
    ['GET /audit', () => api.get(AUDIT)],
  ];
}

/** `YYYY-MM-DD HH:MM:SS` (UTC) as milliseconds. */
function portalTime(text: string): number {
  return Date.parse(`${text.replace(' ', 'T')}Z`);
}

for (const dialect of DIALECTS) {
  describe(`clients: who may do what, become and the audit log (${dialect})`, () => {
    let t: TestApp;
    let owner: Owner;
    let api: Api;
    let pubA: { id: number; app_id: string };
    let pubB: { id: number; app_id: string };
    let adminA: SeededClient;
    let adminApi: Api;
    let adminB: SeededClient;

    const seed = (roles: Roles) => seedClient(t.storage, owner.accountId, roles);

    before(async () => {
      t = await startApp(dialect);
      owner = await createOwner(t.storage);
      api = client(t.app, owner.apiKey);
      pubA = await createPublication(t.storage, owner.accountId);
      pubB = await createPublication(t.storage, owner.accountId);
      adminA = await seed([[pubA.id, 'admin']]);
      adminApi = client(t.app, adminA.apiKey);
      adminB = await seed([[pubB.id, 'admin']]);
    });
    after(() => t.close());

    describe('the clients column of the role table', () => {
      for (const level of ['editor', 'author', 'viewer'] as const) {
        it(`${level}: 403 on every clients endpoint and on the audit log, and nothing changes`, async () => {
          const caller = await seed([
            [pubA.id, level],
            [pubB.id, level],
          ]);
          const target = await seed([[pubA.id, 'viewer']]);
          const before = (await api.get(`${CLIENTS}/${target.userId}`)).body;
          for (const [name, send] of everyEndpoint(client(t.app, caller.apiKey), target.userId)) {
            const response = await send();
            assert.equal(response.status, 403, `${level} ${name}: ${response.status} ${response.raw.slice(0, 200)}`);
            expectError(response, 403, 'forbidden');
          }
          assert.deepEqual((await api.get(`${CLIENTS}/${target.userId}`)).body, before);
          // Their own record is no exception.
          expectError(await client(t.app, caller.apiKey).get(`${CLIENTS}/${caller.userId}`), 403, 'forbidden');
        });
      }

      it('a client without any role: 403 on every endpoint', async () => {
        const caller = await seed([]);
        const target = await seed([]);
        for (const [name, send] of everyEndpoint(client(t.app, caller.apiKey), target.userId)) {
          assert.equal((await send()).status, 403, name);
        }
      });

      it('owner: everything within the account, admins included', async () => {
        const admin = await createClient(api, { roles: [{ publication_id: pubA.id, access_level: 'admin' }] });
        assert.deepEqual(levels(admin), [[pubA.id, 'admin']]);
        expectStatus(await api.get(`${CLIENTS}/${admin.id}`), 200);
        const updated = await api.put(`${CLIENTS}/${admin.id}`, {
          firstname: 'Still admin',
          password: 'a brand new password',
          password_confirmation: 'a brand new password',
          roles: [
            { publication_id: pubA.id, access_level: 'admin' },
            { publication_id: pubB.id, access_level: 'admin' },
          ],
        });
        expectStatus(updated, 200);
        assert.deepEqual(levels(updated.body), [
          [pubA.id, 'admin'],
          [pubB.id, 'admin'],
        ]);
        expectStatus(await api.get(`${CLIENTS}/${admin.id}/become`), 200);
        expectStatus(await api.get(`${CLIENTS}/page/1`), 200);
        expectStatus(await api.get(AUDIT), 200);
        expectStatus(await api.delete(`${CLIENTS}/${admin.id}`), 204);
      });

      it('admin: lists, pages and reads only the clients it manages; every other client is 404 to it on every endpoint', async () => {
        const managed = await seed([[pubA.id, 'viewer']]);
        const alsoManaged = await seed([[pubA.id, 'editor']]);
        // Not the clients it could have made: a role on B (alone or beside one on A), an admin (of B, of A, itself),
        // a client without any role (the owner's alone: an admin given its password would inherit whatever the
        // owner grants it later).
        const onlyB = await seed([[pubB.id, 'viewer']]);
        const aAndB = await seed([
          [pubA.id, 'viewer'],
          [pubB.id, 'viewer'],
        ]);
        const otherAdminOfA = await seed([[pubA.id, 'admin']]);
        const noRoles = await seed([]);
        const out = [onlyB, aAndB, adminB, otherAdminOfA, adminA, noRoles];

        for (const path of [`${CLIENTS}/`, CLIENTS, `${CLIENTS}/page/1?per_page=100`, `${CLIENTS}/page/1?per_page=100&publication_id=${pubA.id}`]) {
          const list = await adminApi.get(path);
          expectStatus(list, 200);
          const ids = (list.body.records as ClientView[]).map((record) => record.id);
          assert.equal(list.body.total, ids.length, path);
          for (const target of [managed, alsoManaged]) assert.ok(ids.includes(target.userId), `${path} lists ${target.email}`);
          for (const target of out) assert.ok(!ids.includes(target.userId), `${path} does not list ${target.email}`);
          // Every client listed is one it manages.
          for (const record of list.body.records as ClientView[]) {
            assert.ok(
              record.roles.length > 0 && record.roles.every((role) => role.publication_id === pubA.id && role.access_level !== 'admin'),
              JSON.stringify(record.roles),
            );
          }
        }
        assert.equal((await adminApi.get(`${CLIENTS}/page/1?publication_id=${pubB.id}`)).body.total, 0);
        expectStatus(await adminApi.get(`${CLIENTS}/${managed.userId}`), 200);

        for (const target of out) {
          const before = (await api.get(`${CLIENTS}/${target.userId}`)).body as ClientView;
          const url = `${CLIENTS}/${target.userId}`;
          for (const [name, response] of [
            ['get', await adminApi.get(url)],
            ['update', await adminApi.put(url, { firstname: 'Changed' })],
            ['roles', await adminApi.put(url, { roles: [] })],
            ['password', await adminApi.put(url, { password: 'a new long password', password_confirmation: 'a new long password' })],
            ['delete', await adminApi.delete(url)],
            ['become', await adminApi.get(`${url}/become`)],
          ] as const) {
            assert.equal(response.status, 404, `${name} ${target.email}: ${response.status} ${response.raw.slice(0, 200)}`);
            expectError(response, 404, 'not_found');
          }
          assert.deepEqual((await api.get(url)).body, before, 'nothing changed');
          const keys = await t.storage.db
            .selectFrom('api_keys')
            .select('id')
            .where('user_id', '=', target.userId)
            .where('kind', '=', 'impersonation')
            .execute();
          assert.deepEqual(keys, [], 'no become key was made');
        }
        // The owner still manages every one of them.
        for (const target of out) expectStatus(await api.get(`${CLIENTS}/${target.userId}`), 200);
        expectStatus(
          await api.put(`${CLIENTS}/${noRoles.userId}`, { password: 'a new long password', password_confirmation: 'a new long password' }),
          200,
        );
        expectStatus(await api.get(`${CLIENTS}/${noRoles.userId}/become`), 200);
      });

      it('admin: creates clients with roles on the publications it administers, below admin', async () => {
        for (const level of ['editor', 'author', 'viewer'] as const) {
          const created = await createClient(adminApi, { roles: [{ publication_id: pubA.id, access_level: level }] });
          assert.deepEqual(levels(created), [[pubA.id, level]]);
        }
        // Not without roles: such a client is the owner's alone.
        const body = clientBody();
        expectError(await adminApi.post(`${CLIENTS}/`, body), 403, 'forbidden');
        expectError(await adminApi.post(`${CLIENTS}/`, { ...body, roles: [] }), 403, 'forbidden');
        assert.equal(await t.storage.db.selectFrom('users').select('id').where('email', '=', String(body.email)).executeTakeFirst(), undefined);
      });

      it('admin: may not create an admin, nor grant roles where it is not admin (403), and creates nothing then', async () => {
        for (const roles of [
          [{ publication_id: pubA.id, access_level: 'admin' }],
          [{ publication_id: pubB.id, access_level: 'viewer' }],
          [
            { publication_id: pubA.id, access_level: 'viewer' },
            { publication_id: pubB.id, access_level: 'viewer' },
          ],
        ]) {
          const body = clientBody({ roles });
          expectError(await adminApi.post(`${CLIENTS}/`, body), 403, 'forbidden');
          const stored = await t.storage.db.selectFrom('users').select('id').where('email', '=', String(body.email)).executeTakeFirst();
          assert.equal(stored, undefined);
        }
      });

      it('admin: updates a client within its publications: names, password and roles', async () => {
        const target = await createClient(api, { roles: [{ publication_id: pubA.id, access_level: 'viewer' }] });
        const url = `${CLIENTS}/${target.id}`;
        let response = await adminApi.put(url, {
          firstname: 'Renamed',
          password: 'a new long password',
          password_confirmation: 'a new long password',
        });
        expectStatus(response, 200);
        assert.equal(response.body.firstname, 'Renamed');
        response = await adminApi.put(url, { roles: [{ publication_id: pubA.id, access_level: 'editor' }] });
        expectStatus(response, 200);
        assert.deepEqual(levels(response.body), [[pubA.id, 'editor']]);
        expectError(await adminApi.put(url, { roles: [{ publication_id: pubA.id, access_level: 'admin' }] }), 403, 'forbidden');
        expectError(
          await adminApi.put(url, {
            roles: [
              { publication_id: pubA.id, access_level: 'editor' },
              { publication_id: pubB.id, access_level: 'viewer' },
            ],
          }),
          403,
          'forbidden',
        );
        assert.deepEqual(levels((await api.get(url)).body), [[pubA.id, 'editor']]);
      });

      it("admin: takes a client's last role away (200, answered with the client), which puts it out of its reach", async () => {
        const target = await createClient(api, { roles: [{ publication_id: pubA.id, access_level: 'viewer' }] });
        const url = `${CLIENTS}/${target.id}`;
        const response = await adminApi.put(url, { roles: [] });
        expectStatus(response, 200);
        assert.deepEqual(response.body.roles, []);
        expectError(await adminApi.get(url), 404, 'not_found');
        expectError(await adminApi.put(url, { roles: [{ publication_id: pubA.id, access_level: 'viewer' }] }), 404, 'not_found');
        expectStatus(await api.get(url), 200);
      });

      it('admin: deletes a client within its publications (204)', async () => {
        const target = await createClient(api, { roles: [{ publication_id: pubA.id, access_level: 'author' }] });
        expectStatus(await adminApi.delete(`${CLIENTS}/${target.id}`), 204);
        expectError(await api.get(`${CLIENTS}/${target.id}`), 404, 'not_found');
      });

      it('admin: 403 on the audit log', async () => {
        expectError(await adminApi.get(AUDIT), 403, 'forbidden');
      });

      it("another account's admin: 404 on this account's clients", async () => {
        const stranger = await createOwner(t.storage);
        const strangerPub = await createPublication(t.storage, stranger.accountId);
        const strangerAdmin = await seedClient(t.storage, stranger.accountId, [[strangerPub.id, 'admin']]);
        const theirs = client(t.app, strangerAdmin.apiKey);
        const target = await seed([]);
        const url = `${CLIENTS}/${target.userId}`;
        expectError(await theirs.get(url), 404, 'not_found');
        expectError(await theirs.put(url, { firstname: 'X' }), 404, 'not_found');
        expectError(await theirs.delete(url), 404, 'not_found');
        expectError(await theirs.get(`${url}/become`), 404, 'not_found');
        expectError(
          await theirs.post(`${CLIENTS}/`, clientBody({ roles: [{ publication_id: pubA.id, access_level: 'viewer' }] })),
          400,
          'validation_failed',
        );
        const theirClient = await seedClient(t.storage, stranger.accountId, [[strangerPub.id, 'viewer']]);
        const list = (await theirs.get(`${CLIENTS}/`)).body.records as ClientView[];
        assert.deepEqual(
          list.map((record) => record.id),
          [theirClient.userId],
          "only its own account's clients",
        );
      });
    });

    describe('become', () => {
      it('gives the owner a one-hour key that acts as the client, marked as an impersonation', async () => {
        const target = await createClient(api, {
          roles: [
            { publication_id: pubA.id, access_level: 'author' },
            { publication_id: pubB.id, access_level: 'viewer' },
          ],
        });
        const started = Date.now();
        const response = await api.get(`${CLIENTS}/${target.id}/become`);
        expectStatus(response, 200);
        assert.deepEqual(Object.keys(response.body).sort(), ['api_key', 'client', 'expires_at']);
        assert.deepEqual(response.body.client, target);
        assert.ok(!/password/i.test(response.raw));
        assert.match(response.body.expires_at, TIMESTAMP);
        const expires = portalTime(response.body.expires_at);
        assert.ok(Math.abs(expires - (started + 3600_000)) < 120_000, `expires_at ${response.body.expires_at} is about an hour ahead`);

        const key = response.body.api_key as string;
        const row = await t.storage.db.selectFrom('api_keys').selectAll().where('user_id', '=', target.id).executeTakeFirstOrThrow();
        assert.equal(row.kind, 'impersonation');
        assert.equal(row.impersonator_id, owner.userId);
        assert.ok(row.expires_at !== null && Math.abs(Date.parse(row.expires_at) - (started + 3600_000)) < 120_000);
        assert.ok(!row.key_hash.includes(key));

        const as = client(t.app, key);
        const publications = await as.get(`${PORTAL}/publications`);
        expectStatus(publications, 200);
        assert.deepEqual(
          publications.body.map((publication: { id: number; access_level: string }) => [publication.id, publication.access_level]),
          [
            [pubA.id, 'author'],
            [pubB.id, 'viewer'],
          ],
        );
        const article = await as.post(`${PORTAL}/articles/${pubA.app_id}`, { title: 'As the client' });
        expectStatus(article, 201);
        assert.equal(article.body.author_id, target.id);
        expectError(await as.post(`${PORTAL}/articles/${pubB.app_id}`, { title: 'A viewer may not' }), 403, 'forbidden');
        // The client is no admin: the key manages no clients.
        expectError(await as.get(`${CLIENTS}/`), 403, 'forbidden');
      });

      it('lets an admin become a client it manages; any other client is 404', async () => {
        const within = await createClient(api, { roles: [{ publication_id: pubA.id, access_level: 'editor' }] });
        const response = await adminApi.get(`${CLIENTS}/${within.id}/become`);
        expectStatus(response, 200);
        const row = await t.storage.db.selectFrom('api_keys').selectAll().where('user_id', '=', within.id).executeTakeFirstOrThrow();
        assert.equal(row.impersonator_id, adminA.userId);
        const noRoles = await createClient(api);
        expectError(await adminApi.get(`${CLIENTS}/${noRoles.id}/become`), 404, 'not_found');

        const elsewhere = await createClient(api, {
          roles: [
            { publication_id: pubA.id, access_level: 'viewer' },
            { publication_id: pubB.id, access_level: 'viewer' },
          ],
        });
        expectError(await adminApi.get(`${CLIENTS}/${elsewhere.id}/become`), 404, 'not_found');
        const onlyElsewhere = await createClient(api, { roles: [{ publication_id: pubB.id, access_level: 'viewer' }] });
        expectError(await adminApi.get(`${CLIENTS}/${onlyElsewhere.id}/become`), 404, 'not_found');
        expectError(await adminApi.get(`${CLIENTS}/${adminB.userId}/become`), 404, 'not_found');
        for (const id of [noRoles.id, elsewhere.id, onlyElsewhere.id, adminB.userId]) {
          const keys = await t.storage.db.selectFrom('api_keys').select('id').where('user_id', '=', id).where('kind', '=', 'impersonation').execute();
          assert.deepEqual(keys, [], 'no key was made');
        }
      });

      it('refuses to become anyone with a key from become (no chains), even as an admin', async () => {
        const target = await createClient(api, { roles: [{ publication_id: pubA.id, access_level: 'viewer' }] });
        const asAdmin = client(t.app, (await api.get(`${CLIENTS}/${adminA.userId}/become`)).body.api_key);
        // The owner acting as an admin manages clients as that admin...
        expectStatus(await asAdmin.get(`${CLIENTS}/${target.id}`), 200);
        expectStatus(await asAdmin.put(`${CLIENTS}/${target.id}`, { firstname: 'Via become' }), 200);
        // ...but becomes nobody.
        expectError(await asAdmin.get(`${CLIENTS}/${target.id}/become`), 403, 'forbidden');
        const asClient = client(t.app, (await adminApi.get(`${CLIENTS}/${target.id}/become`)).body.api_key);
        expectError(await asClient.get(`${CLIENTS}/${target.id}/become`), 403, 'forbidden');
      });

      it('stops working when it expires (401)', async () => {
        const target = await createClient(api, { roles: [{ publication_id: pubA.id, access_level: 'viewer' }] });
        const key = (await api.get(`${CLIENTS}/${target.id}/become`)).body.api_key as string;
        expectStatus(await client(t.app, key).get(`${PORTAL}/publications`), 200);
        await t.storage.db
          .updateTable('api_keys')
          .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
          .where('user_id', '=', target.id)
          .where('kind', '=', 'impersonation')
          .execute();
        expectError(await client(t.app, key).get(`${PORTAL}/publications`), 401, 'unauthorized');
      });

      it('stops working at once when the client is deleted (401)', async () => {
        const target = await createClient(api, { roles: [{ publication_id: pubA.id, access_level: 'viewer' }] });
        const key = (await adminApi.get(`${CLIENTS}/${target.id}/become`)).body.api_key as string;
        expectStatus(await client(t.app, key).get(`${PORTAL}/publications`), 200);
        expectStatus(await api.delete(`${CLIENTS}/${target.id}`), 204);
        expectError(await client(t.app, key).get(`${PORTAL}/publications`), 401, 'unauthorized');
      });
    });

    describe('the audit log', () => {
      let auditOwner: Owner;
      let ownerApi: Api;
      let pub: { id: number; app_id: string };

      before(async () => {
        auditOwner = await createOwner(t.storage);
        ownerApi = client(t.app, auditOwner.apiKey);
        pub = await createPublication(t.storage, auditOwner.accountId);
      });

      it('records create, roles, update, become and delete with actor, target, IP and details, never a password', async () => {
        const newPassword = 'the second password';
        const created = await createClient(ownerApi, { firstname: 'Audited', roles: [{ publication_id: pub.id, access_level: 'viewer' }] });
        expectStatus(
          await ownerApi.put(`${CLIENTS}/${created.id}`, { firstname: 'Audited again', password: newPassword, password_confirmation: newPassword }),
          200,
        );
        expectStatus(await ownerApi.put(`${CLIENTS}/${created.id}`, { roles: [{ publication_id: pub.id, access_level: 'editor' }] }), 200);
        // Sending the same roles and names again changes nothing and records nothing.
        expectStatus(
          await ownerApi.put(`${CLIENTS}/${created.id}`, { firstname: 'Audited again', roles: [{ publication_id: pub.id, access_level: 'editor' }] }),
          200,
        );
        const become = await ownerApi.get(`${CLIENTS}/${created.id}/become`);
        expectStatus(become, 200);
        expectStatus(await ownerApi.delete(`${CLIENTS}/${created.id}`), 204);

        const rows = await auditRows(t.storage, auditOwner.accountId);
        assert.deepEqual(
          rows.map((row) => row.action),
          ['client.create', 'client.roles', 'client.update', 'client.roles', 'client.become', 'client.delete'],
        );
        for (const row of rows) {
          assert.equal(row.actor_id, auditOwner.userId);
          assert.equal(row.impersonator_id, null);
          assert.equal(row.target_user_id, created.id);
          assert.equal(row.ip, '127.0.0.1');
          assert.ok(!Number.isNaN(Date.parse(row.created_at)));
        }
        const [create, firstRoles, update, secondRoles, becomeRow, remove] = rows;
        assert.deepEqual(create!.details, { email: created.email, firstname: 'Audited', lastname: created.lastname });
        assert.deepEqual(firstRoles!.details, { old: [], new: [{ publication_id: pub.id, access_level: 'viewer' }] });
        assert.deepEqual(update!.details, { firstname: { from: 'Audited', to: 'Audited again' }, password: true });
        assert.deepEqual(secondRoles!.details, {
          old: [{ publication_id: pub.id, access_level: 'viewer' }],
          new: [{ publication_id: pub.id, access_level: 'editor' }],
        });
        assert.equal(
          portalTime((becomeRow!.details as { expires_at: string }).expires_at.slice(0, 19).replace('T', ' ')),
          portalTime(become.body.expires_at),
        );
        assert.deepEqual(remove!.details, {
          email: created.email,
          firstname: 'Audited again',
          lastname: created.lastname,
          roles: [{ publication_id: pub.id, access_level: 'editor' }],
        });
        const everything = JSON.stringify(rows);
        assert.ok(!everything.includes(PASSWORD) && !everything.includes(newPassword), 'no password in the audit log');
        assert.ok(!everything.includes(become.body.api_key), 'no key in the audit log');
      });

      it('records who was behind an impersonation key', async () => {
        const admin = await seedClient(t.storage, auditOwner.accountId, [[pub.id, 'admin']]);
        const asAdmin = client(t.app, (await ownerApi.get(`${CLIENTS}/${admin.userId}/become`)).body.api_key);
        const created = await createClient(asAdmin, { roles: [{ publication_id: pub.id, access_level: 'author' }] });
        const rows = (await auditRows(t.storage, auditOwner.accountId)).filter((row) => row.target_user_id === created.id);
        assert.deepEqual(
          rows.map((row) => [row.action, row.actor_id, row.impersonator_id]),
          [
            ['client.create', admin.userId, auditOwner.userId],
            ['client.roles', admin.userId, auditOwner.userId],
          ],
        );
      });

      it('serves the log to the owner, newest first, in the page envelope', async () => {
        const total = (await auditRows(t.storage, auditOwner.accountId)).length;
        const response = await ownerApi.get(AUDIT);
        expectStatus(response, 200);
        assert.deepEqual(Object.keys(response.body).sort(), ['page', 'pages', 'per_page', 'records', 'total']);
        assert.deepEqual([response.body.total, response.body.page, response.body.per_page], [total, 1, 20]);
        const records = response.body.records as { id: number; action: string; details: unknown; created_at: string }[];
        assert.deepEqual(Object.keys(records[0]!).sort(), [
          'action',
          'actor_id',
          'created_at',
          'details',
          'id',
          'impersonator_id',
          'ip',
          'target_user_id',
        ]);
        assert.deepEqual(
          records.map((record) => record.id),
          [...records.map((record) => record.id)].sort((a, b) => b - a),
        );
        assert.equal(records[0]!.action, 'client.roles');
        assert.equal(typeof records[0]!.details, 'object');
        assert.match(records[0]!.created_at, TIMESTAMP);
        assert.ok(!response.raw.includes(PASSWORD));

        const first = await ownerApi.get(`${AUDIT}?per_page=2`);
        const second = await ownerApi.get(`${AUDIT}?per_page=2&page=2`);
        assert.deepEqual([first.body.per_page, first.body.pages, second.body.page], [2, Math.ceil(total / 2), 2]);
        assert.deepEqual(
          [...first.body.records, ...second.body.records].map((record: { id: number }) => record.id),
          records.slice(0, 4).map((record) => record.id),
        );
        for (const query of ['per_page=0', 'per_page=101', 'page=0', 'page=x'])
          expectError(await ownerApi.get(`${AUDIT}?${query}`), 400, 'validation_failed');
      });

      it("shows each owner only its own account's log", async () => {
        const lonely = await createOwner(t.storage);
        const response = await client(t.app, lonely.apiKey).get(AUDIT);
        expectStatus(response, 200);
        assert.deepEqual([response.body.total, response.body.records], [0, []]);
        const ours = (await api.get(`${AUDIT}?per_page=100`)).body.records as { id: number }[];
        assert.ok(ours.length > 0);
        const theirs = new Set((await auditRows(t.storage, auditOwner.accountId)).map((row) => row.id));
        assert.ok(!ours.some((record) => theirs.has(record.id)));
      });
    });
  });
}
