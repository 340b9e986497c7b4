import { load } from 'cheerio/slim';
import type { CheerioAPI } from 'cheerio/slim';
import { firstString, imageUrls, readJsonLd, stringList } from './jsonld.js';
import type { JsonObject } from './jsonld.js';
import { normalizeKeywords, salientWords } from './keywords.js';
import { companyLabel, domainMatchScore, nameFromTitle, registrableDomain, titleParts } from './name.js';
import {
  copyrightHolders,
  nameFromEvidence,
  isBareDomainLabel,
  loneTitleName,
  nameFromTitleWithEvidence,
  phraseKey,
  shortNameTheTitleUses,
} from './company-name.js';
import type { NameEvidence } from './company-name.js';
import { classifySocialUrl, pickSocialLinks } from './social.js';
import type { SocialLink } from './social.js';
import { truncate } from '../../content/text.js';
import { cleanOrNull, cleanText, matchKey, wordCount } from './clean-text.js';
import type { ExtractedCompany, ExtractOptions, NameSource } from './types.js';
export type { ExtractedCompany, ExtractOptions, NameSource } from './types.js';
import { MAX_DESCRIPTION_LENGTH, MAX_NAME_LENGTH, MAX_PRODUCT_DESCRIPTION_LENGTH } from './types.js';

// Company facts from one HTML page. Pure: no I/O, the same output for the same input.

const MAX_HTML_LENGTH = 5_000_000;
const MAX_ANCHORS = 5000;
const MAX_URL_LENGTH = 2048;
const MAX_HEADINGS = 6;
const MAX_PARAGRAPHS = 4;
const MAX_PIECE_LENGTH = 600;

const BOILERPLATE_ELEMENTS = [
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'iframe',
  'object',
  'embed',
  'canvas',
  'select',
  'button',
  'input',
  'textarea',
  'nav',
  'footer',
  'aside',
  'form',
  'dialog',
  'menu',
  '[role=navigation]',
  '[role=contentinfo]',
  '[role=dialog]',
  '[role=alertdialog]',
  '[role=search]',
  '[aria-hidden=true]',
  '[hidden]',
  '[style*="display:none"]',
  '[style*="display: none"]',
  '[style*="visibility:hidden"]',
  '[style*="visibility: hidden"]',
].join(', ');
const BOILERPLATE_NAMES =
  /cookie|consent|gdpr|onetrust|didomi|usercentrics|cookiebot|\bcmp\b|cc-window|newsletter|popup|modal|breadcrumb|skip-?link|sr-only|visually-hidden|screen-reader|share|social/i;
const BOILERPLATE_TEXT = /©|\bcopyright\b|all rights reserved|\bcookies?\b|javascript/i;
const GENERIC_HEADINGS = new RegExp(
  '^(?:menu|main menu|navigation|search|contact|contact us|kontakt|newsletter|follow us|subscribe|share|login|' +
    'log in|sign in|sign up|about|about us|über uns|ueber uns|a propos|à propos|qui sommes-nous|sobre nosotros|' +
    'chi siamo|over ons|our story|products|produkte|produits|services|leistungen|news|blog|latest news|aktuelles|' +
    'actualités|faq|cart|warenkorb|panier)$',
  'iu',
);

const ABOUT_SEGMENT =
  /^(?:about|about-?us|about_us|company|company-profile|corporate|who-we-are|our-story|our-company|ueber-uns|uber-uns|über-uns|unternehmen|wir|a-propos|apropos|qui-sommes-nous|sobre|sobre-nosotros|quienes-somos|quem-somos|chi-siamo|azienda|over-ons|om-oss|om-os|o-nas|o-kompanii|kaisha|会社概要|회사소개)$/iu;
const PRODUCT_SEGMENT =
  /^(?:products?|solutions?|services?|what-we-do|platform|features|produkte|produkt|leistungen|loesungen|lösungen|angebot|produits|nos-produits|productos|produtos|prodotti|producten|diensten|продукты|услуги|製品|サービス|제품)$/iu;
const ABOUT_TEXT =
  /^(?:about|about us|über uns|ueber uns|unternehmen|à propos|a propos|qui sommes-nous|sobre nosotros|quiénes somos|chi siamo|over ons|our story|who we are|company|会社概要|о компании)$/iu;
const PRODUCT_TEXT =
  /^(?:products?|solutions?|services?|what we do|platform|produkte|leistungen|lösungen|produits|productos|prodotti|producten|продукты|услуги|製品|サービス)$/iu;

/** Meta tags by lower-cased name or property, in document order. */
function metaIndex($: CheerioAPI): Map<string, string[]> {
  const index = new Map<string, string[]>();
  $('meta').each((_, el) => {
    const node = $(el);
    const content = node.attr('content');
    if (content === undefined) return;
    for (const key of [node.attr('name'), node.attr('property'), node.attr('itemprop'), node.attr('http-equiv')]) {
      if (!key) continue;
      const name = key.trim().toLowerCase();
      const list = index.get(name) ?? [];
      list.push(content);
      index.set(name, list);
    }
  });
  return index;
}

/** An absolute http(s) URL, or undefined; data:, javascript: and the like never pass. */
export function absoluteHttpUrl(href: string | undefined, base: URL): string | undefined {
  if (!href) return undefined;
  const trimmed = href.trim();
  if (trimmed === '' || trimmed.length > MAX_URL_LENGTH) return undefined;
  try {
    const url = new URL(trimmed, base);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    if (url.username || url.password || url.href.length > MAX_URL_LENGTH) return undefined;
    return url.href;
  } catch {
    return undefined;
  }
}

function documentBase($: CheerioAPI, page: URL): URL {
  const href = $('base[href]').first().attr('href');
  const resolved = absoluteHttpUrl(href, page);
  return resolved ? new URL(resolved) : page;
}

/** The primary language subtag of a BCP 47 tag or locale ("de-DE", "pt_BR", "en, de"), or null. */
export function primaryLanguage(tag: string | undefined): string | null {
  const primary = (tag ?? '')
    .trim()
    .split(/[-_,;\s]/)[0]!
    .toLowerCase();
  return /^[a-z]{2,3}$/.test(primary) ? primary : null;
}

function iconSize(sizes: string | undefined): number {
  if (!sizes) return 0;
  if (/\bany\b/i.test(sizes)) return 1024;
  let largest = 0;
  for (const match of sizes.matchAll(/(\d{1,4})\s*x\s*(\d{1,4})/gi)) largest = Math.max(largest, Number(match[1]));
  return largest;
}

function iconUrls($: CheerioAPI, base: URL): { touch: string[]; icons: string[] } {
  const touch: Array<{ url: string; size: number }> = [];
  const icons: Array<{ url: string; size: number }> = [];
  $('link[rel][href]').each((_, el) => {
    const node = $(el);
    const rel = (node.attr('rel') ?? '').toLowerCase().split(/\s+/);
    const url = absoluteHttpUrl(node.attr('href'), base);
    if (!url) return;
    const size = iconSize(node.attr('sizes'));
    if (rel.includes('apple-touch-icon') || rel.includes('apple-touch-icon-precomposed')) touch.push({ url, size });
    else if (rel.includes('icon')) icons.push({ url, size });
  });
  const bySize = (list: Array<{ url: string; size: number }>) =>
    list
      .map((item, order) => ({ ...item, order }))
      .sort((a, b) => b.size - a.size || a.order - b.order)
      .map((item) => item.url);
  return { touch: bySize(touch), icons: bySize(icons) };
}

function sameSite(candidate: URL, page: URL): boolean {
  const bare = (host: string) => host.toLowerCase().replace(/^www\./, '');
  return bare(candidate.hostname) === bare(page.hostname) && candidate.port === page.port;
}

function lastSegment(url: URL): string {
  const segments = url.pathname.split('/').filter(Boolean);
  const last = segments[segments.length - 1] ?? '';
  let decoded = last;
  try {
    decoded = decodeURIComponent(last);
  } catch {
    // keep it encoded
  }
  return decoded.replace(/\.(?:html?|php|aspx?|jsp)$/i, '');
}

function samePage(a: URL, b: URL): boolean {
  const strip = (u: URL) => `${u.hostname.replace(/^www\./, '')}:${u.port}${u.pathname.replace(/\/+$/, '')}${u.search}`;
  return strip(a) === strip(b);
}

/** Pieces of text a reader sees first: h1/h2 headings and lead paragraphs, without navigation and banners. */
function leadText($: CheerioAPI, name: string | null): string | null {
  $(BOILERPLATE_ELEMENTS).remove();
  $('[id], [class]')
    .filter((_, el) => {
      const tag = el.tagName.toLowerCase();
      if (tag === 'html' || tag === 'body' || tag === 'main') return false;
      const node = $(el);
      return BOILERPLATE_NAMES.test(`${node.attr('id') ?? ''} ${node.attr('class') ?? ''}`);
    })
    .remove();

  const main = $('main, [role=main]').first();
  const blocks = main.length > 0 ? main.find('h1, h2, p') : $('h1, h2, p');
  const nameKey = name ? matchKey(name) : '';
  const seen = new Set<string>();
  const pieces: string[] = [];
  let headings = 0;
  let paragraphs = 0;
  blocks.each((_, el) => {
    if (headings >= MAX_HEADINGS && paragraphs >= MAX_PARAGRAPHS) return false;
    const node = $(el);
    const text = cleanText(node.text(), MAX_PIECE_LENGTH);
    const key = matchKey(text);
    if (key === '' || seen.has(key)) return undefined;
    const isHeading = el.tagName.toLowerCase() !== 'p';
    if (isHeading) {
      if (headings >= MAX_HEADINGS || text.length < 3 || key === nameKey || GENERIC_HEADINGS.test(text)) return undefined;
      headings++;
    } else {
      const minimum = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(text) ? 15 : 40;
      if (paragraphs >= MAX_PARAGRAPHS || text.length < minimum || BOILERPLATE_TEXT.test(text)) return undefined;
      const linkText = node
        .find('a')
        .toArray()
        .reduce((total, a) => total + $(a).text().trim().length, 0);
      if (linkText > text.length / 2) return undefined;
      paragraphs++;
    }
    seen.add(key);
    pieces.push(text);
    return undefined;
  });
  return joinPieces(pieces, MAX_PRODUCT_DESCRIPTION_LENGTH);
}

/** Sentences from pieces: a full stop after a piece that has no closing punctuation (a heading). */
export function joinPieces(pieces: string[], max: number): string | null {
  const sentences = pieces
    .map((piece) => piece.trim())
    .filter(Boolean)
    .map((piece) => {
      if (/[.!?。！？:;…)"”»]$/u.test(piece)) return piece;
      return /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]$/u.test(piece) ? `${piece}。` : `${piece}.`;
    });
  if (sentences.length === 0) return null;
  return truncate(sentences.join(' '), max);
}

const LOGO_HINT = /logo|brand/i;
/** The word "logo" in a logo's text, or the image's file name as its text: "Acme Logo", "aace_logo", "logo-acme.png". */
const LOGO_WORD = /(?:^|[\s_-])logo(?=[\s_.-]|$)|\.(?:png|jpe?g|gif|svg|webp)$/giu;

function withoutLogoWord(text: string): string {
  return text.replace(LOGO_WORD, ' ').replace(/^[\s_-]+|[\s_-]+$/gu, '');
}
const MAX_EVIDENCE_TEXT = 200_000;
const MAX_LOGO_TEXTS = 150;
const MAX_SELF_NAME_WORDS = 10;

/**
 * The site name in a feed link's title: "Acme, Inc. » Feed" → "Acme, Inc.", "Acme » Home Comments Feed" → "Acme",
 * "Acme RSS Feed" → "Acme"; a title that is not a feed's name gives "".
 */
export function feedSiteName(title: string): string {
  const text = title.replace(/\s+/g, ' ').trim();
  const separated = /^(.+?)\s+[»|–—-]\s+.*\bfeed$/iu.exec(text);
  if (separated) return separated[1]!.trim();
  const suffixed = /^(.+?)\s+(?:rss|atom)?\s*(?:comments\s+)?feed$/iu.exec(text);
  return suffixed ? suffixed[1]!.trim() : '';
}

/** The page's own addresses, as its `og:url` and canonical link give them (absolute http(s) URLs). */
function ownAddresses($: CheerioAPI, ogUrl: string | undefined, page: URL): URL[] {
  return [ogUrl, $('link[rel~=canonical]').first().attr('href')]
    .map((href) => absoluteHttpUrl(href, page))
    .filter((url): url is string => url !== undefined)
    .map((url) => new URL(url));
}

/** The registrable domain of the page's own address (og:url, canonical link) when it is another site's. */
function ownAddressOnOtherSite($: CheerioAPI, metaValue: (...names: string[]) => string | undefined, page: URL, domain: string): string | undefined {
  const ours = [registrableDomain(domain), registrableDomain(page.hostname)];
  return ownAddresses($, metaValue('og:url'), page)
    .map((url) => registrableDomain(url.hostname))
    .find((site) => !ours.includes(site));
}

/** The parts of a parsed node read for its text (the parser's nodes, typed here only as far as they are read). */
interface TextTreeNode {
  type: string;
  name?: string;
  data?: string;
  children?: TextTreeNode[];
}

const BLOCK_ELEMENTS = new Set([
  ...['address', 'article', 'aside', 'blockquote', 'br', 'dd', 'div', 'dl', 'dt', 'figcaption', 'figure', 'footer'],
  ...['form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section'],
  ...['table', 'td', 'th', 'tr', 'ul'],
]);

/**
 * A node's text with a line break around every block element, as a browser lays it out: "<p>© Acme</p><div>Terms</div>"
 * is "© Acme" and "Terms" on two lines, where the DOM's plain text joins them into "© AcmeTerms". Iterative, so a
 * hostile page's deep nesting costs no stack, and it stops at `max` characters.
 */
function blockText(root: TextTreeNode | undefined, max: number): string {
  let text = '';
  const pending: Array<TextTreeNode | '\n'> = root ? [root] : [];
  while (pending.length > 0 && text.length < max) {
    const node = pending.pop()!;
    if (node === '\n') text += '\n';
    else if (node.type === 'text') text += node.data ?? '';
    else {
      const block = node.type === 'tag' && BLOCK_ELEMENTS.has(node.name ?? '');
      if (block) {
        text += '\n';
        pending.push('\n');
      }
      for (let i = (node.children?.length ?? 0) - 1; i >= 0; i--) pending.push(node.children![i]!);
    }
  }
  return text.slice(0, max);
}

/**
 * Browsers' parsers stop nesting elements a few hundred levels down (Chromium at 512), so no real page is deeper; a
 * deeper one is hostile, and every selector run on it would cost time in proportion to its depth.
 */
const MAX_NESTING = 512;

function nestsDeeperThan(root: TextTreeNode | undefined, max: number): boolean {
  const pending: Array<[TextTreeNode, number]> = root ? [[root, 0]] : [];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    if (depth > max) return true;
    for (const child of node.children ?? []) pending.push([child, depth + 1]);
  }
  return false;
}

/** The body's text less the lines that only repeat the title (a theme's hidden h1, a banner copying it). */
function bodyWithoutTitleLines(bodyText: string, title: string): string {
  const titleKey = matchKey(title);
  return bodyText
    .split('\n')
    .filter((line) => matchKey(line) !== titleKey)
    .join('\n');
}

/** What the page says of its owner, for choosing and spelling the company name (see company-name.ts). */
function nameEvidence($: CheerioAPI, base: URL, metaValue: (...names: string[]) => string | undefined, title: string): NameEvidence {
  const clean = (value: string | undefined) => (value ? cleanText(value, MAX_NAME_LENGTH * 2) : '');
  const isHome = (href: string | undefined) => {
    const url = absoluteHttpUrl(href, base);
    return url !== undefined && /^\/(?:index\.\w+)?$/i.test(new URL(url).pathname);
  };
  const logoTexts: string[] = [];
  $('img').each((_, el) => {
    // A site's logo is among its first images that look like one; a page of thousands of them is hostile.
    if (logoTexts.length >= MAX_LOGO_TEXTS) return false;
    const node = $(el);
    const link = node.closest('a');
    const hint = `${node.attr('class') ?? ''} ${node.attr('id') ?? ''} ${node.attr('src') ?? ''} ${node.attr('alt') ?? ''}`;
    if (!LOGO_HINT.test(hint) && !(link.length > 0 && isHome(link.attr('href')))) return;
    logoTexts.push(withoutLogoWord(clean(node.attr('alt'))), withoutLogoWord(clean(node.attr('title'))), clean(link.attr('title')));
  });
  $('area[href], a[href][title]').each((_, el) => {
    const node = $(el);
    if (isHome(node.attr('href'))) logoTexts.push(clean(node.attr('title')), clean(node.attr('alt')));
  });
  // Names the page states about itself: an hCard's organization ("fn org", "organization-name", h-card "p-org") and
  // the site name in its feed links' titles ("Acme » Feed", "Acme » Comments Feed", "Acme RSS Feed").
  const selfNames: string[] = [];
  $('.organization-name, .org, .p-org')
    .slice(0, 5)
    .each((_, el) => {
      const text = clean($(el).text());
      if (text.split(/\s+/).length <= MAX_SELF_NAME_WORDS) selfNames.push(text);
    });
  $('link[rel~=alternate][title]')
    .filter((_, el) => /^application\/(?:rss|atom)\+xml$/i.test(($(el).attr('type') ?? '').trim()))
    .slice(0, 5)
    .each((_, el) => {
      selfNames.push(clean(feedSiteName($(el).attr('title') ?? '')));
    });

  $('script, style, noscript, template').remove();
  const textOf = (node: unknown) => blockText(node as TextTreeNode | undefined, MAX_EVIDENCE_TEXT);
  const bodyText = textOf($('body').get(0)).trim() || textOf($.root().get(0));
  const copyright = metaValue('copyright') ?? '';
  const author = clean(metaValue('author'));
  const holders = [
    ...copyrightHolders(copyright),
    ...(copyright && !/[©]|copyright|powered by/i.test(copyright) ? [clean(copyright)] : []),
    ...copyrightHolders(bodyText),
    author,
  ].filter((text) => text !== '');
  return {
    strong: [...holders, clean(metaValue('dc.title')), ...logoTexts, ...selfNames].filter((text) => text !== ''),
    holders,
    // A description that only repeats the title ("Callows Audio") backs no reading of it.
    descriptions: [metaValue('description'), metaValue('og:description'), metaValue('twitter:description')]
      .map(clean)
      .filter((text) => text !== '' && matchKey(text) !== matchKey(title)),
    // A heading that is only the title again (a theme's hidden h1) backs no reading of it either.
    headings: $('h1')
      .slice(0, 5)
      .map((_, el) => clean($(el).text()))
      .get()
      .filter((text) => text !== '' && matchKey(text) !== matchKey(title)),
    text: [metaValue('og:title'), metaValue('twitter:title'), bodyText].filter(Boolean).join('\n'),
    // The page's own text must use a longer form to back it; a copy of the title does not.
    body: bodyWithoutTitleLines(bodyText, title),
    links: $('a[href]')
      .slice(0, MAX_ANCHORS)
      .map((_, el) => $(el).attr('href') ?? '')
      .get(),
  };
}

/**
 * Whether the page is a dated article rather than a page about the company: a top-level JSON-LD Article (or
 * NewsArticle, BlogPosting...), an article:published_time, a permalink with a date in its path (/2015/06/08/), or
 * og:type "article" on a page whose own URL is not its site's root (themes tag home pages "article" too).
 */
function isDatedArticle($: CheerioAPI, meta: Map<string, string[]>, jsonLdArticle: boolean, page: URL): boolean {
  if (jsonLdArticle) return true;
  const first = (key: string) =>
    meta
      .get(key)
      ?.find((value) => value.trim() !== '')
      ?.trim();
  // The page's own addresses (og:url, canonical): many home pages carry an article's tags by a theme's or an SEO
  // plugin's default (og:type "article", an article:published_time); a page whose own address is the site's root,
  // a language's root ("/de") or a section's index ("/news/index") is not taken for an article by them.
  const addresses = ownAddresses($, first('og:url'), page).map((url) => url.pathname);
  const atHome = addresses.some((path) => HOME_PATH.test(path) || (INDEX_PATH.test(path) && !DATED_PATH.test(path)));
  if (first('article:published_time') || first('og:article:published_time')) return !atHome;
  const path = addresses[0];
  if (path === undefined) return false;
  if (DATED_PATH.test(path)) return true;
  if (INDEX_PATH.test(path)) return false;
  if (ARTICLE_PATH.test(path) || HEADLINE_SLUG.test(path)) return true;
  return (first('og:type') ?? '').toLowerCase() === 'article' && !atHome;
}

/** A news or blog address with something after its section: "/news/…", "/articles/…", "/post/…", "/press-releases/…". */
const ARTICLE_PATH = /\/(?:news|articles?|story|stories|posts?|blog|press(?:-releases?)?)\/[^/?#]+/i;
/** A headline written into the address: six words or more joined by hyphens or underscores ("/eight-changes-id-like-to-see"). */
const HEADLINE_SLUG = /\/(?:[^/?#\s_-]+[-_]){5,}[^/?#\s_-]+[^/]*\/?$/;
const HOME_PATH = /^\/(?:index\.\w+|[a-z]{2}(?:[-_][a-z]{2})?\/?)?$/i;
/** A permalink with a date in it: "/2013/07/18/…". */
const DATED_PATH = /\/(?:19|20)\d{2}\/(?:0?[1-9]|1[0-2])\//;
/** A section's index page: a listing of articles, not one ("/news/index", "/blog/index.html"). */
const INDEX_PATH = /\/(?:index|default)(?:\.\w+)?$/i;

/**
 * Whether a description says something: not a template's unfilled placeholder ("$metaDescriptionE", "{{ desc }}")
 * and not only the page's title or a part of it again ("Latest News" as title and description, "Build software
 * better, together." for "GitHub · Build software better, together.", "Home at Picturehouse Cinemas" for
 * "Home | Picturehouse Cinemas").
 */
function describes(description: string, title: string, domain: string): boolean {
  if (/^[$%][\w.]+$|\{\{|\}\}|^\[[\w\s]+\]$/.test(description) || PLACEHOLDER_DESCRIPTION.test(description.trim())) return false;
  // A shop template's fields left empty around a page label (" : Contact Us - ") describe nothing.
  if (/^[:|–—-]|\s[:|–—-]$/u.test(description.trim())) return false;
  const whole = cleanText(title, MAX_DESCRIPTION_LENGTH);
  if (matchKey(description) === matchKey(whole)) return false;
  const parts = new Set(titleParts(whole).map(matchKey));
  // "Shisler's Cheese House | Swiss Cheese | Trail Bologna | …" under the title "Shislers Cheese House: Swiss Cheese| …".
  const phrases = description.split(KEYWORD_LIST_SEPARATOR).map(matchKey);
  if (phrases.length >= 3 && phrases.filter((phrase) => parts.has(phrase)).length * 2 >= phrases.length) return false;
  // "♥ Olivia the Shop ♥ www.oliviatheshop.com ♥": the name and the address say nothing more.
  const words = description.split(/\s+/);
  const rest = words.filter(
    (word) =>
      word
        .toLowerCase()
        .replace(/^(?:https?:\/\/)?(?:www\.)?/, '')
        .replace(/\/$/, '') !== domain,
  );
  if (rest.length < words.length && [matchKey(whole), ''].includes(matchKey(rest.join(' ')))) return false;
  // A title's tagline said again is a slogan; a sentence the title also carries may still say what the company does.
  if (wordCount(description) <= MAX_TAGLINE_WORDS && parts.has(matchKey(description))) return false;
  const label = description.replace(PAGE_LABEL_PREFIX, '');
  if (label !== description && parts.has(matchKey(label))) return false;
  // "Home Page of Portable UPnP", "Welcome to Acme Widgets!", "Acme Widgets home page": which page this is and a name.
  const plain = description.trim().replace(/[.!]+$/u, '');
  const named = plain.replace(PAGE_LABEL_PREFIX, '').replace(SITE_NAME_HOME_PAGE, '');
  return named === plain || /[,;:.!?]/u.test(named) || wordCount(named) > MAX_TAGLINE_WORDS;
}

const MAX_TAGLINE_WORDS = 5;
/** A site name that says which page it is: og:site_name "BBC Homepage". */
const SITE_NAME_HOME_PAGE = /(?<=\S)\s+home\s?page$/iu;
/** What templates ship as the description: "tag line", "Shop powered by PrestaShop", "Just another WordPress site". */
const PLACEHOLDER_DESCRIPTION =
  /^(?:tag\s?line|(?:site|page|meta)\s+description|description|your\s+(?:site\s+)?description(?:\s+here)?|just another wordpress (?:site|blog)|(?:shop|boutique|tienda|negozio|loja|sklep)\s+(?:powered by|propulsée par|creada con|realizzat[oa] con|desenvolvida com)\s+prestashop)\.?$/iu;
/** Three or more short phrases joined by bars: the title's keyword list, when most of them are the title's parts. */
const KEYWORD_LIST_SEPARATOR = /\s*[|]\s*/;

/** "Home at …", "Home - …", "Welcome to …": a page's label before the site's name. */
const PAGE_LABEL_PREFIX = /^(?:home(?:\s*page)?\s*(?:at|of|[-|:–—])|welcome\s+to)\s+/iu;

function orgField(org: JsonObject | undefined, key: string): unknown {
  return org ? org[key] : undefined;
}

export function extractCompany(html: string, pageUrl: string, options: ExtractOptions = {}): ExtractedCompany {
  const page = new URL(pageUrl);
  const domain = (options.domain ?? page.hostname).toLowerCase();
  const $ = load(html.length > MAX_HTML_LENGTH ? html.slice(0, MAX_HTML_LENGTH) : html);
  if (nestsDeeperThan($.root().get(0) as TextTreeNode | undefined, MAX_NESTING)) {
    throw new Error(`the page nests its elements more than ${MAX_NESTING} deep`);
  }
  const base = documentBase($, page);
  const meta = metaIndex($);
  const metaValue = (...names: string[]): string | undefined => {
    for (const name of names) {
      const found = meta.get(name)?.find((value) => value.trim() !== '');
      if (found) return found;
    }
    return undefined;
  };

  const scripts = $('script')
    .filter((_, el) => /ld\+json/i.test($(el).attr('type') ?? ''))
    .map((_, el) => $(el).text())
    .get();
  const { organization: org, website, article: jsonLdArticle } = readJsonLd(scripts, domain);

  // Name: the first source that has one; metadata names may carry a tagline too ("Acme | Widgets").
  const title = $('title')
    .filter((_, el) => $(el).parents('svg').length === 0)
    .first()
    .text();
  const evidence = nameEvidence($, base, metaValue, title);
  const nameSources: Array<[NameSource, string | undefined]> = [
    ['json-ld', firstString(orgField(org, 'name')) ?? firstString(orgField(org, 'legalName'))],
    ['og:site_name', metaValue('og:site_name')],
    ['application-name', metaValue('application-name')],
    ['json-ld-website', firstString(website?.['name'])],
    ['title', title],
    ['title', metaValue('og:title')],
    ['title', metaValue('twitter:title')],
  ];
  const otherSite = ownAddressOnOtherSite($, metaValue, page, domain);
  let name: string | null = null;
  let nameSource: NameSource | undefined;
  for (const [source, value] of nameSources) {
    if (!value) continue;
    // Metadata copied with another site's template names that site (og:site_name "Backfeed", og:url backfeed.cc),
    // which the page's own title and text never name.
    if (
      source !== 'title' &&
      otherSite &&
      domainMatchScore(value, otherSite) > 0 &&
      domainMatchScore(value, domain) === 0 &&
      !phraseKey(`${title}\n${evidence.text}`).includes(phraseKey(value))
    ) {
      continue;
    }
    const plain = cleanText(value, MAX_NAME_LENGTH * 2);
    // A site name that only repeats the domain ("acmewidgets") is left for the page's own spelling of it.
    if (source !== 'json-ld' && isBareDomainLabel(plain, domain)) continue;
    const chosen =
      source === 'title'
        ? nameFromTitleWithEvidence(plain, domain, evidence)
        : shortNameTheTitleUses(
            source === 'json-ld' ? plain : (nameFromTitle(plain, domain) ?? plain).replace(SITE_NAME_HOME_PAGE, ''),
            title,
            domain,
          );
    const bounded = chosen ? cleanText(chosen, MAX_NAME_LENGTH) : '';
    if (bounded !== '') {
      name = bounded;
      nameSource = source;
      break;
    }
  }
  if (name === null) {
    const spelled = nameFromEvidence(domain, evidence);
    if (spelled) {
      name = cleanText(spelled, MAX_NAME_LENGTH);
      nameSource = 'page-text';
    }
  }
  if (name === null) {
    // Nothing backs the title, nothing spells the domain: a title that is one clean name beats the bare label.
    const lone = loneTitleName(cleanText(title, MAX_NAME_LENGTH * 2), domain);
    if (lone) {
      name = cleanText(lone, MAX_NAME_LENGTH);
      nameSource = 'title';
    }
  }

  const article = isDatedArticle($, meta, jsonLdArticle, page);
  // What the company does: what its Organization says of it, else the page's own description; never an article's.
  const description = article
    ? null
    : ([firstString(orgField(org, 'description')), metaValue('description'), metaValue('og:description')]
        .map((value) => cleanOrNull(value, MAX_DESCRIPTION_LENGTH))
        .find((value): value is string => value !== null && describes(value, title, domain)) ?? null);

  const logoImg = $('img')
    .filter((_, el) => {
      const node = $(el);
      return /logo/i.test(`${node.attr('class') ?? ''} ${node.attr('id') ?? ''} ${node.attr('alt') ?? ''} ${node.attr('src') ?? ''}`);
    })
    .first()
    .attr('src');
  const { touch, icons } = iconUrls($, base);
  const logoCandidates = [
    ...imageUrls(orgField(org, 'logo')),
    metaValue('og:image', 'og:image:url', 'og:image:secure_url'),
    logoImg,
    ...touch,
    ...icons,
  ];
  const logo = logoCandidates.map((candidate) => absoluteHttpUrl(candidate, base)).find(Boolean) ?? null;

  const language =
    primaryLanguage($('html').attr('lang') ?? $('html').attr('xml:lang')) ??
    primaryLanguage(options.contentLanguage) ??
    primaryLanguage(metaValue('content-language')) ??
    primaryLanguage(metaValue('og:locale'));

  // Social pages and related pages come from every anchor, navigation and footer included.
  const socialCandidates: SocialLink[] = [];
  const addSocial = (href: string | undefined) => {
    const link = href ? classifySocialUrl(href, base.href) : null;
    if (link) socialCandidates.push(link);
  };
  stringList(orgField(org, 'sameAs'), 30).forEach(addSocial);
  $('link[rel~=me][href], a[rel~=me][href]').each((_, el) => addSocial($(el).attr('href')));
  const about: string[] = [];
  const products: string[] = [];
  $('a[href]')
    .slice(0, MAX_ANCHORS)
    .each((_, el) => {
      const node = $(el);
      const href = node.attr('href');
      addSocial(href);
      const resolved = absoluteHttpUrl(href, base);
      if (!resolved) return;
      const url = new URL(resolved);
      url.hash = '';
      if (!sameSite(url, page) || samePage(url, page)) return;
      const segment = lastSegment(url);
      const text = node.text().trim();
      if (ABOUT_SEGMENT.test(segment) || ABOUT_TEXT.test(text)) about.push(url.href);
      else if (PRODUCT_SEGMENT.test(segment) || PRODUCT_TEXT.test(text)) products.push(url.href);
    });
  const links = pickSocialLinks(socialCandidates, [name ?? '', companyLabel(domain)]);
  const relatedPages = [...new Set([...about, ...products])].slice(0, 5);
  const aboutPages = relatedPages.filter((url) => about.includes(url));

  // An article's headline and first lines are news, not the company's products.
  const product_description = article ? null : leadText($, name);

  const declaredKeywords = normalizeKeywords([
    ...stringList(metaValue('keywords')),
    ...stringList(orgField(org, 'industry')),
    ...stringList(orgField(org, 'knowsAbout')),
    ...stringList(orgField(org, 'keywords')),
  ]);
  const industry =
    declaredKeywords.length > 0
      ? declaredKeywords
      : salientWords([description, product_description].filter(Boolean).join(' \n '), language, [name ?? '', companyLabel(domain)]);

  const result: ExtractedCompany = {
    description,
    product_description,
    industry,
    logo,
    links: { website: page.href, ...links },
    language,
    relatedPages,
    aboutPages,
    article,
  };
  if (name && nameSource) {
    result.name = name;
    result.nameSource = nameSource;
  }
  return result;
}
