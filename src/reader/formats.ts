import type { AnyFeed, AtomFeed, JsonFeed, MediaNs, RdfFeed, RssFeed } from 'feedsmith';
import { childBase, looksLikeImageUrl } from './urls.js';

// One reading of feedsmith's four result shapes: the fields Masthead imports, not yet cleaned or resolved.

/** A text construct: `html` is markup, `text` is literal text. */
export interface RawText {
  value: string;
  kind: 'html' | 'text';
}

export interface RawEntry {
  guid?: string;
  /** False when an RSS guid says isPermaLink="false". */
  guidIsLink: boolean;
  link?: string;
  title?: RawText;
  summary?: RawText;
  content?: RawText;
  /** The base for relative URLs in summary and content (xml:base chain; undefined when none is declared). */
  base?: string;
  author?: string;
  published?: string;
  updated?: string;
  /** Cover candidates, best first (media, enclosures, feed-specific images). */
  images: string[];
}

export interface RawFeed {
  format: AnyFeed['format'];
  title?: RawText;
  description?: RawText;
  link?: string;
  image?: string;
  ttlMinutes?: number;
  base?: string;
  entries: RawEntry[];
}

function html(value: string | undefined): RawText | undefined {
  return value ? { value, kind: 'html' } : undefined;
}

function first<T>(values: readonly T[] | undefined): T | undefined {
  return values?.find((value) => value !== undefined && value !== null && value !== '');
}

// --- media RSS and enclosures -------------------------------------------------------------------------------

function isImage(type: string | undefined, medium: string | undefined, url: string): boolean {
  if (medium) return medium === 'image';
  if (type) return type.toLowerCase().startsWith('image/');
  return looksLikeImageUrl(url);
}

function mediaContentImages(contents: readonly MediaNs.Content[] | undefined): string[] {
  const images: string[] = [];
  for (const content of contents ?? []) {
    if (content.url && isImage(content.type, content.medium, content.url)) images.push(content.url);
    for (const thumbnail of content.thumbnails ?? []) if (thumbnail.url) images.push(thumbnail.url);
  }
  return images;
}

/** Images of media RSS: media:content that is an image, then thumbnails, also inside media:group. */
export function mediaImages(media: MediaNs.ItemOrFeed | undefined): string[] {
  if (!media) return [];
  const groups = media.groups ?? [];
  return [
    ...mediaContentImages(media.contents),
    ...groups.flatMap((group) => mediaContentImages(group.contents)),
    ...(media.thumbnails ?? []).map((thumbnail) => thumbnail.url),
    ...groups.flatMap((group) => (group.thumbnails ?? []).map((thumbnail) => thumbnail.url)),
  ].filter((url): url is string => Boolean(url));
}

function enclosureImages(enclosures: readonly { url?: string; type?: string }[] | undefined): string[] {
  return (enclosures ?? [])
    .filter((enclosure) => enclosure.url && isImage(enclosure.type, undefined, enclosure.url))
    .map((enclosure) => enclosure.url!);
}

// --- RSS 0.9x / 2.0 ------------------------------------------------------------------------------------------

function rssAuthor(item: RssFeed.Item<string>): string | undefined {
  const person = first(item.authors);
  return person?.name ?? person?.email ?? first(item.dc?.creators) ?? item.itunes?.author;
}

/** The channel's author, for items that name none: managingEditor, dc:creator, itunes:author or atom:author. */
function rssFeedAuthor(feed: RssFeed.Feed<string>): string | undefined {
  const editor = feed.managingEditor;
  const atomAuthor = first(feed.atom?.authors);
  return editor?.name ?? editor?.email ?? first(feed.dc?.creators) ?? feed.itunes?.author ?? atomAuthor?.name ?? atomAuthor?.email;
}

function fromRss(feed: RssFeed.Feed<string>, feedBase: string | undefined): RawFeed {
  const base = childBase(feedBase, feed.xml?.base);
  const feedAuthor = rssFeedAuthor(feed);
  return {
    format: 'rss',
    title: html(feed.title ?? first(feed.dc?.titles)),
    description: html(feed.description ?? first(feed.dc?.descriptions)),
    link: feed.link ?? first(feed.atom?.links?.filter((link) => !link.rel || link.rel === 'alternate'))?.href,
    image: feed.image?.url ?? feed.itunes?.image ?? first(mediaImages(feed.media)),
    ttlMinutes: feed.ttl,
    base,
    entries: (feed.items ?? []).map((item) => {
      const itemBase = childBase(base, item.xml?.base);
      return {
        guid: item.guid?.value,
        guidIsLink: item.guid?.isPermaLink !== false,
        link: item.link ?? first(item.atom?.links?.filter((link) => !link.rel || link.rel === 'alternate'))?.href,
        title: html(item.title ?? first(item.dc?.titles) ?? item.media?.title?.value),
        summary: html(item.description ?? first(item.dc?.descriptions) ?? item.itunes?.summary),
        content: html(item.content?.encoded),
        base: itemBase,
        author: rssAuthor(item) ?? feedAuthor,
        published: item.pubDate ?? first(item.dc?.dates) ?? first(item.dcterms?.issued) ?? first(item.dcterms?.created),
        updated: first(item.dcterms?.modified) ?? item.atom?.updated,
        images: [...mediaImages(item.media), ...enclosureImages(item.enclosures), ...(item.itunes?.image ? [item.itunes.image] : [])],
      };
    }),
  };
}

// --- RSS 1.0 (RDF) -------------------------------------------------------------------------------------------

function fromRdf(feed: RdfFeed.Feed<string>, feedBase: string | undefined): RawFeed {
  const base = childBase(feedBase, feed.xml?.base);
  const feedAuthor = first(feed.dc?.creators);
  return {
    format: 'rdf',
    title: html(feed.title ?? first(feed.dc?.titles)),
    description: html(feed.description ?? first(feed.dc?.descriptions)),
    link: feed.link,
    image: feed.image?.url,
    base,
    entries: (feed.items ?? []).map((item) => ({
      guid: item.rdf?.about,
      guidIsLink: true,
      link: item.link,
      title: html(item.title ?? first(item.dc?.titles)),
      summary: html(item.description ?? first(item.dc?.descriptions)),
      content: html(item.content?.encoded),
      base: childBase(base, item.xml?.base),
      author: first(item.dc?.creators) ?? feedAuthor,
      published: first(item.dc?.dates) ?? first(item.dcterms?.issued) ?? first(item.dcterms?.created),
      updated: first(item.dcterms?.modified),
      images: mediaImages(item.media),
    })),
  };
}

// --- Atom 0.3 / 1.0 ------------------------------------------------------------------------------------------

/**
 * Atom 1.0 (RFC 4287 4.1.3.3): content of a MIME type that is neither text/* nor XML is base64. Such content is
 * opaque data, imported as text.
 */
function base64Content(type: string, value: string): string | undefined {
  if (!type.includes('/') || type.startsWith('text/') || /[+/]xml$/.test(type)) return undefined;
  const compact = value.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(compact)) return undefined;
  return Buffer.from(compact, 'base64').toString('utf8');
}

function atomText(text: { value?: string; type?: string } | undefined): RawText | undefined {
  if (!text?.value) return undefined;
  const type = (text.type ?? 'text').toLowerCase();
  const decoded = base64Content(type, text.value);
  if (decoded !== undefined) return { value: decoded, kind: 'text' };
  // Atom 1.0: text | html | xhtml; Atom 0.3: a MIME type (text/plain, text/html, application/xhtml+xml).
  const kind = type === 'text' || type === 'text/plain' ? 'text' : 'html';
  return { value: text.value, kind };
}

function alternateLink(links: readonly AtomFeed.Link<string>[] | undefined): string | undefined {
  const alternates = (links ?? []).filter((link) => link.href && (!link.rel || link.rel === 'alternate'));
  return (alternates.find((link) => !link.type || /html/i.test(link.type)) ?? alternates[0])?.href;
}

function fromAtom(feed: AtomFeed.Feed<string>, feedBase: string | undefined): RawFeed {
  const base = childBase(feedBase, feed.xml?.base);
  return {
    format: 'atom',
    title: atomText(feed.title),
    description: atomText(feed.subtitle),
    link: alternateLink(feed.links),
    image: feed.logo ?? feed.icon ?? first(mediaImages(feed.media)),
    base,
    entries: (feed.entries ?? []).map((entry) => {
      const entryBase = childBase(base, entry.xml?.base);
      const author = first(entry.authors) ?? first(feed.authors);
      return {
        guid: entry.id,
        guidIsLink: false,
        link: alternateLink(entry.links),
        title: atomText(entry.title),
        summary: atomText(entry.summary),
        content: entry.content?.src ? undefined : atomText(entry.content),
        base: childBase(entryBase, entry.content?.xml?.base ?? entry.summary?.xml?.base),
        author: author?.name ?? author?.email,
        published: entry.published ?? first(entry.dc?.dates) ?? first(entry.dcterms?.issued),
        updated: entry.updated ?? first(entry.dcterms?.modified),
        images: [
          ...mediaImages(entry.media),
          ...enclosureImages((entry.links ?? []).filter((link) => link.rel === 'enclosure').map((link) => ({ url: link.href, type: link.type }))),
        ],
      };
    }),
  };
}

// --- JSON Feed 1.0 / 1.1 -------------------------------------------------------------------------------------

type JsonItem = JsonFeed.Item<string> & { author?: JsonFeed.Author };

function fromJson(feed: JsonFeed.Feed<string> & { author?: JsonFeed.Author }): RawFeed {
  return {
    format: 'json',
    title: feed.title ? { value: feed.title, kind: 'text' } : undefined,
    description: feed.description ? { value: feed.description, kind: 'text' } : undefined,
    link: feed.home_page_url,
    image: feed.icon ?? feed.favicon,
    entries: ((feed.items ?? []) as JsonItem[]).map((item) => ({
      guid: item.id === undefined || item.id === null ? undefined : String(item.id),
      guidIsLink: false,
      link: item.url ?? item.external_url,
      title: item.title ? { value: item.title, kind: 'text' } : undefined,
      summary: item.summary ? { value: item.summary, kind: 'text' } : undefined,
      content: item.content_html
        ? { value: item.content_html, kind: 'html' }
        : item.content_text
          ? { value: item.content_text, kind: 'text' }
          : undefined,
      author: (first(item.authors) ?? item.author ?? first(feed.authors) ?? feed.author)?.name,
      published: item.date_published,
      updated: item.date_modified,
      images: [
        ...(item.image ? [item.image] : []),
        ...(item.banner_image ? [item.banner_image] : []),
        ...enclosureImages((item.attachments ?? []).map((attachment) => ({ url: attachment.url, type: attachment.mime_type }))),
      ],
    })),
  };
}

/** feedsmith's result as a RawFeed; `feedUrl` is the base of everything relative. */
export function toRawFeed(parsed: AnyFeed, feedUrl: string | undefined): RawFeed {
  switch (parsed.format) {
    case 'rss':
      return fromRss(parsed.feed, feedUrl);
    case 'rdf':
      return fromRdf(parsed.feed, feedUrl);
    case 'atom':
      return fromAtom(parsed.feed, feedUrl);
    case 'json':
      return fromJson(parsed.feed);
  }
}
