import { createHash } from 'node:crypto';
import { sanitizeImportedHtml } from '../../content/sanitize.js';
import { parseFeedDate } from './dates.js';
import type { RawEntry, RawText } from './formats.js';
import { collapseWhitespace, escapeHtml, htmlToText, truncate } from './text.js';
import { type EntryKeyKind, LIMITS, type NormalizedEntry } from './types.js';
import { httpUrl } from './urls.js';

// One feed entry as Masthead imports it: plain-text title and summary, sanitized HTML with absolute URLs, a cover,
// dates in UTC. The identifying fields (guid, link, dates) are read at once; the cleaned text and HTML are made when
// first read, so that a synchronize spends the sanitizer only on the entries it imports or updates, and tells an
// unchanged entry by `sourceHash` (what the feed says, before any cleaning).

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

/**
 * Every entry feedsmith found is kept, even one with no title and no content (an entry of only a date or an
 * author): whether such an entry makes an article is the importer's decision. `key` and `keyKind` are set by
 * assignKeys (dedupe.ts), as they depend on the other entries.
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
  private cleaned: { title?: string; summary?: string; html?: string; cover?: string | null; author?: string } = {};

  constructor(raw: RawEntry, feedUrl: string | undefined) {
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

  /** Plain text, at most 500 characters. */
  get title(): string {
    return (this.cleaned.title ??= truncate(plainText(this.raw.title), LIMITS.title));
  }

  /** Sanitized HTML with absolute URLs: the content, else the summary. */
  get html(): string {
    if (this.cleaned.html === undefined) {
      const body = this.raw.content ?? this.raw.summary;
      this.cleaned.html = body ? sanitizeImportedHtml(asHtml(body), this.contentBase) : '';
    }
    return this.cleaned.html;
  }

  /** Plain text, at most 10,000 characters: the summary, else the text of the content. */
  get summary(): string {
    return (this.cleaned.summary ??= truncate(plainText(this.raw.summary) || htmlToText(this.html), LIMITS.summary));
  }

  /** The first image of media, enclosures or the content, as an absolute http(s) URL. */
  get cover(): string | undefined {
    if (this.cleaned.cover === undefined) {
      const fromImages = this.raw.images.map((image) => httpUrl(image, this.base)).find(Boolean);
      this.cleaned.cover = fromImages ?? httpUrl(firstImage(this.html)) ?? null;
    }
    return this.cleaned.cover ?? undefined;
  }

  get author(): string | undefined {
    this.cleaned.author ??= this.raw.author ? truncate(htmlToText(this.raw.author), LIMITS.author) : '';
    return this.cleaned.author || undefined;
  }

  /** Every field, cleaned: for logs and tests. */
  toJSON(): Omit<NormalizedEntry, 'sourceHash'> {
    const { key, keyKind, guid, link, title, summary, html, cover, author, publishedAt, updatedAt } = this;
    return Object.fromEntries(
      Object.entries({ key, keyKind, guid, link, title, summary, html, cover, author, publishedAt, updatedAt }).filter(([, value]) => value !== undefined),
    ) as Omit<NormalizedEntry, 'sourceHash'>;
  }
}

export function normalizeEntry(raw: RawEntry, feedUrl: string | undefined): FeedEntry {
  return new FeedEntry(raw, feedUrl);
}
