// URLs of a feed: relative ones resolved against their base, only http(s) kept for links and images.

/** `value` resolved against `base`, whatever its scheme; undefined when it cannot be resolved. */
export function resolveAgainst(value: string | undefined, base: string | undefined): string | undefined {
  const text = value?.trim();
  if (!text) return base;
  try {
    return new URL(text, base).href;
  } catch {
    return undefined;
  }
}

/** An absolute http(s) URL made of `value` (resolved against `base`), or undefined. */
export function httpUrl(value: string | undefined, base?: string): string | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  try {
    const url = new URL(text, base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** The base URL of a nested element: its xml:base resolved against its parent's base. */
export function childBase(parentBase: string | undefined, xmlBase: string | undefined): string | undefined {
  return xmlBase ? (resolveAgainst(xmlBase, parentBase) ?? parentBase) : parentBase;
}

const IMAGE_EXTENSION = /\.(?:jpe?g|png|gif|webp|avif|svg|bmp)(?:[?#]|$)/i;

export function looksLikeImageUrl(url: string): boolean {
  return IMAGE_EXTENSION.test(url);
}

/**
 * The form a feed's URL is stored and compared in, so that one publication cannot take the same feed twice. WHATWG
 * URL parsing lower-cases the scheme and the host (and turns an international host into punycode), drops the
 * scheme's default port, gives an empty path its `/`, resolves `.` and `..` segments, and percent-encodes what must be
 * encoded (a space, non-ASCII characters); the fragment, which never reaches the server, is dropped. Nothing else:
 * the query is kept as written (its order can matter), http and https stay apart, and so do `www.` and the bare
 * host, as they can serve different feeds. `value` must be an absolute URL.
 */
export function normalizeFeedUrl(value: string | URL): string {
  const url = new URL(value);
  url.hash = '';
  return url.href;
}
