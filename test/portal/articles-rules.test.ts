// The Articles API's rules: categories and issues of the same publication only, tenancy, authentication, and
// bad input that must always be a 4xx in the one error shape, never a 500.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  type Article,
  articleCount,
  createArticle,
  createCategory,
  createIssue,
  createTenant,
  getArticle,
  listArticles,
  type Tenant,
} from '../helpers/articles.js';
import { client, DIALECTS, expectError, type Response, startApp, type TestApp } from '../helpers/app.js';
import { type Api, PORTAL } from '../helpers/portal.js';

/** One request to each of the seven article endpoints, for an app id and an article id. */
function everyEndpoint(api: Api, appId: string, id: number): [string, () => Promise<Response>][] {
  const articles = `${PORTAL}/articles/${appId}`;
  return [
    ['list', () => api.get(articles)],
    ['page', () => api.get(`${articles}/page/1`)],
    ['get', () => api.get(`${articles}/${id}`)],
    ['create', () => api.post(articles, { title: 'Intruder' })],
    ['update', () => api.put(`${articles}/${id}`, { title: 'Defaced' })],
    ['delete', () => api.delete(`${articles}/${id}`)],
    ['import', () => api.post(`${articles}/flexpdf-import`, { articles: [{ title: 'Intruder' }] })],
  ];
}

/** The detail paths of a 400, for asserting which field it names. */
function failedPaths(response: Response): string[] {
  return expectError(response, 400, 'validation_failed').details.map((detail) => detail.path);
}

for (const dialect of DIALECTS) {
  describe(`articles API rules (${dialect})`, () => {
    let t: TestApp;
    let home: Tenant;
    let sibling: Tenant; // another publication of the same account
    let stranger: Tenant; // a publication of another account
    before(async () => {
      t = await startApp(dialect);
      home = await createTenant(t);
      sibling = await createTenant(t, home.owner);
      stranger = await createTenant(t);
    });
    after(() => t.close());

    describe('categories and issues of the same publication only', () => {
      let ownCategory: number;
      let ownIssue: number;
      let siblingCategory: number;
      let siblingIssue: number;
      let strangerCategory: number;
      let strangerIssue: number;
      before(async () => {
        ownCategory = await createCategory(home, 'Local');
        ownIssue = await createIssue(home, 'No. 1', '2026-01-15');
        siblingCategory = await createCategory(sibling, 'Local');
        siblingIssue = await createIssue(sibling, 'No. 1');
        strangerCategory = await createCategory(stranger, 'Theirs');
        strangerIssue = await createIssue(stranger, 'Theirs');
      });

      it('refuses on create a category or an issue of another publication, or an unknown one, naming the field', async () => {
        const countBefore = await articleCount(home);
        for (const category of [siblingCategory, strangerCategory, 2_000_000_000]) {
          const paths = failedPaths(await home.api.post(home.articles, { title: 'x', category_ids: [ownCategory, category] }));
          assert.deepEqual(paths, ['/category_ids']);
        }
        for (const issue of [siblingIssue, strangerIssue, 2_000_000_000]) {
          const response = await home.api.post(home.articles, { title: 'x', issue_id: issue });
          assert.deepEqual(failedPaths(response), ['/issue_id']);
          assert.match(response.body.message, /^issue_id /);
        }
        const both = failedPaths(await home.api.post(home.articles, { title: 'x', category_ids: [siblingCategory], issue_id: siblingIssue }));
        assert.deepEqual(both.sort(), ['/category_ids', '/issue_id']);
        assert.equal(await articleCount(home), countBefore);
      });

      it('refuses the same on update and leaves the article unchanged', async () => {
        const article = await createArticle(home, { title: 'Guarded', category_ids: [ownCategory], issue_id: ownIssue });
        for (const category of [siblingCategory, strangerCategory, 2_000_000_000]) {
          assert.deepEqual(failedPaths(await home.api.put(`${home.articles}/${article.id}`, { category_ids: [category] })), ['/category_ids']);
        }
        for (const issue of [siblingIssue, strangerIssue, 2_000_000_000]) {
          assert.deepEqual(failedPaths(await home.api.put(`${home.articles}/${article.id}`, { issue_id: issue, title: 'Changed' })), ['/issue_id']);
        }
        assert.deepEqual(await getArticle(home, article.id), article);
      });

      it("accepts the publication's own, and the sibling publication accepts its own", async () => {
        const own = await createArticle(home, { title: 'Own refs', category_ids: [ownCategory], issue_id: ownIssue });
        assert.deepEqual([own.category_ids, own.categories, own.issue_id], [[ownCategory], ['Local'], ownIssue]);
        const theirs = await createArticle(sibling, { title: 'Sibling refs', category_ids: [siblingCategory], issue_id: siblingIssue });
        assert.deepEqual([theirs.category_ids, theirs.issue_id], [[siblingCategory], siblingIssue]);
      });

      it('names categories from their current names', async () => {
        const category = await createCategory(home, 'Old name');
        const article = await createArticle(home, { title: 'Renamed category', category_ids: [category] });
        assert.deepEqual(article.categories, ['Old name']);
        assert.equal((await home.api.put(`${home.categories}/${category}`, { name: 'New name' })).status, 200);
        assert.deepEqual((await getArticle(home, article.id)).categories, ['New name']);
      });

      it('takes a deleted category off its articles, which stay', async () => {
        const doomed = await createCategory(home, 'Doomed');
        const kept = await createCategory(home, 'Kept');
        const article = await createArticle(home, { title: 'Two categories', category_ids: [doomed, kept] });
        assert.deepEqual(article.category_ids, [doomed, kept]);
        assert.equal((await home.api.delete(`${home.categories}/${doomed}`)).status, 204);
        const after = await getArticle(home, article.id);
        assert.deepEqual([after.category_ids, after.categories], [[kept], ['Kept']]);
        assert.deepEqual(failedPaths(await home.api.put(`${home.articles}/${article.id}`, { category_ids: [doomed] })), ['/category_ids']);
      });

      it('sets issue_id to null on the articles of a deleted issue, which stay', async () => {
        const doomed = await createIssue(home, 'Withdrawn');
        const inIssue = await createArticle(home, { title: 'In the withdrawn issue', issue_id: doomed, position: 4 });
        const elsewhere = await createArticle(home, { title: 'In another issue', issue_id: ownIssue });
        assert.equal((await listArticles(home, `?issue_id=${doomed}`)).total, 1);
        assert.equal((await home.api.delete(`${home.issues}/${doomed}`)).status, 204);
        const after = await getArticle(home, inIssue.id);
        assert.equal(after.issue_id, null);
        assert.equal(after.position, 4);
        assert.equal((await getArticle(home, elsewhere.id)).issue_id, ownIssue);
        assert.deepEqual(await listArticles(home, `?issue_id=${doomed}`), { articles: [], total: 0 });
      });
    });

    describe('tenancy', () => {
      let article: Article;
      let strangerArticle: Article;
      before(async () => {
        article = await createArticle(home, { title: 'Private to home', info: 'secret' });
        strangerArticle = await createArticle(stranger, { title: "The stranger's own" });
      });

      it('answers 404 to another account for every endpoint, and changes nothing', async () => {
        const countBefore = await articleCount(home);
        for (const appId of [home.appId, sibling.appId]) {
          for (const [name, send] of everyEndpoint(stranger.api, appId, article.id)) {
            const error = expectError(await send(), 404, 'not_found');
            assert.match(error.message, new RegExp(appId), name);
          }
        }
        assert.deepEqual(await getArticle(home, article.id), article);
        assert.equal(await articleCount(home), countBefore);
      });

      it('answers 404 to another account asking for a foreign article id under its own app id', async () => {
        const underOwnAppId = `${stranger.articles}/${article.id}`;
        expectError(await stranger.api.get(underOwnAppId), 404, 'not_found');
        expectError(await stranger.api.put(underOwnAppId, { title: 'Defaced' }), 404, 'not_found');
        expectError(await stranger.api.delete(underOwnAppId), 404, 'not_found');
        assert.deepEqual(await getArticle(home, article.id), article);
      });

      it("never shows another account's articles in a listing or a search", async () => {
        const { articles, total } = await listArticles(stranger);
        assert.ok(articles.length > 0);
        assert.equal(total, articles.length);
        assert.ok(articles.every((one) => one.publication_id === stranger.publicationId));
        assert.ok(articles.some((one) => one.id === strangerArticle.id));
        assert.ok(!articles.some((one) => one.id === article.id));
        const search = await stranger.api.get(`${stranger.articles}/page/1?filter=private`);
        assert.deepEqual([search.status, search.body.total], [200, 0]);
        const ownSearch = await home.api.get(`${home.articles}/page/1?filter=private`);
        assert.deepEqual(
          ownSearch.body.records.map((one: Article) => one.id),
          [article.id],
        );
        const publications = await stranger.api.get(`${PORTAL}/publications`);
        assert.deepEqual(
          publications.body.map((one: { app_id: string }) => one.app_id),
          [stranger.appId],
        );
      });

      it('answers 404 for an article of one publication asked for under another of the same account', async () => {
        const wrongPlace = `${sibling.articles}/${article.id}`;
        expectError(await home.api.get(wrongPlace), 404, 'not_found');
        expectError(await home.api.put(wrongPlace, { title: 'Moved?' }), 404, 'not_found');
        expectError(await home.api.delete(wrongPlace), 404, 'not_found');
        assert.deepEqual(await getArticle(home, article.id), article);
        assert.ok(!(await listArticles(sibling)).articles.some((one) => one.id === article.id));
      });

      it('answers 404 for an unknown app id', async () => {
        for (const [name, send] of everyEndpoint(home.api, 'no-such-publication', article.id)) {
          const error = expectError(await send(), 404, 'not_found');
          assert.match(error.message, /no-such-publication/, name);
        }
      });
    });

    describe('authentication', () => {
      it('answers 401 without a key, with an unknown key or with a malformed one', async () => {
        const article = await createArticle(home, { title: 'Auth target' });
        const countBefore = await articleCount(home);
        const keys: (string | undefined)[] = [undefined, `mh_live_${'A'.repeat(43)}`, 'not-a-key', `${home.owner.apiKey}x`];
        for (const key of keys) {
          for (const [name, send] of everyEndpoint(client(t.app, key), home.appId, article.id)) {
            const error = expectError(await send(), 401, 'unauthorized');
            assert.ok(error.message.length > 0, name);
          }
        }
        expectError(await client(t.app).get(home.articles, { authorization: `Bearer ${home.owner.apiKey.slice(0, -1)}` }), 401, 'unauthorized');
        expectError(await client(t.app).get(home.articles, { authorization: `Basic ${home.owner.apiKey}` }), 401, 'unauthorized');
        assert.deepEqual(await getArticle(home, article.id), article);
        assert.equal(await articleCount(home), countBefore);
      });

      it('answers 401 before looking at the body', async () => {
        expectError(await client(t.app).post(home.articles, '{not json'), 401, 'unauthorized');
      });

      it('accepts the key as Authorization: Bearer', async () => {
        const bearer = client(t.app);
        const headers = { authorization: `Bearer ${home.owner.apiKey}` };
        const created = await bearer.post<Article>(home.articles, { title: 'Via bearer' }, headers);
        assert.equal(created.status, 201);
        assert.equal(created.body.author_id, home.owner.userId);
        const read = await bearer.get<Article>(`${home.articles}/${created.body.id}`, headers);
        assert.deepEqual([read.status, read.body], [200, created.body]);
        expectError(await bearer.get(stranger.articles, headers), 404, 'not_found');
      });
    });

    describe('bad input', () => {
      let target: Article;
      let countBefore: number;
      const body = (fields: Record<string, unknown>) => ({ title: 'Valid title', ...fields });
      before(async () => {
        target = await createArticle(home, { title: 'Target of bad input', info: 'unchanged' });
        countBefore = await articleCount(home);
      });

      it('refuses wrong types and out-of-range values with 400 naming the field', async () => {
        const cases: [Record<string, unknown>, string][] = [
          [{ title: 5 }, '/title'],
          [{ title: '' }, '/title'],
          [{ title: 'x'.repeat(501) }, '/title'],
          [{ title: null }, '/title'],
          [{ info: 7 }, '/info'],
          [{ html: ['<p>'] }, '/html'],
          [{ category_ids: ['a'] }, '/category_ids/0'],
          [{ category_ids: 'a' }, '/category_ids'],
          [{ category_ids: [1.5] }, '/category_ids/0'],
          [{ category_ids: [0] }, '/category_ids/0'],
          [{ issue_id: '3' }, '/issue_id'],
          [{ issue_id: 2_147_483_648 }, '/issue_id'],
          [{ position: -1 }, '/position'],
          [{ position: 2_147_483_648 }, '/position'],
          [{ position: true }, '/position'],
          [{ unlock_type: 'premium' }, '/unlock_type'],
          [{ date: 20260301 }, '/date'],
        ];
        for (const [fields, path] of [...cases, [{ source: 'x'.repeat(65) }, '/source'] as const]) {
          const paths = failedPaths(await home.api.post(home.articles, 'title' in fields ? fields : body(fields)));
          assert.ok(paths.includes(path), `create ${JSON.stringify(fields).slice(0, 60)}: ${paths.join(', ')}`);
        }
        const { title: _title, ...withoutTitle } = body({});
        assert.deepEqual(failedPaths(await home.api.post(home.articles, withoutTitle)), ['/title']);
        const updateCases: [Record<string, unknown>, string][] = [
          ...cases,
          [{ visible: 'yes' }, '/visible'],
          [{ visible: 1 }, '/visible'],
          [{ assets: [1, 2] }, '/assets'],
          [{ assets: 'a.pdf' }, '/assets'],
          [{ assets: { blob: 'x'.repeat(70 * 1024) } }, '/assets'],
        ];
        for (const [fields, path] of updateCases) {
          const paths = failedPaths(await home.api.put(`${home.articles}/${target.id}`, fields));
          assert.ok(paths.includes(path), `update ${JSON.stringify(fields).slice(0, 60)}: ${paths.join(', ')}`);
        }
      });

      it('refuses dates that are not real dates', async () => {
        const dates = [
          '2026-02-30',
          'yesterday',
          '2026-13-01',
          '2026-00-10',
          '2025-02-29',
          '2026-03-01T24:00:00Z',
          '2026-03-01T10:61:00Z',
          '01/03/2026',
          '2026-3-1',
          '',
        ];
        for (const date of dates) {
          assert.deepEqual(failedPaths(await home.api.post(home.articles, body({ date }))), ['/date'], date);
          assert.deepEqual(failedPaths(await home.api.put(`${home.articles}/${target.id}`, { date })), ['/date'], date);
        }
      });

      it('refuses a cover that is not an http(s) URL or a relative path', async () => {
        const refused = [
          'javascript:alert(1)',
          'JavaScript:alert(1)',
          '  javascript:alert(1)',
          'java\tscript:alert(1)',
          'java\nscript:alert(1)',
          '\u0001javascript:alert(1)',
          'data:text/html,<script>alert(1)</script>',
          'vbscript:msgbox(1)',
          'file:///etc/passwd',
        ];
        for (const cover of refused) {
          assert.deepEqual(failedPaths(await home.api.post(home.articles, body({ cover }))), ['/cover'], JSON.stringify(cover));
          assert.deepEqual(failedPaths(await home.api.put(`${home.articles}/${target.id}`, { cover })), ['/cover'], JSON.stringify(cover));
        }
        const accepted = [
          'https://cdn.example.com/a.png',
          'http://cdn.example.com/a.png',
          '/covers/a.png',
          'covers/a.png',
          '//cdn.example.com/a.png',
        ];
        for (const cover of accepted) {
          const article = await createArticle(home, body({ cover }));
          assert.equal(article.cover, cover);
          assert.equal((await home.api.delete(`${home.articles}/${article.id}`)).status, 204);
        }
      });

      it('refuses ids that are not positive 32-bit integers with 400', async () => {
        for (const id of ['abc', '0', '-1', '1.5', '2147483648', '99999999999999999999', '1;drop']) {
          for (const response of [
            await home.api.get(`${home.articles}/${id}`),
            await home.api.put(`${home.articles}/${id}`, { title: 'x' }),
            await home.api.delete(`${home.articles}/${id}`),
          ]) {
            assert.deepEqual(failedPaths(response), ['/params/id'], id);
          }
        }
        expectError(await home.api.get(`${home.articles}/2147483647`), 404, 'not_found');
      });

      it('refuses an app id that cannot be one with 400', async () => {
        for (const appId of [encodeURIComponent('a b'), encodeURIComponent('-leading-dash'), 'a'.repeat(65)]) {
          expectError(await home.api.get(`${PORTAL}/articles/${appId}`), 400, 'validation_failed');
        }
      });

      it('refuses bodies that are too large with 413', async () => {
        const huge = 'x'.repeat(2 * 1024 * 1024 + 1);
        expectError(await home.api.post(home.articles, body({ html: huge })), 413, 'payload_too_large');
        expectError(await home.api.put(`${home.articles}/${target.id}`, { html: huge }), 413, 'payload_too_large');
        const hugeImport = { articles: [{ title: 'x', html: 'x'.repeat(33 * 1024 * 1024) }] };
        expectError(await home.api.post(`${home.articles}/flexpdf-import`, hugeImport), 413, 'payload_too_large');
      });

      it('refuses bodies that are not UTF-8, not JSON, too deep, empty or of another media type', async () => {
        const invalidUtf8 = Buffer.concat([Buffer.from('{"title":"caf'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]);
        const deep = `{"title":"deep","info":${'['.repeat(64)}${']'.repeat(64)}}`;
        const veryDeep = `{"title":"deep","info":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
        const cases: [string | Buffer, Record<string, string>, number, string][] = [
          [invalidUtf8, {}, 400, 'validation_failed'],
          [deep, {}, 400, 'validation_failed'],
          [veryDeep, {}, 400, 'validation_failed'],
          ['{"title": "unterminated', {}, 400, 'validation_failed'],
          ["{'title': 'single quotes'}", {}, 400, 'validation_failed'],
          ['{"title":"x","__proto__":{"admin":true}}', {}, 400, 'validation_failed'],
          ['', {}, 400, 'validation_failed'],
          ['[]', {}, 400, 'validation_failed'],
          ['"a string"', {}, 400, 'validation_failed'],
          ['null', {}, 400, 'validation_failed'],
          ['title=x', { 'content-type': 'application/x-www-form-urlencoded' }, 415, 'unsupported_media_type'],
          ['{"title":"x"}', { 'content-type': 'text/plain' }, 415, 'unsupported_media_type'],
          ['<title>x</title>', { 'content-type': 'application/xml' }, 415, 'unsupported_media_type'],
        ];
        for (const [payload, headers, status, code] of cases) {
          for (const send of [
            () => home.api.post(home.articles, payload, headers),
            () => home.api.put(`${home.articles}/${target.id}`, payload, headers),
            () => home.api.post(`${home.articles}/flexpdf-import`, payload, headers),
          ]) {
            expectError(await send(), status, code);
          }
        }
        const withCharset = await home.api.post(home.articles, JSON.stringify({ title: 'With charset' }), {
          'content-type': 'application/json; charset=utf-8',
        });
        assert.equal(withCharset.status, 201);
        assert.equal((await home.api.delete(`${home.articles}/${withCharset.body.id}`)).status, 204);
      });

      it('refuses repeated or malformed query parameters with 400', async () => {
        const queries = [
          'per_page=10&per_page=20',
          'filter=a&filter=b',
          'order_by=id&order_by=title',
          'issue_id=1&issue_id=2',
          'issue_id=2147483648',
        ];
        for (const query of queries) {
          expectError(await home.api.get(`${home.articles}/page/1?${query}`), 400, 'validation_failed');
        }
        expectError(await home.api.get(`${home.articles}?order_by=id&order_by=title`), 400, 'validation_failed');
      });

      it('wrote nothing for any of the refused requests', async () => {
        assert.equal(await articleCount(home), countBefore);
        assert.deepEqual(await getArticle(home, target.id), target);
      });
    });
  });
}
