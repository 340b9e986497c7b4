export type FeedFormat = 'rss' | 'atom' | 'rdf' | 'json';

/** How an entry's dedupe key was made: its guid/id, its link, or a SHA-256 of its title and content. */
export type EntryKeyKind = 'guid' | 'link' | 'hash';

export interface NormalizedEntry {
  /** One article per (feed, key). */
  key: string;
  keyKind: EntryKeyKind;
  guid?: string;
  /** Absolute http(s) link to the original. */
  link?: string;
  /** Plain text, at most 500 characters. */
  title: string;
  /** Plain text, at most 10,000 characters. */
  summary: string;
  /** Sanitized HTML with absolute URLs. */
  html: string;
  /** Absolute http(s) image URL. */
  cover?: string;
  author?: string;
  /** ISO 8601 UTC. */
  publishedAt?: string;
  updatedAt?: string;
}

export interface NormalizedFeed {
  format: FeedFormat;
  title: string;
  description: string;
  link?: string;
  /** The feed's own cover image. */
  image?: string;
  ttlMinutes?: number;
  /** The charset the body was decoded from. */
  charset: string;
  /** At most LIMITS.entries (1,000), the first in document order. */
  entries: NormalizedEntry[];
}

export const LIMITS = {
  entries: 1_000,
  title: 500,
  summary: 10_000,
  author: 500,
} as const;
