import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openStorage, type Storage } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { client, createOwner, createPublication, POSTGRES_URL } from '../helpers/app.js';
import { PORTAL } from '../helpers/portal.js';

/**
 * A database of its own without the unaccent extension, owned by nobody Masthead connects as, and a role that may
 * create tables in it but not extensions: what a hosted PostgreSQL that refuses CREATE EXTENSION looks like.
 */
async function databaseRefusingExtensions() {
  const suffix = randomBytes(5).toString('hex');
  const [database, role] = [`masthead_noext_${suffix}`, `masthead_noext_${suffix}`];
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`create role ${role} login`);
  await admin.query(`create database ${database}`);
  await admin.query(`revoke create on database ${database} from public`);
  await admin.end();
  const inside = new pg.Client({ connectionString: withDatabase(POSTGRES_URL!, database) });
  await inside.connect();
  await inside.query(`create schema masthead authorization ${role}`);
  await inside.end();
  const url = new URL(withDatabase(POSTGRES_URL!, database));
  url.username = role;
  url.searchParams.set('options', '-c search_path=masthead');
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`drop database ${database} with (force)`);
      await client.query(`drop role ${role}`);
      await client.end();
    },
  };
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

describe('article search on a PostgreSQL that refuses CREATE EXTENSION', { skip: POSTGRES_URL ? false : 'TEST_POSTGRES_URL is not set' }, () => {
  let database: Awaited<ReturnType<typeof databaseRefusingExtensions>>;
  let storage: Storage;
  let app: FastifyInstance;
  before(async () => {
    database = await databaseRefusingExtensions();
    const config = loadConfig({ DATABASE_URL: database.url, FEED_SCHEDULER: 'off', LOG_LEVEL: 'silent' });
    storage = openStorage(config.databaseUrl);
    await migrateToLatest(storage.db, storage.dialect);
    app = await buildApp({ config, storage, logRequests: false });
  });
  after(async () => {
    await app.close();
    await storage.close();
    await database.drop();
  });

  it('migrates all the same, and searches with accents mattering instead of failing', async () => {
    const { rows } = await sql`select extname from pg_extension where extname = 'unaccent'`.execute(storage.db);
    assert.deepEqual(rows, [], 'the extension could not be created');
    const owner = await createOwner(storage);
    const { app_id: appId } = await createPublication(storage, owner.accountId);
    const api = client(app, owner.apiKey);
    assert.equal((await api.post(`${PORTAL}/articles/${appId}`, { title: 'Café culture' })).status, 201);
    const titles = async (filter: string) =>
      (await api.get(`${PORTAL}/articles/${appId}/page/1?filter=${encodeURIComponent(filter)}`)).body.records.map(
        (article: { title: string }) => article.title,
      );
    assert.deepEqual(await titles('café'), ['Café culture']);
    assert.deepEqual(await titles('cafe'), []);
  });
});
