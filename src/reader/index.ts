// The feed reader, as Miniflux's reader/: the bytes of a fetched feed in, a normalized feed out (decoded, prepared
// for the XML parser, parsed by feedsmith, its entries normalized and keyed), and the entries cleaned when needed,
// in worker threads or inline. It knows no database, publication or route: the feeds domain fetches and imports.
export { parseFeed, type FeedResponse } from './parse.js';
export { FeedParseError, type FeedParseErrorCode } from './errors.js';
export { parseFeedDate } from './dates.js';
export { contentHash, keyEntries } from './dedupe.js';
export { looksLikeHtml } from './prepare.js';
export type { CleanedEntry, EntrySource, FeedEntry } from './entries.js';
export { cleanEntries, feedEntries, type FeedReader, type FeedReadOutcome, pooledFeedReader, readFeedOutcome } from './feed-reader.js';
export { LIMITS, type EntryKeyKind, type FeedFormat, type NormalizedEntry, type NormalizedFeed } from './types.js';
