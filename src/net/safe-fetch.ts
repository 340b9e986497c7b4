// The one way Masthead talks to the outside world (feed synchronization, company research, webhook deliveries): GET,
// or POST with a body for webhooks, with an SSRF guard at connect time on every hop, manual redirects, a whole-request
// deadline, decoding of gzip/deflate/br and a size cap on the decoded bytes.

import dns from 'node:dns';
import type { LookupAddress } from 'node:dns';
import { Readable, Transform } from 'node:stream';
import type { TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { Agent, buildConnector, request } from 'undici';
import { AllowList, isIpLiteral, isPublicAddress } from './address-policy.js';

export type FetchErrorReason = 'invalid_url' | 'blocked_address' | 'too_many_redirects' | 'timeout' | 'too_large' | 'network' | 'bad_redirect';

/** Every failure of a safe fetch. `reason` is stable; `message` is for humans and never carries a stack. */
export class FetchError extends Error {
  override readonly name = 'FetchError';

  constructor(
    readonly reason: FetchErrorReason,
    message: string,
    /** The URL being fetched when it failed (the hop, for redirects), when known. */
    readonly url?: string,
  ) {
    super(message);
  }
}

export interface SafeFetchOptions {
  /** Cap on the decoded body in bytes (default 15 MiB). */
  maxBytes?: number;
  /** Deadline for the whole request, redirects and body included (default 20 s). */
  timeoutMs?: number;
  /** Redirects followed before failing with `too_many_redirects` (default 5). */
  maxRedirects?: number;
  /** Extra request headers, e.g. If-None-Match, If-Modified-Since, Accept. */
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** GET (the default), or POST with `body` (webhook deliveries). */
  method?: 'GET' | 'POST';
  body?: string | Buffer;
  /** Follow redirects (the default for GET; a POST never follows them); when false a redirect is the response, its body discarded. */
  followRedirects?: boolean;
  /** Past `maxBytes`, keep the first `maxBytes` and drop the rest instead of failing with `too_large`. */
  truncateBody?: boolean;
}

export interface RedirectHop {
  status: number;
  from: string;
  to: string;
}

export interface SafeFetchResponse {
  status: number;
  /** The final URL, after redirects. */
  url: string;
  /** Response headers, names lower-case; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** The decoded body (empty for 304, 204 and 205). */
  body: Buffer;
  /** Every redirect followed, in order, with its status: 301/308 are permanent, 302/303/307 are not. */
  redirects: RedirectHop[];
}

export interface SafeFetcher {
  fetch(url: string | URL, options?: SafeFetchOptions): Promise<SafeFetchResponse>;
  /** The guarded undici dispatcher (connect-time address check); for callers that need undici directly. */
  readonly dispatcher: Agent;
  close(): Promise<void>;
}

export type HostResolver = (hostname: string, family: number) => Promise<LookupAddress[]>;

export interface SafeFetcherConfig {
  /** `host:port` pairs exempt from the address check (config.outboundAllow). */
  allow: readonly string[];
  /** Sent on every request, e.g. `Masthead/0.1 (+https://example.org/bot)`. */
  userAgent: string;
  /** Name resolution, dns.lookup({ all: true }) by default; replaceable in tests. */
  resolveHost?: HostResolver;
}

export const DEFAULT_MAX_BYTES = 15 * 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 20_000;
export const DEFAULT_MAX_REDIRECTS = 5;
export const MAX_URL_LENGTH = 2048;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const NO_BODY_STATUSES = new Set([204, 205, 304]);
// Headers the fetcher owns; a caller's value for them is ignored.
const RESERVED_HEADERS = new Set(['host', 'accept-encoding', 'connection', 'content-length', 'transfer-encoding', 'te', 'upgrade', 'user-agent']);
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

const defaultResolver: HostResolver = (hostname, family) =>
  dns.promises.lookup(hostname, { all: true, family: family === 4 || family === 6 ? family : 0, verbatim: true });

export function createSafeFetcher(config: SafeFetcherConfig): SafeFetcher {
  const allow = new AllowList(config.allow);
  const resolveHost = config.resolveHost ?? defaultResolver;
  const dispatcher = new Agent({ connect: guardedConnector(allow, resolveHost), headersTimeout: 0, bodyTimeout: 0 });
  const userAgent = config.userAgent;

  async function fetch(input: string | URL, options: SafeFetchOptions = {}): Promise<SafeFetchResponse> {
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
    let url = parseUrl(typeof input === 'string' ? input : input.href, 'invalid_url');
    const state = { url: url.href, timedOut: false };

    const controller = new AbortController();
    const timer = setTimeout(() => {
      state.timedOut = true;
      controller.abort(new FetchError('timeout', `no complete response within ${timeoutMs} ms`, state.url));
    }, timeoutMs);
    const callerSignal = options.signal;
    const onCallerAbort = () => controller.abort(callerSignal?.reason);
    if (callerSignal?.aborted) onCallerAbort();
    else callerSignal?.addEventListener('abort', onCallerAbort, { once: true });

    let headers = requestHeaders(options.headers ?? {}, userAgent);
    const redirects: RedirectHop[] = [];
    try {
      for (;;) {
        state.url = url.href;
        // Refuse literals before any socket is opened; the connector checks again (and checks names) at connect.
        if (isIpLiteral(url.hostname) && !allow.hasUrl(url) && !isPublicAddress(url.hostname)) {
          throw blocked(url.hostname, url.href);
        }
        if (controller.signal.aborted) throw controller.signal.reason;
        const method = options.method ?? 'GET';
        const res = await request(url, {
          method,
          headers,
          dispatcher,
          signal: controller.signal,
          ...(method === 'POST' ? { body: options.body ?? '' } : {}),
        });
        const location = firstHeader(res.headers['location']);
        const follow = options.followRedirects !== false && method === 'GET';
        if (REDIRECT_STATUSES.has(res.statusCode) && location !== undefined && follow) {
          await discard(res.body);
          if (redirects.length >= maxRedirects) {
            throw new FetchError('too_many_redirects', `more than ${maxRedirects} redirects`, url.href);
          }
          const next = parseUrl(location, 'bad_redirect', url);
          redirects.push({ status: res.statusCode, from: url.href, to: next.href });
          if (next.origin !== url.origin) headers = withoutCredentials(headers);
          url = next;
          continue;
        }

        const responseHeaders = flattenHeaders(res.headers);
        if (NO_BODY_STATUSES.has(res.statusCode) || (REDIRECT_STATUSES.has(res.statusCode) && !follow)) {
          await discard(res.body);
          return { status: res.statusCode, url: url.href, headers: responseHeaders, body: Buffer.alloc(0), redirects };
        }
        const declared = Number(responseHeaders['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes && !options.truncateBody) {
          abandon(res.body);
          throw tooLarge(maxBytes, url.href);
        }
        const body = await readBody(res.body, responseHeaders['content-encoding'], maxBytes, url.href, options.truncateBody === true);
        return { status: res.statusCode, url: url.href, headers: responseHeaders, body, redirects };
      }
    } catch (err) {
      throw toFetchError(err, state, callerSignal);
    } finally {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCallerAbort);
    }
  }

  return { fetch, dispatcher, close: () => dispatcher.close() };
}

/** A connector that refuses non-public addresses at connect time: literals directly, names after resolution. */
function guardedConnector(allow: AllowList, resolveHost: HostResolver): buildConnector.connector {
  const plain = buildConnector({});
  const guarded = buildConnector({ lookup: guardedLookup(resolveHost) } as buildConnector.BuildOptions);
  return (opts, callback) => {
    if (allow.has(opts.hostname, opts.port, opts.protocol)) return plain(opts, callback);
    if (isIpLiteral(opts.hostname)) {
      if (!isPublicAddress(opts.hostname)) return callback(blocked(opts.hostname), null);
      return plain(opts, callback);
    }
    return guarded(opts, callback);
  };
}

type LookupCallback = (err: Error | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup-compatible: resolves every address and refuses the name when any of them is not public. */
function guardedLookup(resolveHost: HostResolver) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    resolveHost(hostname, typeof options.family === 'number' ? options.family : 0).then(
      (addresses) => {
        if (addresses.length === 0) {
          return callback(Object.assign(new Error(`${hostname} did not resolve`), { code: 'ENOTFOUND' }), []);
        }
        const bad = addresses.find((a) => !isPublicAddress(a.address));
        if (bad) return callback(blocked(hostname), []); // the resolved address is not echoed back
        if (options.all) return callback(null, addresses);
        callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err: unknown) => callback(err instanceof Error ? err : new Error(String(err)), []),
    );
  };
}

function parseUrl(text: string, reason: 'invalid_url' | 'bad_redirect', base?: URL): URL {
  const what = reason === 'bad_redirect' ? 'redirect target' : 'URL';
  const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  if (text.length > MAX_URL_LENGTH) throw new FetchError(reason, `${what} is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text, base);
  } catch {
    throw new FetchError(reason, `${what} "${shown}" is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FetchError(reason, `${what} must use http or https, not ${url.protocol.slice(0, -1)}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new FetchError(reason, `${what} must not contain credentials`);
  }
  if (url.hostname === '') throw new FetchError(reason, `${what} has no host`);
  if (url.href.length > MAX_URL_LENGTH) {
    throw new FetchError(reason, `${what} is longer than ${MAX_URL_LENGTH} characters`);
  }
  url.hash = '';
  return url;
}

function requestHeaders(extra: Record<string, string>, userAgent: string): Record<string, string> {
  const headers: Record<string, string> = { 'user-agent': userAgent, accept: '*/*', 'accept-encoding': 'gzip, deflate, br' };
  for (const [name, value] of Object.entries(extra)) {
    const key = name.toLowerCase();
    if (!RESERVED_HEADERS.has(key)) headers[key] = value;
  }
  return headers;
}

function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  const copy = { ...headers };
  for (const name of CREDENTIAL_HEADERS) delete copy[name];
  return copy;
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

async function discard(body: Readable & { dump?: (opts?: { limit: number }) => Promise<void> }): Promise<void> {
  if (typeof body.dump === 'function') await body.dump({ limit: 64 * 1024 }).catch(() => undefined);
  else abandon(body);
}

/** Destroys a body nobody will read; undici then emits an abort error, which must not go unhandled. */
function abandon(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** Reads the body through its Content-Encoding decoders, failing as soon as either side passes `maxBytes`. */
async function readBody(body: Readable, contentEncoding: string | undefined, maxBytes: number, url: string, truncate: boolean): Promise<Buffer> {
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  const decoders: Transform[] = [];
  let source: Readable = body;
  // Codings are listed in the order they were applied; undo them last first.
  for (let i = codings.length - 1; i >= 0; i--) {
    const coding = codings[i]!;
    if (coding === 'gzip' || coding === 'x-gzip') {
      decoders.push(zlib.createGunzip({ finishFlush: zlib.constants.Z_SYNC_FLUSH }));
    } else if (coding === 'br') {
      decoders.push(zlib.createBrotliDecompress({ finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH }));
    } else if (coding === 'deflate') {
      // "deflate" should be zlib-wrapped, but some servers send raw deflate; look at the first bytes to tell.
      if (i === codings.length - 1) {
        const peeked = await peek(body);
        source = peeked.stream;
        decoders.push(looksLikeZlib(peeked.first) ? createInflate() : createInflateRaw());
      } else {
        decoders.push(createInflate());
      }
    } else {
      abandon(body);
      throw new FetchError('network', `unsupported Content-Encoding "${coding}"`, url);
    }
  }

  const chunks: Buffer[] = [];
  try {
    await pipeline([source, byteLimit(maxBytes, url, truncate), ...decoders, byteLimit(maxBytes, url, truncate), collect(chunks)] as unknown as [
      Readable,
      Transform,
    ]);
  } catch (err) {
    if (err instanceof FetchError) throw err;
    if (decoders.length > 0 && isZlibError(err)) {
      throw new FetchError('network', `could not decode the ${codings.join(', ')} response body`, url);
    }
    throw err;
  }
  return Buffer.concat(chunks);
}

function createInflate(): Transform {
  return zlib.createInflate({ finishFlush: zlib.constants.Z_SYNC_FLUSH });
}

function createInflateRaw(): Transform {
  return zlib.createInflateRaw({ finishFlush: zlib.constants.Z_SYNC_FLUSH });
}

function looksLikeZlib(first: Buffer | undefined): boolean {
  if (!first || first.length < 2) return true;
  return (first[0]! & 0x0f) === 8 && ((first[0]! << 8) | first[1]!) % 31 === 0;
}

async function peek(body: Readable): Promise<{ first: Buffer | undefined; stream: Readable }> {
  const iterator = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const head = await iterator.next();
  const first = head.done ? undefined : head.value;
  async function* rest(): AsyncGenerator<Buffer> {
    if (first) yield first;
    try {
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
    } finally {
      await iterator.return?.();
    }
  }
  return { first, stream: Readable.from(rest(), { objectMode: false }) };
}

/** Fails past `maxBytes`; or, with `truncate`, passes the first `maxBytes` and drops the rest (the deadline bounds it). */
function byteLimit(maxBytes: number, url: string, truncate: boolean): Transform {
  let total = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      const before = total;
      total += chunk.length;
      if (total <= maxBytes) return callback(null, chunk);
      if (!truncate) return callback(tooLarge(maxBytes, url));
      callback(null, before < maxBytes ? chunk.subarray(0, maxBytes - before) : undefined);
    },
  });
}

function collect(chunks: Buffer[]) {
  return async (source: AsyncIterable<Buffer>): Promise<void> => {
    for await (const chunk of source) chunks.push(chunk);
  };
}

function isZlibError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('Z_') || code.startsWith('ERR_BROTLI') || code === 'ERR__ERROR');
}

function blocked(host: string, url?: string): FetchError {
  return new FetchError('blocked_address', `refusing to connect to ${host}: not a public address`, url);
}

function tooLarge(maxBytes: number, url: string): FetchError {
  return new FetchError('too_large', `response body is larger than ${maxBytes} bytes`, url);
}

/** Maps whatever undici, node:net or zlib threw into a FetchError. */
function toFetchError(err: unknown, state: { url: string; timedOut: boolean }, callerSignal?: AbortSignal): FetchError {
  if (state.timedOut) {
    const found = findFetchError(err);
    return found?.reason === 'timeout' ? found : new FetchError('timeout', 'the request did not complete in time', state.url);
  }
  const found = findFetchError(err);
  if (found) {
    if (found.url === undefined) return new FetchError(found.reason, found.message, state.url);
    return found;
  }
  if (callerSignal?.aborted) {
    const reason = callerSignal.reason as { name?: string } | undefined;
    if (reason?.name === 'TimeoutError') return new FetchError('timeout', 'the request did not complete in time', state.url);
    return new FetchError('network', 'the request was aborted', state.url);
  }
  return new FetchError('network', networkMessage(err), state.url);
}

function findFetchError(err: unknown): FetchError | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 6 && current; depth++) {
    if (current instanceof FetchError) return current;
    if (current instanceof AggregateError) {
      const inner = current.errors.map(findFetchError).find((e) => e !== undefined);
      if (inner) return inner;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function networkMessage(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown } } | null;
  const code = typeof e?.code === 'string' ? e.code : typeof e?.cause?.code === 'string' ? e.cause.code : undefined;
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name could not be resolved';
    case 'ECONNREFUSED':
      return 'the connection was refused';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'the connection was closed unexpectedly';
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'the connection timed out';
    default:
      if (code?.startsWith('ERR_TLS') || code?.includes('CERT')) return 'the TLS handshake failed';
      return code ? `the request failed (${code})` : 'the request failed';
  }
}
