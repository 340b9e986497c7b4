import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import iconv from 'iconv-lite';
import { keyEntries } from '../../src/reader/dedupe.js';
import { FeedParseError, parseFeed, type NormalizedFeed } from '../../src/reader/index.js';

const URL = 'https://news.example.com/feed.xml';

function parse(xml: string | Buffer, contentType?: string): NormalizedFeed {
  return parseFeed({ body: typeof xml === 'string' ? Buffer.from(xml) : xml, contentType, url: URL });
}

function rss(items: string, channel = '<title>News</title><link>https://news.example.com/</link>'): string {
  return `<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel>${channel}${items}</channel></rss>`;
}

function assertParseError(fn: () => unknown, code: FeedParseError['code']): void {
  assert.throws(fn, (error: unknown) => error instanceof FeedParseError && error.code === code);
}

describe('parseFeed: safety', () => {
  it('does not expand entities (billion laughs)', () => {
    const lol = Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`).join('\n');
    const xml = `<?xml version="1.0"?>\n<!DOCTYPE rss [\n<!ENTITY lol0 "lol">\n${lol}\n]>\n${rss('<item><title>&lol9;</title><guid>1</guid></item>').replace(/^<\?xml[^>]*>\n/, '')}`;
    // Expanded, &lol9; would be 10⁹ "lol"s: the title shows that nothing was.
    const feed = parse(xml);
    assert.equal(feed.entries.length, 1);
    assert.ok(feed.entries[0]!.title.length < 20, feed.entries[0]!.title);
    assert.doesNotMatch(feed.entries[0]!.title, /lollol/);
  });

  it('does not resolve external entities', () => {
    const xml = `<?xml version="1.0"?>\n<!DOCTYPE rss [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n<rss version="2.0"><channel><title>T</title><item><title>x&xxe;y</title><description>&xxe;</description></item></channel></rss>`;
    const entry = parse(xml).entries[0]!;
    assert.doesNotMatch(`${entry.title} ${entry.summary} ${entry.html}`, /root:/);
  });

  it('refuses an HTML page as not_a_feed', () => {
    assertParseError(
      () => parse('<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>Checking your browser</body></html>', 'text/html'),
      'not_a_feed',
    );
    assertParseError(() => parse('\n<html><body><rss>not really</rss></body></html>'), 'not_a_feed');
    assertParseError(() => parse(''), 'not_a_feed');
    assertParseError(() => parse('{"hello": "world"}'), 'not_a_feed');
  });

  it('sanitizes entry HTML', () => {
    const html = `<p onclick="x()" style="position:fixed">Hi<script>alert(1)</script><a href="javascript:alert(1)">j</a><img src="data:image/png;base64,AAA"><iframe src="https://evil.example/"></iframe><form><input></form></p>`;
    const entry = parse(rss(`<item><title>t</title><description><![CDATA[${html}]]></description></item>`)).entries[0]!;
    assert.doesNotMatch(entry.html, /<script|onclick|style=|javascript:|data:|<iframe|<form|<input/i);
    assert.match(entry.html, /Hi/);
  });
});

describe('parseFeed: limits and dedupe', () => {
  it('returns the first 1,000 of 1,500 entries', () => {
    const items = Array.from({ length: 1500 }, (_, i) => `<item><title>Item ${i}</title><guid>g${i}</guid></item>`).join('');
    const feed = parse(rss(items));
    assert.equal(feed.entries.length, 1000);
    assert.equal(feed.entries[0]!.title, 'Item 0');
    assert.equal(feed.entries[999]!.title, 'Item 999');
  });

  it('bounds titles and summaries', () => {
    const entry = parse(rss(`<item><title>${'t'.repeat(800)}</title><description>${'s '.repeat(8000)}</description></item>`)).entries[0]!;
    assert.equal(entry.title.length, 500);
    assert.ok(entry.summary.length <= 10_000);
  });

  it('keys entries by guid, then link, then a hash of title and content, each key prefixed by its kind', () => {
    const feed = parse(
      rss(
        '<item><title>A</title><guid>urn:a</guid><link>https://news.example.com/a</link></item>' +
          '<item><title>B</title><link>/b</link></item>' +
          '<item><title>C</title><description>c</description></item>' +
          // a guid equal to another entry's link is another key
          '<item><title>D</title><guid>https://news.example.com/b</guid></item>',
      ),
    );
    const keys = feed.entries.map((entry) => [entry.keyKind, entry.key]);
    assert.deepEqual(keys.slice(0, 2), [
      ['guid', 'guid:urn:a'],
      ['link', 'link:https://news.example.com/b'],
    ]);
    assert.equal(keys[2]![0], 'hash');
    assert.match(keys[2]![1]!, /^hash:[0-9a-f]{64}$/);
    assert.deepEqual(keys[3], ['guid', 'guid:https://news.example.com/b']);
    // the same entry read again has the same key
    assert.equal(parse(rss('<item><title>C</title><description>c</description></item>')).entries[0]!.key, keys[2]![1]);
  });

  it('keys every entry of a feed that repeats a guid by its link (else hash), as FreshRSS does', () => {
    const feed = parse(
      rss(
        '<item><title>A</title><guid>urn:a</guid><link>https://news.example.com/a</link></item>' +
          '<item><title>D1</title><guid>dup</guid><link>https://news.example.com/d1</link></item>' +
          '<item><title>D2</title><guid>dup</guid><link>https://news.example.com/d2</link></item>' +
          '<item><title>E</title><guid>urn:e</guid></item>',
      ),
    );
    assert.deepEqual(
      feed.entries.map((entry) => [entry.keyKind, entry.key.replace(/[0-9a-f]{64}$/, 'H')]),
      [
        ['link', 'link:https://news.example.com/a'],
        ['link', 'link:https://news.example.com/d1'],
        ['link', 'link:https://news.example.com/d2'],
        ['hash', 'hash:H'],
      ],
    );
    // A feed already known to repeat its guids keeps its entries keyed by link, repeats or not.
    const entries = parse(rss('<item><title>A</title><guid>urn:a</guid><link>https://news.example.com/a</link></item>')).entries;
    assert.equal(keyEntries(entries, 'link'), 'link');
    assert.equal(entries[0]!.key, 'link:https://news.example.com/a');
  });

  it('keys entries by hash when their links repeat too, but not for an entry listed twice', () => {
    // Entries without a guid that all link to the home page.
    const home = parse(
      rss(
        '<item><title>One</title><link>https://news.example.com/</link></item><item><title>Two</title><link>https://news.example.com/</link></item>',
      ),
    ).entries;
    assert.deepEqual(
      home.map((entry) => entry.keyKind),
      ['hash', 'hash'],
    );
    assert.notEqual(home[0]!.key, home[1]!.key);
    // The very same item twice is one entry listed twice: the feed's guids are fine, both get the one key.
    const item = '<item><title>Same</title><guid>urn:same</guid><link>https://news.example.com/same</link></item>';
    const twice = parse(rss(item + item)).entries;
    assert.deepEqual(
      twice.map((entry) => entry.key),
      ['guid:urn:same', 'guid:urn:same'],
    );
    assert.equal(keyEntries(twice), 'guid');
  });
});

describe('parseFeed: formats and fields', () => {
  it('reads RSS 2.0 fields, dates and relative links', () => {
    const feed = parse(
      rss(
        `<item><title>Caf&eacute; &amp; more&nbsp;news</title><link>/2024/cafe</link><guid isPermaLink="false">42</guid>
         <author>editor@example.com (Ed)</author><pubDate>Tue, 2 Jan 2024 03:04:05 EST</pubDate>
         <description><![CDATA[<p>See <a href="../about">about</a> <img src="img/a.png"></p>]]></description></item>`,
        '<title>News</title><link>https://news.example.com/</link><description>All the news</description><ttl>30</ttl><image><url>/logo.png</url></image>',
      ),
    );
    assert.equal(feed.format, 'rss');
    assert.equal(feed.title, 'News');
    assert.equal(feed.description, 'All the news');
    assert.equal(feed.ttlMinutes, 30);
    assert.equal(feed.image, 'https://news.example.com/logo.png');
    const entry = feed.entries[0]!;
    assert.equal(entry.title, 'Café & more news'); // whitespace, no-break spaces included, collapsed
    assert.equal(entry.link, 'https://news.example.com/2024/cafe');
    assert.equal(entry.guid, '42');
    assert.equal(entry.publishedAt, '2024-01-02T08:04:05.000Z');
    assert.match(entry.html, /href="https:\/\/news\.example\.com\/about"/);
    assert.match(entry.html, /src="https:\/\/news\.example\.com\/2024\/img\/a\.png"/);
    assert.equal(entry.cover, 'https://news.example.com/2024/img/a.png');
    assert.equal(entry.summary, 'See about');
  });

  it('reads Atom with xml:base and typed text', () => {
    const feed = parse(`<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://blog.example.org/">
      <title type="text">A &lt;b&gt; blog</title><link href="/" rel="alternate" type="text/html"/>
      <entry xml:base="posts/"><id>tag:blog,1</id><title type="html">&lt;em&gt;Hello&lt;/em&gt;</title>
        <link rel="alternate" href="hello.html"/><author><name>Ann</name></author>
        <published>2024-03-04T05:06:07+02:00</published><updated>2024-03-05T00:00:00Z</updated>
        <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><a href="next.html">next</a></div></content></entry></feed>`);
    assert.equal(feed.format, 'atom');
    assert.equal(feed.title, 'A <b> blog');
    assert.equal(feed.link, 'https://blog.example.org/');
    const entry = feed.entries[0]!;
    assert.deepEqual([entry.key, entry.keyKind], ['guid:tag:blog,1', 'guid']);
    assert.equal(entry.title, 'Hello');
    assert.equal(entry.link, 'https://blog.example.org/posts/hello.html');
    assert.equal(entry.author, 'Ann');
    assert.equal(entry.publishedAt, '2024-03-04T03:06:07.000Z');
    assert.equal(entry.updatedAt, '2024-03-05T00:00:00.000Z');
    assert.match(entry.html, /href="https:\/\/blog\.example\.org\/posts\/next\.html"/);
  });

  it('reads RSS 1.0 (RDF)', () => {
    const feed =
      parse(`<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
      <channel rdf:about="https://r.example/"><title>R</title><link>https://r.example/</link><description>d</description></channel>
      <item rdf:about="https://r.example/1"><title>One</title><link>https://r.example/1</link><dc:date>2024-01-02T03:04:05Z</dc:date><dc:creator>Rae</dc:creator></item></rdf:RDF>`);
    assert.equal(feed.format, 'rdf');
    assert.deepEqual(
      [feed.entries[0]!.title, feed.entries[0]!.link, feed.entries[0]!.publishedAt, feed.entries[0]!.author],
      ['One', 'https://r.example/1', '2024-01-02T03:04:05.000Z', 'Rae'],
    );
  });

  it('reads JSON Feed 1.0 and 1.1', () => {
    const v10 = parse(
      JSON.stringify({
        version: 'https://jsonfeed.org/version/1',
        title: 'J',
        home_page_url: 'https://j.example/',
        author: { name: 'Old Style' },
        items: [
          { id: 1, url: 'https://j.example/1', title: 'One', content_html: '<p>Hi <img src="/p.jpg"></p>', date_published: '2024-01-02T03:04:05Z' },
        ],
      }),
      'application/json',
    );
    assert.equal(v10.format, 'json');
    assert.equal(v10.link, 'https://j.example/');
    const one = v10.entries[0]!;
    assert.deepEqual([one.key, one.keyKind, one.title, one.publishedAt], ['guid:1', 'guid', 'One', '2024-01-02T03:04:05.000Z']);
    assert.equal(one.cover, 'https://j.example/p.jpg');
    const v11 = parse(
      JSON.stringify({
        version: 'https://jsonfeed.org/version/1.1',
        title: 'J',
        items: [{ id: 'a', title: 'Two', content_text: 'a < b', image: 'https://j.example/cover.png', authors: [{ name: 'New Style' }] }],
      }),
      'application/feed+json',
    );
    const two = v11.entries[0]!;
    assert.equal(two.html, 'a &lt; b');
    assert.equal(two.summary, 'a < b');
    assert.equal(two.cover, 'https://j.example/cover.png');
    assert.equal(two.author, 'New Style');
  });

  it('takes the cover from media RSS, an image enclosure, or the first image', () => {
    const feed = parse(
      rss(
        '<item><title>m</title><media:content url="https://c.example/m.jpg" medium="image"/><description>&lt;img src="https://c.example/x.jpg"&gt;</description></item>' +
          '<item><title>t</title><media:thumbnail url="https://c.example/t.jpg"/></item>' +
          '<item><title>e</title><enclosure url="https://c.example/e.png" length="1" type="image/png"/></item>' +
          '<item><title>a</title><enclosure url="https://c.example/e.mp3" length="1" type="audio/mpeg"/></item>' +
          '<item><title>i</title><description>&lt;p&gt;&lt;img src="/first.gif"&gt;&lt;img src="/second.gif"&gt;&lt;/p&gt;</description><link>https://c.example/post</link></item>',
      ),
    );
    assert.deepEqual(
      feed.entries.map((entry) => entry.cover),
      ['https://c.example/m.jpg', 'https://c.example/t.jpg', 'https://c.example/e.png', undefined, 'https://c.example/first.gif'],
    );
  });

  it('reads a malformed but recognizable feed leniently', () => {
    const feed = parse('<rss version="2.0"><channel><title>T</title><item><title>AT&T &copy; 2024</title></item></channel></rss');
    assert.equal(feed.entries[0]!.title, 'AT&T © 2024');
  });
});

describe('parseFeed: the gaps feedparser fills', () => {
  it('decodes Atom 0.3 mode="base64" content and keeps what its type says (and sanitizes it)', () => {
    const encode = (text: string) =>
      Buffer.from(text)
        .toString('base64')
        .replace(/(.{20})/g, '$1\n');
    const xml = `<feed version="0.3" xmlns="http://purl.org/atom/ns#"><title mode="base64">${encode('Base64 & co')}</title>
<entry><id>one</id><title>One</title><content type="text/html" mode="base64">${encode('<p>Hello <b>there</b><script>alert(1)</script></p>')}</content></entry>
<entry><id>two</id><title>Two</title><summary mode="base64">${encode('a <b> is text here')}</summary></entry></feed>`;
    const feed = parse(xml);
    assert.equal(feed.title, 'Base64 & co');
    assert.equal(feed.entries[0]!.html, '<p>Hello <b>there</b></p>');
    assert.equal(feed.entries[1]!.summary, 'a <b> is text here');
    assert.equal(feed.entries[1]!.html, 'a &lt;b&gt; is text here');
  });

  it('decodes Atom 1.0 content of a non-text, non-XML type as base64 text', () => {
    const xml = `<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><entry><id>1</id><title>x</title>
<content type="application/octet-stream">${Buffer.from('Example <b>Atom</b>').toString('base64')}</content></entry></feed>`;
    assert.equal(parse(xml).entries[0]!.html, 'Example &lt;b&gt;Atom&lt;/b&gt;');
  });

  it("reads an RSS item's xhtml:body as its content, but not a <body> inside CDATA", () => {
    const xml =
      rss(`<item><guid>a</guid><title>A</title><xhtml:body xmlns:xhtml="http://www.w3.org/1999/xhtml"><xhtml:p>From <xhtml:b>xhtml</xhtml:b>; <xhtml:iframe src="https://evil.example/"/> kept</xhtml:p></xhtml:body></item>
<item><guid>b</guid><title>B</title><body xmlns="http://www.w3.org/1999/xhtml"><p onclick="x()">Plain body</p></body></item>
<item><guid>c</guid><title>C</title><description><![CDATA[<html><body><p>In CDATA</p></body></html>]]></description></item>`);
    const [a, b, c] = parse(xml).entries;
    assert.equal(a!.html, '<p>From <b>xhtml</b>;  kept</p>');
    assert.equal(b!.html, '<p>Plain body</p>');
    assert.equal(c!.html, '<p>In CDATA</p>');
  });

  it("gives entries without an author the feed's author (RSS managingEditor, dc:creator; RDF; Atom)", () => {
    const withEditor = parse(
      rss(
        '<item><guid>1</guid><title>No author</title></item><item><guid>2</guid><title>Own</title><author>own@example.com (Own Author)</author></item>',
        '<title>N</title><managingEditor>editor@example.com (The Editor)</managingEditor>',
      ),
    );
    assert.equal(withEditor.entries[0]!.author, 'The Editor');
    assert.equal(withEditor.entries[1]!.author, 'Own Author');
    const withCreator = parse(
      rss(
        '<item><guid>1</guid><title>x</title></item>',
        '<title>N</title><dc:creator xmlns:dc="http://purl.org/dc/elements/1.1/">Channel Creator</dc:creator>',
      ),
    );
    assert.equal(withCreator.entries[0]!.author, 'Channel Creator');
    const rdf =
      parse(`<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel rdf:about="https://news.example.com/"><title>R</title><link>https://news.example.com/</link><dc:creator>RDF Creator</dc:creator></channel>
<item rdf:about="https://news.example.com/1"><title>One</title><link>https://news.example.com/1</link></item></rdf:RDF>`);
    assert.equal(rdf.entries[0]!.author, 'RDF Creator');
    const atom = parse(
      `<feed xmlns="http://www.w3.org/2005/Atom"><title>A</title><author><name>Feed Author</name></author><entry><id>1</id><title>x</title></entry></feed>`,
    );
    assert.equal(atom.entries[0]!.author, 'Feed Author');
  });
});

describe('parseFeed: encodings', () => {
  const russian = 'Привет, мир';

  for (const charset of ['windows-1251', 'koi8-r']) {
    const declared = Buffer.concat([
      iconv.encode(rss(`<item><title>${russian}</title></item>`).replace('encoding="utf-8"', `encoding="${charset}"`), charset),
    ]);
    const undeclared = iconv.encode(rss(`<item><title>${russian}</title></item>`).replace(' encoding="utf-8"', ''), charset);

    it(`decodes ${charset} from the Content-Type charset`, () => {
      assert.equal(parse(undeclared, `application/rss+xml; charset=${charset}`).entries[0]!.title, russian);
    });

    it(`decodes ${charset} from the XML declaration without a charset header`, () => {
      const feed = parse(declared, 'application/xml');
      assert.equal(feed.charset, charset);
      assert.equal(feed.entries[0]!.title, russian);
    });

    it(`prefers the Content-Type charset to the XML declaration (${charset})`, () => {
      const lying = iconv.encode(rss(`<item><title>${russian}</title></item>`).replace('encoding="utf-8"', 'encoding="iso-8859-1"'), charset);
      assert.equal(parse(lying, `text/xml; charset="${charset}"`).entries[0]!.title, russian);
    });
  }

  it('honours a UTF-16 BOM and a UTF-8 BOM', () => {
    const text = rss('<item><title>Grüße</title></item>').replace('encoding="utf-8"', 'encoding="utf-16"');
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    assert.equal(parse(le, 'text/xml; charset=iso-8859-1').entries[0]!.title, 'Grüße');
    const be = Buffer.from(le.subarray(2)).swap16();
    assert.equal(parse(Buffer.concat([Buffer.from([0xfe, 0xff]), be])).entries[0]!.title, 'Grüße');
    const utf8 = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(rss('<item><title>Grüße</title></item>'))]);
    assert.equal(parse(utf8, 'text/xml; charset=windows-1251').entries[0]!.title, 'Grüße');
  });

  it('reads valid UTF-8 as UTF-8 whatever charset it is labelled with (no mojibake), as Miniflux does', () => {
    const german = rss('<item><title>Grüße aus Köln</title></item>');
    for (const label of ['iso-8859-1', 'windows-1251', 'windows-1252', 'koi8-r', 'iso-8859-2']) {
      const feed = parse(Buffer.from(german), `text/xml; charset=${label}`);
      assert.equal(feed.entries[0]!.title, 'Grüße aus Köln', label);
      assert.equal(feed.charset, 'utf-8');
      // Labelled in the XML declaration only, the same.
      const declared = Buffer.from(german.replace('encoding="utf-8"', `encoding="${label}"`));
      assert.equal(parse(declared, 'application/xml').entries[0]!.title, 'Grüße aus Köln', `${label} in the XML declaration`);
    }
    assert.equal(parse(Buffer.from(rss(`<item><title>${russian}</title></item>`)), 'text/xml; charset=windows-1251').entries[0]!.title, russian);
  });

  for (const [charset, text] of [
    ['iso-8859-2', 'Zażółć gęślą jaźń'],
    ['iso-8859-5', 'Привет, мир'],
    ['iso-8859-15', 'Œuvre à 5 €'],
  ] as const) {
    it(`decodes a real ${charset} body labelled as such`, () => {
      const body = iconv.encode(rss(`<item><title>${text}</title></item>`).replace('encoding="utf-8"', `encoding="${charset}"`), charset);
      assert.equal(parse(body, `application/rss+xml; charset=${charset}`).entries[0]!.title, text);
      const feed = parse(body);
      assert.equal(feed.charset, charset);
      assert.equal(feed.entries[0]!.title, text, 'from the XML declaration');
    });
  }

  it('falls back to windows-1252 when the declared UTF-8 is not UTF-8', () => {
    const body = iconv.encode(rss('<item><title>Café “quoted”</title></item>'), 'windows-1252');
    assert.equal(parse(body, 'application/rss+xml; charset=utf-8').entries[0]!.title, 'Café “quoted”');
  });
});
