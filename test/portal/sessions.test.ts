import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { FAILURE_WINDOW_MS, MAX_FAILURES_PER_EMAIL, MAX_FAILURES_PER_IP, WRONG_CREDENTIALS } from '../../src/accounts/sessions.js';
import { AccountQueries } from '../../src/accounts/queries.js';
import { AccountService } from '../../src/accounts/service.js';
import { client, createPublication, DIALECTS, expectError, type Response, startApp, type TestApp } from '../helpers/app.js';
import { PORTAL, TIMESTAMP } from '../helpers/portal.js';
import { createClientUser } from '../helpers/roles.js';

const SESSIONS = `${PORTAL}/sessions`;
const PASSWORD = 'correct horse battery staple';
const WRONG = 'not the password at all';

let counter = 0;
const freshEmail = (stem = 'user') => `${stem}${++counter}-${randomBytes(3).toString('hex')}@example.com`;
/** A documentation address (TEST-NET-3) per test, so that tests do not throttle each other. */
const freshIp = () => `203.0.113.${++counter % 250}`;

for (const dialect of DIALECTS) {
  describe(`sessions (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(dialect);
    });
    after(() => t.close());

    /** Every raw response of the test run, to check that no password ever appears in one. */
    const seen: Response[] = [];
    const from = (ip: string, apiKey?: string) => {
      const api = client(t.app, apiKey, { remoteAddress: ip });
      return {
        signIn: async (email: string, password: string) => remember(await api.post(SESSIONS, { email, password })),
        signOut: async () => remember(await api.delete(SESSIONS)),
        get: async (url: string) => remember(await api.get(url)),
      };
    };
    const remember = (response: Response) => {
      seen.push(response);
      return response;
    };
    const createOwnerWithPassword = async (email = freshEmail('owner')) => {
      const created = await new AccountService(new AccountQueries(t.storage.db)).createAccount({ email, password: PASSWORD });
      return { email, userId: created.user.id, accountId: created.account.id };
    };
    const userRow = (id: number) => t.storage.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

    after(() => {
      for (const response of seen) {
        assert.ok(!response.raw.includes(PASSWORD) && !response.raw.includes(WRONG), `a password leaked: ${response.raw}`);
      }
    });

    it('signs in (201) for a 12-hour session key that acts as the user, counting sign-ins', async () => {
      const owner = await createOwnerWithPassword();
      const publication = await createPublication(t.storage, owner.accountId);
      const before = await userRow(owner.userId);
      assert.equal(before.sign_in_count, 0);
      assert.equal(before.last_seen_at, null);

      const ip = freshIp();
      const signedIn = await from(ip).signIn(owner.email, PASSWORD);
      assert.equal(signedIn.status, 201, signedIn.raw);
      assert.deepEqual(Object.keys(signedIn.body).sort(), ['api_key', 'expires_at', 'user']);
      assert.deepEqual(signedIn.body.user, {
        id: owner.userId,
        email: owner.email,
        firstname: '',
        lastname: '',
        kind: 'owner',
        account_id: owner.accountId,
      });
      assert.match(signedIn.body.api_key, /^mh_live_[A-Za-z0-9_-]{40,}$/);
      assert.match(signedIn.body.expires_at, TIMESTAMP);
      const expiresIn = Date.parse(`${signedIn.body.expires_at.replace(' ', 'T')}Z`) - Date.now();
      assert.ok(Math.abs(expiresIn - 12 * 3_600_000) < 120_000, `expires in ${expiresIn} ms`);

      const afterFirst = await userRow(owner.userId);
      assert.equal(afterFirst.sign_in_count, 1);
      assert.ok(afterFirst.last_seen_at !== null && Math.abs(Date.parse(afterFirst.last_seen_at) - Date.now()) < 60_000);
      const key = await t.storage.db
        .selectFrom('api_keys')
        .selectAll()
        .where('user_id', '=', owner.userId)
        .where('kind', '=', 'session')
        .executeTakeFirstOrThrow();
      assert.equal(key.revoked_at, null);
      assert.ok(key.expires_at !== null);

      // The key works on the authenticated portal, as x-api-key and as a bearer token.
      const publications = await from(ip, signedIn.body.api_key).get(`${PORTAL}/publications`);
      assert.equal(publications.status, 200, publications.raw);
      assert.deepEqual(
        publications.body.map((row: { app_id: string }) => row.app_id),
        [publication.app_id],
      );
      const bearer = await client(t.app).get(`${PORTAL}/publications`, { authorization: `Bearer ${signedIn.body.api_key}` });
      assert.equal(bearer.status, 200);

      // The email is matched trimmed and case-insensitively; every sign-in is a new key.
      const second = await from(ip).signIn(`  ${owner.email.toUpperCase()} `, PASSWORD);
      assert.equal(second.status, 201, second.raw);
      assert.notEqual(second.body.api_key, signedIn.body.api_key);
      assert.equal((await userRow(owner.userId)).sign_in_count, 2);
    });

    it('signs a client in as a client, who sees only the publications it holds a role on', async () => {
      const owner = await createOwnerWithPassword();
      const held = await createPublication(t.storage, owner.accountId);
      await createPublication(t.storage, owner.accountId);
      const member = await createClientUser(t.storage, owner.accountId, [{ publicationId: held.id, accessLevel: 'editor' }], { password: PASSWORD });
      const signedIn = await from(freshIp()).signIn(member.email, PASSWORD);
      assert.equal(signedIn.status, 201, signedIn.raw);
      assert.equal(signedIn.body.user.kind, 'client');
      assert.equal(signedIn.body.user.id, member.userId);
      assert.equal(signedIn.body.user.account_id, owner.accountId);
      const publications = await from(freshIp(), signedIn.body.api_key).get(`${PORTAL}/publications`);
      assert.deepEqual(
        publications.body.map((row: { app_id: string; access_level: string }) => [row.app_id, row.access_level]),
        [[held.app_id, 'editor']],
      );
    });

    it('refuses an expired session key with 401', async () => {
      const owner = await createOwnerWithPassword();
      const signedIn = await from(freshIp()).signIn(owner.email, PASSWORD);
      assert.equal(signedIn.status, 201);
      await t.storage.db
        .updateTable('api_keys')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('user_id', '=', owner.userId)
        .where('kind', '=', 'session')
        .execute();
      expectError(await from(freshIp(), signedIn.body.api_key).get(`${PORTAL}/publications`), 401, 'unauthorized');
      expectError(await from(freshIp(), signedIn.body.api_key).signOut(), 401, 'unauthorized');
    });

    it('signs out (204): the session key is 401 at once; other keys are refused (400) and keep working', async () => {
      const owner = await createOwnerWithPassword();
      const ip = freshIp();
      const first = await from(ip).signIn(owner.email, PASSWORD);
      const second = await from(ip).signIn(owner.email, PASSWORD);
      const signedOut = await from(ip, first.body.api_key).signOut();
      assert.equal(signedOut.status, 204, signedOut.raw);
      assert.equal(signedOut.raw, '');
      expectError(await from(ip, first.body.api_key).get(`${PORTAL}/publications`), 401, 'unauthorized');
      expectError(await from(ip, first.body.api_key).signOut(), 401, 'unauthorized');
      // Only that session ends.
      assert.equal((await from(ip, second.body.api_key).get(`${PORTAL}/publications`)).status, 200);

      const apiKey = await new AccountService(new AccountQueries(t.storage.db)).createKey({ userId: owner.userId });
      const refused = expectError(await from(ip, apiKey).signOut(), 400, 'validation_failed');
      assert.match(refused.message, /session key/);
      assert.equal((await from(ip, apiKey).get(`${PORTAL}/publications`)).status, 200);

      expectError(await from(ip).signOut(), 401, 'unauthorized');
      expectError(await client(t.app, 'mh_live_not-a-real-key', { remoteAddress: ip }).delete(SESSIONS), 401, 'unauthorized');
    });

    it('answers a wrong password, an unknown email and a user without a password with the same 401', async () => {
      const owner = await createOwnerWithPassword();
      const noPassword = await createClientUser(t.storage, owner.accountId, []);
      const ip = freshIp();
      const wrongPassword = await from(ip).signIn(owner.email, WRONG);
      const unknownEmail = await from(ip).signIn(freshEmail('nobody'), WRONG);
      const malformedEmail = await from(ip).signIn('not an email', WRONG);
      const passwordless = await from(ip).signIn(noPassword.email, WRONG);
      const passwordlessEmpty = await from(ip).signIn(noPassword.email, ' ');
      for (const response of [wrongPassword, unknownEmail, malformedEmail, passwordless, passwordlessEmpty]) {
        const problem = expectError(response, 401, 'unauthorized');
        assert.equal(problem.message, WRONG_CREDENTIALS);
        assert.deepEqual(response.body, wrongPassword.body);
        assert.equal(response.headers['retry-after'], undefined);
      }
      assert.equal((await userRow(owner.userId)).sign_in_count, 0);
      assert.equal(
        (await t.storage.db.selectFrom('api_keys').select('id').where('user_id', '=', owner.userId).where('kind', '=', 'session').execute()).length,
        0,
      );
    });

    it('validates the body: email and password are required, bounded strings', async () => {
      for (const [body, path] of [
        [{ password: PASSWORD }, '/email'],
        [{ email: freshEmail() }, '/password'],
        [{ email: 42, password: PASSWORD }, '/email'],
        [{ email: freshEmail(), password: '' }, '/password'],
        [{ email: `${'x'.repeat(400)}@example.com`, password: PASSWORD }, '/email'],
        [{ email: freshEmail(), password: 'p'.repeat(1025) }, '/password'],
      ] as const) {
        const response = remember(await client(t.app, undefined, { remoteAddress: freshIp() }).post(SESSIONS, body));
        const problem = expectError(response, 400, 'validation_failed');
        assert.equal(problem.details[0]?.path, path, response.raw);
      }
    });

    it(`throttles an email after ${MAX_FAILURES_PER_EMAIL} failures (429 with Retry-After, even with the right password)`, async () => {
      const owner = await createOwnerWithPassword();
      const other = await createOwnerWithPassword();
      const ip = freshIp();
      for (let i = 0; i < MAX_FAILURES_PER_EMAIL; i += 1) expectError(await from(ip).signIn(owner.email, WRONG), 401, 'unauthorized');

      const throttled = await from(ip).signIn(owner.email, PASSWORD);
      expectError(throttled, 429, 'rate_limited');
      const retryAfter = Number(throttled.headers['retry-after']);
      assert.ok(
        Number.isInteger(retryAfter) && retryAfter > FAILURE_WINDOW_MS / 1000 - 60 && retryAfter <= FAILURE_WINDOW_MS / 1000,
        `Retry-After ${retryAfter}`,
      );
      // The email is throttled from any address; a wrong password is no longer even checked (nor counted).
      expectError(await from(freshIp()).signIn(owner.email, PASSWORD), 429, 'rate_limited');
      expectError(await from(ip).signIn(owner.email, WRONG), 429, 'rate_limited');
      assert.equal((await userRow(owner.userId)).sign_in_count, 0);

      // Another email from the same address still signs in.
      assert.equal((await from(ip).signIn(other.email, PASSWORD)).status, 201);

      // Once the failures leave the window, the right password works again and clears the email's failures.
      const past = new Date(Date.now() - FAILURE_WINDOW_MS - 1000).toISOString();
      await t.storage.db.updateTable('sign_in_failures').set({ failed_at: past }).where('scope', '=', `email:${owner.email}`).execute();
      expectError(await from(ip).signIn(owner.email, WRONG), 401, 'unauthorized');
      assert.equal((await from(ip).signIn(owner.email, PASSWORD)).status, 201);
      const left = await t.storage.db.selectFrom('sign_in_failures').select('id').where('scope', '=', `email:${owner.email}`).execute();
      assert.equal(left.length, 0);
    });

    it(`judges at most ${MAX_FAILURES_PER_EMAIL} of 150 wrong passwords for one email sent at once; the rest are 429 with Retry-After`, async () => {
      const owner = await createOwnerWithPassword();
      const responses = await Promise.all(
        Array.from({ length: 150 }, (_, index) => from(`198.18.${Math.floor(index / 200)}.${index % 200}`).signIn(owner.email, WRONG)),
      );
      const judged = responses.filter((response) => response.status === 401);
      const refused = responses.filter((response) => response.status === 429);
      assert.equal(judged.length, MAX_FAILURES_PER_EMAIL, `statuses: ${responses.map((response) => response.status).join(',')}`);
      assert.equal(refused.length, 150 - MAX_FAILURES_PER_EMAIL);
      for (const response of judged) assert.equal(expectError(response, 401, 'unauthorized').message, WRONG_CREDENTIALS);
      for (const response of refused) {
        expectError(response, 429, 'rate_limited');
        const retryAfter = Number(response.headers['retry-after']);
        assert.ok(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= FAILURE_WINDOW_MS / 1000, `Retry-After ${retryAfter}`);
      }
      const counted = await t.storage.db.selectFrom('sign_in_failures').select('id').where('scope', '=', `email:${owner.email}`).execute();
      assert.equal(counted.length, MAX_FAILURES_PER_EMAIL);
      // Even the right password is refused now, however it is sent.
      expectError(await from(freshIp()).signIn(owner.email, PASSWORD), 429, 'rate_limited');
    });

    it(`judges at most ${MAX_FAILURES_PER_IP} of 150 wrong passwords from one IP sent at once, over any emails`, async () => {
      const ip = freshIp();
      const responses = await Promise.all(Array.from({ length: 150 }, () => from(ip).signIn(freshEmail('swarm'), WRONG)));
      const statuses = responses.map((response) => response.status);
      assert.equal(statuses.filter((status) => status === 401).length, MAX_FAILURES_PER_IP, statuses.join(','));
      assert.equal(statuses.filter((status) => status === 429).length, 150 - MAX_FAILURES_PER_IP);
      for (const response of responses.filter((candidate) => candidate.status === 429)) assert.ok(Number(response.headers['retry-after']) > 0);
    });

    it('counts an attempt before judging it, but takes a successful one back: sign-ins that succeed never throttle', async () => {
      const owner = await createOwnerWithPassword();
      const ip = freshIp();
      for (let i = 0; i < MAX_FAILURES_PER_IP + 5; i += 1) assert.equal((await from(ip).signIn(owner.email, PASSWORD)).status, 201);
      const left = await t.storage.db
        .selectFrom('sign_in_failures')
        .select('id')
        .where('scope', 'in', [`email:${owner.email}`, `ip:${ip}`])
        .execute();
      assert.equal(left.length, 0);
      // Failures still count as before: the email's failures, then a success that clears them.
      for (let i = 0; i < MAX_FAILURES_PER_EMAIL - 1; i += 1) expectError(await from(ip).signIn(owner.email, WRONG), 401, 'unauthorized');
      assert.equal((await from(ip).signIn(owner.email, PASSWORD)).status, 201);
      for (let i = 0; i < MAX_FAILURES_PER_EMAIL; i += 1) expectError(await from(ip).signIn(owner.email, WRONG), 401, 'unauthorized');
      expectError(await from(ip).signIn(owner.email, PASSWORD), 429, 'rate_limited');
    });

    it('throttles an unknown email exactly like a known one (the answer does not reveal which exists)', async () => {
      const owner = await createOwnerWithPassword();
      const unknown = freshEmail('ghost');
      const ip = freshIp();
      const answers: Response[][] = [[], []];
      for (let i = 0; i <= MAX_FAILURES_PER_EMAIL; i += 1) {
        answers[0]!.push(await from(ip).signIn(owner.email, WRONG));
        answers[1]!.push(await from(ip).signIn(unknown, WRONG));
      }
      for (let i = 0; i <= MAX_FAILURES_PER_EMAIL; i += 1) {
        const [known, ghost] = [answers[0]![i]!, answers[1]![i]!];
        assert.equal(known.status, i < MAX_FAILURES_PER_EMAIL ? 401 : 429);
        assert.equal(ghost.status, known.status);
        assert.deepEqual(ghost.body, known.body);
        assert.equal(typeof ghost.headers['retry-after'], typeof known.headers['retry-after']);
      }
    });

    it(`throttles an IP after ${MAX_FAILURES_PER_IP} failures over any emails`, async () => {
      const ip = freshIp();
      const emails = Array.from({ length: MAX_FAILURES_PER_IP / (MAX_FAILURES_PER_EMAIL - 1) }, () => freshEmail('guess'));
      for (const email of emails) {
        for (let i = 0; i < MAX_FAILURES_PER_EMAIL - 1; i += 1) expectError(await from(ip).signIn(email, WRONG), 401, 'unauthorized');
      }
      const owner = await createOwnerWithPassword();
      const throttled = await from(ip).signIn(owner.email, PASSWORD);
      expectError(throttled, 429, 'rate_limited');
      assert.ok(Number(throttled.headers['retry-after']) > 0);
      assert.equal((await userRow(owner.userId)).sign_in_count, 0);
      // The same user from another address is not throttled: neither its email nor that address has failed.
      assert.equal((await from(freshIp()).signIn(owner.email, PASSWORD)).status, 201);
    });

    it('forgets failures older than the window when recording a new one', async () => {
      const old = new Date(Date.now() - FAILURE_WINDOW_MS - 60_000).toISOString();
      await t.storage.db.insertInto('sign_in_failures').values({ scope: 'email:stale@example.com', failed_at: old }).execute();
      expectError(await from(freshIp()).signIn(freshEmail(), WRONG), 401, 'unauthorized');
      const stale = await t.storage.db.selectFrom('sign_in_failures').select('id').where('failed_at', '<=', old).execute();
      assert.equal(stale.length, 0);
    });
  });
}

describe('sign-in throttling behind a reverse proxy (TRUST_PROXY)', () => {
  const failFrom = async (t: TestApp, peer: string, forwardedFor: string, times: number) => {
    for (let i = 0; i < times; i += 1) {
      const response = await client(t.app, undefined, { remoteAddress: peer }).post(
        SESSIONS,
        { email: freshEmail('guess'), password: WRONG },
        { 'x-forwarded-for': forwardedFor },
      );
      expectError(response, 401, 'unauthorized');
    }
  };
  const signInFrom = async (t: TestApp, peer: string, forwardedFor: string) => {
    const email = freshEmail('owner');
    await new AccountService(new AccountQueries(t.storage.db)).createAccount({ email, password: PASSWORD });
    return client(t.app, undefined, { remoteAddress: peer }).post(SESSIONS, { email, password: PASSWORD }, { 'x-forwarded-for': forwardedFor });
  };

  it('counts failures per client address the trusted proxy forwards', async () => {
    const t = await startApp(DIALECTS[0]!, { TRUST_PROXY: '10.0.0.0/8' });
    try {
      const proxy = '10.1.2.3';
      await failFrom(t, proxy, '198.51.100.7', MAX_FAILURES_PER_IP);
      expectError(await signInFrom(t, proxy, '198.51.100.7'), 429, 'rate_limited');
      // Another client behind the same proxy is not throttled.
      assert.equal((await signInFrom(t, proxy, '198.51.100.8')).status, 201);
      // A peer that is not the proxy cannot choose its address with the header.
      await failFrom(t, '203.0.113.99', '198.51.100.9', MAX_FAILURES_PER_IP);
      expectError(await signInFrom(t, '203.0.113.99', '198.51.100.10'), 429, 'rate_limited');
    } finally {
      await t.close();
    }
  });

  it('ignores X-Forwarded-For without TRUST_PROXY: the peer is the client', async () => {
    const t = await startApp(DIALECTS[0]!);
    try {
      await failFrom(t, '203.0.113.98', '198.51.100.11', MAX_FAILURES_PER_IP);
      expectError(await signInFrom(t, '203.0.113.98', '198.51.100.12'), 429, 'rate_limited');
    } finally {
      await t.close();
    }
  });
});
