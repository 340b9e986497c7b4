// The benchmark's database: a SQLite file under .bench/ with one publication of 100,000 articles (~2 KB of html
// each). The schema comes from the real migrations and the account, publication and categories from the real
// services; the articles are bulk-inserted straight into the tables (in large transactions, so the FTS triggers
// fire as they would for the API). A finished seed is reused while its version key matches.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { AccountQueries } from '../src/accounts/queries.js';
import { AccountService } from '../src/accounts/service.js';
import { openStorage } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { CategoryQueries } from '../src/portal/categories/queries.js';
import { CategoryService } from '../src/portal/categories/service.js';
import { PublicationQueries } from '../src/portal/publications/queries.js';
import { PublicationService } from '../src/portal/publications/service.js';
import { ROOT } from './children.js';

export const ARTICLES = 100_000;
const CATEGORIES = 12;
const BATCH = 5_000;
/** Every FILTER_EVERY-th article carries FILTER_WORD in its title (and a few more in their info): a few hundred. */
export const FILTER_WORD = 'zeppelin';
const FILTER_EVERY = 400;
const HTML_BYTES = 2_000;
/** Bump when what the seed writes changes; the migrations' text is part of the key too. */
const SEED_FORMAT = 'articles-v1';

export interface Seed {
  databasePath: string;
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

export async function prepareSeed(): Promise<Seed> {
  const started = performance.now();
  const version = seedVersion();
  const dir = join(ROOT, '.bench');
  mkdirSync(dir, { recursive: true });
  const databasePath = join(dir, `articles-${version.slice(-12)}.sqlite`);
  const metaPath = `${databasePath}.json`;

  const meta = readMeta(metaPath, version);
  if (meta && existsSync(databasePath) && countSeeded(databasePath, meta.lastArticleId) === ARTICLES) {
    trimToSeed(databasePath, meta.lastArticleId);
    return { databasePath, ...meta, reused: true, seconds: (performance.now() - started) / 1000 };
  }

  for (const suffix of ['', '-wal', '-shm', '.json']) rmSync(`${databasePath}${suffix}`, { force: true });
  const created = await createSeed(databasePath);
  writeFileSync(metaPath, JSON.stringify({ version, ...created } satisfies SeedMeta, null, 2));
  return { databasePath, ...created, reused: false, seconds: (performance.now() - started) / 1000 };
}

/** Removes what a run created (POSTed articles), also after a run that did not finish. */
export function trimToSeed(databasePath: string, lastArticleId: number): void {
  const db = new SQLite(databasePath);
  try {
    db.pragma('journal_mode = WAL');
    db.transaction(() => {
      db.prepare('delete from article_categories where article_id > ?').run(lastArticleId);
      db.prepare('delete from articles where id > ?').run(lastArticleId);
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

async function createSeed(databasePath: string): Promise<Omit<SeedMeta, 'version'>> {
  // Schema, account, publication and categories through the real code.
  const storage = openStorage(databasePath);
  let apiKey: string;
  let appId: string;
  let publicationId: number;
  let userId: number;
  let categoryIds: number[];
  try {
    await migrateToLatest(storage.db, storage.dialect);
    const accounts = new AccountService(new AccountQueries(storage.db));
    const publications = new PublicationService(new PublicationQueries(storage.db));
    const categories = new CategoryService(new CategoryQueries(storage.db), publications);
    const owner = await accounts.createAccount({ email: 'bench@example.com', password: 'bench-password-1', plan: 'business' });
    apiKey = owner.api_key;
    userId = owner.user.id;
    const principal = await accounts.authenticate(apiKey);
    if (!principal) throw new Error('seed: the new API key does not authenticate');
    const publication = await publications.create({ accountId: owner.account.id, appId: 'bench-magazine', name: 'Bench Magazine' });
    appId = publication.app_id;
    publicationId = publication.id;
    categoryIds = [];
    for (const name of CATEGORY_NAMES.slice(0, CATEGORIES)) {
      categoryIds.push((await categories.create(principal, appId, { name })).id);
    }
  } finally {
    await storage.close();
  }

  // The articles, in bulk.
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
    const random = mulberry32(20260131);
    const paragraphs = Array.from({ length: 400 }, () => paragraph(random));
    const start = Date.parse('2016-01-01T00:00:00.000Z');
    const step = Math.floor((Date.parse('2026-01-01T00:00:00.000Z') - start) / ARTICLES);
    let lastArticleId = 0;
    const insertBatch = db.transaction((from: number, to: number) => {
      for (let index = from; index < to; index++) {
        const title = titleOf(random, index);
        const at = new Date(start + index * step).toISOString();
        const info = infoOf(random, index);
        const result = insertArticle.run(
          publicationId,
          title,
          info,
          htmlOf(random, paragraphs, title),
          index % 3 === 0 ? `https://cdn.example.com/covers/${index}.jpg` : null,
          at,
          UNLOCK_TYPES[index % UNLOCK_TYPES.length],
          index % 10 === 0 ? 'flexpdf' : null,
          userId,
          at,
          at,
        );
        const id = Number(result.lastInsertRowid);
        lastArticleId = id;
        // About two thirds of the articles have one to three categories.
        if (random() < 0.35) continue;
        const count = 1 + Math.floor(random() * 3);
        const first = Math.floor(random() * categoryIds.length);
        for (let k = 0; k < count; k++) insertCategory.run(id, categoryIds[(first + k * 5) % categoryIds.length]);
      }
    });
    for (let from = 0; from < ARTICLES; from += BATCH) insertBatch(from, Math.min(from + BATCH, ARTICLES));
    db.pragma('wal_checkpoint(TRUNCATE)');
    return { apiKey, appId, lastArticleId, categoryIds };
  } finally {
    db.close();
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
