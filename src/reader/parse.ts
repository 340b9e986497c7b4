import {
  DetectError,
  MalformedError,
  ParseError,
  detectAtomFeed,
  detectRdfFeed,
  detectRssFeed,
  parseFeed as parseWithFeedsmith,
  type AnyFeed,
} from 'feedsmith';
import { decodeBody } from '../content/charset.js';
import { truncate } from '../content/text.js';
import { assignKeys } from './dedupe.js';
import { normalizeEntry, plainText } from './entries.js';
import { FeedParseError } from './errors.js';
import { toRawFeed } from './formats.js';
import { prepareXml } from './prepare.js';
import { LIMITS, type NormalizedFeed } from './types.js';
import { httpUrl } from './urls.js';

export interface FeedResponse {
  /** The raw response body. */
  body: Buffer;
  /** The Content-Type header, if any. */
  contentType?: string;
  /** The URL the body came from (after redirects): the last base for relative URLs. */
  url?: string;
}

function looksLikeJson(text: string): boolean {
  return /^\s*\{/.test(text);
}

function readWithFeedsmith(text: string): AnyFeed {
  const input = looksLikeJson(text) ? text : prepareXml(text);
  try {
    return parseWithFeedsmith(input, { maxItems: LIMITS.entries });
  } catch (error) {
    if (error instanceof DetectError) {
      throw new FeedParseError('not_a_feed', 'the response is not an RSS, Atom, RDF or JSON feed', { cause: error });
    }
    // feedsmith recognized the format but found none of its elements: a feed with nothing in it.
    if (error instanceof ParseError) {
      if (detectRssFeed(input)) return { format: 'rss', feed: {} as Extract<AnyFeed, { format: 'rss' }>['feed'] };
      if (detectAtomFeed(input)) return { format: 'atom', feed: {} as Extract<AnyFeed, { format: 'atom' }>['feed'] };
      if (detectRdfFeed(input)) return { format: 'rdf', feed: {} as Extract<AnyFeed, { format: 'rdf' }>['feed'] };
    }
    if (error instanceof MalformedError) {
      throw new FeedParseError('malformed', 'the feed is too malformed to read', { cause: error });
    }
    throw new FeedParseError('malformed', 'the feed could not be read', { cause: error });
  }
}

/**
 * Reads a fetched feed: decodes the body (BOM, HTTP charset, XML declaration), parses it with no DTD processing,
 * and normalizes the first 1,000 entries. Throws FeedParseError: `not_a_feed` for HTML pages and other documents,
 * `malformed` for feeds too broken to read.
 */
export function parseFeed({ body, contentType, url }: FeedResponse): NormalizedFeed {
  const { text, charset } = decodeBody(body, contentType);
  if (!text.trim()) throw new FeedParseError('not_a_feed', 'the response is empty');
  const feedUrl = httpUrl(url);
  const raw = toRawFeed(readWithFeedsmith(text), feedUrl);
  const entries = raw.entries.slice(0, LIMITS.entries).map((entry) => normalizeEntry(entry, feedUrl));
  const feedBase = raw.base ?? feedUrl;
  const feed: NormalizedFeed = {
    format: raw.format,
    title: truncate(plainText(raw.title), LIMITS.title),
    description: truncate(plainText(raw.description), LIMITS.summary),
    charset,
    entries: assignKeys(entries),
  };
  const link = httpUrl(raw.link, feedBase);
  const image = httpUrl(raw.image, feedBase);
  if (link) feed.link = link;
  if (image) feed.image = image;
  if (raw.ttlMinutes !== undefined && Number.isFinite(raw.ttlMinutes) && raw.ttlMinutes > 0) {
    feed.ttlMinutes = Math.round(raw.ttlMinutes);
  }
  return feed;
}
