import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createEmailChecker, emailListSizes } from '../../src/leads/email-check.js';
import type { EmailCheck, MailServerResolver } from '../../src/leads/email-check.js';

const checker = createEmailChecker();

async function expectRejected(email: string, reason: EmailCheck['reason']): Promise<EmailCheck> {
  const result = await checker.check(email);
  assert.equal(result.ok, false, `${JSON.stringify(email)} should be rejected`);
  assert.equal(result.reason, reason, `${JSON.stringify(email)}: ${result.message}`);
  assert.ok(result.message && result.message.length > 10, 'a sentence for humans');
  return result;
}

async function expectAccepted(email: string): Promise<EmailCheck> {
  const result = await checker.check(email);
  assert.equal(result.ok, true, `${JSON.stringify(email)} should be accepted: ${result.message}`);
  assert.equal(result.reason, undefined);
  return result;
}

describe('business email check', () => {
  it('loads both maintained lists', () => {
    const sizes = emailListSizes();
    assert.ok(sizes.freeProviders > 5000, `free providers: ${sizes.freeProviders}`);
    assert.ok(sizes.disposable > 10000, `disposable: ${sizes.disposable}`);
  });

  it('rejects free providers, their subdomains and IDN spellings', async () => {
    for (const email of ['jane@gmail.com', 'jane@yahoo.co.uk', 'jane@outlook.com', 'jane@gmx.de', 'jane@web.de', 'jane@qq.com', 'jane@proton.me']) {
      const result = await expectRejected(email, 'free_provider');
      assert.equal(result.matched, email.split('@')[1]);
    }
    const sub = await expectRejected('jane@mail.yahoo.co.uk', 'free_provider');
    assert.equal(sub.matched, 'yahoo.co.uk');
    assert.equal(sub.domain, 'mail.yahoo.co.uk');
    assert.equal(sub.message, 'yahoo.co.uk is a free email provider; please use a business email address.');
    // An IDN entry of the list, written in Unicode and in punycode.
    // The lists hold the punycode form (xn--9kq967o.com, on the disposable list too); an address may use either spelling.
    const idn = await expectRejected('jane@雨云.com', 'disposable');
    assert.equal(idn.domain, 'xn--9kq967o.com');
    assert.equal(idn.email, 'jane@雨云.com');
    assert.equal((await expectRejected('jane@xn--9kq967o.com', 'disposable')).email, 'jane@雨云.com');
    // Full-width letters and invisible characters are mapped away by IDNA before the comparison.
    assert.equal((await expectRejected('jane@ｇｍａｉｌ.com', 'free_provider')).domain, 'gmail.com');
    assert.equal((await expectRejected('jane@gm\u200bail.com', 'free_provider')).domain, 'gmail.com');
    assert.equal((await expectRejected('jane@GMAIL.COM.', 'free_provider')).domain, 'gmail.com');
  });

  it('rejects disposable services and their subdomains (disposable wins over free)', async () => {
    const direct = await expectRejected('x@mailinator.com', 'disposable');
    assert.equal(direct.message, 'mailinator.com is a disposable email service; please use a business email address.');
    const sub = await expectRejected('x@inbox.team.mailinator.com', 'disposable');
    assert.equal(sub.matched, 'mailinator.com');
    await expectRejected('x@guerrillamail.com', 'disposable');
    await expectRejected('x@10minutemail.com', 'disposable');
    await expectRejected('x@yopmail.com', 'disposable');
  });

  it('does not extend a listed registry suffix to the companies registered under it', async () => {
    await expectRejected('x@net.ua', 'free_provider');
    assert.equal((await expectAccepted('x@acme.net.ua')).domain, 'acme.net.ua');
    await expectAccepted('x@zavod.msk.ru');
    // Any suffix of the Public Suffix List on a list, its private section included (com.ar is a free provider's
    // entry, ddns.net a disposable one's).
    await expectAccepted('x@acme.com.ar');
    await expectAccepted('x@acme.ddns.net');
    await expectRejected('x@ddns.net', 'disposable');
  });

  it('accepts business domains and role accounts', async () => {
    for (const email of [
      'jane.doe@acme-corp.com',
      'info@acme.com',
      'sales@acme.co.uk',
      'support+leads@sub.acme.io',
      "o'brien@acme.ie",
      'x_y-z@a1.museum',
      "a!#$%&'*+/=?^_`{|}~-b@acme.com",
      'jane@acme.technology',
      'jane@example.com',
    ]) {
      await expectAccepted(email);
    }
  });

  it('converts IDN domains to punycode and keeps Unicode local parts', async () => {
    const result = await expectAccepted('josé@bücher.de');
    assert.equal(result.domain, 'xn--bcher-kva.de');
    assert.equal(result.email, 'josé@bücher.de');
    assert.equal((await expectAccepted('info@BÜCHER.DE')).email, 'info@bücher.de');
    assert.equal((await expectAccepted('info@例え.テスト')).domain, 'xn--r8jz45g.xn--zckzah');
    assert.equal((await expectAccepted('info@яндекс-завод.рф')).domain.endsWith('.xn--p1ai'), true);
    // An invalid punycode label fails the conversion.
    await expectRejected('a@xn--zz.com', 'invalid_syntax');
  });

  it('normalises case, whitespace and Unicode composition', async () => {
    const result = await expectAccepted('  Jane.Doe@ACME.Com \n');
    assert.equal(result.email, 'Jane.Doe@acme.com', 'the local part keeps its case, the domain is lower-cased');
    assert.equal(result.domain, 'acme.com');
    assert.equal((await expectAccepted('jose\u0301@acme.com')).email, 'jos\u00e9@acme.com');
    const trailing = await expectAccepted('jane@acme.com.');
    assert.equal(trailing.email, 'jane@acme.com', 'one trailing dot (the DNS root) is dropped');
  });

  it('rejects malformed addresses with a reason that says what is wrong', async () => {
    const cases: Array<[string, RegExp]> = [
      ['', /empty/],
      ['   ', /empty/],
      ['jane.acme.com', /no @/],
      ['jane@@acme.com', /exactly one @/],
      ['jane@doe@acme.com', /exactly one @/],
      ['@acme.com', /nothing before the @/],
      ['jane@', /no domain/],
      ['jane doe@acme.com', /spaces/],
      ['jane@ac me.com', /spaces/],
      ['jane@acme.com x', /spaces/],
      ['.jane@acme.com', /start or end with a dot/],
      ['jane.@acme.com', /start or end with a dot/],
      ['ja..ne@acme.com', /two dots/],
      ['jane@.acme.com', /empty or invalid part/],
      ['jane@acme..com', /empty or invalid part/],
      ['jane@acme.com..', /empty or invalid part/],
      ['jane@-acme.com', /empty or invalid part/],
      ['jane@acme-.com', /empty or invalid part/],
      ['jane@acme_corp.com', /characters a domain cannot have/],
      ['jane@acme.com/path', /characters a domain cannot have/],
      ['jane@acme.com:25', /characters a domain cannot have/],
      ['jane@%61cme.com', /characters a domain cannot have/],
      ['jane@localhost', /must contain a dot/],
      ['jane@[192.168.0.1]', /IP address literals/],
      ['jane@[IPv6:::1]', /IP address literals/],
      ['jane@192.168.0.1', /top-level domain/],
      ['jane@0x7f.1', /top-level domain/],
      ['jane@acme.c0m1', /top-level domain/],
      ['"jane"@acme.com', /Quoted/],
      ['ja(ne)@acme.com', /characters an address cannot have/],
      ['jane\u0000@acme.com', /characters an address cannot have/],
      [`${'a'.repeat(65)}@acme.com`, /longer than 64/],
      [`jane@${'a'.repeat(64)}.com`, /empty or invalid part/],
      [`jane@${Array.from({ length: 5 }, () => 'a'.repeat(60)).join('.')}.com`, /longer than 253/],
      [`${'a'.repeat(64)}@${Array.from({ length: 4 }, () => 'b'.repeat(50)).join('.')}.com`, /longer than 254/],
      ['x'.repeat(5000), /too long/],
    ];
    for (const [email, message] of cases) {
      const result = await expectRejected(email, 'invalid_syntax');
      assert.equal(result.domain, '', email);
      assert.match(result.message!, message, `${JSON.stringify(email)}: ${result.message}`);
    }
    // A non-string (a caller's mistake) is invalid, not a crash.
    await expectRejected(undefined as unknown as string, 'invalid_syntax');
  });

  it('accepts the longest valid lengths', async () => {
    await expectAccepted(`${'a'.repeat(64)}@acme.com`);
    await expectAccepted(`jane@${'a'.repeat(63)}.com`);
    const domain = `${Array.from({ length: 3 }, () => 'b'.repeat(63)).join('.')}.com`;
    const longest = `${'a'.repeat(254 - domain.length - 1)}@${domain}`;
    assert.equal(longest.length, 254);
    await expectAccepted(longest);
    await expectRejected(`a${longest}`, 'invalid_syntax');
  });
});

describe('business email check with the MX look-up', () => {
  type Answer = unknown[] | string; // records, or an error code to throw
  function resolver(answers: { mx: Answer; a?: Answer; aaaa?: Answer }, calls: string[] = []): MailServerResolver {
    const answer = (kind: string, value: Answer | undefined) => async (domain: string) => {
      calls.push(`${kind} ${domain}`);
      if (typeof value === 'string') throw Object.assign(new Error(`query ${value} ${domain}`), { code: value });
      return value ?? [];
    };
    return {
      resolveMx: answer('MX', answers.mx),
      resolve4: answer('A', answers.a ?? 'ENODATA'),
      resolve6: answer('AAAA', answers.aaaa ?? 'ENODATA'),
    };
  }

  it('accepts a domain with MX records', async () => {
    const calls: string[] = [];
    const check = createEmailChecker({ mx: resolver({ mx: [{ exchange: 'mx1.acme.com', priority: 10 }] }, calls) });
    assert.equal((await check.check('jane@acme.com')).ok, true);
    assert.deepEqual(calls, ['MX acme.com']);
  });

  it('accepts a domain without MX but with an address (implicit MX)', async () => {
    const check = createEmailChecker({ mx: resolver({ mx: 'ENODATA', a: [], aaaa: ['2001:db8::1'] }) });
    assert.equal((await check.check('jane@acme.com')).ok, true);
  });

  it('rejects a domain with neither MX nor address, an unknown domain, and a null MX', async () => {
    const none = createEmailChecker({ mx: resolver({ mx: 'ENODATA' }) });
    const result = await none.check('jane@acme.com');
    assert.equal(result.ok, false);
    assert.equal(result.reason, 'no_mail_server');
    assert.equal(result.message, 'acme.com has no mail server (no MX or address record).');
    const empty = createEmailChecker({ mx: resolver({ mx: [], a: [], aaaa: [] }) });
    assert.equal((await empty.check('jane@acme.com')).reason, 'no_mail_server');
    const nx = createEmailChecker({ mx: resolver({ mx: 'ENOTFOUND', a: ['192.0.2.1'] }) });
    assert.equal((await nx.check('jane@no-such-company.com')).reason, 'no_mail_server');
    const nullMx = createEmailChecker({ mx: resolver({ mx: [{ exchange: '', priority: 0 }], a: ['192.0.2.1'] }) });
    assert.equal((await nullMx.check('jane@acme.com')).reason, 'no_mail_server');
  });

  it('without address look-ups, no MX is enough to reject', async () => {
    const mxOnly = createEmailChecker({ mx: { resolveMx: async () => [] } });
    assert.equal((await mxOnly.check('jane@acme.com')).reason, 'no_mail_server');
  });

  // A look-up that never settles, given 50 ms: were it awaited, the test would time out.
  it('does not reject when DNS fails or is slow', { timeout: 10_000 }, async () => {
    const failing = createEmailChecker({ mx: resolver({ mx: 'ESERVFAIL' }) });
    assert.equal((await failing.check('jane@acme.com')).ok, true);
    const addressTimeout = createEmailChecker({ mx: resolver({ mx: 'ENODATA', a: 'ETIMEOUT' }) });
    assert.equal((await addressTimeout.check('jane@acme.com')).ok, true);
    const hanging = createEmailChecker({ mx: { resolveMx: () => new Promise<unknown[]>(() => undefined) }, mxTimeoutMs: 50 });
    assert.equal((await hanging.check('jane@acme.com')).ok, true);
  });

  it('looks nothing up for addresses already rejected', async () => {
    const calls: string[] = [];
    const check = createEmailChecker({ mx: resolver({ mx: [{ exchange: 'mx', priority: 1 }] }, calls) });
    assert.equal((await check.check('jane@gmail.com')).reason, 'free_provider');
    assert.equal((await check.check('jane@mailinator.com')).reason, 'disposable');
    assert.equal((await check.check('not an address')).reason, 'invalid_syntax');
    assert.deepEqual(calls, []);
  });

  it('is off without a resolver', async () => {
    assert.equal((await createEmailChecker({ mx: undefined }).check('jane@acme.com')).ok, true);
  });
});
