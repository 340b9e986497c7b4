import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';

/** The origin inject requests come from (Fastify's inject sends Host: localhost:80). */
export const ORIGIN = 'http://localhost:80';

export interface PageResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  location: string | undefined;
}

/**
 * A browser stand-in over inject: keeps cookies, sends Origin with every POST like browsers do, and finds the CSRF
 * token in the last page it got. Enough for the fast tests; the browser tests drive Chromium itself.
 */
export function pageClient(app: FastifyInstance, options: { remoteAddress?: string } = {}) {
  const cookies = new Map<string, string>();
  let lastPage = '';

  function remember(response: { headers: Record<string, unknown> }) {
    const setCookie = response.headers['set-cookie'];
    for (const line of Array.isArray(setCookie) ? setCookie : setCookie ? [String(setCookie)] : []) {
      const [pair] = line.split(';');
      const index = pair!.indexOf('=');
      const name = pair!.slice(0, index);
      const value = pair!.slice(index + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line) || /max-age=0/i.test(line)) cookies.delete(name);
      else cookies.set(name, value);
    }
  }

  function cookieHeader(): Record<string, string> {
    return cookies.size === 0 ? {} : { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') };
  }

  async function send(
    method: 'GET' | 'POST',
    url: string,
    form?: Record<string, string | string[]> | MultipartBody,
    headers: Record<string, string> = {},
  ): Promise<PageResponse> {
    const encoded =
      form === undefined ? undefined : form instanceof MultipartBody ? form : { type: 'application/x-www-form-urlencoded', body: encodeForm(form) };
    const response = await app.inject({
      method,
      url,
      ...(options.remoteAddress ? { remoteAddress: options.remoteAddress } : {}),
      headers: {
        ...cookieHeader(),
        ...(encoded !== undefined ? { 'content-type': encoded.type, origin: ORIGIN } : {}),
        ...headers,
      },
      payload: encoded?.body,
    });
    remember(response);
    if (String(response.headers['content-type'] ?? '').startsWith('text/html')) lastPage = response.body;
    return {
      status: response.statusCode,
      headers: response.headers,
      body: response.body,
      location: response.headers.location === undefined ? undefined : String(response.headers.location),
    };
  }

  return {
    cookies,
    get: (url: string, headers?: Record<string, string>) => send('GET', url, undefined, headers),
    /** Posts a form with the CSRF token of the last page (unless the form names its own `_csrf`). */
    post: (url: string, form: Record<string, string | string[]> = {}, headers?: Record<string, string>) =>
      send('POST', url, { _csrf: csrfIn(lastPage), ...form }, headers),
    /** Posts a multipart form (a file upload) with the CSRF token of the last page. */
    postMultipart: (url: string, fields: Record<string, string>, files: UploadedFile[] = []) =>
      send('POST', url, new MultipartBody({ _csrf: csrfIn(lastPage), ...fields }, files)),
    /** Posts exactly these fields. */
    postRaw: (url: string, form: Record<string, string | string[]>, headers?: Record<string, string>) => send('POST', url, form, headers),
    get lastPage() {
      return lastPage;
    },
  };
}

export type PageClient = ReturnType<typeof pageClient>;

export interface UploadedFile {
  field: string;
  filename: string;
  content: Buffer;
  type?: string;
}

/** A multipart/form-data body as a browser sends a form with a file input. */
export class MultipartBody {
  private readonly boundary = `----masthead-test-${Math.random().toString(16).slice(2)}`;
  readonly body: Buffer;

  constructor(fields: Record<string, string>, files: UploadedFile[]) {
    const parts: Buffer[] = [];
    for (const [name, value] of Object.entries(fields)) {
      parts.push(Buffer.from(`--${this.boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
    }
    for (const file of files) {
      parts.push(
        Buffer.from(
          `--${this.boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.filename}"\r\nContent-Type: ${file.type ?? 'text/csv'}\r\n\r\n`,
        ),
        file.content,
        Buffer.from('\r\n'),
      );
    }
    parts.push(Buffer.from(`--${this.boundary}--\r\n`));
    this.body = Buffer.concat(parts);
  }

  get type(): string {
    return `multipart/form-data; boundary=${this.boundary}`;
  }
}

export function encodeForm(form: Record<string, string | string[]>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(form)) {
    for (const item of Array.isArray(value) ? value : [value]) params.append(name, item);
  }
  return params.toString();
}

export function csrfIn(page: string): string {
  return /name="_csrf" value="([^"]*)"/.exec(page)?.[1] ?? '';
}

export function decodeEntities(text: string): string {
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"' };
  return text.replace(/&(amp|lt|gt|quot|#\d+);/g, (_all, name: string) =>
    name.startsWith('#') ? String.fromCharCode(Number(name.slice(1))) : named[name]!,
  );
}

/** The text a page shows for the field's error (by the field's id). */
export function fieldError(page: string, id: string): string | undefined {
  const match = new RegExp(`<span class="error" id="${id}-error">([^<]*)</span>`).exec(page);
  return match ? decodeEntities(match[1]!) : undefined;
}

export function expectRedirect(response: PageResponse, to: string | RegExp): void {
  assert.equal(response.status, 303, `expected a redirect, got ${response.status} ${response.body.slice(0, 300)}`);
  if (typeof to === 'string') assert.equal(response.location, to);
  else assert.match(response.location ?? '', to);
}

export function expectPage(response: PageResponse, status: number): string {
  assert.equal(response.status, status, `expected ${status}, got ${response.status} ${response.location ?? ''} ${response.body.slice(0, 500)}`);
  assert.match(String(response.headers['content-type']), /^text\/html; charset=utf-8/);
  return response.body;
}

let counter = 0;
export function uniqueEmail(stem = 'user'): string {
  counter += 1;
  return `${stem}${counter}-${process.pid}-${Date.now().toString(36)}@example.com`;
}

export const PASSWORD = 'a long enough password';

/** Signs up through the sign-up page and returns the first API key it shows. */
export async function signUp(
  client: PageClient,
  email = uniqueEmail(),
  name = 'Acme Media',
): Promise<{ email: string; apiKey: string; page: string }> {
  await client.get('/sign-up');
  const response = await client.post('/sign-up', { name, email, password: PASSWORD, password_confirmation: PASSWORD });
  const page = expectPage(response, 201);
  const apiKey = /<output id="new-key"[^>]*>([^<]+)<\/output>/.exec(page)?.[1];
  assert.ok(apiKey, 'the sign-up page shows the first key');
  return { email, apiKey, page };
}

export async function signIn(client: PageClient, email: string, password = PASSWORD): Promise<void> {
  await client.get('/sign-in');
  expectRedirect(await client.post('/sign-in', { email, password }), '/publications');
}

/** A local HTTP server playing a blog: each path serves the RSS document set for it. */
export async function feedServer() {
  const { createServer } = await import('node:http');
  const feeds = new Map<string, string>();
  const server = createServer((request, response) => {
    const body = feeds.get((request.url ?? '/').split('?')[0]!);
    if (body === undefined) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    response.writeHead(200, { 'content-type': 'application/rss+xml; charset=utf-8' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as import('node:net').AddressInfo).port;
  return {
    port,
    base: `http://127.0.0.1:${port}`,
    feeds,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export function rss(title: string, items: { guid: string; title: string }[]): string {
  const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>${escape(title)}</title><link>https://blog.example.com/</link><description>A blog</description>
${items
  .map(
    (item) => `<item><guid isPermaLink="false">${item.guid}</guid><title>${escape(item.title)}</title>
<link>https://blog.example.com/${item.guid}</link><pubDate>Tue, 03 Jun 2025 09:39:21 GMT</pubDate>
<description><![CDATA[<p>Body of ${escape(item.title)}</p>]]></description></item>`,
  )
  .join('\n')}
</channel></rss>`;
}
