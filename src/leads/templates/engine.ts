// Email templates written by users: a logic-less `{{variable}}` engine. Nothing in a template is ever executed;
// the only construct is the substitution of one of TEMPLATE_VARIABLES. A literal `{{` is written `\{{`.
// Parsing is one left-to-right pass without regular expressions, so it takes time linear in the template's length.

export const TEMPLATE_VARIABLES = [
  'firstName',
  'lastName',
  'fullName',
  'email',
  'domain',
  'companyName',
  'companyDescription',
  'productDescription',
  'industry',
  'senderName',
  'senderCompany',
] as const;
export type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];
export type TemplateValues = Record<TemplateVariable, string>;

/** Bound on a body template, in UTF-8 bytes. */
export const MAX_TEMPLATE_BYTES = 20 * 1024;
/** Bound on a subject template, in characters (code points). */
export const MAX_SUBJECT_CHARS = 500;
/** Bound on a template name, in characters (code points). */
export const MAX_NAME_CHARS = 100;
/** At most this many problems are reported per field: enough to fix a template, bounded for a hostile one. */
export const MAX_PROBLEMS_PER_FIELD = 20;

export interface TemplateProblem {
  field: 'subject' | 'body' | 'name';
  message: string;
  /** 1-based line of the problem. */
  line: number;
  /** 1-based column, counted in characters (code points). */
  column: number;
  /** Offset of the problem in the field's text, in UTF-16 code units (a JavaScript string index). */
  index: number;
}

const KNOWN = new Set<string>(TEMPLATE_VARIABLES);
const LITERAL_HINT = 'To write a literal "{{", escape it as "\\{{".';
const ALLOWED_LIST = TEMPLATE_VARIABLES.join(', ');
// Sigils that make a mustache tag logic (sections, inverted sections, partials, comments, unescaped output,
// delimiter changes, template inheritance). None of them is supported: they are reported, never interpreted.
const LOGIC_SIGILS: Record<string, string> = {
  '#': 'a section',
  '/': 'a section end',
  '^': 'an inverted section',
  '>': 'a partial',
  '<': 'a parent template',
  $: 'a block',
  '!': 'a comment',
  '&': 'unescaped output',
  '=': 'a delimiter change',
  '{': 'triple braces',
};

type Segment = { kind: 'text'; text: string } | { kind: 'variable'; name: TemplateVariable };

interface Parsed {
  segments: Segment[];
  /** The first problems, up to the limit given to parse. */
  problems: { index: number; message: string }[];
  /** All problems, including those past the limit. */
  problemCount: number;
}

/**
 * Splits a template into literal text and variables. Anything that is not a valid `{{knownVariable}}` is kept as
 * literal text (so rendering never fails) and reported as a problem (so saving does).
 */
function parse(text: string, maxProblems: number): Parsed {
  const segments: Segment[] = [];
  const problems: Parsed['problems'] = [];
  let problemCount = 0;
  // Messages (and their suggestions) are only written for the problems that will be reported.
  const report = (index: number, message: () => string) => {
    if (problemCount++ < maxProblems) problems.push({ index, message: message() });
  };
  let literal = '';
  let chunkStart = 0; // start of the plain text not yet copied into `literal`
  let i = 0;
  const n = text.length;
  const flush = (upTo: number) => {
    literal += text.slice(chunkStart, upTo);
  };

  while (i < n) {
    const at = text.indexOf('{{', i);
    if (at < 0) break;
    // `\{{` is a literal `{{`.
    if (at > 0 && text.charCodeAt(at - 1) === 0x5c /* \ */) {
      flush(at - 1);
      literal += '{{';
      i = chunkStart = at + 2;
      continue;
    }
    flush(at);
    const tag = scanTag(text, at);
    i = chunkStart = tag.end;
    const raw = text.slice(at, tag.end);
    if (tag.kind === 'unclosed') {
      report(at, () => `Unclosed "{{": every "{{" needs a "}}" on the same line. ${LITERAL_HINT}`);
      literal += raw;
      continue;
    }
    const inner = tag.inner.trim();
    const sigil = tag.triple ? '{' : (inner[0] ?? '');
    if (sigil in LOGIC_SIGILS) {
      report(at, () => {
        const name = trimEndChars(tag.triple ? inner : inner.slice(1), '=}').trim();
        const suggestion = name === '' ? undefined : suggest(name);
        return (
          `"${shorten(raw)}" is template logic (${LOGIC_SIGILS[sigil]}), which templates do not have: only ` +
          `variables like {{companyName}} are filled in.` +
          (suggestion ? ` Did you mean {{${suggestion}}}?` : '') +
          ` Allowed variables: ${ALLOWED_LIST}.`
        );
      });
      literal += raw;
    } else if (inner === '') {
      report(at, () => `Empty "${raw}": name a variable. Allowed variables: ${ALLOWED_LIST}.`);
      literal += raw;
    } else if (KNOWN.has(inner)) {
      if (literal !== '') segments.push({ kind: 'text', text: literal });
      literal = '';
      segments.push({ kind: 'variable', name: inner as TemplateVariable });
    } else {
      report(at, () => {
        const suggestion = suggest(inner);
        return (
          `Unknown variable "${shorten(inner)}" in "${shorten(raw)}".` +
          (suggestion ? ` Did you mean {{${suggestion}}}?` : '') +
          ` Allowed variables: ${ALLOWED_LIST}.`
        );
      });
      literal += raw;
    }
  }
  flush(n);
  if (literal !== '') segments.push({ kind: 'text', text: literal });
  return { segments, problems, problemCount };
}

type Tag = { kind: 'unclosed'; end: number } | { kind: 'tag'; inner: string; triple: boolean; end: number };

/**
 * Reads the tag that opens at `open` (text[open..open+1] is `{{`). A tag ends at the first `}}` on its line; a
 * newline, another `{{` or the end of the text first means the tag is unclosed, and scanning resumes there, so
 * no character is scanned twice.
 */
function scanTag(text: string, open: number): Tag {
  const triple = text.charCodeAt(open + 2) === 0x7b;
  let j = open + (triple ? 3 : 2);
  const n = text.length;
  while (j < n) {
    const c = text.charCodeAt(j);
    if (c === 0x0a || c === 0x0d) return { kind: 'unclosed', end: j };
    if (c === 0x7b && text.charCodeAt(j + 1) === 0x7b) return { kind: 'unclosed', end: j };
    if (c === 0x7d && text.charCodeAt(j + 1) === 0x7d) {
      let end = j + 2;
      // Swallow the third brace of `{{{x}}}` so the whole tag is reported once.
      if (triple && text.charCodeAt(end) === 0x7d) end++;
      return { kind: 'tag', inner: text.slice(open + (triple ? 3 : 2), j), triple, end };
    }
    j++;
  }
  return { kind: 'unclosed', end: n };
}

function trimEndChars(s: string, chars: string): string {
  let end = s.length;
  while (end > 0 && chars.includes(s[end - 1]!)) end--;
  return s.slice(0, end);
}

/** The allowed variable closest to `name`, or undefined when none is plausibly meant. */
export function suggest(name: string): TemplateVariable | undefined {
  if (name.length === 0 || name.length > 40) return undefined;
  const normalized = name.toLowerCase().replace(/[\s_.-]+/g, '');
  if (normalized.length === 0) return undefined;
  // "company" → companyName: a clear start of a name.
  if (normalized.length >= 4) {
    const prefixed = TEMPLATE_VARIABLES.find((candidate) => candidate.toLowerCase().startsWith(normalized));
    if (prefixed) return prefixed;
  }
  let best: TemplateVariable | undefined;
  let bestDistance = Infinity;
  for (const candidate of TEMPLATE_VARIABLES) {
    const distance = levenshtein(normalized, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  const tolerance = Math.max(2, Math.floor(Math.max(normalized.length, best?.length ?? 0) / 3));
  return bestDistance <= tolerance ? best : undefined;
}

function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, k) => k);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}

function shorten(s: string, max = 60): string {
  const chars = Array.from(s);
  return chars.length <= max ? s : `${chars.slice(0, max).join('')}…`;
}

/** Line and column (both 1-based, the column in code points) of a UTF-16 offset. */
function position(text: string, index: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let k = 0; k < index; k++) {
    const c = text.charCodeAt(k);
    if (c === 0x0a || (c === 0x0d && text.charCodeAt(k + 1) !== 0x0a)) {
      line++;
      lineStart = k + 1;
    }
  }
  let column = 1;
  for (let k = lineStart; k < index; k++) {
    const c = text.charCodeAt(k);
    // The low half of a surrogate pair does not start a new character.
    const lowHalf = c >= 0xdc00 && c <= 0xdfff && k > lineStart && isHighSurrogate(text.charCodeAt(k - 1));
    if (!lowHalf) column++;
  }
  return { line, column };
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function codePointLength(s: string): number {
  let count = 0;
  for (const _ of s) count++;
  return count;
}

function problemsOf(field: TemplateProblem['field'], text: string): TemplateProblem[] {
  const { problems: found, problemCount } = parse(text, MAX_PROBLEMS_PER_FIELD);
  const problems = found.map((p) => {
    const at = position(text, p.index);
    return { field, message: `Line ${at.line}, column ${at.column}: ${p.message}`, ...at, index: p.index };
  });
  if (problemCount > found.length) {
    const last = problems[problems.length - 1]!;
    problems.push({ ...last, message: `…and ${problemCount - found.length} more problems in the ${field}.` });
  }
  return problems;
}

function fieldProblem(field: TemplateProblem['field'], text: string, index: number, message: string): TemplateProblem {
  return { field, message, ...position(text, index), index };
}

/** Every problem of a template, in field order (name, subject, body); an empty list means it may be saved. */
export function validateTemplate(input: { name: string; subject: string; body: string }): TemplateProblem[] {
  const problems: TemplateProblem[] = [];
  const { name, subject, body } = input;

  const nameLength = codePointLength(name.trim());
  if (nameLength === 0) problems.push(fieldProblem('name', name, 0, 'The name is required.'));
  else if (nameLength > MAX_NAME_CHARS) {
    problems.push(fieldProblem('name', name, 0, `The name is ${nameLength} characters long; at most ${MAX_NAME_CHARS} are allowed.`));
  }
  const nameBreak = firstLineBreak(name);
  if (nameBreak >= 0) problems.push(fieldProblem('name', name, nameBreak, 'The name must be a single line.'));

  const subjectLength = codePointLength(subject);
  if (subjectLength > MAX_SUBJECT_CHARS) {
    problems.push(fieldProblem('subject', subject, 0, `The subject is ${subjectLength} characters long; at most ${MAX_SUBJECT_CHARS} are allowed.`));
  } else {
    const subjectBreak = firstLineBreak(subject);
    if (subjectBreak >= 0) problems.push(fieldProblem('subject', subject, subjectBreak, 'The subject must be a single line.'));
    problems.push(...problemsOf('subject', subject));
  }

  const bodyBytes = Buffer.byteLength(body, 'utf8');
  if (bodyBytes > MAX_TEMPLATE_BYTES) {
    problems.push(fieldProblem('body', body, 0, `The body is ${bodyBytes} bytes long; at most ${MAX_TEMPLATE_BYTES} bytes (UTF-8) are allowed.`));
  } else if (body.trim() === '') {
    problems.push(fieldProblem('body', body, 0, 'The body is required.'));
  } else {
    problems.push(...problemsOf('body', body));
  }
  return problems;
}

function firstLineBreak(s: string): number {
  const lf = s.indexOf('\n');
  const cr = s.indexOf('\r');
  if (lf < 0) return cr;
  if (cr < 0) return lf;
  return Math.min(lf, cr);
}

/**
 * Substitutes the variables of `text` with `values`, verbatim (no escaping: emails are plain text) and in one pass
 * (a value that itself contains `{{…}}` is not expanded again). Text that validateTemplate would refuse is left
 * as it is written, so a template saved before a rule changed still renders.
 */
export function renderTemplate(text: string, values: TemplateValues): string {
  const { segments } = parse(text, 0);
  let out = '';
  for (const segment of segments) out += segment.kind === 'text' ? segment.text : (values[segment.name] ?? '');
  return out;
}

/** The variables a template uses, each once, in order of first use. */
export function templateVariablesUsed(text: string): TemplateVariable[] {
  const seen = new Set<TemplateVariable>();
  for (const segment of parse(text, 0).segments) if (segment.kind === 'variable') seen.add(segment.name);
  return [...seen];
}
