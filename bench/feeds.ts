// The feed rows of `npm run bench` (alone: BENCH_ONLY=feeds).
//
// 1. Import of a generated 1,000-entry feed (~2 KB of html an entry) through the real app on a SQLite file, in a
//    child process of its own so that its peak memory (maxRSS) is the import's: created and synchronized through
//    the API from a local HTTP server. Then re-synchronizations of the unchanged feed, via 304 Not Modified (ETag)
//    and via 200 with identical content, with the rows each one writes (counted by temporary triggers).
// 2. Parsing throughput in MB/s of Masthead's parser (src/reader: decoding, parsing, normalizing and
//    sanitizing every entry) beside rss-parser and @rowanmanning/feed-parser (parsing only, every field read) on the
//    same inputs: the XML files of the test corpus that all three read (test/fixtures/feeds, or the larger folder
//    named by FEED_CORPUS, e.g. FEED_CORPUS=../shared/feeds), and the generated feed.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseFeed as parseWithRowanmanning } from '@rowanmanning/feed-parser';
import { sql } from 'kysely';
import RssParser from 'rss-parser';
import { type FeedEntry, parseFeed } from '../src/reader/index.js';
import { read, wellFormedFiles } from '../test/reader/corpus.js';
import { fixed, table } from './report.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHILD_FLAG = '--feed-import-child';
const ENTRIES = 1_000;
const RESYNCS = 5;
/** Seconds each parser spends on each input set. */
const PARSE_SECONDS = Math.min(Math.max(Number(process.env.BENCH_DURATION ?? 10) / 3, 1), 3);

/** A feed of `entries` items of about 2 KB of html each, dated a day apart (so nothing about it changes by the hour). */
export function generateFeed(entries = ENTRIES): string {
  const paragraph =
    '<p>The harbour was quiet that <strong>morning</strong>, and the market had not yet opened; the fishermen mended ' +
    'their nets by the old stone bridge. <a href="/harbour/history">Read more about the harbour</a> &amp; its trade.</p>';
  let html = '<h2>A morning at the harbour</h2><img src="/images/harbour.jpg" alt="The harbour">';
  while (html.length < 2_000) html += paragraph;
  const day = 24 * 60 * 60 * 1000;
  const items = Array.from({ length: entries }, (_, i) => {
    const date = new Date(Date.UTC(2024, 0, 1) - i * day).toUTCString();
    return `<item><title>Entry ${i}: a morning at the harbour</title><link>https://blog.example.com/posts/${i}</link>
<guid isPermaLink="false">entry-${i}</guid><pubDate>${date}</pubDate><dc:creator>Writer ${i % 7}</dc:creator>
<category>Harbour</category><enclosure url="https://cdn.example.com/${i}.jpg" type="image/jpeg" length="1000"/>
<description>Fishermen, ferries and the first light over the bay (${i}).</description>
<content:encoded><![CDATA[${html}]]></content:encoded></item>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:content="http://purl.org/rss/1.0/modules/content/">
<channel><title>The Harbour Blog</title><link>https://blog.example.com/</link><description>Notes from the harbour</description>
${items.join('\n')}
</channel></rss>`;
}

// --- 1. import and re-sync, in a child process ----------------------------------------------------------------

interface SyncMeasure {
  ms: number;
  articleRows: number;
  feedRowWrites: number;
  imported: number;
  unchanged: number;
  notModified: boolean;
}

interface ImportReport {
  bytes: number;
  import: SyncMeasure;
  rssBeforeMiB: number;
  peakRssMiB: number;
  resync304: SyncMeasure;
  resync200: SyncMeasure;
}

/** Runs in the child: the real app on a fresh SQLite file, fed by a local server in the same process. */
async function importChild(): Promise<void> {
  const { buildApp } = await import('../src/app.js');
  const { loadConfig } = await import('../src/config.js');
  const { openStorage } = await import('../src/db/connection.js');
  const { migrateToLatest } = await import('../src/db/migrate.js');
  const { AccountQueries } = await import('../src/accounts/queries.js');
  const { AccountService } = await import('../src/accounts/service.js');
  const { PublicationQueries } = await import('../src/portal/publications/queries.js');
  const { PublicationService } = await import('../src/portal/publications/service.js');

  const body = Buffer.from(generateFeed());
  const small = Buffer.from(generateFeed(20));
  const server = createServer((request, response) => {
    const path = request.url ?? '/';
    if (path === '/small.xml') return void response.writeHead(200, { 'content-type': 'application/rss+xml' }).end(small);
    if (path === '/with-etag.xml') {
      if (request.headers['if-none-match'] === '"v1"') return void response.writeHead(304, { etag: '"v1"' }).end();
      return void response.writeHead(200, { 'content-type': 'application/rss+xml', etag: '"v1"' }).end(body);
    }
    // No validators: every synchronize downloads and parses the whole feed again.
    response.writeHead(200, { 'content-type': 'application/rss+xml' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const folder = mkdtempSync(join(tmpdir(), 'masthead-feed-bench-'));
  const config = loadConfig({
    DATABASE_URL: join(folder, 'feeds.sqlite'),
    OUTBOUND_ALLOW: `127.0.0.1:${port}`,
    FEED_SCHEDULER: 'off',
    LEAD_WORKER: 'off',
    LOG_LEVEL: 'silent',
  });
  const storage = openStorage(config.databaseUrl);
  await migrateToLatest(storage.db, storage.dialect);
  const app = await buildApp({ config, storage, logRequests: false });
  await app.ready();
  try {
    const { account, api_key: apiKey } = await new AccountService(new AccountQueries(storage.db)).createAccount({
      email: 'bench@example.com',
      password: 'a long enough password',
    });
    const { app_id: appId } = await new PublicationService(new PublicationQueries(storage.db)).create({ accountId: account.id, appId: 'feed-bench' });
    const call = async (url: string, payload: object = {}) => {
      const response = await app.inject({
        method: 'POST',
        url: `/api/portal/v1${url}`,
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        payload: JSON.stringify(payload),
      });
      if (response.statusCode >= 300) throw new Error(`POST ${url} answered ${response.statusCode}: ${response.body.slice(0, 300)}`);
      return response.json();
    };

    // Counters of rows written, by temporary triggers (they live on this connection only).
    await sql`create temp table bench_writes (name text primary key, n integer not null)`.execute(storage.db);
    for (const name of ['articles', 'article_categories', 'feed_entries', 'rss_feeds']) {
      await sql`insert into bench_writes values (${name}, 0)`.execute(storage.db);
      for (const event of ['insert', 'update', 'delete']) {
        await sql
          .raw(
            `create temp trigger bench_${name}_${event} after ${event} on main.${name} begin update bench_writes set n = n + 1 where name = '${name}'; end`,
          )
          .execute(storage.db);
      }
    }
    const counts = async () => {
      const { rows } = await sql<{ name: string; n: number }>`select name, n from bench_writes`.execute(storage.db);
      const by = Object.fromEntries(rows.map((row) => [row.name, Number(row.n)]));
      return { article: by.articles! + by.article_categories! + by.feed_entries!, feed: by.rss_feeds! };
    };
    const synchronize = async (feedId: number): Promise<SyncMeasure> => {
      const before = await counts();
      const started = performance.now();
      const result = await call(`/rss_feeds/${appId}/${feedId}/synchronize`);
      const ms = performance.now() - started;
      if (result.job_status !== 'completed') throw new Error(`synchronize failed: ${JSON.stringify(result.errors)}`);
      const after = await counts();
      return {
        ms,
        articleRows: after.article - before.article,
        feedRowWrites: after.feed - before.feed,
        imported: result.imported,
        unchanged: result.unchanged,
        notModified: result.not_modified,
      };
    };
    const median = (runs: SyncMeasure[]) => [...runs].sort((a, b) => a.ms - b.ms)[Math.floor(runs.length / 2)]!;
    const resyncs = async (feedId: number) => {
      const runs: SyncMeasure[] = [];
      for (let i = 0; i < RESYNCS; i++) runs.push(await synchronize(feedId));
      // Every run must have written nothing to articles; the median is shown.
      return { ...median(runs), articleRows: Math.max(...runs.map((run) => run.articleRows)) };
    };

    // Warm-up: modules loaded and code compiled on a small feed, so that the import measures the import.
    const warm = await call(`/rss_feeds/${appId}`, { url: `http://127.0.0.1:${port}/small.xml` });
    await synchronize(warm.id);

    const withEtag = await call(`/rss_feeds/${appId}`, { url: `http://127.0.0.1:${port}/with-etag.xml` });
    const rssBefore = process.memoryUsage().rss;
    const imported = await synchronize(withEtag.id);
    const peakRss = process.resourceUsage().maxRSS * 1024;
    const resync304 = await resyncs(withEtag.id);

    const withoutValidators = await call(`/rss_feeds/${appId}`, { url: `http://127.0.0.1:${port}/plain.xml` });
    await synchronize(withoutValidators.id);
    const resync200 = await resyncs(withoutValidators.id);

    const report: ImportReport = {
      bytes: body.length,
      import: imported,
      rssBeforeMiB: rssBefore / 1024 / 1024,
      peakRssMiB: peakRss / 1024 / 1024,
      resync304,
      resync200,
    };
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    await app.close();
    await storage.close();
    server.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

function runImportChild(): Promise<ImportReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/feeds.ts', CHILD_FLAG], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 5 * 60 * 1000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      const line = output.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !line.startsWith('{')) return reject(new Error(`the feed import child exited with ${code}: ${output.slice(0, 500)}`));
      resolve(JSON.parse(line) as ImportReport);
    });
  });
}

// --- 2. parsing throughput ------------------------------------------------------------------------------------

interface Input {
  name: string;
  body: Buffer;
  text: string;
}

type Parser = { name: string; parse(input: Input): unknown };

const rssParser = new RssParser();

const PARSERS: Parser[] = [
  // What a synchronize does to every entry: decode, parse, normalize, key and hash it (html is cleaned on import).
  { name: 'Masthead: read the feed', parse: (input) => parseFeed({ body: input.body, url: 'https://blog.example.com/feed.xml' }) },
  // What an import of every entry adds: sanitized html, plain-text title and summary, cover (not a rival's job).
  {
    name: 'Masthead: read it and clean every entry',
    parse: (input) => parseFeed({ body: input.body, url: 'https://blog.example.com/feed.xml' }).entries.map((entry) => (entry as FeedEntry).toJSON()),
  },
  { name: 'rss-parser 3 (parse)', parse: (input) => rssParser.parseString(input.text) },
  // Its fields are computed when read: toJSON() reads them all.
  { name: '@rowanmanning/feed-parser 2 (parse, all fields read)', parse: (input) => parseWithRowanmanning(input.text).toJSON() },
];

/** The XML files of the corpora that every parser reads without an error (JSON Feed is Masthead's alone). */
async function corpusInputs(): Promise<Input[]> {
  const files = wellFormedFiles().filter((path) => !path.endsWith('.json'));
  const inputs: Input[] = [];
  for (const path of files) {
    const body = read(path);
    const input = { name: path, body, text: body.toString('utf8') };
    let readable = true;
    for (const parser of PARSERS) {
      try {
        await parser.parse(input);
      } catch {
        readable = false;
        break;
      }
    }
    if (readable) inputs.push(input);
  }
  return inputs;
}

/** MB/s (10^6 bytes) over whole passes through the inputs for about PARSE_SECONDS, after one warm-up pass. */
async function throughput(parser: Parser, inputs: Input[]): Promise<number> {
  for (const input of inputs) await parser.parse(input);
  let bytes = 0;
  const started = performance.now();
  do {
    for (const input of inputs) {
      await parser.parse(input);
      bytes += input.body.length;
    }
  } while (performance.now() - started < PARSE_SECONDS * 1000);
  return bytes / 1e6 / ((performance.now() - started) / 1000);
}

export async function runFeedBench(): Promise<void> {
  console.log(
    `\nFeeds: import of a generated ${ENTRIES.toLocaleString('en-US')}-entry feed on SQLite (child process), re-syncs, parser throughput (${fixed(PARSE_SECONDS, 1)} s a row)`,
  );
  const report = await runImportChild();
  const syncRow = (label: string, measure: SyncMeasure, memory: string, counted: string) => [
    label,
    fixed(measure.ms, 1),
    memory,
    String(measure.articleRows),
    String(measure.feedRowWrites),
    counted,
  ];
  console.log('');
  console.log(
    table(
      ['feed synchronize', 'ms', 'peak RSS MiB', 'article rows written', 'feed row writes', 'result'],
      [
        syncRow(
          `import, ${(report.bytes / 1e6).toFixed(1)} MB, ${ENTRIES} entries`,
          report.import,
          `${fixed(report.peakRssMiB, 0)} (${fixed(report.rssBeforeMiB, 0)} before)`,
          `${report.import.imported} imported`,
        ),
        syncRow(`re-sync unchanged, 304 (median of ${RESYNCS})`, report.resync304, '-', report.resync304.notModified ? 'not modified' : 'MODIFIED?'),
        syncRow(`re-sync unchanged, 200 identical (median of ${RESYNCS})`, report.resync200, '-', `${report.resync200.unchanged} unchanged`),
      ],
      [false, true, true, true, true, false],
    ),
  );

  const corpus = await corpusInputs();
  const generatedText = generateFeed();
  const generated: Input[] = [{ name: 'generated', body: Buffer.from(generatedText), text: generatedText }];
  const sets: [label: string, inputs: Input[]][] = [
    [`corpus: ${corpus.length} XML files, ${(corpus.reduce((sum, input) => sum + input.body.length, 0) / 1e6).toFixed(2)} MB`, corpus],
    [`generated: ${ENTRIES} entries, ${(generated[0]!.body.length / 1e6).toFixed(1)} MB`, generated],
  ];
  const rates = new Map<string, number[]>();
  for (const [, inputs] of sets) {
    for (const parser of PARSERS) rates.set(parser.name, [...(rates.get(parser.name) ?? []), await throughput(parser, inputs)]);
  }
  console.log('');
  console.log(
    table(
      ['parser', ...sets.map(([label]) => `MB/s ${label}`)],
      PARSERS.map((parser) => [parser.name, ...rates.get(parser.name)!.map((rate) => fixed(rate, 2))]),
      [false, ...sets.map(() => true)],
    ),
  );

  console.log('');
  const ours = rates.get(PARSERS[0]!.name)!;
  const rivals = PARSERS.filter((parser) => !parser.name.startsWith('Masthead'));
  const fastest = sets.map((_, set) => Math.max(...rivals.map((parser) => rates.get(parser.name)![set]!)));
  const faster = ours.every((rate, set) => rate > fastest[set]!);
  console.log(
    `reading a feed faster than rss-parser and @rowanmanning/feed-parser: ${faster ? 'PASS' : 'FAIL'} ` +
      `(${sets.map(([label], set) => `${label.split(':')[0]} ${fixed(ours[set]!, 2)} vs ${fixed(fastest[set]!, 2)} MB/s`).join('; ')})`,
  );
  const zeroWrites = report.resync304.articleRows === 0 && report.resync200.articleRows === 0;
  console.log(
    `unchanged re-sync writes no article rows: ${zeroWrites ? 'PASS' : 'FAIL'} (304: ${report.resync304.articleRows}, 200: ${report.resync200.articleRows}; ` +
      `the feed's own status row is written ${report.resync304.feedRowWrites} times a run: the lease and the outcome)`,
  );
}

if (process.argv.includes(CHILD_FLAG)) {
  await importChild();
}
