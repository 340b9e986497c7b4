export { parseFeed, type FeedResponse } from './parse.js';
export { FeedParseError, type FeedParseErrorCode } from './errors.js';
export { parseFeedDate } from './dates.js';
export { decodeFeedBody } from './decode.js';
export { LIMITS, type EntryKeyKind, type FeedFormat, type NormalizedEntry, type NormalizedFeed } from './types.js';
