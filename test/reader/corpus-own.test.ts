import assert from 'node:assert/strict';
import { basename, join } from 'node:path';
import { describe, it } from 'node:test';
import { parseFeed, type NormalizedFeed } from '../../src/reader/index.js';
import { CORPUS_URL, DANGEROUS_HTML, FIXTURES, feedFiles, read } from './corpus.js';

// The feeds written for Masthead (test/fixtures/feeds/own, listed in test/fixtures/feeds/README.md). They stand in
// for third-party sample feeds whose licence does not let the repository ship them: the corpus tests read them
// with feedparser's suite (every feed reads, every entry is kept, nothing dangerous survives an import), and these
// tests check that each still holds the cases it was written for, whatever FEED_CORPUS names.

const OWN = join(FIXTURES, 'own');

function own(name: string): NormalizedFeed {
  return parseFeed({ body: read(join(OWN, name)), url: CORPUS_URL });
}

/** The articles an import makes: one per key, of the entries with a title or content. */
function articleCount(feed: NormalizedFeed): number {
  return new Set(feed.entries.filter((entry) => entry.title || entry.html).map((entry) => entry.key)).size;
}

/** Each feed: its format, its entries, the articles they make. */
const FEEDS: Record<string, [format: NormalizedFeed['format'], entries: number, articles: number]> = {
  'atom03.xml': ['atom', 3, 3],
  'atom10-feed.xml': ['atom', 5, 4],
  'atom10-media-takedown.xml': ['atom', 3, 2],
  'atom10-minimal.xml': ['atom', 2, 2],
  'jsonfeed-10.json': ['json', 2, 2],
  'jsonfeed-11.json': ['json', 5, 4],
  'media-rss-articles.xml': ['rss', 4, 4],
  'media-rss-audio-https-namespaces.xml': ['rss', 2, 2],
  'podcast-itunes.xml': ['rss', 7, 7],
  'rss091-latin1.xml': ['rss', 6, 6],
  'rss092-notes.xml': ['rss', 16, 15],
  'rss10-rdf-modules.xml': ['rdf', 3, 3],
  'rss10-rdf.xml': ['rdf', 3, 3],
  'rss20-channel.xml': ['rss', 6, 5],
  'rss20-dublin-core.xml': ['rss', 3, 3],
  'rss20-minimal-bom.xml': ['rss', 1, 1],
  'rss20-windows-1252.xml': ['rss', 3, 3],
};

describe('feeds written for Masthead (test/fixtures/feeds/own)', () => {
  it('reads RSS 0.91, 0.92 and 2.0, RSS 1.0 (RDF), Atom 0.3 and 1.0, JSON Feed 1.0 and 1.1: every entry, and which make articles', () => {
    assert.deepEqual(
      feedFiles(OWN).map((path) => basename(path)),
      Object.keys(FEEDS),
    );
    for (const [name, [format, entries, articles]] of Object.entries(FEEDS)) {
      const feed = own(name);
      assert.equal(feed.format, format, name);
      assert.equal(feed.entries.length, entries, name);
      assert.equal(articleCount(feed), articles, name);
    }
    // Entries with neither title nor content are entries, not articles; a title alone or content alone is enough.
    assert.deepEqual(
      own('rss20-channel.xml').entries.map((entry) => [Boolean(entry.title), Boolean(entry.html)]),
      [
        [true, true],
        [false, true],
        [true, true],
        [true, false],
        [true, true],
        [false, false],
      ],
    );
    assert.equal(own('rss092-notes.xml').entries.filter((entry) => entry.title).length, 0);
    const takedown = own('atom10-media-takedown.xml').entries[2]!;
    assert.deepEqual([takedown.title, takedown.html], ['', '']);
  });

  it('decodes ISO-8859-1 (as windows-1252), windows-1252 with CRLF lines, and UTF-8 after a byte order mark', () => {
    const latin1 = own('rss091-latin1.xml');
    assert.equal(latin1.charset, 'iso-8859-1');
    assert.equal(latin1.title, 'Café Crème Weekly');
    assert.equal(latin1.entries[0]!.title, 'Naïve about espresso?');
    // 0x92 is a control character in ISO-8859-1 but a right quote in windows-1252, which such feeds mean.
    assert.equal(latin1.entries[0]!.summary, 'A beginner’s guide to the crème on top, from the maître torréfacteur.');
    assert.equal(latin1.entries[4]!.title, 'Prices up by ½');

    const cp1252 = own('rss20-windows-1252.xml');
    assert.equal(cp1252.charset, 'windows-1252');
    assert.equal(cp1252.title, 'Harbour Traders – Price List');
    assert.equal(cp1252.entries[0]!.title, '“Fresh today” – the fish stall');
    assert.match(cp1252.entries[0]!.summary, /^Mackerel at 4€ a kilo/);
    assert.equal(cp1252.entries[2]!.summary, 'The market & the quay shops close on Sunday — the ferry still runs.');

    const bom = own('rss20-minimal-bom.xml');
    assert.equal(bom.charset, 'utf-8');
    assert.equal(bom.title, 'Beach Clean Calendar');
    assert.equal(bom.ttlMinutes, 1800);
  });

  it('keeps no script, handler, style, form, object or data URL, and only the listed video iframes', () => {
    for (const name of Object.keys(FEEDS)) {
      for (const entry of own(name).entries) {
        for (const pattern of DANGEROUS_HTML) assert.doesNotMatch(entry.html, pattern, `${name}: ${entry.html}`);
      }
    }
    const article = own('media-rss-articles.xml').entries[0]!.html;
    assert.match(article, /<iframe [^>]*src="https:\/\/www\.youtube\.com\/embed\/abcdefghijk\?rel=0"/);
    assert.match(article, /<iframe [^>]*src="https:\/\/player\.vimeo\.com\/video\/12345678"/);
    assert.doesNotMatch(article, /tracker\.example\.net|fallback text|injected|display: none|phish|\.swf|Boat\.class/);
    assert.match(
      article,
      /<video poster="https:\/\/living\.example\.com\/coast\/images\/poster\.jpg">\s*<source src="https:\/\/living\.example\.com\/coast\/video\/shed\.mp4"/,
    );
    assert.match(article, /<a href="https:\/\/living\.example\.com\/coast\/tar" target="_blank" rel="noopener noreferrer">/);
    assert.match(article, /<a>a scripted link<\/a>/);
    const atom = own('atom10-media-takedown.xml').entries[0]!.html;
    assert.match(atom, /src="https:\/\/www\.youtube-nocookie\.com\/embed\/abcdefghijk"/);
    assert.doesNotMatch(atom, /ads\.example\.net|onload/);

    assert.equal(
      own('rss20-channel.xml').entries[0]!.html,
      'After six months of repairs the lamp\n<span>shines again</span>.\n\n<a>Do not follow</a>\n' +
        '<img src="https://gazette.example.com/images/lamp-lit.jpg" alt="The lamp" />\n<a href="https://gazette.example.com/2024/05/repairs">The repairs</a>',
    );
    assert.equal(own('atom03.xml').entries[1]!.html, '<p>They bite best <b>two days</b> after the full moon.</p>');
    assert.match(own('jsonfeed-11.json').entries[0]!.html, /<p><a>Click<\/a><\/p>/);
  });

  it("resolves relative URLs against xml:base, else the entry's link, else the feed's URL", () => {
    const atom = own('atom10-feed.xml');
    assert.equal(atom.link, 'https://journal.example.org/');
    assert.equal(atom.image, 'https://journal.example.org/images/logo.png');
    assert.equal(atom.entries[0]!.link, 'https://journal.example.org/2022/06/salt-marshes');
    assert.match(atom.entries[0]!.html, /href="https:\/\/journal\.example\.org\/2022\/06\/tide-tables"/);
    assert.match(atom.entries[0]!.html, /src="https:\/\/journal\.example\.org\/2022\/06\/images\/samphire\.jpg"/);
    assert.match(atom.entries[1]!.html, /href="https:\/\/journal\.example\.org\/2022\/05\/redshank"/);
    assert.match(own('atom03.xml').entries[0]!.html, /href="http:\/\/almanac\.example\.org\/2004\/04\/tables"/);
    // No xml:base: the entry's link.
    assert.match(own('rss20-dublin-core.xml').entries[0]!.html, /href="https:\/\/orchard\.example\.net\/2023\/10\/tools\/secateurs"/);
    assert.match(
      own('jsonfeed-11.json').entries[0]!.html,
      /href="https:\/\/netloft\.example\.com\/knots".*src="https:\/\/netloft\.example\.com\/2024\/03\/images\/bend\.jpg"/,
    );
    assert.match(own('rss10-rdf-modules.xml').entries[1]!.html, /href="http:\/\/wire\.example\.com\/pilots"/);
    // No base and no link: the feed's URL.
    assert.match(own('atom10-media-takedown.xml').entries[0]!.html, /src="http:\/\/127\.0\.0\.1:8097\/articles\/4821\/bridge\.jpg"/);
    assert.equal(own('rss20-channel.xml').entries[4]!.link, 'http://127.0.0.1:8097/2024/05/storm-warning');
    // A permalink guid is the link of an item without one.
    assert.equal(own('rss20-channel.xml').entries[1]!.link, 'https://gazette.example.com/2024/05/foghorn-note');
  });

  it('keys entries by guid, stepping down to the link or a hash when they repeat, and keeps an entry listed twice once', () => {
    const kinds = (name: string) => own(name).entries.map((entry) => entry.keyKind);
    assert.deepEqual(kinds('rss20-channel.xml'), ['guid', 'guid', 'guid', 'link', 'link', 'guid']);
    assert.deepEqual(kinds('rss091-latin1.xml'), Array(6).fill('link'));
    // No guids, and two items share a link.
    assert.deepEqual(kinds('rss20-windows-1252.xml'), Array(3).fill('hash'));
    // Two items share a guid and a link.
    assert.deepEqual(kinds('media-rss-audio-https-namespaces.xml'), ['hash', 'hash']);
    // The takedown entry repeats the first entry's id.
    assert.deepEqual(kinds('atom10-media-takedown.xml'), ['hash', 'link', 'hash']);
    // The gull note is listed twice, identically: one key, one article.
    const notes = own('rss092-notes.xml').entries;
    assert.equal(new Set(notes.map((entry) => entry.key)).size, 15);
    assert.equal(notes[5]!.key, notes[12]!.key);
  });

  it('reads the dates feeds write: RFC 822 with zone names, without a weekday, ISO 8601 without colon or seconds', () => {
    const dates = (name: string) => own(name).entries.map((entry) => entry.publishedAt);
    assert.deepEqual(dates('podcast-itunes.xml'), [
      '2023-01-08T01:15:00.000Z', // Tue, 8 Jan 2023 01:15:00 GMT
      '2023-05-07T12:00:00.000Z',
      '2023-04-30T18:00:00.000Z', // 13:00:00 EST
      '2023-05-23T09:00:00.000Z', // 02:00:00 -0700
      '2023-02-16T07:00:00.000Z', // ISO 8601 in a pubDate
      '2022-09-27T01:15:00.000Z',
      '2022-09-13T01:15:00.000Z',
    ]);
    const media = own('media-rss-articles.xml').entries[0]!;
    assert.equal(media.publishedAt, '2023-10-04T13:00:00.000Z'); // 04 Oct 2023 13:00:00 GMT
    assert.equal(media.updatedAt, '2023-10-10T09:00:00.000Z'); // dcterms:modified 2023-10-10T10:00:00+0100
    const atom = own('atom10-media-takedown.xml').entries[0]!;
    assert.equal(atom.publishedAt, '2023-01-10T09:00:00.000Z'); // 2023-01-10T10:00:00+0100
    assert.equal(atom.updatedAt, '2023-10-02T13:00:00.520Z');
    assert.deepEqual(dates('rss10-rdf-modules.xml'), ['2000-01-01T14:30:00.000Z', '2000-01-01T14:15:00.000Z', '1999-12-31T00:00:00.000Z']);
    assert.deepEqual(dates('rss20-dublin-core.xml'), ['2023-10-02T18:54:20.000Z', '2023-09-25T08:00:00.000Z', '2023-09-18T00:00:00.000Z']);
    assert.equal(own('atom03.xml').entries[0]!.publishedAt, '2004-04-20T00:23:47.000Z'); // issued
    assert.equal(own('jsonfeed-10.json').entries[0]!.publishedAt, '2019-06-01T21:00:00.000Z');
  });

  it("names the entry's author, else the feed's (managingEditor, itunes:author, dc:creator, Atom and JSON Feed authors)", () => {
    const authors = (name: string) => own(name).entries.map((entry) => entry.author);
    assert.deepEqual(authors('rss20-channel.xml'), ['Ada Lantern', ...Array(5).fill('Ida Keeper')]);
    assert.deepEqual(authors('podcast-itunes.xml'), [...Array(4).fill('The Walking Club'), 'A Guest Walker', 'The Walking Club', 'The Walking Club']);
    assert.deepEqual(authors('rss20-dublin-core.xml'), [
      'Rowan Branch',
      'Pip Grafter (pip@orchard.example.net)',
      'Pip Grafter (pip@orchard.example.net)',
    ]);
    assert.deepEqual(authors('atom10-feed.xml'), ['Marsh Warden', ...Array(4).fill('The Editors')]);
    assert.deepEqual(authors('atom10-minimal.xml'), ['Jo Bollard', 'Cai Harbourmaster']);
    assert.deepEqual(authors('jsonfeed-11.json'), ['Ned Twine', ...Array(4).fill('Bryony Netter')]);
    assert.deepEqual(authors('jsonfeed-10.json'), ['Guest Rower', 'Morgan Keel']);
  });

  it('takes the cover from media, enclosures, itunes:image and JSON Feed images, and only an http(s) URL', () => {
    const covers = (name: string) => own(name).entries.map((entry) => entry.cover);
    assert.deepEqual(covers('media-rss-articles.xml'), [
      'https://living.example.com/coast/images/shed-lead.jpg', // media:content image, before the video's thumbnail
      'https://living.example.com/coast/images/hut-1.jpg', // media:group
      'https://living.example.com/coast/images/lifeboat.jpg', // a video's media:thumbnail
      'https://living.example.com/coast/images/sea-glass.jpg', // after a data: and a javascript: URL
    ]);
    assert.equal(own('atom10-feed.xml').entries[0]!.cover, 'https://journal.example.org/images/marsh.jpg'); // link rel="enclosure"
    assert.equal(own('atom10-media-takedown.xml').entries[0]!.cover, 'https://news.example.net/articles/4821/lead.jpg');
    assert.deepEqual(covers('podcast-itunes.xml').slice(1, 4), [
      undefined,
      'https://podcast.example.com/cliff-paths/s02e03.jpg',
      'https://podcast.example.com/cliff-paths/s02e02.jpg',
    ]);
    assert.deepEqual(covers('jsonfeed-11.json'), [
      'https://netloft.example.com/2024/03/sheet-bend-lead.jpg',
      undefined,
      undefined,
      'https://netloft.example.com/2024/02/floats.png',
      undefined,
    ]);
    assert.deepEqual(covers('jsonfeed-10.json'), [
      'https://slipway.example.net/images/launch.jpg',
      'https://slipway.example.net/images/varnish-banner.jpg',
    ]);
    assert.equal(own('rss092-notes.xml').entries[5]!.cover, 'http://notebook.example.org/images/gull.gif'); // the content's first image
  });

  it('keeps text constructs as text, reads escaped and base64 content, and titles from Dublin Core and media:title', () => {
    const atom = own('atom10-feed.xml');
    assert.equal(atom.entries[1]!.title, 'Mudflats & their birds');
    assert.equal(atom.entries[2]!.title, 'Why <b> is not bold here');
    assert.equal(atom.entries[2]!.html, 'In a text construct, &lt;b&gt; is two characters and a letter.<br />A second line.');
    assert.equal(atom.entries[3]!.html, 'Its content is out of line; here is its summary.');
    assert.equal(own('jsonfeed-11.json').entries[1]!.html, 'A note in plain text, no title.<br />Its &lt;b&gt; is two characters and a letter.');
    assert.equal(own('rss20-channel.xml').entries[4]!.title, 'Storm warning & closures');
    const almanac = own('atom03.xml');
    assert.equal(almanac.title, 'The Fishing Almanac');
    assert.equal(almanac.description, 'Tides, moons and fish');
    assert.equal(almanac.entries[1]!.title, 'Mackerel & moon phases');
    assert.equal(almanac.entries[2]!.html, '<p>Encoded <b>note</b> from the almanac.</p>');
    assert.equal(own('rss20-dublin-core.xml').entries[2]!.title, 'A title from Dublin Core');
    assert.equal(own('rss10-rdf-modules.xml').entries[2]!.title, 'A title in Dublin Core only');
    assert.equal(own('rss10-rdf-modules.xml').entries[0]!.summary, 'The ship was refloated on the evening tide; no cargo was lost.');
    assert.equal(own('media-rss-articles.xml').entries[2]!.title, 'Video: the lifeboat launch');
    assert.equal(own('atom10-media-takedown.xml').title, 'Estuary News');
  });
});
