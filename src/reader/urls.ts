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
