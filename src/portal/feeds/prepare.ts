import { FeedParseError } from './errors.js';
import { HTML_ENTITIES } from './html-entities.js';

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
  return xml.replace(/(<\/[A-Za-z_][\w.:-]*)\s*$/, '$1>');
}

const NAMED_REFERENCE = /&([A-Za-z][A-Za-z0-9]{1,31});/g;
const CDATA_SECTION = /(<!\[CDATA\[[\s\S]*?\]\]>)/;

/**
 * A CDATA section holding `<!` (`<![CDATA[ <!DOCTYPE ]]>`) trips the parser's raw-text reading of feed fields; the
 * same text as escaped character data reads the same once decoded.
 */
function escapeMarkupDeclarations(cdata: string): string {
  const text = cdata.slice(9, -3);
  if (!text.includes('<!')) return cdata;
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** `&nbsp;` → `&#160;` and so on, outside CDATA sections; the five XML entities and unknown names stay as they are. */
export function numericEntities(xml: string): string {
  if (!xml.includes('&') && !xml.includes('<![CDATA[')) return xml;
  return xml
    .split(CDATA_SECTION)
    .map((part, i) =>
      i % 2 === 1
        ? escapeMarkupDeclarations(part)
        : part.replace(NAMED_REFERENCE, (whole, name: string) => {
            const codePoint = HTML_ENTITIES[name];
            return codePoint === undefined ? whole : `&#${codePoint};`;
          }),
    )
    .join('');
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

/** The XML text ready for feedsmith; throws not_a_feed for HTML pages. */
export function prepareXml(text: string): string {
  if (looksLikeHtml(text)) throw new FeedParseError('not_a_feed', 'the response is an HTML page, not a feed');
  return completeLastTag(numericEntities(stripDoctype(text)));
}
