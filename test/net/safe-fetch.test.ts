import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import zlib from 'node:zlib';
import { request } from 'undici';
import { createSafeFetcher, FetchError } from '../../src/net/safe-fetch.js';
import type { FetchErrorReason, HostResolver, SafeFetcher } from '../../src/net/safe-fetch.js';

const UA = 'Masthead-test/0.1 (+https://example.invalid/bot)';

interface TestServer {
  port: number;
  origin: string;
  connections: number;
  requests: http.IncomingMessage[];
  close(): Promise<void>;
}

/** A server on 127.0.0.1 only, counting connections so tests can prove none was made. */
async function startServer(handler: http.RequestListener): Promise<TestServer> {
  const server = http.createServer((req, res) => {
    state.requests.push(req);
    handler(req, res);
  });
  const state: TestServer = {
    port: 0,
    origin: '',
    connections: 0,
    requests: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as AddressInfo).port;
  state.origin = `http://127.0.0.1:${state.port}`;
  return state;
}

async function rejectsWith(promise: Promise<unknown>, reason: FetchErrorReason): Promise<FetchError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof FetchError, `expected a FetchError, got ${String(err)}`);
    assert.equal(err.reason, reason, `${err.reason}: ${err.message}`);
    return err;
  }
  assert.fail(`expected a FetchError with reason ${reason}`);
}

/** Resolves once the client has closed the connection that carried `request` (it gave up on the response). */
function givenUp(request: http.IncomingMessage): Promise<void> {
  return new Promise((resolve) => {
    if (request.socket.destroyed) resolve();
    else request.socket.once('close', () => resolve());
  });
}

const BOMB = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024)); // 64 MiB of zeros in ~64 KiB

describe('safe fetch', () => {
  let main: TestServer;
  let other: TestServer;
  let fetcher: SafeFetcher;
  let closed: SafeFetcher; // no allow entries at all

  before(async () => {
    other = await startServer((_req, res) => res.end('other'));
    main = await startServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      switch (url.pathname) {
        case '/hello':
          res.setHeader('Content-Type', 'text/plain; charset=utf-8');
          res.setHeader('X-Custom', 'Yes');
          res.end('hello world');
          return;
        case '/echo':
          res.setHeader('Content-Type', 'application/json');
          res.end(JSON.stringify(req.headers));
          return;
        case '/r/1':
          res.writeHead(301, { Location: '/r/2' }).end('moved');
          return;
        case '/r/2':
          res.writeHead(302, { Location: `${main.origin}/r/3?q=1` }).end();
          return;
        case '/r/3':
          res.writeHead(307, { Location: '../r/4' }).end();
          return;
        case '/r/4':
          res.writeHead(308, { Location: 'final#frag' }).end();
          return;
        case '/r/final':
          res.end('arrived');
          return;
        case '/loop':
          res.writeHead(302, { Location: `/loop?n=${Number(url.searchParams.get('n') ?? 0) + 1}` }).end();
          return;
        case '/to-other':
          res.writeHead(302, { Location: `${other.origin}/` }).end();
          return;
        case '/to-metadata':
          res.writeHead(301, { Location: 'http://169.254.169.254/latest/meta-data/' }).end();
          return;
        case '/to-ftp':
          res.writeHead(302, { Location: 'ftp://example.com/feed.xml' }).end();
          return;
        case '/to-js':
          res.writeHead(302, { Location: 'javascript:alert(1)' }).end();
          return;
        case '/to-creds':
          res.writeHead(302, { Location: `http://user:pw@127.0.0.1:${main.port}/hello` }).end();
          return;
        case '/slow-body':
          res.writeHead(200, { 'Content-Type': 'text/plain' });
          res.write('partial');
          return; // never ends
        case '/no-response':
          return; // never answers
        case '/big-declared':
          res.writeHead(200, { 'Content-Length': String(2000) });
          res.end(Buffer.alloc(2000, 'a'));
          return;
        case '/big-chunked': {
          res.writeHead(200, { 'Content-Type': 'text/plain' });
          let i = 0;
          const tick = () => {
            if (i++ >= 50 || res.destroyed) return res.end();
            res.write(Buffer.alloc(1000, 'b'), () => setImmediate(tick));
          };
          tick();
          return;
        }
        case '/endless-bomb': {
          res.writeHead(200, { 'Content-Encoding': 'gzip' });
          const gzip = zlib.createGzip();
          gzip.pipe(res);
          const zeros = Buffer.alloc(64 * 1024);
          const pump = () => {
            while (!res.destroyed && gzip.write(zeros));
            if (!res.destroyed) gzip.once('drain', pump);
          };
          res.on('close', () => gzip.destroy());
          pump();
          return;
        }
        case '/bomb':
          res.writeHead(200, { 'Content-Encoding': 'gzip', 'Content-Length': String(BOMB.length) });
          res.end(BOMB);
          return;
        case '/gzip':
          res.writeHead(200, { 'Content-Encoding': 'gzip' }).end(zlib.gzipSync('gzipped body'));
          return;
        case '/br':
          res.writeHead(200, { 'Content-Encoding': 'br' }).end(zlib.brotliCompressSync('brotli body'));
          return;
        case '/deflate':
          res.writeHead(200, { 'Content-Encoding': 'deflate' }).end(zlib.deflateSync('zlib deflate body'));
          return;
        case '/deflate-raw':
          res.writeHead(200, { 'Content-Encoding': 'deflate' }).end(zlib.deflateRawSync('raw deflate body'));
          return;
        case '/bad-gzip':
          res.writeHead(200, { 'Content-Encoding': 'gzip' }).end('this is not gzip at all');
          return;
        case '/conditional':
          if (req.headers['if-none-match'] === '"v1"' || req.headers['if-modified-since'] === 'Wed, 01 Jan 2025 00:00:00 GMT') {
            res.writeHead(304, { ETag: '"v1"' }).end();
          } else {
            res.writeHead(200, { ETag: '"v1"', 'Last-Modified': 'Wed, 01 Jan 2025 00:00:00 GMT' }).end('<rss/>');
          }
          return;
        case '/429':
          res.writeHead(429, { 'Retry-After': '120' }).end('slow down');
          return;
        default:
          res.writeHead(404).end('not found');
      }
    });
    fetcher = createSafeFetcher({ allow: [`127.0.0.1:${main.port}`, `localhost:${other.port}`], userAgent: UA });
    closed = createSafeFetcher({ allow: [], userAgent: UA });
  });

  after(async () => {
    await Promise.all([fetcher.close(), closed.close()]);
    await Promise.all([main.close(), other.close()]);
  });

  describe('allowed local server', () => {
    it('fetches a body with lower-cased headers, the final URL and no redirects', async () => {
      const res = await fetcher.fetch(`${main.origin}/hello`);
      assert.equal(res.status, 200);
      assert.equal(res.url, `${main.origin}/hello`);
      assert.equal(res.body.toString(), 'hello world');
      assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(res.headers['x-custom'], 'Yes');
      assert.deepEqual(res.redirects, []);
    });

    it('sends the User-Agent, Accept-Encoding and caller headers', async () => {
      const res = await fetcher.fetch(`${main.origin}/echo`, {
        headers: { Accept: 'application/rss+xml', 'User-Agent': 'spoofed', 'Accept-Encoding': 'identity' },
      });
      const sent = JSON.parse(res.body.toString()) as Record<string, string>;
      assert.equal(sent['user-agent'], UA);
      assert.equal(sent['accept-encoding'], 'gzip, deflate, br');
      assert.equal(sent['accept'], 'application/rss+xml');
    });

    it('exposes headers of error statuses (429 Retry-After is the caller’s business)', async () => {
      const res = await fetcher.fetch(`${main.origin}/429`);
      assert.equal(res.status, 429);
      assert.equal(res.headers['retry-after'], '120');
      assert.equal(res.body.toString(), 'slow down');
    });
  });

  describe('address guard', () => {
    it('blocks the same server without an allow entry, without connecting', async () => {
      const before = main.connections;
      await rejectsWith(closed.fetch(`${main.origin}/hello`), 'blocked_address');
      assert.equal(main.connections, before);
    });

    it('also refuses at connect time (the dispatcher itself), not only before', async () => {
      const before = main.connections;
      await assert.rejects(request(`${main.origin}/hello`, { dispatcher: closed.dispatcher }), (err: unknown) => {
        assert.ok(err instanceof FetchError, String(err));
        assert.equal(err.reason, 'blocked_address');
        return true;
      });
      assert.equal(main.connections, before);
    });

    const forms = [
      'http://127.0.0.1/',
      'http://127.1/',
      'http://127.0.0.1:' /* port filled below */,
      'http://2130706433/',
      'http://0x7f000001/',
      'http://0x7f.1/',
      'http://0177.0.0.1/',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:7f00:1]/',
      'http://[0:0:0:0:0:ffff:7f00:1]/',
      'http://[::127.0.0.1]/',
      'http://[64:ff9b::127.0.0.1]/',
      'http://10.0.0.1/',
      'http://10.255.255.255:8080/',
      'http://172.16.0.1/',
      'http://172.31.1.1/',
      'http://192.168.0.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://100.64.0.1/',
      'http://0.0.0.0/',
      'http://0/',
      'http://[::]/',
      'http://[fe80::1]/',
      'http://[fc00::1]/',
      'http://[fd00:ec2::254]/',
      'http://224.0.0.1/',
      'http://[ff02::1]/',
      'http://255.255.255.255/',
      'https://192.168.1.1/',
      'https://[::1]:8443/',
    ];
    // Each refused before any look-up or connection: the resolver and the local server count both.
    const resolved: string[] = [];
    const countingResolver: HostResolver = async (hostname) => {
      resolved.push(hostname);
      return [];
    };
    for (const form of forms) {
      it(`blocks ${form} without a network attempt`, async () => {
        const url = form.endsWith(':') ? `${form}${main.port}/` : form;
        const before = main.connections;
        const literalsOnly = createSafeFetcher({ allow: [], userAgent: UA, resolveHost: countingResolver });
        try {
          const err = await rejectsWith(literalsOnly.fetch(url), 'blocked_address');
          assert.match(err.message, /^refusing to connect to .+: not a public address$/);
        } finally {
          await literalsOnly.close();
        }
        assert.deepEqual(resolved, [], 'no name was resolved');
        assert.equal(main.connections, before, 'no connection was made');
      });
    }

    it('blocks a name resolving to loopback (localhost) unless allowed as localhost:PORT', async () => {
      await rejectsWith(closed.fetch(`http://localhost:${main.port}/hello`), 'blocked_address');
      await rejectsWith(fetcher.fetch(`http://localhost:${main.port}/hello`), 'blocked_address'); // only 127.0.0.1:PORT allowed
      const res = await fetcher.fetch(`http://localhost:${other.port}/`);
      assert.equal(res.body.toString(), 'other');
    });

    it('checks what a name resolves to on every connection (DNS rebinding)', async () => {
      const answers: Record<string, string[]> = {
        'intranet.example': ['10.1.2.3'],
        'mixed.example': ['93.184.216.34', '127.0.0.1'],
        'mapped.example': ['::ffff:127.0.0.1'],
        'rebind.example': ['192.168.0.10'],
      };
      const calls: string[] = [];
      const guarded = createSafeFetcher({
        allow: [],
        userAgent: UA,
        resolveHost: async (hostname) => {
          calls.push(hostname);
          return (answers[hostname] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
        },
      });
      try {
        for (const host of Object.keys(answers)) {
          await rejectsWith(guarded.fetch(`http://${host}/feed.xml`), 'blocked_address');
        }
        // Resolved afresh for each connection: no cached verdict a rebinding could exploit.
        await rejectsWith(guarded.fetch('http://rebind.example/feed.xml'), 'blocked_address');
        assert.equal(calls.filter((h) => h === 'rebind.example').length, 2);
        await rejectsWith(guarded.fetch('http://nowhere.example/'), 'network');
      } finally {
        await guarded.close();
      }
    });

    it('blocks a redirect from an allowed server to a loopback port that is not allowed', async () => {
      const before = other.connections;
      const err = await rejectsWith(fetcher.fetch(`${main.origin}/to-other`), 'blocked_address');
      assert.equal(err.url, `${other.origin}/`);
      assert.equal(other.connections, before);
    });

    it('blocks a redirect to the cloud metadata address', async () => {
      await rejectsWith(fetcher.fetch(`${main.origin}/to-metadata`), 'blocked_address');
    });
  });

  describe('redirects', () => {
    it('follows a chain, resolving relative Locations, and reports each hop with its status', async () => {
      const res = await fetcher.fetch(`${main.origin}/r/1`);
      assert.equal(res.status, 200);
      assert.equal(res.body.toString(), 'arrived');
      assert.equal(res.url, `${main.origin}/r/final`);
      assert.deepEqual(res.redirects, [
        { status: 301, from: `${main.origin}/r/1`, to: `${main.origin}/r/2` },
        { status: 302, from: `${main.origin}/r/2`, to: `${main.origin}/r/3?q=1` },
        { status: 307, from: `${main.origin}/r/3?q=1`, to: `${main.origin}/r/4` },
        { status: 308, from: `${main.origin}/r/4`, to: `${main.origin}/r/final` },
      ]);
    });

    it('fails after too many redirects (5 followed by default)', async () => {
      const before = main.requests.length;
      await rejectsWith(fetcher.fetch(`${main.origin}/loop`), 'too_many_redirects');
      assert.equal(main.requests.length - before, 6);
      await rejectsWith(fetcher.fetch(`${main.origin}/r/1`, { maxRedirects: 3 }), 'too_many_redirects');
      const ok = await fetcher.fetch(`${main.origin}/r/1`, { maxRedirects: 4 });
      assert.equal(ok.status, 200);
    });

    it('refuses redirects to other schemes or with credentials', async () => {
      await rejectsWith(fetcher.fetch(`${main.origin}/to-ftp`), 'bad_redirect');
      await rejectsWith(fetcher.fetch(`${main.origin}/to-js`), 'bad_redirect');
      await rejectsWith(fetcher.fetch(`${main.origin}/to-creds`), 'bad_redirect');
    });
  });

  describe('limits', () => {
    // A deadline is shown by its error naming it and by the server seeing the client give up. The default deadline
    // (20 s) is longer than these tests' own timeout, so one that did not hold fails the test rather than hangs it.
    const BOUNDED = { timeout: 15_000 };

    it('times out a body that never finishes, within the deadline', BOUNDED, async () => {
      const before = main.requests.length;
      const err = await rejectsWith(fetcher.fetch(`${main.origin}/slow-body`, { timeoutMs: 300 }), 'timeout');
      assert.equal(err.message, 'no complete response within 300 ms');
      await givenUp(main.requests[before]!);
    });

    it('times out a server that never answers', BOUNDED, async () => {
      const before = main.requests.length;
      const err = await rejectsWith(fetcher.fetch(`${main.origin}/no-response`, { timeoutMs: 300 }), 'timeout');
      assert.equal(err.message, 'no complete response within 300 ms');
      await givenUp(main.requests[before]!);
    });

    it('honours the caller’s abort signal', async () => {
      await rejectsWith(fetcher.fetch(`${main.origin}/no-response`, { signal: AbortSignal.timeout(100) }), 'timeout');
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      await rejectsWith(fetcher.fetch(`${main.origin}/no-response`, { signal: controller.signal }), 'network');
    });

    it('refuses a Content-Length above the cap before reading', async () => {
      await rejectsWith(fetcher.fetch(`${main.origin}/big-declared`, { maxBytes: 1000 }), 'too_large');
      const res = await fetcher.fetch(`${main.origin}/big-declared`, { maxBytes: 2000 });
      assert.equal(res.body.length, 2000);
    });

    it('stops a chunked body at the cap', async () => {
      await rejectsWith(fetcher.fetch(`${main.origin}/big-chunked`, { maxBytes: 5000 }), 'too_large');
      const res = await fetcher.fetch(`${main.origin}/big-chunked`, { maxBytes: 50_000 });
      assert.equal(res.body.length, 50_000);
    });

    it('stops a decompression bomb at the cap on decoded bytes', BOUNDED, async () => {
      await rejectsWith(fetcher.fetch(`${main.origin}/bomb`), 'too_large');
      await rejectsWith(fetcher.fetch(`${main.origin}/bomb`, { maxBytes: 1024 * 1024 }), 'too_large');
      // A compressed stream of zeros that never ends: only stopping at the cap while decoding ends this fetch.
      const before = main.requests.length;
      await rejectsWith(fetcher.fetch(`${main.origin}/endless-bomb`, { maxBytes: 1024 * 1024 }), 'too_large');
      await givenUp(main.requests[before]!);
    });
  });

  describe('content', () => {
    it('decodes gzip, brotli and deflate (zlib and raw)', async () => {
      assert.equal((await fetcher.fetch(`${main.origin}/gzip`)).body.toString(), 'gzipped body');
      assert.equal((await fetcher.fetch(`${main.origin}/br`)).body.toString(), 'brotli body');
      assert.equal((await fetcher.fetch(`${main.origin}/deflate`)).body.toString(), 'zlib deflate body');
      assert.equal((await fetcher.fetch(`${main.origin}/deflate-raw`)).body.toString(), 'raw deflate body');
    });

    it('fails cleanly on a body that does not match its Content-Encoding', async () => {
      await rejectsWith(fetcher.fetch(`${main.origin}/bad-gzip`), 'network');
    });

    it('passes conditional headers through and returns 304 with an empty body', async () => {
      const first = await fetcher.fetch(`${main.origin}/conditional`);
      assert.equal(first.status, 200);
      assert.equal(first.headers['etag'], '"v1"');
      const byEtag = await fetcher.fetch(`${main.origin}/conditional`, { headers: { 'If-None-Match': first.headers['etag']! } });
      assert.equal(byEtag.status, 304);
      assert.equal(byEtag.body.length, 0);
      assert.equal(byEtag.headers['etag'], '"v1"');
      const byDate = await fetcher.fetch(`${main.origin}/conditional`, {
        headers: { 'If-Modified-Since': first.headers['last-modified']! },
      });
      assert.equal(byDate.status, 304);
      assert.equal(byDate.body.length, 0);
    });
  });

  describe('URL validation', () => {
    it('refuses schemes other than http and https', async () => {
      for (const url of [
        'ftp://example.com/',
        'file:///etc/passwd',
        'data:text/plain,hi',
        'javascript:alert(1)',
        'gopher://x/',
        'ws://example.com/',
      ]) {
        await rejectsWith(fetcher.fetch(url), 'invalid_url');
      }
    });

    it('refuses credentials, malformed and overlong URLs', async () => {
      await rejectsWith(fetcher.fetch(`http://user:pass@127.0.0.1:${main.port}/hello`), 'invalid_url');
      await rejectsWith(fetcher.fetch(`http://user@127.0.0.1:${main.port}/hello`), 'invalid_url');
      await rejectsWith(fetcher.fetch('not a url'), 'invalid_url');
      await rejectsWith(fetcher.fetch(''), 'invalid_url');
      await rejectsWith(fetcher.fetch(`${main.origin}/${'a'.repeat(2100)}`), 'invalid_url');
    });

    it('errors carry a message and no stack for users', async () => {
      const err = await rejectsWith(closed.fetch('http://10.0.0.1/'), 'blocked_address');
      assert.match(err.message, /not a public address/);
      assert.equal(err.name, 'FetchError');
    });
  });
});

describe('safe fetch: POST (webhook deliveries)', () => {
  let server: TestServer;
  let fetcher: SafeFetcher;
  const bodies: string[] = [];
  before(async () => {
    server = await startServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        bodies.push(`${req.method} ${req.headers['content-type']} ${Buffer.concat(chunks).toString('utf8')}`);
        if (req.url === '/moved') res.writeHead(301, { location: '/elsewhere' }).end('moved');
        else if (req.url === '/big') res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(100_000));
        else res.writeHead(200).end('thanks');
      });
    });
    fetcher = createSafeFetcher({ allow: [`127.0.0.1:${server.port}`], userAgent: UA });
  });
  after(async () => {
    await fetcher.close();
    await server.close();
  });

  it('sends the body with its headers, never follows a redirect, and keeps only the first bytes asked for', async () => {
    const options = { method: 'POST' as const, body: '{"a":1}', headers: { 'content-type': 'application/json' } };
    const ok = await fetcher.fetch(`${server.origin}/in`, options);
    assert.equal(ok.status, 200);
    assert.equal(ok.body.toString(), 'thanks');
    assert.equal(bodies.at(-1), 'POST application/json {"a":1}');

    const moved = await fetcher.fetch(`${server.origin}/moved`, options);
    assert.equal(moved.status, 301);
    assert.deepEqual(moved.redirects, []);
    assert.equal(server.requests.filter((request) => request.url === '/elsewhere').length, 0);

    await rejectsWith(fetcher.fetch(`${server.origin}/big`, { ...options, maxBytes: 1024 }), 'too_large');
    const truncated = await fetcher.fetch(`${server.origin}/big`, { ...options, maxBytes: 1024, truncateBody: true });
    assert.equal(truncated.status, 200);
    assert.equal(truncated.body.length, 1024);
  });

  it('refuses a private address for a POST as for a GET, before connecting', async () => {
    const guarded = createSafeFetcher({ allow: [], userAgent: UA });
    try {
      const before = server.connections;
      await rejectsWith(guarded.fetch(`${server.origin}/in`, { method: 'POST', body: 'x' }), 'blocked_address');
      assert.equal(server.connections, before);
    } finally {
      await guarded.close();
    }
  });
});
