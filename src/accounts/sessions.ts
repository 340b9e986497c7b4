import type { Kysely } from 'kysely';
import type { Database, User } from '../db/types.js';
import { AppError } from '../errors.js';
import { nowIso, toPortalTimestamp } from '../time.js';
import { verifyPassword } from './passwords.js';
import { findUserByEmail } from './queries.js';
import { insertKey, type Principal } from './service.js';

/** A session key lives this long: a working day, then the user signs in again. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** Failed sign-ins count against an email and an IP for this long (a sliding window). */
export const FAILURE_WINDOW_MS = 15 * 60 * 1000;
/** With this many failures for one email inside the window, that email cannot sign in until the oldest expires. */
export const MAX_FAILURES_PER_EMAIL = 5;
/** With this many failures from one IP inside the window (over any emails), that IP cannot sign in. */
export const MAX_FAILURES_PER_IP = 20;

export const WRONG_CREDENTIALS = 'The email or password is wrong';

// An argon2id hash (library defaults, as hashPassword makes) of a password nobody knows: checking a password
// against it when the email is unknown, or the user has no password, costs what a real check costs, so the
// answer's timing does not tell whether the email exists.
const DUMMY_HASH = '$argon2id$v=19$m=19456,t=2,p=1$fBgkZ23FGKj72gmI7Mxtlw$b56L1SjVTICbfk3J3MXW/BESd8KEtJ8Le8tbWOm5P4Y';

export interface SignInInput {
  email: string;
  password: string;
  /** The caller's address, for throttling per IP. */
  ip: string;
}

export interface SessionUser {
  id: number;
  email: string;
  firstname: string;
  lastname: string;
  kind: 'owner' | 'client';
  account_id: number;
}

export interface SignedIn {
  user: SessionUser;
  api_key: string;
  expires_at: string;
}

/** Signing in with an email and password for a session key, signing out, and throttling password guessing. */
export class SessionService {
  constructor(private readonly db: Kysely<Database>) {}

  async signIn(input: SignInInput): Promise<SignedIn> {
    // No format check: a malformed email is simply one no user has, and is answered (and counted) like any other.
    const email = input.email.trim().toLowerCase();
    const scopes = { email: `email:${email}`, ip: `ip:${input.ip}` };
    const now = Date.now();
    await this.checkThrottle(scopes, now);

    const user = await findUserByEmail(this.db, email);
    const passwordHash = user?.password_hash ?? null;
    const matches = await verifyPassword(passwordHash ?? DUMMY_HASH, input.password);
    if (!user || passwordHash === null || !matches) {
      await this.recordFailure(scopes, now);
      throw new AppError('unauthorized', WRONG_CREDENTIALS);
    }
    return this.openSession(user, scopes.email, now);
  }

  /** Revokes the session key the request was made with; any other kind of key is refused (400). */
  async signOut(principal: Principal): Promise<void> {
    const key = await this.db.selectFrom('api_keys').select('kind').where('id', '=', principal.keyId).executeTakeFirst();
    if (key?.kind !== 'session') {
      throw new AppError('validation_failed', 'Sign out with the session key that signing in returned; this key is not a session key');
    }
    await this.db.updateTable('api_keys').set({ revoked_at: nowIso() }).where('id', '=', principal.keyId).where('revoked_at', 'is', null).execute();
  }

  private async openSession(user: User, emailScope: string, now: number): Promise<SignedIn> {
    const at = new Date(now).toISOString();
    const expiresAt = new Date(now + SESSION_TTL_MS).toISOString();
    const apiKey = await this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('users')
        .set((eb) => ({ sign_in_count: eb('sign_in_count', '+', 1), last_seen_at: at }))
        .where('id', '=', user.id)
        .execute();
      await trx.deleteFrom('sign_in_failures').where('scope', '=', emailScope).execute();
      return insertKey(trx, { userId: user.id, name: 'session', kind: 'session', expiresAt }, at);
    });
    return {
      user: {
        id: user.id,
        email: user.email,
        firstname: user.firstname,
        lastname: user.lastname,
        kind: user.kind,
        account_id: user.account_id,
      },
      api_key: apiKey,
      expires_at: toPortalTimestamp(expiresAt),
    };
  }

  /** Refuses the attempt (429) while the email or the IP has too many recent failures, whatever the password. */
  private async checkThrottle(scopes: { email: string; ip: string }, now: number): Promise<void> {
    const since = new Date(now - FAILURE_WINDOW_MS).toISOString();
    const rows = await this.db
      .selectFrom('sign_in_failures')
      .select(['scope', 'failed_at'])
      .where('scope', 'in', [scopes.email, scopes.ip])
      .where('failed_at', '>', since)
      .orderBy('failed_at')
      .execute();
    let waitMs = 0;
    for (const [scope, limit] of [
      [scopes.email, MAX_FAILURES_PER_EMAIL],
      [scopes.ip, MAX_FAILURES_PER_IP],
    ] as const) {
      const times = rows.filter((row) => row.scope === scope).map((row) => Date.parse(row.failed_at));
      if (times.length < limit) continue;
      // The scope falls back under its limit when this failure (the oldest, unless a race let more in) leaves.
      const freeing = times[times.length - limit]!;
      waitMs = Math.max(waitMs, freeing + FAILURE_WINDOW_MS - now);
    }
    if (waitMs > 0) {
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      throw new AppError('rate_limited', `Too many failed sign-ins; try again in ${seconds} seconds`, [], seconds);
    }
  }

  /** Counts a failure against the email and the IP, and forgets failures that have left the window. */
  private async recordFailure(scopes: { email: string; ip: string }, now: number): Promise<void> {
    const at = new Date(now).toISOString();
    const since = new Date(now - FAILURE_WINDOW_MS).toISOString();
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('sign_in_failures').where('failed_at', '<=', since).execute();
      await trx
        .insertInto('sign_in_failures')
        .values([
          { scope: scopes.email, failed_at: at },
          { scope: scopes.ip, failed_at: at },
        ])
        .execute();
    });
  }
}
