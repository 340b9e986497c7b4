#!/usr/bin/env node
import { readFile } from 'node:fs/promises';
import { Command, InvalidArgumentError } from 'commander';
import { buildAdminServices, buildApp } from './app.js';
import { type Config, ConfigError, loadConfig } from './config.js';
import { openStorage, type Storage } from './db/connection.js';
import { migrateToLatest } from './db/migrate.js';
import { AppError } from './errors.js';
import { MAX_TEMPLATE_BYTES } from './leads/templates/engine.js';

// No help text after a usage error: every command fails with one line (`--help` shows the usage).
const program = new Command('masthead').description('Masthead: the publication portal and lead email generation service');

program
  .command('serve')
  .description('apply pending migrations, then serve both APIs (PORT, HOST, DATABASE_URL, ...)')
  .action(() => run(serve));

program
  .command('migrate')
  .description('apply pending database migrations')
  .action(() =>
    run(async (_config, storage) => {
      const results = await migrateToLatest(storage.db, storage.dialect);
      print({ applied: results.map((result) => result.migrationName) });
    }),
  );

const account = program.command('account').description('manage accounts');
account
  .command('create')
  .description('create an account, its owner and a first API key')
  .requiredOption('--email <email>', "the owner's email")
  .requiredOption('--password <password>', "the owner's password (at least 10 characters)")
  .option('--name <name>', "the account's name (default: the email's domain)")
  .option('--plan <plan>', 'free, pro or business', 'free')
  .action((options: { email: string; password: string; name?: string; plan: string }) =>
    withStorage(async (storage) => print(await buildAdminServices(storage).accounts.createAccount(options))),
  );

const publication = program.command('publication').description('manage publications');
publication
  .command('create')
  .description('create a publication in an account')
  .requiredOption('--account <id>', 'the account id', positiveInteger)
  .requiredOption('--app-id <appId>', "the publication's unique App ID")
  .option('--name <name>', "the publication's name (default: the App ID)")
  .action((options: { account: number; appId: string; name?: string }) =>
    withStorage(async (storage) => {
      const created = await buildAdminServices(storage).publications.create({
        accountId: options.account,
        appId: options.appId,
        name: options.name,
      });
      print({ publication: { id: created.id, app_id: created.app_id, name: created.name } });
    }),
  );

const key = program.command('key').description('manage API keys');
key
  .command('create')
  .description('create an API key for a user; it is printed once and stored only hashed')
  .requiredOption('--user <id>', 'the user id', positiveInteger)
  .option('--name <name>', 'a name to tell the key apart')
  .action((options: { user: number; name?: string }) =>
    withStorage(async (storage) =>
      print({ api_key: await buildAdminServices(storage).accounts.createKey({ userId: options.user, name: options.name }) }),
    ),
  );

const template = program.command('template').description('manage prompt templates of the lead API');
template
  .command('create')
  .description('create a prompt template from a file ({{variables}} are checked now, not when a lead uses it)')
  .requiredOption('--account <id>', 'the account id', positiveInteger)
  .requiredOption('--name <name>', "the template's name, unique in the account")
  .requiredOption('--file <path>', 'a UTF-8 text file: the body template, also the prompt when an LLM writes the email')
  .option('--subject <subject>', 'the subject line template (default: the generator writes the subject)')
  .option('--default', "make it the account's default template")
  .action((options: { account: number; name: string; file: string; subject?: string; default?: boolean }) =>
    withStorage(async (storage) => {
      const body = await readTemplateFile(options.file);
      const { accounts, templates } = buildAdminServices(storage);
      await accounts.getAccount(options.account);
      const created = await templates.create(options.account, {
        name: options.name,
        subject: options.subject,
        body,
        isDefault: options.default,
      });
      print({ template: { id: created.id, name: created.name } });
    }),
  );

async function readTemplateFile(path: string): Promise<string> {
  const bytes = await readFile(path).catch((error: NodeJS.ErrnoException) => {
    throw new Error(`cannot read ${path}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`);
  });
  if (bytes.length > MAX_TEMPLATE_BYTES) throw new Error(`${path} is ${bytes.length} bytes; a template holds at most ${MAX_TEMPLATE_BYTES}`);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new Error(`${path} is not UTF-8 text`);
  }
}

function positiveInteger(value: string): number {
  if (!/^\d{1,10}$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a positive whole number');
  return Number(value);
}

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** Runs a command against a migrated database and closes it afterwards. */
function withStorage(action: (storage: Storage) => Promise<void>): Promise<void> {
  return run(async (_config, storage) => {
    await migrateToLatest(storage.db, storage.dialect);
    await action(storage);
  });
}

async function run(action: (config: Config, storage: Storage) => Promise<void | 'keep-open'>): Promise<void> {
  let storage: Storage | undefined;
  try {
    const config = loadConfig();
    storage = openStorage(config.databaseUrl, config.postgresPool);
    if ((await action(config, storage)) === 'keep-open') return;
    await storage.close();
  } catch (error) {
    await storage?.close().catch(() => undefined);
    fail(error);
  }
}

function fail(error: unknown): never {
  const message = error instanceof AppError || error instanceof ConfigError || error instanceof Error ? error.message : String(error);
  process.stderr.write(`masthead: ${message.split('\n')[0]}\n`);
  process.exit(1);
}

async function serve(config: Config, storage: Storage): Promise<'keep-open'> {
  await migrateToLatest(storage.db, storage.dialect);
  const app = await buildApp({ config, storage });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    await app.close();
    await storage.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  await app.listen({ port: config.port, host: config.host });
  return 'keep-open';
}

await program.parseAsync(process.argv);
