import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Principal } from '../../accounts/service.js';
import { sanitizeArticleHtml } from '../../content/sanitize.js';
import type { ArticleChanges, NewArticle, Publication } from '../../db/types.js';
import { type FieldProblem, forbidden, notFound, validationError } from '../../errors.js';
import { slicer } from '../../workers/slices.js';
import { allows } from '../permissions.js';
import { dateField, nowIso, toPortalTimestamp } from '../../time.js';
import type { PublicationService } from '../publications/service.js';
import type { ArticleFilter, ArticleQueries, ArticleWithCategories } from './queries.js';
import type { ArticleCreateInput, ArticleListOptions, ArticlePageOptions, ArticleUpdateInput, ArticleView, FlexPdfArticleInput } from './schemas.js';

/** The plain list returns at most this many articles; the page endpoint walks through any number. */
export const LIST_LIMIT = 1000;
/**
 * ... and stops adding articles once their HTML, description and assets pass this many bytes (at least one is
 * always returned): reading, presenting and serializing tens of MiB would hold the event loop for every request.
 */
export const LIST_MAX_BYTES = 8 * 1024 * 1024;
/**
 * Rows are read at most about this many bytes a query (an article larger than that alone), so that no single read,
 * nor serializing what it read, holds the event loop long: about one article of 1 MB per tick.
 */
const READ_CHUNK_BYTES = 1024 * 1024;
const MAX_ASSETS_BYTES = 64 * 1024;
const MAX_SEARCH_WORDS = 8;

/** Cleans article HTML with the allow-list, in order (the app runs it in worker threads). */
export type ArticleHtmlSanitizer = (htmls: string[]) => Promise<string[]>;

const sanitizeInline: ArticleHtmlSanitizer = async (htmls) => htmls.map(sanitizeArticleHtml);

/**
 * Articles to answer with, read and presented a slice at a time (about READ_CHUNK_BYTES a query, the event loop
 * turning between slices) as they are iterated: a caller streams a large answer out as it is read, never holding
 * 100 MB of them at once nor serializing them in one go.
 */
export interface ArticleRecords {
  /** How many there are (an article deleted before its slice is read is left out). */
  count: number;
  /** About how many bytes their HTML, descriptions and assets hold (the stored lengths). */
  bytes: number;
  /** The articles in order, a slice at a time; iterate once. */
  slices: AsyncIterable<ArticleView[]>;
}

/** Every article of the records, in order (for small answers and pages that show a few). */
export async function allRecords(records: ArticleRecords): Promise<ArticleView[]> {
  const all: ArticleView[] = [];
  for await (const slice of records.slices) all.push(...slice);
  return all;
}

export interface ArticleList {
  articles: ArticleRecords;
  /** How many articles match, whatever was returned. */
  total: number;
  /** The offset of the rest, when the list stopped short of the total (by count or by bytes). */
  nextOffset?: number;
}

export class ArticleService {
  constructor(
    private readonly queries: ArticleQueries,
    private readonly publications: PublicationService,
    private readonly sanitize: ArticleHtmlSanitizer = sanitizeInline,
  ) {}

  /** At most LIST_LIMIT articles and about LIST_MAX_BYTES of them, from `offset` on. */
  async list(principal: Principal, appId: string, options: ArticleListOptions): Promise<ArticleList> {
    const { publication } = await this.publications.access(principal, appId);
    const filter: ArticleFilter = { publicationId: publication.id, issueId: options.issue_id };
    const offset = options.offset ?? 0;
    const [window, total] = await Promise.all([this.queries.windowIds(filter, orderOf(options), LIST_LIMIT, offset), this.queries.count(filter)]);
    let bytes = 0;
    let taken = 0;
    for (const item of window) {
      if (taken > 0 && bytes + item.bytes > LIST_MAX_BYTES) break;
      bytes += item.bytes;
      taken += 1;
    }
    const list: ArticleList = { articles: this.records(window.slice(0, taken)), total };
    if (offset + taken < total && taken > 0) list.nextOffset = offset + taken;
    return list;
  }

  /** Fails (403, 404) unless the principal may create articles in the publication: checked before a large body is read. */
  async assertMayCreate(principal: Principal, appId: string): Promise<void> {
    await this.publications.access(principal, appId, 'write_articles');
  }

  /** One page of articles, all of them read before it returns (the dashboard's pages of 20). */
  async page(principal: Principal, appId: string, page: number, options: ArticlePageOptions) {
    const { records, total, perPage } = await this.pageRecords(principal, appId, page, options);
    return { records: await allRecords(records), total, perPage };
  }

  /**
   * One page of articles, read as they are iterated: a page of 100 articles of 1 MB is 100 MB, which the API streams
   * out a slice at a time. Never cut short by size: a page holds per_page articles, as its arithmetic promises.
   */
  async pageRecords(
    principal: Principal,
    appId: string,
    page: number,
    options: ArticlePageOptions,
  ): Promise<{ records: ArticleRecords; total: number; perPage: number }> {
    const { publication } = await this.publications.access(principal, appId);
    const perPage = options.per_page ?? 20;
    const filter: ArticleFilter = {
      publicationId: publication.id,
      issueId: options.issue_id,
      words: searchWords(options.filter),
    };
    const [window, total] = await Promise.all([
      this.queries.windowIds(filter, orderOf(options), perPage, (page - 1) * perPage),
      this.queries.count(filter),
    ]);
    return { records: this.records(window), total, perPage };
  }

  async get(principal: Principal, appId: string, id: number): Promise<ArticleView> {
    const { publication } = await this.publications.access(principal, appId);
    return presentArticle(await this.findIn(publication, id));
  }

  async create(principal: Principal, appId: string, input: ArticleCreateInput): Promise<ArticleView> {
    const { publication } = await this.publications.access(principal, appId, 'write_articles');
    const categoryIds = input.category_ids ?? [];
    await this.checkReferences(publication, [{ categoryIds, issueId: input.issue_id ?? null }]);
    const values = newArticle(publication, principal, input, input.source ?? null);
    values.html = await this.cleanHtml(values.html ?? null);
    const id = await this.queries.transaction((trx) => trx.insert(values, categoryIds));
    return presentArticle(await this.findIn(publication, id));
  }

  async update(principal: Principal, appId: string, id: number, input: ArticleUpdateInput): Promise<ArticleView> {
    const publication = await this.editable(principal, appId, id);
    await this.checkReferences(publication, [{ categoryIds: input.category_ids ?? [], issueId: input.issue_id ?? null }]);
    const changes: ArticleChanges = { updated_at: nowIso() };
    if (input.title !== undefined) changes.title = input.title;
    if (input.info !== undefined) changes.info = input.info;
    if (input.html !== undefined) changes.html = await this.cleanHtml(input.html);
    if (input.assets !== undefined) changes.assets = assetsText(input.assets);
    if (input.date !== undefined) changes.date = dateField(input.date, '/date');
    if (input.cover !== undefined) changes.cover = coverValue(input.cover, '/cover');
    if (input.issue_id !== undefined) changes.issue_id = input.issue_id;
    if (input.unlock_type !== undefined) changes.unlock_type = input.unlock_type;
    if (input.position !== undefined) changes.position = input.position;
    if (input.visible !== undefined) changes.visible = input.visible ? 1 : 0;
    await this.queries.transaction((trx) => trx.update(id, changes, input.category_ids));
    return presentArticle(await this.findIn(publication, id));
  }

  async remove(principal: Principal, appId: string, id: number): Promise<void> {
    const publication = await this.editable(principal, appId, id);
    if (!(await this.queries.delete(publication.id, id))) throw notFound(`Article ${id}`);
  }

  /** The article's publication, when the principal may change the article: editors any, authors their own. */
  private async editable(principal: Principal, appId: string, id: number): Promise<Publication> {
    const { publication, level } = await this.publications.access(principal, appId, 'write_articles');
    const article = await this.findIn(publication, id);
    if (!allows(level, 'edit_all') && article.author_id !== principal.userId) {
      throw forbidden(`Your access level (${level}) allows you to change only the articles you wrote`);
    }
    return publication;
  }

  /**
   * Creates every article or none: a bad entry fails the whole import, naming its index. The created articles are
   * read back as the answer is iterated (30 articles of 1 MB are 30 MB to answer with).
   */
  async importMany(principal: Principal, appId: string, items: FlexPdfArticleInput[]): Promise<ArticleRecords> {
    const { publication } = await this.publications.access(principal, appId, 'write_articles');
    await this.checkReferences(
      publication,
      items.map((item) => ({ categoryIds: item.category_ids ?? [], issueId: item.issue_id ?? null })),
      (index) => `/articles/${index}`,
    );
    const values = items.map((item, index) => newArticle(publication, principal, item, item.source ?? 'flexpdf', `/articles/${index}`));
    // Every entry checked first, then all the HTML cleaned at once (in worker threads, spread over them).
    const withHtml = values.filter((value): value is NewArticle & { html: string } => value.html !== null);
    const cleaned = await this.sanitize(withHtml.map((value) => value.html));
    withHtml.forEach((value, index) => (value.html = cleaned[index]!));
    const ids = await this.queries.transaction(async (trx) => {
      const created: number[] = [];
      const turn = slicer();
      for (const [index, value] of values.entries()) {
        created.push(await trx.insert(value, items[index]!.category_ids ?? []));
        await turn();
      }
      return created;
    });
    await this.queries.refreshStatistics(ids.length);
    // Sizes in characters: about the bytes, without walking 30 MB to count them exactly.
    const sizeOf = (value: NewArticle) => (value.html?.length ?? 0) + (value.info?.length ?? 0);
    return this.records(values.map((value, index) => ({ id: ids[index]!, bytes: sizeOf(value) })));
  }

  /** The articles of a window (ids in order, with their sizes), read a few MiB a query when iterated. */
  private records(window: { id: number; bytes: number }[]): ArticleRecords {
    const read = async function* (this: ArticleService): AsyncGenerator<ArticleView[]> {
      for (const [index, chunk] of chunksByBytes(window, READ_CHUNK_BYTES).entries()) {
        // The loop turns between reads: better-sqlite3 answers at once, so a chain of reads would never yield.
        if (index > 0) await nextTurn();
        yield (await this.queries.rows(chunk.map((item) => item.id))).map(presentArticle);
      }
    };
    return { count: window.length, bytes: window.reduce((sum, item) => sum + item.bytes, 0), slices: read.call(this) };
  }

  private async cleanHtml(html: string | null): Promise<string | null> {
    return html === null ? null : (await this.sanitize([html]))[0]!;
  }

  private async findIn(publication: Publication, id: number): Promise<ArticleWithCategories> {
    const row = await this.queries.find(publication.id, id);
    if (!row) throw notFound(`Article ${id}`);
    return row;
  }

  /** Categories and issues named by articles must be the publication's own. */
  private async checkReferences(
    publication: Publication,
    references: { categoryIds: number[]; issueId: number | null }[],
    pathOf: (index: number) => string = () => '',
  ): Promise<void> {
    const categoryIds = [...new Set(references.flatMap((reference) => reference.categoryIds))];
    const issueIds = [...new Set(references.flatMap((reference) => (reference.issueId === null ? [] : [reference.issueId])))];
    const [categories, issues] = await Promise.all([
      this.publications.idsInPublication(publication, 'categories', categoryIds),
      this.publications.idsInPublication(publication, 'issues', issueIds),
    ]);
    const problems: FieldProblem[] = [];
    references.forEach((reference, index) => {
      const unknownCategory = reference.categoryIds.find((id) => !categories.has(id));
      if (unknownCategory !== undefined) {
        problems.push({ path: `${pathOf(index)}/category_ids`, message: `names ${unknownCategory}, which is not a category of this publication` });
      }
      if (reference.issueId !== null && !issues.has(reference.issueId)) {
        problems.push({ path: `${pathOf(index)}/issue_id`, message: `${reference.issueId} is not an issue of this publication` });
      }
    });
    if (problems.length > 0) throw validationError(problems);
  }
}

function newArticle(
  publication: Publication,
  principal: Principal,
  input: Partial<ArticleCreateInput>,
  source: string | null,
  path = '',
): NewArticle {
  const now = nowIso();
  return {
    publication_id: publication.id,
    title: input.title!,
    info: input.info ?? null,
    // Sanitized by the caller, off the event loop.
    html: input.html ?? null,
    assets: null,
    cover: input.cover == null ? null : coverValue(input.cover, `${path}/cover`),
    date: dateField(input.date ?? null, `${path}/date`),
    unlock_type: input.unlock_type ?? 'free',
    issue_id: input.issue_id ?? null,
    position: input.position ?? null,
    visible: 1,
    rss_feed_id: null,
    source,
    author_id: principal.userId,
    created_at: now,
    updated_at: now,
  };
}

/** Consecutive items grouped so that each group's bytes stay under `max` (an item larger than that alone). */
function chunksByBytes<T extends { bytes: number }>(items: T[], max: number): T[][] {
  const chunks: T[][] = [];
  let chunk: T[] = [];
  let size = 0;
  for (const item of items) {
    if (chunk.length > 0 && size + item.bytes > max) {
      chunks.push(chunk);
      chunk = [];
      size = 0;
    }
    chunk.push(item);
    size += item.bytes;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

function coverValue(cover: string | null, path: string): string | null {
  if (cover === null) return null;
  const value = cover.trim();
  // Browsers drop tabs and newlines inside a URL and control characters before it, so `java\tscript:` is a
  // javascript: URL: a cover holding any control character is refused rather than checked scheme by scheme.
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(value)?.[1]?.toLowerCase();
  if (/[\u0000-\u001f\u007f]/.test(value) || (scheme !== undefined && scheme !== 'http' && scheme !== 'https')) {
    throw validationError([{ path, message: 'must be an http or https URL, or a relative path' }]);
  }
  return value;
}

function assetsText(assets: Record<string, unknown> | null): string | null {
  if (assets === null) return null;
  const text = JSON.stringify(assets);
  if (Buffer.byteLength(text) > MAX_ASSETS_BYTES) {
    throw validationError([{ path: '/assets', message: `must be at most ${MAX_ASSETS_BYTES / 1024} KiB of JSON` }]);
  }
  return text;
}

function orderOf(options: { order_by?: ArticleListOptions['order_by']; order_dir?: 'asc' | 'desc' }) {
  return { field: options.order_by ?? 'id', direction: options.order_dir ?? 'desc' } as const;
}

/** The words of a text filter, lower-cased letters and digits only, so they are safe in any full-text syntax. */
export function searchWords(filter: string | undefined): string[] | undefined {
  if (!filter) return undefined;
  const words =
    filter
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.length === 0 ? undefined : words.slice(0, MAX_SEARCH_WORDS);
}

export function presentArticle(row: ArticleWithCategories): ArticleView {
  const { categories } = row;
  return {
    id: row.id,
    title: row.title,
    info: row.info,
    html: row.html,
    assets: row.assets === null ? null : (JSON.parse(row.assets) as Record<string, unknown>),
    cover: row.cover,
    date: toPortalTimestamp(row.date),
    unlock_type: row.unlock_type,
    categories: categories.map((category) => category.name),
    category_ids: categories.map((category) => category.id),
    publication_id: row.publication_id,
    issue_id: row.issue_id,
    position: row.position,
    visible: row.visible === 1,
    rss_feed_id: row.rss_feed_id,
    source: row.source,
    author_id: row.author_id,
    created_at: toPortalTimestamp(row.created_at),
    updated_at: toPortalTimestamp(row.updated_at),
  };
}
