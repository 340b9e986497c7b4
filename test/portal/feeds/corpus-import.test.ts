import assert from 'node:assert/strict';
import { basename, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseFeed } from '../../../src/reader/index.js';
import { client, createOwner, createPublication, DIALECTS, startApp, type TestApp } from '../../helpers/app.js';
import { PORTAL } from '../../helpers/portal.js';
import { CORPUS, DANGEROUS_HTML, read, wellFormedFiles } from '../../reader/corpus.js';
import { feedServer, type FeedServer } from './fixtures.js';

// Every well-formed feed of the corpus (test/fixtures/feeds, or FEED_CORPUS), served by a local server, created and
// synchronized through the HTTP API: each imports without a failed entry, every entry with a title or content
// becomes an article, and no stored article carries a script, an event handler or a dangerous URL.

/** Iframes only from the video hosts the sanitizer lists. */
const IFRAME = /<iframe\b[^>]*>/gi;
const LISTED_FRAME = /^<iframe\b[^>]*\ssrc="https:\/\/(?:www\.youtube\.com|www\.youtube-nocookie\.com|player\.vimeo\.com)\//i;
/** Not a feed: a Microsoft CDF channel (<CHANNEL>), a format of its own. */
const NOT_FEEDS = new Set(['cdf_item_abstract_xml_base.xml']);
/** Feeds created and synchronized at the same time. */
const PARALLEL = 8;

function expectedArticles(body: Buffer, url: string): number {
  const entries = parseFeed({ body, url }).entries;
  return new Set(entries.filter((entry) => entry.title || entry.html).map((entry) => entry.key)).size;
}

for (const dialect of DIALECTS) {
  describe(`feed corpora imported through the API (${dialect})`, () => {
    let server: FeedServer;
    let t: TestApp;
    let api: ReturnType<typeof client>;
    let appId: string;
    const files = wellFormedFiles();

    before(async () => {
      server = await feedServer();
      files.forEach((path, index) => {
        const body = read(path);
        server.routes.set(`/corpus/${index}`, (_request, response) => response.writeHead(200).end(body));
      });
      t = await startApp(dialect, { OUTBOUND_ALLOW: `127.0.0.1:${server.port}` });
      const owner = await createOwner(t.storage);
      appId = (await createPublication(t.storage, owner.accountId)).app_id;
      api = client(t.app, owner.apiKey);
    });
    after(async () => {
      await t.close();
      await server.close();
    });

    it('imports every well-formed feed with no failed entry and nothing dangerous in any article', async () => {
      assert.ok(files.length > 1500, `${files.length} files`);
      const problems: string[] = [];
      let articles = 0;
      let sanitizeCases = 0;

      async function importOne(path: string, index: number): Promise<void> {
        const name = relative(CORPUS, path);
        const url = `${server.base}/corpus/${index}`;
        const created = await api.post(`${PORTAL}/rss_feeds/${appId}`, { url });
        if (NOT_FEEDS.has(basename(path))) {
          if (created.status !== 400) problems.push(`${name}: expected 400 (not a feed), got ${created.status}`);
          return;
        }
        if (created.status !== 201) {
          problems.push(`${name}: create answered ${created.status} ${created.raw.slice(0, 200)}`);
          return;
        }
        const sync = await api.post(`${PORTAL}/rss_feeds/${appId}/${created.body.id}/synchronize`);
        const result = sync.body;
        if (sync.status !== 200 || result.job_status !== 'completed' || result.failed !== 0 || result.errors.length > 0) {
          problems.push(`${name}: synchronize answered ${sync.status} ${sync.raw.slice(0, 300)}`);
          return;
        }
        const expected = expectedArticles(read(path), url);
        if (result.imported !== expected) problems.push(`${name}: imported ${result.imported} of ${expected} entries with a title or content`);
        const stored = await t.storage.db
          .selectFrom('articles')
          .select(['title', 'info', 'html', 'cover', 'source', 'rss_feed_id'])
          .where('rss_feed_id', '=', created.body.id)
          .execute();
        if (stored.length !== result.imported) problems.push(`${name}: ${stored.length} articles stored, ${result.imported} reported`);
        articles += stored.length;
        if (name.includes('/sanitize/')) sanitizeCases += 1;
        for (const article of stored) {
          for (const pattern of DANGEROUS_HTML) {
            if (pattern.test(article.html ?? '')) problems.push(`${name}: html matches ${pattern}: ${article.html?.slice(0, 300)}`);
          }
          for (const [frame] of (article.html ?? '').matchAll(IFRAME)) {
            if (!LISTED_FRAME.test(frame)) problems.push(`${name}: an iframe from an unlisted host: ${frame}`);
          }
          if (/[<>]/.test(article.title) && /<script|\son[a-z]+\s*=/i.test(article.title))
            problems.push(`${name}: title carries markup: ${article.title}`);
          if (article.cover && !/^https?:\/\//i.test(article.cover)) problems.push(`${name}: cover is not an http(s) URL: ${article.cover}`);
          if (article.source !== 'rss') problems.push(`${name}: source ${article.source}`);
        }
      }

      for (let start = 0; start < files.length; start += PARALLEL) {
        await Promise.all(files.slice(start, start + PARALLEL).map((path, offset) => importOne(path, start + offset)));
      }
      assert.deepEqual(problems, []);
      assert.ok(articles > 750, `${articles} articles`);
      assert.ok(sanitizeCases > 100, `${sanitizeCases} sanitizer cases imported`);
    });
  });
}
