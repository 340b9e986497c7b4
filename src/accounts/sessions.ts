import type { User } from '../db/types.js';
import { AppError } from '../errors.js';
import { nowIso, toPortalTimestamp } from '../time.js';
import { verifyPassword } from './passwords.js';
import type { AccountQueries, SessionQueries } from './queries.js';
import type { Principal } from './service.js';

/** A session key lives this long: a working day, then the user signs in again. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** Failed sign-ins count against an email and an IP for this long (a sliding window). */
export const FAILURE_WINDOW_MS = 15 * 60 * 1000;
/** With this many failures for one email inside the window, that email cannot sign in until the oldest expires. */
export const MAX_FAILURES_PER_EMAIL = 5;
/** With this many failures from one IP inside the window (over any emails), that IP cannot sign in. */
export const MAX_FAILURES_PER_IP = 20;

export const WRONG_CREDENTIALS = 'The email or password is wrong';
/**
 * What a sign-up for an email already registered is told: the same whoever holds the email, and nothing that
 * names it as registered, so that the form is no directory of the service's users.
 */
export const SIGN_UP_REFUSED =
  'We could not create an account with these details. If you already have an account, sign in instead; otherwise check the email address.';

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

/**
 * Signing in with an email and password for a session key, signing up, signing out, and throttling guesses.
 *
 * Every attempt is counted against its email and its IP before its password is judged, in one atomic step that
 * refuses it (429) once the email holds MAX_FAILURES_PER_EMAIL attempts in the window or the IP
 * MAX_FAILURES_PER_IP: however many attempts arrive at once, no more than that many are ever judged. A failed
 * attempt stays counted; a successful one is taken back, and signing in clears the email's failures.
 */
export class SessionService {
  constructor(
    private readonly accounts: AccountQueries,
    private readonly queries: SessionQueries,
  ) {}

  async signIn(input: SignInInput): Promise<SignedIn> {
    // No format check: a malformed email is simply one no user has, and is answered (and counted) like any other.
    const email = input.email.trim().toLowerCase();
    const scopes = scopesOf(email, input.ip);
    const now = Date.now();
    const attempt = await this.countAttempt(scopes, now);

    const user = await this.accounts.findUserByEmail(email);
    const passwordHash = user?.password_hash ?? null;
    const matches = await verifyPassword(passwordHash ?? DUMMY_HASH, input.password);
    if (!user || passwordHash === null || !matches) {
      await this.forgetExpired(now);
      throw new AppError('unauthorized', WRONG_CREDENTIALS);
    }
    return this.openSession(user, scopes, attempt, now);
  }

  /**
   * Signs up: `create` makes the account (AccountService.createAccount) as one attempt counted like a sign-in's,
   * so that an address or email past the sign-in limit is refused (429) before anything is created, then opens a
   * session for the new owner. A taken email stays counted as a failure (probing which addresses are registered is
   * throttled like guessing passwords) and is answered with SIGN_UP_REFUSED (a conflict), which does not say so;
   * any other refusal (a bad email or password) is not a guess and is taken back.
   */
  async signUp<T extends { user: { id: number } }>(
    input: { email: string; ip: string },
    create: () => Promise<T>,
  ): Promise<{ created: T; session: SignedIn }> {
    const scopes = scopesOf(input.email.trim().toLowerCase(), input.ip);
    const now = Date.now();
    const attempt = await this.countAttempt(scopes, now);
    let created: T;
    try {
      created = await create();
    } catch (error) {
      if (error instanceof AppError && error.code === 'conflict') {
        await this.forgetExpired(now);
        throw new AppError('conflict', SIGN_UP_REFUSED);
      }
      await this.queries.forgetAttempts(attempt);
      throw error;
    }
    const user = await this.accounts.findUser(created.user.id);
    if (!user) throw new AppError('internal', "The new account's owner was not found");
    return { created, session: await this.openSession(user, scopes, attempt, now) };
  }

  /** Revokes the session key the request was made with; any other kind of key is refused (400). */
  async signOut(principal: Principal): Promise<void> {
    if ((await this.accounts.keyKind(principal.keyId)) !== 'session') {
      throw new AppError('validation_failed', 'Sign out with the session key that signing in returned; this key is not a session key');
    }
    await this.accounts.revokeKey(principal.keyId, nowIso());
  }

  /** Opens the session; the attempt that succeeded is taken back, and the email's failures are cleared. */
  private async openSession(user: User, scopes: Scopes, attempt: number[], now: number): Promise<SignedIn> {
    const at = new Date(now).toISOString();
    const expiresAt = new Date(now + SESSION_TTL_MS).toISOString();
    const apiKey = await this.queries.openSession({ userId: user.id, emailScope: scopes.email, attempt, expiresAt }, at);
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

  /**
   * Counts the attempt against the email and the IP, atomically with checking their limits: the ids of its rows,
   * or 429 (nothing counted) while either holds its limit, with Retry-After the seconds until the oldest of those
   * attempts leaves the window.
   */
  private async countAttempt(scopes: Scopes, now: number): Promise<number[]> {
    const at = new Date(now).toISOString();
    const since = new Date(now - FAILURE_WINDOW_MS).toISOString();
    const counted = await this.queries.countAttempt(
      { email: scopes.email, ip: scopes.ip, maxPerEmail: MAX_FAILURES_PER_EMAIL, maxPerIp: MAX_FAILURES_PER_IP },
      at,
      since,
    );
    if (counted) return counted;
    const rows = await this.queries.countedAttempts([scopes.email, scopes.ip], since);
    let waitMs = 0;
    for (const [scope, limit] of [
      [scopes.email, MAX_FAILURES_PER_EMAIL],
      [scopes.ip, MAX_FAILURES_PER_IP],
    ] as const) {
      const times = rows.filter((row) => row.scope === scope).map((row) => Date.parse(row.failed_at));
      if (times.length < limit) continue;
      // The scope falls back under its limit when the oldest of its last `limit` attempts leaves the window.
      const freeing = times[times.length - limit]!;
      waitMs = Math.max(waitMs, freeing + FAILURE_WINDOW_MS - now);
    }
    // At least a second, also when the attempts that filled the scope were taken back meanwhile (they succeeded).
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    throw new AppError('rate_limited', `Too many failed sign-ins; try again in ${seconds} seconds`, [], seconds);
  }

  /** Forgets every failure that has left the window (after a failure, so that the table holds only recent ones). */
  private async forgetExpired(now: number): Promise<void> {
    const since = new Date(now - FAILURE_WINDOW_MS).toISOString();
    await this.queries.forgetAttemptsUntil(since);
  }
}

interface Scopes {
  email: string;
  ip: string;
}

function scopesOf(email: string, ip: string): Scopes {
  return { email: `email:${email}`, ip: `ip:${ip}` };
}
