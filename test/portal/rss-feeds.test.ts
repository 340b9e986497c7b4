import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { client, createOwner, createPublication, DIALECTS, expectError, type Owner, startApp, type TestApp } from '../helpers/app.js';
import { PORTAL, TIMESTAMP } from '../helpers/portal.js';
import { createClientUser } from '../helpers/roles.js';
import { feedServer, type Handler, type Item, redirect, rss, serveFeed } from './feeds/fixtures.js';

let counter = 0;
const nextPath = (stem = 'feed') => `/${stem}-${++counter}.xml`;

for (const dialect of DIALECTS) {
  describe(`RSS feeds (${dialect})`, () => {
    let server: Awaited<ReturnType<typeof feedServer>>;
    let blockedServer: Awaited<ReturnType<typeof feedServer>>;
    /** A site of its own, for discovery by the usual paths (which live at the root of an origin). */
    let site: Awaited<ReturnType<typeof feedServer>>;
    let t: TestApp;
    let owner: Owner;
    let api: ReturnType<typeof client>;
    let appId: string;
    let publicationId: number;
    let strangerApi: ReturnType<typeof client>;
    let strangerAppId: string;

    before(async () => {
      server = await feedServer();
      blockedServer = await feedServer();
      site = await feedServer();
      t = await startApp(dialect, { OUTBOUND_ALLOW: `127.0.0.1:${server.port},127.0.0.1:${site.port}` });
      owner = await createOwner(t.storage);
      const publication = await createPublication(t.storage, owner.accountId);
      appId = publication.app_id;
      publicationId = publication.id;
      api = client(t.app, owner.apiKey);
      const stranger = await createOwner(t.storage);
      strangerApi = client(t.app, stranger.apiKey);
      strangerAppId = (await createPublication(t.storage, stranger.accountId)).app_id;
    });
    after(async () => {
      await t.close();
      await server.close();
      await blockedServer.close();
      await site.close();
    });

    const feeds = (id?: number | string, app = appId) => `${PORTAL}/rss_feeds/${app}${id === undefined ? '' : `/${id}`}`;

    async function createFeed(items: Item[], body: Record<string, unknown> = {}, etag?: () => string) {
      const path = nextPath();
      const state = { items, etag };
      server.routes.set(
        path,
        serveFeed(() => rss(state.items), etag),
      );
      const created = await api.post(feeds(), { url: `${server.base}${path}`, ...body });
      assert.equal(created.status, 201, created.raw);
      return { feed: created.body, path, state };
    }

    async function articlesOf(feedId: number) {
      return t.storage.db.selectFrom('articles').selectAll().where('rss_feed_id', '=', feedId).orderBy('id').execute();
    }

    it("creates a feed with the feed's own title, description and cover as defaults, and every field", async () => {
      const path = nextPath();
      server.routes.set(
        path,
        serveFeed(() => rss([], { title: 'Own Title', description: 'Own description', image: 'https://blog.example.com/logo.png' })),
      );
      const created = await api.post(feeds(), { url: `${server.base}${path}`, auto_publish: true });
      assert.equal(created.status, 201, created.raw);
      const feed = created.body;
      assert.deepEqual(Object.keys(feed).sort(), [
        'active',
        'auto_publish',
        'category_ids',
        'cover',
        'created_at',
        'description',
        'id',
        'import_author',
        'import_source',
        'imported_at',
        'job_id',
        'job_status',
        'last_error',
        'publication_id',
        'show_related_articles',
        'title',
        'updated_at',
        'url',
      ]);
      assert.equal(feed.title, 'Own Title');
      assert.equal(feed.description, 'Own description');
      assert.equal(feed.cover, 'https://blog.example.com/logo.png');
      assert.equal(feed.url, `${server.base}${path}`);
      assert.equal(feed.active, true);
      assert.equal(feed.auto_publish, true);
      assert.equal(feed.import_source, false);
      assert.equal(feed.job_status, 'pending');
      assert.equal(feed.imported_at, null);
      assert.match(feed.created_at, TIMESTAMP);
      assert.match(feed.updated_at, TIMESTAMP);
      assert.deepEqual(feed.category_ids, []);
      // A given title wins over the feed's (another URL: a publication takes one URL once).
      const namedPath = nextPath();
      server.routes.set(
        namedPath,
        serveFeed(() => rss([], { title: 'Own Title' })),
      );
      const named = await api.post(feeds(), { url: `${server.base}${namedPath}`, title: 'Mine' });
      assert.equal(named.body.title, 'Mine');
      // The fetcher identifies itself.
      assert.match(String(server.requests.at(-1)!.headers['user-agent']), /Masthead/);
    });

    it('reads, lists, updates and deletes feeds', async () => {
      const category = (await api.post(`${PORTAL}/categories/${appId}`, { name: `Feeds ${++counter}` })).body;
      const { feed } = await createFeed([], { category_ids: [category.id] });
      assert.deepEqual(feed.category_ids, [category.id]);
      const one = await api.get(feeds(feed.id));
      assert.equal(one.status, 200);
      assert.deepEqual(one.body, feed);
      const list = await api.get(feeds());
      assert.equal(list.status, 200);
      assert.ok(list.body.some((row: { id: number }) => row.id === feed.id));
      const updated = await api.put(feeds(feed.id), {
        title: 'Renamed',
        description: 'New description',
        cover: 'https://cdn.example.com/c.png',
        active: false,
        import_source: true,
        import_author: true,
        auto_publish: true,
        show_related_articles: true,
        category_ids: [],
        url: 'http://ignored.example.com/',
      });
      assert.equal(updated.status, 200, updated.raw);
      assert.equal(updated.body.title, 'Renamed');
      assert.equal(updated.body.description, 'New description');
      assert.equal(updated.body.cover, 'https://cdn.example.com/c.png');
      assert.equal(updated.body.active, false);
      assert.equal(updated.body.import_source, true);
      assert.equal(updated.body.import_author, true);
      assert.equal(updated.body.auto_publish, true);
      assert.equal(updated.body.show_related_articles, true);
      assert.deepEqual(updated.body.category_ids, []);
      assert.equal(updated.body.url, feed.url, 'the url cannot be changed');
      assert.equal((await api.delete(feeds(feed.id))).status, 204);
      expectError(await api.get(feeds(feed.id)), 404, 'not_found');
      expectError(await api.delete(feeds(feed.id)), 404, 'not_found');
      expectError(await api.put(feeds(feed.id), { title: 'x' }), 404, 'not_found');
    });

    it('refuses bad bodies with 400', async () => {
      const path = nextPath();
      server.routes.set(
        path,
        serveFeed(() => rss([])),
      );
      const url = `${server.base}${path}`;
      expectError(await api.post(feeds(), {}), 400, 'validation_failed');
      expectError(await api.post(feeds(), { url: 'ftp://example.com/feed' }), 400, 'validation_failed');
      expectError(await api.post(feeds(), { url: 'not a url' }), 400, 'validation_failed');
      expectError(await api.post(feeds(), { url: `https://example.com/${'a'.repeat(2050)}` }), 400, 'validation_failed');
      const otherCategory = (await strangerApi.post(`${PORTAL}/categories/${strangerAppId}`, { name: `Theirs ${++counter}` })).body;
      const problem = expectError(await api.post(feeds(), { url, category_ids: [otherCategory.id] }), 400, 'validation_failed');
      assert.match(problem.message, /category_ids/);
      expectError(await api.post(feeds(), { url, cover: 'javascript:alert(1)' }), 400, 'validation_failed');
      const { feed } = await createFeed([]);
      expectError(await api.put(feeds(feed.id), { category_ids: [otherCategory.id] }), 400, 'validation_failed');
      expectError(await api.put(feeds(feed.id), { title: '' }), 400, 'validation_failed');
    });

    it('refuses a URL that is an HTML page, not a feed, with a clear 400', async () => {
      const path = '/page.html';
      server.routes.set(path, (_request, response) => {
        response
          .writeHead(200, { 'content-type': 'text/html' })
          .end('<!doctype html><html><head><title>Home</title></head><body><p>Hello</p></body></html>');
      });
      const problem = expectError(await api.post(feeds(), { url: `${server.base}${path}` }), 400, 'validation_failed');
      assert.match(problem.message, /not a feed/);
      const missing = expectError(await api.post(feeds(), { url: `${server.base}/missing.xml` }), 400, 'validation_failed');
      assert.match(missing.message, /404/);
    });

    it('finds the feed an HTML page names with <link rel="alternate">', async () => {
      const path = nextPath();
      server.routes.set(
        path,
        serveFeed(() => rss([], { title: 'Discovered' })),
      );
      server.routes.set('/blog/', (_request, response) => {
        response
          .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
          .end(
            `<!doctype html><html><head><link rel="stylesheet" href="/s.css"><link rel="alternate" type="application/rss+xml" title="RSS" href="..${path}"></head><body>Blog</body></html>`,
          );
      });
      const created = await api.post(feeds(), { url: `${server.base}/blog/` });
      assert.equal(created.status, 201, created.raw);
      assert.equal(created.body.url, `${server.base}${path}`);
      assert.equal(created.body.title, 'Discovered');
    });

    it('finds the feed of an HTML page that names none at the usual paths of its origin, in order', async () => {
      const html =
        (body: string): Handler =>
        (_request, response) =>
          response.writeHead(200, { 'content-type': 'text/html' }).end(body);
      site.routes.clear();
      site.requests.length = 0;
      site.routes.set('/blog/home', html('<!doctype html><html><head><title>Blog</title></head><body>No feed link</body></html>'));
      // /feed is missing (404); /rss.xml is a catch-all HTML page; /atom.xml is the feed; /feed.xml is never asked.
      site.routes.set('/rss.xml', html('<!doctype html><html><body>Page not found</body></html>'));
      site.routes.set('/atom.xml', (_request, response) =>
        response
          .writeHead(200, { 'content-type': 'application/atom+xml' })
          .end('<feed xmlns="http://www.w3.org/2005/Atom"><title>Found at a usual path</title><entry><id>1</id><title>x</title></entry></feed>'),
      );
      site.routes.set(
        '/feed.xml',
        serveFeed(() => rss([], { title: 'Not this one' })),
      );
      const created = await api.post(feeds(), { url: `${site.base}/blog/home` });
      assert.equal(created.status, 201, created.raw);
      assert.equal(created.body.url, `${site.base}/atom.xml`);
      assert.equal(created.body.title, 'Found at a usual path');
      assert.deepEqual(
        site.requests.map((request) => request.path),
        ['/blog/home', '/feed', '/rss.xml', '/atom.xml'],
      );
      assert.ok(
        site.requests.every((request) => /Masthead/.test(String(request.headers['user-agent']))),
        'through the same fetcher',
      );

      // None of the usual paths serves a feed: the page's own problem is the answer.
      site.routes.delete('/atom.xml');
      site.routes.delete('/feed.xml');
      site.requests.length = 0;
      const problem = expectError(await api.post(feeds(), { url: `${site.base}/blog/home` }), 400, 'validation_failed');
      assert.match(problem.message, /not a feed/);
      assert.deepEqual(
        site.requests.map((request) => request.path),
        ['/blog/home', '/feed', '/rss.xml', '/atom.xml', '/feed.xml', '/index.xml'],
      );
      // A feed that is merely broken is not a reason to look elsewhere.
      site.routes.set('/broken.xml', (_request, response) =>
        response.writeHead(200, { 'content-type': 'application/rss+xml' }).end('<rss><channel><item><![CDATA[cut'),
      );
      site.requests.length = 0;
      expectError(await api.post(feeds(), { url: `${site.base}/broken.xml` }), 400, 'validation_failed');
      assert.deepEqual(
        site.requests.map((request) => request.path),
        ['/broken.xml'],
      );
    });

    it('refuses a URL on a private address not in OUTBOUND_ALLOW with a 400 naming the reason', async () => {
      blockedServer.routes.set(
        '/feed.xml',
        serveFeed(() => rss([])),
      );
      const problem = expectError(await api.post(feeds(), { url: `${blockedServer.base}/feed.xml` }), 400, 'validation_failed');
      assert.match(problem.message, /blocked_address/);
      assert.equal(blockedServer.requests.length, 0, 'no request reached the blocked server');
      // Redirects into the network are refused too.
      const path = nextPath('redirect');
      server.routes.set(path, redirect(302, `${blockedServer.base}/feed.xml`));
      const viaRedirect = expectError(await api.post(feeds(), { url: `${server.base}${path}` }), 400, 'validation_failed');
      assert.match(viaRedirect.message, /blocked_address/);
      assert.equal(blockedServer.requests.length, 0);
    });

    it('imports entries as articles with every field; an unchanged re-sync writes nothing', async () => {
      const category = (await api.post(`${PORTAL}/categories/${appId}`, { name: `Imported ${++counter}` })).body;
      const { feed } = await createFeed(
        [
          { guid: 'a', title: 'First post', html: '<p>First <b>body</b></p>', author: 'Ada', date: 'Tue, 03 Jun 2025 09:39:21 GMT' },
          { guid: 'b', title: 'Second post', html: '<p>Second</p>' },
        ],
        { category_ids: [category.id], import_source: true, import_author: true, show_related_articles: true },
      );
      const sync = await api.post(`${feeds(feed.id)}/synchronize`);
      assert.equal(sync.status, 200, sync.raw);
      assert.match(sync.body.job_id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      assert.equal(sync.body.job_status, 'completed');
      assert.equal(sync.body.imported, 2);
      assert.equal(sync.body.updated, 0);
      assert.equal(sync.body.skipped, 0);
      assert.equal(sync.body.failed, 0);
      assert.deepEqual(sync.body.errors, []);
      assert.equal(sync.body.articles.length, 2);

      const first = (await api.get(`${PORTAL}/articles/${appId}/${sync.body.articles[0]}`)).body;
      assert.equal(first.title, 'First post');
      assert.match(first.html, /<b>body<\/b>/);
      assert.equal(first.info, 'First body');
      assert.equal(first.date, '2025-06-03 09:39:21');
      assert.equal(first.source, 'rss');
      assert.equal(first.rss_feed_id, feed.id);
      assert.equal(first.visible, false, 'auto_publish is off');
      assert.equal(first.author_id, null);
      assert.deepEqual(first.category_ids, [category.id]);
      assert.deepEqual(first.assets, { show_related_articles: true, author: 'Ada', source_url: 'https://blog.example.com/a' });

      const reread = (await api.get(feeds(feed.id))).body;
      assert.equal(reread.job_status, 'completed');
      assert.equal(reread.job_id, sync.body.job_id);
      assert.match(reread.imported_at, TIMESTAMP);

      const before = await articlesOf(feed.id);
      const again = await api.post(`${feeds(feed.id)}/synchronize`);
      assert.equal(again.status, 200);
      assert.equal(again.body.imported, 0);
      assert.equal(again.body.updated, 0);
      assert.equal(again.body.unchanged, 2);
      assert.deepEqual(again.body.articles, []);
      assert.notEqual(again.body.job_id, sync.body.job_id);
      assert.deepEqual(await articlesOf(feed.id), before, 'no article was written');
    });

    it('sends If-None-Match and, on 304, parses and writes nothing', async () => {
      const { feed, path } = await createFeed([{ guid: 'x', title: 'Cached' }], { auto_publish: true }, () => '"v1"');
      const first = await api.post(`${feeds(feed.id)}/synchronize`);
      assert.equal(first.body.imported, 1);
      const articles = await articlesOf(feed.id);
      assert.equal(articles[0]!.visible, 1, 'auto_publish makes articles visible');
      const second = await api.post(`${feeds(feed.id)}/synchronize`);
      assert.equal(second.status, 200);
      assert.equal(second.body.job_status, 'completed');
      assert.equal(second.body.not_modified, true);
      assert.equal(second.body.imported + second.body.updated + second.body.unchanged, 0);
      const last = server.requests.filter((request) => request.path === path).at(-1)!;
      assert.equal(last.headers['if-none-match'], '"v1"');
      assert.deepEqual(await articlesOf(feed.id), articles);
    });

    it('updates the article of an edited entry, but skips an article a person has edited', async () => {
      const { feed, state } = await createFeed([
        { guid: 'e1', title: 'Original one' },
        { guid: 'e2', title: 'Original two' },
      ]);
      const first = await api.post(`${feeds(feed.id)}/synchronize`);
      const [one, two] = first.body.articles as number[];
      // A person edits the second article.
      await new Promise((resolve) => setTimeout(resolve, 5));
      const edited = await api.put(`${PORTAL}/articles/${appId}/${two}`, { title: 'Edited by a person' });
      assert.equal(edited.status, 200, edited.raw);
      state.items = [
        { guid: 'e1', title: 'Changed one', html: '<p>New body</p>' },
        { guid: 'e2', title: 'Changed two' },
        { guid: 'e3', title: 'Brand new' },
      ];
      await new Promise((resolve) => setTimeout(resolve, 5));
      const sync = await api.post(`${feeds(feed.id)}/synchronize`);
      assert.equal(sync.body.job_status, 'completed');
      assert.equal(sync.body.imported, 1);
      assert.equal(sync.body.updated, 1);
      assert.equal(sync.body.skipped, 1);
      assert.ok(sync.body.articles.includes(one));
      assert.ok(!sync.body.articles.includes(two));
      const oneNow = (await api.get(`${PORTAL}/articles/${appId}/${one}`)).body;
      assert.equal(oneNow.title, 'Changed one');
      assert.match(oneNow.html, /New body/);
      const twoNow = (await api.get(`${PORTAL}/articles/${appId}/${two}`)).body;
      assert.equal(twoNow.title, 'Edited by a person');
      assert.equal((await articlesOf(feed.id)).length, 3);
    });

    const sync = async (feedId: number) => {
      const response = await api.post(`${feeds(feedId)}/synchronize`);
      assert.equal(response.status, 200, response.raw);
      assert.equal(response.body.job_status, 'completed', response.raw);
      return response.body as { imported: number; updated: number; skipped: number; unchanged: number; articles: number[] };
    };
    const tally = ({ imported, updated, skipped, unchanged }: Awaited<ReturnType<typeof sync>>) => ({ imported, updated, skipped, unchanged });
    const criterionOf = async (feedId: number) =>
      (await t.storage.db.selectFrom('rss_feeds').select('entry_key_criterion').where('id', '=', feedId).executeTakeFirstOrThrow())
        .entry_key_criterion;
    const keysOf = async (feedId: number) =>
      (await t.storage.db.selectFrom('feed_entries').select('entry_key').where('feed_id', '=', feedId).orderBy('entry_key').execute()).map(
        (row) => row.entry_key,
      );

    it('keys a feed that repeats guids by link from then on: an entry dropped, one edited, no duplicate article', async () => {
      const { feed, state } = await createFeed([
        { guid: 'dup', title: 'Dup one', link: 'https://blog.example.com/dup-1' },
        { guid: 'dup', title: 'Dup two', link: 'https://blog.example.com/dup-2' },
        { guid: 'c', title: 'Plain' },
      ]);
      const first = await sync(feed.id);
      assert.deepEqual(tally(first), { imported: 3, updated: 0, skipped: 0, unchanged: 0 });
      assert.equal(await criterionOf(feed.id), 'link');
      const [, dupTwo] = first.articles;
      // The feed drops one of the entries that shared the guid (the other alone no longer repeats it) and edits it.
      state.items = [
        { guid: 'dup', title: 'Dup two, edited', link: 'https://blog.example.com/dup-2' },
        { guid: 'c', title: 'Plain' },
      ];
      await new Promise((resolve) => setTimeout(resolve, 5));
      const second = await sync(feed.id);
      assert.deepEqual(tally(second), { imported: 0, updated: 1, skipped: 0, unchanged: 1 });
      assert.deepEqual(second.articles, [dupTwo]);
      assert.equal((await api.get(`${PORTAL}/articles/${appId}/${dupTwo}`)).body.title, 'Dup two, edited');
      assert.equal((await articlesOf(feed.id)).length, 3);
      assert.equal(await criterionOf(feed.id), 'link', 'the criterion never steps back up');
      // An unchanged re-sync writes nothing.
      const before = {
        articles: await articlesOf(feed.id),
        entries: await t.storage.db.selectFrom('feed_entries').selectAll().where('feed_id', '=', feed.id).orderBy('id').execute(),
      };
      const third = await sync(feed.id);
      assert.deepEqual(tally(third), { imported: 0, updated: 0, skipped: 0, unchanged: 2 });
      assert.deepEqual(await articlesOf(feed.id), before.articles);
      assert.deepEqual(
        await t.storage.db.selectFrom('feed_entries').selectAll().where('feed_id', '=', feed.id).orderBy('id').execute(),
        before.entries,
      );
    });

    it('finds the articles imported under guids when the feed starts repeating guids (the criterion switches to link)', async () => {
      const { feed, state } = await createFeed([
        { guid: 'a', title: 'Alpha', link: 'https://blog.example.com/alpha' },
        { guid: 'c', title: 'Gamma' },
      ]);
      const first = await sync(feed.id);
      assert.equal(first.imported, 2);
      assert.deepEqual(await keysOf(feed.id), ['guid:a', 'guid:c']);
      const [alpha] = first.articles;
      state.items = [
        { guid: 'a', title: 'Alpha', link: 'https://blog.example.com/alpha' },
        { guid: 'a', title: 'Beta reuses the guid', link: 'https://blog.example.com/beta' },
        { guid: 'c', title: 'Gamma' },
      ];
      const second = await sync(feed.id);
      assert.deepEqual(tally(second), { imported: 1, updated: 0, skipped: 0, unchanged: 2 });
      assert.equal(await criterionOf(feed.id), 'link');
      assert.deepEqual(await keysOf(feed.id), [
        'link:https://blog.example.com/alpha',
        'link:https://blog.example.com/beta',
        'link:https://blog.example.com/c',
      ]);
      // From now on by link: the repeated guid gone, an edit updates the first article.
      state.items = [
        { guid: 'a', title: 'Alpha, edited', link: 'https://blog.example.com/alpha' },
        { guid: 'c', title: 'Gamma' },
      ];
      await new Promise((resolve) => setTimeout(resolve, 5));
      const third = await sync(feed.id);
      assert.deepEqual(tally(third), { imported: 0, updated: 1, skipped: 0, unchanged: 1 });
      assert.deepEqual(third.articles, [alpha]);
      assert.equal((await articlesOf(feed.id)).length, 3);
    });

    it('counts entries whose keys collide as skipped, and keys of different kinds never collide', async () => {
      const { feed } = await createFeed([
        { guid: 'same', title: 'Listed twice' },
        { guid: 'same', title: 'Listed twice' },
        { guid: 'https://blog.example.com/shared', title: 'A guid like a link', link: 'https://blog.example.com/elsewhere' },
        { title: 'A link only', link: 'https://blog.example.com/shared' },
      ]);
      const first = await sync(feed.id);
      assert.deepEqual(tally(first), { imported: 3, updated: 0, skipped: 1, unchanged: 0 });
      assert.equal(await criterionOf(feed.id), 'guid', 'an item listed twice is not a feed repeating its guids');
      assert.deepEqual(await keysOf(feed.id), ['guid:https://blog.example.com/shared', 'guid:same', 'link:https://blog.example.com/shared']);
      const again = await sync(feed.id);
      assert.deepEqual(tally(again), { imported: 0, updated: 0, skipped: 1, unchanged: 3 });
    });

    it('finds entries stored before keys had kinds (migration 006 marks them legacy:) and gives them their new keys', async () => {
      const { feed } = await createFeed([
        { guid: 'g1', title: 'By guid' },
        { title: 'By link', link: 'https://blog.example.com/by-link' },
        { title: 'By hash', html: '<p>Neither guid nor link</p>' },
      ]);
      assert.equal((await sync(feed.id)).imported, 3);
      const keys = await keysOf(feed.id);
      // As the migration leaves the rows stored by the importer before it.
      for (const key of keys) {
        await t.storage.db
          .updateTable('feed_entries')
          .set({ entry_key: key.replace(/^(?:guid|link|hash):/, 'legacy:'), entry_link: null, entry_hash: null })
          .where('feed_id', '=', feed.id)
          .where('entry_key', '=', key)
          .execute();
      }
      const articles = await articlesOf(feed.id);
      const again = await sync(feed.id);
      assert.deepEqual(tally(again), { imported: 0, updated: 0, skipped: 0, unchanged: 3 });
      assert.deepEqual(await keysOf(feed.id), keys);
      assert.deepEqual(await articlesOf(feed.id), articles);
    });

    it('dates an entry without any date at its import, and keeps that date when the entry changes', async () => {
      const stamp = (date: Date) => date.toISOString().slice(0, 19).replace('T', ' ');
      const { feed, state } = await createFeed([{ guid: 'undated', title: 'No date', date: null }]);
      const before = stamp(new Date());
      const [id] = (await sync(feed.id)).articles;
      const after = stamp(new Date());
      const article = (await api.get(`${PORTAL}/articles/${appId}/${id}`)).body;
      assert.ok(article.date >= before && article.date <= after, `${article.date} between ${before} and ${after}`);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      state.items = [{ guid: 'undated', title: 'No date, edited', date: null }];
      assert.equal((await sync(feed.id)).updated, 1);
      const edited = (await api.get(`${PORTAL}/articles/${appId}/${id}`)).body;
      assert.equal(edited.title, 'No date, edited');
      assert.equal(edited.date, article.date);
    });

    it('does not bring back an imported article a person deleted', async () => {
      const { feed, state } = await createFeed([{ guid: 'gone', title: 'Soon deleted' }]);
      const [id] = (await api.post(`${feeds(feed.id)}/synchronize`)).body.articles as number[];
      assert.equal((await api.delete(`${PORTAL}/articles/${appId}/${id}`)).status, 204);
      state.items = [{ guid: 'gone', title: 'Soon deleted, then edited upstream' }];
      const again = await api.post(`${feeds(feed.id)}/synchronize`);
      assert.equal(again.body.job_status, 'completed');
      assert.deepEqual([again.body.imported, again.body.skipped], [0, 1]);
      assert.equal((await articlesOf(feed.id)).length, 0);
    });

    for (const [permanentStatus, temporaryStatus] of [
      [301, 302],
      [308, 307],
    ] as const) {
      it(`stores the new URL after a ${permanentStatus}, keeps it after a ${temporaryStatus}`, async () => {
        const target = nextPath('target');
        server.routes.set(
          target,
          serveFeed(() => rss([{ guid: `r${permanentStatus}`, title: 'Moved' }])),
        );
        const permanent = nextPath('moved');
        const temporary = nextPath('temp');
        server.routes.set(
          permanent,
          serveFeed(() => rss([])),
        );
        server.routes.set(
          temporary,
          serveFeed(() => rss([])),
        );
        const movedFeed = (await api.post(feeds(), { url: `${server.base}${permanent}` })).body;
        const tempFeed = (await api.post(feeds(), { url: `${server.base}${temporary}` })).body;
        server.routes.set(permanent, redirect(permanentStatus, target));
        server.routes.set(temporary, redirect(temporaryStatus, target));
        assert.equal((await sync(movedFeed.id)).imported, 1);
        assert.equal((await api.get(feeds(movedFeed.id))).body.url, `${server.base}${target}`);
        assert.equal((await sync(tempFeed.id)).imported, 1);
        assert.equal((await api.get(feeds(tempFeed.id))).body.url, `${server.base}${temporary}`);
      });
    }

    it('stores Last-Modified and sends it back as If-Modified-Since; on 304 writes nothing', async () => {
      const path = nextPath();
      const lastModified = 'Wed, 04 Jun 2025 10:00:00 GMT';
      server.routes.set(path, (request, response) => {
        if (request.headers['if-modified-since'] === lastModified) {
          response.writeHead(304, { 'last-modified': lastModified }).end();
          return;
        }
        response
          .writeHead(200, { 'content-type': 'application/rss+xml', 'last-modified': lastModified })
          .end(rss([{ guid: 'lm', title: 'Dated by the server' }]));
      });
      const feed = (await api.post(feeds(), { url: `${server.base}${path}` })).body;
      assert.equal((await sync(feed.id)).imported, 1);
      const stored = await t.storage.db.selectFrom('rss_feeds').select(['last_modified', 'etag']).where('id', '=', feed.id).executeTakeFirstOrThrow();
      assert.deepEqual(stored, { last_modified: lastModified, etag: null });
      const articles = await articlesOf(feed.id);
      const second = await api.post(`${feeds(feed.id)}/synchronize`);
      assert.equal(second.body.job_status, 'completed');
      assert.equal(second.body.not_modified, true);
      const last = server.requests.filter((request) => request.path === path).at(-1)!;
      assert.equal(last.headers['if-modified-since'], lastModified);
      assert.equal(last.headers['if-none-match'], undefined);
      assert.deepEqual(await articlesOf(feed.id), articles);
      assert.equal(
        (await t.storage.db.selectFrom('rss_feeds').select('last_modified').where('id', '=', feed.id).executeTakeFirstOrThrow()).last_modified,
        lastModified,
      );
    });

    it('records a failed synchronization and imports nothing', async () => {
      const { feed, path } = await createFeed([{ guid: 'f', title: 'Will fail' }]);
      server.routes.set(path, (_request, response) =>
        response.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Just a moment...</body></html>'),
      );
      const sync = await api.post(`${feeds(feed.id)}/synchronize`);
      assert.equal(sync.status, 200);
      assert.equal(sync.body.job_status, 'failed');
      assert.equal(sync.body.imported, 0);
      assert.equal(sync.body.errors.length, 1);
      assert.match(sync.body.errors[0], /not a feed/);
      const reread = (await api.get(feeds(feed.id))).body;
      assert.equal(reread.job_status, 'failed');
      assert.match(reread.last_error, /not a feed/);
      assert.equal((await articlesOf(feed.id)).length, 0);
      // Serving a feed again recovers.
      server.routes.set(
        path,
        serveFeed(() => rss([{ guid: 'f', title: 'Back' }])),
      );
      const recovered = await api.post(`${feeds(feed.id)}/synchronize`);
      assert.equal(recovered.body.job_status, 'completed');
      assert.equal((await api.get(feeds(feed.id))).body.last_error, null);
    });

    it('answers 409 to a synchronize while one is running', async () => {
      const { feed } = await createFeed([]);
      const running = (startedAt: Date) =>
        t.storage.db
          .updateTable('rss_feeds')
          .set({ job_status: 'running', job_started_at: startedAt.toISOString() })
          .where('id', '=', feed.id)
          .execute();
      await running(new Date());
      expectError(await api.post(`${feeds(feed.id)}/synchronize`), 409, 'conflict');
      await t.storage.db.updateTable('rss_feeds').set({ job_status: 'completed' }).where('id', '=', feed.id).execute();
      assert.equal((await api.post(`${feeds(feed.id)}/synchronize`)).status, 200);
      // A run left 'running' by a crash long ago is taken over rather than blocking the feed for ever.
      await running(new Date(Date.now() - 11 * 60 * 1000));
      const takenOver = await api.post(`${feeds(feed.id)}/synchronize`);
      assert.equal(takenOver.status, 200);
      assert.equal(takenOver.body.job_status, 'completed');
    });

    it('imports no script, handler or javascript: URL', async () => {
      const { feed } = await createFeed([
        {
          guid: 'xss',
          title: 'Evil <script>alert(1)</script>',
          html: '<p onclick="alert(1)">Hi<script>alert(2)</script><a href="javascript:alert(3)">x</a><img src="x" onerror="alert(4)"><iframe src="https://evil.example.com/"></iframe></p>',
        },
      ]);
      const sync = await api.post(`${feeds(feed.id)}/synchronize`);
      assert.equal(sync.body.imported, 1, sync.raw);
      const [article] = await articlesOf(feed.id);
      const text = `${article!.title} ${article!.html} ${article!.info}`;
      assert.doesNotMatch(text, /<script|onclick|onerror|javascript:|<iframe/i);
    });

    /** A feed row written straight to the database, as an older Masthead (or a migration) left it. */
    const storeFeed = async (values: { url: string; normalized_url: string | null; title: string; active?: number }) => {
      const at = new Date().toISOString();
      const flags = { import_source: 0, import_author: 0, auto_publish: 0, show_related_articles: 0 };
      return t.storage.db
        .insertInto('rss_feeds')
        .values({ publication_id: publicationId, active: 1, job_status: 'pending', ...flags, ...values, created_at: at, updated_at: at })
        .returning('id')
        .executeTakeFirstOrThrow();
    };

    /** The feeds of this test's publication whose URL is `url`. */
    const feedsAt = async (url: string, publication = publicationId) =>
      t.storage.db
        .selectFrom('rss_feeds')
        .select(['id', 'url', 'normalized_url'])
        .where('publication_id', '=', publication)
        .where('url', '=', url)
        .execute();

    it('refuses a URL the publication has a feed of already, however it is written, with 409; another publication may take it', async () => {
      const { feed, path } = await createFeed([{ guid: 'once', title: 'Imported once' }]);
      const url = `${server.base}${path}`;
      const requestsBefore = server.requests.length;
      const exact = expectError(await api.post(feeds(), { url }), 409, 'conflict');
      assert.equal(exact.message, `RSS feed ${feed.id} of this publication already imports ${url}`);
      assert.deepEqual(exact.details, [{ path: '/url', message: exact.message }]);
      // Scheme and host in capitals, a fragment, surrounding spaces: the same feed.
      const written = `  HTTP://127.0.0.1:${server.port}${path}#comments `;
      const otherwise = expectError(await api.post(feeds(), { url: written, title: 'Again' }), 409, 'conflict');
      assert.match(otherwise.message, new RegExp(`RSS feed ${feed.id} of this publication already imports`));
      assert.equal(server.requests.length, requestsBefore, 'a URL the publication has is refused before anything is fetched');
      assert.deepEqual(await feedsAt(url), [{ id: feed.id, url, normalized_url: url }]);
      // The example of the issue, against a feed stored as the normalized form: refused without a fetch either.
      const stored = await storeFeed({ url: 'http://blog.example.com/feed', normalized_url: 'http://blog.example.com/feed', title: 'Blog' });
      const issue = expectError(await api.post(feeds(), { url: 'HTTP://Blog.Example.com:80/feed#x' }), 409, 'conflict');
      assert.equal(issue.message, `RSS feed ${stored.id} of this publication already imports http://blog.example.com/feed`);
      await t.storage.db.deleteFrom('rss_feeds').where('id', '=', stored.id).execute();

      // Another publication (of the same owner) may take the same URL.
      const other = await createPublication(t.storage, owner.accountId);
      const there = await api.post(feeds(undefined, other.app_id), { url: written });
      assert.equal(there.status, 201, there.raw);
      assert.equal(there.body.url, url, 'stored normalized');
      assert.equal((await feedsAt(url, other.id)).length, 1);
      // Synchronizing the first imports its entry once.
      assert.equal((await sync(feed.id)).imported, 1);
      assert.equal((await sync(feed.id)).imported, 0);
      assert.equal((await articlesOf(feed.id)).length, 1);
    });

    it('takes no URL in an update, so an update cannot make a feed the duplicate of another', async () => {
      const first = await createFeed([]);
      const second = await createFeed([]);
      const updated = await api.put(feeds(second.feed.id), { url: first.feed.url, title: 'Renamed' });
      assert.equal(updated.status, 200, updated.raw);
      assert.equal(updated.body.title, 'Renamed');
      assert.equal(updated.body.url, second.feed.url, 'the update body has no url: it is ignored');
      assert.equal((await feedsAt(first.feed.url)).length, 1);
    });

    it('of several creates of one URL at the same moment, exactly one succeeds and the others are 409', async () => {
      const path = nextPath('race');
      const waiting: (() => void)[] = [];
      const callers = 5;
      // Every create is held at its fetch until all of them have asked (each one has passed the check by then).
      server.routes.set(path, (_request, response) => {
        waiting.push(() => response.writeHead(200, { 'content-type': 'application/rss+xml' }).end(rss([])));
        if (waiting.length === callers) for (const answer of waiting.splice(0)) answer();
      });
      const url = `${server.base}${path}`;
      const answers = await Promise.all(Array.from({ length: callers }, () => api.post(feeds(), { url })));
      assert.deepEqual(answers.map((answer) => answer.status).sort(), [201, 409, 409, 409, 409], answers.map((answer) => answer.raw).join('\n'));
      const winner = answers.find((answer) => answer.status === 201)!.body;
      for (const answer of answers.filter((one) => one.status === 409)) {
        assert.match(expectError(answer, 409, 'conflict').message, new RegExp(`RSS feed ${winner.id} of this publication already imports`));
      }
      assert.deepEqual(
        (await feedsAt(url)).map((row) => row.id),
        [winner.id],
      );
    });

    it('refuses a page, or a permanent redirect, that leads to a feed the publication has, with 409', async () => {
      const { feed, path } = await createFeed([]);
      const url = `${server.base}${path}`;
      const page = nextPath('page').replace('.xml', '/');
      server.routes.set(page, (_request, response) => {
        response
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            `<!doctype html><html><head><link rel="alternate" type="application/rss+xml" href="HTTP://127.0.0.1:${server.port}${path}#top"></head><body>Blog</body></html>`,
          );
      });
      const viaPage = expectError(await api.post(feeds(), { url: `${server.base}${page}` }), 409, 'conflict');
      assert.equal(viaPage.message, `${server.base}${page} leads to the feed ${url}, which RSS feed ${feed.id} of this publication already imports`);
      const moved = nextPath('moved');
      server.routes.set(moved, redirect(301, url));
      const viaRedirect = expectError(await api.post(feeds(), { url: `${server.base}${moved}` }), 409, 'conflict');
      assert.match(viaRedirect.message, new RegExp(`leads to the feed ${url}, which RSS feed ${feed.id} `));
      // A temporary redirect stores the URL asked for, which is another feed.
      const temporary = nextPath('temporary');
      server.routes.set(temporary, redirect(302, url));
      assert.equal((await api.post(feeds(), { url: `${server.base}${temporary}` })).status, 201);
      assert.equal((await feedsAt(url)).length, 1);
    });

    it('fails, importing nothing, a feed that moves permanently to the URL of another feed of its publication', async () => {
      const { feed: kept, path: keptPath } = await createFeed([{ guid: 'k1', title: 'Kept one' }]);
      const { feed: moving, path: movingPath } = await createFeed([{ guid: 'k1', title: 'Kept one' }]);
      assert.equal((await sync(kept.id)).imported, 1);
      server.routes.set(movingPath, redirect(301, keptPath));
      const run = await api.post(`${feeds(moving.id)}/synchronize`);
      assert.equal(run.status, 200, run.raw);
      assert.equal(run.body.job_status, 'failed');
      assert.equal(run.body.imported, 0);
      const reason = `the feed moved permanently to ${kept.url}, which RSS feed ${kept.id} of this publication already imports; nothing was imported, so that its posts are not imported twice (delete one of the two feeds)`;
      assert.deepEqual(run.body.errors, [reason]);
      const after = (await api.get(feeds(moving.id))).body;
      assert.equal(after.job_status, 'failed');
      assert.equal(after.last_error, reason);
      assert.equal(after.url, moving.url, 'the URL is not taken over');
      assert.equal((await articlesOf(moving.id)).length, 0);
      assert.equal((await articlesOf(kept.id)).length, 1);
      // Once the other feed is gone, the move is taken.
      assert.equal((await api.delete(feeds(kept.id))).status, 204);
      assert.equal((await sync(moving.id)).imported, 1);
      assert.deepEqual(await feedsAt(kept.url), [{ id: moving.id, url: kept.url, normalized_url: kept.url }]);
    });

    it('fails, importing nothing, a duplicate kept from before migration 010 (no normalized URL) while the older feed exists', async () => {
      const { feed: older } = await createFeed([{ guid: 'd1', title: 'Once' }]);
      assert.equal((await sync(older.id)).imported, 1);
      // As migration 010 leaves a later duplicate: no normalized_url, deactivated.
      const duplicate = await storeFeed({ url: older.url, normalized_url: null, title: 'Duplicate', active: 0 });
      const run = await api.post(`${feeds(duplicate.id)}/synchronize`);
      assert.equal(run.body.job_status, 'failed', run.raw);
      assert.deepEqual(run.body.errors, [
        `RSS feed ${older.id} of this publication already imports ${older.url}; nothing was imported, so that its posts are not imported twice (delete one of the two feeds)`,
      ]);
      assert.equal((await articlesOf(duplicate.id)).length, 0);
      // Switched back on by hand, it still imports nothing.
      assert.equal((await api.put(feeds(duplicate.id), { active: true })).status, 200);
      assert.equal((await api.post(`${feeds(duplicate.id)}/synchronize`)).body.job_status, 'failed');
      assert.equal((await articlesOf(duplicate.id)).length, 0);
      assert.match((await api.get(feeds(duplicate.id))).body.last_error, /already imports/);
      // Without the older feed it takes the URL over.
      assert.equal((await api.delete(feeds(older.id))).status, 204);
      assert.equal((await sync(duplicate.id)).imported, 1);
      assert.deepEqual(await feedsAt(older.url), [{ id: duplicate.id, url: older.url, normalized_url: older.url }]);
    });

    it('applies the role table: viewers read, authors cannot create or synchronize; other accounts see 404', async () => {
      const { feed } = await createFeed([]);
      const viewer = client(t.app, (await createClientUser(t.storage, owner.accountId, [{ publicationId, accessLevel: 'viewer' }])).apiKey);
      const author = client(t.app, (await createClientUser(t.storage, owner.accountId, [{ publicationId, accessLevel: 'author' }])).apiKey);
      const editor = client(t.app, (await createClientUser(t.storage, owner.accountId, [{ publicationId, accessLevel: 'editor' }])).apiKey);
      assert.equal((await viewer.get(feeds())).status, 200);
      assert.equal((await viewer.get(feeds(feed.id))).status, 200);
      expectError(await viewer.post(feeds(), { url: feed.url }), 403, 'forbidden');
      expectError(await author.post(feeds(), { url: feed.url }), 403, 'forbidden');
      expectError(await author.post(`${feeds(feed.id)}/synchronize`), 403, 'forbidden');
      expectError(await author.put(feeds(feed.id), { title: 'x' }), 403, 'forbidden');
      expectError(await author.delete(feeds(feed.id)), 403, 'forbidden');
      assert.equal((await editor.post(`${feeds(feed.id)}/synchronize`)).status, 200);
      assert.equal((await editor.put(feeds(feed.id), { title: 'By editor' })).status, 200);
      expectError(await strangerApi.get(feeds(feed.id)), 404, 'not_found');
      expectError(await strangerApi.get(feeds()), 404, 'not_found');
      expectError(await strangerApi.post(`${feeds(feed.id)}/synchronize`), 404, 'not_found');
      expectError(await strangerApi.get(feeds(feed.id, strangerAppId)), 404, 'not_found');
      expectError(await client(t.app).get(feeds()), 401, 'unauthorized');
    });
  });
}
