export type FeedFormat = 'rss' | 'atom' | 'rdf' | 'json';

/**
 * How an entry's dedupe key was made: its guid/id, its link, or a SHA-256 of its title and content. Also a feed's
 * key criterion: the first kind its entries are keyed by (see dedupe.ts).
 */
export type EntryKeyKind = 'guid' | 'link' | 'hash';

/** One entry of a feed. The text fields are cleaned when first read (see FeedEntry). */
export interface NormalizedEntry {
  /** One article per (feed, key). Prefixed by its kind (`guid:...`, `link:...`, `hash:...`): kinds never collide. */
  key: string;
  keyKind: EntryKeyKind;
  readonly guid?: string;
  /** Absolute http(s) link to the original. */
  readonly link?: string;
  /** Plain text, at most 500 characters. */
  readonly title: string;
  /** Plain text, at most 10,000 characters. */
  readonly summary: string;
  /** Sanitized HTML with absolute URLs. */
  readonly html: string;
  /** Absolute http(s) image URL. */
  readonly cover?: string;
  readonly author?: string;
  /** ISO 8601 UTC. */
  readonly publishedAt?: string;
  readonly updatedAt?: string;
  /** SHA-256 of what the feed says about the entry, before cleaning: equal hashes, unchanged entry. */
  readonly sourceHash: string;
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
