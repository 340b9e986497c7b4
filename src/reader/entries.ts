import { createHash } from 'node:crypto';
import { sanitizeImportedHtml } from '../content/sanitize.js';
import { collapseWhitespace, escapeHtml, htmlToText, truncate } from '../content/text.js';
import { parseFeedDate } from './dates.js';
import type { RawEntry, RawText } from './formats.js';
import { type EntryKeyKind, LIMITS, type NormalizedEntry } from './types.js';
import { httpUrl } from './urls.js';

// One feed entry as Masthead imports it: plain-text title and summary, sanitized HTML with absolute URLs, a cover,
// dates in UTC. The identifying fields (guid, link, dates) are read at once; the cleaned text and HTML are made
// later, so that a synchronize spends the sanitizer only on the entries it imports or updates (in a worker
// thread, see src/portal/feeds/sync.ts), and tells an unchanged entry by `sourceHash` (what the feed says, before
// any cleaning).

export function plainText(text: RawText | undefined): string {
  if (!text) return '';
  return text.kind === 'text' ? collapseWhitespace(text.value) : htmlToText(text.value);
}

function asHtml(text: RawText): string {
  return text.kind === 'html' ? text.value : escapeHtml(text.value).replace(/\r?\n/g, '<br>');
}

const FIRST_IMAGE = /<img\b[^>]*?\ssrc="([^"]+)"/i;

function firstImage(html: string): string | undefined {
  const match = FIRST_IMAGE.exec(html);
  return match ? match[1]!.replace(/&amp;/g, '&') : undefined;
}

function textKey(text: RawText | undefined): string {
  return text ? `${text.kind}:${text.value}` : '';
}

/** The cleaned fields of an entry, made together (the summary and the cover may come from the cleaned HTML). */
export interface CleanedEntry {
  title: string;
  summary: string;
  html: string;
  cover: string | null;
  author: string;
}

/** What an entry needs to be cleaned, anywhere (a worker thread cleans entries the main thread read, and back). */
export interface EntrySource {
  raw: RawEntry;
  /** The base of the entry's own URLs (images). */
  base?: string;
  /** The base of relative URLs in its content. */
  contentBase?: string;
}

/** An entry as plain data: what crosses to and from worker threads. */
export interface EntryState extends EntrySource {
  key: string;
  keyKind: EntryKeyKind;
  guid?: string;
  link?: string;
  publishedAt?: string;
  updatedAt?: string;
  sourceHash: string;
  cleaned?: CleanedEntry;
}

/** Title, summary and author as plain text, the content (else the summary) as sanitized HTML with absolute URLs. */
export function cleanEntry({ raw, base, contentBase }: EntrySource): CleanedEntry {
  const body = raw.content ?? raw.summary;
  const html = body ? sanitizeImportedHtml(asHtml(body), contentBase) : '';
  const fromImages = raw.images.map((image) => httpUrl(image, base)).find(Boolean);
  return {
    title: truncate(plainText(raw.title), LIMITS.title),
    html,
    summary: truncate(plainText(raw.summary) || htmlToText(html), LIMITS.summary),
    cover: fromImages ?? httpUrl(firstImage(html)) ?? null,
    author: raw.author ? truncate(htmlToText(raw.author), LIMITS.author) : '',
  };
}

/**
 * Every entry feedsmith found is kept, even one with no title and no content (an entry of only a date or an
 * author): whether such an entry makes an article is the importer's decision. `key` and `keyKind` are set by
 * assignKeys (dedupe.ts), as they depend on the other entries.
 *
 * The cleaned fields are made together when first read, or ahead of time elsewhere (applyCleaned: a worker thread
 * cleans the entries a synchronize will write). While an entry collects (collectInto), reading a field that is not
 * cleaned yet records the entry and reads as empty instead of cleaning it here: a dry run of the import tells which
 * entries it needs cleaned.
 */
export class FeedEntry implements NormalizedEntry {
  key = '';
  keyKind: EntryKeyKind = 'hash';
  readonly guid?: string;
  readonly link?: string;
  readonly publishedAt?: string;
  readonly updatedAt?: string;
  /** SHA-256 of what the feed says about the entry (not of the cleaned result, not of the import time). */
  readonly sourceHash: string;

  private readonly raw: RawEntry;
  private readonly base: string | undefined;
  private readonly contentBase: string | undefined;
  private cleaned: CleanedEntry | undefined;
  private collector: Set<FeedEntry> | undefined;

  constructor(raw: RawEntry, feedUrl: string | undefined);
  constructor(state: EntryState);
  constructor(rawOrState: RawEntry | EntryState, feedUrl?: string) {
    if ('sourceHash' in rawOrState) {
      const state = rawOrState;
      this.raw = state.raw;
      this.base = state.base;
      this.contentBase = state.contentBase;
      this.key = state.key;
      this.keyKind = state.keyKind;
      if (state.guid !== undefined) this.guid = state.guid;
      if (state.link !== undefined) this.link = state.link;
      if (state.publishedAt !== undefined) this.publishedAt = state.publishedAt;
      if (state.updatedAt !== undefined) this.updatedAt = state.updatedAt;
      this.sourceHash = state.sourceHash;
      this.cleaned = state.cleaned;
      return;
    }
    const raw = rawOrState;
    this.raw = raw;
    this.base = raw.base ?? feedUrl;
    const link = httpUrl(raw.link, this.base) ?? (raw.guidIsLink ? httpUrl(raw.guid) : undefined);
    // Relative URLs in content: the declared xml:base, else the entry's own link, else the feed's URL.
    this.contentBase = raw.base && raw.base !== feedUrl ? raw.base : (link ?? feedUrl);
    if (raw.guid?.trim()) this.guid = raw.guid.trim();
    if (link) this.link = link;
    const publishedAt = parseFeedDate(raw.published);
    const updatedAt = parseFeedDate(raw.updated);
    if (publishedAt ?? updatedAt) this.publishedAt = publishedAt ?? updatedAt;
    if (updatedAt) this.updatedAt = updatedAt;
    const source = [
      textKey(raw.title),
      textKey(raw.summary),
      textKey(raw.content),
      this.contentBase ?? '',
      this.base ?? '',
      link ?? '',
      raw.author ?? '',
      this.publishedAt ?? '',
      ...raw.images,
    ];
    const hash = createHash('sha256');
    // Each part prefixed by its length: no separator inside a part can make two different entries hash alike.
    for (const part of source) hash.update(`${part.length}:`).update(part);
    this.sourceHash = hash.digest('hex');
  }

  /** The entry as plain data (FeedEntry's second constructor reads it back). */
  toState(): EntryState {
    const state: EntryState = { raw: this.raw, key: this.key, keyKind: this.keyKind, sourceHash: this.sourceHash };
    if (this.base !== undefined) state.base = this.base;
    if (this.contentBase !== undefined) state.contentBase = this.contentBase;
    if (this.guid !== undefined) state.guid = this.guid;
    if (this.link !== undefined) state.link = this.link;
    if (this.publishedAt !== undefined) state.publishedAt = this.publishedAt;
    if (this.updatedAt !== undefined) state.updatedAt = this.updatedAt;
    if (this.cleaned !== undefined) state.cleaned = this.cleaned;
    return state;
  }

  /** What cleaning the entry needs (raw fields and bases), for a worker thread. */
  source(): EntrySource {
    return { raw: this.raw, base: this.base, contentBase: this.contentBase };
  }

  get isCleaned(): boolean {
    return this.cleaned !== undefined;
  }

  /** Takes the cleaned fields made elsewhere (cleanEntry of this entry's source). */
  applyCleaned(cleaned: CleanedEntry): void {
    this.cleaned = cleaned;
  }

  /** While `collector` is set, reading a field that is not cleaned yet adds the entry to it and reads as empty. */
  collectInto(collector: Set<FeedEntry> | undefined): void {
    this.collector = collector;
  }

  private fields(): CleanedEntry | undefined {
    if (this.cleaned) return this.cleaned;
    if (this.collector) {
      this.collector.add(this);
      return undefined;
    }
    this.cleaned = cleanEntry(this.source());
    return this.cleaned;
  }

  /** Plain text, at most 500 characters. */
  get title(): string {
    return this.fields()?.title ?? '';
  }

  /** Sanitized HTML with absolute URLs: the content, else the summary. */
  get html(): string {
    return this.fields()?.html ?? '';
  }

  /** Plain text, at most 10,000 characters: the summary, else the text of the content. */
  get summary(): string {
    return this.fields()?.summary ?? '';
  }

  /** The first image of media, enclosures or the content, as an absolute http(s) URL. */
  get cover(): string | undefined {
    return this.fields()?.cover ?? undefined;
  }

  get author(): string | undefined {
    return this.fields()?.author || undefined;
  }

  /** Every field, cleaned: for logs and tests. */
  toJSON(): Omit<NormalizedEntry, 'sourceHash'> {
    const { key, keyKind, guid, link, title, summary, html, cover, author, publishedAt, updatedAt } = this;
    return Object.fromEntries(
      Object.entries({ key, keyKind, guid, link, title, summary, html, cover, author, publishedAt, updatedAt }).filter(
        ([, value]) => value !== undefined,
      ),
    ) as Omit<NormalizedEntry, 'sourceHash'>;
  }
}

export function normalizeEntry(raw: RawEntry, feedUrl: string | undefined): FeedEntry {
  return new FeedEntry(raw, feedUrl);
}
