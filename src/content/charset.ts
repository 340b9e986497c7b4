import { isAscii, isUtf8 } from 'node:buffer';
import { ResultType, Sniffer } from 'encoding-sniffer/sniffer';
import iconv from 'iconv-lite';

// Turns a response body (a feed, a web page) into text, choosing the charset as XML and feedparser do:
// byte order mark > HTTP charset > the XML declaration's encoding > UTF-8. A declared charset that does not decode
// the bytes cleanly (invalid UTF-8, an unknown name) is passed over for UTF-8 and finally windows-1252, which
// decodes anything.
//
// Single-byte charsets decode any bytes, so a wrong label of that kind never fails: valid UTF-8 served as
// `charset=iso-8859-1` (or windows-1251, or declared so in the XML) would turn "Grüße" into "GrÃ¼ÃŸe". As Miniflux
// does (reader/encoding's CharsetReader), a body that is valid UTF-8 is read as UTF-8 whatever its label says: text
// in a legacy charset is practically never valid UTF-8 once it holds a byte above 0x7F. A body of ASCII bytes only
// is left to its label (7-bit charsets such as ISO-2022-JP and UTF-7 read their escapes differently).

const BOMS: ReadonlyArray<readonly [bytes: readonly number[], charset: string]> = [
  [[0xef, 0xbb, 0xbf], 'utf-8'],
  [[0xff, 0xfe, 0, 0], 'utf-32le'],
  [[0, 0, 0xfe, 0xff], 'utf-32be'],
  [[0xff, 0xfe], 'utf-16le'],
  [[0xfe, 0xff], 'utf-16be'],
];

function bomCharset(body: Buffer): { charset: string; length: number } | undefined {
  for (const [bytes, charset] of BOMS) {
    if (bytes.every((byte, i) => body[i] === byte)) return { charset, length: bytes.length };
  }
  return undefined;
}

/** UTF-16/32 without a BOM shows as `<` with zero bytes around it. */
function sniffUtf16(body: Buffer): string | undefined {
  if (body.length < 4) return undefined;
  if (body[0] === 0x3c && body[1] === 0 && body[2] === 0 && body[3] === 0) return 'utf-32le';
  if (body[0] === 0 && body[1] === 0 && body[2] === 0 && body[3] === 0x3c) return 'utf-32be';
  if (body[0] === 0x3c && body[1] === 0 && body[2] !== 0 && body[3] === 0) return 'utf-16le';
  if (body[0] === 0 && body[1] === 0x3c && body[2] === 0 && body[3] !== 0) return 'utf-16be';
  return undefined;
}

/** The `charset` parameter of a Content-Type header, lower-cased and unquoted. */
function contentTypeCharset(contentType: string | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*("?)([^";\s]+)\1/i.exec(contentType ?? '');
  return match ? match[2]!.toLowerCase() : undefined;
}

/** The encoding named by an XML declaration at the start of the body (read as ASCII). */
function xmlDeclarationCharset(body: Buffer): string | undefined {
  const head = body.subarray(0, 512).toString('latin1');
  const match = /^\s*<\?xml\b[^>]*?\bencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/.exec(head);
  return match ? match[1]!.toLowerCase() : undefined;
}

const ALIASES: Readonly<Record<string, string>> = {
  'x-mac-roman': 'macintosh',
  'x-sjis': 'shift_jis',
  'x-euc-jp': 'euc-jp',
  'iso-8859-1': 'windows-1252', // as browsers do: the C1 range of real feeds is windows-1252
  latin1: 'windows-1252',
};

function decodeStrictly(bytes: Buffer, charset: string): string | undefined {
  const name = ALIASES[charset] ?? charset;
  if (name === 'us-ascii' || name === 'ascii') {
    return bytes.every((byte) => byte < 0x80) ? bytes.toString('latin1') : undefined;
  }
  // Without a BOM or the zero-byte pattern the bytes are not UTF-16/32, whatever the label says.
  if (/^(?:utf-?(?:16|32)|ucs-?[24])/.test(name)) return undefined;
  if (name === 'utf-8' || name === 'utf8') {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      return undefined;
    }
  }
  if (!iconv.encodingExists(name)) return undefined;
  const text = iconv.decode(bytes, name, { stripBOM: false });
  // Multi-byte charsets report bytes they cannot map as U+FFFD; such a charset was the wrong guess.
  return text.includes('\uFFFD') ? undefined : text;
}

export interface DecodedBody {
  text: string;
  /** The charset the text was decoded from. */
  charset: string;
}

export function decodeBody(body: Buffer, contentType?: string): DecodedBody {
  const bom = bomCharset(body);
  if (bom) {
    const text = iconv.decode(body.subarray(bom.length), bom.charset, { stripBOM: true });
    return { text, charset: bom.charset };
  }
  const utf16 = sniffUtf16(body);
  if (utf16) return { text: iconv.decode(body, utf16), charset: utf16 };
  if (!isAscii(body) && isUtf8(body)) return { text: body.toString('utf-8'), charset: 'utf-8' };

  const candidates = [contentTypeCharset(contentType), xmlDeclarationCharset(body), 'utf-8'];
  for (const charset of candidates) {
    if (!charset) continue;
    const text = decodeStrictly(body, charset);
    if (text !== undefined) return { text, charset };
  }
  return { text: iconv.decode(body, 'windows-1252'), charset: 'windows-1252' };
}

/** How far into a page its charset declaration is looked for (the HTML standard's prescan reads 1024 bytes). */
const SNIFF_BYTES = 4096;

/**
 * The charset a page declares in its first bytes, by the HTML standard's prescan (encoding-sniffer): <meta charset>,
 * <meta http-equiv="Content-Type" content="...; charset=">, an XML declaration; comments skipped, labels resolved to
 * their encoding (x-cp1251 → windows-1251).
 */
function metaCharset(body: Buffer): string | undefined {
  const sniffer = new Sniffer({ maxBytes: SNIFF_BYTES });
  sniffer.write(body.subarray(0, SNIFF_BYTES));
  const declared = sniffer.resultType === ResultType.META_TAG || sniffer.resultType === ResultType.XML_ENCODING;
  return declared ? sniffer.encoding.toLowerCase() : undefined;
}

/** An HTML page's text: byte order mark, then the HTTP charset, then <meta charset>, then UTF-8, then windows-1252. */
export function decodeHtmlBody(body: Buffer, contentType: string | undefined): DecodedBody {
  const declared = contentTypeCharset(contentType) ?? metaCharset(body);
  return decodeBody(body, declared ? `text/html; charset=${declared}` : undefined);
}
