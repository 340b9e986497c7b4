import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_FAILURES_PER_EMAIL, MAX_FAILURES_PER_IP, SIGN_UP_REFUSED } from '../../src/accounts/sessions.js';
import { STYLESHEET } from '../../src/dashboard/assets.js';
import type { Storage } from '../../src/db/connection.js';
import { client, createPublication, DIALECTS, expectError, startApp, type TestApp } from '../helpers/app.js';
import { PORTAL } from '../helpers/portal.js';
import { createClientUser } from '../helpers/roles.js';
import {
  csrfIn,
  encodeForm,
  expectPage,
  expectRedirect,
  feedServer,
  fieldError,
  ORIGIN,
  PASSWORD,
  pageClient,
  rss,
  signIn,
  signUp,
  uniqueEmail,
} from './helpers.js';

async function accountOf(storage: Storage, email: string) {
  const user = await storage.db.selectFrom('users').select(['id', 'account_id']).where('email', '=', email).executeTakeFirstOrThrow();
  return { userId: user.id, accountId: user.account_id };
}

async function keyCount(storage: Storage, userId: number): Promise<number> {
  const rows = await storage.db.selectFrom('api_keys').select('id').where('user_id', '=', userId).where('kind', '=', 'api').execute();
  return rows.length;
}

let addressCounter = 0;
/** Each test signs in from an address of its own, so that the per-IP sign-in throttle of one does not touch another. */
const nextAddress = () => `10.9.${Math.floor(++addressCounter / 250)}.${addressCounter % 250}`;

for (const dialect of DIALECTS) {
  describe(`dashboard pages (${dialect})`, () => {
    let t: TestApp;
    let blog: Awaited<ReturnType<typeof feedServer>>;
    before(async () => {
      blog = await feedServer();
      t = await startApp(dialect, { OUTBOUND_ALLOW: `127.0.0.1:${blog.port}` });
    });
    after(async () => {
      await t.close();
      await blog.close();
    });
    const browser = () => pageClient(t.app, { remoteAddress: nextAddress() });

    it('sends a signed-out visitor to sign in, and back to the page it asked for', async () => {
      const visitor = browser();
      expectRedirect(await visitor.get('/'), '/sign-in');
      expectRedirect(await visitor.get('/publications?x=1'), '/sign-in?next=%2Fpublications%3Fx%3D1');
      expectRedirect(await visitor.get('/settings/api'), '/sign-in?next=%2Fsettings%2Fapi');
      const { email } = await signUp(browser());
      const page = expectPage(await visitor.get('/sign-in?next=%2Fsettings%2Fpassword'), 200);
      assert.match(page, /<input type="hidden" name="next" value="\/settings\/password">/);
      expectRedirect(await visitor.post('/sign-in', { email, password: PASSWORD, next: '/settings/password' }), '/settings/password');
      expectRedirect(await visitor.get('/'), '/publications');
      // Another site is never a destination.
      await visitor.post('/sign-out');
      await visitor.get('/sign-in');
      expectRedirect(await visitor.post('/sign-in', { email, password: PASSWORD, next: '//evil.example/' }), '/publications');
    });

    it('signs up on the free plan with an owner, shows the first key once, and opens a session with a safe cookie', async () => {
      const visitor = browser();
      const { email, apiKey, page } = await signUp(visitor, uniqueEmail('signup'), 'Acme <Media>');
      assert.match(page, /you will not see this again/);
      assert.match(page, /Acme &lt;Media&gt;/);
      const { accountId, userId } = await accountOf(t.storage, email);
      const account = await t.storage.db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirstOrThrow();
      assert.equal(account.plan, 'free');
      assert.equal(account.name, 'Acme <Media>');
      const user = await t.storage.db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirstOrThrow();
      assert.equal(user.kind, 'owner');

      const response = await pageClient(t.app, { remoteAddress: nextAddress() }).get('/sign-up');
      assert.equal(response.status, 200);
      const fresh = browser();
      await fresh.get('/sign-up');
      const signedUp = await fresh.post('/sign-up', { email: uniqueEmail(), password: PASSWORD, password_confirmation: PASSWORD });
      const cookie = ([] as string[]).concat(signedUp.headers['set-cookie'] as string[]).find((line) => line.startsWith('mh_session='));
      assert.ok(cookie, 'a session cookie is set');
      assert.match(cookie, /; HttpOnly/);
      assert.match(cookie, /; SameSite=Lax/);
      assert.match(cookie, /; Path=\//);
      assert.match(cookie, /; Max-Age=43200/);
      assert.doesNotMatch(cookie, /Secure/, 'plain http gets no Secure flag');
      // Behind a proxy that ends TLS (and says so), the cookies are Secure.
      const proxied = browser();
      const preSession = await proxied.get('/sign-in', { 'x-forwarded-proto': 'https' });
      assert.match(String(preSession.headers['set-cookie']), /^mh_csrf=[^;]+; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
      const proxiedSignUp = await proxied.post(
        '/sign-up',
        { email: uniqueEmail(), password: PASSWORD, password_confirmation: PASSWORD },
        { 'x-forwarded-proto': 'https', origin: 'https://localhost' },
      );
      assert.equal(proxiedSignUp.status, 201);
      assert.match(String(proxiedSignUp.headers['set-cookie']), /mh_session=[^;]+; Max-Age=43200; Path=\/; HttpOnly; Secure; SameSite=Lax/);

      // The key works on the API; later pages show its prefix, never the key again.
      assert.equal((await client(t.app, apiKey).get(`${PORTAL}/publications`)).status, 200);
      const keys = expectPage(await visitor.get('/settings/api'), 200);
      assert.ok(!keys.includes(apiKey));
      assert.ok(keys.includes(`${apiKey.slice(0, 16)}…`));
      assert.doesNotMatch(keys, /you will not see this again/);
    });

    it('shows sign-up problems next to their fields', async () => {
      const visitor = browser();
      await visitor.get('/sign-up');
      let page = expectPage(await visitor.post('/sign-up', { email: 'not-an-email', password: 'short', password_confirmation: 'short' }), 400);
      assert.equal(fieldError(page, 'field-email'), 'Must be a valid email address');
      page = expectPage(await visitor.post('/sign-up', { email: uniqueEmail(), password: 'short', password_confirmation: 'short' }), 400);
      assert.equal(fieldError(page, 'field-password'), 'Must be at least 10 characters');
      assert.match(page, /aria-invalid="true"/);
      page = expectPage(await visitor.post('/sign-up', { email: uniqueEmail(), password: PASSWORD, password_confirmation: 'something else' }), 400);
      assert.equal(fieldError(page, 'field-password_confirmation'), 'Must match the password');
      const { email } = await signUp(browser());
      page = expectPage(await visitor.post('/sign-up', { email: email.toUpperCase(), password: PASSWORD, password_confirmation: PASSWORD }), 400);
      assert.ok(page.includes(SIGN_UP_REFUSED), 'a taken email gets the one answer that does not say it is taken');
      // The email typed is kept, the password is not.
      assert.match(page, new RegExp(`value="${email.toUpperCase()}"`));
      assert.doesNotMatch(page, new RegExp(PASSWORD));
    });

    it('never tells whether an email is registered: the answer is the same whoever holds it, and counts as a failed sign-in', async () => {
      const { email: taken } = await signUp(browser());
      const other = await signUp(browser());
      const address = nextAddress();
      const visitor = pageClient(t.app, { remoteAddress: address });
      await visitor.get('/sign-up');
      const answers = [];
      for (const email of [taken, other.email]) {
        const page = expectPage(
          await visitor.post('/sign-up', { email, password: 'another long password', password_confirmation: 'another long password' }),
          400,
        );
        // Nothing names the email as registered, nor tells one owner's address from another's.
        assert.doesNotMatch(page, /already exists|already registered|is taken/i);
        answers.push(page.replace(email, 'EMAIL').replace(/name="_csrf" value="[^"]+"/, ''));
      }
      assert.equal(answers[0], answers[1]);
      assert.doesNotMatch(answers[0]!, /field-email[^>]*aria-invalid/);
      // Probing is throttled like guessing: a taken email's sign-ups count against it, as wrong passwords do.
      for (let attempt = 1; attempt < MAX_FAILURES_PER_EMAIL; attempt += 1) {
        expectPage(
          await visitor.post('/sign-up', { email: taken, password: 'another long password', password_confirmation: 'another long password' }),
          400,
        );
      }
      const throttled = await visitor.post('/sign-up', {
        email: taken,
        password: 'another long password',
        password_confirmation: 'another long password',
      });
      assert.match(expectPage(throttled, 429), /Too many failed sign-ins/);
      assert.ok(Number(throttled.headers['retry-after']) > 0);
      const signInPage = await pageClient(t.app, { remoteAddress: nextAddress() });
      await signInPage.get('/sign-in');
      expectPage(await signInPage.post('/sign-in', { email: taken, password: PASSWORD }), 429);
      // A new email's sign-up with a bad password is not a guess: it is not counted.
      const fresh = pageClient(t.app, { remoteAddress: nextAddress() });
      await fresh.get('/sign-up');
      const newEmail = uniqueEmail('fresh');
      for (let attempt = 0; attempt < MAX_FAILURES_PER_EMAIL + 1; attempt += 1) {
        expectPage(await fresh.post('/sign-up', { email: newEmail, password: 'short', password_confirmation: 'short' }), 400);
      }
      await signUp(fresh, newEmail);
    });

    it('refuses a sign-up from an address past the sign-in limit (429) before creating anything', async () => {
      const address = nextAddress();
      const visitor = pageClient(t.app, { remoteAddress: address });
      await visitor.get('/sign-in');
      for (let attempt = 0; attempt < MAX_FAILURES_PER_IP; attempt += 1) {
        expectPage(await visitor.post('/sign-in', { email: uniqueEmail('guess'), password: 'wrong password!' }), 401);
      }
      await visitor.get('/sign-up');
      const email = uniqueEmail('late');
      const refused = await visitor.post('/sign-up', { email, password: PASSWORD, password_confirmation: PASSWORD });
      assert.match(expectPage(refused, 429), /Too many failed sign-ins/);
      assert.ok(Number(refused.headers['retry-after']) > 0);
      assert.equal(
        await t.storage.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst(),
        undefined,
        'no account was made',
      );
      assert.ok(
        !([] as string[]).concat((refused.headers['set-cookie'] as string[] | undefined) ?? []).some((line) => line.startsWith('mh_session=')),
      );
      // From another address the same sign-up works, and shows the first key.
      await signUp(pageClient(t.app, { remoteAddress: nextAddress() }), email);
    });

    it('signs in with one message for a wrong email or password, and throttles guessing', async () => {
      const { email } = await signUp(browser());
      const visitor = browser();
      await visitor.get('/sign-in');
      const unknown = expectPage(await visitor.post('/sign-in', { email: uniqueEmail('nobody'), password: PASSWORD }), 401);
      const wrong = expectPage(await visitor.post('/sign-in', { email, password: 'wrong password!' }), 401);
      for (const page of [unknown, wrong]) assert.match(page, /The email or password is wrong/);
      let page = expectPage(await visitor.post('/sign-in', { email: '', password: '' }), 400);
      assert.equal(fieldError(page, 'field-email'), 'Is required');
      assert.equal(fieldError(page, 'field-password'), 'Is required');
      for (let attempt = 1; attempt < MAX_FAILURES_PER_EMAIL; attempt += 1) await visitor.post('/sign-in', { email, password: 'wrong password!' });
      const throttled = await visitor.post('/sign-in', { email, password: PASSWORD });
      page = expectPage(throttled, 429);
      assert.match(page, /Too many failed sign-ins/);
      assert.ok(Number(throttled.headers['retry-after']) > 0);
    });

    it(`judges at most ${MAX_FAILURES_PER_EMAIL} wrong passwords for one email sent at once from the sign-in form; the rest are 429 pages`, async () => {
      const { email } = await signUp(browser());
      const visitors = Array.from({ length: 40 }, () => browser());
      for (const visitor of visitors) await visitor.get('/sign-in');
      const responses = await Promise.all(visitors.map((visitor) => visitor.post('/sign-in', { email, password: 'wrong password!' })));
      const statuses = responses.map((response) => response.status);
      assert.equal(statuses.filter((status) => status === 401).length, MAX_FAILURES_PER_EMAIL, statuses.join(','));
      assert.equal(statuses.filter((status) => status === 429).length, visitors.length - MAX_FAILURES_PER_EMAIL);
      for (const response of responses.filter((candidate) => candidate.status === 429)) {
        assert.match(expectPage(response, 429), /Too many failed sign-ins/);
        assert.ok(Number(response.headers['retry-after']) > 0);
      }
    });

    it('signs out: the session key stops working, and a cookie holding an API key opens nothing', async () => {
      const visitor = browser();
      const { apiKey } = await signUp(visitor);
      const sessionKey = visitor.cookies.get('mh_session')!;
      expectRedirect(await visitor.post('/sign-out'), '/sign-in?notice=signed-out');
      assert.equal(visitor.cookies.get('mh_session'), undefined, 'the cookie is cleared');
      assert.match(expectPage(await visitor.get('/sign-in?notice=signed-out'), 200), /You are signed out/);
      expectRedirect(await visitor.get('/publications', { cookie: `mh_session=${sessionKey}` }), /^\/sign-in/);
      expectError(await client(t.app, sessionKey).get(`${PORTAL}/publications`), 401, 'unauthorized');
      expectRedirect(await visitor.get('/publications', { cookie: `mh_session=${apiKey}` }), /^\/sign-in/);
      expectRedirect(await visitor.get('/publications', { cookie: 'mh_session=forged' }), /^\/sign-in/);
    });

    it('refuses a form without a token, with a wrong token, from another origin or from nowhere (403 page), and changes nothing', async () => {
      const visitor = browser();
      const { email } = await signUp(visitor);
      const { userId } = await accountOf(t.storage, email);
      const token = csrfIn(visitor.lastPage);
      const before = await keyCount(t.storage, userId);
      const attempts = [
        await visitor.postRaw('/settings/api/keys', { name: 'no token' }),
        await visitor.postRaw('/settings/api/keys', { name: 'wrong token', _csrf: 'x'.repeat(43) }),
        await visitor.postRaw('/settings/api/keys', { name: 'other origin', _csrf: token }, { origin: 'https://evil.example' }),
        await visitor.postRaw('/settings/api/keys', { name: 'null origin', _csrf: token }, { origin: 'null' }),
        await visitor.postRaw('/settings/api/keys', { name: 'other port', _csrf: token }, { origin: 'http://localhost:8080' }),
        await visitor.postRaw('/settings/api/keys', { name: 'sub-domain', _csrf: token }, { origin: 'http://evil.localhost' }),
        // Without Origin (built by hand: the client sends it with every form): another site's Referer, or none.
        await postWithout(visitor, { name: 'other referer', _csrf: token }, { referer: 'https://evil.example/settings/api' }),
        await postWithout(visitor, { name: 'nowhere', _csrf: token }, {}),
      ];
      for (const response of attempts) {
        const page = expectPage(response, 403);
        assert.match(page, /did not come from this site/);
      }
      assert.equal(await keyCount(t.storage, userId), before);
      // A token of another session is no good either.
      const other = browser();
      await signUp(other);
      expectPage(await visitor.postRaw('/settings/api/keys', { name: 'foreign token', _csrf: csrfIn(other.lastPage) }), 403);
      // The same form with its token, from this origin (Origin, or only a Referer), is accepted.
      expectPage(await visitor.postRaw('/settings/api/keys', { name: 'good', _csrf: token }), 201);
      expectPage(await postWithout(visitor, { name: 'via referer', _csrf: token }, { referer: `${ORIGIN}/settings/api` }), 201);
      // The browser's origin is https when a proxy ends TLS in front of us: the host is what must match.
      expectPage(await visitor.postRaw('/settings/api/keys', { name: 'through a proxy', _csrf: token }, { origin: 'https://localhost' }), 201);
      assert.equal(await keyCount(t.storage, userId), before + 3);
    });

    /** A form POST to the keys page with exactly these headers besides the session cookie (no Origin). */
    async function postWithout(visitor: ReturnType<typeof pageClient>, form: Record<string, string>, headers: Record<string, string>) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/settings/api/keys',
        headers: { cookie: `mh_session=${visitor.cookies.get('mh_session')}`, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        payload: encodeForm(form),
      });
      return { status: response.statusCode, headers: response.headers, body: response.body, location: undefined };
    }

    it('binds the sign-in form to a pre-session cookie (no login CSRF)', async () => {
      const { email } = await signUp(browser());
      const visitor = browser();
      expectPage(await visitor.postRaw('/sign-in', { email, password: PASSWORD }), 403);
      expectPage(await visitor.postRaw('/sign-in', { email, password: PASSWORD, _csrf: 'x'.repeat(43) }), 403);
      await visitor.get('/sign-in');
      assert.ok(visitor.cookies.get('mh_csrf'));
      expectPage(await visitor.post('/sign-in', { email, password: PASSWORD }, { origin: 'https://evil.example' }), 403);
      await visitor.get('/sign-in');
      expectRedirect(await visitor.post('/sign-in', { email, password: PASSWORD }), '/publications');
    });

    it("generates named keys shown once, lists them without their hash, and revokes only the user's own", async () => {
      const visitor = browser();
      const { email } = await signUp(visitor);
      const { userId } = await accountOf(t.storage, email);
      let page = expectPage(await visitor.post('/settings/api/keys', { name: 'CRM <import>' }), 201);
      const key = /<output id="new-key"[^>]*>([^<]+)<\/output>/.exec(page)![1]!;
      assert.match(page, /Your new API key “CRM &lt;import&gt;”/);
      assert.match(page, /you will not see this again/);
      assert.match(page, /data-copy="new-key"/);
      assert.equal((await client(t.app, key).get(`${PORTAL}/publications`)).status, 200);

      page = expectPage(await visitor.get('/settings/api'), 200);
      const stored = await t.storage.db.selectFrom('api_keys').selectAll().where('user_id', '=', userId).execute();
      for (const row of stored) assert.ok(!page.includes(row.key_hash), 'no hash in the page');
      assert.ok(!page.includes(key));
      // The session key is not listed (it is the session's own), nor any other kind.
      const session = stored.find((row) => row.kind === 'session')!;
      assert.ok(!page.includes(session.prefix));
      // Each key's row: name, prefix, when it was created and when it was last used (this one, just now).
      const created = stored.find((row) => row.name === 'CRM <import>')!;
      const minute = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
      const row = /<tr>\n<td class="title">CRM &lt;import&gt;<\/td>\n<td>(.*)<\/td>\n<td>(.*)<\/td>\n<td>(.*)<\/td>/.exec(page);
      assert.deepEqual(row?.slice(1), [`<code>${created.prefix}…</code>`, minute(created.created_at), minute(created.last_used_at!)]);
      expectPage(await visitor.post('/settings/api/keys', { name: 'Unused' }), 201);
      assert.match(
        expectPage(await visitor.get('/settings/api'), 200),
        /<td class="title">Unused<\/td>\n<td><code>[^<]+…<\/code><\/td>\n<td>[^<]+ UTC<\/td>\n<td>never<\/td>/,
      );

      expectRedirect(await visitor.post(`/settings/api/keys/${created.id}/revoke`), '/settings/api?notice=key-revoked');
      expectError(await client(t.app, key).get(`${PORTAL}/publications`), 401, 'unauthorized');
      page = expectPage(await visitor.get('/settings/api?notice=key-revoked'), 200);
      assert.match(page, /The key is revoked/);
      assert.doesNotMatch(page, /CRM &lt;import&gt;/);

      // Another user's key, the session's own key, or one revoked already: not found, and untouched.
      const stranger = browser();
      const { apiKey: strangerKey } = await signUp(stranger);
      const strangerRow = await t.storage.db
        .selectFrom('api_keys')
        .select('id')
        .where('key_hash', '=', (await import('../../src/accounts/keys.js')).hashApiKey(strangerKey))
        .executeTakeFirstOrThrow();
      await visitor.get('/settings/api');
      expectPage(await visitor.post(`/settings/api/keys/${strangerRow.id}/revoke`), 404);
      assert.equal((await client(t.app, strangerKey).get(`${PORTAL}/publications`)).status, 200);
      expectPage(await visitor.post(`/settings/api/keys/${session.id}/revoke`), 404);
      expectPage(await visitor.post(`/settings/api/keys/${created.id}/revoke`), 404);
      expectPage(await visitor.post('/settings/api/keys/abc/revoke'), 404);
    });

    it('refuses a blank or too long key name next to the field', async () => {
      const visitor = browser();
      await signUp(visitor);
      let page = expectPage(await visitor.post('/settings/api/keys', { name: '   ' }), 400);
      assert.equal(fieldError(page, 'field-name'), 'Is required');
      page = expectPage(await visitor.post('/settings/api/keys', { name: 'n'.repeat(101) }), 400);
      assert.equal(fieldError(page, 'field-name'), 'Must be at most 100 characters');
    });

    it('changes the password with the current one; other sessions end, this one and the API keys go on', async () => {
      const visitor = browser();
      const { email, apiKey } = await signUp(visitor);
      const elsewhere = browser();
      await signIn(elsewhere, email);
      await visitor.get('/settings/password');
      let page = expectPage(
        await visitor.post('/settings/password', {
          current_password: 'not my password',
          password: 'a brand new password',
          password_confirmation: 'a brand new password',
        }),
        400,
      );
      assert.equal(fieldError(page, 'field-current_password'), 'Is not your current password');
      page = expectPage(
        await visitor.post('/settings/password', { current_password: PASSWORD, password: 'short', password_confirmation: 'short' }),
        400,
      );
      assert.equal(fieldError(page, 'field-password'), 'Must be at least 10 characters');
      page = expectPage(
        await visitor.post('/settings/password', {
          current_password: PASSWORD,
          password: 'a brand new password',
          password_confirmation: 'another one entirely',
        }),
        400,
      );
      assert.equal(fieldError(page, 'field-password_confirmation'), 'Must match the new password');
      expectRedirect(
        await visitor.post('/settings/password', {
          current_password: PASSWORD,
          password: 'a brand new password',
          password_confirmation: 'a brand new password',
        }),
        '/settings/password?notice=password-changed',
      );
      assert.match(expectPage(await visitor.get('/settings/password?notice=password-changed'), 200), /Your password is changed/);
      expectRedirect(await elsewhere.get('/publications'), /^\/sign-in/);
      assert.equal((await client(t.app, apiKey).get(`${PORTAL}/publications`)).status, 200);
      const fresh = browser();
      await fresh.get('/sign-in');
      expectPage(await fresh.post('/sign-in', { email, password: PASSWORD }), 401);
      expectRedirect(await fresh.post('/sign-in', { email, password: 'a brand new password' }), '/publications');
    });

    it("lists the publications the user holds; another account's answer a 404 page; titles show as text", async () => {
      const visitor = browser();
      const { email, apiKey } = await signUp(visitor);
      const { accountId } = await accountOf(t.storage, email);
      const publication = await createPublication(t.storage, accountId);
      await client(t.app, apiKey).post(`${PORTAL}/articles/${publication.app_id}`, {
        title: '<script>alert("owned")</script>',
        info: '<img src=x onerror=alert(1)>',
      });
      let page = expectPage(await visitor.get('/publications'), 200);
      assert.match(page, new RegExp(`<a href="/publications/${publication.app_id}/articles">`));
      assert.match(page, /<td>owner<\/td>/);
      page = expectPage(await visitor.get(`/publications/${publication.app_id}/articles`), 200);
      assert.ok(page.includes('&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt;'));
      assert.ok(page.includes('&lt;img src=x onerror=alert(1)&gt;'));
      assert.ok(!page.includes('<script>alert'));
      assert.ok(!page.includes('<img src=x'));

      const stranger = browser();
      await signUp(stranger);
      for (const path of ['articles', 'feeds', 'clients']) {
        page = expectPage(await stranger.get(`/publications/${publication.app_id}/${path}`), 404);
        assert.match(page, /Publication .* was not found/);
        assert.ok(!page.includes('&lt;script&gt;'));
      }
      assert.doesNotMatch(expectPage(await stranger.get('/publications'), 200), new RegExp(publication.app_id));
      expectPage(await stranger.post(`/publications/${publication.app_id}/feeds`, { url: `${blog.base}/x.xml` }), 404);
    });

    it("searches articles with the API's filter and pages through them", async () => {
      const visitor = browser();
      const { email, apiKey } = await signUp(visitor);
      const { accountId } = await accountOf(t.storage, email);
      const { app_id: appId } = await createPublication(t.storage, accountId);
      const api = client(t.app, apiKey);
      for (let index = 1; index <= 23; index += 1) await api.post(`${PORTAL}/articles/${appId}`, { title: `Story ${index}` });
      await api.post(`${PORTAL}/articles/${appId}`, { title: 'Lisbon in winter' });
      let page = expectPage(await visitor.get(`/publications/${appId}/articles`), 200);
      assert.match(page, /24 articles\./);
      assert.match(page, /Page 1 of 2 \(24\)/);
      assert.ok(page.indexOf('Lisbon in winter') < page.indexOf('Story 23'), 'newest first');
      page = expectPage(await visitor.get(`/publications/${appId}/articles?page=2`), 200);
      assert.match(page, /Story 1</);
      assert.match(page, /rel="prev"/);
      page = expectPage(await visitor.get(`/publications/${appId}/articles?filter=lisb`), 200);
      assert.match(page, /1 article matches “lisb”/);
      assert.match(page, /Lisbon in winter/);
      assert.doesNotMatch(page, /Story 1</);
      page = expectPage(await visitor.get(`/publications/${appId}/articles?filter=${'x'.repeat(201)}`), 400);
      assert.equal(fieldError(page, 'field-filter'), 'Must be at most 200 characters');
      page = expectPage(await visitor.get(`/publications/${appId}/articles?page=99`), 200);
      assert.match(page, /There are no articles on this page/);
    });

    it('adds a feed (problems at the URL field), edits, synchronizes and deletes it', async () => {
      const visitor = browser();
      const { email } = await signUp(visitor);
      const { accountId } = await accountOf(t.storage, email);
      const { app_id: appId } = await createPublication(t.storage, accountId);
      const base = `/publications/${appId}/feeds`;
      blog.feeds.set(
        `/${appId}.xml`,
        rss('The Blog', [
          { guid: 'a', title: 'First post' },
          { guid: 'b', title: 'Second <post>' },
        ]),
      );
      await visitor.get(base);
      let page = expectPage(await visitor.post(base, { url: 'not a url' }), 400);
      assert.match(fieldError(page, 'field-url') ?? '', /absolute http or https URL/i);
      assert.match(page, /value="not a url"/);
      page = expectPage(await visitor.post(base, { url: `${blog.base}/missing.xml` }), 400);
      assert.match(fieldError(page, 'field-url') ?? '', /cannot be used/i);
      page = expectPage(await visitor.post(base, { url: 'http://169.254.169.254/latest/meta-data' }), 400);
      assert.match(fieldError(page, 'field-url') ?? '', /cannot be used/i);

      const added = await visitor.post(base, { url: `${blog.base}/${appId}.xml`, title: 'The <Sample> Blog', auto_publish: 'on' });
      expectRedirect(added, new RegExp(`^${base}/\\d+\\?notice=feed-added$`));
      const feedPath = added.location!.split('?')[0]!;
      page = expectPage(await visitor.get(added.location!), 200);
      assert.match(page, /The feed is added/);
      assert.match(page, /The &lt;Sample&gt; Blog/);
      assert.match(page, /<span class="badge pending">pending<\/span>/);

      expectRedirect(await visitor.post(`${feedPath}/synchronize`), new RegExp(`^${feedPath}\\?synced=1&imported=2&updated=0`));
      page = expectPage(await visitor.get(`${feedPath}?synced=1&imported=2&updated=0&unchanged=0&skipped=0&failed=0&not_modified=0`), 200);
      assert.match(page, /Synchronized: 2 imported, 0 updated, 0 unchanged, 0 skipped\./);
      assert.match(page, /badge completed/);
      page = expectPage(await visitor.get(`/publications/${appId}/articles`), 200);
      assert.match(page, /Second &lt;post&gt;/);

      // A feed that went away: the failure and its reason are shown.
      blog.feeds.delete(`/${appId}.xml`);
      await visitor.get(feedPath);
      const failed = await visitor.post(`${feedPath}/synchronize`);
      page = expectPage(await visitor.get(failed.location!), 200);
      assert.match(page, /The synchronization failed\./);
      assert.match(page, /404/);
      assert.match(page, /badge failed/);

      page = expectPage(await visitor.post(feedPath, { title: '', description: 'x', auto_publish: 'on' }), 400);
      assert.equal(fieldError(page, 'field-title'), 'Is required');
      page = expectPage(await visitor.post(feedPath, { title: 'Renamed', cover: 'javascript:alert(1)', active: 'on' }), 400);
      assert.match(fieldError(page, 'field-cover') ?? '', /http or https URL/i);
      expectRedirect(
        await visitor.post(feedPath, { title: 'Renamed <feed>', description: 'About it', active: 'on' }),
        `${feedPath}?notice=feed-saved`,
      );
      const feedId = Number(feedPath.split('/').pop());
      const row = await t.storage.db.selectFrom('rss_feeds').selectAll().where('id', '=', feedId).executeTakeFirstOrThrow();
      assert.equal(row.title, 'Renamed <feed>');
      assert.equal(row.description, 'About it');
      assert.equal(row.active, 1);
      assert.equal(row.auto_publish, 0, 'an unticked box turns the flag off');

      await visitor.get(feedPath);
      expectRedirect(await visitor.post(`${feedPath}/delete`), `${base}?notice=feed-deleted`);
      expectPage(await visitor.get(feedPath), 404);
      assert.match(expectPage(await visitor.get(`/publications/${appId}/articles`), 200), /First post/, 'its articles stay');
    });

    it('applies the role table: viewers read without controls; editors manage feeds but not clients', async () => {
      const owner = browser();
      const { email } = await signUp(owner);
      const { accountId } = await accountOf(t.storage, email);
      const publication = await createPublication(t.storage, accountId);
      const hidden = await createPublication(t.storage, accountId);
      const viewer = await createClientUser(t.storage, accountId, [{ publicationId: publication.id, accessLevel: 'viewer' }], { password: PASSWORD });
      const editor = await createClientUser(t.storage, accountId, [{ publicationId: publication.id, accessLevel: 'editor' }], { password: PASSWORD });

      const asViewer = browser();
      await signIn(asViewer, viewer.email);
      let page = expectPage(await asViewer.get('/publications'), 200);
      assert.match(page, /<td>viewer<\/td>/);
      assert.ok(!page.includes(hidden.app_id), 'a publication without a role is not listed');
      expectPage(await asViewer.get(`/publications/${hidden.app_id}/articles`), 404);
      page = expectPage(await asViewer.get(`/publications/${publication.app_id}/feeds`), 200);
      assert.doesNotMatch(page, /Add a feed/);
      assert.doesNotMatch(page, />Clients</, 'no clients tab');
      expectPage(await asViewer.get(`/publications/${publication.app_id}/clients`), 403);
      page = expectPage(await asViewer.post(`/publications/${publication.app_id}/feeds`, { url: `${blog.base}/any.xml` }), 403);
      assert.match(page, /does not allow you to manage feeds/);

      const asEditor = browser();
      await signIn(asEditor, editor.email);
      page = expectPage(await asEditor.get(`/publications/${publication.app_id}/feeds`), 200);
      assert.match(page, /Add a feed/);
      expectPage(await asEditor.get(`/publications/${publication.app_id}/clients`), 403);
    });

    it('lets owners and admins manage the roles on a publication, as the clients service allows', async () => {
      const owner = browser();
      const { email } = await signUp(owner);
      const { accountId } = await accountOf(t.storage, email);
      const publication = await createPublication(t.storage, accountId);
      const other = await createPublication(t.storage, accountId);
      const base = `/publications/${publication.app_id}/clients`;
      const existing = await createClientUser(t.storage, accountId, [{ publicationId: other.id, accessLevel: 'author' }]);

      let page = expectPage(await owner.get(base), 200);
      assert.match(page, /No client holds a role on this publication yet/);
      page = expectPage(await owner.post(`${base}/add`, { email: uniqueEmail('nobody'), access_level: 'viewer' }), 400);
      assert.match(fieldError(page, 'add-email') ?? '', /No client of your account has this email/);
      expectRedirect(await owner.post(`${base}/add`, { email: existing.email.toUpperCase(), access_level: 'editor' }), `${base}?notice=role-saved`);
      page = expectPage(await owner.get(`${base}?notice=role-saved`), 200);
      assert.match(page, /The client&#39;s role is saved\./);
      assert.ok(page.includes(existing.email));
      assert.match(page, new RegExp(`${other.name} \\(author\\)`), 'its other roles are shown and kept');

      page = expectPage(await owner.post(base, { email: 'bad', firstname: 'Ada', lastname: 'L', password: PASSWORD, access_level: 'viewer' }), 400);
      assert.match(fieldError(page, 'new-email') ?? '', /valid email/i);
      page = expectPage(
        await owner.post(base, { email: uniqueEmail(), firstname: ' ', lastname: 'L', password: PASSWORD, access_level: 'viewer' }),
        400,
      );
      assert.equal(fieldError(page, 'new-firstname'), 'Is required');
      const adminEmail = uniqueEmail('admin');
      expectRedirect(
        await owner.post(base, { email: adminEmail, firstname: 'Ada', lastname: 'Admin', password: PASSWORD, access_level: 'admin' }),
        `${base}?notice=client-created`,
      );
      const admin = await accountOf(t.storage, adminEmail);

      const roles = async (userId: number) =>
        (
          await t.storage.db
            .selectFrom('roles')
            .select(['publication_id', 'access_level'])
            .where('user_id', '=', userId)
            .orderBy('publication_id')
            .execute()
        ).map((role) => `${role.publication_id}:${role.access_level}`);
      assert.deepEqual(await roles(existing.userId), [`${publication.id}:editor`, `${other.id}:author`].sort());

      // The admin signs in: it manages the clients it could have made (roles here only, below admin). It may change
      // the editor it manages (but not grant admin); a client that also holds a role on the owner's other publication,
      // another admin, itself and a client without roles are not its to see (a 404 page, left out of the list).
      const managed = await createClientUser(t.storage, accountId, [{ publicationId: publication.id, accessLevel: 'editor' }]);
      const roleless = await createClientUser(t.storage, accountId, []);
      const asAdmin = browser();
      await signIn(asAdmin, adminEmail);
      page = expectPage(await asAdmin.get(base), 200);
      assert.doesNotMatch(page, /<option value="admin"/);
      const listed = /<table[\s\S]*<\/table>/.exec(page)?.[0] ?? '';
      assert.ok(listed.includes(managed.email));
      for (const hidden of [existing.email, adminEmail]) assert.ok(!listed.includes(hidden), `${hidden} is not listed to the admin`);
      expectRedirect(await asAdmin.post(`${base}/${managed.userId}/role`, { access_level: 'viewer' }), `${base}?notice=role-saved`);
      assert.deepEqual(await roles(managed.userId), [`${publication.id}:viewer`]);
      page = expectPage(await asAdmin.post(`${base}/${managed.userId}/role`, { access_level: 'admin' }), 403);
      assert.match(page, /Only the account owner may grant the admin level/);
      for (const userId of [existing.userId, admin.userId, roleless.userId]) {
        expectPage(await asAdmin.post(`${base}/${userId}/role`, { access_level: 'viewer' }), 404);
      }
      page = expectPage(await asAdmin.post(`${base}/add`, { email: roleless.email, access_level: 'viewer' }), 400);
      assert.match(fieldError(page, 'add-email') ?? '', /No client you manage has this email/);
      assert.deepEqual(await roles(existing.userId), [`${publication.id}:editor`, `${other.id}:author`].sort());
      assert.deepEqual(await roles(roleless.userId), []);
      expectPage(await asAdmin.get(`/publications/${other.app_id}/clients`), 404);
      expectPage(await asAdmin.post(`${base}/${managed.userId}/role`, { access_level: 'owner' }), 400);

      // The owner takes the role away: the client keeps its role elsewhere.
      await owner.get(base);
      expectRedirect(await owner.post(`${base}/${existing.userId}/role`, { access_level: 'none' }), `${base}?notice=role-removed`);
      assert.deepEqual(await roles(existing.userId), [`${other.id}:author`]);
      const audit = await t.storage.db.selectFrom('audit_log').select('action').where('account_id', '=', accountId).execute();
      assert.ok(audit.filter((entry) => entry.action === 'client.roles').length >= 4, 'role changes are audited as in the API');
    });

    it('answers unknown and malformed addresses in its sections with 404 pages', async () => {
      const visitor = browser();
      await signUp(visitor);
      for (const path of [
        '/publications/no-such-app/articles',
        '/publications/bad%20id/articles',
        '/publications/x/feeds/abc',
        '/publications/x/nothing',
        '/settings/nothing',
      ]) {
        expectPage(await visitor.get(path), 404);
      }
    });

    it('sends pages with security headers, and its assets cacheable', async () => {
      const visitor = browser();
      const response = await visitor.get('/sign-in');
      assert.match(String(response.headers['content-security-policy']), /default-src 'none'; script-src 'self'/);
      assert.match(String(response.headers['content-security-policy']), /frame-ancestors 'none'/);
      assert.equal(response.headers['x-frame-options'], 'DENY');
      assert.equal(response.headers['x-content-type-options'], 'nosniff');
      assert.equal(response.headers['cache-control'], 'no-store');
      const css = await visitor.get(STYLESHEET.path);
      assert.equal(css.status, 200);
      assert.match(String(css.headers['content-type']), /^text\/css/);
      assert.match(String(css.headers['cache-control']), /immutable/);
      assert.equal(css.headers['set-cookie'], undefined);
      const page = expectPage(response, 200);
      assert.ok(page.includes(STYLESHEET.path));
    });

    it('leaves the JSON APIs as they were', async () => {
      const visitor = browser();
      const { apiKey } = await signUp(visitor);
      // Forms are not a body the API takes; its errors stay JSON; the OpenAPI document knows no page.
      const form = await t.app.inject({
        method: 'POST',
        url: `${PORTAL}/sessions`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'email=a%40b.c&password=x',
      });
      assert.equal(form.statusCode, 415);
      assert.equal(JSON.parse(form.body).error, 'unsupported_media_type');
      expectError(await client(t.app, apiKey).get('/api/portal/v1/no-such-thing'), 404, 'not_found');
      expectError(
        await client(t.app).get(`${PORTAL}/publications`, { cookie: `mh_session=${visitor.cookies.get('mh_session')}` }),
        401,
        'unauthorized',
      );
      const openapi = JSON.parse((await t.app.inject({ method: 'GET', url: '/openapi.json' })).body) as { paths: Record<string, unknown> };
      const pagePaths = Object.keys(openapi.paths).filter((path) => !path.startsWith('/api/') && !['/healthz', '/readyz'].includes(path));
      assert.deepEqual(pagePaths, []);
      // A JSON body to a page is not a form.
      const json = await t.app.inject({
        method: 'POST',
        url: '/settings/api/keys',
        headers: { cookie: `mh_session=${visitor.cookies.get('mh_session')}`, 'content-type': 'application/json', origin: ORIGIN },
        payload: JSON.stringify({ name: 'json' }),
      });
      assert.equal(json.statusCode, 415);
      assert.match(String(json.headers['content-type']), /^text\/html/);
    });
  });
}

describe('dashboard with ALLOW_SIGNUP=false', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp(DIALECTS[0]!, { ALLOW_SIGNUP: 'false' });
  });
  after(() => t.close());

  it('has no sign-up page, refuses sign-up forms, and still signs people in', async () => {
    const visitor = pageClient(t.app);
    const signInPage = expectPage(await visitor.get('/sign-in'), 200);
    assert.doesNotMatch(signInPage, /href="\/sign-up"/);
    assert.match(expectPage(await visitor.get('/sign-up'), 404), /Sign-up is turned off/);
    const email = uniqueEmail('closed');
    await visitor.get('/sign-in');
    expectPage(await visitor.post('/sign-up', { email, password: PASSWORD, password_confirmation: PASSWORD }), 404);
    assert.equal(await t.storage.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst(), undefined);

    const { AccountService } = await import('../../src/accounts/service.js');
    const { AccountQueries } = await import('../../src/accounts/queries.js');
    await new AccountService(new AccountQueries(t.storage.db)).createAccount({ email, password: PASSWORD });
    await signIn(visitor, email);
  });
});
