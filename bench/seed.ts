// The benchmark's databases, each with one publication of 100,000 articles (~2 KB of html each), the same articles
// on both. The schema comes from the real migrations and the account, publication and categories from the real
// services. On SQLite (a file under .bench/) the articles are bulk-inserted straight into the tables, in large
// transactions, so the FTS triggers fire as they would for the API. On PostgreSQL (schema masthead_bench of
// BENCH_POSTGRES_URL) they go through the real FlexPDF import of a running server, 100 imports of 1,000: the
// database is then as the API leaves it straight after a 100,000-article import. A finished seed is reused while
// its version key (seed format and migrations) matches.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import SQLite from 'better-sqlite3';
import { AccountQueries } from '../src/accounts/queries.js';
import { AccountService } from '../src/accounts/service.js';
import { type Dialect, openStorage } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { CategoryQueries } from '../src/portal/categories/queries.js';
import { CategoryService } from '../src/portal/categories/service.js';
import { MAX_IMPORT } from '../src/portal/articles/schemas.js';
import { PublicationQueries } from '../src/portal/publications/queries.js';
import { PublicationService } from '../src/portal/publications/service.js';
import { ROOT, startServer, stopServer } from './children.js';
import { inSchema, withClient } from './postgres.js';

export const ARTICLES = 100_000;
const CATEGORIES = 12;
const BATCH = 5_000;
/** Articles a FlexPDF import carries when the PostgreSQL seed is made: as many as the API takes. */
const IMPORT_BATCH = MAX_IMPORT;
const POSTGRES_SCHEMA = 'masthead_bench';
/** Every FILTER_EVERY-th article carries FILTER_WORD in its title (and a few more in their info): a few hundred. */
export const FILTER_WORD = 'zeppelin';
const FILTER_EVERY = 400;
const HTML_BYTES = 2_000;
/** Bump when what the seed writes changes; the migrations' text is part of the key too. */
const SEED_FORMAT = 'articles-v2';

export interface Seed {
  dialect: Dialect;
  /** A SQLite file path or a PostgreSQL URL (with its search_path). */
  databaseUrl: string;
  /** Where it is, for the report. */
  where: string;
  apiKey: string;
  appId: string;
  /** Seeded articles have ids 1..lastArticleId; anything above was created by a run and is removed. */
  lastArticleId: number;
  categoryIds: number[];
  reused: boolean;
  seconds: number;
}

interface SeedMeta {
  version: string;
  apiKey: string;
  appId: string;
  lastArticleId: number;
  categoryIds: number[];
}

interface Owner {
  apiKey: string;
  appId: string;
  publicationId: number;
  userId: number;
  categoryIds: number[];
}

export async function prepareSqliteSeed(): Promise<Seed> {
  const started = performance.now();
  const version = seedVersion();
  const dir = join(ROOT, '.bench');
  mkdirSync(dir, { recursive: true });
  const databasePath = join(dir, `articles-${version.slice(-12)}.sqlite`);
  const metaPath = `${databasePath}.json`;
  const seed = (meta: Omit<SeedMeta, 'version'>, reused: boolean): Seed => ({
    dialect: 'sqlite',
    databaseUrl: databasePath,
    where: relative(ROOT, databasePath),
    ...meta,
    reused,
    seconds: (performance.now() - started) / 1000,
  });

  const meta = readMeta(metaPath, version);
  if (meta && existsSync(databasePath) && countSeeded(databasePath, meta.lastArticleId) === ARTICLES) {
    const reused = seed(meta, true);
    await trimToSeed(reused);
    return reused;
  }

  for (const suffix of ['', '-wal', '-shm', '.json']) rmSync(`${databasePath}${suffix}`, { force: true });
  const owner = await createOwner(databasePath);
  const created = {
    apiKey: owner.apiKey,
    appId: owner.appId,
    categoryIds: owner.categoryIds,
    lastArticleId: insertSqliteArticles(databasePath, owner),
  };
  writeFileSync(metaPath, JSON.stringify({ version, ...created } satisfies SeedMeta, null, 2));
  return seed(created, false);
}

export async function preparePostgresSeed(baseUrl: string): Promise<Seed> {
  const started = performance.now();
  const version = seedVersion();
  const databaseUrl = inSchema(baseUrl, POSTGRES_SCHEMA);
  const seed = (meta: Omit<SeedMeta, 'version'>, reused: boolean): Seed => ({
    dialect: 'postgres',
    databaseUrl,
    where: `schema ${POSTGRES_SCHEMA}`,
    ...meta,
    reused,
    seconds: (performance.now() - started) / 1000,
  });
  const meta = await withClient(databaseUrl, async (client) => {
    try {
      const found = (await client.query<{ meta: SeedMeta }>('select meta from bench_seed')).rows[0]?.meta;
      if (!found || found.version !== version) return undefined;
      const counted = await client.query<{ n: string }>('select count(*) as n from articles where id <= $1', [found.lastArticleId]);
      return Number(counted.rows[0]?.n) === ARTICLES ? found : undefined;
    } catch {
      return undefined;
    }
  });
  if (meta) {
    const reused = seed(meta, true);
    await trimToSeed(reused);
    return reused;
  }

  await withClient(baseUrl, async (client) => {
    await client.query(`drop schema if exists ${POSTGRES_SCHEMA} cascade`);
    await client.query(`create schema ${POSTGRES_SCHEMA}`);
  });
  const owner = await createOwner(databaseUrl);
  const lastArticleId = await importArticles(databaseUrl, owner);
  const created = { apiKey: owner.apiKey, appId: owner.appId, categoryIds: owner.categoryIds, lastArticleId };
  await withClient(databaseUrl, async (client) => {
    await client.query('create table bench_seed (meta json not null)');
    await client.query('insert into bench_seed (meta) values ($1)', [JSON.stringify({ version, ...created } satisfies SeedMeta)]);
  });
  return seed(created, false);
}

/** Removes what a run created (POSTed articles), also after a run that did not finish. */
export async function trimToSeed(seed: Seed): Promise<void> {
  if (seed.dialect === 'postgres') {
    await withClient(seed.databaseUrl, async (client) => {
      await client.query('delete from articles where id > $1', [seed.lastArticleId]);
    });
    return;
  }
  const db = new SQLite(seed.databaseUrl);
  try {
    db.pragma('journal_mode = WAL');
    db.transaction(() => {
      db.prepare('delete from article_categories where article_id > ?').run(seed.lastArticleId);
      db.prepare('delete from articles where id > ?').run(seed.lastArticleId);
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

function seedVersion(): string {
  const hash = createHash('sha256').update(`${SEED_FORMAT}:${ARTICLES}:${HTML_BYTES}:${FILTER_EVERY}`);
  const migrations = join(ROOT, 'src', 'db', 'migrations');
  for (const file of readdirSync(migrations).sort()) hash.update(file).update(readFileSync(join(migrations, file)));
  return `${SEED_FORMAT}-${hash.digest('hex')}`;
}

function readMeta(path: string, version: string): Omit<SeedMeta, 'version'> | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const { version: found, ...meta } = JSON.parse(readFileSync(path, 'utf8')) as SeedMeta;
    return found === version ? meta : undefined;
  } catch {
    return undefined;
  }
}

function countSeeded(databasePath: string, lastArticleId: number): number {
  const db = new SQLite(databasePath, { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('select count(*) as n from articles where id <= ?').get(lastArticleId) as { n: number };
    return row.n;
  } catch {
    return -1;
  } finally {
    db.close();
  }
}

/** Schema, account, publication and categories, through the real code. */
async function createOwner(databaseUrl: string): Promise<Owner> {
  const storage = openStorage(databaseUrl);
  try {
    await migrateToLatest(storage.db, storage.dialect);
    const accounts = new AccountService(new AccountQueries(storage.db));
    const publications = new PublicationService(new PublicationQueries(storage.db));
    const categories = new CategoryService(new CategoryQueries(storage.db), publications);
    const owner = await accounts.createAccount({ email: 'bench@example.com', password: 'bench-password-1', plan: 'business' });
    const principal = await accounts.authenticate(owner.api_key);
    if (!principal) throw new Error('seed: the new API key does not authenticate');
    const publication = await publications.create({ accountId: owner.account.id, appId: 'bench-magazine', name: 'Bench Magazine' });
    const categoryIds: number[] = [];
    for (const name of CATEGORY_NAMES.slice(0, CATEGORIES)) {
      categoryIds.push((await categories.create(principal, publication.app_id, { name })).id);
    }
    return { apiKey: owner.api_key, appId: publication.app_id, publicationId: publication.id, userId: owner.user.id, categoryIds };
  } finally {
    await storage.close();
  }
}

/** The articles, in bulk, straight into SQLite's tables; returns the last id. */
function insertSqliteArticles(databasePath: string, owner: Owner): number {
  const db = new SQLite(databasePath);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -262144');
    const insertArticle = db.prepare(`insert into articles
      (publication_id, title, info, html, assets, cover, date, unlock_type, issue_id, position, visible, rss_feed_id,
       source, author_id, created_at, updated_at)
      values (?, ?, ?, ?, null, ?, ?, ?, null, null, 1, null, ?, ?, ?, ?)`);
    const insertCategory = db.prepare('insert into article_categories (article_id, category_id) values (?, ?)');
    const articles = seedArticles(owner.categoryIds);
    let lastArticleId = 0;
    const insertBatch = db.transaction((count: number) => {
      for (let n = 0; n < count; n++) {
        const article = articles.next().value as SeedArticle;
        const result = insertArticle.run(
          owner.publicationId,
          article.title,
          article.info,
          article.html,
          article.cover,
          article.at,
          article.unlockType,
          article.source,
          owner.userId,
          article.at,
          article.at,
        );
        lastArticleId = Number(result.lastInsertRowid);
        for (const categoryId of article.categoryIds) insertCategory.run(lastArticleId, categoryId);
      }
    });
    for (let from = 0; from < ARTICLES; from += BATCH) insertBatch(Math.min(BATCH, ARTICLES - from));
    db.pragma('wal_checkpoint(TRUNCATE)');
    return lastArticleId;
  } finally {
    db.close();
  }
}

/** The articles through the FlexPDF import of a real server on the database; returns the last id. */
async function importArticles(databaseUrl: string, owner: Owner): Promise<number> {
  const server = await startServer('seed server', 'bench/server.ts', { DATABASE_URL: databaseUrl, PORT: '0', LOG_LEVEL: 'silent' });
  try {
    const articles = seedArticles(owner.categoryIds);
    let lastArticleId = 0;
    for (let from = 0; from < ARTICLES; from += IMPORT_BATCH) {
      const batch = Array.from({ length: Math.min(IMPORT_BATCH, ARTICLES - from) }, () => {
        const article = articles.next().value as SeedArticle;
        return {
          title: article.title,
          info: article.info,
          html: article.html,
          cover: article.cover,
          date: article.at.slice(0, 19).replace('T', ' '),
          unlock_type: article.unlockType,
          source: article.source,
          category_ids: article.categoryIds,
        };
      });
      const response = await fetch(`http://127.0.0.1:${server.port}/api/portal/v1/articles/${owner.appId}/flexpdf-import`, {
        method: 'POST',
        headers: { 'x-api-key': owner.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ articles: batch }),
      });
      const text = await response.text();
      if (response.status !== 201) throw new Error(`seed: the import answered ${response.status}: ${text.slice(0, 300)}`);
      const created = (JSON.parse(text) as { articles: { id: number }[] }).articles;
      lastArticleId = created.at(-1)!.id;
    }
    return lastArticleId;
  } finally {
    await stopServer(server);
  }
}

// ---- Deterministic content ----------------------------------------------------------------------------------

const UNLOCK_TYPES = ['free', 'free', 'paid', 'subscription'];

const CATEGORY_NAMES = [
  'News',
  'Features',
  'Interviews',
  'Reviews',
  'Opinion',
  'Travel',
  'Science',
  'Culture',
  'Business',
  'Design',
  'Sport',
  'Food',
];

// No word here starts with FILTER_WORD, so the filter matches exactly the articles that were given it.
const WORDS = (
  'the a of and in on for with about after before under over between through during without within quiet bright ' +
  'harbour river mountain city village market garden library museum station theatre festival season winter summer ' +
  'autumn spring morning evening night coast island forest desert valley bridge tower street square studio gallery ' +
  'kitchen recipe bread coffee wine cheese music album concert guitar piano painter novel poem story history future ' +
  'science climate energy ocean planet engine railway bicycle journey voyage letter diary portrait interview review ' +
  'report analysis guide notes lessons secrets voices echoes shadows colours patterns rhythm silence memory promise ' +
  'craft design fashion textile ceramic timber stone glass paper copper silver golden ancient modern hidden forgotten ' +
  'rising falling changing growing building making finding keeping crossing reading writing walking sailing cooking ' +
  'farmers makers builders readers writers sailors neighbours children families founders pioneers editors critics ' +
  'local national global small large early late long short new old first last best final open public private'
).split(' ');

interface SeedArticle {
  title: string;
  info: string | null;
  html: string;
  cover: string | null;
  /** ISO 8601: the date, created_at and updated_at. */
  at: string;
  unlockType: string;
  source: string | null;
  categoryIds: number[];
}

/** The same ARTICLES articles every time, in order. */
function* seedArticles(categoryIds: number[]): Generator<SeedArticle> {
  const random = mulberry32(20260131);
  const paragraphs = Array.from({ length: 400 }, () => paragraph(random));
  const start = Date.parse('2016-01-01T00:00:00.000Z');
  const step = Math.floor((Date.parse('2026-01-01T00:00:00.000Z') - start) / ARTICLES);
  for (let index = 0; index < ARTICLES; index++) {
    const title = titleOf(random, index);
    const info = infoOf(random, index);
    const html = htmlOf(random, paragraphs, title);
    // About two thirds of the articles have one to three categories.
    const categories: number[] = [];
    if (random() >= 0.35) {
      const count = 1 + Math.floor(random() * 3);
      const first = Math.floor(random() * categoryIds.length);
      for (let k = 0; k < count; k++) categories.push(categoryIds[(first + k * 5) % categoryIds.length]!);
    }
    yield {
      title,
      info,
      html,
      cover: index % 3 === 0 ? `https://cdn.example.com/covers/${index}.jpg` : null,
      at: new Date(start + index * step).toISOString(),
      unlockType: UNLOCK_TYPES[index % UNLOCK_TYPES.length]!,
      source: index % 10 === 0 ? 'flexpdf' : null,
      categoryIds: categories,
    };
  }
}

function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function words(random: () => number, count: number): string[] {
  return Array.from({ length: count }, () => WORDS[Math.floor(random() * WORDS.length)]!);
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function titleOf(random: () => number, index: number): string {
  const title = words(random, 4 + Math.floor(random() * 6));
  if (index % FILTER_EVERY === 7) title.splice(1 + Math.floor(random() * (title.length - 1)), 0, FILTER_WORD);
  return capitalize(title.join(' '));
}

function infoOf(random: () => number, index: number): string | null {
  if (index % 7 === 0) return null;
  const info = words(random, 14 + Math.floor(random() * 18));
  if (index % (FILTER_EVERY * 2) === 211) info.splice(3, 0, FILTER_WORD);
  return `${capitalize(info.join(' '))}.`;
}

function paragraph(random: () => number): string {
  const sentences = Array.from(
    { length: 3 + Math.floor(random() * 3) },
    () => `${capitalize(words(random, 8 + Math.floor(random() * 10)).join(' '))}.`,
  );
  const text = sentences.join(' ');
  const [a, b] = words(random, 2);
  return `<p>${text.replace(` ${a} `, ` <strong>${a}</strong> `).replace(` ${b} `, ` <a href="https://example.com/${b}">${b}</a> `)}</p>`;
}

/** About HTML_BYTES of html: a heading and paragraphs from a pool, in a random order. */
function htmlOf(random: () => number, paragraphs: string[], title: string): string {
  let html = `<h2>${title}</h2>`;
  while (html.length < HTML_BYTES) html += paragraphs[Math.floor(random() * paragraphs.length)];
  return html;
}
