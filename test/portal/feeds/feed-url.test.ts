import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { normalizeFeedUrl } from '../../../src/portal/feeds/feed-url.js';

describe('normalizeFeedUrl: the form a feed URL is stored and compared in', () => {
  it('lower-cases scheme and host, drops the default port and the fragment, gives an empty path its slash', () => {
    assert.equal(normalizeFeedUrl('HTTP://Blog.Example.com:80/feed#x'), 'http://blog.example.com/feed');
    assert.equal(normalizeFeedUrl('http://blog.example.com/feed'), 'http://blog.example.com/feed');
    assert.equal(normalizeFeedUrl('https://Blog.Example.com:443'), 'https://blog.example.com/');
    assert.equal(normalizeFeedUrl('https://blog.example.com/feed#'), 'https://blog.example.com/feed');
    assert.equal(normalizeFeedUrl('http://blog.example.com/a/../feed/./'), 'http://blog.example.com/feed/');
    // Percent-encoding as WHATWG URL parsing makes it: what must be encoded is, escapes already written are kept.
    assert.equal(normalizeFeedUrl('http://blog.example.com/ä b'), 'http://blog.example.com/%C3%A4%20b');
    assert.equal(normalizeFeedUrl('http://Bücher.example/feed'), 'http://xn--bcher-kva.example/feed');
    assert.equal(normalizeFeedUrl(new URL('http://blog.example.com:8080/feed')), 'http://blog.example.com:8080/feed');
  });

  it('keeps apart what can be different feeds: query order, http and https, www and the bare host, path case', () => {
    const same = (a: string, b: string) => normalizeFeedUrl(a) === normalizeFeedUrl(b);
    assert.equal(same('http://blog.example.com/feed?a=1&b=2', 'http://blog.example.com/feed?b=2&a=1'), false);
    assert.equal(same('http://blog.example.com/feed', 'https://blog.example.com/feed'), false);
    assert.equal(same('http://www.blog.example.com/feed', 'http://blog.example.com/feed'), false);
    assert.equal(same('http://blog.example.com/Feed', 'http://blog.example.com/feed'), false);
    assert.equal(same('http://blog.example.com/feed/', 'http://blog.example.com/feed'), false);
  });
});
