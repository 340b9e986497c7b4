import type { SocialNetwork } from './types.js';
import { matchKey } from './clean-text.js';

// Company pages on social networks, told apart from share buttons, posts and the networks' own pages.

const NETWORK_HOSTS: ReadonlyArray<readonly [host: string, network: SocialNetwork]> = [
  ['linkedin.com', 'linkedin'],
  ['twitter.com', 'twitter'],
  ['x.com', 'twitter'],
  ['facebook.com', 'facebook'],
  ['fb.com', 'facebook'],
  ['instagram.com', 'instagram'],
  ['youtube.com', 'youtube'],
  ['github.com', 'github'],
];

// www, mobile and country or language subdomains (de.linkedin.com, m.facebook.com); not api., developers., gist.
const PLAIN_SUBDOMAIN = /^(?:www|m|mobile|[a-z]{2}(?:-[a-z]{2})?)$/;

const TWITTER_RESERVED = new Set([
  'intent',
  'share',
  'home',
  'search',
  'hashtag',
  'i',
  'login',
  'signup',
  'explore',
  'settings',
  'privacy',
  'tos',
  'messages',
  'notifications',
  'compose',
  'about',
  'download',
  'widgets',
  'jobs',
]);
const FACEBOOK_RESERVED = new Set([
  'sharer',
  'sharer.php',
  'share',
  'share.php',
  'dialog',
  'plugins',
  'login',
  'login.php',
  'tr',
  'groups',
  'events',
  'watch',
  'photo.php',
  'photos',
  'permalink.php',
  'story.php',
  'hashtag',
  'help',
  'policies',
  'privacy',
  'legal',
  'ads',
  'business',
  'gaming',
  'marketplace',
  'l.php',
  'home.php',
  'search',
  'people',
  'policy.php',
  'terms.php',
]);
const INSTAGRAM_RESERVED = new Set(['p', 'reel', 'reels', 'explore', 'accounts', 'stories', 'tv', 'direct', 'about', 'developer', 'legal']);
const GITHUB_RESERVED = new Set([
  'login',
  'join',
  'signup',
  'features',
  'pricing',
  'about',
  'sponsors',
  'marketplace',
  'topics',
  'explore',
  'collections',
  'trending',
  'site',
  'security',
  'enterprise',
  'customer-stories',
  'readme',
  'settings',
  'notifications',
  'apps',
  'contact',
  'events',
  'team',
  'search',
  'new',
  'codespaces',
  'copilot',
]);

export interface SocialLink {
  network: SocialNetwork;
  /** Canonical https URL of the page. */
  url: string;
  /** The account name, for matching against the company. */
  handle: string;
}

function networkOf(hostname: string): SocialNetwork | undefined {
  const host = hostname.toLowerCase();
  for (const [known, network] of NETWORK_HOSTS) {
    if (host === known) return network;
    if (host.endsWith(`.${known}`) && PLAIN_SUBDOMAIN.test(host.slice(0, -known.length - 1))) return network;
  }
  return undefined;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The company page a URL points to, or null for anything else (share links, posts, help pages, other sites). */
export function classifySocialUrl(href: string, base?: string): SocialLink | null {
  let url: URL;
  try {
    url = new URL(href, base);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  const network = networkOf(url.hostname);
  if (!network) return null;
  const segments = url.pathname.split('/').filter(Boolean).map(decodeSegment);
  const first = segments[0] ?? '';
  const firstLower = first.toLowerCase();

  switch (network) {
    case 'linkedin': {
      const handle = segments[1];
      if (!['company', 'school', 'showcase'].includes(firstLower) || !handle || !/^[\p{L}\p{N}._%-]{1,100}$/u.test(handle)) {
        return null;
      }
      return { network, handle, url: `https://www.linkedin.com/${firstLower}/${encodeURIComponent(handle)}` };
    }
    case 'twitter': {
      if (segments.length !== 1 || !/^[A-Za-z0-9_]{1,15}$/.test(first) || TWITTER_RESERVED.has(firstLower)) return null;
      const host = url.hostname.toLowerCase().endsWith('x.com') ? 'x.com' : 'twitter.com';
      return { network, handle: first, url: `https://${host}/${first}` };
    }
    case 'facebook': {
      if (segments.length === 0 || FACEBOOK_RESERVED.has(firstLower)) return null;
      if (firstLower === 'profile.php') {
        const id = url.searchParams.get('id');
        if (!id || !/^\d{1,30}$/.test(id)) return null;
        return { network, handle: id, url: `https://www.facebook.com/profile.php?id=${id}` };
      }
      if (firstLower === 'pages') {
        const name = segments[1];
        if (!name || segments.length > 3) return null;
        const path = segments.slice(1).map(encodeURIComponent).join('/');
        return { network, handle: name, url: `https://www.facebook.com/pages/${path}` };
      }
      if (segments.length > 2 || !/^[\p{L}\p{N}._-]{2,100}$/u.test(first)) return null;
      if (segments.length === 2 && !['about', 'community', 'reviews'].includes(segments[1]!.toLowerCase())) return null;
      return { network, handle: first, url: `https://www.facebook.com/${encodeURIComponent(first)}` };
    }
    case 'instagram': {
      if (segments.length !== 1 || !/^[A-Za-z0-9._]{1,30}$/.test(first) || INSTAGRAM_RESERVED.has(firstLower)) return null;
      return { network, handle: first, url: `https://www.instagram.com/${first}` };
    }
    case 'youtube': {
      if (first.startsWith('@') && /^@[\p{L}\p{N}._-]{1,100}$/u.test(first) && segments.length <= 2) {
        return { network, handle: first.slice(1), url: `https://www.youtube.com/${encodeURIComponent(first).replace('%40', '@')}` };
      }
      const id = segments[1];
      if (['channel', 'c', 'user'].includes(firstLower) && id && /^[\p{L}\p{N}._-]{1,100}$/u.test(id)) {
        return { network, handle: id, url: `https://www.youtube.com/${firstLower}/${encodeURIComponent(id)}` };
      }
      return null;
    }
    case 'github': {
      const handle = firstLower === 'orgs' ? segments[1] : segments.length === 1 ? first : undefined;
      if (!handle || !/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/.test(handle) || GITHUB_RESERVED.has(handle.toLowerCase())) {
        return null;
      }
      return { network, handle, url: `https://github.com/${handle}` };
    }
  }
}

/**
 * One page per network from candidates in order of trust (JSON-LD sameAs, then rel=me, then anchors): the first
 * whose account name resembles the company, else the first.
 */
export function pickSocialLinks(candidates: SocialLink[], companyKeys: string[]): Partial<Record<SocialNetwork, string>> {
  const keys = companyKeys.map(matchKey).filter((key) => key.length >= 3);
  const resembles = (handle: string) => {
    const h = matchKey(handle);
    return h.length >= 3 && keys.some((key) => h.includes(key) || key.includes(h));
  };
  const chosen: Partial<Record<SocialNetwork, SocialLink & { resembles: boolean }>> = {};
  for (const candidate of candidates) {
    const current = chosen[candidate.network];
    const match = resembles(candidate.handle);
    if (!current || (match && !current.resembles)) chosen[candidate.network] = { ...candidate, resembles: match };
  }
  const out: Partial<Record<SocialNetwork, string>> = {};
  for (const [network, link] of Object.entries(chosen)) out[network as SocialNetwork] = link.url;
  return out;
}
