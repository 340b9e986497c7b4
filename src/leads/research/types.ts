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

export type NameSource = 'json-ld' | 'og:site_name' | 'application-name' | 'json-ld-website' | 'title' | 'page-text';

export interface ExtractOptions {
  /** The company's domain, to choose among names and links (default: the page's host). */
  domain?: string;
  /** The Content-Language response header, used when the page has no lang attribute. */
  contentLanguage?: string | undefined;
}

/** What one page tells; `name` is absent when the page does not name the company (the caller uses the domain). */
export type ExtractedCompany = Partial<CompanyProfile> & {
  description: string | null;
  product_description: string | null;
  industry: string[];
  logo: string | null;
  /** `website` is the page URL given; the social links are those the page shows. */
  links: CompanyProfile['links'];
  language: string | null;
  nameSource?: NameSource;
  /** Same-site pages linked from this one that describe the company (about first, then products), best first. */
  relatedPages: string[];
  /** The about pages among relatedPages. */
  aboutPages: string[];
  /**
   * True when the page is a dated article (a blog post, news story or press release) rather than a page about the
   * company: its text says what happened, not what the company does, so it gives no description.
   */
  article: boolean;
};

/** Reads one fetched page into company facts (extract.ts's extractCompany), on the event loop or in a worker thread. */
export type PageExtractor = (html: string, url: string, options: ExtractOptions) => Promise<ExtractedCompany>;

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
  /**
   * Reads the fetched pages; extractCompany on the event loop by default. A hostile page of 512 KiB (ten thousand
   * linked images) takes about a quarter of a second to read, so the app reads large pages in a worker thread.
   */
  extractPage?: PageExtractor;
}

export const MAX_NAME_LENGTH = 200;
export const MAX_DESCRIPTION_LENGTH = 1000;
export const MAX_PRODUCT_DESCRIPTION_LENGTH = 2000;
export const MAX_KEYWORDS = 10;
export const MAX_KEYWORD_LENGTH = 60;
