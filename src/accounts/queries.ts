import { type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';
import type { Dialect } from '../db/connection.js';
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

/** Marks the key used, and its user seen unless `seenUserId` is undefined (someone else acting as the user). */
export async function touchKey(db: Kysely<Database>, keyId: number, seenUserId: number | undefined, at: string): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', keyId).execute();
  if (seenUserId !== undefined) await db.updateTable('users').set({ last_seen_at: at }).where('id', '=', seenUserId).execute();
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

/**
 * Revokes the user's session keys, except one when `keepKeyId` is given (the session that is changing its own
 * password). API keys and "become" keys are not tied to the password and stay.
 */
export async function revokeSessions(db: Kysely<Database>, userId: number, at: string, keepKeyId?: number): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('user_id', '=', userId)
    .where('kind', '=', 'session')
    .$if(keepKeyId !== undefined, (query) => query.where('id', '!=', keepKeyId!))
    .where('revoked_at', 'is', null)
    .execute();
}

/**
 * Whether the user behind a "become" key may still become the key's user: it is the account's owner, or an admin
 * who manages that client now (see adminManages). Checked on every use of such a key, so that a key stops working
 * the moment its issuer is demoted, loses the publication, or the client gains a role beyond the issuer's reach.
 */
export async function mayStillImpersonate(db: Kysely<Database>, impersonatorId: number, userId: number, accountId: number): Promise<boolean> {
  const row = await db
    .selectFrom('users as target')
    .innerJoin('users as issuer', 'issuer.account_id', 'target.account_id')
    .select('target.id')
    .where('target.id', '=', userId)
    .where('target.account_id', '=', accountId)
    .where('issuer.id', '=', impersonatorId)
    .where((eb) =>
      eb.or([
        eb('issuer.kind', '=', 'owner'),
        eb.and([eb('target.kind', '=', 'client'), adminManages({ adminId: impersonatorId, accountId, user: 'target.id' })]),
      ]),
    )
    .executeTakeFirst();
  return row !== undefined;
}

/** Marks one key revoked (a "become" key found to have outlived its issuer's right). */
export async function revokeKey(db: Kysely<Database>, keyId: number, at: string): Promise<void> {
  await db.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', keyId).where('revoked_at', 'is', null).execute();
}

/** The sign-in throttle's limits for one attempt: its email and IP scopes, and how many attempts each may have. */
export interface AttemptScopes {
  email: string;
  ip: string;
  maxPerEmail: number;
  maxPerIp: number;
}

// The first key of PostgreSQL's two-key advisory locks taken by the sign-in throttle (the second is the scope's hash).
const THROTTLE_LOCK_CLASS = 0x4d48_5331; // "MHS1"

/**
 * Counts one sign-in attempt against its email and its IP, unless either already holds its limit of attempts
 * since `since`: the ids of the two rows written, or undefined when refused (nothing is written then). Atomic on
 * both databases, so that however many attempts arrive at once, no more than the limit are ever counted (and so
 * judged): one statement that counts and inserts, run on PostgreSQL under advisory locks on the two scopes (taken
 * in the same order by everyone, email then IP, so never a deadlock), which make concurrent attempts on a scope
 * wait for each other and each count, in a fresh snapshot, the rows its predecessors wrote. SQLite has one writer.
 */
export async function countAttempt(db: Kysely<Database>, dialect: Dialect, scopes: AttemptScopes, at: string, since: string): Promise<number[] | undefined> {
  return db.transaction().execute(async (trx) => {
    if (dialect === 'postgres') {
      await sql`select pg_advisory_xact_lock(${THROTTLE_LOCK_CLASS}, hashtext(${scopes.email}))`.execute(trx);
      await sql`select pg_advisory_xact_lock(${THROTTLE_LOCK_CLASS}, hashtext(${scopes.ip}))`.execute(trx);
    }
    const { rows } = await sql<{ id: number | string }>`
      insert into sign_in_failures (scope, failed_at)
      select attempt.scope, cast(${at} as text)
      from (select cast(${scopes.email} as text) as scope union all select cast(${scopes.ip} as text) as scope) attempt
      where (select count(*) from sign_in_failures where scope = ${scopes.email} and failed_at > ${since}) < ${scopes.maxPerEmail}
        and (select count(*) from sign_in_failures where scope = ${scopes.ip} and failed_at > ${since}) < ${scopes.maxPerIp}
      returning id`.execute(trx);
    return rows.length === 0 ? undefined : rows.map((row) => Number(row.id));
  });
}

/** The attempts counted against these scopes since `since`, oldest first (for Retry-After). */
export function countedAttempts(db: Kysely<Database>, scopes: string[], since: string) {
  return db
    .selectFrom('sign_in_failures')
    .select(['scope', 'failed_at'])
    .where('scope', 'in', scopes)
    .where('failed_at', '>', since)
    .orderBy('failed_at')
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

/** Whose clients: an admin (a client with the admin level on some publication) of an account. */
export interface AdminReach {
  adminId: number;
  accountId: number;
  /** The column holding the client's user id, e.g. `users.id`. */
  user: string;
}

/**
 * The clients an admin manages (sees, changes, deletes, sets the password of, becomes): those it could have made
 * itself. A client is managed when it holds at least one role, every one of its roles is on a publication of the
 * account the admin administers, and none of them is the admin level. So an admin never manages another admin,
 * itself, a client holding any role elsewhere, nor a client without roles (those are the owner's alone).
 * Evaluated in SQL against the roles as they are now, so that it holds for listings as for single clients, and a
 * key from "become" is judged by it on every use.
 */
export function adminManages(reach: AdminReach): RawBuilder<SqlBool> {
  const user = sql.ref(reach.user);
  return sql<SqlBool>`(exists (select 1 from roles held where held.user_id = ${user})
    and not exists (
      select 1 from roles held
      where held.user_id = ${user}
        and (held.access_level = 'admin' or held.publication_id not in (
          select administered.publication_id from roles administered
          inner join publications administered_publication on administered_publication.id = administered.publication_id
          where administered.user_id = ${reach.adminId}
            and administered.access_level = 'admin'
            and administered_publication.account_id = ${reach.accountId}))))`;
}
