// The Clients API: the seven endpoints' success paths, the envelope, ordering, filters, input rules, roles,
// deletion and tenancy. Who may do what, "become" and the audit log are in clients-access.test.ts.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { AccountQueries } from '../../src/accounts/queries.js';
import { nowIso } from '../../src/time.js';
import { client, createOwner, createPublication, DIALECTS, expectError, type Owner } from '../helpers/app.js';
import {
  CLIENT_FIELDS,
  CLIENTS,
  type ClientView,
  PASSWORD,
  ROLE_FIELDS,
  clientBody,
  createClient,
  expectStatus,
  seedClient,
  uniqueEmail,
} from '../helpers/clients.js';
import { type Api, PORTAL, TIMESTAMP, useTenants } from '../helpers/portal.js';

const ORDER_FIELDS = ['id', 'email', 'firstname', 'lastname', 'created_at', 'updated_at', 'last_seen_at', 'sign_in_count'] as const;

function md5(text: string): string {
  return createHash('md5').update(text).digest('hex');
}

function assertNoPassword(raw: string, ...passwords: string[]): void {
  assert.ok(!/password/i.test(raw), `a password field in ${raw.slice(0, 300)}`);
  for (const password of [PASSWORD, ...passwords]) assert.ok(!raw.includes(password), 'the password in a response');
}

for (const dialect of DIALECTS) {
  describe(`clients (${dialect})`, () => {
    const s = useTenants(dialect);
    let secondPublicationId: number;
    before(async () => {
      const publications = (await s.api.get(`${PORTAL}/publications`)).body as { id: number; app_id: string }[];
      secondPublicationId = publications.find((publication) => publication.app_id === s.secondAppId)!.id;
    });

    it('creates a client (201) with every field of the spec, and reads it back', async () => {
      const email = uniqueEmail('Grace.Hopper+');
      const response = await s.api.post(`${CLIENTS}/`, {
        email: `  ${email.toUpperCase()} `,
        firstname: ' Grace ',
        lastname: 'Hopper',
        password: PASSWORD,
        roles: [{ publication_id: s.publicationId, access_level: 'author' }],
      });
      expectStatus(response, 201);
      const created = response.body as ClientView;
      assert.deepEqual(Object.keys(created).sort(), CLIENT_FIELDS);
      assert.equal(typeof created.id, 'number');
      assert.equal(created.email, email.toLowerCase(), 'emails are stored trimmed and lower-cased');
      assert.equal(created.firstname, 'Grace');
      assert.equal(created.lastname, 'Hopper');
      assert.match(created.created_at, TIMESTAMP);
      assert.match(created.updated_at, TIMESTAMP);
      assert.equal(created.last_seen_at, null);
      assert.equal(created.sign_in_count, 0);
      assert.equal(created.gravatar_url, `//www.gravatar.com/avatar/${md5(email.toLowerCase())}`);
      assert.equal(created.roles.length, 1);
      const [role] = created.roles;
      assert.deepEqual(Object.keys(role!).sort(), ROLE_FIELDS);
      assert.equal(role!.user_id, created.id);
      assert.equal(role!.publication_id, s.publicationId);
      assert.equal(role!.access_level, 'author');
      assert.match(role!.created_at, TIMESTAMP);
      assert.match(role!.updated_at, TIMESTAMP);
      assertNoPassword(response.raw);

      const read = await s.api.get(`${CLIENTS}/${created.id}`);
      expectStatus(read, 200);
      assert.deepEqual(read.body, created);
      assertNoPassword(read.raw);

      const stored = await s.t.storage.db.selectFrom('users').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
      assert.equal(stored.kind, 'client');
      assert.equal(stored.account_id, s.owner.accountId);
      assert.ok(stored.password_hash?.startsWith('$argon2id$'), 'the password is stored as an argon2id hash');
    });

    it('serves the collection at /clients/ and /clients alike', async () => {
      const created = (await s.api.post(CLIENTS, clientBody())).body as ClientView;
      assert.equal(typeof created.id, 'number');
      for (const path of [CLIENTS, `${CLIENTS}/`]) {
        const list = await s.api.get(`${path}?per_page=100`);
        expectStatus(list, 200);
        assert.ok(list.body.records.some((record: ClientView) => record.id === created.id));
        assertNoPassword(list.raw);
      }
    });

    it("shows a client's last_seen_at once its key is used", async () => {
      const seeded = await seedClient(s.t.storage, s.owner.accountId, [[s.publicationId, 'viewer']]);
      assert.equal((await s.api.get(`${CLIENTS}/${seeded.userId}`)).body.last_seen_at, null);
      expectStatus(await client(s.t.app, seeded.apiKey).get(`${PORTAL}/publications`), 200);
      assert.match((await s.api.get(`${CLIENTS}/${seeded.userId}`)).body.last_seen_at, TIMESTAMP);
    });

    it("leaves a client's last_seen_at and sign_in_count alone while someone becomes it (an impersonation is not its activity)", async () => {
      const seeded = await seedClient(s.t.storage, s.owner.accountId, [[s.publicationId, 'editor']]);
      const become = await s.api.get(`${CLIENTS}/${seeded.userId}/become`);
      expectStatus(become, 200);
      const asClient = client(s.t.app, become.body.api_key);
      expectStatus(await asClient.get(`${PORTAL}/publications`), 200);
      expectStatus(await asClient.get(`${CLIENTS}/${seeded.userId}`), 403);
      const seen = (await s.api.get(`${CLIENTS}/${seeded.userId}`)).body;
      assert.equal(seen.last_seen_at, null, 'the become key was used, the client was not seen');
      assert.equal(seen.sign_in_count, 0);
      // The become key itself is marked used (the owner's audit of keys still sees it).
      const key = await s.t.storage.db
        .selectFrom('api_keys')
        .select('last_used_at')
        .where('user_id', '=', seeded.userId)
        .where('impersonator_id', 'is not', null)
        .executeTakeFirstOrThrow();
      assert.match(String(key.last_used_at), /^\d{4}-/);
    });

    describe('pages, ordering and filters', () => {
      let owner: Owner;
      let api: Api;
      let clients: ClientView[];
      let publicationId: number;

      before(async () => {
        owner = await createOwner(s.t.storage);
        api = client(s.t.app, owner.apiKey);
        publicationId = (await createPublication(s.t.storage, owner.accountId)).id;
        const people = [
          { letter: 'c', firstname: 'Carol', lastname: 'stone', signIns: 3, seen: '2026-01-03T10:00:00.000Z', created: '2025-03-01T00:00:00.000Z' },
          { letter: 'a', firstname: 'Alice', lastname: 'wood', signIns: 10, seen: null, created: '2025-01-01T00:00:00.000Z' },
          { letter: 'e', firstname: 'Eve', lastname: 'ash', signIns: 0, seen: '2026-01-01T10:00:00.000Z', created: '2025-05-01T00:00:00.000Z' },
          { letter: 'b', firstname: 'Bob', lastname: 'pine', signIns: 7, seen: '2026-01-02T10:00:00.000Z', created: '2025-02-01T00:00:00.000Z' },
          { letter: 'd', firstname: 'Dave', lastname: 'oak', signIns: 1, seen: null, created: '2025-04-01T00:00:00.000Z' },
        ];
        for (const [index, person] of people.entries()) {
          const created = await createClient(api, {
            email: `${person.letter}${uniqueEmail('x')}`,
            firstname: person.firstname,
            lastname: person.lastname,
            roles: index % 2 === 0 ? [{ publication_id: publicationId, access_level: 'viewer' }] : [],
          });
          await s.t.storage.db
            .updateTable('users')
            .set({
              sign_in_count: person.signIns,
              last_seen_at: person.seen,
              created_at: person.created,
              updated_at: person.created.replace('2025', '2024'),
            })
            .where('id', '=', created.id)
            .execute();
        }
        clients = (await api.get(`${CLIENTS}/page/1?per_page=100`)).body.records;
        assert.equal(clients.length, 5);
      });

      it('answers the list with the envelope {total, page, per_page, pages, records}, newest id first', async () => {
        const list = await api.get(`${CLIENTS}/`);
        expectStatus(list, 200);
        assert.deepEqual(Object.keys(list.body).sort(), ['page', 'pages', 'per_page', 'records', 'total']);
        assert.equal(list.body.total, 5);
        assert.equal(list.body.page, 1);
        assert.equal(list.body.per_page, 20);
        assert.equal(list.body.pages, 1);
        const ids = list.body.records.map((record: ClientView) => record.id);
        assert.deepEqual(
          ids,
          [...ids].sort((a, b) => b - a),
        );
        const small = await api.get(`${CLIENTS}?per_page=2&order_dir=asc`);
        assert.deepEqual([small.body.total, small.body.per_page, small.body.pages, small.body.records.length], [5, 2, 3, 2]);
      });

      it('pages through the clients with per_page', async () => {
        const seen: number[] = [];
        for (let page = 1; page <= 3; page += 1) {
          const response = await api.get(`${CLIENTS}/page/${page}?per_page=2&order_by=id&order_dir=asc`);
          expectStatus(response, 200);
          assert.deepEqual([response.body.total, response.body.page, response.body.per_page, response.body.pages], [5, page, 2, 3]);
          seen.push(...response.body.records.map((record: ClientView) => record.id));
        }
        assert.deepEqual(
          seen,
          clients.map((record) => record.id).sort((a, b) => a - b),
        );
        const beyond = await api.get(`${CLIENTS}/page/4?per_page=2`);
        expectStatus(beyond, 200);
        assert.deepEqual(beyond.body.records, []);
        assert.equal(beyond.body.total, 5);
      });

      it('orders by every whitelisted field, both ways (nulls last)', async () => {
        for (const field of ORDER_FIELDS) {
          for (const direction of ['asc', 'desc'] as const) {
            const response = await api.get(`${CLIENTS}/page/1?order_by=${field}&order_dir=${direction}`);
            expectStatus(response, 200);
            const sign = direction === 'asc' ? 1 : -1;
            const expected = [...clients]
              .sort((a, b) => {
                const [x, y] = [a[field], b[field]];
                if (x !== y) {
                  if (x === null) return 1;
                  if (y === null) return -1;
                  return (x < y ? -1 : 1) * sign;
                }
                return (a.id - b.id) * sign;
              })
              .map((record) => record.id);
            assert.deepEqual(
              response.body.records.map((record: ClientView) => record.id),
              expected,
              `${field} ${direction}`,
            );
          }
        }
      });

      it('filters by text in the first name, last name or email, case-insensitively', async () => {
        const names = async (query: string) =>
          ((await api.get(`${CLIENTS}/page/1?order_by=firstname&order_dir=asc&${query}`)).body.records as ClientView[]).map(
            (record) => record.firstname,
          );
        assert.deepEqual(await names('filter=CAROL'), ['Carol']);
        assert.deepEqual(await names('filter=OO'), ['Alice']);
        assert.deepEqual(await names('filter=vE'), ['Dave', 'Eve']);
        assert.deepEqual(await names(`filter=${encodeURIComponent(clients.find((record) => record.firstname === 'Eve')!.email.toUpperCase())}`), [
          'Eve',
        ]);
        assert.deepEqual(await names('filter=nobody'), []);
        const response = await api.get(`${CLIENTS}/?filter=carol`);
        assert.equal(response.body.total, 1);
      });

      it('treats LIKE wildcards in the filter as plain characters', async () => {
        const percent = await createClient(api, { firstname: 'Per%cent', lastname: 'under_score' });
        try {
          const ids = async (filter: string) =>
            ((await api.get(`${CLIENTS}/page/1?filter=${encodeURIComponent(filter)}`)).body.records as ClientView[]).map((record) => record.id);
          assert.deepEqual(await ids('%'), [percent.id]);
          assert.deepEqual(await ids('r_s'), [percent.id]);
          assert.deepEqual(await ids('_'), [percent.id]);
          assert.deepEqual(await ids('\\'), []);
          assert.deepEqual(await ids('a%e'), []);
        } finally {
          expectStatus(await api.delete(`${CLIENTS}/${percent.id}`), 204);
        }
      });

      it('filters by publication_id: the clients holding a role on it', async () => {
        const response = await api.get(`${CLIENTS}/page/1?publication_id=${publicationId}&order_by=firstname&order_dir=asc`);
        expectStatus(response, 200);
        assert.deepEqual(
          response.body.records.map((record: ClientView) => record.firstname),
          ['Carol', 'Dave', 'Eve'],
        );
        assert.equal(response.body.total, 3);
        const both = await api.get(`${CLIENTS}/?publication_id=${publicationId}&filter=carol`);
        assert.deepEqual(
          both.body.records.map((record: ClientView) => record.firstname),
          ['Carol'],
        );
        // Another account's publication matches none of this account's clients.
        const other = await api.get(`${CLIENTS}/?publication_id=${s.publicationId}`);
        assert.deepEqual([other.body.total, other.body.records], [0, []]);
      });

      it('refuses bad paging, ordering and filter parameters with 400', async () => {
        for (const query of [
          'per_page=0',
          'per_page=101',
          'per_page=x',
          'order_by=password_hash',
          'order_by=kind',
          'order_dir=up',
          `filter=${'x'.repeat(201)}`,
          'publication_id=0',
          'publication_id=abc',
        ]) {
          expectError(await api.get(`${CLIENTS}/page/1?${query}`), 400, 'validation_failed');
          expectError(await api.get(`${CLIENTS}/?${query}`), 400, 'validation_failed');
        }
        for (const page of ['0', '-1', 'x', '1.5']) expectError(await api.get(`${CLIENTS}/page/${page}`), 400, 'validation_failed');
      });
    });

    describe('create rules', () => {
      it('needs email, firstname, lastname and password', async () => {
        for (const field of ['email', 'firstname', 'lastname', 'password']) {
          const body = clientBody();
          delete body[field];
          const problem = expectError(await s.api.post(`${CLIENTS}/`, body), 400, 'validation_failed');
          assert.deepEqual(problem.details[0], { path: `/${field}`, message: 'is required' });
        }
      });

      it('refuses blank, too long or non-string names', async () => {
        for (const field of ['firstname', 'lastname']) {
          for (const value of ['', '   ', 'x'.repeat(101), 42, null]) {
            const problem = expectError(await s.api.post(`${CLIENTS}/`, clientBody({ [field]: value })), 400, 'validation_failed');
            assert.equal(problem.details[0]?.path, `/${field}`);
          }
        }
      });

      it('refuses an invalid email', async () => {
        for (const email of ['not-an-email', 'a@b', '@example.com', 'a b@example.com', 42]) {
          const problem = expectError(await s.api.post(`${CLIENTS}/`, clientBody({ email })), 400, 'validation_failed');
          assert.equal(problem.details[0]?.path, '/email');
        }
      });

      it('refuses an email already used anywhere in the service, whatever its case (409)', async () => {
        const existing = await createClient(s.api);
        expectError(await s.api.post(`${CLIENTS}/`, clientBody({ email: existing.email })), 409, 'conflict');
        expectError(await s.api.post(`${CLIENTS}/`, clientBody({ email: ` ${existing.email.toUpperCase()}` })), 409, 'conflict');
        const ownerEmail = (await s.t.storage.db.selectFrom('users').select('email').where('id', '=', s.owner.userId).executeTakeFirstOrThrow())
          .email;
        expectError(await s.api.post(`${CLIENTS}/`, clientBody({ email: ownerEmail.toUpperCase() })), 409, 'conflict');
        // Another account's users count too.
        const strangerEmail = (await s.t.storage.db.selectFrom('users').select('email').where('id', '=', s.stranger.userId).executeTakeFirstOrThrow())
          .email;
        expectError(await s.api.post(`${CLIENTS}/`, clientBody({ email: strangerEmail })), 409, 'conflict');
      });

      it('applies the password policy: at least 10 characters, at most 1024, not the email', async () => {
        const email = uniqueEmail();
        for (const password of ['short', '123456789', 'x'.repeat(1025), email, ` ${email.toUpperCase()} `, 42]) {
          const problem = expectError(await s.api.post(`${CLIENTS}/`, clientBody({ email, password })), 400, 'validation_failed');
          assert.equal(problem.details[0]?.path, '/password');
        }
        expectStatus(await s.api.post(`${CLIENTS}/`, clientBody({ email, password: '0123456789' })), 201);
      });

      it("checks roles: known access levels, each publication once, the account's own publications only", async () => {
        const cases: [unknown, string][] = [
          [[{ publication_id: s.publicationId, access_level: 'owner' }], '/roles/0/access_level'],
          [[{ publication_id: s.publicationId }], '/roles/0/access_level'],
          [[{ access_level: 'viewer' }], '/roles/0/publication_id'],
          [[{ publication_id: 'x', access_level: 'viewer' }], '/roles/0/publication_id'],
          [
            [
              { publication_id: s.publicationId, access_level: 'viewer' },
              { publication_id: s.publicationId, access_level: 'editor' },
            ],
            '/roles/1/publication_id',
          ],
          [
            [
              { publication_id: s.publicationId, access_level: 'viewer' },
              { publication_id: 999999, access_level: 'editor' },
            ],
            '/roles/1/publication_id',
          ],
          ['viewer', '/roles'],
        ];
        for (const [roles, path] of cases) {
          const problem = expectError(await s.api.post(`${CLIENTS}/`, clientBody({ roles })), 400, 'validation_failed');
          assert.equal(problem.details[0]?.path, path, JSON.stringify(roles));
        }
        const strangerPublication = (await client(s.t.app, s.stranger.apiKey).get(`${PORTAL}/publications`)).body[0].id;
        const email = uniqueEmail();
        const problem = expectError(
          await s.api.post(`${CLIENTS}/`, clientBody({ email, roles: [{ publication_id: strangerPublication, access_level: 'viewer' }] })),
          400,
          'validation_failed',
        );
        assert.equal(problem.details[0]?.path, '/roles/0/publication_id');
        assert.equal(
          await s.t.storage.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst(),
          undefined,
          'nothing was created',
        );
      });
    });

    describe('update', () => {
      it('changes only the fields sent and returns the client (200)', async () => {
        const created = await createClient(s.api);
        await s.t.storage.db.updateTable('users').set({ updated_at: '2020-01-01T00:00:00.000Z' }).where('id', '=', created.id).execute();
        const response = await s.api.put(`${CLIENTS}/${created.id}`, { firstname: ' Augusta ', email: 'ignored@example.com' });
        expectStatus(response, 200);
        assert.equal(response.body.firstname, 'Augusta');
        assert.equal(response.body.lastname, created.lastname);
        assert.equal(response.body.email, created.email, 'the email is not part of the update body');
        assert.notEqual(response.body.updated_at, '2020-01-01 00:00:00');
        assert.deepEqual(response.body, { ...created, firstname: 'Augusta', updated_at: response.body.updated_at });
        assert.deepEqual((await s.api.get(`${CLIENTS}/${created.id}`)).body, response.body);
        assertNoPassword(response.raw);
        const lastname = await s.api.put(`${CLIENTS}/${created.id}`, { lastname: 'King' });
        assert.deepEqual([lastname.body.firstname, lastname.body.lastname], ['Augusta', 'King']);
      });

      it('changes the password only with a matching password_confirmation', async () => {
        const created = await createClient(s.api);
        const hashOf = async () =>
          (await s.t.storage.db.selectFrom('users').select('password_hash').where('id', '=', created.id).executeTakeFirstOrThrow()).password_hash;
        const before = await hashOf();
        const url = `${CLIENTS}/${created.id}`;
        const newPassword = 'another long secret';
        let problem = expectError(await s.api.put(url, { password: newPassword }), 400, 'validation_failed');
        assert.equal(problem.details[0]?.path, '/password_confirmation');
        problem = expectError(
          await s.api.put(url, { password: newPassword, password_confirmation: 'another long secreT' }),
          400,
          'validation_failed',
        );
        assert.equal(problem.details[0]?.path, '/password_confirmation');
        problem = expectError(await s.api.put(url, { password_confirmation: newPassword }), 400, 'validation_failed');
        assert.equal(problem.details[0]?.path, '/password');
        problem = expectError(await s.api.put(url, { password: 'short', password_confirmation: 'short' }), 400, 'validation_failed');
        assert.equal(problem.details[0]?.path, '/password');
        problem = expectError(await s.api.put(url, { password: created.email, password_confirmation: created.email }), 400, 'validation_failed');
        assert.equal(problem.details[0]?.path, '/password');
        assert.equal(await hashOf(), before, 'no refused update changed the password');

        const response = await s.api.put(url, { password: newPassword, password_confirmation: newPassword, firstname: 'Pat' });
        expectStatus(response, 200);
        assertNoPassword(response.raw, newPassword);
        const after = await hashOf();
        assert.notEqual(after, before);
        assert.ok(after?.startsWith('$argon2id$'));
        assert.ok(!after?.includes(newPassword));
      });

      it("replaces all of the client's roles when roles are sent, keeping unchanged roles as they were", async () => {
        const created = await createClient(s.api, { roles: [{ publication_id: s.publicationId, access_level: 'viewer' }] });
        const kept = created.roles[0]!;
        const url = `${CLIENTS}/${created.id}`;
        let response = await s.api.put(url, {
          roles: [
            { publication_id: secondPublicationId, access_level: 'editor' },
            { publication_id: s.publicationId, access_level: 'viewer' },
          ],
        });
        expectStatus(response, 200);
        assert.deepEqual(
          response.body.roles.map((role: { publication_id: number; access_level: string }) => [role.publication_id, role.access_level]),
          [
            [s.publicationId, 'viewer'],
            [secondPublicationId, 'editor'],
          ],
        );
        assert.deepEqual(response.body.roles[0], kept, 'an unchanged role keeps its id and dates');

        response = await s.api.put(url, { roles: [{ publication_id: s.publicationId, access_level: 'admin' }] });
        expectStatus(response, 200);
        assert.deepEqual(
          response.body.roles.map((role: { publication_id: number; access_level: string }) => [role.publication_id, role.access_level]),
          [[s.publicationId, 'admin']],
        );

        response = await s.api.put(url, { firstname: 'Only a name' });
        assert.equal(response.body.roles.length, 1, 'roles stay when not sent');

        response = await s.api.put(url, { roles: [] });
        assert.deepEqual(response.body.roles, []);
      });

      it('refuses bad roles with 400 and changes nothing', async () => {
        const created = await createClient(s.api, { roles: [{ publication_id: s.publicationId, access_level: 'viewer' }] });
        const strangerPublication = (await client(s.t.app, s.stranger.apiKey).get(`${PORTAL}/publications`)).body[0].id;
        const url = `${CLIENTS}/${created.id}`;
        for (const [roles, path] of [
          [[{ publication_id: strangerPublication, access_level: 'viewer' }], '/roles/0/publication_id'],
          [
            [
              { publication_id: s.publicationId, access_level: 'viewer' },
              { publication_id: s.publicationId, access_level: 'viewer' },
            ],
            '/roles/1/publication_id',
          ],
          [[{ publication_id: s.publicationId, access_level: 'superuser' }], '/roles/0/access_level'],
        ] as const) {
          const problem = expectError(await s.api.put(url, { firstname: 'Changed', roles }), 400, 'validation_failed');
          assert.equal(problem.details[0]?.path, path);
        }
        assert.deepEqual((await s.api.get(url)).body, created);
      });

      it('answers 404 for unknown clients and for users that are not clients', async () => {
        expectError(await s.api.put(`${CLIENTS}/999999`, { firstname: 'X' }), 404, 'not_found');
        expectError(await s.api.put(`${CLIENTS}/${s.owner.userId}`, { firstname: 'X' }), 404, 'not_found');
        expectError(await s.api.get(`${CLIENTS}/${s.owner.userId}`), 404, 'not_found');
        expectError(await s.api.delete(`${CLIENTS}/${s.owner.userId}`), 404, 'not_found');
        expectError(await s.api.get(`${CLIENTS}/${s.owner.userId}/become`), 404, 'not_found');
        for (const id of ['abc', '0', '-1', '1.5', '99999999999']) {
          expectError(await s.api.get(`${CLIENTS}/${id}`), 400, 'validation_failed');
          expectError(await s.api.put(`${CLIENTS}/${id}`, { firstname: 'X' }), 400, 'validation_failed');
          expectError(await s.api.delete(`${CLIENTS}/${id}`), 400, 'validation_failed');
          expectError(await s.api.get(`${CLIENTS}/${id}/become`), 400, 'validation_failed');
        }
      });
    });

    describe('delete', () => {
      it('deletes (204, empty), then answers 404', async () => {
        const created = await createClient(s.api, { roles: [{ publication_id: s.publicationId, access_level: 'editor' }] });
        const url = `${CLIENTS}/${created.id}`;
        const response = await s.api.delete(url);
        assert.equal(response.status, 204);
        assert.equal(response.raw, '');
        expectError(await s.api.get(url), 404, 'not_found');
        expectError(await s.api.put(url, { firstname: 'X' }), 404, 'not_found');
        expectError(await s.api.delete(url), 404, 'not_found');
        expectError(await s.api.get(`${url}/become`), 404, 'not_found');
        assert.ok(!(await s.api.get(`${CLIENTS}/?per_page=100`)).body.records.some((record: ClientView) => record.id === created.id));
        const roles = await s.t.storage.db.selectFrom('roles').select('id').where('user_id', '=', created.id).execute();
        assert.deepEqual(roles, []);
      });

      it('stops every key of the client at once and keeps the articles it wrote, without an author', async () => {
        const seeded = await seedClient(s.t.storage, s.owner.accountId, [[s.publicationId, 'author']]);
        const theirs = client(s.t.app, seeded.apiKey);
        const article = await theirs.post(`${PORTAL}/articles/${s.appId}`, { title: 'Written by a client' });
        expectStatus(article, 201);
        assert.equal(article.body.author_id, seeded.userId);
        const become = await s.api.get(`${CLIENTS}/${seeded.userId}/become`);
        expectStatus(become, 200);
        const session = await new AccountQueries(s.t.storage.db).insertKey({ userId: seeded.userId, name: 'session', kind: 'session' }, nowIso());
        for (const key of [seeded.apiKey, become.body.api_key, session]) {
          expectStatus(await client(s.t.app, key).get(`${PORTAL}/publications`), 200);
        }

        expectStatus(await s.api.delete(`${CLIENTS}/${seeded.userId}`), 204);
        for (const key of [seeded.apiKey, become.body.api_key, session]) {
          expectError(await client(s.t.app, key).get(`${PORTAL}/publications`), 401, 'unauthorized');
        }
        const kept = await s.api.get(`${PORTAL}/articles/${s.appId}/${article.body.id}`);
        expectStatus(kept, 200);
        assert.equal(kept.body.author_id, null);
        assert.equal(kept.body.title, 'Written by a client');
      });
    });

    describe('tenancy', () => {
      it("answers 404 to another account's key on every endpoint, lists none of the account's clients, and changes nothing", async () => {
        const created = await createClient(s.api, { roles: [{ publication_id: s.publicationId, access_level: 'viewer' }] });
        const url = `${CLIENTS}/${created.id}`;
        for (const response of [
          await s.strangerApi.get(url),
          await s.strangerApi.put(url, { firstname: 'Stolen' }),
          await s.strangerApi.put(url, { roles: [] }),
          await s.strangerApi.delete(url),
          await s.strangerApi.get(`${url}/become`),
        ]) {
          expectError(response, 404, 'not_found');
        }
        for (const path of [`${CLIENTS}/`, CLIENTS, `${CLIENTS}/page/1`, `${CLIENTS}/?publication_id=${s.publicationId}`]) {
          const list = await s.strangerApi.get(path);
          expectStatus(list, 200);
          assert.ok(!list.body.records.some((record: ClientView) => record.id === created.id));
        }
        assert.deepEqual((await s.api.get(url)).body, created);
      });

      it('answers 401 without a key or with a bad one', async () => {
        for (const api of [client(s.t.app), client(s.t.app, 'mh_live_nope')]) {
          expectError(await api.get(`${CLIENTS}/`), 401, 'unauthorized');
          expectError(await api.get(`${CLIENTS}/page/1`), 401, 'unauthorized');
          expectError(await api.post(`${CLIENTS}/`, clientBody()), 401, 'unauthorized');
          expectError(await api.get(`${CLIENTS}/1`), 401, 'unauthorized');
          expectError(await api.put(`${CLIENTS}/1`, {}), 401, 'unauthorized');
          expectError(await api.delete(`${CLIENTS}/1`), 401, 'unauthorized');
          expectError(await api.get(`${CLIENTS}/1/become`), 401, 'unauthorized');
          expectError(await api.get(`${PORTAL}/audit`), 401, 'unauthorized');
        }
      });
    });

    it('documents every clients and audit route in the OpenAPI document', async () => {
      const document = (await client(s.t.app).get('/openapi.json')).body;
      for (const [path, methods] of [
        ['/api/portal/v1/clients/', ['get', 'post']],
        ['/api/portal/v1/clients/page/{page}', ['get']],
        ['/api/portal/v1/clients/{id}', ['get', 'put', 'delete']],
        ['/api/portal/v1/clients/{id}/become', ['get']],
        ['/api/portal/v1/audit', ['get']],
      ] as const) {
        for (const method of methods) assert.ok(document.paths[path]?.[method], `${method} ${path}`);
      }
      assert.deepEqual(Object.keys(document.components.schemas.Client.properties).sort(), CLIENT_FIELDS);
    });
  });
}
