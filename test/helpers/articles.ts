import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { Storage } from '../../src/db/connection.js';
import { client, createOwner, createPublication, type Owner, type Response, type TestApp } from './app.js';
import { type Api, PORTAL } from './portal.js';

/** Every field of the spec's Article table, plus the ones Masthead adds. */
export const ARTICLE_FIELDS = [
  'id',
  'title',
  'info',
  'html',
  'assets',
  'cover',
  'date',
  'unlock_type',
  'categories',
  'category_ids',
  'publication_id',
  'issue_id',
  'position',
  'visible',
  'rss_feed_id',
  'source',
  'author_id',
  'created_at',
  'updated_at',
].sort();

export interface Article {
  id: number;
  title: string;
  info: string | null;
  html: string | null;
  assets: Record<string, unknown> | null;
  cover: string | null;
  date: string | null;
  unlock_type: string;
  categories: string[];
  category_ids: number[];
  publication_id: number | null;
  issue_id: number | null;
  position: number | null;
  visible: boolean;
  rss_feed_id: number | null;
  source: string | null;
  author_id: number | null;
  created_at: string;
  updated_at: string;
}

/** A publication with a client acting as its owner, and the paths of its collections. */
export interface Tenant {
  owner: Owner;
  api: Api;
  appId: string;
  publicationId: number;
  /** `/api/portal/v1/articles/:app_id` */
  articles: string;
  categories: string;
  issues: string;
}

/** A new publication, for the given owner or for a new account. */
export async function createTenant(t: TestApp, owner?: Owner): Promise<Tenant> {
  const who = owner ?? (await createOwner(t.storage));
  const publication = await createPublication(t.storage, who.accountId);
  return {
    owner: who,
    api: client(t.app, who.apiKey),
    appId: publication.app_id,
    publicationId: publication.id,
    articles: `${PORTAL}/articles/${publication.app_id}`,
    categories: `${PORTAL}/categories/${publication.app_id}`,
    issues: `${PORTAL}/issues/${publication.app_id}`,
  };
}

function expectStatus(response: Response, status: number): void {
  assert.equal(response.status, status, `expected ${status}, got ${response.status} ${response.raw.slice(0, 500)}`);
}

export async function createArticle(tenant: Tenant, body: Record<string, unknown>): Promise<Article> {
  const response = await tenant.api.post<Article>(tenant.articles, body);
  expectStatus(response, 201);
  return response.body;
}

export async function getArticle(tenant: Tenant, id: number): Promise<Article> {
  const response = await tenant.api.get<Article>(`${tenant.articles}/${id}`);
  expectStatus(response, 200);
  return response.body;
}

export async function updateArticle(tenant: Tenant, id: number, body: Record<string, unknown>): Promise<Article> {
  const response = await tenant.api.put<Article>(`${tenant.articles}/${id}`, body);
  expectStatus(response, 200);
  return response.body;
}

/** The publication's articles (the plain list) with the X-Total-Count header. */
export async function listArticles(tenant: Tenant, query = ''): Promise<{ articles: Article[]; total: number }> {
  const response = await tenant.api.get<Article[]>(`${tenant.articles}${query}`);
  expectStatus(response, 200);
  return { articles: response.body, total: Number(response.headers['x-total-count']) };
}

export async function articleCount(tenant: Tenant): Promise<number> {
  return (await listArticles(tenant)).total;
}

export async function createCategory(tenant: Tenant, name: string): Promise<number> {
  const response = await tenant.api.post(tenant.categories, { name });
  expectStatus(response, 201);
  return response.body.id;
}

export async function createIssue(tenant: Tenant, name: string, date?: string): Promise<number> {
  const response = await tenant.api.post(tenant.issues, date === undefined ? { name } : { name, date });
  expectStatus(response, 201);
  return response.body.id;
}

/**
 * Makes the database itself refuse to insert an article with this title (a trigger), so that a write can fail
 * half-way through a transaction. Returns a function that removes the trigger.
 */
export async function failInsertsTitled(storage: Storage, title: string): Promise<() => Promise<void>> {
  const literal = sql.lit(title);
  if (storage.dialect === 'sqlite') {
    await sql`create trigger refuse_title before insert on articles when new.title = ${literal}
      begin select raise(abort, 'refused by test trigger'); end`.execute(storage.db);
    return async () => void (await sql`drop trigger refuse_title`.execute(storage.db));
  }
  await sql`create function refuse_title() returns trigger language plpgsql as $$
      begin if new.title = ${literal} then raise exception 'refused by test trigger'; end if; return new; end $$`.execute(storage.db);
  await sql`create trigger refuse_title before insert on articles for each row execute function refuse_title()`.execute(storage.db);
  return async () => {
    await sql`drop trigger refuse_title on articles`.execute(storage.db);
    await sql`drop function refuse_title()`.execute(storage.db);
  };
}
