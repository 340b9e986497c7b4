import { type Insertable, type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';
import type { Dialect } from '../db/connection.js';
import { timestampValue } from '../db/dialect-sql.js';
import { preparedQuery } from '../db/prepared.js';
import type { Account, AccountTable, ApiKeyKind, Database, Publication, User, UserTable } from '../db/types.js';
import { generateApiKey } from './keys.js';

export interface NewKey {
  userId: number;
  name: string;
  kind?: ApiKeyKind;
  expiresAt?: string | null;
  impersonatorId?: number | null;
}

/**
 * Accounts, their users and the users' keys. Built on the database or on a transaction's handle: `transaction`
 * hands the work an AccountQueries bound to one, and a service of another domain that must write a key or revoke
 * sessions inside its own transaction builds one on its handle.
 */
export class AccountQueries {
  /**
   * The key with this hash, the user it belongs to, and the account's publication with an app id with the user's
   * role on it (a prepared query: it runs on every request, and a portal request names a publication, which would
   * otherwise cost a round trip of its own).
   */
  private readonly findKeyOwnerPrepared;

  constructor(private readonly db: Kysely<Database>) {
    this.findKeyOwnerPrepared = preparedQuery(db, 2, (keyHash: string, appId: string) =>
      db
        .selectFrom('api_keys')
        .innerJoin('users', 'users.id', 'api_keys.user_id')
        .innerJoin('accounts', 'accounts.id', 'users.account_id')
        .leftJoin('publications', (join) => join.onRef('publications.account_id', '=', 'users.account_id').on('publications.app_id', '=', appId))
        .leftJoin('roles', (join) => join.onRef('roles.publication_id', '=', 'publications.id').onRef('roles.user_id', '=', 'users.id'))
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
          'publications.id as publication_id',
          'publications.app_id',
          'publications.name as publication_name',
          'publications.created_at as publication_created_at',
          'publications.updated_at as publication_updated_at',
          'roles.access_level',
        ])
        .where('api_keys.key_hash', '=', keyHash),
    );
  }

  /** Runs `work` in one transaction: every query it makes through the AccountQueries it is given is kept, or none. */
  transaction<T>(work: (queries: AccountQueries) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => work(new AccountQueries(trx)));
  }

  /** The key's owner; with `appId`, also the account's publication of that app id and the user's role on it. */
  async findKeyOwner(keyHash: string, appId = '') {
    const row = (await this.findKeyOwnerPrepared(keyHash, appId))[0];
    if (!row) return undefined;
    const {
      publication_id: id,
      app_id,
      publication_name: name,
      publication_created_at: created_at,
      publication_updated_at: updated_at,
      access_level,
      ...owner
    } = row;
    const publication: Publication | undefined =
      id === null ? undefined : { id, account_id: owner.account_id, app_id: app_id!, name: name!, created_at: created_at!, updated_at: updated_at! };
    return { ...owner, publication, role: access_level ?? undefined };
  }

  /** Marks the key used, and its user seen unless `seenUserId` is undefined (someone else acting as the user). */
  async touchKey(keyId: number, seenUserId: number | undefined, at: string): Promise<void> {
    await this.db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', keyId).execute();
    if (seenUserId !== undefined) await this.db.updateTable('users').set({ last_seen_at: at }).where('id', '=', seenUserId).execute();
  }

  findAccount(id: number): Promise<Account | undefined> {
    return this.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  }

  insertAccount(values: Insertable<AccountTable>): Promise<Account> {
    return this.db.insertInto('accounts').values(values).returningAll().executeTakeFirstOrThrow();
  }

  /** Who signs an account's outreach emails and what it offers; false when there is no such account. */
  async updateAccountSender(accountId: number, sender: { sender_name: string | null; sender_offer: string | null }, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable('accounts')
      .set({ ...sender, updated_at: at })
      .where('id', '=', accountId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  findUserByEmail(email: string): Promise<User | undefined> {
    return this.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
  }

  findUser(id: number): Promise<User | undefined> {
    return this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  insertUser(values: Insertable<UserTable>): Promise<{ id: number; email: string }> {
    return this.db.insertInto('users').values(values).returning(['id', 'email']).executeTakeFirstOrThrow();
  }

  async updatePassword(userId: number, passwordHash: string, at: string): Promise<void> {
    await this.db.updateTable('users').set({ password_hash: passwordHash, updated_at: at }).where('id', '=', userId).execute();
  }

  /** Counts a sign-in: one more, and the user seen now. */
  async recordSignIn(userId: number, at: string): Promise<void> {
    await this.db
      .updateTable('users')
      .set((eb) => ({ sign_in_count: eb('sign_in_count', '+', 1), last_seen_at: at }))
      .where('id', '=', userId)
      .execute();
  }

  /** Stores a new key's hash and returns the key itself: the only time it is ever seen. */
  async insertKey(key: NewKey, at: string): Promise<string> {
    const generated = generateApiKey();
    await this.db
      .insertInto('api_keys')
      .values({
        user_id: key.userId,
        name: key.name,
        prefix: generated.prefix,
        key_hash: generated.hash,
        kind: key.kind ?? 'api',
        expires_at: key.expiresAt ?? null,
        impersonator_id: key.impersonatorId ?? null,
        created_at: at,
      })
      .execute();
    return generated.key;
  }

  async keyKind(keyId: number): Promise<ApiKeyKind | undefined> {
    return (await this.db.selectFrom('api_keys').select('kind').where('id', '=', keyId).executeTakeFirst())?.kind;
  }

  /** What the dashboard shows of a key's user and account, with the key's kind (only session keys open the dashboard). */
  findKeyProfile(keyId: number) {
    return this.db
      .selectFrom('api_keys')
      .innerJoin('users', 'users.id', 'api_keys.user_id')
      .innerJoin('accounts', 'accounts.id', 'users.account_id')
      .select(['api_keys.kind', 'users.email', 'accounts.name as account_name', 'accounts.plan'])
      .where('api_keys.id', '=', keyId)
      .executeTakeFirst();
  }

  /** A user's own API keys that still work, newest first (session and impersonation keys are not listed). */
  listLiveApiKeys(userId: number, now: string) {
    return this.db
      .selectFrom('api_keys')
      .select(['id', 'name', 'prefix', 'created_at', 'last_used_at', 'expires_at'])
      .where('user_id', '=', userId)
      .where('kind', '=', 'api')
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .orderBy('id', 'desc')
      .execute();
  }

  async revokeApiKey(userId: number, keyId: number, at: string): Promise<boolean> {
    const result = await this.db
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
  async revokeSessions(userId: number, at: string, keepKeyId?: number): Promise<void> {
    await this.db
      .updateTable('api_keys')
      .set({ revoked_at: at })
      .where('user_id', '=', userId)
      .where('kind', '=', 'session')
      .$if(keepKeyId !== undefined, (query) => query.where('id', '!=', keepKeyId!))
      .where('revoked_at', 'is', null)
      .execute();
  }

  /** Marks one key revoked (a session signed out, or a "become" key found to have outlived its issuer's right). */
  async revokeKey(keyId: number, at: string): Promise<void> {
    await this.db.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', keyId).where('revoked_at', 'is', null).execute();
  }

  /**
   * Whether the user behind a "become" key may still become the key's user: it is the account's owner, or an admin
   * who manages that client now (see adminManages). Checked on every use of such a key, so that a key stops working
   * the moment its issuer is demoted, loses the publication, or the client gains a role beyond the issuer's reach.
   */
  async mayStillImpersonate(impersonatorId: number, userId: number, accountId: number): Promise<boolean> {
    const row = await this.db
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

/** The sign-in throttle's attempts (sign_in_failures), and opening a session once an attempt succeeded. */
export class SessionQueries {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  /**
   * Counts one sign-in attempt against its email and its IP, unless either already holds its limit of attempts
   * since `since`: the ids of the two rows written, or undefined when refused (nothing is written then). Atomic on
   * both databases, so that however many attempts arrive at once, no more than the limit are ever counted (and so
   * judged): one statement that counts and inserts, run on PostgreSQL under advisory locks on the two scopes (taken
   * in the same order by everyone, email then IP, so never a deadlock), which make concurrent attempts on a scope
   * wait for each other and each count, in a fresh snapshot, the rows its predecessors wrote. SQLite has one writer.
   */
  async countAttempt(scopes: AttemptScopes, at: string, since: string): Promise<number[] | undefined> {
    return this.db.transaction().execute(async (trx) => {
      if (this.dialect === 'postgres') {
        await sql`select pg_advisory_xact_lock(${THROTTLE_LOCK_CLASS}, hashtext(${scopes.email}))`.execute(trx);
        await sql`select pg_advisory_xact_lock(${THROTTLE_LOCK_CLASS}, hashtext(${scopes.ip}))`.execute(trx);
      }
      const { rows } = await sql<{ id: number | string }>`
        insert into sign_in_failures (scope, failed_at)
        select attempt.scope, ${timestampValue(this.dialect, at)}
        from (select cast(${scopes.email} as text) as scope union all select cast(${scopes.ip} as text) as scope) attempt
        where (select count(*) from sign_in_failures where scope = ${scopes.email} and failed_at > ${since}) < ${scopes.maxPerEmail}
          and (select count(*) from sign_in_failures where scope = ${scopes.ip} and failed_at > ${since}) < ${scopes.maxPerIp}
        returning id`.execute(trx);
      return rows.length === 0 ? undefined : rows.map((row) => Number(row.id));
    });
  }

  /** The attempts counted against these scopes since `since`, oldest first (for Retry-After). */
  countedAttempts(scopes: string[], since: string) {
    return this.db
      .selectFrom('sign_in_failures')
      .select(['scope', 'failed_at'])
      .where('scope', 'in', scopes)
      .where('failed_at', '>', since)
      .orderBy('failed_at')
      .execute();
  }

  /** Takes counted attempts back. */
  async forgetAttempts(ids: number[]): Promise<void> {
    await this.db.deleteFrom('sign_in_failures').where('id', 'in', ids).execute();
  }

  /** Forgets every attempt counted at or before `until`. */
  async forgetAttemptsUntil(until: string): Promise<void> {
    await this.db.deleteFrom('sign_in_failures').where('failed_at', '<=', until).execute();
  }

  /**
   * In one transaction: counts the user's sign-in, takes back the attempt that succeeded and clears the email's
   * failures, and stores the session key, which it returns.
   */
  openSession(session: { userId: number; emailScope: string; attempt: number[]; expiresAt: string }, at: string): Promise<string> {
    return this.db.transaction().execute(async (trx) => {
      const accounts = new AccountQueries(trx);
      await accounts.recordSignIn(session.userId, at);
      await trx
        .deleteFrom('sign_in_failures')
        .where((eb) => eb.or([eb('scope', '=', session.emailScope), eb('id', 'in', session.attempt)]))
        .execute();
      return accounts.insertKey({ userId: session.userId, name: 'session', kind: 'session', expiresAt: session.expiresAt }, at);
    });
  }
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
