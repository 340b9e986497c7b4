import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppError } from '../../src/errors.js';
import { TemplateQueries } from '../../src/leads/templates/queries.js';
import { TemplateService } from '../../src/leads/templates/service.js';
import { createOwner, DIALECTS, startApp, type TestApp } from '../helpers/app.js';

async function rejects(promise: Promise<unknown>, code: string, message?: RegExp): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof AppError, String(error));
    assert.equal(error.code, code);
    if (message) assert.match(error.message, message);
    return error;
  }
  throw new Error(`expected ${code}`);
}

for (const dialect of DIALECTS) {
  describe(`templates of an account (${dialect})`, () => {
    let test: TestApp;
    let templates: TemplateService;
    let accountId: number;
    let otherAccountId: number;

    before(async () => {
      test = await startApp(dialect);
      templates = new TemplateService(new TemplateQueries(test.storage.db));
      accountId = (await createOwner(test.storage)).accountId;
      otherAccountId = (await createOwner(test.storage)).accountId;
    });
    after(() => test.close());

    it('creates, lists by name, reads, updates and deletes', async () => {
      const intro = await templates.create(accountId, { name: '  Intro ', subject: 'Hi {{firstName}}', body: 'Hello {{ fullName }}\r\nBye' });
      assert.equal(intro.name, 'Intro');
      assert.equal(intro.body, 'Hello {{ fullName }}\nBye');
      assert.equal(intro.is_default, false);
      await templates.create(accountId, { name: 'Follow-up', body: 'Again, {{firstName}}' });
      assert.deepEqual(
        (await templates.list(accountId)).map((template) => template.name),
        ['Follow-up', 'Intro'],
      );
      assert.deepEqual(await templates.list(otherAccountId), []);
      const updated = await templates.update(accountId, intro.id, { subject: 'New {{companyName}}' });
      assert.equal(updated.subject, 'New {{companyName}}');
      assert.equal(updated.body, intro.body);
      assert.ok(updated.updated_at >= intro.updated_at);
      await templates.delete(accountId, intro.id);
      await rejects(templates.get(accountId, intro.id), 'not_found');
    });

    it('refuses unknown variables and logic at save time, naming the line and column', async () => {
      const error = await rejects(templates.create(accountId, { name: 'Broken', body: 'Hello\n  {{companyname}}' }), 'validation_failed');
      assert.equal(error.details[0]!.path, '/body');
      assert.match(error.details[0]!.message, /Line 2, column 3/);
      assert.match(error.details[0]!.message, /companyName/);
      await rejects(templates.create(accountId, { name: 'Logic', body: '{{#firstName}}x{{/firstName}}' }), 'validation_failed');
      await rejects(templates.create(accountId, { name: 'Subject', subject: '{{nope}}', body: 'ok' }), 'validation_failed');
      await rejects(templates.create(accountId, { name: 'Huge', body: 'x'.repeat(20 * 1024 + 1) }), 'validation_failed');
      await rejects(templates.create(accountId, { name: '', body: 'ok' }), 'validation_failed');
      const nul = await rejects(templates.create(accountId, { name: 'Nul', body: 'Hello\u0000there' }), 'validation_failed');
      assert.equal(nul.details[0]!.path, '/body');
      const existing = await templates.create(accountId, { name: 'Kept', body: 'Fine {{firstName}}' });
      await rejects(templates.update(accountId, existing.id, { body: '{{unknown}}' }), 'validation_failed');
      assert.equal((await templates.get(accountId, existing.id)).body, 'Fine {{firstName}}');
    });

    it('keeps names unique in an account, not across accounts', async () => {
      await templates.create(accountId, { name: 'Unique', body: 'x' });
      await rejects(templates.create(accountId, { name: 'Unique', body: 'y' }), 'conflict', /already exists/);
      await templates.create(otherAccountId, { name: 'Unique', body: 'z' });
    });

    it('holds one default per account', async () => {
      const account = (await createOwner(test.storage)).accountId;
      const first = await templates.create(account, { name: 'First', body: 'a', isDefault: true });
      const second = await templates.create(account, { name: 'Second', body: 'b' });
      assert.equal((await templates.forLead(account, undefined))?.id, first.id);
      await templates.setDefault(account, second.id);
      assert.equal((await templates.forLead(account, undefined))?.id, second.id);
      assert.deepEqual(
        (await templates.list(account)).map((template) => template.is_default),
        [false, true],
      );
      await templates.delete(account, second.id);
      assert.equal(await templates.forLead(account, undefined), undefined);
    });

    it('shows one account nothing of another’s templates', async () => {
      const theirs = await templates.create(otherAccountId, { name: 'Theirs', body: 'x' });
      await rejects(templates.get(accountId, theirs.id), 'not_found');
      await rejects(templates.update(accountId, theirs.id, { name: 'Mine now' }), 'not_found');
      await rejects(templates.delete(accountId, theirs.id), 'not_found');
      await rejects(templates.get(accountId, 'not-a-uuid'), 'not_found');
      assert.equal((await templates.get(otherAccountId, theirs.id)).name, 'Theirs');
    });
  });
}
