// No request, import or synchronization holds the event loop for long: sanitizing, reading feeds and parsing large
// bodies run in worker threads, and long database work lets the loop turn. Behaviour is asserted (results right,
// roles checked before the body is read); the loop's responsiveness only with a bound far above what it is now
// (tens of ms) and far below what it was (several seconds for the same work), so that a loaded machine cannot flake.

import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { client, createOwner, createPublication, DIALECTS, expectError, type Owner, startApp, type TestApp } from '../helpers/app.js';
import { PORTAL } from '../helpers/portal.js';
import { createClientUser } from '../helpers/roles.js';
import { feedServer } from './feeds/fixtures.js';

/** The event loop's longest stall while `work` runs: the larger of a 10 ms timer's longest gap and monitorEventLoopDelay's max. */
async function longestStall<T>(work: () => Promise<T>): Promise<{ result: T; stallMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  let last = performance.now();
  let gap = 0;
  const probe = setInterval(() => {
    const now = performance.now();
    gap = Math.max(gap, now - last);
    last = now;
  }, 10);
  await sleep(30);
  histogram.reset();
  gap = 0;
  last = performance.now();
  try {
    const result = await work();
    await sleep(30);
    return { result, stallMs: Math.max(gap, histogram.max / 1e6) };
  } finally {
    clearInterval(probe);
    histogram.disable();
  }
}

/** Before this work it was several seconds; now tens of milliseconds. */
const STALL_BOUND_MS = 1000;

/** About `bytes` of ordinary article markup, with a script and a handler to be cleaned away. */
function articleHtml(bytes: number, seed: number): string {
  const paragraph = `<p>Paragraph ${seed} with <b>bold</b>, a <a href="https://example.com/${seed}">link</a> and text.</p>\n`;
  const hostile = '<p onclick="steal()">Hello</p><script>steal()</script>';
  return hostile + paragraph.repeat(Math.floor((bytes - hostile.length) / paragraph.length));
}

/** About `bytes` of deeply nested markup. */
function nestedHtml(bytes: number, seed: number): string {
  const open = '<div><span>'.repeat(300);
  const close = '</span></div>'.repeat(300);
  let inner = '';
  while (open.length + inner.length + close.length < bytes) inner += `<p>entry ${seed} <a href="/p/${seed}">more</a><script>x()</script></p>`;
  return open + inner + close;
}

for (const dialect of DIALECTS) {
  describe(`The event loop stays free (${dialect})`, () => {
    let t: TestApp;
    let owner: Owner;
    let api: ReturnType<typeof client>;
    let appId: string;
    let publicationId: number;
    let server: Awaited<ReturnType<typeof feedServer>>;

    before(async () => {
      server = await feedServer();
      t = await startApp(dialect, { OUTBOUND_ALLOW: `127.0.0.1:${server.port}` });
      owner = await createOwner(t.storage);
      const publication = await createPublication(t.storage, owner.accountId);
      appId = publication.app_id;
      publicationId = publication.id;
      api = client(t.app, owner.apiKey);
    });
    after(async () => {
      await t.close();
      await server.close();
    });

    const importUrl = () => `${PORTAL}/articles/${appId}/flexpdf-import`;

    it('imports twelve 1 MB articles, sanitized in worker threads, while the loop keeps turning; the list stops at 8 MiB and links the rest', async () => {
      const articles = Array.from({ length: 12 }, (_, i) => ({ title: `Big ${i}`, html: articleHtml(990_000, i) }));
      const body = JSON.stringify({ articles });
      const { result, stallMs } = await longestStall(() => api.post(importUrl(), body));
      assert.equal(result.status, 201, result.raw.slice(0, 300));
      assert.equal(result.body.count, 12);
      for (const [i, article] of (result.body.articles as { title: string; html: string }[]).entries()) {
        assert.equal(article.title, `Big ${i}`);
        assert.ok(!article.html.includes('<script') && !article.html.includes('onclick'), 'cleaned with the allow-list');
        assert.ok(article.html.includes(`<a href="https://example.com/${i}">link</a>`));
      }
      assert.ok(stallMs < STALL_BOUND_MS, `the event loop stalled ${stallMs.toFixed(0)} ms`);

      const list = await longestStall(() => api.get(`${PORTAL}/articles/${appId}?order_dir=asc`));
      assert.equal(list.result.status, 200);
      assert.equal(list.result.headers['x-total-count'], '12');
      // Each article holds about 1 MB of HTML: eight fit in 8 MiB.
      let bytes = 0;
      const fitting = (result.body.articles as { html: string }[]).filter(
        (article) => (bytes += Buffer.byteLength(article.html)) <= 8 * 1024 * 1024,
      ).length;
      assert.equal(fitting, 8);
      assert.deepEqual(
        list.result.body.map((article: { title: string }) => article.title),
        articles.slice(0, 8).map((article) => article.title),
      );
      const link = String(list.result.headers.link);
      const next = /^<([^>]+)>; rel="next"$/.exec(link)?.[1];
      assert.ok(next, link);
      assert.match(next, /[?&]order_dir=asc/);
      assert.match(next, /[?&]offset=8/);
      assert.ok(list.stallMs < STALL_BOUND_MS, `the event loop stalled ${list.stallMs.toFixed(0)} ms`);
      const rest = await api.get(next);
      assert.equal(rest.headers['x-total-count'], '12');
      assert.deepEqual(
        rest.body.map((article: { title: string }) => article.title),
        articles.slice(8).map((article) => article.title),
      );
      assert.equal(rest.headers.link, undefined, 'the end of the list names no next');
    });

    it('imports 30 articles of 1,000,000 characters (the limit) and answers them streamed, and a page of them, while the loop keeps turning', async () => {
      const own = await createPublication(t.storage, owner.accountId);
      const articles = Array.from({ length: 30 }, (_, i) => ({ title: `Limit ${i}`, html: articleHtml(1_000_000, i).padEnd(1_000_000, ' ') }));
      assert.ok(articles.every((article) => article.html.length === 1_000_000));
      const body = JSON.stringify({ articles });
      const send = () =>
        t.app.inject({
          method: 'POST',
          url: `${PORTAL}/articles/${own.app_id}/flexpdf-import`,
          headers: { 'x-api-key': owner.apiKey, 'content-type': 'application/json' },
          payload: body,
        });
      // Validating 30 strings of a million characters, parsing, sanitizing, storing and answering with 30 MB.
      const imported = await longestStall(send);
      assert.equal(imported.result.statusCode, 201, imported.result.body.slice(0, 300));
      assert.equal(imported.result.headers['content-length'], undefined, 'the answer is streamed');
      const result = JSON.parse(imported.result.body) as { articles: { id: number; title: string; html: string }[]; count: number };
      assert.deepEqual(Object.keys(result), ['articles', 'count']);
      assert.equal(result.count, 30);
      assert.deepEqual(
        result.articles.map((article) => article.title),
        articles.map((article) => article.title),
      );
      for (const [i, article] of result.articles.entries()) {
        assert.ok(!article.html.includes('<script') && article.html.includes(`<a href="https://example.com/${i}">link</a>`), 'cleaned');
      }
      assert.ok(imported.stallMs < STALL_BOUND_MS, `the event loop stalled ${imported.stallMs.toFixed(0)} ms`);

      // One character more than the limit is refused, naming the entry (the length is still counted exactly).
      const tooLong = JSON.stringify({ articles: [{ title: 'ok' }, { title: 'Long', html: 'x'.repeat(1_000_001) }] });
      const refused = expectError(await api.post(`${PORTAL}/articles/${own.app_id}/flexpdf-import`, tooLong), 400, 'validation_failed');
      assert.deepEqual(refused.details[0], { path: '/articles/1/html', message: 'must NOT have more than 1000000 characters' });

      // All 30 on one page: 30 MB, streamed; the envelope and the order as the spec has them.
      const page = await longestStall(() =>
        t.app.inject({
          method: 'GET',
          url: `${PORTAL}/articles/${own.app_id}/page/1?per_page=100&order_dir=asc`,
          headers: { 'x-api-key': owner.apiKey },
        }),
      );
      assert.equal(page.result.statusCode, 200);
      assert.equal(page.result.headers['content-length'], undefined, 'the page is streamed');
      const envelope = JSON.parse(page.result.body) as { records: { id: number }[] };
      assert.deepEqual(Object.keys(envelope), ['total', 'page', 'per_page', 'pages', 'records']);
      assert.deepEqual(
        { ...envelope, records: envelope.records.map((article) => article.id) },
        { total: 30, page: 1, per_page: 100, pages: 1, records: result.articles.map((article) => article.id) },
      );
      assert.ok(page.stallMs < STALL_BOUND_MS, `the event loop stalled ${page.stallMs.toFixed(0)} ms`);
    });

    it('creates and updates a 1 MB article with its HTML sanitized', async () => {
      const created = await api.post(`${PORTAL}/articles/${appId}`, { title: 'One', html: articleHtml(990_000, 99) });
      assert.equal(created.status, 201);
      assert.ok(!created.body.html.includes('<script') && created.body.html.includes('<b>bold</b>'));
      const updated = await api.put(`${PORTAL}/articles/${appId}/${created.body.id}`, { html: '<p onclick="x()">Short<script>x()</script></p>' });
      assert.equal(updated.status, 200);
      assert.equal(updated.body.html, '<p>Short</p>');
    });

    it("refuses a viewer's 28 MiB import with 403 before its body is parsed or validated", async () => {
      const viewer = await createClientUser(t.storage, owner.accountId, [{ publicationId, accessLevel: 'viewer' }]);
      const item = JSON.stringify({ title: 'x' });
      const body = `{"articles":[${Array(Math.floor((28 * 1024 * 1024) / (item.length + 1)))
        .fill(item)
        .join(',')}]}`;
      // Were the body parsed and validated first, this would be a 400 (more than 500 items).
      const { result, stallMs } = await longestStall(async () => client(t.app, viewer.apiKey).post(importUrl(), body));
      expectError(result, 403, 'forbidden');
      assert.ok(stallMs < STALL_BOUND_MS, `the event loop stalled ${stallMs.toFixed(0)} ms`);
      expectError(await client(t.app, viewer.apiKey).post(`${PORTAL}/articles/no-such-app/flexpdf-import`, body), 404, 'not_found');
    });

    it('parses a large import body in a worker with the same rules and messages as on the loop', async () => {
      // The same problems, once in a small body (parsed on the loop) and once padded past 512 KiB (parsed in a worker).
      const pad = (json: string) => json.replace(/^\{/, `{"padding":"${'x'.repeat(600 * 1024)}",`);
      const tooMany = JSON.stringify({ articles: Array.from({ length: 501 }, (_, i) => ({ title: `T${i}` })) });
      const cases: [string, string][] = [
        ['more than 500 items', tooMany],
        ['not JSON', '{"articles": [}'],
        ['a NUL', JSON.stringify({ articles: [{ title: 'ok' }, { title: 'a\u0000b' }] })],
        ['prototype poisoning', '{"articles": [{"title": "x"}], "__proto__": {"admin": true}}'],
        ['too deep', JSON.stringify({ articles: [{ title: 'x' }], deep: JSON.parse('['.repeat(40) + ']'.repeat(40)) })],
        ['a bad entry', JSON.stringify({ articles: [{ title: 'ok' }, { title: 'ok' }, { title: 5 }] })],
      ];
      for (const [what, json] of cases) {
        const small = await api.post(importUrl(), json);
        const large = await api.post(importUrl(), pad(json));
        assert.equal(small.status, 400, `${what}: ${small.raw}`);
        assert.equal(large.status, 400, `${what}: ${large.raw.slice(0, 300)}`);
        assert.deepEqual(large.body, small.body, what);
      }
      const tooManyError = expectError(await api.post(importUrl(), pad(tooMany)), 400, 'validation_failed');
      assert.deepEqual(tooManyError.details, [{ path: '/articles', message: 'must NOT have more than 500 items' }]);
      const badEntry = expectError(await api.post(importUrl(), pad(cases[5]![1])), 400, 'validation_failed');
      assert.equal(badEntry.details[0]!.path, '/articles/2/title');
      // A large valid body is imported.
      const ok = await api.post(importUrl(), pad(JSON.stringify({ articles: [{ title: 'Padded', html: '<p>x<script>y()</script></p>' }] })));
      assert.equal(ok.status, 201, ok.raw.slice(0, 300));
      assert.equal(ok.body.articles[0].html, '<p>x</p>');
    });

    it('reads and cleans a feed of 300 entries of 15 KB nested markup off the event loop, and again when it changes', async () => {
      let title = 'Entry';
      const feed =
        () => `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Nested</title><link>https://blog.example.com/</link><description>d</description>
${Array.from({ length: 300 }, (_, i) => `<item><guid>n${i}</guid><title>${title} ${i}</title><link>https://blog.example.com/${i}</link><description><![CDATA[${nestedHtml(15_000, i)}]]></description></item>`).join('\n')}
</channel></rss>`;
      server.routes.set('/nested.xml', (_request, response) => response.writeHead(200, { 'content-type': 'application/rss+xml' }).end(feed()));
      const created = await api.post(`${PORTAL}/rss_feeds/${appId}`, { url: `${server.base}/nested.xml` });
      assert.equal(created.status, 201, created.raw);
      const synchronize = () => api.post(`${PORTAL}/rss_feeds/${appId}/${created.body.id}/synchronize`, {});

      const first = await longestStall(synchronize);
      assert.equal(first.result.body.job_status, 'completed', JSON.stringify(first.result.body.errors));
      assert.equal(first.result.body.imported, 300);
      assert.ok(first.stallMs < STALL_BOUND_MS, `the event loop stalled ${first.stallMs.toFixed(0)} ms`);
      const stored = await t.storage.db
        .selectFrom('articles')
        .select(['title', 'html'])
        .where('rss_feed_id', '=', created.body.id)
        .orderBy('id')
        .execute();
      assert.equal(stored.length, 300);
      assert.equal(stored[7]!.title, 'Entry 7');
      assert.ok(
        stored.every((row) => row.html && !row.html.includes('<script') && row.html.includes('href="https://blog.example.com/p/')),
        'sanitized, with absolute URLs',
      );

      assert.equal((await synchronize()).body.unchanged, 300);
      title = 'Changed';
      const changed = await longestStall(synchronize);
      assert.equal(changed.result.body.updated, 300);
      assert.ok(changed.stallMs < STALL_BOUND_MS, `the event loop stalled ${changed.stallMs.toFixed(0)} ms`);
    });
  });
}
