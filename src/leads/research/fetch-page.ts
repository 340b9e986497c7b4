import { decodeHtmlBody } from '../../content/charset.js';
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

/**
 * Whether a body without a usable Content-Type starts like an HTML document (a byte sniff, looser than the feed
 * reader's check of an XML document's root element: a page may start with its <title> or a <meta>).
 */
function startsLikeHtml(body: Buffer): boolean {
  const head = body
    .subarray(0, 1024)
    .toString('latin1')
    .replace(/^\xEF\xBB\xBF/, '');
  return /^\s*(?:<!--[\s\S]*?-->\s*)*<(?:!doctype\s+html|html|head|body|title|meta)\b/i.test(head);
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
  if (!HTML_TYPES.has(type) && !(UNKNOWN_TYPES.has(type) && startsLikeHtml(res.body))) {
    throw new PageError('not_html', `not an HTML page (${type === '' ? 'no content type' : type.slice(0, 100)})`);
  }
  const { text, charset } = decodeHtmlBody(res.body, res.headers['content-type']);
  const contentLanguage = res.headers['content-language'];
  return { url: res.url, html: text, charset, contentLanguage };
}
