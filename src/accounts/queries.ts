import type { Kysely } from 'kysely';
import { preparedQuery } from '../db/prepared.js';
import type { Database } from '../db/types.js';

/** The key with this hash and the user it belongs to (a prepared query: it runs on every request). */
export function findKeyOwnerQuery(db: Kysely<Database>) {
  return preparedQuery(db, 1, (keyHash: string) =>
    db
      .selectFrom('api_keys')
      .innerJoin('users', 'users.id', 'api_keys.user_id')
      .innerJoin('accounts', 'accounts.id', 'users.account_id')
      .select([
        'api_keys.id as key_id',
        'api_keys.expires_at',
        'api_keys.revoked_at',
        'api_keys.last_used_at',
        'api_keys.impersonator_id',
        'users.id as user_id',
        'users.account_id',
        'users.kind',
        'accounts.plan',
      ])
      .where('api_keys.key_hash', '=', keyHash),
  );
}

export async function touchKey(db: Kysely<Database>, keyId: number, userId: number, at: string): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', keyId).execute();
  await db.updateTable('users').set({ last_seen_at: at }).where('id', '=', userId).execute();
}

export function findUserByEmail(db: Kysely<Database>, email: string) {
  return db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
}

export function findUser(db: Kysely<Database>, id: number) {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** What the dashboard shows of a key's user and account, with the key's kind (only session keys open the dashboard). */
export function findKeyProfile(db: Kysely<Database>, keyId: number) {
  return db
    .selectFrom('api_keys')
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .innerJoin('accounts', 'accounts.id', 'users.account_id')
    .select(['api_keys.kind', 'users.email', 'accounts.name as account_name', 'accounts.plan'])
    .where('api_keys.id', '=', keyId)
    .executeTakeFirst();
}

/** A user's own API keys that still work, newest first (session and impersonation keys are not listed). */
export function listLiveApiKeys(db: Kysely<Database>, userId: number, now: string) {
  return db
    .selectFrom('api_keys')
    .select(['id', 'name', 'prefix', 'created_at', 'last_used_at', 'expires_at'])
    .where('user_id', '=', userId)
    .where('kind', '=', 'api')
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .orderBy('id', 'desc')
    .execute();
}

export async function revokeApiKey(db: Kysely<Database>, userId: number, keyId: number, at: string): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('id', '=', keyId)
    .where('user_id', '=', userId)
    .where('kind', '=', 'api')
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Revokes the user's session keys except one (the session that is changing the password). */
export async function revokeOtherSessions(db: Kysely<Database>, userId: number, keepKeyId: number, at: string): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('user_id', '=', userId)
    .where('kind', '=', 'session')
    .where('id', '!=', keepKeyId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Who signs an account's outreach emails and what it offers; false when there is no such account. */
export async function updateAccountSender(
  db: Kysely<Database>,
  accountId: number,
  sender: { sender_name: string | null; sender_offer: string | null },
  at: string,
): Promise<boolean> {
  const result = await db.updateTable('accounts').set({ ...sender, updated_at: at }).where('id', '=', accountId).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
