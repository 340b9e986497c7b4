// Fetching a feed through the safe fetcher (finding it first when the URL is an HTML page) and importing its
// entries as articles, in one transaction.

import type { ArticleChanges, NewArticle, RssFeedRow } from '../../db/types.js';
import { FetchError, type SafeFetchResponse } from '../../net/safe-fetch.js';
import { nowIso } from '../../time.js';
import {
  contentHash,
  type FeedEntry,
  feedEntries,
  FeedParseError,
  type FeedReader,
  keyEntries,
  looksLikeHtml,
  type NormalizedEntry,
  type NormalizedFeed,
} from '../../reader/index.js';
import { slicer } from '../../workers/slices.js';
import type { FeedQueries, FeedWrites, ImportedEntry } from './queries.js';
import { retryAfterSeconds } from './schedule.js';

export type FeedFetch = (url: string, options: { headers?: Record<string, string>; signal?: AbortSignal }) => Promise<SafeFetchResponse>;

const ACCEPT =
  'application/rss+xml, application/atom+xml, application/feed+json, application/json;q=0.9, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.8';

/** Why a feed could not be read, for people: names the fetch failure's reason or the parse problem. */
export class FeedReadError extends Error {
  constructor(
    message: string,
    readonly kind: 'fetch' | 'status' | 'parse',
    /** For a parse failure: the response that was not a feed (an HTML page may name its feed). */
    readonly response?: SafeFetchResponse,
    /** For a 429 or 503 with Retry-After: how long the server asked to wait, in seconds. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export interface FetchedFeed {
  response: SafeFetchResponse;
  /** The URL to store: the last hop reached through permanent (301/308) redirects only. */
  permanentUrl: string;
  /** Undefined for 304 Not Modified. */
  feed?: NormalizedFeed;
}

export interface FetchFeedOptions {
  etag?: string | null;
  lastModified?: string | null;
  signal?: AbortSignal;
}

/** Where feeds come from and how they are read (in worker threads, in the app). */
export interface FeedSource {
  fetch: FeedFetch;
  reader: FeedReader;
}

export async function fetchFeed({ fetch, reader }: FeedSource, url: string, options: FetchFeedOptions = {}): Promise<FetchedFeed> {
  const headers: Record<string, string> = { accept: ACCEPT };
  if (options.etag) headers['if-none-match'] = options.etag;
  if (options.lastModified) headers['if-modified-since'] = options.lastModified;
  let response: SafeFetchResponse;
  try {
    response = await fetch(url, options.signal ? { headers, signal: options.signal } : { headers });
  } catch (error) {
    if (error instanceof FetchError) throw new FeedReadError(`the feed could not be fetched (${error.reason}): ${error.message}`, 'fetch');
    throw error;
  }
  const permanent = permanentUrl(url, response);
  if (response.status === 304) return { response, permanentUrl: permanent };
  if (response.status === 429 || response.status === 503) {
    const wait = retryAfterSeconds(response.headers['retry-after'], new Date());
    const why = response.status === 429 ? 'too many requests' : 'unavailable';
    const message = `the feed's server answered HTTP ${response.status} (${why})${wait === undefined ? '' : ` and asked to wait ${wait} s`}`;
    throw new FeedReadError(message, 'status', undefined, wait);
  }
  if (response.status < 200 || response.status > 299) {
    throw new FeedReadError(`the feed's server answered HTTP ${response.status}`, 'status');
  }
  try {
    const feed = await reader.read({ body: response.body, contentType: response.headers['content-type'], url: response.url });
    return { response, permanentUrl: permanent, feed };
  } catch (error) {
    if (error instanceof FeedParseError) {
      const what = error.code === 'not_a_feed' ? 'is not a feed' : 'is a malformed feed';
      throw new FeedReadError(`the URL ${what}: ${error.message}`, 'parse', error.code === 'not_a_feed' ? response : undefined);
    }
    throw error;
  }
}

/** Follows the redirect chain while it is permanent (301, 308); the first temporary hop stops it. */
export function permanentUrl(original: string, response: SafeFetchResponse): string {
  let url = original;
  for (const hop of response.redirects) {
    if (hop.status !== 301 && hop.status !== 308) break;
    url = hop.to;
  }
  return url;
}

export interface ImportCounts {
  imported: number;
  updated: number;
  skipped: number;
  unchanged: number;
  articles: number[];
}

interface EntryArticle {
  title: string;
  info: string | null;
  html: string | null;
  cover: string | null;
  date: string | null;
  assets: string;
}

function entryArticle(feed: RssFeedRow, entry: NormalizedEntry, now: string): EntryArticle {
  const assets: Record<string, unknown> = { show_related_articles: feed.show_related_articles === 1 };
  if (feed.import_author && entry.author) assets.author = entry.author;
  if (feed.import_source && entry.link) assets.source_url = entry.link;
  return {
    title: entry.title || entry.summary.slice(0, 120) || entry.link || 'Untitled',
    info: entry.summary || null,
    html: entry.html || null,
    cover: entry.cover ?? null,
    date: entry.publishedAt ?? entry.updatedAt ?? now,
    assets: JSON.stringify(assets),
  };
}

/**
 * The entries a feed imported before, found again for the entries of this fetch. First by key. An entry whose key
 * is not stored may still have been imported under another key: when the feed's criterion stepped down (guid ->
 * link -> hash, src/reader/dedupe.ts), its entries were stored under their guid (or link), and each stored entry
 * keeps its link and content hash beside its key for this; entries stored before keys had kinds are `legacy:` + the
 * guid, link or hash they were keyed by then. Each stored entry answers for one entry of the fetch at most, and those
 * found by key are taken first. Matching both ways here, rather than re-keying every stored entry when the criterion
 * changes, also covers a switch whose re-keyed keys would collide (two guids of one link): the first entry takes the
 * row.
 */
class StoredEntries {
  private readonly byKey = new Map<string, ImportedEntry>();
  private readonly byLink = new Map<string, ImportedEntry[]>();
  private readonly byHash = new Map<string, ImportedEntry[]>();
  private readonly taken = new Set<ImportedEntry>();
  private legacy = false;

  constructor(rows: ImportedEntry[]) {
    const add = (index: Map<string, ImportedEntry[]>, value: string | null, row: ImportedEntry) => {
      if (!value) return;
      const rows = index.get(value);
      if (rows) rows.push(row);
      else index.set(value, [row]);
    };
    for (const row of rows) {
      this.byKey.set(row.entry_key, row);
      add(this.byLink, row.entry_link, row);
      add(this.byHash, row.entry_hash, row);
      if (row.entry_key.startsWith('legacy:')) this.legacy = true;
    }
  }

  /** The stored entry of each entry that has one. */
  match(entries: NormalizedEntry[]): Map<NormalizedEntry, ImportedEntry> {
    const found = new Map<NormalizedEntry, ImportedEntry>();
    const take = (entry: NormalizedEntry, row: ImportedEntry | undefined) => {
      if (!row || this.taken.has(row)) return false;
      this.taken.add(row);
      found.set(entry, row);
      return true;
    };
    const rest = entries.filter((entry) => !take(entry, this.byKey.get(entry.key)));
    for (const entry of rest) {
      const free = (rows: ImportedEntry[] | undefined) => rows?.find((row) => !this.taken.has(row));
      if (entry.keyKind === 'link' && take(entry, free(this.byLink.get(entry.link!)))) continue;
      if (entry.keyKind === 'hash' && take(entry, free(this.byHash.get(entry.key.slice('hash:'.length))))) continue;
      if (!this.legacy) continue;
      // What the entry could have been keyed by before keys had kinds; the hash (which cleans the entry) last.
      if (entry.guid && take(entry, this.byKey.get(`legacy:${entry.guid}`))) continue;
      if (entry.link && take(entry, this.byKey.get(`legacy:${entry.link}`))) continue;
      take(entry, this.byKey.get(`legacy:${contentHash(entry)}`));
    }
    return found;
  }
}

const usable = (entry: NormalizedEntry) => Boolean(entry.title || entry.html);

/** The writes of an import; the dry run (cleanEntriesForImport) makes none. */
interface ImportWrites {
  setCriterion(criterion: RssFeedRow['entry_key_criterion']): Promise<void>;
  /** An entry found otherwise than by its key takes its key now, so that the next synchronize finds it by key. */
  rekey(previous: ImportedEntry, entry: NormalizedEntry): Promise<void>;
  insert(article: NewArticle, identity: EntryIdentity, hash: string, now: string): Promise<number>;
  update(
    previous: ImportedEntry & { article_id: number },
    changes: ArticleChanges,
    identity: EntryIdentity,
    hash: string,
    now: string,
  ): Promise<void>;
}

interface EntryIdentity {
  entry_key: string;
  entry_link: string | null;
  entry_hash: string;
}

function databaseWrites({ feeds, articles }: FeedWrites, feed: RssFeedRow, categoryIds: number[]): ImportWrites {
  return {
    async setCriterion(criterion) {
      await feeds.setEntryKeyCriterion(feed.id, criterion);
    },
    async rekey(previous, entry) {
      await feeds.updateEntry(previous.id, { entry_key: entry.key, entry_link: entry.link ?? null });
    },
    async insert(article, identity, hash, now) {
      const id = await articles.insert(article, categoryIds);
      await feeds.insertEntry({ feed_id: feed.id, ...identity, article_id: id, content_hash: hash, synced_at: now });
      return id;
    },
    async update(previous, changes, identity, hash, now) {
      await articles.update(previous.article_id, changes, undefined);
      await feeds.updateEntry(previous.id, { ...identity, content_hash: hash, synced_at: now });
    },
  };
}

const NO_WRITES: ImportWrites = {
  setCriterion: async () => undefined,
  rekey: async () => undefined,
  insert: async () => 0,
  update: async () => undefined,
};

/** Writes new and changed entries; run inside a transaction so that a failure leaves nothing half-imported. */
export async function importEntries(writes: FeedWrites, feed: RssFeedRow, categoryIds: number[], entries: NormalizedEntry[]): Promise<ImportCounts> {
  return applyEntries(feed, entries, await writes.feeds.importedEntries(feed.id), databaseWrites(writes, feed, categoryIds));
}

/**
 * Cleans, in the reader's worker threads and before the import's transaction, every entry the import will read
 * cleaned (new and changed entries, and those keyed or matched by their content), so that the transaction neither
 * sanitizes on the event loop nor holds the database while it does. A dry run of the import tells which entries
 * those are: reading an entry not cleaned yet records it; the recorded entries are cleaned and the dry run repeats
 * (its choices can depend on what it read) until it reads no entry that is not cleaned. An entry the transaction
 * still finds not cleaned (the stored entries changed meanwhile) is cleaned there.
 */
export async function cleanEntriesForImport(
  queries: Pick<FeedQueries, 'importedEntries'>,
  feed: RssFeedRow,
  normalized: NormalizedEntry[],
  reader: FeedReader,
): Promise<void> {
  const entries = feedEntries(normalized);
  const stored = await queries.importedEntries(feed.id);
  for (let round = 0; round < 4; round += 1) {
    const missing = new Set<FeedEntry>();
    for (const entry of entries) entry.collectInto(missing);
    try {
      await applyEntries(feed, entries, stored, NO_WRITES);
    } finally {
      for (const entry of entries) entry.collectInto(undefined);
    }
    if (missing.size === 0) return;
    await reader.clean([...missing]);
  }
  await reader.clean(entries);
}

async function applyEntries(feed: RssFeedRow, entries: NormalizedEntry[], stored: ImportedEntry[], writes: ImportWrites): Promise<ImportCounts> {
  const counts: ImportCounts = { imported: 0, updated: 0, skipped: 0, unchanged: 0, articles: [] };
  // Keyed by the feed's own criterion (which may step down here, and is then stored), not by the fetch alone.
  const criterion = keyEntries(entries, feed.entry_key_criterion);
  if (criterion !== feed.entry_key_criterion) await writes.setCriterion(criterion);
  // One entry per key: another entry under a key already taken is skipped (counted), the first usable one kept.
  const byKey = new Map<string, NormalizedEntry>();
  for (const entry of entries) {
    const held = byKey.get(entry.key);
    if (held === undefined) {
      byKey.set(entry.key, entry);
      continue;
    }
    counts.skipped += 1;
    if (!usable(held) && usable(entry)) byKey.set(entry.key, entry);
  }
  const found = new StoredEntries(stored).match([...byKey.values()]);

  // A thousand entries hashed, and written in one transaction: on SQLite every statement answers at once, and the
  // dry run (no writes) awaits nothing, so without turns the loop would hold the event loop.
  const turn = slicer();
  for (const entry of byKey.values()) {
    await turn();
    // Unchanged entries are told by what the feed says, before any cleaning: they cost no sanitizing.
    const hash = entry.sourceHash;
    const previous = found.get(entry);
    const rekey = async () => {
      if (previous && previous.entry_key !== entry.key) await writes.rekey(previous, entry);
    };
    if (previous && previous.content_hash === hash) {
      await rekey();
      counts.unchanged += 1;
      continue;
    }
    if (!usable(entry)) {
      await rekey();
      counts.skipped += 1;
      continue;
    }
    const now = nowIso();
    const values = entryArticle(feed, entry, now);
    const identity = { entry_key: entry.key, entry_link: entry.link ?? null, entry_hash: contentHash(entry) };
    if (!previous) {
      const article: NewArticle = {
        publication_id: feed.publication_id,
        ...values,
        unlock_type: 'free',
        issue_id: null,
        position: null,
        visible: feed.auto_publish,
        rss_feed_id: feed.id,
        source: 'rss',
        author_id: null,
        created_at: now,
        updated_at: now,
      };
      const id = await writes.insert(article, identity, hash, now);
      counts.imported += 1;
      counts.articles.push(id);
      continue;
    }
    if (previous.article_id === null || previous.article_updated_at === null || previous.article_updated_at > previous.synced_at) {
      // A person deleted the article, or edited it since it was imported: theirs wins.
      await rekey();
      counts.skipped += 1;
      continue;
    }
    const changes: ArticleChanges = { ...values, updated_at: now };
    // An undated entry keeps the date of its first import.
    if (!entry.publishedAt && !entry.updatedAt) delete changes.date;
    await writes.update({ ...previous, article_id: previous.article_id }, changes, identity, hash, now);
    counts.updated += 1;
    counts.articles.push(previous.article_id);
  }
  return counts;
}

const ALTERNATE_TYPES = /^application\/(?:rss\+xml|atom\+xml|feed\+json|rdf\+xml)$/i;

/** The feed an HTML page names with <link rel="alternate" type="application/rss+xml" href="...">, made absolute. */
export function discoverFeedUrl(response: SafeFetchResponse): string | undefined {
  const text = response.body.subarray(0, 512 * 1024).toString('latin1');
  for (const [tag] of text.matchAll(/<link\b[^>]*>/gi)) {
    const attribute = (name: string) =>
      new RegExp(`\\b${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i')
        .exec(tag)
        ?.slice(1)
        .find((value) => value !== undefined);
    const rel = attribute('rel')?.toLowerCase().split(/\s+/) ?? [];
    const type = attribute('type')?.trim() ?? '';
    const href = attribute('href')?.trim();
    if (!rel.includes('alternate') || !ALTERNATE_TYPES.test(type) || !href) continue;
    try {
      const url = new URL(href.replaceAll('&amp;', '&'), response.url);
      if (url.protocol === 'http:' || url.protocol === 'https:') return url.href;
    } catch {
      // not a URL: look further
    }
  }
  return undefined;
}

/** Where sites usually publish their feed, tried in order when an HTML page names none. */
export const USUAL_FEED_PATHS = ['/feed', '/rss.xml', '/atom.xml', '/feed.xml', '/index.xml'] as const;
/** All the usual paths together get as long as one fetch may take. */
const USUAL_PATHS_DEADLINE_MS = 20_000;

/**
 * The feed at `url`, or the one the HTML page at `url` leads to: the feed its <link rel="alternate"> names, else
 * the first of the usual paths on the same origin that serves a feed. Throws FeedReadError with the reason
 * (`discovered` set when the failure concerns a feed the page led to).
 */
export async function locateFeed(source: FeedSource, url: string): Promise<FetchedFeed> {
  try {
    return await fetchFeed(source, url);
  } catch (error) {
    if (!(error instanceof FeedReadError) || !error.response) throw error;
    const named = discoverFeedUrl(error.response);
    if (named && named !== url) {
      try {
        return await fetchFeed(source, named);
      } catch (inner) {
        if (inner instanceof FeedReadError)
          throw new FeedReadError(`the page names the feed ${named}, but ${inner.message}`, inner.kind, undefined, inner.retryAfterSeconds);
        throw inner;
      }
    }
    if (!named && isHtmlPage(error.response)) {
      const found = await tryUsualPaths(source, error.response.url, url);
      if (found) return found;
    }
    throw error;
  }
}

function isHtmlPage(response: SafeFetchResponse): boolean {
  return /html/i.test(response.headers['content-type'] ?? '') || looksLikeHtml(response.body.subarray(0, 4096).toString('latin1'));
}

async function tryUsualPaths(source: FeedSource, pageUrl: string, requestedUrl: string): Promise<FetchedFeed | undefined> {
  const signal = AbortSignal.timeout(USUAL_PATHS_DEADLINE_MS);
  const tried = new Set([pageUrl, requestedUrl]);
  for (const path of USUAL_FEED_PATHS) {
    const candidate = new URL(path, pageUrl).href;
    if (tried.has(candidate)) continue;
    tried.add(candidate);
    try {
      return await fetchFeed(source, candidate, { signal });
    } catch (error) {
      if (!(error instanceof FeedReadError)) throw error;
      if (signal.aborted) return undefined;
    }
  }
  return undefined;
}
