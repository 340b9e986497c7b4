import { sanitizeArticleHtml } from '../../content/sanitize.js';
import { parseFeedDate } from './dates.js';
import type { RawEntry, RawText } from './formats.js';
import { collapseWhitespace, escapeHtml, htmlToText, truncate } from './text.js';
import { LIMITS, type NormalizedEntry } from './types.js';
import { httpUrl } from './urls.js';

// One feed entry as Masthead imports it: plain-text title and summary, sanitized HTML with absolute URLs, a cover,
// dates in UTC. The dedupe key is added afterwards (dedupe.ts), as it depends on the other entries.

export type EntryWithoutKey = Omit<NormalizedEntry, 'key' | 'keyKind'>;

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

/**
 * Every entry feedsmith found is kept, even one with no title and no content (an entry of only a date or an
 * author): whether such an entry makes an article is the importer's decision.
 */
export function normalizeEntry(raw: RawEntry, feedUrl: string | undefined): EntryWithoutKey {
  const base = raw.base ?? feedUrl;
  const link = httpUrl(raw.link, base) ?? (raw.guidIsLink ? httpUrl(raw.guid) : undefined);
  // Relative URLs in content: the declared xml:base, else the entry's own link, else the feed's URL.
  const contentBase = raw.base && raw.base !== feedUrl ? raw.base : (link ?? feedUrl);
  const body = raw.content ?? raw.summary;
  const html = body ? sanitizeArticleHtml(asHtml(body), contentBase) : '';

  const title = truncate(plainText(raw.title), LIMITS.title);
  const summary = truncate(plainText(raw.summary) || htmlToText(html), LIMITS.summary);

  const cover = [...raw.images.map((image) => httpUrl(image, base)), httpUrl(firstImage(html))].find(Boolean);
  const author = raw.author ? truncate(htmlToText(raw.author), LIMITS.author) : '';
  const entry: EntryWithoutKey = { title, summary, html };
  if (raw.guid?.trim()) entry.guid = raw.guid.trim();
  if (link) entry.link = link;
  if (cover) entry.cover = cover;
  if (author) entry.author = author;
  const publishedAt = parseFeedDate(raw.published);
  const updatedAt = parseFeedDate(raw.updated);
  if (publishedAt ?? updatedAt) entry.publishedAt = publishedAt ?? updatedAt;
  if (updatedAt) entry.updatedAt = updatedAt;
  return entry;
}
