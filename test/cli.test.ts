import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AccountQueries } from '../src/accounts/queries.js';
import { AccountService } from '../src/accounts/service.js';
import { type Dialect, openStorage } from '../src/db/connection.js';
import { TemplateQueries } from '../src/leads/templates/queries.js';
import { TemplateService } from '../src/leads/templates/service.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from './helpers/app.js';
import { terminateBackends } from './helpers/db-faults.js';
import { ALL_MIGRATIONS } from './helpers/schema.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const COMMAND_TIMEOUT_MS = 30_000;
const API_KEY = /^mh_live_[A-Za-z0-9_-]{43}$/;

interface CliResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The environment of a child: only what node needs, plus the settings under test (nothing leaks in from ours). */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, ...env };
}

function spawnCli(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * Runs commands two at a time, results in order: each starts a Node process compiling TypeScript, and a dozen at once
 * on a loaded two-core machine can each take longer than COMMAND_TIMEOUT_MS.
 */
async function twoAtATime<T>(commands: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = new Array(commands.length);
  let next = 0;
  const lane = async () => {
    while (next < commands.length) {
      const index = next++;
      results[index] = await commands[index]!();
    }
  };
  await Promise.all([lane(), lane()]);
  return results;
}

/** Runs one `masthead` command to its end; killed if it takes longer than COMMAND_TIMEOUT_MS. */
async function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  const child = spawnCli(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), COMMAND_TIMEOUT_MS);
  try {
    const [status, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
    return { status, signal, stdout, stderr };
  } finally {
    clearTimeout(timer);
  }
}

/** The one JSON object a successful command prints. */
function jsonOutput(result: CliResult, args: string[]): any {
  assert.equal(result.status, 0, `masthead ${args.join(' ')} failed: ${result.stderr}`);
  assert.equal(result.stderr, '');
  const lines = result.stdout.trimEnd().split('\n');
  assert.equal(lines.length, 1, `one line of output: ${result.stdout}`);
  return JSON.parse(lines[0]!);
}

/** Fails unless a command exited non-zero with one line on stderr matching `message`, nothing on stdout, no stack. */
function expectOneLineFailure(result: CliResult, message: RegExp, what: string): void {
  assert.notEqual(result.status, 0, `${what}: exit status ${result.status}`);
  assert.equal(result.stdout, '', `${what}: nothing on stdout`);
  const stderr = result.stderr.trimEnd();
  assert.equal(stderr.split('\n').length, 1, `${what}: one line on stderr, got:\n${result.stderr}`);
  assert.match(stderr, message, what);
  assert.doesNotMatch(stderr, /\bat .*:\d+:\d+|Error:/, `${what}: no stack trace`);
}

/** A database for the commands of one dialect: a SQLite file in a temporary folder, or a fresh PostgreSQL schema. */
async function cliDatabase(dialect: Dialect): Promise<TestDatabase> {
  if (dialect === 'postgres') return createTestDatabase('postgres');
  const folder = mkdtempSync(join(tmpdir(), 'masthead-cli-'));
  return { url: join(folder, 'nested', 'masthead.sqlite'), drop: async () => rmSync(folder, { recursive: true, force: true }) };
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** True once the key authenticates against the database the commands used. */
async function keyWorks(databaseUrl: string, key: string): Promise<boolean> {
  const storage = openStorage(databaseUrl);
  try {
    return (await new AccountService(new AccountQueries(storage.db)).authenticate(key)) !== undefined;
  } finally {
    await storage.close();
  }
}

let emails = 0;
const uniqueEmail = () => `cli${++emails}-${process.pid}-${Date.now()}@example.com`;
const PASSWORD = 'correct horse battery';

for (const dialect of DIALECTS) {
  describe(`masthead CLI (${dialect})`, () => {
    let database: TestDatabase;
    let env: Record<string, string>;
    const masthead = (...args: string[]) => runCli(args, env);
    const mastheadJson = async (...args: string[]) => jsonOutput(await masthead(...args), args);

    before(async () => {
      database = await cliDatabase(dialect);
      env = { DATABASE_URL: database.url, LOG_LEVEL: 'warn' };
    });
    after(() => database.drop());

    it('migrate prints the migrations it applied: all on an empty database, none after', async () => {
      assert.deepEqual(await mastheadJson('migrate'), { applied: ALL_MIGRATIONS });
      assert.deepEqual(await mastheadJson('migrate'), { applied: [] });
    });

    it('account create prints {account: {id, name, plan}, user: {id, email}, api_key}', async () => {
      const email = uniqueEmail();
      const output = await mastheadJson(
        'account',
        'create',
        '--email',
        email.toUpperCase(),
        '--password',
        PASSWORD,
        '--name',
        'Acme Media',
        '--plan',
        'pro',
      );
      assert.deepEqual(Object.keys(output).sort(), ['account', 'api_key', 'user']);
      assert.deepEqual(output.account, { id: output.account.id, name: 'Acme Media', plan: 'pro' });
      assert.ok(Number.isInteger(output.account.id));
      assert.deepEqual(output.user, { id: output.user.id, email });
      assert.ok(Number.isInteger(output.user.id));
      assert.match(output.api_key, API_KEY);
      assert.ok(await keyWorks(database.url, output.api_key));
    });

    it("account create names the account after the email's domain and puts it on the free plan by default", async () => {
      const output = await mastheadJson('account', 'create', '--email', uniqueEmail(), '--password', PASSWORD);
      assert.deepEqual(output.account, { id: output.account.id, name: 'example.com', plan: 'free' });
    });

    it('publication create prints {publication: {id, app_id, name}}; the name defaults to the app id', async () => {
      const { account } = await mastheadJson('account', 'create', '--email', uniqueEmail(), '--password', PASSWORD);
      const named = await mastheadJson(
        'publication',
        'create',
        '--account',
        String(account.id),
        '--app-id',
        `named-${dialect}`,
        '--name',
        'The Weekly',
      );
      assert.deepEqual(named, { publication: { id: named.publication.id, app_id: `named-${dialect}`, name: 'The Weekly' } });
      assert.ok(Number.isInteger(named.publication.id));
      const plain = await mastheadJson('publication', 'create', '--account', String(account.id), '--app-id', `plain-${dialect}`);
      assert.deepEqual(plain.publication, { id: plain.publication.id, app_id: `plain-${dialect}`, name: `plain-${dialect}` });
    });

    it('key create prints {api_key}: a new key that works', async () => {
      const { user, api_key: first } = await mastheadJson('account', 'create', '--email', uniqueEmail(), '--password', PASSWORD);
      const output = await mastheadJson('key', 'create', '--user', String(user.id), '--name', 'ci');
      assert.deepEqual(Object.keys(output), ['api_key']);
      assert.match(output.api_key, API_KEY);
      assert.notEqual(output.api_key, first);
      assert.ok(await keyWorks(database.url, output.api_key));
    });

    it("template create prints {template: {id, name}}; the template is the account's and checked at save time", async () => {
      const { account } = await mastheadJson('account', 'create', '--email', uniqueEmail(), '--password', PASSWORD);
      const folder = mkdtempSync(join(tmpdir(), 'masthead-template-'));
      try {
        const good = join(folder, 'good.txt');
        writeFileSync(good, 'Hello {{firstName}},\n\nI read about {{companyName}}.\n');
        const output = await mastheadJson(
          'template',
          'create',
          '--account',
          String(account.id),
          '--name',
          'Intro',
          '--file',
          good,
          '--subject',
          'About {{companyName}}',
          '--default',
        );
        assert.deepEqual(Object.keys(output), ['template']);
        assert.deepEqual(Object.keys(output.template).sort(), ['id', 'name']);
        assert.equal(output.template.name, 'Intro');
        const storage = openStorage(database.url);
        try {
          const [stored] = await new TemplateService(new TemplateQueries(storage.db)).list(account.id);
          assert.equal(stored!.id, output.template.id);
          assert.equal(stored!.subject, 'About {{companyName}}');
          assert.equal(stored!.body, 'Hello {{firstName}},\n\nI read about {{companyName}}.\n');
          assert.equal(stored!.is_default, true);
        } finally {
          await storage.close();
        }

        const unknown = join(folder, 'unknown.txt');
        writeFileSync(unknown, 'Hello {{firstname}}');
        const binary = join(folder, 'binary.txt');
        writeFileSync(binary, Buffer.from([0xff, 0xfe, 0x00, 0x41]));
        const cases: [what: string, args: string[], message: RegExp][] = [
          ['unknown variable', ['--account', String(account.id), '--name', 'Bad', '--file', unknown], /firstname/],
          ['missing file', ['--account', String(account.id), '--name', 'Gone', '--file', join(folder, 'missing.txt')], /no such file/],
          ['not UTF-8', ['--account', String(account.id), '--name', 'Binary', '--file', binary], /not UTF-8/],
          ['duplicate name', ['--account', String(account.id), '--name', 'Intro', '--file', good], /already exists/],
          ['unknown account', ['--account', '999999', '--name', 'Orphan', '--file', good], /Account 999999 was not found/],
        ];
        const results = await twoAtATime(
          cases.map(
            ([, args]) =>
              () =>
                masthead('template', 'create', ...args),
          ),
        );
        cases.forEach(([what, , message], index) => expectOneLineFailure(results[index]!, message, what));
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    });

    it('refuses what clashes with or misses the stored data with a non-zero exit and one line on stderr', async () => {
      const email = uniqueEmail();
      const { account } = await mastheadJson('account', 'create', '--email', email, '--password', PASSWORD);
      await mastheadJson('publication', 'create', '--account', String(account.id), '--app-id', `taken-${dialect}`);
      const cases: [what: string, args: string[], message: RegExp][] = [
        ['duplicate email', ['account', 'create', '--email', email, '--password', PASSWORD], /already exists/],
        ['duplicate app id', ['publication', 'create', '--account', String(account.id), '--app-id', `taken-${dialect}`], /already taken/],
        ['bad app id', ['publication', 'create', '--account', String(account.id), '--app-id', 'has spaces'], /app_id/],
        ['unknown account', ['publication', 'create', '--account', '999999', '--app-id', 'orphan'], /Account 999999 was not found/],
        ['unknown user', ['key', 'create', '--user', '999999'], /User 999999 was not found/],
      ];
      const results = await twoAtATime(
        cases.map(
          ([, args]) =>
            () =>
              masthead(...args),
        ),
      );
      cases.forEach(([what, , message], index) => expectOneLineFailure(results[index]!, message, what));
    });

    it('serve applies migrations, answers over HTTP and exits 0 on SIGTERM', async () => {
      const fresh = await cliDatabase(dialect);
      const serveEnv = {
        DATABASE_URL: fresh.url,
        DATABASE_APPLICATION_NAME: `masthead-serve-${process.pid}`,
        HOST: '127.0.0.1',
        PORT: String(await freePort()),
        LOG_LEVEL: 'warn',
      };
      const base = `http://127.0.0.1:${serveEnv.PORT}`;
      let child: ChildProcess | undefined;
      try {
        child = spawnCli(['serve'], serveEnv);
        let output = '';
        child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
        child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
        const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
        await waitUntilHealthy(base, child, () => output);

        const { api_key: apiKey, account } = jsonOutput(
          await runCli(['account', 'create', '--email', uniqueEmail(), '--password', PASSWORD], serveEnv),
          ['account create'],
        );
        const appId = `served-${dialect}`;
        jsonOutput(await runCli(['publication', 'create', '--account', String(account.id), '--app-id', appId], serveEnv), ['publication create']);

        const headers = { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` };
        const created = await fetch(`${base}/api/portal/v1/articles/${appId}`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ title: 'Over the wire' }),
        });
        assert.equal(created.status, 201, await created.clone().text());
        const article = (await created.json()) as { id: number; title: string };
        assert.equal(article.title, 'Over the wire');
        const listed = await fetch(`${base}/api/portal/v1/articles/${appId}`, { headers: { 'x-api-key': apiKey } });
        assert.deepEqual(
          ((await listed.json()) as { id: number }[]).map((row) => row.id),
          [article.id],
        );

        if (dialect === 'postgres') {
          // PostgreSQL drops the server's connections (a restart, a failover), twice: the process lives on and answers.
          for (let round = 0; round < 2; round += 1) {
            assert.ok((await terminateBackends(serveEnv.DATABASE_APPLICATION_NAME)) > 0, 'the server had connections to drop');
            await waitUntil(async () => (await fetch(`${base}/readyz`)).ok, 'serve to reconnect');
          }
          assert.equal(child.exitCode, null, `serve is still running: ${output}`);
          const again = await fetch(`${base}/api/portal/v1/articles/${appId}/${article.id}`, { headers: { 'x-api-key': apiKey } });
          assert.equal(again.status, 200);
          assert.match(output, /a database connection was dropped/, 'the loss is logged');
        }

        child.kill('SIGTERM');
        const [code, signal] = await withTimeout(exited, COMMAND_TIMEOUT_MS, 'serve did not stop after SIGTERM');
        assert.deepEqual({ code, signal }, { code: 0, signal: null }, output);
      } finally {
        if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        await fresh.drop();
      }
    });
  });
}

describe('masthead CLI arguments and environment', () => {
  let database: TestDatabase;
  before(async () => {
    database = await cliDatabase('sqlite');
  });
  after(() => database.drop());

  it('refuses malformed arguments and settings with a non-zero exit and one line on stderr', async () => {
    const env = { DATABASE_URL: database.url };
    const cases: [what: string, args: string[], env: Record<string, string>, message: RegExp][] = [
      ['bad email', ['account', 'create', '--email', 'not-an-email', '--password', PASSWORD], env, /email/],
      ['short password', ['account', 'create', '--email', uniqueEmail(), '--password', 'short'], env, /password/],
      ['unknown plan', ['account', 'create', '--email', uniqueEmail(), '--password', PASSWORD, '--plan', 'gold'], env, /plan/],
      ['non-numeric account id', ['publication', 'create', '--account', 'abc', '--app-id', 'x'], env, /--account/],
      ['zero account id', ['publication', 'create', '--account', '0', '--app-id', 'x'], env, /--account/],
      ['non-numeric user id', ['key', 'create', '--user', '1e3'], env, /--user/],
      ['missing option', ['account', 'create', '--password', PASSWORD], env, /--email/],
      ['unknown command', ['frobnicate'], env, /frobnicate/],
      ['bad PORT', ['migrate'], { ...env, PORT: 'abc' }, /PORT/],
      ['bad LOG_LEVEL', ['migrate'], { ...env, LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
      ['bad DATABASE_URL', ['migrate'], { DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
    ];
    const results = await twoAtATime(
      cases.map(
        ([, args, caseEnv]) =>
          () =>
            runCli(args, caseEnv),
      ),
    );
    cases.forEach(([what, , , message], index) => expectOneLineFailure(results[index]!, message, what));
  });
});

async function waitUntilHealthy(base: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + COMMAND_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}: ${output()}`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`serve did not answer /healthz within ${COMMAND_TIMEOUT_MS} ms: ${output()}`);
}

async function waitUntil(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + COMMAND_TIMEOUT_MS;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`waited ${COMMAND_TIMEOUT_MS} ms for ${what}`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
