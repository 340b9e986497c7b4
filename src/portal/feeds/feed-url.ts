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
