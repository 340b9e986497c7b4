// The worker threads' tasks (see pool.ts). Each takes and returns plain data; failures a caller must tell apart
// (a body that is not JSON, a response that is not a feed) are returned as data, since errors lose their class on
// the way back.

import { type CsvTableLimits, type CsvTableOutcome, readCsvTable } from '../content/csv-table.js';
import { sanitizeArticleHtml } from '../content/sanitize.js';
import { type JsonParseOutcome, parseJsonBytes } from '../http/json-body.js';
import { type CleanedEntry, cleanEntries, type EntrySource, type FeedReadOutcome, readFeedOutcome } from '../reader/index.js';
import { extractCompany } from '../leads/research/extract.js';
import type { ExtractedCompany, ExtractOptions } from '../leads/research/types.js';

/** Structured cloning turns a Buffer into a plain Uint8Array: the same bytes as a Buffer again, without a copy. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Article HTML written through the API, cleaned with the allow-list. */
export function sanitizeArticles(htmls: string[]): string[] {
  return htmls.map(sanitizeArticleHtml);
}

/** A fetched feed decoded, parsed and normalized (entries not cleaned yet, except those keyed by their content). */
export function readFeed(input: { body: Uint8Array; contentType?: string; url?: string }): FeedReadOutcome {
  return readFeedOutcome({ ...input, body: asBuffer(input.body) });
}

/** Feed entries cleaned (title, summary, HTML, cover, author). */
export function cleanFeedEntries(sources: EntrySource[]): CleanedEntry[] {
  return cleanEntries(sources);
}

/** A large JSON body parsed with the body parser's rules. */
export function parseJson(input: { bytes: Uint8Array; maxItems?: Record<string, number> }): JsonParseOutcome {
  return parseJsonBytes(input.bytes, input.maxItems);
}

/** An uploaded CSV file read into its records (at most `limits.maxRecords` of them). */
export function readCsv(input: { bytes: Uint8Array; limits: CsvTableLimits }): CsvTableOutcome {
  return readCsvTable(asBuffer(input.bytes), input.limits);
}

/** A company's fetched web page read for its facts (leads/research/extract.ts): a hostile page is slow to read. */
export function extractCompanyPage(input: { html: string; url: string; options: ExtractOptions }): ExtractedCompany {
  return extractCompany(input.html, input.url, input.options);
}
