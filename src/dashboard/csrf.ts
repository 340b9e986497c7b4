import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

/** The hidden form field that carries the token. */
export const CSRF_FIELD = '_csrf';

const PURPOSE = 'masthead dashboard csrf v1';

/**
 * The CSRF token of a browser: an HMAC, keyed by a secret only that browser and the server know (its session key,
 * or before signing in the random value of its pre-session cookie). Both cookies are httpOnly, so another site can
 * neither read the secret nor compute the token; the HMAC is one-way, so a token shown in a page does not reveal
 * the session key. It needs no server-side secret or storage, so any number of instances check it alike.
 */
export function csrfToken(secret: string): string {
  return createHmac('sha256', secret).update(PURPOSE).digest('base64url');
}

export function tokenMatches(secret: string, presented: string | undefined): boolean {
  if (!presented) return false;
  const expected = Buffer.from(csrfToken(secret));
  const given = Buffer.from(presented);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/**
 * A state-changing request must come from one of our own pages: its Origin (or, when a browser sends none, its
 * Referer) must name this server's host and port, as the Host header does. The scheme is left out of the
 * comparison: behind a proxy that terminates TLS the browser's origin is https while the request reaching Node is
 * http (the token, which another site cannot know, is checked as well). A request naming neither is refused.
 */
export function fromSameOrigin(request: FastifyRequest): boolean {
  const expected = hostOf(`${request.protocol}://${request.host}`);
  if (expected === undefined) return false;
  const origin = request.headers.origin;
  if (origin !== undefined) return hostOf(origin) === expected;
  const referer = request.headers.referer;
  return referer !== undefined && hostOf(referer) === expected;
}

/** host[:port] of an http(s) URL, normalized (lower case, default port dropped); undefined for `null` or anything else. */
function hostOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
    return parsed.port === '' || parsed.port === '80' || parsed.port === '443' ? parsed.hostname : parsed.host;
  } catch {
    return undefined;
  }
}
