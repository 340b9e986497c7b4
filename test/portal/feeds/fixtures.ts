// Feeds served by a local HTTP server, as the feed tests need them.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** A local HTTP server whose answer each test sets by path. */
export async function feedServer() {
  const routes = new Map<string, Handler>();
  const requests: { path: string; headers: IncomingMessage['headers'] }[] = [];
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]!;
    requests.push({ path, headers: request.headers });
    const handler = routes.get(path);
    if (!handler) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    base: `http://127.0.0.1:${port}`,
    routes,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface Item {
  /** Without one the item has no <guid> (and, unless given, no <link>). */
  guid?: string;
  title: string;
  html?: string;
  link?: string;
  author?: string;
  /** An RFC 822 date; null for an item without any date. */
  date?: string | null;
}

function itemXml(item: Item): string {
  const link = item.link ?? (item.guid === undefined ? undefined : `https://blog.example.com/${item.guid}`);
  return `<item>${item.guid === undefined ? '' : `<guid isPermaLink="false">${item.guid}</guid>`}<title>${item.title}</title>
${link === undefined ? '' : `<link>${link}</link>`}
${item.author ? `<dc:creator>${item.author}</dc:creator>` : ''}
${item.date === null ? '' : `<pubDate>${item.date ?? 'Tue, 03 Jun 2025 09:39:21 GMT'}</pubDate>`}
<description><![CDATA[${item.html ?? `<p>Body of ${item.title}</p>`}]]></description></item>`;
}

export function rss(items: Item[], channel: { title?: string; description?: string; image?: string } = {}): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel>
<title>${channel.title ?? 'The Sample Blog'}</title>
<link>https://blog.example.com/</link>
<description>${channel.description ?? 'Notes from the sample blog'}</description>
${channel.image ? `<image><url>${channel.image}</url><title>x</title><link>https://blog.example.com/</link></image>` : ''}
${items.map(itemXml).join('\n')}
</channel></rss>`;
}

/** Serves a body, with an ETag, answering 304 when If-None-Match matches it. */
export function serveFeed(body: () => string, etag?: () => string): Handler {
  return (request, response) => {
    const tag = etag?.();
    if (tag && request.headers['if-none-match'] === tag) {
      response.writeHead(304, { etag: tag }).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/rss+xml; charset=utf-8', ...(tag ? { etag: tag } : {}) }).end(body());
  };
}

export const redirect =
  (status: number, to: string): Handler =>
  (_request, response) =>
    response.writeHead(status, { location: to }).end();

export type FeedServer = Awaited<ReturnType<typeof feedServer>>;
