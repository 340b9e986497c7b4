// The lead API bench: POST /api/client/process-lead against the real server (a child process, on SQLite and then on
// PostgreSQL, each in a database of its own), with the company sites and an OpenAI-compatible LLM played by local
// servers in this process (site answers in SITE_DELAY_MS, the LLM in LLM_DELAY_MS). Every lead has a domain of its
// own, so every lead is researched (no cache hit) unless the row says otherwise. "overhead" is a lead's latency minus
// the latencies of the played site and LLM for that lead, as a client sees them (the time each spent on the lead's
// request, plus a plain HTTP round trip to it, measured by calling it directly before the run): what Masthead itself
// costs.
//
// A lead batch of BATCH_LEADS leads (each its own domain) is then submitted in one request and followed until its last
// job ended: the worker runs it in the background (WORKER_CONCURRENCY jobs at a time in the one instance).
//
// Settings (environment): BENCH_LEAD_ROUNDS rounds of 50 concurrent leads (6), BENCH_LEAD_SINGLE sequential leads (30),
// BENCH_BATCH_LEADS leads in the batch (1,000).

import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { AccountQueries } from '../src/accounts/queries.js';
import { AccountService } from '../src/accounts/service.js';
import { openStorage } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { startServer, stopServer } from './children.js';
import { type ScratchDatabase, scratchDatabases } from './postgres.js';
import { fixed, table } from './report.js';

const SITE_DELAY_MS = 20;
const LLM_DELAY_MS = 200;
const CONCURRENCY = 50;
const ROUNDS = Number(process.env.BENCH_LEAD_ROUNDS ?? 6);
const SINGLE = Number(process.env.BENCH_LEAD_SINGLE ?? 30);
const BATCH_LEADS = Number(process.env.BENCH_BATCH_LEADS ?? 1000);

interface Played {
  server: HttpServer;
  port: number;
  /** Milliseconds the played service spent on each key (a domain for the site, an email for the LLM). */
  spent: Map<string, number>;
}

async function listen(server: HttpServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Every company's site: /{domain}/ answers a realistic home page after SITE_DELAY_MS. */
async function playSites(): Promise<Played> {
  const spent = new Map<string, number>();
  const server = createServer(async (req, res) => {
    const started = performance.now();
    const domain = (req.url ?? '/').split('/')[1] ?? '';
    await sleep(SITE_DELAY_MS);
    const name = domain.split('.')[0]!.replace(/-/g, ' ');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html lang="en"><head><title>${name} | Home</title>
<meta name="description" content="${name} designs logistics software for regional carriers.">
<meta property="og:site_name" content="${name}">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Organization","name":"${name}","logo":"/logo.png"}</script>
</head><body><main><h1>Route planning for carriers</h1><p>${name} plans routes for 400 regional carriers across Europe.</p>
<h2>Fleet telemetry</h2><p>Live positions and fuel data from every truck.</p></main></body></html>`);
    spent.set(domain, (spent.get(domain) ?? 0) + performance.now() - started);
  });
  return { server, port: await listen(server), spent };
}

/** An OpenAI-compatible chat-completions endpoint answering after LLM_DELAY_MS. */
async function playLlm(): Promise<Played> {
  const spent = new Map<string, number>();
  const server = createServer((req, res) => {
    const started = performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const prompt = String(JSON.parse(Buffer.concat(chunks).toString('utf8')).messages.at(-1).content);
      const email = /<([^<>\s]+@[^<>\s]+)>/.exec(prompt)?.[1] ?? '';
      await sleep(LLM_DELAY_MS);
      const content = JSON.stringify({ subject: 'Routes and telemetry', body: `Hello,\n\n${prompt.slice(0, 200)}\n\nBest regards` });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'x',
          object: 'chat.completion',
          model: 'bench',
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        }),
      );
      spent.set(email, (spent.get(email) ?? 0) + performance.now() - started);
    });
  });
  return { server, port: await listen(server), spent };
}

interface LeadResult {
  latencyMs: number;
  overheadMs: number;
}

function percentile(values: number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)] ?? NaN;
}

interface LeadRun {
  dialect: ScratchDatabase['dialect'];
  single: LeadResult[];
  cached: LeadResult[];
  concurrent: LeadResult[];
  concurrentSeconds: number;
  roundMs: number[];
  siteExtraMs: number;
  llmExtraMs: number;
  batch: BatchRun;
}

interface BatchRun {
  /** The POST's answer time (1,000 leads checked, counted and queued). */
  acceptMs: number;
  /** From the POST until the first job completed, and until the last ended. */
  firstResultMs: number;
  lastResultMs: number;
  completed: number;
}

export async function runLeadBench(): Promise<void> {
  const { list, note } = await scratchDatabases('leads');
  if (note) console.log(note);
  const runs: LeadRun[] = [];
  for (const make of list) {
    const database = await make();
    try {
      runs.push(await runOn(database));
    } finally {
      await database.drop();
    }
  }
  report(runs);
}

async function runOn(database: ScratchDatabase): Promise<LeadRun> {
  const storage = openStorage(database.url);
  await migrateToLatest(storage.db, storage.dialect);
  const { api_key: apiKey } = await new AccountService(new AccountQueries(storage.db)).createAccount({
    email: `bench-${Date.now()}@masthead.test`,
    password: 'bench password 1',
    name: 'Bench Media',
    plan: 'business',
  });
  await storage.close();

  const sites = await playSites();
  const llm = await playLlm();
  const server = await startServer('masthead', 'bench/server.ts', {
    DATABASE_URL: database.url,
    PORT: '0',
    LOG_LEVEL: 'silent',
    COMPANY_SITE_URL: `http://127.0.0.1:${sites.port}/{domain}/`,
    OUTBOUND_ALLOW: `127.0.0.1:${sites.port}`,
    LLM_BASE_URL: `http://127.0.0.1:${llm.port}/v1`,
    PLAN_BUSINESS_RPM: '1000000',
    PLAN_BUSINESS_MONTHLY_LEADS: '1000000000',
    LEAD_WORKER: 'true',
    LEAD_WORKER_POLL_MS: '200',
  });
  const agent = new Agent({ connections: CONCURRENCY * 2, keepAliveTimeout: 30_000 });
  let counter = 0;
  let siteExtraMs = 0;
  let llmExtraMs = 0;

  async function oneLead(domain?: string): Promise<LeadResult> {
    counter += 1;
    const leadDomain = domain ?? `carrier-${counter}.example.com`;
    const email = `ada.${counter}@${leadDomain}`;
    const started = performance.now();
    const response = await request(`http://127.0.0.1:${server.port}/api/client/process-lead`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ firstName: 'Ada', lastName: 'Lovelace', email }),
    });
    const body = (await response.body.json()) as { success?: boolean; message?: string };
    const latencyMs = performance.now() - started;
    if (response.statusCode !== 200 || body.success !== true)
      throw new Error(`process-lead answered ${response.statusCode}: ${JSON.stringify(body)}`);
    const played = (domain ? 0 : (sites.spent.get(leadDomain) ?? 0) + siteExtraMs) + (llm.spent.get(email) ?? 0) + llmExtraMs;
    return { latencyMs, overheadMs: latencyMs - played };
  }

  /** Submits BATCH_LEADS leads as one batch and reads it every 50 ms until every job ended. */
  async function runBatch(): Promise<BatchRun> {
    const leads = Array.from({ length: BATCH_LEADS }, (_, index) => ({
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: `ada.${index}@batch-carrier-${index}.example.com`,
    }));
    const base = `http://127.0.0.1:${server.port}/api/client/lead-batches`;
    const headers = { 'content-type': 'application/json', 'x-api-key': apiKey };
    const started = performance.now();
    const submitted = await request(base, { method: 'POST', dispatcher: agent, headers, body: JSON.stringify({ leads }) });
    const accepted = (await submitted.body.json()) as { id: string; accepted: number };
    const acceptMs = performance.now() - started;
    if (submitted.statusCode !== 202 || accepted.accepted !== BATCH_LEADS) throw new Error(`lead-batches answered ${submitted.statusCode}`);
    let firstResultMs = NaN;
    for (;;) {
      const response = await request(`${base}/${accepted.id}?limit=1`, { dispatcher: agent, headers });
      const { batch } = (await response.body.json()) as { batch: { status: string; counts: Record<string, number> } };
      if (Number.isNaN(firstResultMs) && (batch.counts.completed ?? 0) > 0) firstResultMs = performance.now() - started;
      if (batch.status === 'completed')
        return { acceptMs, firstResultMs, lastResultMs: performance.now() - started, completed: batch.counts.completed ?? 0 };
      await sleep(50);
    }
  }

  /** A played service's latency beyond its own handling: the median extra of a direct call (HTTP both ways). */
  async function roundTripExtra(played: Played, call: (key: string) => Promise<void>): Promise<number> {
    const extras: number[] = [];
    for (let index = 0; index < 30; index += 1) {
      const key = `calibrate-${index}@bench.test`;
      const started = performance.now();
      await call(key);
      extras.push(performance.now() - started - (played.spent.get(key) ?? 0));
    }
    return percentile(extras, 0.5);
  }

  try {
    siteExtraMs = await roundTripExtra(sites, async (key) => {
      // The site keys its times by the path's first segment: the "domain".
      const response = await request(`http://127.0.0.1:${sites.port}/${key}/`, { dispatcher: agent });
      await response.body.text();
    });
    llmExtraMs = await roundTripExtra(llm, async (key) => {
      const prompt = `Write to Ada Lovelace <${key}> at a company.`.padEnd(1200, ' ');
      const response = await request(`http://127.0.0.1:${llm.port}/v1/chat/completions`, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: prompt }] }),
      });
      await response.body.text();
    });
    for (let index = 0; index < 10; index += 1) await oneLead();
    const single: LeadResult[] = [];
    for (let index = 0; index < SINGLE; index += 1) single.push(await oneLead());
    const cached: LeadResult[] = [];
    await oneLead('cached-carrier.example.com');
    for (let index = 0; index < SINGLE; index += 1) cached.push(await oneLead('cached-carrier.example.com'));

    const concurrent: LeadResult[] = [];
    const roundMs: number[] = [];
    const concurrentStarted = performance.now();
    for (let round = 0; round < ROUNDS; round += 1) {
      const started = performance.now();
      concurrent.push(...(await Promise.all(Array.from({ length: CONCURRENCY }, () => oneLead()))));
      roundMs.push(performance.now() - started);
    }
    const concurrentSeconds = (performance.now() - concurrentStarted) / 1000;
    const batch = await runBatch();

    return { dialect: database.dialect, single, cached, concurrent, concurrentSeconds, roundMs, siteExtraMs, llmExtraMs, batch };
  } finally {
    await stopServer(server);
    await agent.close();
    sites.server.close();
    llm.server.close();
  }
}

function report(runs: LeadRun[]): void {
  const name = (dialect: LeadRun['dialect']) => (dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL');
  const latencies = (results: LeadResult[], share: number, field: keyof LeadResult, digits: number) =>
    fixed(
      percentile(
        results.map((result) => result[field]),
        share,
      ),
      digits,
    );
  const row = (run: LeadRun, label: string, results: LeadResult[], leadsPerSecond: number) => [
    label,
    name(run.dialect),
    String(results.length),
    fixed(leadsPerSecond, 1),
    latencies(results, 0.5, 'latencyMs', 1),
    latencies(results, 0.99, 'latencyMs', 1),
    latencies(results, 0.5, 'overheadMs', 2),
    latencies(results, 0.99, 'overheadMs', 2),
  ];
  const sequentialRate = (results: LeadResult[]) => results.length / (results.reduce((sum, r) => sum + r.latencyMs, 0) / 1000);
  console.log(`\nLead API: process-lead, site played in ${SITE_DELAY_MS} ms, LLM in ${LLM_DELAY_MS} ms`);
  for (const run of runs) {
    console.log(
      `(${name(run.dialect)}: a direct call adds ${fixed(run.siteExtraMs, 2)} ms to the site's and ${fixed(run.llmExtraMs, 2)} ms to the LLM's own time; both count as theirs)`,
    );
  }
  console.log('');
  console.log(
    table(
      ['scenario', 'database', 'leads', 'leads/s', 'p50 ms', 'p99 ms', 'overhead p50', 'overhead p99'],
      runs.flatMap((run) => [
        row(run, 'one lead at a time (site + LLM)', run.single, sequentialRate(run.single)),
        row(run, 'one at a time, research cached', run.cached, sequentialRate(run.cached)),
        row(run, `${CONCURRENCY} concurrent (site + LLM)`, run.concurrent, run.concurrent.length / run.concurrentSeconds),
      ]),
      [false, false, true, true, true, true, true, true],
    ),
  );
  console.log('');
  for (const run of runs) {
    const oneLeadMs = percentile(
      run.single.map((r) => r.latencyMs),
      0.5,
    );
    const batchMs = percentile(run.roundMs, 0.5);
    const overhead = percentile(
      run.single.map((r) => r.overheadMs),
      0.5,
    );
    console.log(
      `${name(run.dialect)}: ${CONCURRENCY} concurrent leads finish in ${fixed(batchMs, 0)} ms (median of ${ROUNDS} rounds) = ` +
        `${fixed(batchMs / oneLeadMs, 2)}x one lead's ${fixed(oneLeadMs, 0)} ms (target < 2x); ` +
        `Masthead's own overhead per lead: ${fixed(overhead, 2)} ms median (target < 5 ms)${overhead < 5 && batchMs / oneLeadMs < 2 ? '' : '  <- target missed'}`,
    );
  }
  console.log(`\nLead batch: ${BATCH_LEADS} leads in one POST /api/client/lead-batches, run by the worker (site and LLM played as above)\n`);
  console.log(
    table(
      ['database', 'leads', 'accepted in ms', 'first result ms', 'last result s', 'leads/s', 'completed'],
      runs.map((run) => [
        name(run.dialect),
        String(BATCH_LEADS),
        fixed(run.batch.acceptMs, 0),
        fixed(run.batch.firstResultMs, 0),
        fixed(run.batch.lastResultMs / 1000, 1),
        fixed(BATCH_LEADS / (run.batch.lastResultMs / 1000), 1),
        String(run.batch.completed),
      ]),
      [false, true, true, true, true, true, true],
    ),
  );
}
