import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { AddressInfo } from 'node:net';
import { DIALECTS, startApp, type TestApp } from '../helpers/app.js';
import { startAppWithRoutes } from './helpers.js';

// Short limits, so that the tests wait seconds, not minutes. Node checks the headers and request limits on an
// interval the app derives from them (a quarter of a second here); an idle keep-alive connection gets a second more.
// Each cut-off is shown by what the server sent (a 408 names the timeout) and by the server closing the connection
// while the client still writes or waits; how late it comes is not asserted (a loaded machine is late).
const HEADERS_SECONDS = 1;
const REQUEST_SECONDS = 2;
const KEEP_ALIVE_SECONDS = 1;
/** A server that never cuts a client off fails the test after this long instead of hanging it (ten times the limits). */
const TEST_TIMEOUT_MS = 20_000;

interface Exchange {
  socket: Socket;
  /** Everything the server sent, as text. */
  received(): string;
  /** Resolves when the server closed the connection (or it was reset), with the milliseconds since it opened. */
  closed: Promise<number>;
}

/** Every connection the tests open: closed before the app, so that a server that never cuts one off fails the test, not hang it. */
const sockets = new Set<Socket>();

function closeAll(): void {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
}

function open(port: number): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect(port, '127.0.0.1');
    sockets.add(socket);
    let data = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      data += chunk;
    });
    // A reset after the answer is a close too; what matters is that the server let the connection go.
    socket.on('error', () => undefined);
    const closed = new Promise<number>((done) => socket.on('close', () => done(performance.now() - started)));
    socket.once('connect', () => resolve({ socket, received: () => data, closed }));
    socket.once('error', reject);
  });
}

/** Writes one byte every `everyMs` until the connection closes (a client that stalls but never goes quiet). */
function dribble(socket: Socket, everyMs: number, byte = 'a'): void {
  const timer = setInterval(() => {
    if (socket.writable) socket.write(byte);
  }, everyMs);
  socket.on('close', () => clearInterval(timer));
}

/** The status and the JSON body of the one response in `raw`. */
function parseResponse(raw: string): { status: number; headers: string; body: any } {
  const end = raw.indexOf('\r\n\r\n');
  assert.ok(end > 0, `a complete response, got ${JSON.stringify(raw.slice(0, 300))}`);
  const head = raw.slice(0, end);
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]);
  return { status, headers: head.toLowerCase(), body: JSON.parse(raw.slice(end + 4)) };
}

/** Asserts the one error shape of both APIs, sent with connection: close. */
function expectErrorResponse(raw: string, status: number, code: string) {
  const response = parseResponse(raw);
  assert.equal(response.status, status, raw);
  assert.match(response.headers, /\r\nconnection: close/);
  assert.match(response.headers, /\r\ncontent-type: application\/json/);
  assert.equal(response.body.success, false);
  assert.equal(response.body.status, 'error');
  assert.equal(response.body.error, code);
  assert.equal(typeof response.body.message, 'string');
  assert.deepEqual(response.body.details, []);
  return response.body as { message: string };
}

for (const dialect of DIALECTS) {
  describe(`stalled clients are cut off (${dialect})`, { concurrency: true }, () => {
    let t: TestApp;
    let port: number;
    before(async () => {
      t = await startApp(dialect, {
        HTTP_HEADERS_TIMEOUT_SECONDS: String(HEADERS_SECONDS),
        HTTP_REQUEST_TIMEOUT_SECONDS: String(REQUEST_SECONDS),
        HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: String(KEEP_ALIVE_SECONDS),
      });
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      port = (t.app.server.address() as AddressInfo).port;
    });
    after(() => {
      closeAll();
      return t.close();
    });

    it('a client that connects and sends nothing is closed once the headers timeout passes', { timeout: TEST_TIMEOUT_MS }, async () => {
      const exchange = await open(port);
      await exchange.closed;
      expectErrorResponse(exchange.received(), 408, 'request_timeout');
    });

    it('a client that sends its headers a byte at a time is cut off at the headers timeout', { timeout: TEST_TIMEOUT_MS }, async () => {
      const exchange = await open(port);
      exchange.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
      dribble(exchange.socket, 100);
      await exchange.closed;
      expectErrorResponse(exchange.received(), 408, 'request_timeout');
    });

    it(
      'a client that sends its headers, then its body a byte at a time, is cut off at the request timeout',
      { timeout: TEST_TIMEOUT_MS },
      async () => {
        const exchange = await open(port);
        // Sign-in needs no key: the body is awaited by the JSON parser, which never gets all of it.
        exchange.socket.write(
          'POST /api/portal/v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"email":"',
        );
        // Each byte comes well within the headers timeout: only the whole request's limit can stop it.
        dribble(exchange.socket, 200);
        const elapsed = await exchange.closed;
        // A lower bound (a loaded machine only makes it later): the request limit, not the headers limit, cut it off.
        assert.ok(elapsed >= REQUEST_SECONDS * 1000 - 100, `not before the request timeout: closed after ${elapsed} ms`);
        expectErrorResponse(exchange.received(), 408, 'request_timeout');
      },
    );

    it(
      'a keep-alive client makes several requests on one connection, and an idle one is closed after the keep-alive timeout',
      { timeout: TEST_TIMEOUT_MS },
      async () => {
        const exchange = await open(port);
        let answered = 0;
        for (let i = 0; i < 3; i += 1) {
          exchange.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
          // Wait for this answer before the next request (no pipelining), with a pause within the keep-alive time.
          while ((exchange.received().match(/HTTP\/1\.1 200 OK/g) ?? []).length <= i) await new Promise((r) => setTimeout(r, 20));
          answered += 1;
          await new Promise((r) => setTimeout(r, 300));
        }
        assert.equal(answered, 3);
        assert.equal(exchange.socket.destroyed, false, 'the connection stayed open between requests');
        assert.match(exchange.received(), /connection: keep-alive/i);
        await exchange.closed; // by the server: the client sends nothing more
        assert.equal((exchange.received().match(/HTTP\/1\.1 /g) ?? []).length, 3, 'closed without another answer');
      },
    );
  });

  describe(`the limits bound receiving a request, not handling it (${dialect})`, () => {
    let t: Awaited<ReturnType<typeof startAppWithRoutes>>;
    let port: number;
    before(async () => {
      t = await startAppWithRoutes(
        dialect,
        { HTTP_HEADERS_TIMEOUT_SECONDS: '1', HTTP_REQUEST_TIMEOUT_SECONDS: '1', HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: '1' },
        (app) => {
          // Work that sends nothing for longer than every limit (a lead written by a slow LLM, a feed's discovery).
          app.post('/slow', async (request) => {
            await new Promise((resolve) => setTimeout(resolve, 2500));
            return { received: request.body };
          });
        },
      );
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      port = (t.app.server.address() as AddressInfo).port;
    });
    after(() => {
      closeAll();
      return t.close();
    });

    it('a request received in time is answered however long its handler takes', async () => {
      const response = await fetch(`http://127.0.0.1:${port}/slow`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ a: 1 }),
      });
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { received: { a: 1 } });
    });
  });

  describe(`requests Node refuses before routing answer in the one error shape (${dialect})`, () => {
    let t: TestApp;
    let port: number;
    before(async () => {
      t = await startApp(dialect);
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      port = (t.app.server.address() as AddressInfo).port;
    });
    after(() => {
      closeAll();
      return t.close();
    });

    async function send(raw: string): Promise<string> {
      const exchange = await open(port);
      exchange.socket.write(raw);
      await exchange.closed;
      return exchange.received();
    }

    it('headers larger than Node accepts are 431 headers_too_large', async () => {
      const raw = await send(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`);
      const body = expectErrorResponse(raw, 431, 'headers_too_large');
      assert.match(body.message, /headers are larger than the 16 KiB/);
    });

    it('a control character in a header is 400 validation_failed', async () => {
      for (const character of ['\u0001', '\u0000', '\u001b']) {
        const raw = await send(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Test: a${character}b\r\n\r\n`);
        const body = expectErrorResponse(raw, 400, 'validation_failed');
        assert.match(body.message, /not valid HTTP/);
      }
    });

    it('a malformed request line is 400 validation_failed', async () => {
      expectErrorResponse(await send('GET /healthz HTTP/9.9\r\n\r\n'), 400, 'validation_failed');
      expectErrorResponse(await send('\u0001\u0002 nonsense\r\n\r\n'), 400, 'validation_failed');
    });

    it('a bad request after a good one on a keep-alive connection is answered after the first answer', async () => {
      const raw = await send('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Test: a\u0001b\r\n\r\n');
      const second = raw.indexOf('HTTP/1.1 400');
      assert.ok(raw.startsWith('HTTP/1.1 200 OK'), raw);
      assert.ok(second > 0, raw);
      expectErrorResponse(raw.slice(second), 400, 'validation_failed');
    });
  });
}
