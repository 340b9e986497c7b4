// Large article answers (the list, a page, the FlexPDF import's result) are streamed a slice of articles at a time
// rather than serialized in one go. What a client receives must not change: the same JSON, byte for byte, as the
// route's schema serializer writes for a small answer — the envelope's fields in the spec's order, every article with
// every field in the Article schema's order, the articles in the order asked for.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Article, createCategory, createTenant, type Tenant } from '../helpers/articles.js';
import { DIALECTS, startApp, type TestApp } from '../helpers/app.js';

/** About `bytes` of markup that survives the sanitizer unchanged in length class, with text that JSON escapes. */
function bigHtml(bytes: number, seed: number): string {
  const paragraph = `<p>Story ${seed}: “quoted” \\ back-slash, tab\there, <a href="https://example.com/${seed}?a=1&amp;b=2">a link</a> ✓ 😀</p>\n`;
  return paragraph.repeat(Math.ceil(bytes / paragraph.length));
}

/** Plain text that JSON must escape, kept as is in `info`. */
const ODD_INFO = 'Line one\nline "two"\t\\ tab, U+2028 [\u2028], U+2029 [\u2029], DEL [\u007f], </script>, é, 日本語, 😀';

/** The raw JSON of GET /articles/:app_id/:id (one article: always serialized at once by the route's schema). */
async function rawOne(tenant: Tenant, id: number): Promise<string> {
  const response = await tenant.api.get(`${tenant.articles}/${id}`);
  assert.equal(response.status, 200);
  assert.ok(response.headers['content-length'], 'one article is not streamed');
  return response.raw;
}

for (const dialect of DIALECTS) {
  describe(`Large article answers are streamed as the same JSON (${dialect})`, () => {
    let t: TestApp;
    let big: Tenant;
    let small: Tenant;
    let importedIds: number[];
    let importRaw: string;
    /** Each imported article's own raw JSON, read right after the import. */
    let singlesAtImport: string[];
    let importHeaders: Record<string, unknown>;

    before(async () => {
      t = await startApp(dialect);
      big = await createTenant(t);
      small = await createTenant(t, big.owner);
      const travel = await createCategory(big, 'Travel');
      const food = await createCategory(big, 'Food');
      // Eight articles of ~300 KB: 2.4 MB in all, streamed (from 1 MiB on), about three articles a slice.
      const articles = Array.from({ length: 8 }, (_, i) => ({
        title: `Big "${i}" ✓`,
        info: i % 2 === 0 ? ODD_INFO : null,
        html: bigHtml(300_000, i),
        date: i % 3 === 0 ? null : `2026-0${(i % 9) + 1}-15T08:00:00Z`,
        category_ids: i % 2 === 0 ? [food, travel] : [travel],
        position: i % 4 === 0 ? null : i,
        unlock_type: i % 2 === 0 ? 'paid' : 'free',
      }));
      const response = await big.api.post(`${big.articles}/flexpdf-import`, { articles });
      assert.equal(response.status, 201, response.raw.slice(0, 300));
      importRaw = response.raw;
      importHeaders = response.headers;
      importedIds = (response.body.articles as Article[]).map((article) => article.id);
      singlesAtImport = await Promise.all(importedIds.map((id) => rawOne(big, id)));
      // Assets on one of them (set by update only): an object the schema passes through as it is.
      const updated = await big.api.put(`${big.articles}/${importedIds[3]}`, {
        assets: { pdf: 'https://cdn.example.com/a.pdf', pages: [1, 2], nested: { ok: true } },
      });
      assert.equal(updated.status, 200, updated.raw.slice(0, 300));
      for (let i = 0; i < 3; i++) {
        assert.equal((await small.api.post(small.articles, { title: `Small ${i}`, info: ODD_INFO, html: '<p>short</p>' })).status, 201);
      }
    });
    after(async () => t.close());

    it('answers the import with {"articles", "count"} streamed, byte for byte what the schema serializer writes', async () => {
      assert.equal(importedIds.length, 8);
      assert.equal(importHeaders['content-type'], 'application/json; charset=utf-8');
      assert.equal(importHeaders['content-length'], undefined, 'streamed, so no length is known in advance');
      const parsed = JSON.parse(importRaw) as { articles: Article[]; count: number };
      assert.deepEqual(Object.keys(parsed), ['articles', 'count']);
      assert.equal(parsed.count, 8);
      assert.equal(importRaw, `{"articles":[${singlesAtImport.join(',')}],"count":8}`);
      assert.deepEqual(
        parsed.articles.map((article) => article.title),
        Array.from({ length: 8 }, (_, i) => `Big "${i}" ✓`),
      );
    });

    it('answers a large page with the envelope {total, page, per_page, pages, records} streamed, byte for byte the same', async () => {
      for (const [query, order] of [
        ['?per_page=100&order_dir=asc', [...importedIds]],
        ['?per_page=100', [...importedIds].reverse()],
        ['?per_page=5&order_by=title&order_dir=desc', [...importedIds].reverse().slice(0, 5)],
      ] as const) {
        const response = await big.api.get(`${big.articles}/page/1${query}`);
        assert.equal(response.status, 200, response.raw.slice(0, 300));
        assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
        assert.equal(response.headers['content-length'], undefined, `${query}: streamed`);
        const perPage = Number(new URLSearchParams(query).get('per_page'));
        const singles = await Promise.all(order.map((id) => rawOne(big, id)));
        assert.equal(
          response.raw,
          `{"total":8,"page":1,"per_page":${perPage},"pages":${Math.ceil(8 / perPage)},"records":[${singles.join(',')}]}`,
          query,
        );
        assert.deepEqual(Object.keys(response.body), ['total', 'page', 'per_page', 'pages', 'records']);
      }
      // The second page of five: the last three, in order; the page arithmetic unchanged.
      const second = await big.api.get(`${big.articles}/page/2?per_page=5&order_dir=asc`);
      assert.deepEqual(
        { ...second.body, records: second.body.records.map((article: Article) => article.id) },
        { total: 8, page: 2, per_page: 5, pages: 2, records: importedIds.slice(5) },
      );
      // Past the last page: an empty page, not streamed.
      const past = await big.api.get(`${big.articles}/page/3?per_page=5`);
      assert.equal(past.raw, '{"total":8,"page":3,"per_page":5,"pages":2,"records":[]}');
    });

    it('answers a large list streamed as a JSON array, byte for byte the same, with its headers', async () => {
      const response = await big.api.get(`${big.articles}?order_dir=asc`);
      assert.equal(response.status, 200);
      assert.equal(response.headers['content-length'], undefined, 'streamed');
      assert.equal(response.headers['x-total-count'], '8');
      assert.equal(response.headers.link, undefined, '2.4 MB is under the list bound: all of it, no next link');
      const singles = await Promise.all(importedIds.map((id) => rawOne(big, id)));
      assert.equal(response.raw, `[${singles.join(',')}]`);
    });

    it('serializes small answers at once, in the same shape', async () => {
      const list = await small.api.get(`${small.articles}?order_dir=asc`);
      assert.ok(list.headers['content-length'], 'small: serialized at once');
      const ids = (list.body as Article[]).map((article) => article.id);
      const singles = await Promise.all(ids.map((id) => rawOne(small, id)));
      assert.equal(list.raw, `[${singles.join(',')}]`);
      const page = await small.api.get(`${small.articles}/page/1?per_page=2&order_dir=asc`);
      assert.ok(page.headers['content-length']);
      assert.equal(page.raw, `{"total":3,"page":1,"per_page":2,"pages":2,"records":[${singles.slice(0, 2).join(',')}]}`);
      assert.equal(list.headers['content-type'], 'application/json; charset=utf-8');
    });
  });
}
