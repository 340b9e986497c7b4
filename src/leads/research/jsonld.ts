import { domainMatchScore } from './name.js';

// Facts from JSON-LD blocks: the Organization (or Corporation, LocalBusiness, ...) a page is about, wherever it
// sits (top level, an array, @graph, a WebSite's publisher), and the WebSite node.

export type JsonObject = Record<string, unknown>;

const MAX_SCRIPT_LENGTH = 512 * 1024;
const MAX_SCRIPTS = 20;
const MAX_DEPTH = 8;
const MAX_NODES = 2000;

const ORGANIZATION_TYPES = new Set([
  'Organization',
  'Organisation',
  'Corporation',
  'LocalBusiness',
  'NGO',
  'OnlineBusiness',
  'OnlineStore',
  'EducationalOrganization',
  'NewsMediaOrganization',
  'MedicalOrganization',
  'SportsOrganization',
  'Airline',
  'Consortium',
  'GovernmentOrganization',
  'ResearchOrganization',
  'WorkersUnion',
  'LibrarySystem',
  'PerformingGroup',
  'Project',
  'FundingScheme',
  'Restaurant',
  'Store',
  'ProfessionalService',
  'LegalService',
  'FinancialService',
  'Dentist',
  'Physician',
  'Hotel',
  'TravelAgency',
  'RealEstateAgent',
  'InsuranceAgency',
]);
const ORGANIZATION_TYPE_SUFFIX = /^\w+(?:Organization|Organisation|Corporation|Business|Store|Service|Agency|Company)$/;

export interface JsonLdFacts {
  organization: JsonObject | undefined;
  website: JsonObject | undefined;
  /** True when the page itself is an article: a top-level Article, NewsArticle, BlogPosting or the like. */
  article: boolean;
}

// Article, NewsArticle, BlogPosting, LiveBlogPosting, ScholarlyArticle, TechArticle, Report's kin...
const ARTICLE_TYPE = /(?:Article|BlogPosting)$/;

/** JSON.parse, then once more with raw control characters (newlines inside strings, a common error) made spaces. */
function parseLenient(text: string): unknown {
  const body = text
    .trim()
    .replace(/^<!--/, '')
    .replace(/-->$/, '')
    .replace(/^\/\*\s*<!\[CDATA\[\s*\*\//, '')
    .replace(/\/\*\s*\]\]>\s*\*\/$/, '')
    .trim();
  try {
    return JSON.parse(body);
  } catch {
    try {
      return JSON.parse(body.replace(/[\u0000-\u001f]+/g, ' ').replace(/,\s*([}\]])/g, '$1'));
    } catch {
      return undefined;
    }
  }
}

export function typesOf(node: JsonObject): string[] {
  const raw = node['@type'];
  const list = Array.isArray(raw) ? raw : [raw];
  return list.filter((t): t is string => typeof t === 'string').map((t) => t.split(/[/#:]/).pop() ?? t);
}

function isOrganization(node: JsonObject): boolean {
  return typesOf(node).some((t) => ORGANIZATION_TYPES.has(t) || ORGANIZATION_TYPE_SUFFIX.test(t));
}

interface Found {
  node: JsonObject;
  depth: number;
  order: number;
}

function collect(scripts: string[]): { organizations: Found[]; websites: Found[]; article: boolean } {
  const organizations: Found[] = [];
  const websites: Found[] = [];
  let article = false;
  let visited = 0;
  const visit = (value: unknown, depth: number): void => {
    if (depth > MAX_DEPTH || visited > MAX_NODES || value === null || typeof value !== 'object') return;
    visited++;
    if (Array.isArray(value)) {
      for (const item of value) visit(item, depth);
      return;
    }
    const node = value as JsonObject;
    if (depth === 0 && typesOf(node).some((t) => ARTICLE_TYPE.test(t))) article = true;
    if (isOrganization(node)) organizations.push({ node, depth, order: visited });
    else if (typesOf(node).includes('WebSite')) websites.push({ node, depth, order: visited });
    for (const [key, child] of Object.entries(node)) {
      if (key === '@context') continue;
      visit(child, key === '@graph' ? depth : depth + 1);
    }
  };
  for (const script of scripts.slice(0, MAX_SCRIPTS)) {
    if (script.length <= MAX_SCRIPT_LENGTH) visit(parseLenient(script), 0);
  }
  return { organizations, websites, article };
}

function hostOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    return new URL(value).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * The organization the site is about: top-level nodes before nested ones (an article's author's employer),
 * nodes whose url or name match the domain before others, a node that has a name before one that has not.
 */
export function readJsonLd(scripts: string[], domain: string): JsonLdFacts {
  const { organizations, websites, article } = collect(scripts);
  const score = ({ node, depth }: Found): number => {
    let total = depth <= 1 ? 4 : 0;
    const host = hostOf(node['url']) ?? hostOf(node['@id']);
    if (host && (host === domain || host.endsWith(`.${domain}`) || domain.endsWith(`.${host}`))) total += 3;
    const name = firstString(node['name']);
    if (name) total += 1 + (domainMatchScore(name, domain) > 0 ? 2 : 0);
    return total;
  };
  const best = (found: Found[]) => found.reduce<Found | undefined>((a, b) => (a === undefined || score(b) > score(a) ? b : a), undefined)?.node;
  return { organization: best(organizations), website: best(websites), article };
}

/** A string property that may be a string, a language-tagged value or a list of them. */
export function firstString(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim() === '' ? undefined : value;
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = firstString(item);
      if (found) return found;
    }
    return undefined;
  }
  if (value && typeof value === 'object') return firstString((value as JsonObject)['@value']);
  return undefined;
}

/** Strings of a property that may be one string, a comma-separated list, a list, or things with names. */
export function stringList(value: unknown, limit = 50): string[] {
  const out: string[] = [];
  const add = (item: unknown): void => {
    if (out.length >= limit) return;
    if (typeof item === 'string') {
      // A semicolon separates too, unless it ends an entity reference (R&amp;D).
      for (const part of item.split(/[,，、]|(?<!&#?\w{1,10});/)) if (part.trim() !== '' && out.length < limit) out.push(part.trim());
    } else if (Array.isArray(item)) {
      for (const inner of item.slice(0, limit)) add(inner);
    } else if (item && typeof item === 'object') {
      const obj = item as JsonObject;
      add(firstString(obj['name']) ?? firstString(obj['@value']));
    }
  };
  add(value);
  return out;
}

/** URLs of a logo or image property: a URL string, an ImageObject (url, contentUrl) or a list. */
export function imageUrls(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.slice(0, 10).flatMap(imageUrls);
  if (value && typeof value === 'object') {
    const obj = value as JsonObject;
    return [obj['url'], obj['contentUrl'], obj['@id']].filter((v): v is string => typeof v === 'string');
  }
  return [];
}
