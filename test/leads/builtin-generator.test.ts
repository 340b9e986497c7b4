import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_SUBJECT_CHARS, generateBuiltinEmail, templateValues } from '../../src/leads/generation/builtin.js';
import type { GeneratedEmail, LeadFacts } from '../../src/leads/generation/builtin.js';
import { condenseDescription, personName, sentenceCase, splitSentences, tidyBody } from '../../src/leads/generation/email-text.js';
import { TEMPLATE_VARIABLES } from '../../src/leads/templates/engine.js';

const SENDER = { name: 'Dana Smith', company: 'Beacon Analytics', offer: 'help B2B sales teams research accounts and write first emails in minutes' };

function facts(
  overrides: Partial<Omit<LeadFacts, 'company' | 'sender'>> & { company?: Partial<LeadFacts['company']>; sender?: Partial<LeadFacts['sender']> } = {},
): LeadFacts {
  return {
    firstName: 'Maria',
    lastName: 'Gonzalez',
    email: 'maria@acme-robotics.com',
    domain: 'acme-robotics.com',
    ...overrides,
    company: {
      name: 'Acme Robotics',
      description: 'Acme Robotics builds autonomous forklifts for mid-sized warehouses.',
      product_description: 'Forklift fleet software. Pallet-handling robots.',
      industry: ['Logistics', 'Robotics'],
      source: 'site',
      ...overrides.company,
    },
    sender: { ...SENDER, ...overrides.sender },
  };
}

/** Things a generated email must never contain, whatever the input. */
function assertClean(email: GeneratedEmail): void {
  for (const text of [email.subject, email.body]) {
    assert.doesNotMatch(text, /undefined|null|NaN|\[object|\{\{|\}\}|lorem ipsum|\[[A-Z][a-z]+ ?[A-Za-z]*\]/i, text);
    assert.doesNotMatch(text, / {2,}|[ \t]$|\n{3,}/m, 'tidy whitespace');
    assert.doesNotMatch(text, /\.\.|\s[.,]|,,/, 'no stray punctuation');
  }
  assert.doesNotMatch(email.subject, /\n/);
  assert.ok(Array.from(email.subject).length <= MAX_SUBJECT_CHARS, email.subject);
  assert.equal(email.body, email.body.trim());
}

describe('built-in generator without a template', () => {
  it('names the person, the company, what it does and the offer, asks for a call and signs', () => {
    const email = generateBuiltinEmail(facts());
    assertClean(email);
    assert.match(email.body, /^Hi Maria,\n\n/);
    assert.match(email.body, /Acme Robotics builds autonomous forklifts for mid-sized warehouses\./);
    assert.match(email.body, /At Beacon Analytics, we help B2B sales teams research accounts and write first emails in minutes\./);
    assert.match(email.body, /call/);
    assert.match(email.body, /\?/); // a question the reader can answer
    assert.match(email.body, /\n\n(Best regards|Kind regards|Best),\nDana Smith\nBeacon Analytics$/);
    assert.match(email.subject, /Acme Robotics/);
    const paragraphs = email.body.split('\n\n');
    assert.ok(paragraphs.length >= 5, 'greeting, opening, offer, call to action, signature');
    const words = email.body.split(/\s+/).length;
    assert.ok(words > 50 && words < 170, `a short email (${words} words)`);
  });

  it('is deterministic for the same inputs', () => {
    const a = generateBuiltinEmail(facts());
    const b = generateBuiltinEmail(structuredClone(facts()));
    assert.deepEqual(a, b);
  });

  it('varies its phrasing between leads (chosen by a hash of the inputs, not at random)', () => {
    const names = ['Maria', 'Tom', 'Aiko', 'Lars', 'Fatima', 'Pierre', 'Chen', 'Olu', 'Sara', 'Ivan', 'Noor', 'Ben'];
    const subjects = new Set<string>();
    const openings = new Set<string>();
    for (const firstName of names) {
      const email = generateBuiltinEmail(facts({ firstName, company: { description: 'Autonomous forklifts for mid-sized warehouses.' } }));
      assertClean(email);
      subjects.add(email.subject.replace(firstName, 'X'));
      openings.add(email.body.split('\n\n')[1]!);
      assert.deepEqual(email, generateBuiltinEmail(facts({ firstName, company: { description: 'Autonomous forklifts for mid-sized warehouses.' } })));
    }
    assert.ok(subjects.size > 1, 'more than one subject form');
    assert.ok(openings.size > 1, 'more than one opening');
  });

  it('writes no second "the" before a name that starts with one', () => {
    const bodies = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map(
      (first) =>
        generateBuiltinEmail(
          facts({ firstName: first, company: { name: "The Alaska Airmen's Association", description: 'A voice for general aviation in Alaska.' } }),
        ).body,
    );
    assert.ok(
      bodies.some((body) => body.includes("at The Alaska Airmen's Association website")),
      'the variant that names the website was written',
    );
    for (const body of bodies) assert.doesNotMatch(body, /\bthe The\b/);
  });

  it('quotes a description that is not a statement about the company', () => {
    const email = generateBuiltinEmail(facts({ company: { description: 'The all-in-one fleet platform for warehouse robots | Acme Robotics' } }));
    assertClean(email);
    assert.match(email.body, /“The all-in-one fleet platform for warehouse robots\.”/);
  });

  it('writes naturally from a domain-only profile without inventing what the company does', () => {
    const email = generateBuiltinEmail(
      facts({ company: { name: 'Acme Robotics', description: null, product_description: null, industry: [], source: 'domain' } }),
    );
    assertClean(email);
    assert.match(email.body, /^Hi Maria,/);
    assert.match(email.body, /Acme Robotics \(acme-robotics\.com\)/);
    assert.match(email.body, /we help B2B sales teams/);
    assert.doesNotMatch(email.body, /website|“|forklift|works in|what you do|what .* does/i);
    assert.match(email.subject, /Acme Robotics/);
  });

  it('says what the company does only from its description, never from the product text; the domain names an unnamed company', () => {
    // The product description is the page's headlines and first lines (on an article, a news story), not a
    // statement of what the company does: without a usable description the email says nothing about it.
    const email = generateBuiltinEmail(
      facts({
        company: {
          name: '',
          description: 'Welcome to our website! Read more…',
          product_description: 'Cloud backup for dental clinics. Secure and simple.',
        },
      }),
    );
    assertClean(email);
    assert.doesNotMatch(email.body, /Cloud backup|“|website|what you do/i);
    assert.match(email.body, /acme-robotics\.com/);
    assert.doesNotMatch(email.body, /Welcome to our website|Read more/);
    const described = generateBuiltinEmail(
      facts({ company: { description: 'Cloud backup for dental clinics.', product_description: 'Breaking: a merger.' } }),
    );
    assert.match(described.body, /Cloud backup for dental clinics\./);
    assert.doesNotMatch(described.body, /merger/);
  });

  it('condenses a long description to its main clause, without trailing junk', () => {
    const long =
      'The all-in-one warehouse automation platform for third-party logistics providers and retailers, with ' +
      'autonomous forklifts, pallet-handling robots, fleet management software, predictive maintenance, real-time ' +
      'dashboards and integrations with every major WMS and ERP on the market today… Read more »';
    const email = generateBuiltinEmail(facts({ company: { description: long } }));
    assertClean(email);
    const quoted = /“([^”]+)”/.exec(email.body)?.[1];
    assert.equal(quoted, 'The all-in-one warehouse automation platform for third-party logistics providers and retailers.');
    assert.doesNotMatch(email.body, /Read more|»|predictive maintenance/);
  });

  it('cuts a long description without clause boundaries at a word, never mid-word or on "and"', () => {
    const long = `We make ${'very '.repeat(20)}good robots and software for warehouses and distribution centres and ports and airports worldwide`;
    const clause = condenseDescription(long, { companyName: 'Acme', maxChars: 100 })!;
    assert.ok(Array.from(clause).length <= 100, clause);
    assert.doesNotMatch(clause, /\b(and|for|the)$/);
    assert.ok(long.startsWith(clause), 'a prefix of the original, cut at a word');
  });

  it('keeps non-English text and names intact', () => {
    const german = generateBuiltinEmail(
      facts({
        firstName: 'jürgen',
        lastName: 'WEISS',
        email: 'j@mueller-bau.de',
        domain: 'mueller-bau.de',
        company: {
          name: 'Müller Bau GmbH',
          description:
            'Willkommen bei Müller Bau! Wir planen und bauen energieeffiziente Wohnhäuser in Süddeutschland – seit über 40 Jahren. Mehr erfahren…',
          industry: ['Bauwesen'],
        },
      }),
    );
    assertClean(german);
    assert.match(german.body, /^Hi Jürgen,/);
    assert.match(german.body, /“Wir planen und bauen energieeffiziente Wohnhäuser in Süddeutschland – seit über 40 Jahren\.”/);
    assert.match(german.body, /Müller Bau GmbH/);
    assert.match(german.body, /works in bauwesen|company in bauwesen/);

    const japanese = generateBuiltinEmail(
      facts({
        firstName: '健',
        lastName: '佐藤',
        company: {
          name: '佐藤工業',
          description: '佐藤工業は、精密金属部品の製造を専門とする企業です。創業以来、品質にこだわっています。',
          industry: [],
        },
      }),
    );
    assertClean(japanese);
    assert.match(japanese.body, /^Hi 健,/);
    assert.match(japanese.body, /“佐藤工業は、精密金属部品の製造を専門とする企業です。”/);

    const french = generateBuiltinEmail(
      facts({ firstName: 'Zoë', company: { name: 'Dupont', description: 'Dupont conçoit des logiciels de comptabilité pour les artisans.' } }),
    );
    assertClean(french);
    assert.match(french.body, /“Dupont conçoit des logiciels de comptabilité pour les artisans\.”/); // quoted, not "I saw that Dupont conçoit"
    assert.match(french.body, /^Hi Zoë,/);
  });

  it('shapes the offer sentence to how the offer is written', () => {
    const cases: [string, RegExp][] = [
      ['help publishers grow subscriptions', /At Beacon Analytics, we help publishers grow subscriptions\./],
      ['An AI research assistant for sales teams.', /At Beacon Analytics, we offer an AI research assistant for sales teams\./],
      ['We turn websites into lead lists', /At Beacon Analytics, we turn websites into lead lists\./],
      ['Our platform finds the right contact at every account', /At Beacon Analytics, our platform finds the right contact/],
      ['helps sales teams book meetings', /Beacon Analytics helps sales teams book meetings\./],
      ['building data pipelines for retailers', /At Beacon Analytics, we focus on building data pipelines for retailers\./],
      ['Beacon helps teams book meetings', /Beacon helps teams book meetings\./],
      ['CRM enrichment', /Here is what we do at Beacon Analytics: CRM enrichment\./],
      ['', /I work at Beacon Analytics, and I think there may be a good fit between our teams\./],
    ];
    for (const [offer, expected] of cases) {
      const email = generateBuiltinEmail(facts({ sender: { offer } }));
      assertClean(email);
      assert.match(email.body, expected, offer);
    }
  });

  it('copes with missing names and sender details', () => {
    const email = generateBuiltinEmail(facts({ firstName: ' ', lastName: '', sender: { name: '', company: '', offer: '' } }));
    assertClean(email);
    assert.match(email.body, /^Hello,\n/);
    assert.match(email.body, /(Best regards|Kind regards|Best),$/);
  });

  it('keeps the subject within bounds for a very long company name', () => {
    const name = 'The International Association of Independent Warehouse Automation and Robotics Providers of Northern Europe';
    for (const firstName of ['Maria', 'Tom', 'Aiko', 'Bartholomew-Maximilian']) {
      const email = generateBuiltinEmail(facts({ firstName, company: { name } }));
      assertClean(email);
      assert.ok(Array.from(email.subject).length <= MAX_SUBJECT_CHARS, email.subject);
      assert.doesNotMatch(email.subject, /\b(of|and|the)$/);
    }
  });

  it('never produces junk across a matrix of odd inputs', () => {
    const descriptions = [
      null,
      '',
      '   ',
      'Acme Robotics',
      'Welcome!',
      'HOME | ACME ROBOTICS',
      '<p>Forklifts</p>',
      '…',
      'Robots (for warehouses',
      'A'.repeat(5000),
    ];
    const offers = ['', 'x', 'help', '...', 'an'];
    for (const description of descriptions) {
      for (const offer of offers) {
        assertClean(generateBuiltinEmail(facts({ company: { description, product_description: null }, sender: { offer } })));
      }
    }
  });
});

describe('built-in generator with a template', () => {
  const template = {
    subject: '  {{companyName}}   and {{senderCompany}}  ',
    body: '\r\nHi {{firstName}},  \r\n\r\n\r\n\r\nI read that {{companyDescription}}.\n   - indented line   stays indented\nIndustry: {{industry}}\n\n{{senderName}}\n\n\n',
  };

  it('renders the subject and body templates and tidies the whitespace', () => {
    const email = generateBuiltinEmail(facts(), template);
    assert.equal(email.subject, 'Acme Robotics and Beacon Analytics');
    assert.equal(
      email.body,
      'Hi Maria,\n\nI read that Acme Robotics builds autonomous forklifts for mid-sized warehouses.\n   - indented line stays indented\nIndustry: Logistics, Robotics\n\nDana Smith',
    );
  });

  it('inserts values verbatim and never expands a value as a template', () => {
    const email = generateBuiltinEmail(facts({ firstName: '{{email}} <b>&amp;' }), { subject: 'Hi {{firstName}}', body: 'Dear {{ firstName }}' });
    assert.equal(email.subject, 'Hi {{email}} <b>&amp;');
    assert.equal(email.body, 'Dear {{email}} <b>&amp;');
  });

  it('uses the built-in subject (or body) when the template renders empty', () => {
    const email = generateBuiltinEmail(facts({ company: { description: null } }), { subject: '', body: 'Hello {{firstName}}' });
    assert.equal(email.body, 'Hello Maria');
    assert.match(email.subject, /Acme Robotics/);
    const emptyBody = generateBuiltinEmail(facts(), { subject: 'Custom', body: '{{productDescription}}' });
    assert.equal(emptyBody.subject, 'Custom');
    assert.equal(emptyBody.body, 'Forklift fleet software');
    const noProduct = facts({ company: { product_description: null } });
    const reallyEmpty = generateBuiltinEmail(noProduct, { subject: 'Custom', body: '{{productDescription}}' });
    assert.equal(reallyEmpty.body, generateBuiltinEmail(noProduct).body);
  });

  it('is deterministic', () => {
    assert.deepEqual(generateBuiltinEmail(facts(), template), generateBuiltinEmail(facts(), template));
  });
});

describe('template values', () => {
  it('provides every variable as a string', () => {
    const values = templateValues(facts({ firstName: 'MARIA', lastName: 'de la cruz' }));
    assert.deepEqual(Object.keys(values).sort(), [...TEMPLATE_VARIABLES].sort());
    for (const name of TEMPLATE_VARIABLES) assert.equal(typeof values[name], 'string', name);
    assert.equal(values.firstName, 'Maria');
    assert.equal(values.lastName, 'De La Cruz');
    assert.equal(values.fullName, 'Maria De La Cruz');
    assert.equal(values.companyDescription, 'Acme Robotics builds autonomous forklifts for mid-sized warehouses');
    assert.equal(values.productDescription, 'Forklift fleet software');
    assert.equal(values.industry, 'Logistics, Robotics');
    assert.equal(values.senderName, 'Dana Smith');
    assert.equal(values.senderCompany, 'Beacon Analytics');
  });

  it('uses empty strings for what research does not know', () => {
    const values = templateValues(facts({ company: { name: '', description: null, product_description: null, industry: [], source: 'domain' } }));
    assert.equal(values.companyDescription, '');
    assert.equal(values.productDescription, '');
    assert.equal(values.industry, '');
    assert.equal(values.companyName, 'acme-robotics.com');
  });
});

describe('text helpers', () => {
  it('cases names typed in one case and keeps deliberate spellings', () => {
    assert.equal(personName('JOHN'), 'John');
    assert.equal(personName('mary-jane'), 'Mary-Jane');
    assert.equal(personName("o'brien"), "O'Brien");
    assert.equal(personName('McDonald'), 'McDonald');
    assert.equal(personName('van der Berg'), 'van der Berg'); // mixed case: kept
    assert.equal(personName('ØDEGAARD'), 'Ødegaard');
    assert.equal(personName('  zoë  '), 'Zoë');
    assert.equal(personName('健'), '健');
  });

  it('sentence-cases without breaking brands or shouting', () => {
    assert.equal(sentenceCase('rockets for coyotes'), 'Rockets for coyotes');
    assert.equal(sentenceCase('iPhone cases'), 'iPhone cases');
    assert.equal(sentenceCase('WE BUILD ROCKETS'), 'We build rockets');
    assert.equal(sentenceCase('über alles'), 'Über alles');
    assert.equal(sentenceCase('“quoted” text'), '“Quoted” text');
  });

  it('splits sentences but not at abbreviations or initials', () => {
    assert.deepEqual(splitSentences('Acme Inc. builds rockets. J. Smith founded it! Is it good? 良い。はい。'), [
      'Acme Inc. builds rockets.',
      'J. Smith founded it!',
      'Is it good?',
      '良い。',
      'はい。',
    ]);
  });

  it('condenses descriptions', () => {
    const cases: [string, string | undefined][] = [
      ['Home | Acme - We build rockets for coyotes', 'We build rockets for coyotes'],
      ['WE BUILD THE BEST ROCKETS IN THE WORLD!!!', 'We build the best rockets in the world'],
      ['Welcome to Acme! The rocket company for deserts. Learn more →', 'The rocket company for deserts'],
      ['Acme', undefined],
      ['Welcome!', undefined],
      ['', undefined],
      ['Über uns: Wir entwickeln Software für Zahnarztpraxen.', 'Wir entwickeln Software für Zahnarztpraxen'],
      ['Shop sustainable sneakers made in Portugal | Free shipping', 'Shop sustainable sneakers made in Portugal'],
      ['The best platform for teams (and their managers who want dashboards', 'The best platform for teams'],
      ['Robots (for warehouses', 'Robots for warehouses'],
      ['Acme — Industrial drones for farms', 'Industrial drones for farms'],
      ['iPhone cases for everyone, made in Portugal...', 'iPhone cases for everyone, made in Portugal'],
      ['Huge savings! Our shop sells tyres across Ohio.', 'Our shop sells tyres across Ohio'],
      ['Our shop sells tyres and wheels across Ohio! Get a quote today.', 'Our shop sells tyres and wheels across Ohio'],
      [
        'Acme offers car insurance and home insurance with online discounts - get a quote today.',
        'Acme offers car insurance and home insurance with online discounts - get a quote today',
      ],
      ['話題のサイト！メンズ スラックスの通販。', 'メンズ スラックスの通販'],
      // A thank-you to the visitor is passed over; news and navigation run together are no description at all.
      [
        'Thank you for visiting the Acme website. It has been our mission since 1995 to build rockets.',
        'It has been our mission since 1995 to build rockets',
      ],
      ['The Coyote Fund Acme is honored to announce the creation of the Coyote Fund. Learn more and help us.', undefined],
      ['Learn more 2025 Winners MEMBERSHIP HAVE YOUR VOICE COUNT!Join the Acme club and save.', undefined],
      ['DEDICATED TO QUALITY CARE IN MONTANAHealth Center OperationsTraining and technical assistance', undefined],
      // A question asks the reader; it says nothing of what the company does.
      ['Looking for people search? Acme is your people search answer.', 'Acme is your people search answer'],
      ['Looking for people search?', undefined],
      // A brand written with a capital inside ("BeenVerified") is no text run together.
      ['BeenVerified is your people search and background check answer.', 'BeenVerified is your people search and background check answer'],
    ];
    for (const [input, expected] of cases)
      assert.equal(condenseDescription(input, { companyName: input.startsWith('BeenVerified') ? 'BeenVerified' : 'Acme' }), expected, input);
  });

  it('tidies bodies', () => {
    assert.equal(tidyBody('\n\n  \nHi  there ,\r\n\r\n\r\n  two  spaces\t\n\n'), 'Hi there ,\n\n  two spaces');
  });
});
