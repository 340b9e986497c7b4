import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Storage } from '../../src/db/connection.js';
import { PublicationQueries } from '../../src/portal/publications/queries.js';
import { PublicationService } from '../../src/portal/publications/service.js';
import { DIALECTS, startApp, type TestApp } from '../helpers/app.js';
import { PORTAL } from '../helpers/portal.js';
import { createClientUser } from '../helpers/roles.js';
import { type BrowserSession, openBrowser, otherSite, screenshot, signUpIn, skipWithoutChromium } from './browser.js';
import { feedServer, PASSWORD, rss } from './helpers.js';

// End-to-end through Debian's Chromium on the first database (SQLite unless only PostgreSQL is set up): the pages'
// logic on both databases is covered by pages.test.ts; this file covers what only a real browser shows (cookies,
// redirects, CSRF as browsers send it, script not running, layout at phone width).
describe('the dashboard in Chromium', { skip: skipWithoutChromium }, () => {
  let t: TestApp;
  let base: string;
  let chromium: BrowserSession;
  let blog: Awaited<ReturnType<typeof feedServer>>;

  before(async () => {
    blog = await feedServer();
    t = await startApp(DIALECTS[0]!, { OUTBOUND_ALLOW: `127.0.0.1:${blog.port}` });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    chromium = await openBrowser(base);
  });
  after(async () => {
    await chromium?.close();
    await t?.close();
    await blog?.close();
  });

  const newPage = (viewport?: { width: number; height: number }) => chromium.newPage(viewport);

  async function accountOf(storage: Storage, email: string): Promise<number> {
    return (await storage.db.selectFrom('users').select('account_id').where('email', '=', email).executeTakeFirstOrThrow()).account_id;
  }

  let publicationCounter = 0;
  /** A publication with a readable name (the screenshots show it). */
  function createPublication(storage: Storage, accountId: number, name = 'Acme Weekly') {
    publicationCounter += 1;
    const appId = `${name.toLowerCase().replace(/\W+/g, '-')}-${publicationCounter}-${Date.now().toString(36)}`;
    return new PublicationService(new PublicationQueries(storage.db)).create({ accountId, appId, name });
  }

  const api = (key: string, path: string) => fetch(`${base}${PORTAL}${path}`, { headers: { 'x-api-key': key } });

  it('signs up, generates a key shown once (with a copy button), uses it on the API, and revokes it (then 401)', async () => {
    const page = await newPage();
    await page.goto('/');
    assert.equal(new URL(page.url()).pathname, '/sign-in');
    await screenshot(page, 'sign-in');
    await page.getByRole('link', { name: 'Create one' }).click();
    await page.getByRole('heading', { name: 'Create an account' }).waitFor();
    await screenshot(page, 'sign-up');
    const { firstKey } = await signUpIn(page);
    assert.match(firstKey, /^mh_live_/);

    await page.getByLabel('Name').fill('CRM import');
    await page.getByRole('button', { name: 'Generate key' }).click();
    await page.getByRole('heading', { name: 'Your new API key “CRM import”' }).waitFor();
    assert.ok(await page.getByText('you will not see this again').isVisible());
    const key = (await page.locator('#new-key').textContent())!.trim();
    assert.match(key, /^mh_live_[A-Za-z0-9_-]{43}$/);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key);
    await screenshot(page, 'api-keys-new-key');

    // Read once: the list shows its name and prefix, never the key.
    await page.goto('/settings/api');
    const row = page.getByRole('row', { name: /CRM import/ });
    assert.ok(await row.isVisible());
    assert.ok(!(await page.content()).includes(key));
    assert.ok(await row.getByText(`${key.slice(0, 16)}…`).isVisible());
    assert.equal((await api(key, '/publications')).status, 200);

    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: /Revoke/ }).click();
    await page.getByText('The key is revoked').waitFor();
    assert.equal(await page.getByRole('row', { name: /CRM import/ }).count(), 0);
    await screenshot(page, 'api-keys');
    const refused = await api(key, '/publications');
    assert.equal(refused.status, 401);
    assert.equal(((await refused.json()) as { error: string }).error, 'unauthorized');
    assert.equal((await api(firstKey, '/publications')).status, 200, 'the other key still works');
  });

  it('signs in and out with the keyboard alone', async () => {
    const setup = await newPage();
    const { email } = await signUpIn(setup);
    const page = await newPage();
    await page.goto('/sign-in');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'field-email');
    await page.keyboard.type(email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Publications' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).focus();
    await page.keyboard.press('Enter');
    await page.getByText('You are signed out').waitFor();
    await page.goto('/publications');
    assert.equal(new URL(page.url()).pathname, '/sign-in');
  });

  it('adds a feed served by a local server, synchronizes it and shows the result and the articles', async () => {
    const page = await newPage();
    const { email } = await signUpIn(page);
    const publication = await createPublication(t.storage, await accountOf(t.storage, email));
    blog.feeds.set(
      '/browser.xml',
      rss('The Sample Blog', [
        { guid: 'one', title: 'Lisbon in winter' },
        { guid: 'two', title: 'Porto by night' },
      ]),
    );
    await page.getByRole('link', { name: 'Publications' }).click();
    await screenshot(page, 'publications');
    await page.getByRole('link', { name: publication.name }).click();
    await page.getByRole('link', { name: 'RSS feeds' }).click();
    await page.getByLabel('Feed URL').fill(`${blog.base}/browser.xml`);
    await page.getByRole('button', { name: 'Add feed' }).click();
    await page.getByText('The feed is added').waitFor();
    assert.ok(await page.getByRole('heading', { name: 'The Sample Blog' }).isVisible());

    await page.getByRole('button', { name: 'Synchronize' }).click();
    await page.getByText('Synchronized: 2 imported, 0 updated, 0 unchanged, 0 skipped.').waitFor();
    assert.ok(await page.locator('.badge.completed').first().isVisible());
    await screenshot(page, 'feed');

    // A second run finds nothing new; the feed list shows the last status.
    await page.getByRole('button', { name: 'Synchronize' }).click();
    await page.getByText('0 imported, 0 updated, 2 unchanged').waitFor();
    await page.getByRole('link', { name: 'RSS feeds' }).click();
    assert.ok(
      await page
        .getByRole('row', { name: /The Sample Blog/ })
        .getByText('completed')
        .isVisible(),
    );
    await screenshot(page, 'feeds');

    await page.getByRole('link', { name: 'Articles' }).click();
    assert.ok(await page.getByRole('cell', { name: /Lisbon in winter/ }).isVisible());
    await page.getByLabel('Search articles').fill('port');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('1 article matches “port”.').waitFor();
    assert.ok(await page.getByRole('cell', { name: /Porto by night/ }).isVisible());
    assert.equal(await page.getByRole('cell', { name: /Lisbon in winter/ }).count(), 0);
    await screenshot(page, 'articles');
  });

  it('gives a client a role on a publication and changes it', async () => {
    const page = await newPage();
    const { email } = await signUpIn(page);
    const accountId = await accountOf(t.storage, email);
    const publication = await createPublication(t.storage, accountId);
    const other = await createPublication(t.storage, accountId, 'Acme Travel');
    const client = await createClientUser(t.storage, accountId, [{ publicationId: other.id, accessLevel: 'author' }]);
    await page.goto(`/publications/${publication.app_id}/clients`);
    await page.locator('#add-email').fill(client.email);
    await page.locator('#add-access_level').selectOption('editor');
    await page.getByRole('button', { name: 'Give the role' }).click();
    await page.getByText("The client's role is saved.").waitFor();
    const row = page.getByRole('row', { name: new RegExp(client.email.replace(/[.]/g, '\\.')) });
    assert.equal(await row.getByRole('combobox').inputValue(), 'editor');
    assert.ok(await row.getByText(`${other.name} (author)`).isVisible());

    await row.getByRole('combobox').selectOption('viewer');
    await row.getByRole('button', { name: /Save/ }).click();
    await page.getByText("The client's role is saved.").waitFor();
    await screenshot(page, 'clients');
    const roles = await t.storage.db
      .selectFrom('roles')
      .select(['publication_id', 'access_level'])
      .where('user_id', '=', client.userId)
      .orderBy('publication_id')
      .execute();
    assert.deepEqual(
      roles.map((role) => [role.publication_id, role.access_level]),
      [
        [publication.id, 'viewer'],
        [other.id, 'author'],
      ].sort((a, b) => Number(a[0]) - Number(b[0])),
    );
  });

  it('refuses a form posted from another site, and one whose token was taken out (403 page)', async () => {
    const page = await newPage();
    const { email } = await signUpIn(page);
    const userId = (await t.storage.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id;
    const keyCount = async () =>
      (await t.storage.db.selectFrom('api_keys').select('id').where('user_id', '=', userId).where('kind', '=', 'api').execute()).length;
    const before = await keyCount();

    // Another origin (same site for cookies: the session cookie goes along) posts a form to the dashboard.
    const attacker = await otherSite(
      () => `<!doctype html><form id="f" method="post" action="${base}/settings/api/keys">
<input name="name" value="planted"><input name="_csrf" value="guessed"></form><script>document.getElementById('f').submit()</script>`,
    );
    try {
      const response = page.waitForResponse((candidate) => candidate.url() === `${base}/settings/api/keys`);
      await page.goto(attacker.base);
      assert.equal((await response).status(), 403);
      await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
      assert.ok(await page.getByText('did not come from this site').isVisible());
    } finally {
      await attacker.close();
    }

    // Our own page, with the hidden token removed before sending.
    await page.goto('/settings/api');
    await page.evaluate(() => document.querySelectorAll('input[name="_csrf"]').forEach((input) => input.remove()));
    await page.getByLabel('Name').fill('no token');
    const response = page.waitForResponse((candidate) => candidate.url() === `${base}/settings/api/keys`);
    await page.getByRole('button', { name: 'Generate key' }).click();
    assert.equal((await response).status(), 403);
    await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
    assert.equal(await keyCount(), before, 'no key was made');
  });

  it('shows user content as text: a <script> title does not run', async () => {
    const page = await newPage();
    const { email, firstKey } = await signUpIn(page);
    const publication = await createPublication(t.storage, await accountOf(t.storage, email));
    const title = '<script>window.__owned = 1</script><img src=x onerror="window.__owned = 2">';
    const created = await fetch(`${base}${PORTAL}/articles/${publication.app_id}`, {
      method: 'POST',
      headers: { 'x-api-key': firstKey, 'content-type': 'application/json' },
      body: JSON.stringify({ title, info: '<b onmouseover="window.__owned = 3">bold?</b>' }),
    });
    assert.equal(created.status, 201);
    await page.goto(`/publications/${publication.app_id}/articles`);
    await page.getByRole('cell', { name: /<script>window.__owned = 1<\/script>/ }).waitFor();
    assert.ok(await page.getByText('<b onmouseover="window.__owned = 3">bold?</b>').isVisible());
    await page.waitForTimeout(200);
    assert.equal(await page.evaluate(() => (window as unknown as { __owned?: number }).__owned), undefined);
    assert.equal(await page.locator('main img, main script, main b').count(), 0);
  });

  it('lets a second account see nothing of the first', async () => {
    const first = await newPage();
    const { email } = await signUpIn(first);
    const publication = await createPublication(t.storage, await accountOf(t.storage, email));
    await first.goto('/settings/api');
    const firstPrefix = (await first.locator('tbody code').first().textContent())!;

    const second = await newPage();
    await signUpIn(second);
    await second.goto('/publications');
    assert.ok(await second.getByText('You hold no publications yet.').isVisible());
    assert.equal(await second.getByText(publication.name).count(), 0);
    for (const path of ['articles', 'feeds', 'clients']) {
      const response = await second.goto(`/publications/${publication.app_id}/${path}`);
      assert.equal(response?.status(), 404);
      assert.ok(await second.getByRole('heading', { name: 'Page not found' }).isVisible());
    }
    await second.goto('/settings/api');
    assert.ok(!(await second.content()).includes(firstPrefix), "the first account's keys are not listed");
    assert.ok(!(await second.content()).includes(email));
  });

  it('is readable at phone width (nothing wider than the screen)', async () => {
    const desktop = await newPage();
    const { email } = await signUpIn(desktop);
    const publication = await createPublication(t.storage, await accountOf(t.storage, email));
    const phone = await newPage({ width: 390, height: 844 });
    await phone.goto('/sign-in');
    await phone.getByLabel('Email').fill(email);
    await phone.getByLabel('Password').fill(PASSWORD);
    await phone.getByRole('button', { name: 'Sign in' }).click();
    await phone.getByRole('heading', { name: 'Publications' }).waitFor();
    const pages = [
      '/publications',
      `/publications/${publication.app_id}/articles`,
      `/publications/${publication.app_id}/feeds`,
      `/publications/${publication.app_id}/clients`,
      '/settings/api',
      '/settings/password',
    ];
    for (const path of pages) {
      await phone.goto(path);
      const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `${path} is ${overflow}px wider than the screen`);
    }
    await phone.goto(`/publications/${publication.app_id}/feeds`);
    await screenshot(phone, 'phone-feeds');
  });
});
