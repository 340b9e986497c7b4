import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AccountQueries, SessionQueries } from '../../src/accounts/queries.js';
import { AccountService } from '../../src/accounts/service.js';
import { SessionService } from '../../src/accounts/sessions.js';
import { AppError } from '../../src/errors.js';
import { createOwner, DIALECTS, type Owner, startApp, type TestApp } from '../helpers/app.js';

const PASSWORD = 'a long enough password';

async function expectAppError(promise: Promise<unknown>, code: string, path?: string) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof AppError, String(error));
    assert.equal(error.code, code);
    if (path) assert.equal(error.details[0]?.path, path);
    return true;
  });
}

for (const dialect of DIALECTS) {
  describe(`AccountService for the dashboard (${dialect})`, () => {
    let t: TestApp;
    let accounts: AccountService;
    let sessions: SessionService;
    let owner: Owner;
    let email: string;
    before(async () => {
      t = await startApp(dialect);
      const queries = new AccountQueries(t.storage.db);
      accounts = new AccountService(queries);
      sessions = new SessionService(queries, new SessionQueries(t.storage.db, t.storage.dialect));
      owner = await createOwner(t.storage);
      email = (await t.storage.db.selectFrom('users').select('email').where('id', '=', owner.userId).executeTakeFirstOrThrow()).email;
    });
    after(() => t.close());

    it("authenticateSession admits live session keys only, with the user's email and the account's plan", async () => {
      const { api_key: sessionKey } = await sessions.signIn({ email, password: PASSWORD, ip: '10.1.1.1' });
      const profile = await accounts.authenticateSession(sessionKey);
      assert.equal(profile?.principal.userId, owner.userId);
      assert.equal(profile?.email, email);
      assert.equal(profile?.plan, 'free');
      assert.equal(await accounts.authenticateSession(owner.apiKey), undefined, 'an API key is not a session');
      assert.equal(await accounts.authenticateSession('mh_live_unknown'), undefined);
      await sessions.signOut(profile!.principal);
      assert.equal(await accounts.authenticateSession(sessionKey), undefined, 'a revoked session');
    });

    it("listKeys lists the user's live API keys, newest first, without hashes; revokeKey revokes only its own", async () => {
      const key = await accounts.createKey({ userId: owner.userId, name: 'ci' });
      await sessions.signIn({ email, password: PASSWORD, ip: '10.1.1.2' });
      let keys = await accounts.listKeys(owner.userId);
      assert.deepEqual(keys.map((entry) => entry.name).slice(0, 2), ['ci', 'default']);
      for (const entry of keys) assert.deepEqual(Object.keys(entry).sort(), ['created_at', 'id', 'last_used_at', 'name', 'prefix']);
      assert.ok(key.startsWith(keys[0]!.prefix));

      const stranger = await createOwner(t.storage);
      await expectAppError(accounts.revokeKey(stranger.userId, keys[0]!.id), 'not_found');
      assert.ok(await accounts.authenticate(key), 'another user cannot revoke it');
      await accounts.revokeKey(owner.userId, keys[0]!.id);
      assert.equal(await accounts.authenticate(key), undefined);
      await expectAppError(accounts.revokeKey(owner.userId, keys[0]!.id), 'not_found');
      keys = await accounts.listKeys(owner.userId);
      assert.ok(!keys.some((entry) => entry.name === 'ci'));
    });

    it('createKey bounds the name', async () => {
      await expectAppError(accounts.createKey({ userId: owner.userId, name: 'x'.repeat(101) }), 'validation_failed', '/name');
      assert.ok(await accounts.createKey({ userId: owner.userId, name: 'x'.repeat(100) }));
    });

    it('updateSender trims, bounds and clears the sender name and offer of the account only', async () => {
      const other = await createOwner(t.storage);
      const read = async (accountId: number) =>
        t.storage.db.selectFrom('accounts').select(['sender_name', 'sender_offer']).where('id', '=', accountId).executeTakeFirstOrThrow();
      assert.deepEqual(await accounts.updateSender(owner.accountId, { senderName: '  Grace Hopper ', senderOffer: ' help publishers\r\ngrow. ' }), {
        senderName: 'Grace Hopper',
        senderOffer: 'help publishers\ngrow.',
      });
      assert.deepEqual(await read(owner.accountId), { sender_name: 'Grace Hopper', sender_offer: 'help publishers\ngrow.' });
      assert.deepEqual(await read(other.accountId), { sender_name: null, sender_offer: null }, 'another account is untouched');

      await expectAppError(
        accounts.updateSender(owner.accountId, { senderName: 'n'.repeat(101), senderOffer: '' }),
        'validation_failed',
        '/sender_name',
      );
      await expectAppError(
        accounts.updateSender(owner.accountId, { senderName: 'Grace\nHopper', senderOffer: '' }),
        'validation_failed',
        '/sender_name',
      );
      await expectAppError(
        accounts.updateSender(owner.accountId, { senderName: '', senderOffer: 'o'.repeat(501) }),
        'validation_failed',
        '/sender_offer',
      );
      await expectAppError(
        accounts.updateSender(owner.accountId, { senderName: '', senderOffer: 'bell\u0007' }),
        'validation_failed',
        '/sender_offer',
      );
      await expectAppError(accounts.updateSender(999_999, { senderName: 'x', senderOffer: '' }), 'not_found');
      assert.deepEqual(
        await read(owner.accountId),
        { sender_name: 'Grace Hopper', sender_offer: 'help publishers\ngrow.' },
        'nothing changed on refusal',
      );

      // At the bounds (counted in characters, not UTF-16 units), then cleared.
      await accounts.updateSender(owner.accountId, { senderName: '😀'.repeat(100), senderOffer: 'é'.repeat(500) });
      assert.equal((await read(owner.accountId)).sender_name, '😀'.repeat(100));
      await accounts.updateSender(owner.accountId, { senderName: '   ', senderOffer: '' });
      assert.deepEqual(await read(owner.accountId), { sender_name: null, sender_offer: null });
    });

    it('changePassword needs the current password, checks the new one, and ends the other sessions only', async () => {
      const user = await createOwner(t.storage);
      const userEmail = (await t.storage.db.selectFrom('users').select('email').where('id', '=', user.userId).executeTakeFirstOrThrow()).email;
      const current = await sessions.signIn({ email: userEmail, password: PASSWORD, ip: '10.1.1.3' });
      const other = await sessions.signIn({ email: userEmail, password: PASSWORD, ip: '10.1.1.3' });
      const principal = (await accounts.authenticateSession(current.api_key))!.principal;
      const change = (input: Partial<{ currentPassword: string; password: string; passwordConfirmation: string }>) =>
        accounts.changePassword(principal, {
          currentPassword: PASSWORD,
          password: 'the new passphrase',
          passwordConfirmation: 'the new passphrase',
          ...input,
        });
      await expectAppError(change({ currentPassword: 'wrong one!' }), 'validation_failed', '/current_password');
      await expectAppError(change({ password: 'short', passwordConfirmation: 'short' }), 'validation_failed', '/password');
      await expectAppError(change({ password: userEmail, passwordConfirmation: userEmail }), 'validation_failed', '/password');
      await expectAppError(change({ passwordConfirmation: 'something else' }), 'validation_failed', '/password_confirmation');
      assert.ok(await accounts.authenticateSession(other.api_key), 'nothing changed on refusal');

      await change({});
      assert.ok(await accounts.authenticateSession(current.api_key), 'this session goes on');
      assert.equal(await accounts.authenticateSession(other.api_key), undefined, 'the other session ended');
      assert.ok(await accounts.authenticate(user.apiKey), 'API keys stay');
      await assert.rejects(sessions.signIn({ email: userEmail, password: PASSWORD, ip: '10.1.1.4' }));
      assert.ok(await sessions.signIn({ email: userEmail, password: 'the new passphrase', ip: '10.1.1.4' }));
    });
  });
}
