import { randomUUID } from 'node:crypto';
import type { Principal } from '../../accounts/service.js';
import type { Publication, RssFeedRow } from '../../db/types.js';
import { AppError, conflict, invalidField, notFound } from '../../errors.js';
import { nowIso, toPortalTimestamp } from '../../time.js';
import type { PublicationService } from '../publications/service.js';
import { type FeedQueries, type RssFeedChanges, STALE_RUN_MS } from './queries.js';
import { emptyResult, type FeedRunner } from './runner.js';
import type { RssFeedCreateInput, RssFeedUpdateInput, RssFeedView, SyncResultView } from './schemas.js';
import { FeedReadError, type FeedSource, locateFeed } from './sync.js';
import { normalizeFeedUrl } from './feed-url.js';

export class FeedService {
  constructor(
    private readonly queries: FeedQueries,
    private readonly publications: PublicationService,
    private readonly source: FeedSource,
    private readonly runner: FeedRunner,
    /** Called when a synchronize was queued: the scheduler's wake-up. */
    private readonly onQueued: () => void = () => undefined,
  ) {}

  async list(principal: Principal, appId: string): Promise<RssFeedView[]> {
    const { publication } = await this.publications.access(principal, appId);
    return this.present(await this.queries.list(publication.id));
  }

  async get(principal: Principal, appId: string, id: number): Promise<RssFeedView> {
    const { publication } = await this.publications.access(principal, appId);
    return this.presentOne(await this.find(publication, id));
  }

  /**
   * Fetches and parses the feed once: a URL that is not a readable feed is refused; its own title and the like are the
   * defaults. A publication takes a feed once (its URL compared normalized, feed-url.ts): a URL it holds already, or a
   * page or a permanent redirect leading to one, is a conflict.
   */
  async create(principal: Principal, appId: string, input: RssFeedCreateInput): Promise<RssFeedView> {
    const { publication } = await this.publications.access(principal, appId, 'manage_content');
    const url = feedUrl(input.url);
    const categoryIds = input.category_ids ?? [];
    await this.checkCategories(publication, categoryIds);
    const cover = input.cover === undefined ? undefined : coverUrl(input.cover);
    // Known already: refused before anything is fetched (as Miniflux does).
    await this.refuseHeldUrl(publication, url);
    let fetched;
    try {
      // An HTML page leads to its feed: the one its <link rel="alternate"> names, else one at a usual path.
      fetched = await locateFeed(this.source, url);
    } catch (error) {
      if (error instanceof FeedReadError) throw invalidField('/url', `cannot be used: ${error.message}`);
      throw error;
    }
    const feed = fetched.feed!;
    // The URL stored is the one the page or the permanent redirects led to: compared again.
    const storedUrl = normalizeFeedUrl(fetched.permanentUrl);
    if (storedUrl !== url) await this.refuseHeldUrl(publication, storedUrl, url);
    const now = nowIso();
    const row = await this.queries.transaction(async ({ feeds }) => {
      const inserted = await feeds.insert({
        publication_id: publication.id,
        url: storedUrl,
        normalized_url: storedUrl,
        title: input.title?.trim() || feed.title || new URL(storedUrl).hostname,
        description: input.description !== undefined ? input.description : feed.description || null,
        cover: cover !== undefined ? cover : (feed.image ?? null),
        active: input.active === false ? 0 : 1,
        job_id: null,
        job_status: 'pending',
        last_error: null,
        import_source: input.import_source ? 1 : 0,
        import_author: input.import_author ? 1 : 0,
        auto_publish: input.auto_publish ? 1 : 0,
        show_related_articles: input.show_related_articles ? 1 : 0,
        etag: null,
        last_modified: null,
        imported_at: null,
        created_at: now,
        updated_at: now,
        // Imported by the scheduler's next pass.
        next_sync_at: now,
      });
      // Another create of the same URL got there first, while this one was fetching.
      if (!inserted) return undefined;
      await feeds.setCategories(inserted.id, categoryIds);
      return inserted;
    });
    if (!row) {
      await this.refuseHeldUrl(publication, storedUrl, url);
      throw heldUrlConflict(storedUrl, undefined, url);
    }
    return this.presentOne(row);
  }

  async update(principal: Principal, appId: string, id: number, input: RssFeedUpdateInput): Promise<RssFeedView> {
    const { publication } = await this.publications.access(principal, appId, 'manage_content');
    const current = await this.find(publication, id);
    if (input.category_ids !== undefined) await this.checkCategories(publication, input.category_ids);
    const now = nowIso();
    const changes: RssFeedChanges = { updated_at: now };
    if (input.active === true && current.active === 0) {
      // Switched back on (by hand, or after the scheduler gave up on it): a fresh start, due at once.
      changes.consecutive_failures = 0;
      changes.next_sync_at = now;
    }
    if (input.title !== undefined) changes.title = input.title.trim();
    if (input.description !== undefined) changes.description = input.description;
    if (input.cover !== undefined) changes.cover = coverUrl(input.cover);
    for (const flag of ['active', 'import_source', 'import_author', 'auto_publish', 'show_related_articles'] as const) {
      if (input[flag] !== undefined) changes[flag] = input[flag] ? 1 : 0;
    }
    await this.queries.transaction(async ({ feeds }) => {
      await feeds.update(id, changes);
      if (input.category_ids !== undefined) await feeds.setCategories(id, input.category_ids);
    });
    return this.presentOne(await this.find(publication, id));
  }

  /** Deleting a feed keeps the articles it imported; they no longer name it. */
  async remove(principal: Principal, appId: string, id: number): Promise<void> {
    const { publication } = await this.publications.access(principal, appId, 'manage_content');
    await this.find(publication, id);
    await this.queries.transaction(async ({ feeds }) => {
      await feeds.unlinkArticles(publication.id, id);
      await feeds.delete(publication.id, id);
    });
  }

  /**
   * Synchronizes the feed now and answers the outcome; with `queue`, leaves the run to the scheduler and answers the
   * pending job at once. A feed whose server asked (429/503 Retry-After) not to be fetched yet is a rate_limited
   * error; a feed already being synchronized, a conflict.
   */
  async synchronize(principal: Principal, appId: string, id: number, options: { queue?: boolean } = {}): Promise<SyncResultView> {
    const { publication } = await this.publications.access(principal, appId, 'manage_content');
    const feed = await this.find(publication, id);
    const now = nowIso();
    if (feed.retry_not_before && feed.retry_not_before > now) {
      const seconds = Math.max(1, Math.ceil((Date.parse(feed.retry_not_before) - Date.parse(now)) / 1000));
      throw new AppError(
        'rate_limited',
        `the feed's server asked not to be fetched before ${toPortalTimestamp(feed.retry_not_before)} UTC; try again in ${seconds} s`,
        [],
        seconds,
      );
    }
    const stale = new Date(Date.parse(now) - STALE_RUN_MS).toISOString();
    if (options.queue) {
      const queued = await this.queries.queueRun(id, randomUUID(), now, stale);
      if (!queued) throw conflict(`RSS feed ${id} is being synchronized already`);
      this.onQueued();
      return emptyResult(queued.job_id!, 'pending');
    }
    const claimed = await this.queries.claimRun(id, randomUUID(), now, stale);
    if (!claimed) throw conflict(`RSS feed ${id} is being synchronized already`);
    return this.runner.run(claimed);
  }

  private async find(publication: Publication, id: number): Promise<RssFeedRow> {
    const row = await this.queries.find(publication.id, id);
    if (!row) throw notFound(`RSS feed ${id}`);
    return row;
  }

  /** A conflict when a feed of the publication holds `normalizedUrl`; `requested` is the URL asked for, when it differs. */
  private async refuseHeldUrl(publication: Publication, normalizedUrl: string, requested?: string): Promise<void> {
    const holder = await this.queries.holdingUrl(publication.id, normalizedUrl);
    if (holder) throw heldUrlConflict(normalizedUrl, holder.id, requested);
  }

  private async checkCategories(publication: Publication, ids: number[]): Promise<void> {
    const known = await this.publications.idsInPublication(publication, 'categories', ids);
    const unknown = ids.find((categoryId) => !known.has(categoryId));
    if (unknown !== undefined) throw invalidField('/category_ids', `names ${unknown}, which is not a category of this publication`);
  }

  private async present(rows: RssFeedRow[]): Promise<RssFeedView[]> {
    const categories = await this.queries.categoryIds(rows.map((row) => row.id));
    return rows.map((row) => presentFeed(row, categories.get(row.id) ?? []));
  }

  private async presentOne(row: RssFeedRow): Promise<RssFeedView> {
    return (await this.present([row]))[0]!;
  }
}

function feedUrl(text: string): string {
  const value = text.trim();
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidField('/url', 'must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidField('/url', 'must be an http or https URL');
  if (url.username || url.password) throw invalidField('/url', 'must not carry a user name or password');
  return normalizeFeedUrl(url);
}

function heldUrlConflict(url: string, holderId: number | undefined, requested?: string): AppError {
  const holder = holderId === undefined ? 'another RSS feed of this publication' : `RSS feed ${holderId} of this publication`;
  const message =
    requested === undefined || requested === url
      ? `${holder} already imports ${url}`
      : `${requested} leads to the feed ${url}, which ${holder} already imports`;
  return new AppError('conflict', message, [{ path: '/url', message }]);
}

function coverUrl(cover: string | null): string | null {
  if (cover === null || cover.trim() === '') return null;
  const value = cover.trim();
  if (/[\u0000-\u001f\u007f]/.test(value) || !/^https?:\/\//i.test(value)) throw invalidField('/cover', 'must be an http or https URL');
  return value;
}

export function presentFeed(row: RssFeedRow, categoryIds: number[]): RssFeedView {
  return {
    id: row.id,
    publication_id: row.publication_id,
    url: row.url,
    title: row.title,
    description: row.description,
    cover: row.cover,
    active: row.active === 1,
    job_id: row.job_id,
    job_status: row.job_status,
    last_error: row.last_error,
    import_source: row.import_source === 1,
    import_author: row.import_author === 1,
    auto_publish: row.auto_publish === 1,
    show_related_articles: row.show_related_articles === 1,
    imported_at: toPortalTimestamp(row.imported_at),
    created_at: toPortalTimestamp(row.created_at),
    updated_at: toPortalTimestamp(row.updated_at),
    category_ids: categoryIds,
  };
}
