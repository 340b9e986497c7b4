import type { SafeFetcher } from '../../net/safe-fetch.js';

export interface SocialLinks {
  linkedin?: string;
  twitter?: string;
  facebook?: string;
  instagram?: string;
  youtube?: string;
  github?: string;
}

export type SocialNetwork = keyof SocialLinks;

export interface CompanyProfile {
  name: string;
  description: string | null;
  product_description: string | null;
  /** Keywords, at most MAX_KEYWORDS. */
  industry: string[];
  /** Absolute http(s) URL. */
  logo: string | null;
  /** `website` is the home page that was read (after redirects), null when research fell back to the domain. */
  links: { website: string | null } & SocialLinks;
  /** Primary language subtag, e.g. "de". */
  language: string | null;
  source: 'site' | 'domain';
}

export interface ResearchOutcome {
  profile: CompanyProfile;
  /** Why research fell back to the domain, e.g. "https://acme.com/: timeout (...)"; null when the site was read. */
  fallbackReason: string | null;
  /** Every URL requested, in order. */
  fetchedUrls: string[];
  /** Problems that did not cause a fallback, e.g. an /about page that could not be read. */
  warnings?: string[];
}

export interface ResearchDeps {
  fetcher: SafeFetcher;
  /** Where the home page is, `{domain}` replaced (config COMPANY_SITE_URL, default `https://{domain}/`). */
  siteUrlTemplate: string;
  /** Budget for the whole research, every request included (default 8000 ms). */
  timeoutMs?: number;
  /** Deadline of one request (default 5000 ms, never more than what is left of timeoutMs). */
  requestTimeoutMs?: number;
  /** Cap on one decoded response body (default 2 MiB); a larger home page means a fallback to the domain. */
  maxBytes?: number;
  signal?: AbortSignal;
}

export const MAX_NAME_LENGTH = 200;
export const MAX_DESCRIPTION_LENGTH = 1000;
export const MAX_PRODUCT_DESCRIPTION_LENGTH = 2000;
export const MAX_KEYWORDS = 10;
export const MAX_KEYWORD_LENGTH = 60;
