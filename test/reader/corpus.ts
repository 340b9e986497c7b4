import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { collapseWhitespace, htmlToText } from '../../src/content/text.js';
import type { NormalizedFeed } from '../../src/reader/types.js';

// The feed corpus of the tests (test/fixtures/feeds, see its README) and feedparser's `Expect:` expressions read as checks.

/** The feeds in the repository: feedparser's test suite (feedparser/, BSD-2) and feeds written for Masthead (own/). */
export const FIXTURES = fileURLToPath(new URL('../fixtures/feeds', import.meta.url));
/**
 * The corpus the corpus tests and the bench read: the fixtures, or a larger folder laid out alike, named by
 * FEED_CORPUS: feedparser's suite in feedparser/, beside folders of whole feeds.
 */
export const CORPUS = process.env.FEED_CORPUS || FIXTURES;
/** The URL the corpus files are read as if served from. */
/** What no cleaned article's HTML may carry: scripts, event handlers, dangerous URLs, forms, plugins, styles. */
export const DANGEROUS_HTML = [
  /<script/i,
  /\son[a-z]+\s*=/i,
  /(?:javascript|vbscript|data):/i,
  /<form/i,
  /<object/i,
  /<embed/i,
  /<applet/i,
  /<meta/i,
  /<style/i,
  /style\s*=/i,
];

export const CORPUS_URL = 'http://127.0.0.1:8097/tests/feed.xml';

export function feedFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return feedFiles(path);
      return /^(?:README|LICENSE|COMMIT|\.)|index\.md$/.test(name) ? [] : [path];
    });
}

/** The folders of whole, well-formed feeds beside feedparser/: own/ in the fixtures (a larger corpus may have others). */
export function feedFolders(corpus = CORPUS): string[] {
  return readdirSync(corpus)
    .sort()
    .filter((name) => name !== 'feedparser' && !name.startsWith('.') && statSync(join(corpus, name)).isDirectory())
    .map((name) => join(corpus, name));
}

/** Every well-formed feed of a corpus: feedparser's wellformed/ and the folders of whole feeds. */
export function wellFormedFiles(corpus = CORPUS): string[] {
  return [...feedFiles(join(corpus, 'feedparser/wellformed')), ...feedFolders(corpus).flatMap((folder) => feedFiles(folder))];
}

/** A Python string literal's value (u'...', '...', "..."). */
function pythonString(body: string): string {
  return body.replace(/\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2}|[nrt\\'"])/g, (_whole, escape: string) => {
    switch (escape[0]) {
      case 'u':
      case 'U':
      case 'x':
        return String.fromCodePoint(parseInt(escape.slice(1), 16));
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      default:
        return escape;
    }
  });
}

export interface Expectation {
  scope: 'feed' | 'entry';
  /** `base`: the base URL relative links of the entry's content were resolved against. */
  field: 'title' | 'link' | 'summary' | 'author' | 'html' | 'base' | 'publishedAt' | 'updatedAt';
  expected: string;
  clause: string;
}

const EQUALITY =
  /^(feed|entries\[0\])\[['"](title|link|summary|description|author|content)['"]\](?:\[0\]\[['"]value['"]\]|\[['"]value['"]\])?\s*==\s*u?(['"])(.*)\3$/s;
const BASE = /^entries\[0\]\[['"](?:content['"]\]\[0\]|summary_detail['"]\])\[['"]base['"]\]\s*==\s*u?(['"])(.*)\1$/;
const DETAIL = /^(feed|entries\[0\])\[['"](title|summary)_detail['"]\]\[['"]value['"]\]\s*==\s*u?(['"])(.*)\3$/s;
const DATE_TUPLE =
  /^entries\[0\]\[['"](published|updated|issued|created|date|modified)_parsed['"]\]\s*==\s*\((\d+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+)/;

/** The simple equalities of a file's `Expect:` line; clauses of any other shape are ignored. */
export function expectations(source: string, path = ''): Expectation[] {
  // http_* files relied on HTTP headers (Content-Location, Content-Type) that the corpus does not keep.
  if (/\/http_[^/]*content_location[^/]*$/.test(path)) return [];
  const line = /Expect:\s*(.*)/.exec(source.slice(0, 4096))?.[1]?.trim();
  if (!line) return [];
  const found: Expectation[] = [];
  for (const clause of line.split(/\s+and\s+(?=(?:not\s+)?(?:feed|entries|bozo|encoding|version|'|"|len)\b)/)) {
    const equality = EQUALITY.exec(clause.trim()) ?? DETAIL.exec(clause.trim());
    if (equality) {
      const [, scope, name, , body] = equality;
      const field = name === 'content' ? 'html' : name === 'description' ? 'summary' : (name as Expectation['field']);
      if (scope === 'feed' && field !== 'title' && field !== 'link') continue; // feed author, summary: not kept
      found.push({ scope: scope === 'feed' ? 'feed' : 'entry', field, expected: pythonString(body!), clause });
      continue;
    }
    const base = BASE.exec(clause.trim());
    if (base) {
      found.push({ scope: 'entry', field: 'base', expected: base[2]!, clause });
      continue;
    }
    const date = DATE_TUPLE.exec(clause.trim());
    if (date) {
      const [, name, y, mo, d, h, mi, s] = date;
      const iso = new Date(Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +s!)).toISOString();
      const field = name === 'updated' || name === 'modified' ? 'updatedAt' : 'publishedAt';
      found.push({ scope: 'entry', field, expected: iso, clause });
    }
  }
  return found;
}

// Masthead keeps titles and summaries as plain text; feedparser keeps (sanitized) HTML: its value is compared as text.
function expectedValue(field: Expectation['field'], value: string): string {
  return field === 'title' || field === 'summary' ? htmlToText(value) : value.trim();
}

/** The value Masthead produced for an expectation, and whether it matches. */
export function check(feed: NormalizedFeed, expectation: Expectation): { actual: string | undefined; ok: boolean } {
  const { scope, field, expected } = expectation;
  // Entries clean their fields when read (getters): read them, do not spread them.
  const source: Record<string, unknown> | undefined =
    scope === 'feed' ? { ...feed } : (feed.entries[0] as unknown as Record<string, unknown> | undefined);
  const actual = source?.[field] as string | undefined;
  if (field === 'base') {
    const html = feed.entries[0]?.html ?? '';
    const urls = [...html.matchAll(/(?:href|src)="([^"]*)"/g)].map((match) => match[1]!);
    return { actual: urls.join(' '), ok: urls.length > 0 && urls.every((url) => url.startsWith(expected)) };
  }
  const value = collapseWhitespace(actual ?? '');
  return { actual, ok: value === expectedValue(field, expected) || value === collapseWhitespace(expected) };
}

export function read(path: string): Buffer {
  return readFileSync(path);
}
