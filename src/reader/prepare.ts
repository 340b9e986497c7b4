import { decodeHTMLStrict } from 'entities';
import { FeedParseError } from './errors.js';

// Text-level fixes made before the XML parser sees a feed: no DTD (so no entity expansion of any kind, internal
// or external), HTML's named entities turned into numeric references XML understands, and HTML pages told apart
// from feeds.

const PROLOG_ITEM = /^\s*(?:<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!DOCTYPE\b[^[>]*(?:\[[\s\S]*?\]\s*)?>)/i;

/** The items of the prolog (XML declaration, processing instructions, comments, DOCTYPE) and where it ends. */
function readProlog(text: string): { items: string[]; length: number } {
  const items: string[] = [];
  let length = 0;
  for (let match = PROLOG_ITEM.exec(text); match; match = PROLOG_ITEM.exec(text.slice(length))) {
    items.push(match[0]);
    length += match[0].length;
  }
  return { items, length };
}

/**
 * Removes the DOCTYPE (with its internal subset) from the prolog: no entity of any kind, internal (billion laughs)
 * or external (file:///etc/passwd), is ever declared. feedsmith's parser does not expand entities either
 * (processEntities: false); this holds whatever its options become.
 */
export function stripDoctype(xml: string): string {
  const { items, length } = readProlog(xml);
  if (!items.some((item) => /^\s*<!DOCTYPE/i.test(item))) return xml;
  return items.filter((item) => !/^\s*<!DOCTYPE/i.test(item)).join('') + xml.slice(length);
}

/** A closing tag cut short at the very end (`</rss`), as truncated feeds have, completed. */
export function completeLastTag(xml: string): string {
  // Only the end is looked at: the pattern anchored at $ would otherwise be tried at every closing tag.
  const tailStart = Math.max(0, xml.length - 512);
  const tail = xml.slice(tailStart);
  const completed = tail.replace(/(<\/[A-Za-z_][\w.:-]*)\s*$/, '$1>');
  return completed === tail ? xml : xml.slice(0, tailStart) + completed;
}

const CDATA_SECTION = /(<!\[CDATA\[[\s\S]*?\]\]>)/;

/**
 * A CDATA section holding `<!` (`<![CDATA[ <!DOCTYPE ]]>`) trips the parser's raw-text reading of feed fields; the
 * same text as escaped character data reads the same once decoded.
 */
function escapeMarkupDeclarations(cdata: string): string {
  const text = cdata.slice(9, -3);
  return text.includes('<!') ? escapeXmlText(text) : cdata;
}

/** A CDATA section, or a named reference: one pass over the text finds both. */
const CDATA_OR_NAMED_REFERENCE = /<!\[CDATA\[[\s\S]*?\]\]>|&([A-Za-z][A-Za-z0-9]{1,31});/g;

const XML_ENTITIES = new Set(['amp', 'lt', 'gt', 'quot', 'apos']);

/**
 * HTML's named references (`&nbsp;` → `&#160;`, `&NotEqualTilde;` → `&#8770;&#824;`: the HTML5 names, by the
 * `entities` package) as numeric references, outside CDATA sections; the five XML entities and unknown names stay as
 * they are.
 */
export function numericEntities(xml: string): string {
  if (!xml.includes('&') && !xml.includes('<![CDATA[')) return xml;
  return xml.replace(CDATA_OR_NAMED_REFERENCE, (whole, name: string | undefined) => {
    if (name === undefined) return escapeMarkupDeclarations(whole);
    if (XML_ENTITIES.has(name)) return whole;
    // Strict: the whole name, semicolon included, or nothing (`&notit;` is not `&not;` followed by "it;").
    const decoded = decodeHTMLStrict(whole);
    if (decoded === whole) return whole;
    return Array.from(decoded, (character) => `&#${character.codePointAt(0)};`).join('');
  });
}

/** The name of the document's first element, lower-cased (`rss`, `feed`, `rdf:rdf`, `html`), if any. */
export function rootElementName(text: string): string | undefined {
  const root = /^\s*<([A-Za-z_][\w.:-]*)/.exec(text.slice(readProlog(text).length));
  return root ? root[1]!.toLowerCase() : undefined;
}

/** True when the text is an HTML document rather than a feed. */
export function looksLikeHtml(text: string): boolean {
  const root = rootElementName(text);
  if (root === undefined) return /<!DOCTYPE\s+html\b/i.test(text.slice(0, 1024));
  return root === 'html' || root === 'head' || root === 'body';
}

/** Applies `replace` to the text outside CDATA sections only. */
function outsideCdata(xml: string, replace: (part: string) => string): string {
  return xml
    .split(CDATA_SECTION)
    .map((part, i) => (i % 2 === 1 ? part : replace(part)))
    .join('');
}

function escapeXmlText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const BASE64_ELEMENT = /<([A-Za-z_][\w.-]*(?::[\w.-]+)?)(\s[^>]*?)\bmode\s*=\s*(["'])base64\3([^>]*)>([^<]*)<\/\1\s*>/g;

/**
 * Atom 0.3's `mode="base64"` text constructs, decoded to `mode="escaped"` text: feedsmith reads the mode of none.
 * What the decoded text is (text or HTML) stays as the element's `type` says.
 */
export function decodeBase64Constructs(xml: string): string {
  if (!xml.includes('base64') || !/\bmode\s*=\s*["']base64["']/.test(xml)) return xml;
  return outsideCdata(xml, (part) =>
    part.replace(BASE64_ELEMENT, (whole, name: string, before: string, _quote: string, after: string, encoded: string) => {
      const compact = encoded.replace(/\s+/g, '');
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) return whole;
      const decoded = Buffer.from(compact, 'base64').toString('utf8');
      return `<${name}${before}mode="escaped"${after}>${escapeXmlText(decoded)}</${name}>`;
    }),
  );
}

const VOID_ELEMENTS = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr']);

/** XHTML's `<iframe ... />` as HTML's `<iframe ...></iframe>`: read as HTML, it would swallow the rest. */
function expandSelfClosing(xhtml: string): string {
  return xhtml.replace(/<([A-Za-z][\w:-]*)(\s[^<>]*?)?\s*\/>/g, (whole, name: string, attributes = '') =>
    VOID_ELEMENTS.has(name.toLowerCase()) ? whole : `<${name}${attributes}></${name}>`,
  );
}

const RSS_ITEM_BODY = /<((?:xhtml:)?body)\b([^>]*)>([\s\S]*?)<\/\1\s*>/gi;
const CONTENT_MODULE = 'http://purl.org/rss/1.0/modules/content/';

/**
 * An RSS item's XHTML body (`<xhtml:body>`, or `<body xmlns="http://www.w3.org/1999/xhtml">`) as the
 * content:encoded that feedsmith reads, as feedparser does. Only in RSS documents, and never inside CDATA (where
 * `<body>` is part of some HTML text).
 */
export function xhtmlBodyAsContent(xml: string): string {
  if (!/<(?:xhtml:)?body\b/i.test(xml) || rootElementName(xml) !== 'rss') return xml;
  return outsideCdata(xml, (part) =>
    part.replace(RSS_ITEM_BODY, (_whole, _name: string, _attributes: string, inner: string) => {
      const html = expandSelfClosing(inner.replace(/<(\/?)xhtml:/gi, '<$1')).replaceAll(']]>', ']]]]><![CDATA[>');
      return `<content:encoded xmlns:content="${CONTENT_MODULE}"><![CDATA[${html}]]></content:encoded>`;
    }),
  );
}

/** The XML text ready for feedsmith; throws not_a_feed for HTML pages. */
export function prepareXml(text: string): string {
  if (looksLikeHtml(text)) throw new FeedParseError('not_a_feed', 'the response is an HTML page, not a feed');
  return completeLastTag(numericEntities(xhtmlBodyAsContent(decodeBase64Constructs(stripDoctype(text)))));
}
