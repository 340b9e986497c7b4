// The Articles API: the seven endpoints' success paths, ordering, paging, text search and the FlexPDF import.
// References between publications, tenancy, authentication and bad input are in articles-rules.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_IMPORT } from '../../src/portal/articles/schemas.js';
import { LIST_LIMIT } from '../../src/portal/articles/service.js';
import {
  ARTICLE_FIELDS,
  type Article,
  articleCount,
  createArticle,
  createCategory,
  createIssue,
  createTenant,
  failInsertsTitled,
  getArticle,
  listArticles,
  type Tenant,
  updateArticle,
} from '../helpers/articles.js';
import { DIALECTS, expectError, startApp, type TestApp } from '../helpers/app.js';
import { TIMESTAMP } from '../helpers/portal.js';

type OrderField = 'id' | 'title' | 'date' | 'position' | 'created_at' | 'updated_at';
const ORDER_FIELDS: OrderField[] = ['id', 'title', 'date', 'position', 'created_at', 'updated_at'];
const DIRECTIONS = ['asc', 'desc'] as const;

const HOSTILE_HTML =
  '<p onclick="steal()">Hello <b>world</b></p><script>alert(1)</script>' +
  '<a href="javascript:alert(2)">bad</a><a href="java&#09;script:alert(3)">worse</a><a href="https://example.com/x">good</a>' +
  '<img src="https://cdn.example.com/a.png" onerror="alert(4)">';

function assertSanitized(html: string | null): void {
  assert.ok(html !== null);
  for (const banned of ['<script', 'alert(1)', 'onclick', 'onerror', 'javascript:', 'alert(3)']) {
    assert.ok(!html.toLowerCase().includes(banned), `${banned} survived in ${html}`);
  }
  assert.ok(html.includes('<p>Hello <b>world</b></p>'), html);
  assert.ok(html.includes('<a href="https://example.com/x">good</a>'), html);
  assert.ok(html.includes('<img src="https://cdn.example.com/a.png"'), html);
}

/** Everything of an article except the given fields, to check that nothing else changed. */
function without(article: Article, ...fields: (keyof Article)[]): Partial<Article> {
  const copy: Partial<Article> = { ...article };
  for (const field of fields) delete copy[field];
  return copy;
}

/** The ids in the order the API promises: by the field (nulls last in both directions), then by id, same direction. */
function expectedOrder(articles: Article[], field: OrderField, direction: 'asc' | 'desc'): number[] {
  const sign = direction === 'asc' ? 1 : -1;
  return [...articles]
    .sort((a, b) => {
      const x = a[field];
      const y = b[field];
      if (x !== y) {
        if (x === null) return 1;
        if (y === null) return -1;
        return (x < y ? -1 : 1) * sign;
      }
      return (a.id - b.id) * sign;
    })
    .map((article) => article.id);
}

/**
 * Timestamps are shown to the second but ordered by the stored milliseconds, so for them only the shown order is
 * checked: never decreasing (asc) or never increasing (desc), nulls last.
 */
function assertOrdered(articles: Article[], field: OrderField, direction: 'asc' | 'desc', all: Article[]): void {
  if (field !== 'created_at' && field !== 'updated_at') {
    assert.deepEqual(
      articles.map((article) => article.id),
      expectedOrder(all, field, direction),
      `order by ${field} ${direction}`,
    );
    return;
  }
  for (let index = 1; index < articles.length; index += 1) {
    const [previous, current] = [articles[index - 1]![field], articles[index]![field]];
    assert.ok(direction === 'asc' ? previous <= current : previous >= current, `order by ${field} ${direction} at ${index}`);
  }
  assert.equal(articles.length, all.length);
}

function assertUniqueIds(articles: Article[]): void {
  assert.equal(new Set(articles.map((article) => article.id)).size, articles.length, 'an article appears twice');
}

for (const dialect of DIALECTS) {
  describe(`articles API (${dialect})`, () => {
    let t: TestApp;
    let main: Tenant;
    before(async () => {
      t = await startApp(dialect);
      main = await createTenant(t);
    });
    after(() => t.close());

    describe('POST /articles/:app_id', () => {
      it('returns 201 with every field of the Article table, categories named from category_ids', async () => {
        const science = await createCategory(main, 'Science');
        const arts = await createCategory(main, 'Arts');
        const issue = await createIssue(main, 'March 2026', '2026-03-01');
        const response = await main.api.post<Article>(main.articles, {
          title: 'The first article',
          info: 'What it is about',
          html: '<p>Body</p>',
          date: '2026-03-01',
          cover: 'https://cdn.example.com/cover.jpg',
          category_ids: [arts, science],
          issue_id: issue,
          unlock_type: 'paid',
          position: 3,
          source: 'manual',
        });
        assert.equal(response.status, 201);
        const article = response.body;
        assert.deepEqual(Object.keys(article).sort(), ARTICLE_FIELDS);
        assert.ok(Number.isInteger(article.id) && article.id > 0);
        assert.deepEqual(without(article, 'id', 'created_at', 'updated_at'), {
          title: 'The first article',
          info: 'What it is about',
          html: '<p>Body</p>',
          assets: null,
          cover: 'https://cdn.example.com/cover.jpg',
          date: '2026-03-01 00:00:00',
          unlock_type: 'paid',
          categories: ['Science', 'Arts'],
          category_ids: [science, arts],
          publication_id: main.publicationId,
          issue_id: issue,
          position: 3,
          visible: true,
          rss_feed_id: null,
          source: 'manual',
          author_id: main.owner.userId,
        });
        assert.match(article.created_at, TIMESTAMP);
        assert.equal(article.updated_at, article.created_at);
        assert.deepEqual(await getArticle(main, article.id), article);
      });

      it('applies the defaults when only a title is given', async () => {
        const article = await createArticle(main, { title: 'Just a title' });
        assert.deepEqual(without(article, 'id', 'created_at', 'updated_at'), {
          title: 'Just a title',
          info: null,
          html: null,
          assets: null,
          cover: null,
          date: null,
          unlock_type: 'free',
          categories: [],
          category_ids: [],
          publication_id: main.publicationId,
          issue_id: null,
          position: null,
          visible: true,
          rss_feed_id: null,
          source: null,
          author_id: main.owner.userId,
        });
      });

      it('sanitizes the html: scripts, handlers and javascript: links are removed', async () => {
        const article = await createArticle(main, { title: 'Hostile', html: HOSTILE_HTML });
        assertSanitized(article.html);
        assert.equal((await getArticle(main, article.id)).html, article.html);
      });

      it('accepts a date as YYYY-MM-DD or ISO 8601 with an offset and returns it in UTC', async () => {
        const cases: [string, string][] = [
          ['2026-03-01', '2026-03-01 00:00:00'],
          ['2026-03-01T10:15:30Z', '2026-03-01 10:15:30'],
          ['2026-03-01T10:15:30+02:00', '2026-03-01 08:15:30'],
          ['2026-03-01T23:30:00-05:00', '2026-03-02 04:30:00'],
          ['2026-03-01T10:15:30.250+0130', '2026-03-01 08:45:30'],
          ['2026-03-01 10:15:30', '2026-03-01 10:15:30'],
          ['2024-02-29', '2024-02-29 00:00:00'],
        ];
        for (const [input, shown] of cases) {
          const article = await createArticle(main, { title: `Dated ${input}`, date: input });
          assert.equal(article.date, shown, input);
          assert.equal((await getArticle(main, article.id)).date, shown, input);
        }
      });

      it('ignores unknown fields and the fields that only an update or the server sets', async () => {
        const article = await createArticle(main, {
          title: 'With extras',
          visible: false,
          assets: { pdf: 'a.pdf' },
          rss_feed_id: 7,
          author_id: 999_999,
          publication_id: 999_999,
          created_at: '2000-01-01 00:00:00',
          colour: 'red',
        });
        assert.equal(article.visible, true);
        assert.equal(article.assets, null);
        assert.equal(article.rss_feed_id, null);
        assert.equal(article.author_id, main.owner.userId);
        assert.equal(article.publication_id, main.publicationId);
        assert.notEqual(article.created_at, '2000-01-01 00:00:00');
        assert.equal('colour' in article, false);
      });
    });

    describe('GET /articles/:app_id/:id', () => {
      it('returns the saved article, and 404 for an id that does not exist', async () => {
        const created = await createArticle(main, { title: 'Read me', info: 'Some info', position: 9 });
        const response = await main.api.get<Article>(`${main.articles}/${created.id}`);
        assert.equal(response.status, 200);
        assert.deepEqual(response.body, created);
        const missing = expectError(await main.api.get(`${main.articles}/${created.id + 1000}`), 404, 'not_found');
        assert.match(missing.message, new RegExp(`${created.id + 1000}`));
      });
    });

    describe('PUT /articles/:app_id/:id', () => {
      let categories: number[];
      let issues: number[];
      before(async () => {
        categories = [await createCategory(main, 'Politics'), await createCategory(main, 'Sport')];
        issues = [await createIssue(main, 'April 2026'), await createIssue(main, 'May 2026')];
      });

      async function fullArticle(): Promise<Article> {
        return createArticle(main, {
          title: 'Before',
          info: 'Old info',
          html: '<p>Old</p>',
          date: '2026-01-01',
          cover: '/covers/old.png',
          category_ids: [categories[0]],
          issue_id: issues[0],
          unlock_type: 'subscription',
          position: 1,
          source: 'manual',
        });
      }

      it('changes only the fields sent', async () => {
        const before = await fullArticle();
        const updated = await updateArticle(main, before.id, { title: 'After' });
        assert.equal(updated.title, 'After');
        assert.deepEqual(without(updated, 'title', 'updated_at'), without(before, 'title', 'updated_at'));
        assert.match(updated.updated_at, TIMESTAMP);
        assert.ok(updated.updated_at >= before.updated_at);
        assert.deepEqual(await getArticle(main, before.id), updated);

        const untouched = await updateArticle(main, before.id, {});
        assert.deepEqual(without(untouched, 'updated_at'), without(updated, 'updated_at'));
      });

      it('updates every updatable field, assets and visible included, and sanitizes the html', async () => {
        const before = await fullArticle();
        const updated = await updateArticle(main, before.id, {
          info: 'New info',
          html: HOSTILE_HTML,
          assets: { pdf: 'https://cdn.example.com/a.pdf', pages: [1, 2, { spread: true }], meta: { size: 3 } },
          date: '2026-06-15T12:00:00+02:00',
          cover: 'https://cdn.example.com/new.png',
          category_ids: [categories[1], categories[0]],
          issue_id: issues[1],
          unlock_type: 'free',
          position: 42,
          visible: false,
        });
        assertSanitized(updated.html);
        assert.deepEqual(without(updated, 'html', 'updated_at'), {
          ...without(before, 'html', 'updated_at'),
          info: 'New info',
          assets: { pdf: 'https://cdn.example.com/a.pdf', pages: [1, 2, { spread: true }], meta: { size: 3 } },
          date: '2026-06-15 10:00:00',
          cover: 'https://cdn.example.com/new.png',
          categories: ['Politics', 'Sport'],
          category_ids: [...categories].sort((a, b) => a - b),
          issue_id: issues[1],
          unlock_type: 'free',
          position: 42,
          visible: false,
        });
        assert.deepEqual(await getArticle(main, before.id), updated);
        assert.equal((await updateArticle(main, before.id, { visible: true })).visible, true);
      });

      it('clears nullable fields given null, and categories given an empty list', async () => {
        const before = await fullArticle();
        await updateArticle(main, before.id, { assets: { a: 1 } });
        const cleared = await updateArticle(main, before.id, {
          info: null,
          html: null,
          assets: null,
          date: null,
          cover: null,
          issue_id: null,
          position: null,
          category_ids: [],
        });
        assert.deepEqual(without(cleared, 'updated_at'), {
          ...without(before, 'updated_at'),
          info: null,
          html: null,
          assets: null,
          date: null,
          cover: null,
          issue_id: null,
          position: null,
          categories: [],
          category_ids: [],
        });
      });

      it('does not change source, which only a create sets', async () => {
        const before = await fullArticle();
        const updated = await updateArticle(main, before.id, { source: 'rss', title: 'Retitled' });
        assert.equal(updated.source, 'manual');
        assert.equal(updated.title, 'Retitled');
      });

      it('refuses null for the fields that cannot be null, and leaves the article as it was', async () => {
        const before = await fullArticle();
        for (const field of ['title', 'unlock_type', 'visible', 'category_ids']) {
          const error = expectError(await main.api.put(`${main.articles}/${before.id}`, { [field]: null }), 400, 'validation_failed');
          assert.ok(
            error.details.some((detail) => detail.path === `/${field}`),
            JSON.stringify(error.details),
          );
        }
        assert.deepEqual(await getArticle(main, before.id), before);
      });

      it('is 404 for an article that does not exist', async () => {
        expectError(await main.api.put(`${main.articles}/2147483647`, { title: 'x' }), 404, 'not_found');
      });
    });

    describe('DELETE /articles/:app_id/:id', () => {
      it('answers 204 with an empty body; the article is gone and the others stay', async () => {
        const doomed = await createArticle(main, { title: 'Doomed' });
        const kept = await createArticle(main, { title: 'Kept' });
        const countBefore = await articleCount(main);
        const response = await main.api.delete(`${main.articles}/${doomed.id}`);
        assert.equal(response.status, 204);
        assert.equal(response.raw, '');
        expectError(await main.api.get(`${main.articles}/${doomed.id}`), 404, 'not_found');
        expectError(await main.api.delete(`${main.articles}/${doomed.id}`), 404, 'not_found');
        expectError(await main.api.put(`${main.articles}/${doomed.id}`, { title: 'back' }), 404, 'not_found');
        assert.deepEqual(await getArticle(main, kept.id), kept);
        assert.equal(await articleCount(main), countBefore - 1);
      });
    });

    describe('listing and paging', () => {
      // A publication of its own with ties, nulls and two issues, so that every ordering has something to prove.
      const TITLES = ['delta', 'alpha', 'echo', 'bravo', 'charlie', 'alpha', 'foxtrot', 'delta'];
      const SIZE = 23;
      let shelf: Tenant;
      let all: Article[];
      let spring: number;
      let autumn: number;
      before(async () => {
        shelf = await createTenant(t, main.owner);
        spring = await createIssue(shelf, 'Spring');
        autumn = await createIssue(shelf, 'Autumn');
        all = [];
        for (let i = 0; i < SIZE; i += 1) {
          all.push(
            await createArticle(shelf, {
              title: TITLES[i % TITLES.length],
              date: i % 4 === 0 ? null : `2026-0${1 + (i % 5)}-1${i % 3}`,
              position: i % 3 === 0 ? null : (i * 7) % 5,
              issue_id: i % 2 === 0 ? spring : i % 5 === 0 ? autumn : null,
            }),
          );
        }
        // Touch a few so that updated_at differs from created_at somewhere.
        for (const index of [5, 1, 17]) all[index] = await updateArticle(shelf, all[index]!.id, { info: 'touched' });
      });

      describe('GET /articles/:app_id', () => {
        it('lists every article, newest id first by default, with X-Total-Count', async () => {
          const { articles, total } = await listArticles(shelf);
          assert.equal(total, SIZE);
          assert.deepEqual(
            articles.map((article) => article.id),
            expectedOrder(all, 'id', 'desc'),
          );
          assert.deepEqual(
            articles.find((article) => article.id === all[5]!.id),
            all[5],
          );
        });

        it(`returns at most ${LIST_LIMIT} articles while X-Total-Count tells how many there are`, async () => {
          const crowded = await createTenant(t, main.owner);
          for (let created = 0; created <= LIST_LIMIT; created += MAX_IMPORT) {
            const count = Math.min(MAX_IMPORT, LIST_LIMIT + 1 - created);
            const articles = Array.from({ length: count }, (_, index) => ({ title: `Crowd ${created + index}` }));
            assert.equal((await crowded.api.post(`${crowded.articles}/flexpdf-import`, { articles })).status, 201);
          }
          const { articles, total } = await listArticles(crowded, '?order_dir=asc');
          assert.equal(total, LIST_LIMIT + 1);
          assert.equal(articles.length, LIST_LIMIT);
          assert.equal(articles[0]!.title, 'Crowd 0');
          assertUniqueIds(articles);
          const last = await crowded.api.get(`${crowded.articles}/page/${Math.ceil((LIST_LIMIT + 1) / 100)}?per_page=100&order_dir=asc`);
          assert.equal(last.body.records.at(-1).title, `Crowd ${LIST_LIMIT}`);
        });

        it('orders by each whitelisted field in both directions', async () => {
          for (const field of ORDER_FIELDS) {
            for (const direction of DIRECTIONS) {
              const { articles, total } = await listArticles(shelf, `?order_by=${field}&order_dir=${direction}`);
              assert.equal(total, SIZE);
              assertUniqueIds(articles);
              assertOrdered(articles, field, direction, all);
            }
          }
        });

        it('refuses any other order_by or order_dir with 400', async () => {
          const queries = [
            'order_by=html',
            'order_by=info',
            'order_by=ID',
            'order_by=title%3B%20drop%20table%20articles',
            'order_by=',
            'order_dir=up',
            'order_dir=DESC',
          ];
          for (const query of queries) {
            const error = expectError(await shelf.api.get(`${shelf.articles}?${query}`), 400, 'validation_failed');
            assert.ok(
              error.details.some((detail) => detail.path.startsWith('/querystring/order_')),
              query,
            );
          }
        });

        it('filters by issue_id', async () => {
          for (const issue of [spring, autumn]) {
            const { articles, total } = await listArticles(shelf, `?issue_id=${issue}&order_dir=asc`);
            const expected = all.filter((article) => article.issue_id === issue).map((article) => article.id);
            assert.ok(expected.length > 0);
            assert.equal(total, expected.length);
            assert.deepEqual(
              articles.map((article) => article.id),
              expected,
            );
          }
          const unused = await createIssue(shelf, 'Empty issue');
          assert.deepEqual(await listArticles(shelf, `?issue_id=${unused}`), { articles: [], total: 0 });
          expectError(await shelf.api.get(`${shelf.articles}?issue_id=abc`), 400, 'validation_failed');
          expectError(await shelf.api.get(`${shelf.articles}?issue_id=0`), 400, 'validation_failed');
        });
      });

      describe('GET /articles/:app_id/page/:page', () => {
        const pageOf = (page: number | string, query = '') => shelf.api.get(`${shelf.articles}/page/${page}${query}`);

        it('answers the page envelope, 20 per page by default', async () => {
          const first = await pageOf(1);
          assert.equal(first.status, 200);
          assert.deepEqual(Object.keys(first.body).sort(), ['page', 'pages', 'per_page', 'records', 'total']);
          const { records, ...envelope } = first.body;
          assert.deepEqual(envelope, { total: SIZE, page: 1, per_page: 20, pages: 2 });
          assert.equal(records.length, 20);
          assert.deepEqual(Object.keys(first.body.records[0]).sort(), ARTICLE_FIELDS);
          const second = await pageOf(2);
          assert.equal(second.body.records.length, SIZE - 20);
          assert.deepEqual(
            [...records, ...second.body.records].map((article: Article) => article.id),
            expectedOrder(all, 'id', 'desc'),
          );
        });

        it('takes per_page from 1 to 100 and refuses anything else', async () => {
          for (const perPage of [1, 7, 100]) {
            const response = await pageOf(1, `?per_page=${perPage}`);
            assert.equal(response.status, 200);
            assert.equal(response.body.per_page, perPage);
            assert.equal(response.body.pages, Math.ceil(SIZE / perPage));
            assert.equal(response.body.records.length, Math.min(perPage, SIZE));
          }
          for (const perPage of ['0', '101', '-1', 'abc', '2.5', '']) {
            const error = expectError(await pageOf(1, `?per_page=${perPage}`), 400, 'validation_failed');
            assert.equal(error.details[0]?.path, '/querystring/per_page', perPage);
          }
        });

        it('refuses page numbers that are not positive integers', async () => {
          for (const page of ['0', '-1', 'abc', '1.5', '1000001']) {
            const error = expectError(await pageOf(page), 400, 'validation_failed');
            assert.equal(error.details[0]?.path, '/params/page', page);
          }
        });

        it('walks every ordering page by page without duplicates or gaps', async () => {
          for (const field of ORDER_FIELDS) {
            for (const direction of DIRECTIONS) {
              const query = `?per_page=5&order_by=${field}&order_dir=${direction}`;
              const walked: Article[] = [];
              for (let page = 1; page <= Math.ceil(SIZE / 5); page += 1) {
                const response = await pageOf(page, query);
                assert.equal(response.status, 200);
                assert.deepEqual([response.body.total, response.body.page, response.body.pages], [SIZE, page, 5]);
                walked.push(...response.body.records);
              }
              assertUniqueIds(walked);
              assertOrdered(walked, field, direction, all);
              const listed = await listArticles(shelf, `?order_by=${field}&order_dir=${direction}`);
              assert.deepEqual(
                walked.map((article) => article.id),
                listed.articles.map((article) => article.id),
              );
            }
          }
        });

        it('answers a page past the end with no records and the right total', async () => {
          const response = await pageOf(99, '?per_page=10');
          assert.equal(response.status, 200);
          assert.deepEqual(response.body, { total: SIZE, page: 99, per_page: 10, pages: 3, records: [] });
        });

        it('refuses an order_by outside the whitelist', async () => {
          expectError(await pageOf(1, '?order_by=html'), 400, 'validation_failed');
          expectError(await pageOf(1, '?order_dir=sideways'), 400, 'validation_failed');
        });
      });
    });

    describe('text filter of the page endpoint', () => {
      let library: Tenant;
      let issue: number;
      const ids: Record<string, number> = {};
      before(async () => {
        library = await createTenant(t, main.owner);
        issue = await createIssue(library, 'Garden issue');
        const fixtures: [string, string | null, boolean][] = [
          ['Gardening in spring', 'Roses and tulips', true],
          ['Spring cleaning tips', null, false],
          ['Winter roses', 'Pruning before the frost', true],
          ['Café culture', 'Espresso and pastries', false],
          ['Springfield news', 'Local politics', false],
          ['Tulip festival', null, false],
        ];
        for (const [title, info, inIssue] of fixtures) {
          ids[title] = (await createArticle(library, { title, info, issue_id: inIssue ? issue : null })).id;
        }
      });

      async function search(filter: string, query = ''): Promise<string[]> {
        const url = `${library.articles}/page/1?order_by=title&order_dir=asc&filter=${encodeURIComponent(filter)}${query}`;
        const response = await library.api.get(url);
        assert.equal(response.status, 200, `${filter}: ${response.raw}`);
        assert.equal(response.body.total, response.body.records.length);
        return response.body.records.map((article: Article) => article.title);
      }

      it('matches word prefixes in the title and the info, case-insensitively', async () => {
        assert.deepEqual(await search('spr'), ['Gardening in spring', 'Spring cleaning tips', 'Springfield news']);
        assert.deepEqual(await search('SPRING'), ['Gardening in spring', 'Spring cleaning tips', 'Springfield news']);
        assert.deepEqual(await search('tulip'), ['Gardening in spring', 'Tulip festival']);
        assert.deepEqual(await search('pastr'), ['Café culture']);
        assert.deepEqual(await search('café'), ['Café culture']);
        assert.deepEqual(await search('ardening'), []);
      });

      it('ignores accents, in the text and in the filter, on both databases', async () => {
        assert.deepEqual(await search('cafe'), ['Café culture']);
        assert.deepEqual(await search('CAFÉ'), ['Café culture']);
        assert.deepEqual(await search('éspresso'), ['Café culture']);
      });

      it('requires every word (AND), wherever each one is', async () => {
        assert.deepEqual(await search('spring garden'), ['Gardening in spring']);
        assert.deepEqual(await search('roses frost'), ['Winter roses']);
        assert.deepEqual(await search('spring roses'), ['Gardening in spring']);
        assert.deepEqual(await search('spring frost'), []);
      });

      it('ignores a filter of punctuation only, and treats punctuation as a separator', async () => {
        const everything = await search('');
        assert.equal(everything.length, Object.keys(ids).length);
        assert.deepEqual(await search('!!! ... ---'), everything);
        assert.deepEqual(await search('"*()'), everything);
        const sameAs: [string, string][] = [
          ['ro*', 'ro'],
          ['"spring', 'spring'],
          ['spring)', 'spring'],
          ['spring:garden', 'spring garden'],
          ['NOT spring', 'not spring'],
          ['roses OR tulip', 'roses or tulip'],
          ["spring' --", 'spring'],
        ];
        for (const [hostile, plain] of sameAs) {
          assert.deepEqual(await search(hostile), await search(plain), hostile);
        }
      });

      it('combines with issue_id', async () => {
        assert.deepEqual(await search('spr', `&issue_id=${issue}`), ['Gardening in spring']);
        assert.deepEqual(await search('roses', `&issue_id=${issue}`), ['Gardening in spring', 'Winter roses']);
        assert.deepEqual(await search('tulip', `&issue_id=${issue}`), ['Gardening in spring']);
      });

      it('pages the matches like any other listing', async () => {
        const response = await library.api.get(`${library.articles}/page/1?filter=zeppelin`);
        assert.deepEqual(response.body, { total: 0, page: 1, per_page: 20, pages: 0, records: [] });
        const walked: string[] = [];
        for (let page = 1; page <= 3; page += 1) {
          const one = await library.api.get(`${library.articles}/page/${page}?filter=spr&per_page=1&order_by=title&order_dir=asc`);
          assert.deepEqual([one.body.total, one.body.pages, one.body.records.length], [3, 3, 1]);
          walked.push(one.body.records[0].title);
        }
        assert.deepEqual(walked, await search('spr'));
      });

      it('follows updates and deletions of the articles', async () => {
        const article = await createArticle(library, { title: 'Ephemeral zeppelin' });
        assert.deepEqual(await search('zepp'), ['Ephemeral zeppelin']);
        await updateArticle(library, article.id, { title: 'Ephemeral airship' });
        assert.deepEqual(await search('zepp'), []);
        assert.deepEqual(await search('airsh'), ['Ephemeral airship']);
        await updateArticle(library, article.id, { info: 'formerly a zeppelin' });
        assert.deepEqual(await search('zepp'), ['Ephemeral airship']);
        await updateArticle(library, article.id, { info: null });
        assert.deepEqual(await search('zepp'), []);
        assert.equal((await library.api.delete(`${library.articles}/${article.id}`)).status, 204);
        assert.deepEqual(await search('airsh'), []);
      });

      it('refuses a filter longer than 200 characters', async () => {
        expectError(await library.api.get(`${library.articles}/page/1?filter=${'a'.repeat(201)}`), 400, 'validation_failed');
      });
    });

    describe('POST /articles/:app_id/flexpdf-import', () => {
      let press: Tenant;
      let issue: number;
      const importPath = () => `${press.articles}/flexpdf-import`;
      const entries = (count: number, prefix = 'Page') => Array.from({ length: count }, (_, index) => ({ title: `${prefix} ${index + 1}` }));

      /** Sends an import that must fail with 400 and checks that no article was created. */
      async function refusedImport(body: unknown) {
        const countBefore = await articleCount(press);
        const error = expectError(await press.api.post(importPath(), body), 400, 'validation_failed');
        assert.equal(await articleCount(press), countBefore, 'a refused import created articles');
        return error;
      }

      before(async () => {
        press = await createTenant(t, main.owner);
        issue = await createIssue(press, 'Print edition');
      });

      it('creates all the articles in order and answers 201 with {articles, count}', async () => {
        const response = await press.api.post(importPath(), {
          articles: [
            { title: 'Cover story', html: HOSTILE_HTML, cover: 'https://cdn.example.com/p1.png', issue_id: issue, unlock_type: 'paid', position: 1 },
            { title: 'Editorial', position: 2, source: 'scanner', issue_id: issue },
            { title: 'Letters', ignored_field: true },
          ],
        });
        assert.equal(response.status, 201, response.raw);
        assert.deepEqual(Object.keys(response.body).sort(), ['articles', 'count']);
        assert.equal(response.body.count, 3);
        const [cover, editorial, letters] = response.body.articles as Article[];
        assert.deepEqual([cover!.title, editorial!.title, letters!.title], ['Cover story', 'Editorial', 'Letters']);
        assert.ok(cover!.id < editorial!.id && editorial!.id < letters!.id);
        for (const article of [cover!, editorial!, letters!]) {
          assert.deepEqual(Object.keys(article).sort(), ARTICLE_FIELDS);
          assert.equal(article.publication_id, press.publicationId);
          assert.equal(article.author_id, press.owner.userId);
          assert.equal(article.visible, true);
          assert.deepEqual(await getArticle(press, article.id), article);
        }
        assert.deepEqual([cover!.source, editorial!.source, letters!.source], ['flexpdf', 'scanner', 'flexpdf']);
        assertSanitized(cover!.html);
        assert.deepEqual([cover!.cover, cover!.issue_id, cover!.unlock_type, cover!.position], ['https://cdn.example.com/p1.png', issue, 'paid', 1]);
        assert.deepEqual([letters!.unlock_type, letters!.issue_id, letters!.position, letters!.html], ['free', null, null, null]);
        const listed = await listArticles(press, `?issue_id=${issue}&order_by=position&order_dir=asc`);
        assert.deepEqual(
          listed.articles.map((article) => article.id),
          [cover!.id, editorial!.id],
        );
      });

      it('creates up to 500 articles at once', async () => {
        const countBefore = await articleCount(press);
        const response = await press.api.post(importPath(), { articles: entries(500, 'Bulk') });
        assert.equal(response.status, 201, response.raw);
        assert.equal(response.body.count, 500);
        assert.deepEqual(
          response.body.articles.map((article: Article) => article.title),
          entries(500, 'Bulk').map((entry) => entry.title),
        );
        assert.equal(await articleCount(press), countBefore + 500);
      });

      it('refuses the whole import when one entry has a bad field, naming its index', async () => {
        const cases: [Record<string, unknown>, number, string][] = [
          [{ title: 5 }, 3, 'title'],
          [{ html: '<p>no title</p>' }, 2, 'title'],
          [{ title: '' }, 0, 'title'],
          [{ title: 'x', unlock_type: 'premium' }, 4, 'unlock_type'],
          [{ title: 'x', position: -1 }, 1, 'position'],
          [{ title: 'x', issue_id: 'one' }, 2, 'issue_id'],
          [{ title: 'x', cover: 'javascript:alert(1)' }, 3, 'cover'],
        ];
        for (const [bad, index, field] of cases) {
          const articles: unknown[] = entries(5);
          articles[index] = bad;
          const error = await refusedImport({ articles });
          assert.ok(error.message.startsWith(`articles.${index}.${field}`), error.message);
          assert.ok(
            error.details.some((detail) => detail.path === `/articles/${index}/${field}`),
            JSON.stringify(error.details),
          );
        }
      });

      it('refuses the whole import when an entry names an issue of another publication or no issue', async () => {
        const sibling = await createTenant(t, press.owner);
        const foreignIssue = await createIssue(sibling, 'Not yours');
        for (const issueId of [foreignIssue, 2_000_000_000]) {
          const articles: unknown[] = entries(6);
          articles[0] = { title: 'Fine', issue_id: issue };
          articles[4] = { title: 'Wrong issue', issue_id: issueId };
          const error = await refusedImport({ articles });
          assert.deepEqual(
            error.details.map((detail) => detail.path),
            ['/articles/4/issue_id'],
          );
          assert.ok(error.message.startsWith('articles.4.issue_id'), error.message);
        }
      });

      it('takes the fields of an article as create does: info, date and category_ids are stored and returned', async () => {
        const travel = await createCategory(press, 'Travel');
        const food = await createCategory(press, 'Food');
        const response = await press.api.post(importPath(), {
          articles: [
            { title: 'Lisbon', info: 'Where to eat', date: '2026-12-01T10:30:00+01:00', category_ids: [food, travel] },
            { title: 'Porto', info: null, date: null, category_ids: [] },
            { title: 'Braga' },
          ],
        });
        assert.equal(response.status, 201, response.raw);
        const [lisbon, porto, braga] = response.body.articles as Article[];
        assert.deepEqual(
          [lisbon!.info, lisbon!.date, lisbon!.category_ids, lisbon!.categories],
          ['Where to eat', '2026-12-01 09:30:00', [travel, food], ['Travel', 'Food']],
        );
        for (const article of [porto!, braga!]) {
          assert.deepEqual([article.info, article.date, article.category_ids, article.categories], [null, null, [], []]);
        }
        for (const article of [lisbon!, porto!, braga!]) assert.deepEqual(await getArticle(press, article.id), article);
        const inTravel = await listArticles(press, '?order_dir=asc');
        assert.deepEqual(
          inTravel.articles.filter((article) => article.category_ids.includes(travel)).map((article) => article.id),
          [lisbon!.id],
        );
      });

      it('refuses an info, date or category_ids of the wrong type with a 400 naming the entry, never a 500, and stores nothing', async () => {
        const cases: [Record<string, unknown>, number, string][] = [
          [{ title: 'x', info: { a: 1 } }, 0, 'info'],
          [{ title: 'x', info: 12345 }, 1, 'info'],
          [{ title: 'x', info: ['a'] }, 2, 'info'],
          [{ title: 'x', info: 'i'.repeat(10_001) }, 3, 'info'],
          [{ title: 'x', date: 20261201 }, 4, 'date'],
          [{ title: 'x', date: { y: 2026 } }, 0, 'date'],
          [{ title: 'x', date: 'not a date' }, 1, 'date'],
          [{ title: 'x', category_ids: 'one' }, 2, 'category_ids'],
          [{ title: 'x', category_ids: [1, 1] }, 3, 'category_ids'],
          [{ title: 'x', category_ids: [{ id: 1 }] }, 4, 'category_ids/0'],
        ];
        for (const [bad, index, field] of cases) {
          const articles: unknown[] = entries(5);
          articles[index] = bad;
          const error = await refusedImport({ articles });
          assert.ok(
            error.details.some((detail) => detail.path === `/articles/${index}/${field}`),
            `${JSON.stringify(bad)}: ${JSON.stringify(error.details)}`,
          );
        }
      });

      it('refuses the whole import when an entry names a category of another publication or no category, naming the entry', async () => {
        const sibling = await createTenant(t, press.owner);
        const foreign = await createCategory(sibling, 'Not yours');
        const own = await createCategory(press, 'Ours');
        for (const categoryId of [foreign, 2_000_000_000]) {
          const articles: unknown[] = entries(4);
          articles[1] = { title: 'Fine', category_ids: [own] };
          articles[3] = { title: 'Wrong category', category_ids: [own, categoryId] };
          const error = await refusedImport({ articles });
          assert.deepEqual(
            error.details.map((detail) => detail.path),
            ['/articles/3/category_ids'],
          );
          assert.ok(error.message.startsWith('articles.3.category_ids'), error.message);
        }
      });

      it('refuses an empty list, more than 500 entries and a body without a list', async () => {
        await refusedImport({ articles: [] });
        await refusedImport({ articles: entries(501) });
        await refusedImport({});
        await refusedImport({ articles: { title: 'not a list' } });
        await refusedImport({ articles: ['Page 1'] });
      });

      it('creates nothing when the database fails half-way through', async () => {
        const restore = await failInsertsTitled(t.storage, 'Poison pill');
        try {
          const countBefore = await articleCount(press);
          const articles = [...entries(3, 'Before the failure'), { title: 'Poison pill' }, ...entries(2, 'After')];
          expectError(await press.api.post(importPath(), { articles }), 500, 'internal');
          assert.equal(await articleCount(press), countBefore);
        } finally {
          await restore();
        }
        assert.equal((await press.api.post(importPath(), { articles: [{ title: 'Poison pill' }] })).status, 201);
      });
    });
  });
}
