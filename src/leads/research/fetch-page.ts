import { ResultType, Sniffer } from 'encoding-sniffer/sniffer';
import { contentTypeCharset, decodeFeedBody } from '../../portal/feeds/decode.js';
import { FetchError } from '../../net/safe-fetch.js';
import type { SafeFetcher } from '../../net/safe-fetch.js';

// One HTML page through the SSRF-guarded fetcher: 2xx and HTML only, decoded with the charset the page declares.

export interface HtmlPage {
  /** The final URL, after redirects. */
  url: string;
  html: string;
  charset: string;
  contentLanguage: string | undefined;
}

export type PageFailureReason = FetchError['reason'] | 'http_status' | 'not_html' | 'empty' | 'aborted';

export class PageError extends Error {
  override readonly name = 'PageError';

  constructor(
    readonly reason: PageFailureReason,
    message: string,
  ) {
    super(message);
  }
}

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
// Types a server sends when it does not know better; the body decides.
const UNKNOWN_TYPES = new Set(['', 'application/octet-stream', 'binary/octet-stream', 'unknown/unknown']);
const ACCEPT = 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1';

function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/** Whether a body without a usable Content-Type starts like an HTML document. */
export function looksLikeHtml(body: Buffer): boolean {
  const head = body.subarray(0, 1024).toString('latin1').replace(/^\xEF\xBB\xBF/, '');
  return /^\s*(?:<!--[\s\S]*?-->\s*)*<(?:!doctype\s+html|html|head|body|title|meta)\b/i.test(head);
}

/** How far into a page its charset declaration is looked for (the HTML standard's prescan reads 1024 bytes). */
const SNIFF_BYTES = 4096;

/**
 * The charset a page declares in its first bytes, by the HTML standard's prescan (encoding-sniffer): <meta charset>,
 * <meta http-equiv="Content-Type" content="...; charset=">, an XML declaration; comments skipped, labels resolved to
 * their encoding (x-cp1251 → windows-1251).
 */
export function metaCharset(body: Buffer): string | undefined {
  const sniffer = new Sniffer({ maxBytes: SNIFF_BYTES });
  sniffer.write(body.subarray(0, SNIFF_BYTES));
  const declared = sniffer.resultType === ResultType.META_TAG || sniffer.resultType === ResultType.XML_ENCODING;
  return declared ? sniffer.encoding.toLowerCase() : undefined;
}

/** The page's text: byte order mark, then the HTTP charset, then <meta charset>, then UTF-8, then windows-1252. */
export function decodeHtml(body: Buffer, contentType: string | undefined): { text: string; charset: string } {
  const declared = contentTypeCharset(contentType) ?? metaCharset(body);
  return decodeFeedBody(body, declared ? `text/html; charset=${declared}` : undefined);
}

export interface FetchPageOptions {
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal | undefined;
}

export async function fetchHtmlPage(fetcher: SafeFetcher, url: string, options: FetchPageOptions): Promise<HtmlPage> {
  let res;
  try {
    res = await fetcher.fetch(url, {
      timeoutMs: options.timeoutMs,
      maxBytes: options.maxBytes,
      headers: { accept: ACCEPT },
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (err) {
    if (err instanceof FetchError) throw new PageError(err.reason, err.message);
    throw new PageError('network', 'the request failed');
  }
  if (res.status < 200 || res.status > 299) {
    throw new PageError('http_status', `the server answered HTTP ${res.status}`);
  }
  if (res.body.length === 0) throw new PageError('empty', 'the page is empty');
  const type = mediaType(res.headers['content-type']);
  if (!HTML_TYPES.has(type) && !(UNKNOWN_TYPES.has(type) && looksLikeHtml(res.body))) {
    throw new PageError('not_html', `not an HTML page (${type === '' ? 'no content type' : type.slice(0, 100)})`);
  }
  const { text, charset } = decodeHtml(res.body, res.headers['content-type']);
  const contentLanguage = res.headers['content-language'];
  return { url: res.url, html: text, charset, contentLanguage };
}
