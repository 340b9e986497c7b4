// The event-loop rows of `npm run bench` (alone: BENCH_ONLY=event-loop): how long the heavy requests of issue 12
// hold Masthead's event loop, on SQLite and on PostgreSQL side by side. The goal: no single request, import or
// synchronization holds the event loop for more than 100 ms.
//
// For every scenario and database, the real server (bench/server.ts) is started afresh in a child process with
// BENCH_EVENT_LOOP_DELAY=1: it measures its OWN event loop with perf_hooks.monitorEventLoopDelay (10 ms
// resolution), and this process resets and reads that histogram over the IPC channel (no HTTP route) right before
// and 200 ms after the scenario's request. "delay" is the histogram's value minus the 10 ms resolution: the time a
// 10 ms timer fired late, i.e. how long the loop was held. Meanwhile a worker thread of this process (an event loop
// of its own, so that building or reading 30 MB here cannot delay it) sends GET /healthz every 100 ms, each on a
// new connection, as the issue measured; "/healthz max" is the longest of those probes. Each scenario is preceded
// by a small request of the same kind (modules loaded, code compiled), outside the measured window. "other CPU" is
// the share of the machine that processes other than this one and the server took meanwhile (bench/cpu.ts; on
// PostgreSQL it includes the database server's work): above a few percent, the times are longer than on a quiet machine.
//
// Scenarios (seeded through the CLI — account and publications — and the API):
//   1. FlexPDF import of 30 articles of 1 MB (1,000,000 characters) of nested html each (many elements, attributes, links), by the owner;
//   2. an RSS feed of 1,000 entries of 15 KB of nested markup each (15.3 MB), served from this process on 127.0.0.1
//      (OUTBOUND_ALLOW): its creation (which fetches and reads it once), then its synchronize (the import);
//   3. a 28 MiB FlexPDF import array (~63,000 small articles, over the 500 allowed) sent with a viewer's key (a
//      client created through the API with the viewer role on the publication, signed in): refused, status recorded;
//   4. GET /articles/:app_id of the publication holding the 30 one-MB articles of scenario 1;
//   5. POST /api/client/lead-batches with 1,000 leads (checked, counted and queued; the worker is off here).
//
// PostgreSQL: BENCH_POSTGRES_URL, else postgres://root@127.0.0.1:5432/test when it answers (skipped with a note when
// not; an explicit BENCH_POSTGRES_URL that does not answer is an error). Each run works in a fresh schema of its own
// (?options=-c search_path=...), dropped afterwards; SQLite in a file under .bench/, removed afterwards.

import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { type IncomingHttpHeaders, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { type EventLoopDelayReading, ROOT, type Server, askServer, startServer, stopServer } from './children.js';
import { othersShare, sampleCpu } from './cpu.js';
import { type ScratchDatabase as Database, scratchDatabases } from './postgres.js';
import { fixed, table } from './report.js';

const GOAL_MS = 100;
const PROBE_INTERVAL_MS = 100;
const IMPORT_ARTICLES = 30;
/** Characters of html per imported article: the API's limit (1,000,000 characters). */
const ARTICLE_HTML_CHARS = 1_000_000;
const FEED_ENTRIES = 1_000;
const FEED_ENTRY_HTML_BYTES = 15_000;
const VIEWER_BODY_BYTES = 28 * 1024 * 1024;
const BATCH_LEADS = 1_000;
const PASSWORD = 'bench password 1';
const PORTAL = '/api/portal/v1';

type Dialect = 'sqlite' | 'postgres';

interface Answer {
  status: number;
  ms: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** What the scenarios of one database share: its URL, the seeded ids and keys, what earlier scenarios made. */
interface Context {
  database: Database;
  feedOrigin: string;
  ownerKey: string;
  mainAppId: string;
  mainPublicationId: number;
  /** The feed's articles go to a publication of their own, so that the list of the main one holds only the 30. */
  feedAppId: string;
  warmAppId: string;
  viewerKey?: string;
  feedId?: number;
  warmups: number;
}

interface Outcome {
  status: number | string;
  result: string;
  ms: number;
}

interface Scenario {
  key: string;
  label: string;
  /** Outside the measured window: a small request of the same kind, and whatever the scenario needs first. */
  warm(ctx: Context, server: Server): Promise<void>;
  run(ctx: Context, server: Server): Promise<Outcome>;
}

interface Row {
  scenario: Scenario;
  dialect: Dialect;
  outcome: Outcome;
  delay: EventLoopDelayReading;
  probe: ProbeReport;
  /** Share of the machine's CPU time that processes other than the bench and the server took meanwhile (0..1). */
  others: number;
}

// --- inputs ---------------------------------------------------------------------------------------------------

/**
 * One block of realistic article markup (~1.9 KB): nested sections, headings, paragraphs with inline formatting
 * and links (some target=_blank, which the sanitizer rewrites), lists, a figure with srcset, a table, a quote,
 * and a few things the allow-list removes (style, data-*, onclick, a script), so that sanitize-html works hard.
 */
function markupBlock(n: number): string {
  const minute = String(n % 60).padStart(2, '0');
  return (
    `<section class="story-block" id="block-${n}" data-track="b${n}"><div class="row"><div class="col col-main"><div class="inner">` +
    `<h3 class="block-title" id="t-${n}">Harbour notes, part ${n}</h3>` +
    `<p class="lead">The <strong>harbour</strong> was quiet that <em>morning</em>, and the market had not yet opened; ` +
    `see <a href="https://example.com/harbour/${n}?utm_source=bench&amp;ref=${n}" title="Harbour guide ${n}" target="_blank">the harbour guide</a> ` +
    `and <a href="/archive/${n}" title="Archive">the archive</a>, or write to <a href="mailto:desk${n % 9}@example.com">the desk</a>.</p>` +
    `<ul class="facts"><li><span class="label">Boats</span> <b>${n % 40}</b></li>` +
    `<li><a href="https://example.org/boats/${n}" rel="nofollow">Boats of the bay</a> <i>(${n % 13} new)</i></li>` +
    `<li><abbr title="nautical miles">nm</abbr> ${n % 17} <sup>${n % 3}</sup></li></ul>` +
    `<figure class="photo" style="margin:0 auto"><img src="https://cdn.example.com/img/${n}.jpg" ` +
    `srcset="https://cdn.example.com/img/${n}.jpg 1x, https://cdn.example.com/img/${n}@2x.jpg 2x" alt="Boats at dawn ${n}" ` +
    `width="640" height="427" loading="lazy" onclick="zoom(${n})"><figcaption>Photo: <a href="https://example.net/p/${n}">A. Photographer</a></figcaption></figure>` +
    `<table class="tide"><thead><tr><th scope="col">Time</th><th scope="col">Height</th></tr></thead>` +
    `<tbody><tr><td>06:${minute}</td><td align="right">1.${n % 9} m</td></tr><tr><td>18:${minute}</td><td align="right">0.${n % 7} m</td></tr></tbody></table>` +
    `<blockquote cite="https://example.com/q/${n}"><p>&ldquo;The nets come in at dawn,&rdquo; said <cite>a fisherman</cite>.</p></blockquote>` +
    `<p>Some <span class="hl" onmouseover="track(${n})">highlighted</span> words, <code>tide-${n}</code>, <del>old</del> <ins>new</ins> ` +
    `and a <a href="https://example.com/ferries/${n}#timetable" target="_blank" title="Ferries">ferry timetable</a>.</p>` +
    `<script>track(${n})</script></div></div></div></section>\n`
  );
}

/** Exactly `chars` characters (ASCII, so also bytes) of markup blocks wrapped in an article body. */
function nestedHtml(chars: number, seed: number): string {
  const head = `<article class="story" id="story-${seed}"><header><h2>Story ${seed}</h2></header><div class="body">\n`;
  const tail = '</div></article>';
  const parts = [head];
  let length = head.length + tail.length;
  for (let n = seed * 1_000; ; n++) {
    const block = markupBlock(n);
    if (length + block.length > chars) break;
    parts.push(block);
    length += block.length;
  }
  // The rest as one paragraph of text, so that every article or entry has the same size.
  const room = chars - length - '<p></p>'.length;
  if (room > 0) parts.push(`<p>${'The ferry crossed the bay. '.repeat(Math.ceil(room / 27)).slice(0, room)}</p>`);
  parts.push(tail);
  return parts.join('');
}

function importBody(articles: number, htmlChars: number, titlePrefix: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      articles: Array.from({ length: articles }, (_, i) => ({ title: `${titlePrefix} ${i + 1}`, html: nestedHtml(htmlChars, i + 1) })),
    }),
  );
}

/** A FlexPDF import array of exactly `bytes` bytes or a few less: many small articles (far over the 500 allowed). */
function viewerImportBody(bytes: number): { body: Buffer; items: number } {
  const items: string[] = [];
  let length = '{"articles":[]}'.length;
  for (let i = 0; ; i++) {
    const item = JSON.stringify({
      title: `Imported page ${i}`,
      html: `<p>Page ${i} of the magazine, <strong>set</strong> in <em>two</em> columns with a <a href="https://example.com/p/${i}">link</a>.</p>`.repeat(
        3,
      ),
      source: 'flexpdf',
    });
    const extra = item.length + (items.length > 0 ? 1 : 0);
    if (length + extra > bytes) break;
    items.push(item);
    length += extra;
  }
  return { body: Buffer.from(`{"articles":[${items.join(',')}]}`), items: items.length };
}

function feedXml(entries: number, htmlBytes: number): Buffer {
  const day = 24 * 60 * 60 * 1000;
  const items = Array.from({ length: entries }, (_, i) => {
    const date = new Date(Date.UTC(2024, 0, 1) - i * day).toUTCString();
    return `<item><title>Entry ${i}: notes from the harbour</title><link>https://blog.example.com/posts/${i}</link>
<guid isPermaLink="false">entry-${i}</guid><pubDate>${date}</pubDate>
<description>Fishermen, ferries and the first light over the bay (${i}).</description>
<content:encoded><![CDATA[${nestedHtml(htmlBytes, i + 1)}]]></content:encoded></item>`;
  });
  return Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">
<channel><title>The Harbour Blog</title><link>https://blog.example.com/</link><description>Notes from the harbour</description>
${items.join('\n')}
</channel></rss>`);
}

// --- HTTP -----------------------------------------------------------------------------------------------------

/**
 * One request on a connection of its own. The status is kept even when the server answers before reading the whole
 * body and then closes the connection (an early 403/413): a write error after the response is not a failure.
 */
function send(
  port: number,
  method: string,
  path: string,
  options: { key?: string; body?: Buffer | object; timeoutMs?: number } = {},
): Promise<Answer> {
  const body = options.body === undefined ? undefined : Buffer.isBuffer(options.body) ? options.body : Buffer.from(JSON.stringify(options.body));
  const headers: Record<string, string | number> = {};
  if (options.key) headers['x-api-key'] = options.key;
  if (body) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = body.length;
  }
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let answered = false;
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false }, (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, ms: performance.now() - started, headers: response.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.setTimeout(options.timeoutMs ?? 180_000, () =>
      req.destroy(new Error(`${method} ${path}: no answer within ${(options.timeoutMs ?? 180_000) / 1000} s`)),
    );
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    req.end(body);
  });
}

async function expectJson<T>(answer: Promise<Answer>, status: number, what: string): Promise<T> {
  const { status: got, body } = await answer;
  if (got !== status) throw new Error(`${what} answered ${got} (expected ${status}): ${body.toString('utf8', 0, 300)}`);
  return JSON.parse(body.toString('utf8')) as T;
}

/** Warms the feed paths with a small feed of its own (created and synchronized), outside the measured window. */
async function warmFeed(ctx: Context, server: Server): Promise<void> {
  ctx.warmups += 1;
  const feed = await expectJson<{ id: number }>(
    send(server.port, 'POST', `${PORTAL}/rss_feeds/${ctx.warmAppId}`, {
      key: ctx.ownerKey,
      body: { url: `${ctx.feedOrigin}/small.xml?warm=${ctx.warmups}` },
    }),
    201,
    'warm-up feed create',
  );
  await expectJson(
    send(server.port, 'POST', `${PORTAL}/rss_feeds/${ctx.warmAppId}/${feed.id}/synchronize`, { key: ctx.ownerKey, body: {} }),
    200,
    'warm-up synchronize',
  );
}

function errorCode(body: Buffer): string {
  try {
    return (JSON.parse(body.toString('utf8')) as { error?: string }).error ?? '';
  } catch {
    return '';
  }
}

// --- the /healthz probe, in a worker thread ---------------------------------------------------------------------

interface ProbeReport {
  count: number;
  maxMs: number;
  failed: number;
}

const PROBE_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
let timer;
let latencies = [];
let failed = 0;
const pending = new Set();
function probe() {
  const started = performance.now();
  pending.add(started);
  const done = (ok) => {
    if (!pending.delete(started)) return;
    latencies.push(performance.now() - started);
    if (!ok) failed += 1;
  };
  const req = http.get({ host: '127.0.0.1', port: workerData.port, path: '/healthz', agent: false }, (res) => {
    res.resume();
    res.on('end', () => done(res.statusCode === 200));
  });
  req.on('error', () => done(false));
}
parentPort.on('message', (message) => {
  if (message === 'start') {
    latencies = [];
    failed = 0;
    probe();
    timer = setInterval(probe, workerData.intervalMs);
    parentPort.postMessage({ type: 'started' });
  } else if (message === 'stop') {
    clearInterval(timer);
    const deadline = performance.now() + 30000;
    const finish = () => {
      if (pending.size > 0 && performance.now() < deadline) return void setTimeout(finish, 5);
      for (const started of pending) { latencies.push(performance.now() - started); failed += 1; }
      pending.clear();
      parentPort.postMessage({ type: 'report', count: latencies.length, maxMs: Math.max(0, ...latencies), failed });
    };
    finish();
  }
});
`;

class Probe {
  private readonly worker: Worker;

  constructor(port: number) {
    this.worker = new Worker(PROBE_WORKER, { eval: true, execArgv: [], workerData: { port, intervalMs: PROBE_INTERVAL_MS } });
    this.worker.unref();
  }

  private ask<T>(message: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const onError = (error: Error) => reject(error);
      this.worker.once('error', onError);
      this.worker.once('message', (answer: T) => {
        this.worker.off('error', onError);
        resolve(answer);
      });
      this.worker.postMessage(message);
    });
  }

  start(): Promise<unknown> {
    return this.ask('start');
  }

  stop(): Promise<ProbeReport> {
    return this.ask<ProbeReport>('stop');
  }

  close(): Promise<number> {
    return this.worker.terminate();
  }
}

// --- databases and seeding ------------------------------------------------------------------------------------

/** `masthead <args>` (src/cli.ts through tsx) against the database; its one JSON line. */
function cli(databaseUrl: string, args: string[]): Promise<any> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli.ts', ...args],
      { cwd: ROOT, env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' }, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`masthead ${args.slice(0, 2).join(' ')}: ${stderr.trim() || error.message}`));
        resolve(JSON.parse(stdout.trim().split('\n').at(-1)!));
      },
    );
  });
}

async function seed(database: Database, feedOrigin: string): Promise<Context> {
  const created = await cli(database.url, [
    'account',
    'create',
    '--email',
    `owner-${randomBytes(4).toString('hex')}@masthead.test`,
    '--password',
    PASSWORD,
    '--name',
    'Bench Media',
    '--plan',
    'business',
  ]);
  const accountId = String(created.account.id);
  const main = await cli(database.url, ['publication', 'create', '--account', accountId, '--app-id', 'eld-main', '--name', 'Event loop main']);
  const feeds = await cli(database.url, ['publication', 'create', '--account', accountId, '--app-id', 'eld-feeds', '--name', 'Event loop feeds']);
  const warm = await cli(database.url, ['publication', 'create', '--account', accountId, '--app-id', 'eld-warm', '--name', 'Event loop warm-up']);
  return {
    database,
    feedOrigin,
    ownerKey: created.api_key,
    mainAppId: main.publication.app_id,
    mainPublicationId: main.publication.id,
    feedAppId: feeds.publication.app_id,
    warmAppId: warm.publication.app_id,
    warmups: 0,
  };
}

// --- scenarios ------------------------------------------------------------------------------------------------

function scenarios(inputs: { importBody: Buffer; viewerBody: Buffer; viewerItems: number; feedBytes: number }): Scenario[] {
  const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
  return [
    {
      key: 'import',
      label: `FlexPDF import, ${IMPORT_ARTICLES} x 1 MB html (owner, ${mb(inputs.importBody.length)})`,
      async warm(ctx, server) {
        await expectJson(
          send(server.port, 'POST', `${PORTAL}/articles/${ctx.warmAppId}/flexpdf-import`, {
            key: ctx.ownerKey,
            body: { articles: [{ title: 'Warm-up', html: nestedHtml(20_000, 1) }] },
          }),
          201,
          'warm-up import',
        );
      },
      async run(ctx, server) {
        const answer = await send(server.port, 'POST', `${PORTAL}/articles/${ctx.mainAppId}/flexpdf-import`, {
          key: ctx.ownerKey,
          body: inputs.importBody,
        });
        const count = answer.status === 201 ? (JSON.parse(answer.body.toString('utf8')) as { count: number }).count : undefined;
        return { status: answer.status, ms: answer.ms, result: count === undefined ? errorCode(answer.body) : `${count} created` };
      },
    },
    {
      key: 'feed-create',
      label: `RSS feed create (fetch + read, ${FEED_ENTRIES.toLocaleString('en-US')} x 15 KB, ${mb(inputs.feedBytes)})`,
      async warm(ctx, server) {
        await warmFeed(ctx, server);
      },
      async run(ctx, server) {
        const answer = await send(server.port, 'POST', `${PORTAL}/rss_feeds/${ctx.feedAppId}`, {
          key: ctx.ownerKey,
          body: { url: `${ctx.feedOrigin}/feed.xml` },
        });
        if (answer.status === 201) ctx.feedId = (JSON.parse(answer.body.toString('utf8')) as { id: number }).id;
        return { status: answer.status, ms: answer.ms, result: answer.status === 201 ? `feed ${ctx.feedId}` : errorCode(answer.body) };
      },
    },
    {
      key: 'feed-sync',
      label: `RSS feed synchronize (import ${FEED_ENTRIES.toLocaleString('en-US')} entries)`,
      async warm(ctx, server) {
        if (ctx.feedId === undefined) throw new Error('the feed was not created');
        await warmFeed(ctx, server);
      },
      async run(ctx, server) {
        const answer = await send(server.port, 'POST', `${PORTAL}/rss_feeds/${ctx.feedAppId}/${ctx.feedId}/synchronize`, {
          key: ctx.ownerKey,
          body: {},
        });
        if (answer.status !== 200) return { status: answer.status, ms: answer.ms, result: errorCode(answer.body) };
        const result = JSON.parse(answer.body.toString('utf8')) as { job_status: string; imported: number; errors: string[] };
        const detail =
          result.job_status === 'completed' ? `${result.imported} imported` : `${result.job_status}: ${result.errors.join('; ').slice(0, 60)}`;
        return { status: answer.status, ms: answer.ms, result: detail };
      },
    },
    {
      key: 'viewer-import',
      label: `FlexPDF import, 28 MiB array of ${inputs.viewerItems.toLocaleString('en-US')} (viewer key)`,
      async warm(ctx, server) {
        if (!ctx.viewerKey) {
          const email = `viewer-${randomBytes(4).toString('hex')}@masthead.test`;
          await expectJson(
            send(server.port, 'POST', `${PORTAL}/clients`, {
              key: ctx.ownerKey,
              body: {
                email,
                firstname: 'Vera',
                lastname: 'Viewer',
                password: PASSWORD,
                roles: [{ publication_id: ctx.mainPublicationId, access_level: 'viewer' }],
              },
            }),
            201,
            'creating the viewer client',
          );
          const session = await expectJson<{ api_key: string }>(
            send(server.port, 'POST', `${PORTAL}/sessions`, { body: { email, password: PASSWORD } }),
            201,
            'the viewer signing in',
          );
          ctx.viewerKey = session.api_key;
        }
        const small = await send(server.port, 'POST', `${PORTAL}/articles/${ctx.mainAppId}/flexpdf-import`, {
          key: ctx.viewerKey,
          body: { articles: [{ title: 'Not allowed' }] },
        });
        if (small.status !== 403)
          throw new Error(`a viewer's small import answered ${small.status}, expected 403: ${small.body.toString('utf8', 0, 300)}`);
      },
      async run(ctx, server) {
        const answer = await send(server.port, 'POST', `${PORTAL}/articles/${ctx.mainAppId}/flexpdf-import`, {
          key: ctx.viewerKey,
          body: inputs.viewerBody,
        });
        return { status: answer.status, ms: answer.ms, result: errorCode(answer.body) || '?' };
      },
    },
    {
      key: 'list',
      label: `GET /articles/:app_id (${IMPORT_ARTICLES} one-MB articles)`,
      async warm(ctx, server) {
        const answer = await send(server.port, 'GET', `${PORTAL}/articles/${ctx.warmAppId}`, { key: ctx.ownerKey });
        if (answer.status !== 200) throw new Error(`warm-up list answered ${answer.status}`);
      },
      async run(ctx, server) {
        const answer = await send(server.port, 'GET', `${PORTAL}/articles/${ctx.mainAppId}`, { key: ctx.ownerKey });
        if (answer.status !== 200) return { status: answer.status, ms: answer.ms, result: errorCode(answer.body) };
        const list = JSON.parse(answer.body.toString('utf8')) as unknown[];
        const total = answer.headers['x-total-count'];
        return {
          status: answer.status,
          ms: answer.ms,
          result: `${list.length}${total !== undefined ? ` of ${total}` : ''} articles, ${mb(answer.body.length)}`,
        };
      },
    },
    {
      key: 'lead-hostile-site',
      label: 'POST /api/client/process-lead (its company page: 512 KiB of linked images)',
      async warm(ctx, server) {
        await expectJson(hostileSiteLead(ctx, server, 'warm-logos'), 200, 'warm-up lead');
      },
      async run(ctx, server) {
        const answer = await hostileSiteLead(ctx, server, 'many-logos');
        if (answer.status !== 200) return { status: answer.status, ms: answer.ms, result: errorCode(answer.body) };
        const lead = JSON.parse(answer.body.toString('utf8')) as { emailBody: string };
        return { status: answer.status, ms: answer.ms, result: lead.emailBody.includes('Many Logos Ltd') ? 'company named' : 'company not named' };
      },
    },
    {
      key: 'lead-batch',
      label: `POST /api/client/lead-batches (${BATCH_LEADS.toLocaleString('en-US')} leads)`,
      async warm(ctx, server) {
        await expectJson(
          send(server.port, 'POST', '/api/client/lead-batches', { key: ctx.ownerKey, body: { leads: leadList(10, 'warm') } }),
          202,
          'warm-up batch',
        );
      },
      async run(ctx, server) {
        const answer = await send(server.port, 'POST', '/api/client/lead-batches', {
          key: ctx.ownerKey,
          body: { leads: leadList(BATCH_LEADS, 'run') },
        });
        if (answer.status !== 202) return { status: answer.status, ms: answer.ms, result: errorCode(answer.body) };
        const batch = JSON.parse(answer.body.toString('utf8')) as { accepted: number };
        return { status: answer.status, ms: answer.ms, result: `${batch.accepted} queued` };
      },
    },
  ];
}

/**
 * A company home page built to be slow to read: 512 KiB (what research reads of a page at most) of logo images linked
 * to the home page, each one examined as evidence of the company's name.
 */
function hostileCompanyPage(): Buffer {
  const head = '<!doctype html><html><head><title>Many Logos Ltd | Home</title></head><body>';
  const logo = '<a href="/"><img src="/logo.png" alt="Many Logos Ltd"></a>';
  return Buffer.from(head + logo.repeat(Math.ceil((512 * 1024 - head.length) / logo.length)) + '</body></html>');
}

/** A synchronous lead whose company site serves the hostile page; a new domain each time, so no cached research. */
async function hostileSiteLead(ctx: Context, server: { port: number }, stem: string) {
  return send(server.port, 'POST', '/api/client/process-lead', {
    key: ctx.ownerKey,
    body: { firstName: 'Ada', lastName: 'Lovelace', email: `ada@${stem}-${randomBytes(4).toString('hex')}.example.com` },
  });
}

/** Leads of as many companies, every one its own domain. */
function leadList(count: number, stem: string) {
  return Array.from({ length: count }, (_, index) => ({
    firstName: 'Ada',
    lastName: `Lovelace ${index}`,
    email: `ada.${index}@${stem}-carrier-${index}.example.com`,
  }));
}

// --- the run --------------------------------------------------------------------------------------------------

async function measureScenario(scenario: Scenario, ctx: Context): Promise<Row> {
  const server = await startServer(`masthead (${ctx.database.dialect})`, 'bench/server.ts', {
    DATABASE_URL: ctx.database.url,
    PORT: '0',
    LOG_LEVEL: 'silent',
    LEAD_WORKER: 'false',
    FEED_SCHEDULER: 'off',
    OUTBOUND_ALLOW: new URL(ctx.feedOrigin).host,
    COMPANY_SITE_URL: `${ctx.feedOrigin}/site/{domain}/`,
    BENCH_EVENT_LOOP_DELAY: '1',
  });
  const probe = new Probe(server.port);
  try {
    try {
      await scenario.warm(ctx, server);
    } catch (error) {
      const nothing: EventLoopDelayReading = { resolutionMs: 10, count: 0, maxMs: Number.NaN, p99Ms: Number.NaN, meanMs: Number.NaN };
      const result = `not run: ${error instanceof Error ? error.message.slice(0, 80) : String(error)}`;
      return {
        scenario,
        dialect: ctx.database.dialect,
        outcome: { status: '-', ms: Number.NaN, result },
        delay: nothing,
        probe: { count: 0, maxMs: Number.NaN, failed: 0 },
        others: Number.NaN,
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    await probe.start();
    await askServer(server, 'eld-reset');
    const pids = server.child.pid === undefined ? [] : [server.child.pid];
    const cpuBefore = sampleCpu(pids);
    const windowStarted = performance.now();
    let outcome: Outcome;
    try {
      outcome = await scenario.run(ctx, server);
    } catch (error) {
      outcome = { status: 'error', ms: Number.NaN, result: error instanceof Error ? error.message.slice(0, 80) : String(error) };
    }
    // Long enough for the 10 ms timer to tick after whatever the request left behind, and for the last probes.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const { reading } = await askServer<{ reading: EventLoopDelayReading }>(server, 'eld-read');
    const others = othersShare(cpuBefore, sampleCpu(pids), (performance.now() - windowStarted) / 1000);
    const probed = await probe.stop();
    return { scenario, dialect: ctx.database.dialect, outcome, delay: reading, probe: probed, others };
  } finally {
    await probe.close();
    await stopServer(server);
  }
}

function gitState(): string {
  try {
    const head = execFileSync('git', ['log', '-1', '--format=%h (%ci)'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const changed = execFileSync('git', ['status', '--short', '--', 'src'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .trim()
      .split('\n')
      .filter(Boolean).length;
    return `commit ${head}${changed > 0 ? ` (+ ${changed} uncommitted change(s) under src/)` : ''}`;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

export async function runEventLoopBench(): Promise<void> {
  const started = performance.now();
  const feed = feedXml(FEED_ENTRIES, FEED_ENTRY_HTML_BYTES);
  const small = feedXml(5, 2_000);
  const hostilePage = hostileCompanyPage();
  const feedServer = createServer((request, response) => {
    // Company sites for lead research are /site/{domain}/ on the same server.
    if ((request.url ?? '/').startsWith('/site/')) {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': hostilePage.length }).end(hostilePage);
      return;
    }
    const body = (request.url ?? '/').startsWith('/small.xml') ? small : feed;
    response.writeHead(200, { 'content-type': 'application/rss+xml', 'content-length': body.length }).end(body);
  });
  await new Promise<void>((resolve) => feedServer.listen(0, '127.0.0.1', resolve));
  const feedOrigin = `http://127.0.0.1:${(feedServer.address() as AddressInfo).port}`;

  const viewer = viewerImportBody(VIEWER_BODY_BYTES);
  const inputs = {
    importBody: importBody(IMPORT_ARTICLES, ARTICLE_HTML_CHARS, 'Imported story'),
    viewerBody: viewer.body,
    viewerItems: viewer.items,
    feedBytes: feed.length,
  };
  const list = scenarios(inputs);
  const { list: makers, note } = await scratchDatabases('event-loop');
  console.log(
    `\nEvent loop: the server's own event-loop delay (monitorEventLoopDelay, 10 ms resolution, read over IPC) and a /healthz probe ` +
      `every ${PROBE_INTERVAL_MS} ms, while each heavy request runs; goal: no request holds the loop more than ${GOAL_MS} ms`,
  );
  console.log(`code measured: ${gitState()}`);
  if (note) console.log(note);

  const rows: Row[] = [];
  try {
    for (const make of makers) {
      const database = await make();
      try {
        const ctx = await seed(database, feedOrigin);
        for (const scenario of list) {
          process.stdout.write(`  ${database.dialect}: ${scenario.label} ... `);
          const row = await measureScenario(scenario, ctx);
          rows.push(row);
          console.log(`${row.outcome.status} in ${fixed(row.outcome.ms, 0)} ms, loop delay max ${fixed(delayOf(row.delay, row.delay.maxMs), 0)} ms`);
        }
      } finally {
        await database.drop();
      }
    }
  } finally {
    feedServer.close();
  }

  const dialects = [...new Set(rows.map((row) => row.dialect))];
  const label = (dialect: Dialect) => (dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL');
  const ordered = list.flatMap((scenario) =>
    dialects.flatMap((dialect) => rows.filter((row) => row.scenario === scenario && row.dialect === dialect)),
  );
  console.log('');
  console.log(
    table(
      [
        'scenario',
        'database',
        'status',
        'result',
        'request ms',
        'loop delay max ms',
        'loop delay p99 ms',
        '/healthz max ms',
        'other CPU',
        `goal <= ${GOAL_MS} ms`,
      ],
      ordered.map((row) => {
        const max = delayOf(row.delay, row.delay.maxMs);
        return [
          row.scenario.label,
          label(row.dialect),
          String(row.outcome.status),
          row.outcome.result,
          fixed(row.outcome.ms, 0),
          fixed(max, 0),
          fixed(delayOf(row.delay, row.delay.p99Ms), 0),
          `${fixed(row.probe.maxMs, 0)}${row.probe.failed > 0 ? ` (${row.probe.failed} failed)` : ''}`,
          Number.isFinite(row.others) ? `${fixed(100 * row.others, 0)}%` : '-',
          !Number.isFinite(max) ? '-' : max <= GOAL_MS ? 'met' : 'MISSED',
        ];
      }),
      [false, false, true, false, true, true, true, true, true, false],
    ),
  );
  const missed = rows.filter((row) => !(delayOf(row.delay, row.delay.maxMs) <= GOAL_MS));
  console.log(
    `\nno request holds the event loop more than ${GOAL_MS} ms: ${missed.length === 0 ? 'PASS' : `FAIL (${missed.length} of ${rows.length} rows)`}` +
      ` ("loop delay": the server's own histogram minus its 10 ms resolution, i.e. how late a 10 ms timer fired; ` +
      `section: ${fixed((performance.now() - started) / 1000, 0)} s)`,
  );
  if (rows.some((row) => row.others > 0.1)) {
    console.log(
      'warning: other processes took more than 10% of the CPU during some rows ("other CPU"; on PostgreSQL it includes the ' +
        "database server's own work): their times are longer than on a quiet machine.",
    );
  }
}

/** A histogram value (the interval between two ticks of the resolution timer) as the delay beyond that interval. */
function delayOf(reading: EventLoopDelayReading, value: number): number {
  return Math.max(0, value - reading.resolutionMs);
}
