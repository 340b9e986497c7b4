// `npm run bench`: the Articles API on SQLite with 100,000 articles, against a bare Fastify route, same run.
//
// Seeds (or reuses) .bench/articles-*.sqlite, starts the real Masthead server and a bare Fastify server in child
// processes on 127.0.0.1, runs each scenario with autocannon from this process (a short warm-up first), prints a
// table and the issue's targets. Exit code 1 when a row is invalid (non-2xx responses, socket errors) or anything
// fails; missed targets are reported, not an error. The seed is kept in .bench/ and reused while its version key
// (seed format and migrations) matches; articles a run creates are removed afterwards. "other CPU" is the share of
// the machine other processes took during a row: anything above a few percent means run again.
//
// Settings (environment): BENCH_DURATION seconds per scenario (10), BENCH_WARMUP seconds (2), BENCH_CONNECTIONS (10),
// BENCH_ONLY=get,deep,... to run some scenarios (the bare route always runs; `feeds` names the feed rows of
// bench/feeds.ts, `leads` the lead API rows of bench/leads.ts, `dashboard` the page loads of bench/dashboard.ts and
// `event-loop` the event-loop delay rows of bench/event-loop.ts, which run after the articles table in that order;
// BENCH_ONLY=feeds, leads, dashboard or event-loop runs them alone, without seeding),
// BENCH_NODE_ARGS extra node flags for the servers (e.g. "--cpu-prof --cpu-prof-dir=.bench/prof").

import { cpus } from 'node:os';
import { relative } from 'node:path';
import { ROOT, type Server, killAll, startServer, stopServer } from './children.js';
import { othersShare, sampleCpu } from './cpu.js';
import { runDashboardBench } from './dashboard.js';
import { runEventLoopBench } from './event-loop.js';
import { runFeedBench } from './feeds.js';
import { runLeadBench } from './leads.js';
import { type LoadOptions, type LoadRequest, type Measurement, measure } from './load.js';
import { fixed, table, thousands } from './report.js';
import { ARTICLES, FILTER_WORD, type Seed, prepareSeed, trimToSeed } from './seed.js';

const DURATION = positiveNumber('BENCH_DURATION', 10);
const WARMUP = nonNegativeNumber('BENCH_WARMUP', 2);
const CONNECTIONS = positiveNumber('BENCH_CONNECTIONS', 10);
/**
 * Distinct requests each connection cycles through: random article ids (every connection walks the same list, so
 * a row may be read by several connections in a row; the whole file sits in the OS page cache anyway), and titles
 * of created articles (fewer: each body is ~2.5 KB and every connection encodes them all).
 */
const ARTICLE_IDS = 2_000;
const CREATE_BODIES = 100;
const ONLY = process.env.BENCH_ONLY?.split(',')
  .map((key) => key.trim())
  .filter((key) => key !== '');
const SECTIONS = ['feeds', 'leads', 'dashboard', 'event-loop'];
const RUN_ARTICLES = !ONLY || ONLY.some((key) => !SECTIONS.includes(key));
const RUN_FEEDS = !ONLY || ONLY.includes('feeds');
const RUN_LEADS = !ONLY || ONLY.includes('leads');
const RUN_DASHBOARD = !ONLY || ONLY.includes('dashboard');
const RUN_EVENT_LOOP = !ONLY || ONLY.includes('event-loop');

interface Scenario {
  key: string;
  label: string;
  server: 'bare' | 'masthead';
  /**
   * The requests, sent in turn by every connection. They are built up front rather than per request (setupRequest):
   * autocannon shares the machine with the servers, and building each request costs it about as much as the bare
   * route costs the server, which would halve the baseline.
   */
  requests: LoadRequest[];
  /** Checks one response before the load starts; returns a note for the report or throws. */
  check?: (status: number, body: unknown) => string | undefined;
}

interface Row {
  scenario: Scenario;
  result: Measurement;
  invalid: string | undefined;
  /** Share of the machine's CPU time other processes took during the measurement (0..1, NaN if unknown). */
  others: number;
}

function scenarios(seed: Seed): Scenario[] {
  const base = `/api/portal/v1/articles/${seed.appId}`;
  const randomId = () => 1 + Math.floor(Math.random() * seed.lastArticleId);
  const createBody = articleBody(seed.categoryIds.slice(0, 2));
  const all: Scenario[] = [
    { key: 'bare', label: 'bare Fastify route', server: 'bare', requests: [{ path: '/' }] },
    {
      key: 'get',
      label: 'GET /articles/:app_id/:id',
      server: 'masthead',
      requests: Array.from({ length: ARTICLE_IDS }, () => ({ path: `${base}/${randomId()}` })),
    },
    {
      key: 'page',
      label: 'page 1 (per_page=20)',
      server: 'masthead',
      requests: [{ path: `${base}/page/1?per_page=20` }],
      check: (_status, body) => expectRecords(body, 20),
    },
    {
      key: 'deep',
      label: 'page 2,000 (per_page=20)',
      server: 'masthead',
      requests: [{ path: `${base}/page/2000?per_page=20` }],
      check: (_status, body) => expectRecords(body, 20),
    },
    {
      key: 'filter',
      label: `filter page (filter=${FILTER_WORD})`,
      server: 'masthead',
      requests: [{ path: `${base}/page/1?per_page=20&filter=${FILTER_WORD}` }],
      check: (_status, body) => {
        const total = (body as { total?: number }).total ?? 0;
        if (total < 100 || total > 1000) throw new Error(`the filter matches ${total} articles, expected a few hundred`);
        expectRecords(body, 20);
        return `${total} matches`;
      },
    },
    {
      key: 'post',
      label: 'POST /articles/:app_id (2 KB html)',
      server: 'masthead',
      requests: Array.from({ length: CREATE_BODIES }, (_, n) => ({ method: 'POST' as const, path: base, body: createBody(n + 1) })),
    },
  ];
  return all.filter((scenario) => scenario.key === 'bare' || !ONLY || ONLY.includes(scenario.key));
}

async function main(): Promise<number> {
  console.log(
    `Masthead benchmark: ${ARTICLES.toLocaleString('en-US')} articles on SQLite, ${DURATION} s per scenario ` +
      `(+${WARMUP} s warm-up), ${CONNECTIONS} connections, node ${process.version}, ${cpus().length} CPU ` +
      `(${cpus()[0]?.model.trim() ?? 'unknown'})`,
  );
  const busy = await machineBusy();
  if (busy > 0.15) console.log(`warning: the machine is ${Math.round(100 * busy)}% busy before the run: the numbers will be noisy`);
  const seed = await prepareSeed();
  console.log(
    `seed: ${seed.reused ? 'reused' : 'created'} ${relative(ROOT, seed.databasePath)} ` +
      `(${ARTICLES.toLocaleString('en-US')} articles) in ${seed.seconds.toFixed(1)} s`,
  );

  const servers: Server[] = [];
  try {
    const [bare, masthead] = await Promise.all([
      startServer('bare server', 'bench/bare-server.ts', { PORT: '0' }),
      startServer('masthead server', 'bench/server.ts', { DATABASE_URL: seed.databasePath, PORT: '0', LOG_LEVEL: 'silent' }),
    ]);
    servers.push(bare, masthead);
    const origin = (scenario: Scenario) => `http://127.0.0.1:${(scenario.server === 'bare' ? bare : masthead).port}`;
    const headers = { 'x-api-key': seed.apiKey, 'content-type': 'application/json' };

    const rows: Row[] = [];
    for (const scenario of scenarios(seed)) {
      const note = await preflight(origin(scenario), headers, scenario);
      process.stdout.write(`  ${scenario.label}${note ? ` [${note}]` : ''} ... `);
      const options: LoadOptions = { origin: origin(scenario), requests: scenario.requests, connections: CONNECTIONS, headers, seconds: WARMUP };
      if (WARMUP > 0) await measure(options);
      const pids = servers.flatMap((server) => (server.child.pid === undefined ? [] : [server.child.pid]));
      const before = sampleCpu(pids);
      const result = await measure({ ...options, seconds: DURATION });
      const others = othersShare(before, sampleCpu(pids), DURATION);
      const invalid = invalidity(result);
      rows.push({ scenario, result, invalid, others });
      console.log(invalid ? `INVALID: ${invalid}` : `${thousands(result.requestsPerSecond)} req/s`);
    }

    print(rows);
    const invalidRows = rows.filter((row) => row.invalid);
    if (invalidRows.length > 0) {
      console.error(`\n!!! ${invalidRows.length} row(s) INVALID: non-2xx responses or socket errors. Their numbers mean nothing:`);
      for (const row of invalidRows) console.error(`!!!   ${row.scenario.label}: ${row.invalid}`);
      return 1;
    }
    return 0;
  } finally {
    await Promise.all(servers.map((server) => stopServer(server)));
    killAll();
    trimToSeed(seed.databasePath, seed.lastArticleId);
  }
}

/** The share of CPU time in use over half a second, by whatever runs on the machine. */
async function machineBusy(): Promise<number> {
  const sample = () =>
    cpus().reduce(
      (sum, cpu) => {
        const { idle, ...rest } = cpu.times;
        return { idle: sum.idle + idle, total: sum.total + idle + Object.values(rest).reduce((a, b) => a + b, 0) };
      },
      { idle: 0, total: 0 },
    );
  const before = sample();
  await new Promise((resolve) => setTimeout(resolve, 500));
  const after = sample();
  const total = after.total - before.total;
  return total > 0 ? 1 - (after.idle - before.idle) / total : 0;
}

/** One request before the load: a scenario whose first response is not 2xx is not worth ten seconds. */
async function preflight(origin: string, headers: Record<string, string>, scenario: Scenario): Promise<string | undefined> {
  const { method = 'GET', path, body } = scenario.requests[0]!;
  const response = await fetch(`${origin}${path}`, { method, headers, body, signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  if (response.status < 200 || response.status > 299) {
    throw new Error(`${scenario.label}: ${method} ${path} answered ${response.status}: ${text.slice(0, 500)}`);
  }
  return scenario.check?.(response.status, JSON.parse(text));
}

function expectRecords(body: unknown, count: number): undefined {
  const records = (body as { records?: unknown[] }).records;
  if (!Array.isArray(records) || records.length !== count) {
    throw new Error(`expected a page of ${count} records, got ${JSON.stringify(body).slice(0, 300)}`);
  }
  return undefined;
}

function invalidity(result: Measurement): string | undefined {
  const problems: string[] = [];
  if (result.non2xx > 0) {
    const codes = Object.entries(result.statusCodes)
      .filter(([code]) => !code.startsWith('2'))
      .map(([code, count]) => `${count} x ${code}`)
      .join(', ');
    problems.push(`${result.non2xx} non-2xx responses (${codes})`);
  }
  if (result.errors > 0) problems.push(`${result.errors} socket errors (${result.timeouts} timeouts)`);
  if (result.total === 0) problems.push('no responses at all');
  return problems.length > 0 ? problems.join('; ') : undefined;
}

function print(rows: Row[]): void {
  const bare = rows.find((row) => row.scenario.key === 'bare');
  const bareRate = bare && !bare.invalid ? bare.result.requestsPerSecond : Number.NaN;
  console.log('');
  console.log(
    table(
      ['scenario', 'req/s', 'vs bare', 'p50 ms', 'p99 ms', 'max ms', 'requests', 'non-2xx', 'other CPU', 'status'],
      rows.map(({ scenario, result, invalid, others }) => [
        scenario.label,
        thousands(result.requestsPerSecond),
        `${fixed((100 * result.requestsPerSecond) / bareRate, 1)}%`,
        fixed(result.p50, 2),
        fixed(result.p99, 2),
        fixed(result.max, 1),
        thousands(result.total),
        String(result.non2xx),
        `${fixed(100 * others, 0)}%`,
        invalid ? 'INVALID' : 'ok',
      ]),
      [false, true, true, true, true, true, true, true, true, false],
    ),
  );
  const disturbed = rows.filter((row) => row.others > 0.1);
  if (disturbed.length > 0) {
    console.log(
      `\nwarning: other processes took more than 10% of the CPU during ${disturbed.map((row) => row.scenario.key).join(', ')}` +
        ' ("other CPU"): those rows understate what the service can do; run again on a quiet machine.',
    );
  }
  console.log('');
  const row = (key: string) => rows.find((candidate) => candidate.scenario.key === key);
  const get = row('get');
  if (get) {
    const share = (100 * get.result.requestsPerSecond) / bareRate;
    const pass = !get.invalid && Number.isFinite(share) && share >= 50;
    console.log(`single-article GET >= 50% of bare: ${pass ? 'PASS' : 'FAIL'} (${fixed(share, 1)}%${get.invalid ? ', INVALID' : ''})`);
  }
  for (const [key, label] of [
    ['deep', 'deep page'],
    ['filter', 'filter page'],
  ] as const) {
    const found = row(key);
    if (!found) continue;
    const pass = !found.invalid && found.result.p99 < 20;
    console.log(`${label} p99 < 20 ms: ${pass ? 'PASS' : 'FAIL'} (${fixed(found.result.p99, 2)} ms${found.invalid ? ', INVALID' : ''})`);
  }
}

function articleBody(categoryIds: number[]): (n: number) => string {
  const paragraph =
    '<p>The harbour was quiet that <strong>morning</strong>, and the market had not yet opened; the ' +
    'fishermen mended their nets by the old stone bridge while the first ferry crossed the bay. ' +
    '<a href="https://example.com/harbour">Read more about the harbour</a> and its long history of trade, ' +
    'festivals and forgotten voyages along the northern coast.</p>';
  let html = '<h2>A morning at the harbour</h2>';
  while (html.length < 2_000) html += paragraph;
  return (n) =>
    JSON.stringify({
      title: `Benchmark article ${n}: a morning at the harbour`,
      info: 'Fishermen, ferries and the first light over the bay.',
      html,
      date: '2026-01-15 08:30:00',
      category_ids: categoryIds,
      unlock_type: 'free',
    });
}

function positiveNumber(name: string, fallback: number): number {
  const value = nonNegativeNumber(name, fallback);
  if (value === 0) usage(`${name} must be more than 0`);
  return value;
}

function nonNegativeNumber(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0) usage(`${name} must be a number of 0 or more, got "${text}"`);
  return value;
}

function usage(message: string): never {
  console.error(`bench: ${message}`);
  process.exit(1);
}

// Bounded in time whatever happens: seeding, then each scenario's warm-up and run, with a generous margin.
const LIMIT_MS = (15 * 60 + 6 * (DURATION + WARMUP + 30) + 5 * 60) * 1000;
const watchdog = setTimeout(() => {
  console.error(`\nbench: gave up after ${LIMIT_MS / 1000} s`);
  killAll();
  process.exit(2);
}, LIMIT_MS);
watchdog.unref();

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    killAll();
    process.exit(130);
  });
}

try {
  process.exitCode = RUN_ARTICLES ? await main() : 0;
  if (RUN_FEEDS) await runFeedBench();
  if (RUN_LEADS) await runLeadBench();
  if (RUN_DASHBOARD) await runDashboardBench();
  if (RUN_EVENT_LOOP) await runEventLoopBench();
} catch (error) {
  console.error(`\nbench: ${error instanceof Error ? error.message : String(error)}`);
  killAll();
  process.exitCode = 1;
}
