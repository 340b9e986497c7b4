import type { IncomingHttpHeaders } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { startLocalServer } from './local-server.js';

export const WEBHOOKS = '/api/client/webhooks';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The payload as Webhook.verify returned it, or why verification failed. */
  payload: any;
  verifyError: string | undefined;
}

/**
 * A local server playing webhook receivers: each path answers with the statuses queued for it (then `fallback`),
 * verifies every request's signature with the standardwebhooks package and the secret set for its path, and records
 * what came.
 */
export async function startReceiver() {
  const server = await startLocalServer();
  const secrets = new Map<string, string>();
  const statuses = new Map<string, number[]>();
  const fallback = new Map<string, number>();
  const received: Received[] = [];
  let delayMs = 0;
  const listen = (path: string) => {
    server.routes.set(path, async (request, response, body) => {
      let payload: unknown;
      let verifyError: string | undefined;
      try {
        const secret = secrets.get(path);
        if (!secret) throw new Error('no secret set for this path');
        payload = new Webhook(secret).verify(body, request.headers as Record<string, string>);
      } catch (error) {
        verifyError = (error as Error).message;
      }
      received.push({ path, headers: request.headers, body, payload, verifyError });
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      const status = statuses.get(path)?.shift() ?? fallback.get(path) ?? 200;
      response.writeHead(status, { 'content-type': 'text/plain' }).end(status >= 300 ? 'receiver says no' : 'ok');
    });
  };
  return {
    server,
    received,
    url: (path: string) => `${server.base}${path}`,
    /** Starts answering at `path`, verifying with `secret`, answering the given statuses in turn, then `then`. */
    expect(path: string, secret: string, answers: number[] = [], then = 200) {
      secrets.set(path, secret);
      statuses.set(path, [...answers]);
      fallback.set(path, then);
      listen(path);
    },
    at: (path: string) => received.filter((request) => request.path === path),
    setDelay(ms: number) {
      delayMs = ms;
    },
    close: () => server.close(),
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

export const DAY_MS = 24 * 3_600_000;
