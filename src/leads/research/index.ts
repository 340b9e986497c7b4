// Company research: the home page of the lead's domain (and at most one /about or /products page it links to),
// read through the SSRF-guarded fetcher within a time budget. Never throws: whatever goes wrong, the outcome is
// what the domain alone tells, with the reason.

import { extractCompany, joinPieces } from './extract.js';
import { fetchHtmlPage, PageError } from './fetch-page.js';
import type { HtmlPage } from './fetch-page.js';
import { profileFromDomain } from './name.js';
import { truncate } from '../../content/text.js';
import type { WorkerPool } from '../../workers/pool.js';
import type { CompanyProfile, ExtractedCompany, PageExtractor, ResearchDeps, ResearchOutcome } from './types.js';
import { MAX_PRODUCT_DESCRIPTION_LENGTH } from './types.js';

export type {
  CompanyProfile,
  ExtractedCompany,
  ExtractOptions,
  NameSource,
  PageExtractor,
  ResearchDeps,
  ResearchOutcome,
  SocialLinks,
  SocialNetwork,
} from './types.js';
export { extractCompany } from './extract.js';
export { nameFromDomain, nameFromTitle, profileFromDomain, registrableDomain } from './name.js';
export { preloadDomainWords } from './domain-words.js';

export const DEFAULT_SITE_URL_TEMPLATE = 'https://{domain}/';
export const DEFAULT_RESEARCH_TIMEOUT_MS = 8000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 5000;
export const DEFAULT_MAX_PAGE_BYTES = 2 * 1024 * 1024;
/** An attempt with less time than this left is not started. */
const MIN_ATTEMPT_MS = 100;
const MAX_REASON_LENGTH = 1000;
/** Only the start of a page is read: the facts sit in the head and the top of the body. */
const MAX_PARSED_CHARS = 512 * 1024;

const HOST_NAME = /^(?=.{1,253}$)(?:(?!-)[a-z0-9-]{1,63}(?<!-)\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;
// Failures another address of the same site would only repeat.
const FINAL_FAILURES = new Set(['too_large', 'blocked_address', 'aborted']);

/**
 * Home page URLs to try, in order. The default https template also tries http:// and then www.; any other
 * template (a test server, a proxy) is used as it is, with the www. variant of the domain after it.
 */
export function homePageCandidates(domain: string, template: string): string[] {
  const fill = (host: string) => template.replaceAll('{domain}', host);
  const www = domain.startsWith('www.') ? [] : [`www.${domain}`];
  const urls = /^https:\/\/\{domain\}\/?$/.test(template)
    ? [`https://${domain}/`, `http://${domain}/`, ...www.map((host) => `https://${host}/`)]
    : [fill(domain), ...www.map(fill)];
  return [...new Set(urls)];
}

function describeFailure(url: string, err: unknown): { text: string; final: boolean } {
  if (err instanceof PageError) {
    return { text: `${url}: ${err.reason} (${err.message})`, final: FINAL_FAILURES.has(err.reason) };
  }
  return { text: `${url}: network (the request failed)`, final: false };
}

/**
 * One profile from the home page and the related page read after it. What the company does comes from the home
 * page, or from an about page when the home page says nothing of it; never from a products page or an article.
 */
function mergeProfile(domain: string, home: ExtractedCompany, extra: ExtractedCompany | undefined, extraIsAbout: boolean): CompanyProfile {
  const fallback = profileFromDomain(domain);
  const { website: _extraWebsite, ...extraSocial } = extra?.links ?? { website: null };
  const productPieces = [home.product_description, extra?.product_description].filter((p): p is string => !!p);
  return {
    name: home.name ?? extra?.name ?? fallback.name,
    description: home.description ?? (extraIsAbout && extra && !extra.article ? extra.description : null),
    product_description: joinPieces(productPieces, MAX_PRODUCT_DESCRIPTION_LENGTH),
    industry: home.industry.length > 0 ? home.industry : (extra?.industry ?? []),
    logo: home.logo ?? extra?.logo ?? null,
    links: { ...extraSocial, ...home.links },
    language: home.language ?? extra?.language ?? null,
    source: 'site',
  };
}

/**
 * Below this much HTML a page is read on the event loop (a few ms for an ordinary page; about 20 ms for the slowest
 * hostile pages measured, 16 KiB of one-letter words); a larger one in a worker thread.
 */
const INLINE_EXTRACT_CHARS = 16 * 1024;

/** Reads small pages here and large ones in the worker threads (tasks.ts's extractCompanyPage). */
export function pooledPageExtractor(pool: WorkerPool): PageExtractor {
  return async (html, url, options) =>
    html.length < INLINE_EXTRACT_CHARS ? extractCompany(html, url, options) : pool.run('extractCompanyPage', { html, url, options });
}

export async function researchCompany(domain: string, deps: ResearchDeps): Promise<ResearchOutcome> {
  const budget = deps.timeoutMs ?? DEFAULT_RESEARCH_TIMEOUT_MS;
  const deadline = Date.now() + budget;
  const requestTimeout = deps.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const maxBytes = deps.maxBytes ?? DEFAULT_MAX_PAGE_BYTES;
  const template = deps.siteUrlTemplate || DEFAULT_SITE_URL_TEMPLATE;
  const host = String(domain).trim().toLowerCase().replace(/\.$/, '');
  const fetchedUrls: string[] = [];

  if (!HOST_NAME.test(host)) {
    const shown = truncate(String(domain), 100);
    return { profile: profileFromDomain(host || 'unknown'), fallbackReason: `"${shown}" is not a domain name`, fetchedUrls };
  }

  const fetchPage = async (url: string): Promise<HtmlPage> => {
    const remaining = deadline - Date.now();
    if (deps.signal?.aborted) throw new PageError('aborted', 'research was cancelled');
    if (remaining < MIN_ATTEMPT_MS) throw new PageError('timeout', `the research budget of ${budget} ms is used up`);
    fetchedUrls.push(url);
    return fetchHtmlPage(deps.fetcher, url, { timeoutMs: Math.min(requestTimeout, remaining), maxBytes, signal: deps.signal });
  };

  const failures: string[] = [];
  let home: HtmlPage | undefined;
  for (const url of homePageCandidates(host, template)) {
    try {
      home = await fetchPage(url);
      break;
    } catch (err) {
      const failure = describeFailure(url, err);
      failures.push(failure.text);
      if (failure.final || (err instanceof PageError && err.reason === 'timeout' && deadline - Date.now() < MIN_ATTEMPT_MS)) {
        break;
      }
    }
  }
  if (!home) {
    return { profile: profileFromDomain(host), fallbackReason: truncate(failures.join('; '), MAX_REASON_LENGTH), fetchedUrls };
  }

  const extractPage: PageExtractor = deps.extractPage ?? (async (html, url, options) => extractCompany(html, url, options));
  let homeFacts: ExtractedCompany;
  try {
    homeFacts = await extractPage(home.html.slice(0, MAX_PARSED_CHARS), home.url, { domain: host, contentLanguage: home.contentLanguage });
  } catch {
    return { profile: profileFromDomain(host), fallbackReason: `${home.url}: the page could not be read`, fetchedUrls };
  }
  const warnings: string[] = [];
  let extra: ExtractedCompany | undefined;
  const related = homeFacts.relatedPages[0];
  if (related) {
    try {
      const page = await fetchPage(related);
      extra = await extractPage(page.html.slice(0, MAX_PARSED_CHARS), page.url, { domain: host, contentLanguage: page.contentLanguage });
    } catch (err) {
      warnings.push(describeFailure(related, err).text); // the home page is enough
    }
  }

  const profile = mergeProfile(host, homeFacts, extra, related !== undefined && homeFacts.aboutPages.includes(related));
  profile.links.website = home.url;
  const outcome: ResearchOutcome = { profile, fallbackReason: null, fetchedUrls };
  if (warnings.length > 0) outcome.warnings = warnings;
  return outcome;
}
