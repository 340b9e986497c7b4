import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void | Promise<void>;

export interface LocalServer {
  port: number;
  base: string;
  /** `host:port` for OUTBOUND_ALLOW. */
  hostPort: string;
  /** Answers by path (without the query); a path with no handler answers 404. */
  routes: Map<string, Handler>;
  requests: { method: string; path: string; headers: IncomingMessage['headers']; body: string }[];
  close(): Promise<void>;
}

/** A local HTTP server on 127.0.0.1 playing an outside service (a company site, an LLM) in tests. */
export async function startLocalServer(): Promise<LocalServer> {
  const routes = new Map<string, Handler>();
  const requests: LocalServer['requests'] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = (request.url ?? '/').split('?')[0]!;
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: request.method ?? 'GET', path, headers: request.headers, body });
      const handler = routes.get(path);
      if (!handler) {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      Promise.resolve(handler(request, response, body)).catch(() => response.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    base: `http://127.0.0.1:${port}`,
    hostPort: `127.0.0.1:${port}`,
    routes,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function html(response: ServerResponse, body: string, status = 200): void {
  response.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(body);
}

export function json(response: ServerResponse, body: unknown, status = 200, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}
