// The built-in generator: writes a specific, professional outreach email from the research facts without any
// LLM, or renders the user's template. It states only what the facts say: with a domain-only profile it does not
// describe the company. Phrasing varies between leads but is chosen by a hash of the inputs, so the same lead
// always gets the same email.

import { renderTemplate } from '../templates/engine.js';
import type { TemplateValues } from '../templates/engine.js';
import { singleLine } from '../../content/text.js';
import { condenseDescription, endSentence, joinList, personName, stableDigest, tidyBody, tidySubject, truncateAtWord } from './email-text.js';

export interface LeadFacts {
  firstName: string;
  lastName: string;
  email: string;
  domain: string;
  company: {
    name: string;
    description: string | null;
    product_description: string | null;
    industry: string[];
    source: 'site' | 'domain';
  };
  sender: { name: string; company: string; offer: string };
}

export interface GeneratedEmail {
  subject: string;
  body: string;
}

/** Subjects longer than this are shortened (inbox previews cut around 60–80 characters). */
export const MAX_SUBJECT_CHARS = 80;
/** Descriptions given to templates are condensed to this many characters. */
const TEMPLATE_DESCRIPTION_CHARS = 300;
/** The clause that says what the company does, in the built-in email. */
const CLAUSE_CHARS = 160;

/** The variables a template is rendered with. Unknown facts are empty strings, never placeholders. */
export function templateValues(facts: LeadFacts): TemplateValues {
  const firstName = personName(facts.firstName);
  const lastName = personName(facts.lastName);
  const companyName = companyNameOf(facts);
  return {
    firstName,
    lastName,
    fullName: [firstName, lastName].filter(Boolean).join(' '),
    email: facts.email.trim(),
    domain: facts.domain.trim(),
    companyName,
    companyDescription: condenseDescription(facts.company.description, { companyName, maxChars: TEMPLATE_DESCRIPTION_CHARS }) ?? '',
    productDescription: condenseDescription(facts.company.product_description, { companyName, maxChars: TEMPLATE_DESCRIPTION_CHARS }) ?? '',
    industry: industries(facts).join(', '),
    senderName: singleLine(facts.sender.name),
    senderCompany: singleLine(facts.sender.company),
  };
}

/**
 * The email for a lead: the user's template rendered and tidied when one is given, else the built-in email.
 * A template whose subject renders empty gets the built-in subject; one whose body renders empty, the built-in body.
 */
export function generateBuiltinEmail(facts: LeadFacts, template?: { subject: string; body: string }): GeneratedEmail {
  if (template) {
    const values = templateValues(facts);
    const subject = tidySubject(renderTemplate(template.subject, values));
    const body = tidyBody(renderTemplate(template.body, values));
    const fallback = subject === '' || body === '' ? writeEmail(facts) : undefined;
    return { subject: subject || fallback!.subject, body: body || fallback!.body };
  }
  return writeEmail(facts);
}

function companyNameOf(facts: LeadFacts): string {
  return singleLine(facts.company.name) || facts.domain.trim();
}

function industries(facts: LeadFacts): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of facts.company.industry) {
    const keyword = singleLine(raw);
    if (keyword === '' || keyword.length > 40 || seen.has(keyword.toLowerCase())) continue;
    seen.add(keyword.toLowerCase());
    out.push(keyword);
  }
  return out;
}

/** Picks one of `options` by the digest, each choice from its own bytes so choices vary independently. */
function picker(digest: Buffer) {
  let slot = 0;
  return <T>(options: readonly T[]): T => {
    const value = digest.readUInt32BE((slot++ * 4) % (digest.length - 3));
    return options[value % options.length]!;
  };
}

function writeEmail(facts: LeadFacts): GeneratedEmail {
  const first = personName(facts.firstName);
  const company = companyNameOf(facts);
  const senderName = singleLine(facts.sender.name);
  const senderCompany = singleLine(facts.sender.company);
  const offer = singleLine(facts.sender.offer);
  const pick = picker(
    stableDigest(
      facts.firstName,
      facts.lastName,
      facts.email,
      facts.domain,
      facts.company.name,
      facts.company.description ?? '',
      facts.company.product_description ?? '',
      facts.company.industry.join(','),
      facts.company.source,
      facts.sender.name,
      facts.sender.company,
      facts.sender.offer,
    ),
  );

  // What the company does comes only from its description (what its Organization, its home page or its about page
  // says of it). The product description is the page's headlines and first lines, which may be anything, even a
  // news story: without a description the email says nothing about what the company does.
  const whatTheyDo = condenseDescription(facts.company.description, { companyName: company, maxChars: CLAUSE_CHARS });
  const sectors = industries(facts).slice(0, 2).map(lowerFirst); // "Logistics" → "logistics", "SaaS" stays

  const paragraphs: string[] = [];
  paragraphs.push(first ? `Hi ${first},` : 'Hello,');
  paragraphs.push(opening(company, facts.domain.trim(), whatTheyDo, pick));
  paragraphs.push(
    [offerSentence(offer, senderCompany), bridge(company, sectors, whatTheyDo !== undefined, sayableOffer(offer) !== undefined, pick)]
      .filter(Boolean)
      .join(' '),
  );
  paragraphs.push(callToAction(company, pick));
  const signature = [pick(['Best regards,', 'Kind regards,', 'Best,']), senderName, senderCompany].filter(Boolean);
  paragraphs.push(signature.join('\n'));

  return { subject: subject(first, company, senderCompany, pick), body: tidyBody(paragraphs.join('\n\n')) };
}

type Pick = ReturnType<typeof picker>;

function opening(company: string, domain: string, whatTheyDo: string | undefined, pick: Pick): string {
  if (!whatTheyDo) {
    // Only the domain is known: say nothing about what the company does.
    const where = domain && domain.toLowerCase() !== company.toLowerCase() ? ` (${domain})` : '';
    return pick([
      `I came across ${company}${where} and wanted to reach out to you directly.`,
      `I'm reaching out because ${company}${where} looks like a company we would enjoy working with.`,
    ]);
  }
  if (isEnglishStatementAbout(company, whatTheyDo)) {
    // "Acme builds …" reads as a statement of its own; the name is written as the company writes it.
    return `I was reading about your work, and I saw that ${endSentence(company + whatTheyDo.slice(company.length))}`;
  }
  const quoted = `“${endSentence(whatTheyDo)}”`;
  return pick([
    // "The Alaska Airmen's Association" takes no second "the".
    `I had a look at ${/^the\s/i.test(company) ? '' : 'the '}${company} website, which sums up what you do in one line: ${quoted}`,
    `I was reading about ${company}, and one line on your website stood out: ${quoted}`,
    `Your website puts what ${company} does simply: ${quoted}`,
  ]);
}

/**
 * True for "Acme builds …", "Acme Inc. is …": the clause names the company and goes on in English, so it can
 * follow "I saw that". Anything else (another language, a noun phrase) is quoted instead.
 */
function isEnglishStatementAbout(company: string, clause: string): boolean {
  if (!clause.toLowerCase().startsWith(`${company.toLowerCase()} `)) return false;
  const next = clause
    .slice(company.length)
    .trim()
    .split(/\s+/)
    .slice(0, 3)
    .map((w) => w.toLowerCase());
  return next.some((w) => ['is', 'has', 'was', 'helps', 'offers'].includes(w) || (w.endsWith('s') && OFFER_VERBS.has(w.slice(0, -1))));
}

// Verbs an offer may start with ("help publishers …"), in the base form that follows "we".
const OFFER_VERBS = new Set([
  'help',
  'build',
  'make',
  'provide',
  'offer',
  'create',
  'design',
  'develop',
  'run',
  'give',
  'turn',
  'automate',
  'connect',
  'bring',
  'deliver',
  'enable',
  'support',
  'write',
  'produce',
  'sell',
  'manage',
  'find',
  'grow',
  'reduce',
  'cut',
  'save',
  'protect',
  'power',
  'handle',
  'host',
  'train',
  'teach',
  'improve',
  'simplify',
  'streamline',
  'analyze',
  'analyse',
  'track',
  'monitor',
  'secure',
  'migrate',
  'integrate',
  'optimize',
  'optimise',
  'publish',
  'sign',
  'match',
  'source',
  'recruit',
  'hire',
  'ship',
  'plan',
  'organize',
  'organise',
  'translate',
  'localize',
]);

/** One sentence about what the sender offers, shaped to how the offer is written. */
/** The offer without final punctuation, or undefined when it says nothing (empty, punctuation, a lone "an"). */
function sayableOffer(offer: string): string | undefined {
  const body = singleLine(offer).replace(/[\s.!;:,…]+$/u, '');
  if (!/[\p{L}\p{N}]/u.test(body)) return undefined;
  const words = body.split(' ');
  if (words.length === 1) {
    const word = words[0]!.toLowerCase();
    if (/^(?:a|an|the|we|our|we're|we’re)$/.test(word) || OFFER_VERBS.has(word) || OFFER_VERBS.has(word.replace(/s$/, ''))) return undefined;
  }
  return body;
}

function offerSentence(offer: string, senderCompany: string): string {
  const at = senderCompany ? `At ${senderCompany}, ` : '';
  const body = sayableOffer(offer);
  if (body === undefined) {
    return senderCompany
      ? `I work at ${senderCompany}, and I think there may be a good fit between our teams.`
      : 'I think there may be a good fit between our teams.';
  }
  const words = body.split(' ').map((w) => w.toLowerCase());
  const firstWord = words[0]!;
  const lowered = lowerFirst(body);
  const isVerbS = (w: string) => w.endsWith('s') && OFFER_VERBS.has(w.slice(0, -1));
  // "we help …", "our platform turns …"
  if (/^(?:we|we're|we’re|our)$/.test(firstWord)) return `${at}${lowered}.`;
  // "an analytics platform for …"
  if (/^(?:a|an|the)$/.test(firstWord)) return `${at}we offer ${lowered}.`;
  // "help publishers …"
  if (OFFER_VERBS.has(firstWord)) return `${at}we ${lowered}.`;
  // "helps publishers …"
  if (isVerbS(firstWord)) {
    return senderCompany ? `${senderCompany} ${lowered}.` : `We ${firstWord.slice(0, -1)}${body.slice(firstWord.length)}.`;
  }
  // "building data pipelines for …"
  if (firstWord.endsWith('ing') && firstWord.length > 4) return `${at}we focus on ${lowered}.`;
  // "Beacon helps …", "Beacon Analytics turns …": a sentence with its own subject.
  if (words.slice(1, 4).some(isVerbS)) return endSentence(sentenceCaseFirst(body));
  return `${senderCompany ? `Here is what we do at ${senderCompany}` : 'Here is what we do'}: ${endSentence(body)}`;
}

function sentenceCaseFirst(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Lower-cases the first letter unless it starts an acronym or a brand spelled with capitals (API, SaaS, GmbH). */
function lowerFirst(text: string): string {
  if (/^\p{Lu}[\p{Lu}\d]/u.test(text) || /^\p{Lu}\p{Ll}*\p{Lu}/u.test(text.split(/\s/)[0]!)) return text;
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function bridge(company: string, sectors: string[], knowsWhatTheyDo: boolean, hasOffer: boolean, pick: Pick): string {
  if (!hasOffer) return '';
  if (sectors.length > 0) {
    return pick([
      `Since ${company} works in ${joinList(sectors)}, I thought this could be relevant to you.`,
      `For a company in ${joinList(sectors)} like ${company}, I believe this could be genuinely useful.`,
    ]);
  }
  if (knowsWhatTheyDo) {
    return pick([
      `Given what ${company} does, I think this could be a good fit for your team.`,
      `With what you are building at ${company}, I believe this could be genuinely useful.`,
    ]);
  }
  return `I'd love to learn whether this could be useful for ${company}.`;
}

function callToAction(company: string, pick: Pick): string {
  return pick([
    `Would you be open to a short call next week to see whether this could help ${company}? If you are not the right person for this, I'd be grateful for a pointer to whoever is.`,
    `Do you have 15 minutes next week for a quick call? I'd be happy to show you how this could work for ${company}.`,
    `Would it make sense to find 20 minutes next week to talk it through? Just reply with a time that suits you.`,
  ]);
}

function subject(first: string, company: string, senderCompany: string, pick: Pick): string {
  const candidates = [
    first ? `${first}, a quick idea for ${company}` : `A quick idea for ${company}`,
    `An idea for the ${company} team`,
    senderCompany && senderCompany.toLowerCase() !== company.toLowerCase() ? `${company} and ${senderCompany}` : `Quick question for ${company}`,
  ];
  const chosen = pick(candidates);
  if (Array.from(chosen).length <= MAX_SUBJECT_CHARS) return chosen;
  const fitting = candidates.filter((c) => Array.from(c).length <= MAX_SUBJECT_CHARS).sort((a, b) => a.length - b.length);
  if (fitting[0]) return fitting[0];
  // A very long company name: shorten the name itself.
  return `A quick idea for ${truncateAtWord(company, MAX_SUBJECT_CHARS - 'A quick idea for '.length)}`;
}
