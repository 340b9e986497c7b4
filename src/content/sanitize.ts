import sanitizeHtml from 'sanitize-html';

// Article HTML is shown inside publishers' apps and pages, so it is cleaned on the way in, whoever sends it:
// an allow-list of tags and attributes, http(s)/mailto/tel links only, no scripts, handlers, styles or forms,
// and iframes only from well-known video hosts.
const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [
    ...sanitizeHtml.defaults.allowedTags,
    'img',
    'figure',
    'figcaption',
    'picture',
    'source',
    'video',
    'audio',
    'track',
    'iframe',
    'del',
    'ins',
    'sub',
    'sup',
  ],
  allowedAttributes: {
    a: ['href', 'name', 'target', 'title', 'rel'],
    img: ['src', 'srcset', 'sizes', 'alt', 'title', 'width', 'height', 'loading'],
    source: ['src', 'srcset', 'type', 'media', 'sizes'],
    video: ['src', 'poster', 'controls', 'width', 'height', 'preload', 'loop', 'muted', 'playsinline'],
    audio: ['src', 'controls', 'preload', 'loop', 'muted'],
    track: ['src', 'kind', 'srclang', 'label', 'default'],
    iframe: ['src', 'width', 'height', 'allowfullscreen', 'title'],
    td: ['colspan', 'rowspan', 'align'],
    th: ['colspan', 'rowspan', 'align', 'scope'],
    ol: ['start', 'reversed', 'type'],
    '*': ['lang', 'dir', 'id', 'class'],
  },
  allowedSchemes: ['http', 'https', 'mailto', 'tel'],
  allowedSchemesByTag: { img: ['http', 'https'], source: ['http', 'https'], video: ['http', 'https'], audio: ['http', 'https'] },
  allowProtocolRelative: true,
  allowedIframeHostnames: ['www.youtube.com', 'www.youtube-nocookie.com', 'player.vimeo.com'],
  allowIframeRelativeUrls: false,
  // An iframe whose host is not listed loses its src; the empty frame is dropped with its fallback content.
  exclusiveFilter: (frame) => frame.tag === 'iframe' && !frame.attribs.src,
};

// Attributes that hold one URL, per tag: made absolute when a base URL is given.
const URL_ATTRIBUTES: Readonly<Record<string, readonly string[]>> = {
  a: ['href'],
  img: ['src'],
  source: ['src'],
  video: ['src', 'poster'],
  audio: ['src'],
  track: ['src'],
  iframe: ['src'],
};

function absoluteUrl(value: string, base: URL): string {
  try {
    return new URL(value.trim(), base).href;
  } catch {
    return value;
  }
}

function absoluteSrcset(value: string, base: URL): string {
  return value
    .split(',')
    .map((candidate) => {
      const [url = '', ...descriptor] = candidate.trim().split(/\s+/);
      return url ? [absoluteUrl(url, base), ...descriptor].join(' ') : '';
    })
    .filter(Boolean)
    .join(', ');
}

function parseBase(baseUrl: string | undefined): URL | undefined {
  try {
    return baseUrl ? new URL(baseUrl) : undefined;
  } catch {
    return undefined;
  }
}

function transformsFor(base: URL | undefined): Record<string, sanitizeHtml.Transformer> {
  const transforms: Record<string, sanitizeHtml.Transformer> = {};
  for (const [tag, urlAttributes] of Object.entries(URL_ATTRIBUTES)) {
    transforms[tag] = (tagName, attribs) => {
      const next: sanitizeHtml.Attributes = { ...attribs };
      if (base) {
        for (const name of urlAttributes) if (next[name] !== undefined) next[name] = absoluteUrl(next[name], base);
        if (next.srcset !== undefined) next.srcset = absoluteSrcset(next.srcset, base);
      }
      if (tagName === 'a' && next.target === '_blank') next.rel = 'noopener noreferrer';
      return { tagName, attribs: next };
    };
  }
  return transforms;
}

const TRANSFORMS_WITHOUT_BASE = transformsFor(undefined);

// Imported HTML was written for another site: its class and id attributes would reach the publisher's own CSS
// (a `modal-backdrop` or `fixed inset-0` class can overlay the page) and scripts (ids clobber DOM globals).
const IMPORTED_OPTIONS: sanitizeHtml.IOptions = {
  ...OPTIONS,
  allowedAttributes: { ...(OPTIONS.allowedAttributes as Record<string, string[]>), '*': ['lang', 'dir'] },
};

/** Cleans article HTML written through the API by the publisher's own people. */
export function sanitizeArticleHtml(html: string): string {
  return sanitizeHtml(html, { ...OPTIONS, transformTags: TRANSFORMS_WITHOUT_BASE });
}

/**
 * Cleans HTML imported from elsewhere (a feed entry): relative URLs (href, src, poster, srcset) are first made
 * absolute against `baseUrl`, so that they still point where their author meant, and the scheme checks run on
 * the absolute URL; class and id attributes are dropped.
 */
export function sanitizeImportedHtml(html: string, baseUrl?: string): string {
  const base = parseBase(baseUrl);
  return sanitizeHtml(html, { ...IMPORTED_OPTIONS, transformTags: base ? transformsFor(base) : TRANSFORMS_WITHOUT_BASE });
}
