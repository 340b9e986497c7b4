import type { Kysely } from 'kysely';
import { preparedQuery } from '../db/prepared.js';
import type { Database } from '../db/types.js';

/** The key with this hash and the user it belongs to (a prepared query: it runs on every request). */
export function findKeyOwnerQuery(db: Kysely<Database>) {
  return preparedQuery(db, 1, (keyHash: string) =>
    db
      .selectFrom('api_keys')
      .innerJoin('users', 'users.id', 'api_keys.user_id')
      .select([
        'api_keys.id as key_id',
        'api_keys.expires_at',
        'api_keys.revoked_at',
        'api_keys.last_used_at',
        'api_keys.impersonator_id',
        'users.id as user_id',
        'users.account_id',
        'users.kind',
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
