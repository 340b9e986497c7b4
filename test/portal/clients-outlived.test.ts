// Access that must not outlive the right behind it: a client's sessions after the owner or an admin sets its
// password, and the keys from "become" after their issuer loses the right to become that client.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ClientAccessLevel } from '../../src/portal/permissions.js';
import { client, createOwner, createPublication, DIALECTS, expectError, type Owner, startApp, type TestApp } from '../helpers/app.js';
import { CLIENTS, expectStatus } from '../helpers/clients.js';
import { type Api, PORTAL } from '../helpers/portal.js';
import { createClientUser } from '../helpers/roles.js';

const SESSIONS = `${PORTAL}/sessions`;
const OLD_PASSWORD = 'the first long password';
const NEW_PASSWORD = 'a second long password';

type Roles = [publicationId: number, level: ClientAccessLevel][];

let counter = 0;
/** An address per sign-in, so that the sign-in throttle of one test never touches another. */
const freshIp = () => `198.51.100.${++counter % 250}`;

for (const dialect of DIALECTS) {
  describe(`access that outlives the right behind it (${dialect})`, () => {
    let t: TestApp;
    let owner: Owner;
    let ownerApi: Api;
    let pubA: { id: number; app_id: string };
    let pubB: { id: number; app_id: string };

    before(async () => {
      t = await startApp(dialect);
      owner = await createOwner(t.storage);
      ownerApi = client(t.app, owner.apiKey);
      pubA = await createPublication(t.storage, owner.accountId);
      pubB = await createPublication(t.storage, owner.accountId);
    });
    after(() => t.close());

    const seed = (roles: Roles, password?: string) =>
      createClientUser(
        t.storage,
        owner.accountId,
        roles.map(([publicationId, accessLevel]) => ({ publicationId, accessLevel })),
        { password },
      );
    const signIn = async (email: string, password: string) =>
      client(t.app, undefined, { remoteAddress: freshIp() }).post(SESSIONS, { email, password });
    const works = async (key: string) => (await client(t.app, key).get(`${PORTAL}/publications`)).status;

    describe('a password set by the owner or an admin', () => {
      for (const by of ['owner', 'admin'] as const) {
        it(`${by}: ends every session of the client at once; its API keys go on, and only the new password signs in`, async () => {
          const target = await seed([[pubA.id, 'author']], OLD_PASSWORD);
          const setter = by === 'owner' ? ownerApi : client(t.app, (await seed([[pubA.id, 'admin']])).apiKey);
          const sessions: string[] = [];
          for (let i = 0; i < 2; i += 1) {
            const signedIn = await signIn(target.email, OLD_PASSWORD);
            expectStatus(signedIn, 201);
            sessions.push(signedIn.body.api_key);
          }
          for (const key of sessions) assert.equal(await works(key), 200);

          // A change without a password leaves the sessions alone.
          expectStatus(await setter.put(`${CLIENTS}/${target.userId}`, { firstname: 'Renamed' }), 200);
          for (const key of sessions) assert.equal(await works(key), 200);

          expectStatus(await setter.put(`${CLIENTS}/${target.userId}`, { password: NEW_PASSWORD, password_confirmation: NEW_PASSWORD }), 200);
          for (const key of sessions) expectError(await client(t.app, key).get(`${PORTAL}/publications`), 401, 'unauthorized');
          const revoked = await t.storage.db.selectFrom('api_keys').select(['kind', 'revoked_at']).where('user_id', '=', target.userId).execute();
          assert.ok(revoked.filter((key) => key.kind === 'session').every((key) => key.revoked_at !== null));
          assert.ok(revoked.filter((key) => key.kind === 'api').every((key) => key.revoked_at === null));
          assert.equal(await works(target.apiKey), 200, 'its API key is not tied to the password');

          expectError(await signIn(target.email, OLD_PASSWORD), 401, 'unauthorized');
          const fresh = await signIn(target.email, NEW_PASSWORD);
          expectStatus(fresh, 201);
          assert.equal(await works(fresh.body.api_key), 200);
        });
      }
    });

    describe('a key from become', () => {
      /** An admin of A, a client it manages (an author on A), and a become key the admin took for that client. */
      const issued = async () => {
        const admin = await seed([[pubA.id, 'admin']]);
        const target = await seed([[pubA.id, 'author']]);
        const become = await client(t.app, admin.apiKey).get(`${CLIENTS}/${target.userId}/become`);
        expectStatus(become, 200);
        const key = become.body.api_key as string;
        assert.equal(await works(key), 200);
        return { admin, target, key };
      };
      const setRoles = (userId: number, roles: Roles) =>
        ownerApi.put(`${CLIENTS}/${userId}`, { roles: roles.map(([publication_id, access_level]) => ({ publication_id, access_level })) });

      it('stops working at once when its issuer is demoted, and stays stopped when the issuer is made admin again', async () => {
        const { admin, key } = await issued();
        expectStatus(await setRoles(admin.userId, [[pubA.id, 'editor']]), 200);
        expectError(await client(t.app, key).get(`${PORTAL}/publications`), 401, 'unauthorized');
        expectStatus(await setRoles(admin.userId, [[pubA.id, 'admin']]), 200);
        expectError(await client(t.app, key).get(`${PORTAL}/publications`), 401, 'unauthorized');
      });

      it('stops working at once when its issuer loses the publication', async () => {
        const { admin, key } = await issued();
        expectStatus(await setRoles(admin.userId, [[pubB.id, 'admin']]), 200);
        expectError(await client(t.app, key).get(`${PORTAL}/publications`), 401, 'unauthorized');
      });

      it('stops working at once when its issuer is deleted', async () => {
        const { admin, key } = await issued();
        expectStatus(await ownerApi.delete(`${CLIENTS}/${admin.userId}`), 204);
        expectError(await client(t.app, key).get(`${PORTAL}/publications`), 401, 'unauthorized');
      });

      it("stops working at once when the client gains a role beyond the issuer's reach (and so cannot inherit it)", async () => {
        const { target, key } = await issued();
        expectStatus(
          await setRoles(target.userId, [
            [pubA.id, 'author'],
            [pubB.id, 'editor'],
          ]),
          200,
        );
        expectError(await client(t.app, key).get(`${PORTAL}/articles/${pubB.app_id}`), 401, 'unauthorized');
        const other = await issued();
        expectStatus(await setRoles(other.target.userId, [[pubA.id, 'admin']]), 200);
        expectError(await client(t.app, other.key).get(`${PORTAL}/publications`), 401, 'unauthorized');
      });

      it("stops working however the issuer's role is taken (here straight in the database), and through the dashboard's cookie too", async () => {
        const { admin, key } = await issued();
        await t.storage.db.deleteFrom('roles').where('user_id', '=', admin.userId).execute();
        expectError(await client(t.app, key).get(`${PORTAL}/publications`), 401, 'unauthorized');
        const page = await t.app.inject({ method: 'GET', url: '/publications', headers: { cookie: `mh_session=${key}` } });
        assert.equal(page.statusCode, 303, 'a become key never opened the dashboard, and does not now');
      });

      it("goes on while its issuer keeps the right; an owner's goes on whatever roles change", async () => {
        const { admin, target, key } = await issued();
        // Changes that leave the right as it was: another role for the admin, the client's level within A.
        expectStatus(
          await setRoles(admin.userId, [
            [pubA.id, 'admin'],
            [pubB.id, 'viewer'],
          ]),
          200,
        );
        expectStatus(await setRoles(target.userId, [[pubA.id, 'viewer']]), 200);
        assert.equal(await works(key), 200);

        const ownersKey = (await ownerApi.get(`${CLIENTS}/${target.userId}/become`)).body.api_key as string;
        expectStatus(
          await setRoles(target.userId, [
            [pubA.id, 'admin'],
            [pubB.id, 'editor'],
          ]),
          200,
        );
        assert.equal(await works(ownersKey), 200);
        expectError(await client(t.app, key).get(`${PORTAL}/publications`), 401, 'unauthorized');
      });

      it("is refused to a stranger account even with a matching user id layout (the issuer must be of the client's account)", async () => {
        const stranger = await createOwner(t.storage);
        const target = await seed([[pubA.id, 'viewer']]);
        const become = await ownerApi.get(`${CLIENTS}/${target.userId}/become`);
        // Move the issuer out of the account (as no API can): the key must not outlive that either.
        await t.storage.db
          .updateTable('api_keys')
          .set({ impersonator_id: stranger.userId })
          .where('user_id', '=', target.userId)
          .where('kind', '=', 'impersonation')
          .execute();
        expectError(await client(t.app, become.body.api_key).get(`${PORTAL}/publications`), 401, 'unauthorized');
      });
    });
  });
}
