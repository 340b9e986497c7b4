// The business-email check of the lead pipeline: a practical address syntax check (RFC 5321/5322 dot-atom local
// part, host name domain, no IP literals, no quoted local parts), then the domain and each parent domain against a
// list of free-mail providers (npm `email-providers`) and of disposable services (npm `mailchecker`), and,
// when a resolver is given, a look for a mail server.

import { createRequire } from 'node:module';
import { domainToASCII, domainToUnicode } from 'node:url';
import { getPublicSuffix } from 'tldts';

export type EmailRejection = 'invalid_syntax' | 'free_provider' | 'disposable' | 'no_mail_server';

export interface EmailCheck {
  ok: boolean;
  /** Trimmed, NFC-normalised, the domain lower-cased (Unicode form for IDN domains). */
  email: string;
  /** ASCII (punycode) lower-case domain; '' when the address is invalid. */
  domain: string;
  reason?: EmailRejection;
  /** A sentence for humans, set when `ok` is false. */
  message?: string;
  /** The list entry that matched, for free_provider and disposable (e.g. yahoo.co.uk for mail.yahoo.co.uk). */
  matched?: string;
}

/** DNS look-ups used when the MX check is on; node:dns `promises` (or a `Resolver`) fits. */
export interface MailServerResolver {
  resolveMx(domain: string): Promise<unknown[]>;
  /** When present, a domain without MX but with an address still receives mail (RFC 5321 implicit MX). */
  resolve4?(domain: string): Promise<unknown[]>;
  resolve6?(domain: string): Promise<unknown[]>;
}

export interface EmailCheckerOptions {
  mx?: MailServerResolver | undefined;
  /** Deadline for the DNS look-ups; a slow or failing DNS does not reject the address (default 3000 ms). */
  mxTimeoutMs?: number;
}

export interface EmailChecker {
  check(email: string): Promise<EmailCheck>;
}

export const MAX_INPUT_LENGTH = 1000;
export const MAX_LOCAL_PART_OCTETS = 64;
// RFC 5321 allows 255 octets for a domain on the wire, which is 253 characters written out.
export const MAX_DOMAIN_LENGTH = 253;
export const MAX_ADDRESS_OCTETS = 254;

const require = createRequire(import.meta.url);
const freeDomainList = require('email-providers/all.json') as string[];
const mailchecker = require('mailchecker') as { blacklist(): Set<string> };

/** RFC 2606's example domains are nobody's mail provider; the list carries example.com by mistake. */
const RESERVED_EXAMPLES = new Set(['example.com', 'example.net', 'example.org']);

/** Loaded once per process: about 8,700 free-mail domains and 56,000 disposable ones. */
const FREE_PROVIDERS: ReadonlySet<string> = new Set(freeDomainList.map((d) => d.trim().toLowerCase()).filter((d) => !RESERVED_EXAMPLES.has(d)));
const DISPOSABLE: ReadonlySet<string> = new Set(mailchecker.blacklist());

/** How many domains each list holds (both in the thousands; a tiny number means a broken install). */
export function emailListSizes(): { freeProviders: number; disposable: number } {
  return { freeProviders: FREE_PROVIDERS.size, disposable: DISPOSABLE.size };
}

/**
 * Whether a domain is a public suffix, a registry open to anyone (net.ua, com.ar, ddns.net, by the Public Suffix List
 * with its private section): each name below it has its own owner, so a list entry that is one matches only exactly,
 * never as a parent domain.
 */
function isPublicSuffix(domain: string): boolean {
  return getPublicSuffix(domain, { allowPrivateDomains: true }) === domain;
}

const ATOM_CHAR = String.raw`[A-Za-z0-9!#$%&'*+/=?^_\x60{|}~-]|[^\x00-\x7F\p{C}\p{Z}]`;
const DOT_ATOM = new RegExp(String.raw`^(?:${ATOM_CHAR})+(?:\.(?:${ATOM_CHAR})+)*$`, 'u');
// Characters a domain may be written with before IDNA conversion: LDH in ASCII, anything non-ASCII (the IDNA
// mapping refuses what it must). Without this, the URL host parser would accept "a.com/x", "%41" or "0x7f.1".
const RAW_DOMAIN = /^(?:[A-Za-z0-9.-]|[^\x00-\x7F\s\p{Cc}])+$/u;
// IDNA maps the ideographic and full-width full stops to ".".
const FULL_STOPS = new Set(['.', '\u3002', '\uFF0E', '\uFF61']);
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const TOP_LABEL = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

const utf8Length = (text: string): number => Buffer.byteLength(text, 'utf8');

interface Parsed {
  local: string;
  asciiDomain: string;
  email: string;
}

function invalid(email: string, message: string): EmailCheck {
  return { ok: false, email, domain: '', reason: 'invalid_syntax', message };
}

function parseAddress(input: string): Parsed | EmailCheck {
  if (input.length > MAX_INPUT_LENGTH) return invalid(input.slice(0, 254), 'The email address is too long.');
  const email = input.normalize('NFC').trim();
  if (email === '') return invalid(email, 'The email address is empty.');
  const at = email.lastIndexOf('@');
  if (at === -1) return invalid(email, 'The email address has no @.');
  if (email.indexOf('@') !== at) return invalid(email, 'The email address must contain exactly one @.');
  const local = email.slice(0, at);
  let rawDomain = email.slice(at + 1);

  if (local === '') return invalid(email, 'The email address has nothing before the @.');
  if (/\s/u.test(local)) return invalid(email, 'The email address must not contain spaces.');
  if (local.startsWith('"')) return invalid(email, 'Quoted local parts are not accepted.');
  if (local.startsWith('.') || local.endsWith('.')) {
    return invalid(email, 'The part before the @ must not start or end with a dot.');
  }
  if (local.includes('..')) return invalid(email, 'The part before the @ must not contain two dots in a row.');
  if (!DOT_ATOM.test(local)) return invalid(email, 'The part before the @ contains characters an address cannot have.');
  if (utf8Length(local) > MAX_LOCAL_PART_OCTETS) {
    return invalid(email, `The part before the @ is longer than ${MAX_LOCAL_PART_OCTETS} characters.`);
  }

  if (rawDomain === '') return invalid(email, 'The email address has no domain after the @.');
  if (rawDomain.startsWith('[')) return invalid(email, 'IP address literals are not accepted as email domains.');
  if (/\s/u.test(rawDomain)) return invalid(email, 'The email address must not contain spaces.');
  // "acme.com." names the same host as "acme.com" (the DNS root); one trailing dot is dropped, not refused.
  if (FULL_STOPS.has(rawDomain.slice(-1))) rawDomain = rawDomain.slice(0, -1);
  if (!RAW_DOMAIN.test(rawDomain)) return invalid(email, 'The domain contains characters a domain cannot have.');
  if (rawDomain.length > MAX_DOMAIN_LENGTH * 2) return invalid(email, 'The domain is too long.');

  const asciiDomain = domainToASCII(rawDomain);
  if (asciiDomain === '') return invalid(email, 'The domain is not a valid (internationalized) domain name.');
  if (asciiDomain.length > MAX_DOMAIN_LENGTH) {
    return invalid(email, `The domain is longer than ${MAX_DOMAIN_LENGTH} characters.`);
  }
  const labels = asciiDomain.split('.');
  if (labels.length < 2) return invalid(email, 'The domain must contain a dot, as in example.com.');
  if (!labels.every((label) => LABEL.test(label))) {
    return invalid(email, 'The domain has an empty or invalid part (labels are letters, digits and inner hyphens).');
  }
  if (!TOP_LABEL.test(labels[labels.length - 1]!)) {
    return invalid(email, 'The domain does not end in a valid top-level domain (IP addresses are not accepted).');
  }
  if (utf8Length(local) + 1 + asciiDomain.length > MAX_ADDRESS_OCTETS) {
    return invalid(email, `The email address is longer than ${MAX_ADDRESS_OCTETS} characters.`);
  }
  return { local, asciiDomain, email: `${local}@${domainToUnicode(asciiDomain) || asciiDomain}` };
}

/** The domain itself, then each parent that is still a domain (mail.yahoo.co.uk, yahoo.co.uk, co.uk). */
function selfAndParents(domain: string): string[] {
  const labels = domain.split('.');
  const out: string[] = [];
  for (let i = 0; i < labels.length - 1; i++) out.push(labels.slice(i).join('.'));
  return out;
}

function findListed(domain: string, list: ReadonlySet<string>): string | undefined {
  return selfAndParents(domain).find((candidate) => list.has(candidate) && (candidate === domain || !isPublicSuffix(candidate)));
}

/** Which list a domain is on; disposable wins when a domain is on both (mailinator.com is). */
export function classifyDomain(asciiDomain: string): { reason: 'disposable' | 'free_provider'; matched: string } | null {
  const disposable = findListed(asciiDomain, DISPOSABLE);
  if (disposable) return { reason: 'disposable', matched: disposable };
  const free = findListed(asciiDomain, FREE_PROVIDERS);
  if (free) return { reason: 'free_provider', matched: free };
  return null;
}

type Lookup = 'found' | 'none' | 'unknown';

async function lookup(run: () => Promise<unknown[]>): Promise<Lookup | 'nxdomain'> {
  try {
    const records = await run();
    return records.length > 0 ? 'found' : 'none';
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    if (code === 'ENOTFOUND' || code === 'NXDOMAIN') return 'nxdomain';
    return code === 'ENODATA' ? 'none' : 'unknown';
  }
}

/** RFC 7505 "null MX": a single record whose exchange is the root says the domain accepts no mail. */
function isNullMx(records: unknown[]): boolean {
  return (
    records.length > 0 &&
    records.every((r) => {
      const exchange = (r as { exchange?: unknown } | null)?.exchange;
      return exchange === '' || exchange === '.';
    })
  );
}

/** true: receives mail; false: certainly does not; DNS trouble counts as true (an outage must not reject leads). */
async function hasMailServer(resolver: MailServerResolver, domain: string): Promise<boolean> {
  let mxRecords: unknown[] = [];
  const mx = await lookup(async () => (mxRecords = await resolver.resolveMx(domain)));
  if (mx === 'found') return !isNullMx(mxRecords);
  if (mx === 'unknown') return true;
  if (mx === 'nxdomain') return false;
  const addressLookups = [resolver.resolve4, resolver.resolve6]
    .filter((fn): fn is (d: string) => Promise<unknown[]> => typeof fn === 'function')
    .map((fn) => lookup(() => fn.call(resolver, domain)));
  const addresses = await Promise.all(addressLookups);
  return addresses.includes('found') || addresses.includes('unknown');
}

async function withDeadline<T>(work: Promise<T>, ms: number, onTimeout: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(onTimeout), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

export function createEmailChecker(options: EmailCheckerOptions = {}): EmailChecker {
  const resolver = options.mx;
  const mxTimeoutMs = options.mxTimeoutMs ?? 3000;

  async function check(input: string): Promise<EmailCheck> {
    const parsed = parseAddress(typeof input === 'string' ? input : '');
    if (!('asciiDomain' in parsed)) return parsed;
    const { email, asciiDomain: domain } = parsed;

    const listed = classifyDomain(domain);
    if (listed) {
      const what = listed.reason === 'disposable' ? 'a disposable email service' : 'a free email provider';
      return {
        ok: false,
        email,
        domain,
        reason: listed.reason,
        matched: listed.matched,
        message: `${domainToUnicode(listed.matched) || listed.matched} is ${what}; please use a business email address.`,
      };
    }

    if (resolver) {
      const receivesMail = await withDeadline(hasMailServer(resolver, domain), mxTimeoutMs, true);
      if (!receivesMail) {
        return {
          ok: false,
          email,
          domain,
          reason: 'no_mail_server',
          message: `${domain} has no mail server (no MX or address record).`,
        };
      }
    }
    return { ok: true, email, domain };
  }

  return { check };
}
