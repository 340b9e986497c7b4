import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MAX_PROBLEMS_PER_FIELD,
  MAX_TEMPLATE_BYTES,
  TEMPLATE_VARIABLES,
  renderTemplate,
  suggest,
  templateVariablesUsed,
  validateTemplate,
} from '../../src/leads/templates/engine.js';
import type { TemplateProblem, TemplateValues } from '../../src/leads/templates/engine.js';

const VALUES: TemplateValues = {
  firstName: 'Ada',
  lastName: 'Lovelace',
  fullName: 'Ada Lovelace',
  email: 'ada@analytical.example',
  domain: 'analytical.example',
  companyName: 'Analytical Engines',
  companyDescription: 'Mechanical computing for everyone',
  productDescription: 'The difference engine',
  industry: 'hardware, computing',
  senderName: 'Charles',
  senderCompany: 'Babbage & Co',
};

function bodyProblems(body: string): TemplateProblem[] {
  return validateTemplate({ name: 'Outreach', subject: 'Hello', body });
}

describe('template validation', () => {
  it('accepts every allowed variable, with or without inner spaces', () => {
    const body = TEMPLATE_VARIABLES.map((v, i) => (i % 2 ? `{{${v}}}` : `{{  ${v} }}`)).join('\n');
    assert.deepEqual(validateTemplate({ name: 'All', subject: 'Hi {{ firstName }} from {{senderCompany}}', body }), []);
  });

  it('accepts plain text and an empty subject (the generator then writes the subject)', () => {
    assert.deepEqual(validateTemplate({ name: 'Plain', subject: '', body: 'Hello there, } { }} a { b' }), []);
  });

  it('reports an unknown variable with its position, the allowed names and the closest one', () => {
    const problems = bodyProblems('Dear {{firstName}},\n\nI like what {{companyname}} does.');
    assert.equal(problems.length, 1);
    const [p] = problems;
    assert.equal(p!.field, 'body');
    assert.equal(p!.line, 3);
    assert.equal(p!.column, 13);
    assert.equal(p!.index, 'Dear {{firstName}},\n\nI like what '.length);
    assert.match(p!.message, /^Line 3, column 13: /);
    assert.match(p!.message, /"companyname"/);
    assert.match(p!.message, /Did you mean \{\{companyName\}\}\?/);
    for (const name of TEMPLATE_VARIABLES) assert.ok(p!.message.includes(name), `lists ${name}`);
  });

  it('suggests the intended name for common misspellings and spellings', () => {
    assert.equal(suggest('company_name'), 'companyName');
    assert.equal(suggest('first name'), 'firstName');
    assert.equal(suggest('FIRSTNAME'), 'firstName');
    assert.equal(suggest('senderCompnay'), 'senderCompany');
    assert.equal(suggest('industries'), 'industry');
    assert.equal(suggest('favouriteColour'), undefined);
    assert.equal(suggest('x'), undefined);
    assert.match(bodyProblems('{{ first name }}')[0]!.message, /Did you mean \{\{firstName\}\}/);
  });

  it('gives no suggestion when nothing is close', () => {
    const [p] = bodyProblems('{{favouriteColour}}');
    assert.match(p!.message, /Unknown variable "favouriteColour"/);
    assert.doesNotMatch(p!.message, /Did you mean/);
  });

  it('reports every kind of mustache logic instead of running it', () => {
    const logic = [
      '{{#companyName}}',
      '{{/companyName}}',
      '{{^companyName}}',
      '{{>partial}}',
      '{{{companyName}}}',
      '{{&companyName}}',
      '{{!a comment}}',
      '{{=<% %>=}}',
      '{{<parent}}',
      '{{$block}}',
      '{{ #companyName }}',
    ];
    for (const tag of logic) {
      const problems = bodyProblems(`Hi ${tag} there`);
      assert.equal(problems.length, 1, tag);
      assert.equal(problems[0]!.column, 4, tag);
      assert.match(problems[0]!.message, /template logic/, tag);
      assert.match(problems[0]!.message, /Allowed variables: firstName/, tag);
    }
    assert.match(bodyProblems('{{{companyName}}}')[0]!.message, /triple braces.*Did you mean \{\{companyName\}\}/);
    assert.match(bodyProblems('{{#each items}}')[0]!.message, /a section/);
  });

  it('reports unclosed and empty tags', () => {
    const unclosed = bodyProblems('Hello {{firstName');
    assert.equal(unclosed.length, 1);
    assert.match(unclosed[0]!.message, /Unclosed "\{\{"/);
    assert.match(unclosed[0]!.message, /\\\{\{/); // tells how to write a literal {{
    assert.equal(unclosed[0]!.column, 7);

    // A tag must close on its own line, and a second {{ before }} leaves the first one unclosed.
    const split = bodyProblems('Hi {{firstName\n}} and {{ {{lastName}}');
    assert.deepEqual(
      split.map((p) => [p.line, p.column]),
      [
        [1, 4],
        [2, 8],
      ],
    );

    const empty = bodyProblems('a {{}} b {{   }}');
    assert.equal(empty.length, 2);
    assert.match(empty[0]!.message, /Empty "\{\{\}\}"/);
  });

  it('accepts an escaped literal {{ and renders it as {{', () => {
    const text = 'Write \\{{firstName}} in your template, and \\{{ alone.';
    assert.deepEqual(bodyProblems(text), []);
    assert.equal(renderTemplate(text, VALUES), 'Write {{firstName}} in your template, and {{ alone.');
  });

  it('counts columns in characters, so emoji and accents do not shift positions', () => {
    const [p] = bodyProblems('😀 héllo {{nope}}');
    assert.equal(p!.line, 1);
    assert.equal(p!.column, 9);
    assert.equal(p!.index, '😀 héllo '.length);
  });

  it('counts CRLF line ends as one line break', () => {
    const [p] = bodyProblems('one\r\ntwo\r\n  {{nope}}');
    assert.deepEqual([p!.line, p!.column], [3, 3]);
  });

  it('reports problems in the subject separately from the body', () => {
    const problems = validateTemplate({ name: 'X', subject: 'For {{company}}', body: 'Hi {{firstname}}' });
    assert.deepEqual(
      problems.map((p) => [p.field, p.column]),
      [
        ['subject', 5],
        ['body', 4],
      ],
    );
    assert.match(problems[0]!.message, /Did you mean \{\{companyName\}\}/);
  });

  it('bounds the subject: 500 characters, one line', () => {
    assert.deepEqual(validateTemplate({ name: 'X', subject: 'é'.repeat(500), body: 'b' }), []);
    const long = validateTemplate({ name: 'X', subject: 'é'.repeat(501), body: 'b' });
    assert.equal(long.length, 1);
    assert.match(long[0]!.message, /501 characters.*at most 500/);
    const multiline = validateTemplate({ name: 'X', subject: 'Hello\nthere', body: 'b' });
    assert.deepEqual(
      multiline.map((p) => [p.field, p.line, p.column]),
      [['subject', 1, 6]],
    );
    assert.match(multiline[0]!.message, /single line/);
  });

  it('bounds the body in UTF-8 bytes and requires it', () => {
    assert.deepEqual(bodyProblems('a'.repeat(MAX_TEMPLATE_BYTES)), []);
    const bytes = bodyProblems('é'.repeat(MAX_TEMPLATE_BYTES / 2 + 1)); // fewer characters than the limit, more bytes
    assert.equal(bytes.length, 1);
    assert.match(bytes[0]!.message, new RegExp(`${MAX_TEMPLATE_BYTES + 2} bytes`));
    assert.match(bodyProblems('  \n ')[0]!.message, /body is required/);
  });

  it('requires a name of 1 to 100 characters on one line', () => {
    assert.match(validateTemplate({ name: '   ', subject: '', body: 'b' })[0]!.message, /name is required/);
    assert.deepEqual(validateTemplate({ name: 'ü'.repeat(100), subject: '', body: 'b' }), []);
    assert.match(validateTemplate({ name: 'ü'.repeat(101), subject: '', body: 'b' })[0]!.message, /101 characters/);
    assert.equal(validateTemplate({ name: 'a\nb', subject: '', body: 'b' })[0]!.field, 'name');
  });

  it('caps the number of reported problems on a hostile template', () => {
    const problems = bodyProblems('{{x}} '.repeat(1000));
    assert.equal(problems.length, MAX_PROBLEMS_PER_FIELD + 1);
    assert.match(problems.at(-1)!.message, /and 980 more problems/);
  });
});

describe('template rendering', () => {
  it('substitutes every variable', () => {
    const text = TEMPLATE_VARIABLES.map((v) => `${v}={{ ${v} }}`).join('|');
    const expected = TEMPLATE_VARIABLES.map((v) => `${v}=${VALUES[v]}`).join('|');
    assert.equal(renderTemplate(text, VALUES), expected);
  });

  it('inserts values verbatim: no HTML escaping, no replacement patterns, no second expansion', () => {
    const values = { ...VALUES, companyName: '<b>Smith & "Sons"</b>', firstName: '{{lastName}} $& $1 $$', lastName: 'SHOULD NOT APPEAR' };
    assert.equal(renderTemplate('{{firstName}} / {{companyName}}', values), '{{lastName}} $& $1 $$ / <b>Smith & "Sons"</b>');
  });

  it('keeps text it would refuse as written, so old templates still render', () => {
    assert.equal(renderTemplate('Hi {{nope}} {{#x}}y{{/x}} {{firstName', VALUES), 'Hi {{nope}} {{#x}}y{{/x}} {{firstName');
    assert.equal(renderTemplate('{{{firstName}}}', VALUES), '{{{firstName}}}');
  });

  it('keeps line breaks, unicode and surrounding text exactly', () => {
    const text = 'Grüße, {{firstName}}!\r\n\t— 日本語 {{companyName}} 😀\n';
    assert.equal(renderTemplate(text, VALUES), 'Grüße, Ada!\r\n\t— 日本語 Analytical Engines 😀\n');
  });

  it('lists the variables a template uses', () => {
    assert.deepEqual(templateVariablesUsed('{{companyName}} {{ firstName }} {{companyName}} {{nope}}'), ['companyName', 'firstName']);
  });

  it('renders a 20 KB template with a thousand variables, every one of them', () => {
    const unit = 'Dear {{firstName}} of {{companyName}}, ';
    const units = Math.floor(MAX_TEMPLATE_BYTES / unit.length);
    const text = unit.repeat(units);
    assert.ok(Buffer.byteLength(text) <= MAX_TEMPLATE_BYTES);
    assert.deepEqual(bodyProblems(text), []);
    assert.equal(renderTemplate(text, VALUES), 'Dear Ada of Analytical Engines, '.repeat(units));
  });

  // Linear time is the one property here that only a clock can show. A megabyte takes tens of milliseconds (150 at
  // most when this was written), a quadratic scan of it minutes: the bound of ten seconds is far from both.
  it('stays linear on pathological input (a megabyte of braces, or of variables, in well under the bound)', () => {
    const inputs = [
      'Dear {{firstName}} of {{companyName}}, '.repeat(25_000),
      '{{'.repeat(500_000),
      '{{{'.repeat(350_000),
      `{{${'a'.repeat(1_000_000)}`,
      '\\{{'.repeat(350_000),
      '{{ firstName }'.repeat(70_000),
      `${'{'.repeat(1_000_000)}}}`,
      '{{x}}'.repeat(200_000),
      `{{#${'=}'.repeat(500_000)}x}}`,
      `{{ ${'_ '.repeat(500_000)}}}`,
    ];
    for (const input of inputs) {
      const started = performance.now();
      renderTemplate(input, VALUES);
      validateTemplate({ name: 'x', subject: input.slice(0, 500), body: input.slice(0, MAX_TEMPLATE_BYTES) });
      const ms = performance.now() - started;
      assert.ok(ms < 10_000, `${input.slice(0, 12)}… took ${ms.toFixed(0)} ms`);
    }
  });
});
