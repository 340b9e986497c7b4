import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions } from 'fastify';
import pg from 'pg';
import { AccountQueries } from '../../src/accounts/queries.js';
import { AccountService } from '../../src/accounts/service.js';
import { buildApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import { type Dialect, openStorage, type Storage } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { PublicationQueries } from '../../src/portal/publications/queries.js';
import { PublicationService } from '../../src/portal/publications/service.js';

/** PostgreSQL tests run when TEST_POSTGRES_URL is set (CI sets it); in CI its absence is an error, not a skip. */
export const POSTGRES_URL = process.env.TEST_POSTGRES_URL;
if (process.env.CI === 'true' && !POSTGRES_URL) {
  throw new Error('CI must run the PostgreSQL tests: set TEST_POSTGRES_URL');
}

export const DIALECTS: Dialect[] = POSTGRES_URL ? ['sqlite', 'postgres'] : ['sqlite'];

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A database of its own for one test app: an in-memory SQLite, or a fresh schema in the test PostgreSQL. */
export async function createTestDatabase(dialect: Dialect): Promise<TestDatabase> {
  if (dialect === 'sqlite') return { url: ':memory:', drop: async () => undefined };
  const schema = `test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(POSTGRES_URL!);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`drop schema ${schema} cascade`);
      await client.end();
    },
  };
}

export interface TestApp {
  app: FastifyInstance;
  storage: Storage;
  config: Config;
  close(): Promise<void>;
}

export async function startApp(dialect: Dialect, env: Record<string, string> = {}): Promise<TestApp> {
  const database = await createTestDatabase(dialect);
  // The feed scheduler stays off unless a test turns it on: feed tests drive it with app.feedScheduler.runDue().
  const config = loadConfig({ FEED_SCHEDULER: 'off', ...env, DATABASE_URL: database.url, LOG_LEVEL: 'silent' });
  const storage = openStorage(config.databaseUrl, config.postgresPool);
  let app: FastifyInstance;
  try {
    await migrateToLatest(storage.db, storage.dialect);
    app = await buildApp({ config, storage, logRequests: false });
    await app.ready();
  } catch (error) {
    // Leave no schema behind when the app cannot start.
    await storage.close();
    await database.drop();
    throw error;
  }
  return {
    app,
    storage,
    config,
    async close() {
      await app.close();
      await storage.close();
      await database.drop();
    },
  };
}

let emailCounter = 0;

export interface Owner {
  accountId: number;
  userId: number;
  apiKey: string;
}

export async function createOwner(storage: Storage, plan = 'free'): Promise<Owner> {
  emailCounter += 1;
  const created = await new AccountService(new AccountQueries(storage.db)).createAccount({
    email: `owner${emailCounter}-${randomBytes(3).toString('hex')}@example.com`,
    password: 'a long enough password',
    plan,
  });
  return { accountId: created.account.id, userId: created.user.id, apiKey: created.api_key };
}

export async function createPublication(storage: Storage, accountId: number, appId?: string) {
  emailCounter += 1;
  return new PublicationService(new PublicationQueries(storage.db)).create({
    accountId,
    appId: appId ?? `pub-${emailCounter}-${randomBytes(3).toString('hex')}`,
  });
}

export interface Response<T = any> {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: T;
  raw: string;
}

export interface ClientOptions {
  /** The address requests come from (request.ip); inject's default is 127.0.0.1. */
  remoteAddress?: string;
}

/** A client that sends one API key with every request and parses JSON answers. */
export function client(app: FastifyInstance, apiKey?: string, options: ClientOptions = {}) {
  async function send<T>(
    method: InjectOptions['method'],
    url: string,
    payload?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Response<T>> {
    const response = await app.inject({
      method,
      url,
      ...(options.remoteAddress ? { remoteAddress: options.remoteAddress } : {}),
      headers: { ...(apiKey ? { 'x-api-key': apiKey } : {}), ...(payload !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      payload: payload === undefined ? undefined : typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload),
    });
    const raw = response.body;
    let body: any = raw;
    if (String(response.headers['content-type'] ?? '').includes('application/json') && raw !== '') body = JSON.parse(raw);
    return { status: response.statusCode, headers: response.headers, body, raw };
  }
  return {
    get: <T = any>(url: string, headers?: Record<string, string>) => send<T>('GET', url, undefined, headers),
    post: <T = any>(url: string, payload?: unknown, headers?: Record<string, string>) => send<T>('POST', url, payload ?? {}, headers),
    put: <T = any>(url: string, payload?: unknown, headers?: Record<string, string>) => send<T>('PUT', url, payload ?? {}, headers),
    delete: <T = any>(url: string, headers?: Record<string, string>) => send<T>('DELETE', url, undefined, headers),
  };
}

/** Asserts the one error shape and returns the body. */
export function expectError(response: Response, status: number, code: string) {
  if (
    response.status !== status ||
    response.body?.error !== code ||
    response.body?.success !== false ||
    response.body?.status !== 'error' ||
    typeof response.body?.message !== 'string'
  ) {
    throw new Error(`expected ${status} ${code}, got ${response.status} ${response.raw.slice(0, 500)}`);
  }
  return response.body as { message: string; details: { path: string; message: string }[] };
}
