// Reading a fetched feed and cleaning its entries: CPU work on input of up to 15 MiB that a feed's owner controls,
// so it runs in worker threads (tasks.ts in src/workers) when the app has a pool, never holding the event loop
// for the length of a whole feed.

import { FeedParseError } from './errors.js';
import { type CleanedEntry, cleanEntry, type EntrySource, type EntryState, FeedEntry } from './entries.js';
import { type FeedResponse, parseFeed } from './parse.js';
import type { NormalizedEntry, NormalizedFeed } from './types.js';

export interface FeedReader {
  /** Decodes, parses and normalizes a response body; throws FeedParseError when it is not a readable feed. */
  read(response: FeedResponse): Promise<NormalizedFeed>;
  /** Cleans the entries given (title, summary, HTML, cover, author), ahead of their being read. */
  clean(entries: FeedEntry[]): Promise<void>;
}

/** A normalized feed as plain data: what crosses from a worker thread. */
export interface FeedState extends Omit<NormalizedFeed, 'entries'> {
  entries: EntryState[];
}

/** The outcome of reading a feed in a worker: the feed, or why it is not one (errors lose their class there). */
export type FeedReadOutcome = { feed: FeedState } | { error: { code: FeedParseError['code']; message: string } };

export function feedEntries(entries: NormalizedEntry[]): FeedEntry[] {
  return entries.map((entry) => {
    if (!(entry instanceof FeedEntry)) throw new TypeError('not an entry of a parsed feed');
    return entry;
  });
}

function feedToState(feed: NormalizedFeed): FeedState {
  return { ...feed, entries: feedEntries(feed.entries).map((entry) => entry.toState()) };
}

function feedFromState(state: FeedState): NormalizedFeed {
  return { ...state, entries: state.entries.map((entry) => new FeedEntry(entry)) };
}

/** Reads a feed where it is called (in a worker thread, this is the task). */
export function readFeedOutcome(response: FeedResponse): FeedReadOutcome {
  try {
    return { feed: feedToState(parseFeed(response)) };
  } catch (error) {
    if (error instanceof FeedParseError) return { error: { code: error.code, message: error.message } };
    throw error;
  }
}

export function cleanEntries(sources: EntrySource[]): CleanedEntry[] {
  return sources.map(cleanEntry);
}

/** About this much raw text per cleaning task: several workers share a big feed, and no message is huge. */
const CLEAN_CHUNK_CHARS = 1024 * 1024;

function rawSize(entry: EntrySource): number {
  const { title, summary, content, author } = entry.raw;
  return 256 + (title?.value.length ?? 0) + (summary?.value.length ?? 0) + (content?.value.length ?? 0) + (author?.length ?? 0);
}

/** Worker threads that run readFeedOutcome and cleanEntries as tasks: the app's WorkerPool (src/workers). */
export interface FeedTaskRunner {
  run(task: 'readFeed', input: FeedResponse): Promise<FeedReadOutcome>;
  runEach(task: 'cleanFeedEntries', inputs: EntrySource[][]): Promise<CleanedEntry[][]>;
}

/** Reads each feed in one worker task, and cleans entries in tasks of about 1 MiB of text, spread over the pool. */
export function pooledFeedReader(pool: FeedTaskRunner): FeedReader {
  return {
    async read({ body, contentType, url }) {
      const outcome = await pool.run('readFeed', { body, contentType, url });
      if ('error' in outcome) throw new FeedParseError(outcome.error.code, outcome.error.message);
      return feedFromState(outcome.feed);
    },
    async clean(entries) {
      const chunks: FeedEntry[][] = [];
      let chunk: FeedEntry[] = [];
      let size = 0;
      for (const entry of entries) {
        if (entry.isCleaned) continue;
        chunk.push(entry);
        size += rawSize(entry.source());
        if (size >= CLEAN_CHUNK_CHARS) {
          chunks.push(chunk);
          chunk = [];
          size = 0;
        }
      }
      if (chunk.length > 0) chunks.push(chunk);
      const cleaned = await pool.runEach(
        'cleanFeedEntries',
        chunks.map((part) => part.map((entry) => entry.source())),
      );
      chunks.forEach((part, i) => part.forEach((entry, index) => entry.applyCleaned(cleaned[i]![index]!)));
    },
  };
}
