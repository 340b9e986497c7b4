// `npm run bench`: the Articles API with 100,000 articles on SQLite and on PostgreSQL, side by side, each against a
// bare Fastify route measured in the same run, at 10 and at 50 connections.
//
// Seeds (or reuses) .bench/articles-*.sqlite and the PostgreSQL schema masthead_bench (bench/seed.ts; PostgreSQL from
// BENCH_POSTGRES_URL or the local server, bench/postgres.ts), starts the real Masthead server on each and a bare
// Fastify server in child processes on 127.0.0.1, runs each scenario with autocannon from this process (a short
// warm-up first), prints one table and the goals. Exit code 1 when a row is invalid (non-2xx responses, socket errors) or anything
// fails; missed targets are reported, not an error. The seed is kept in .bench/ and reused while its version key
// (seed format and migrations) matches; articles a run creates are removed afterwards. "other CPU" is the share of
// the machine other processes took during a row: anything above a few percent means run again.
//
// Settings (environment): BENCH_DURATION seconds per scenario (10), BENCH_WARMUP seconds (2), BENCH_CONNECTIONS (10,50),
// BENCH_ONLY=get,deep,... to run some scenarios (the bare route always runs; `feeds` names the feed rows of
// bench/feeds.ts, `leads` the lead API rows of bench/leads.ts, `dashboard` the page loads of bench/dashboard.ts and
// `event-loop` the event-loop delay rows of bench/event-loop.ts, which run after the articles table in that order;
// BENCH_ONLY=feeds, leads, dashboard or event-loop runs them alone, without seeding),
// BENCH_NODE_ARGS extra node flags for the servers (e.g. "--cpu-prof --cpu-prof-dir=.bench/prof").

import { cpus } from 'node:os';
import { type Server, killAll, startServer, stopServer } from './children.js';
import { othersShare, sampleCpu } from './cpu.js';
import { runDashboardBench } from './dashboard.js';
import { runEventLoopBench } from './event-loop.js';
import { runFeedBench } from './feeds.js';
import { runLeadBench } from './leads.js';
import { type LoadOptions, type LoadRequest, type Measurement, measure } from './load.js';
import { fixed, table, thousands } from './report.js';
import { benchPostgres } from './postgres.js';
import { ARTICLES, FILTER_WORD, type Seed, preparePostgresSeed, prepareSqliteSeed, trimToSeed } from './seed.js';

const DURATION = positiveNumber('BENCH_DURATION', 10);
const WARMUP = nonNegativeNumber('BENCH_WARMUP', 2);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS || '10,50').split(',').map((text) => {
  const value = Number(text.trim());
  if (!Number.isInteger(value) || value < 1) usage(`BENCH_CONNECTIONS must be whole numbers of 1 or more, got "${text}"`);
  return value;
});
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
  dialect: Seed['dialect'];
  connections: number;
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
      label: 'page 2 (per_page=20)',
      server: 'masthead',
      requests: [{ path: `${base}/page/2?per_page=20` }],
      check: (_status, body) => expectRecords(body, 20),
    },
    {
      key: 'deep',
      label: 'deep page 2,001 (offset 40,000)',
      server: 'masthead',
      requests: [{ path: `${base}/page/2001?per_page=20` }],
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
    `Masthead benchmark: ${ARTICLES.toLocaleString('en-US')} articles, ${DURATION} s per scenario (+${WARMUP} s warm-up), ` +
      `${CONNECTIONS.join(' and ')} connections, node ${process.version}, ${cpus().length} CPU (${cpus()[0]?.model.trim() ?? 'unknown'})`,
  );
  const busy = await machineBusy();
  if (busy > 0.15) console.log(`warning: the machine is ${Math.round(100 * busy)}% busy before the run: the numbers will be noisy`);
  const postgres = await benchPostgres();
  if (postgres.url === undefined) console.log(postgres.note);
  const seeds: Seed[] = [await prepareSqliteSeed()];
  if (postgres.url !== undefined) seeds.push(await preparePostgresSeed(postgres.url));
  for (const seed of seeds) {
    console.log(
      `seed: ${seed.reused ? 'reused' : 'created'} ${seed.where} (${ARTICLES.toLocaleString('en-US')} articles) in ${seed.seconds.toFixed(1)} s`,
    );
  }

  const rows: Row[] = [];
  for (const seed of seeds) rows.push(...(await runOn(seed)));
  print(rows, seeds);
  const invalidRows = rows.filter((row) => row.invalid);
  if (invalidRows.length > 0) {
    console.error(`\n!!! ${invalidRows.length} row(s) INVALID: non-2xx responses or socket errors. Their numbers mean nothing:`);
    for (const row of invalidRows) console.error(`!!!   ${row.dialect} ${row.connections} ${row.scenario.label}: ${row.invalid}`);
    return 1;
  }
  return 0;
}

/** Every scenario on one database, at each number of connections, the bare route first each time. */
async function runOn(seed: Seed): Promise<Row[]> {
  const servers: Server[] = [];
  try {
    const [bare, masthead] = await Promise.all([
      startServer('bare server', 'bench/bare-server.ts', { PORT: '0' }),
      startServer('masthead server', 'bench/server.ts', { DATABASE_URL: seed.databaseUrl, PORT: '0', LOG_LEVEL: 'silent' }),
    ]);
    servers.push(bare, masthead);
    const origin = (scenario: Scenario) => `http://127.0.0.1:${(scenario.server === 'bare' ? bare : masthead).port}`;
    const headers = { 'x-api-key': seed.apiKey, 'content-type': 'application/json' };

    const rows: Row[] = [];
    for (const connections of CONNECTIONS) {
      for (const scenario of scenarios(seed)) {
        const note = await preflight(origin(scenario), headers, scenario);
        process.stdout.write(`  ${seed.dialect}, ${connections} connections: ${scenario.label}${note ? ` [${note}]` : ''} ... `);
        const options: LoadOptions = { origin: origin(scenario), requests: scenario.requests, connections, headers, seconds: WARMUP };
        if (WARMUP > 0) await measure(options);
        const pids = servers.flatMap((server) => (server.child.pid === undefined ? [] : [server.child.pid]));
        const database = seed.dialect === 'postgres' ? 'postgres' : undefined;
        const before = sampleCpu(pids, database);
        const result = await measure({ ...options, seconds: DURATION });
        const others = othersShare(before, sampleCpu(pids, database), DURATION);
        const invalid = invalidity(result);
        rows.push({ dialect: seed.dialect, connections, scenario, result, invalid, others });
        console.log(invalid ? `INVALID: ${invalid}` : `${thousands(result.requestsPerSecond)} req/s`);
      }
      // Articles the create scenario added are removed before the next round reads pages.
      await trimToSeed(seed);
    }
    return rows;
  } finally {
    await Promise.all(servers.map((server) => stopServer(server)));
    await trimToSeed(seed);
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

/** The goals of issue 13, per database: a share of the bare route, or a p99 bound at a number of connections. */
const GOALS: { key: string; label: string; check: (row: Row, share: number) => boolean; sqlite: string; postgres: string }[] = [
  {
    key: 'get',
    label: 'single-article GET',
    check: (row, share) => share >= (row.dialect === 'sqlite' ? 50 : 25),
    sqlite: '>= 50% of bare',
    postgres: '>= 25% of bare',
  },
  ...(['page', 'deep', 'filter'] as const).map((key) => ({
    key,
    label: key === 'page' ? 'page' : key === 'deep' ? 'deep page' : 'filter page',
    check: (row: Row) => row.result.p99 < (row.connections <= 10 ? 20 : 100),
    sqlite: 'p99 < 20 ms at 10, < 100 ms at 50',
    postgres: 'p99 < 20 ms at 10, < 100 ms at 50',
  })),
  {
    key: 'post',
    label: 'create',
    check: (row, share) => (row.dialect === 'sqlite' ? share >= 15 && (row.connections < 50 || row.result.p99 < 100) : share >= 8),
    sqlite: '>= 15% of bare, p99 < 100 ms at 50',
    postgres: '>= 8% of bare',
  },
];

function print(rows: Row[], seeds: Seed[]): void {
  const dialects = seeds.map((seed) => seed.dialect);
  const bareRate = (dialect: Seed['dialect'], connections: number) => {
    const bare = rows.find((row) => row.dialect === dialect && row.connections === connections && row.scenario.key === 'bare');
    return bare && !bare.invalid ? bare.result.requestsPerSecond : Number.NaN;
  };
  const share = (row: Row) => (100 * row.result.requestsPerSecond) / bareRate(row.dialect, row.connections);
  const name = (dialect: Seed['dialect']) => (dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL');
  const cell = (row: Row | undefined) =>
    row
      ? [
          thousands(row.result.requestsPerSecond),
          `${fixed(share(row), 1)}%`,
          fixed(row.result.p50, 2),
          fixed(row.result.p99, 2),
          row.invalid ? 'INVALID' : row.others > 0.1 ? `busy ${fixed(100 * row.others, 0)}%` : 'ok',
        ]
      : ['', '', '', '', ''];
  const find = (dialect: Seed['dialect'], connections: number, key: string) =>
    rows.find((row) => row.dialect === dialect && row.connections === connections && row.scenario.key === key);
  const lines: string[][] = [];
  for (const connections of CONNECTIONS) {
    for (const scenario of rows.filter((row) => row.dialect === dialects[0] && row.connections === connections).map((row) => row.scenario)) {
      lines.push([scenario.label, String(connections), ...dialects.flatMap((dialect) => cell(find(dialect, connections, scenario.key)))]);
    }
  }
  console.log('');
  console.log(
    table(['scenario', 'conns', ...dialects.flatMap((dialect) => [`${name(dialect)} req/s`, 'vs bare', 'p50 ms', 'p99 ms', 'check'])], lines, [
      false,
      true,
      ...dialects.flatMap(() => [true, true, true, true, false]),
    ]),
  );
  if (rows.some((row) => row.others > 0.1)) {
    console.log('\nwarning: other processes took more than 10% of the CPU during rows marked "busy": run again on a quiet machine.');
  }
  console.log('');
  for (const goal of GOALS) {
    for (const dialect of dialects) {
      const measured = rows.filter((row) => row.dialect === dialect && row.scenario.key === goal.key);
      if (measured.length === 0) continue;
      const pass = measured.every((row) => !row.invalid && goal.check(row, share(row)));
      const figures = measured.map((row) => `${row.connections}: ${fixed(share(row), 1)}%, p99 ${fixed(row.result.p99, 1)} ms`).join('; ');
      console.log(`${goal.label} on ${name(dialect)} (${goal[dialect]}): ${pass ? 'PASS' : 'FAIL'} (${figures})`);
    }
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

// Bounded in time whatever happens: seeding both databases, then each scenario's warm-up and run, with a generous margin.
const LIMIT_MS = (25 * 60 + 2 * CONNECTIONS.length * 6 * (DURATION + WARMUP + 30) + 5 * 60) * 1000;
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
