import { PLAN_NAMES as PLANS, type PlanName } from '../config.js';
import type { Account, Publication, RoleTable } from '../db/types.js';
import { conflict, type FieldProblem, invalidField, notFound, validationError } from '../errors.js';
import { nowIso } from '../time.js';
import { hashApiKey, looksLikeApiKey } from './keys.js';
import { hashPassword, verifyPassword } from './passwords.js';
import type { AccountQueries } from './queries.js';

/** Who is calling: the user a key belongs to. */
export interface Principal {
  userId: number;
  accountId: number;
  kind: 'owner' | 'client';
  keyId: number;
  /** Set when the key came from "become": the owner or admin acting as this user. */
  impersonatorId: number | null;
  /** The account's plan: the lead API's rate limit and quota. */
  plan: PlanName;
  /** What the user holds of the publication the request names, read with the key (see authenticate). */
  named?: NamedPublication;
}

/** The account's publication with an app id, if there is one, and the user's role on it, if any (owners have none). */
export interface NamedPublication {
  appId: string;
  publication: Publication | undefined;
  role: RoleTable['access_level'] | undefined;
}

/** last_used_at moves at most once a minute per key, so that reads do not each cost a write. */
const TOUCH_INTERVAL_MS = 60_000;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;
export const MIN_PASSWORD_LENGTH = 10;
export const MAX_KEY_NAME_LENGTH = 100;
/** Who signs the outreach emails: a name as it would close a letter. */
export const MAX_SENDER_NAME_LENGTH = 100;
/** What the account offers, in a sentence or two (the built-in generator condenses it into one). */
export const MAX_SENDER_OFFER_LENGTH = 500;

export class AccountService {
  constructor(private readonly queries: AccountQueries) {}

  async createAccount(input: { email: string; password: string; name?: string; plan?: string }) {
    const email = normalizeEmail(input.email);
    const plan = input.plan ?? 'free';
    if (!(PLANS as readonly string[]).includes(plan)) {
      throw invalidField('/plan', `must be one of ${PLANS.join(', ')}`);
    }
    checkPassword(input.password, email);
    if (await this.queries.findUserByEmail(email)) throw conflict(`A user with the email ${email} already exists`);
    const passwordHash = await hashPassword(input.password);
    const now = nowIso();
    const name = input.name?.trim() || email.split('@')[1]!;
    return this.queries.transaction(async (queries) => {
      const account = await queries.insertAccount({ name, plan: plan as PlanName, created_at: now, updated_at: now });
      const user = await queries.insertUser({
        account_id: account.id,
        email,
        firstname: '',
        lastname: '',
        password_hash: passwordHash,
        kind: 'owner',
        created_at: now,
        updated_at: now,
      });
      const apiKey = await queries.insertKey({ userId: user.id, name: 'default' }, now);
      return { account: publicAccount(account), user, api_key: apiKey };
    });
  }

  async getAccount(id: number): Promise<Account> {
    const account = await this.queries.findAccount(id);
    if (!account) throw notFound(`Account ${id}`);
    return account;
  }

  async createKey(input: { userId: number; name?: string }): Promise<string> {
    const name = input.name?.trim() || 'default';
    if (name.length > MAX_KEY_NAME_LENGTH) throw invalidField('/name', `must be at most ${MAX_KEY_NAME_LENGTH} characters`);
    if (!(await this.queries.findUser(input.userId))) throw notFound(`User ${input.userId}`);
    return this.queries.insertKey({ userId: input.userId, name }, nowIso());
  }

  /**
   * The principal a key acts as, or undefined for an unknown, revoked or expired key. With `appId` (a portal URL's
   * publication), what the principal holds of that publication is read in the same query (`named`).
   */
  async authenticate(key: string, appId?: string): Promise<Principal | undefined> {
    if (!looksLikeApiKey(key)) return undefined;
    const row = await this.queries.findKeyOwner(hashApiKey(key), appId);
    if (!row || row.revoked_at !== null) return undefined;
    const now = nowIso();
    if (row.expires_at !== null && row.expires_at <= now) return undefined;
    // A key from "become" works only while its issuer may still become this client: it dies with the issuer's
    // right (a demotion, a lost publication, a role the client gained beyond the issuer's reach), and stays dead.
    if (row.impersonator_id !== null && !(await this.queries.mayStillImpersonate(row.impersonator_id, row.user_id, row.account_id))) {
      await this.queries.revokeKey(row.key_id, now);
      return undefined;
    }
    if (row.last_used_at === null || Date.parse(now) - Date.parse(row.last_used_at) >= TOUCH_INTERVAL_MS) {
      // An impersonation is not the client's own activity: its last_seen_at stays as the client left it.
      await this.queries.touchKey(row.key_id, row.impersonator_id === null ? row.user_id : undefined, now);
    }
    const principal: Principal = {
      userId: row.user_id,
      accountId: row.account_id,
      kind: row.kind,
      keyId: row.key_id,
      impersonatorId: row.impersonator_id,
      plan: row.plan,
    };
    if (appId !== undefined) principal.named = { appId, publication: row.publication, role: row.role };
    return principal;
  }

  /**
   * The dashboard's sign-in check: the principal of a live session key (from signing in), with what pages show of
   * its user and account; undefined for any other key, so that an API key cannot stand in for a session cookie.
   */
  async authenticateSession(key: string): Promise<SessionProfile | undefined> {
    const principal = await this.authenticate(key);
    if (!principal) return undefined;
    const profile = await this.queries.findKeyProfile(principal.keyId);
    if (!profile || profile.kind !== 'session') return undefined;
    return { principal, email: profile.email, accountName: profile.account_name, plan: profile.plan };
  }

  /** The user's own API keys that still work: never their hashes, nor session or "become" keys. */
  async listKeys(userId: number): Promise<KeySummary[]> {
    const rows = await this.queries.listLiveApiKeys(userId, nowIso());
    return rows.map((row) => ({ id: row.id, name: row.name, prefix: row.prefix, created_at: row.created_at, last_used_at: row.last_used_at }));
  }

  /** Revokes one of the user's own API keys; another user's key, or one already revoked, is not found. */
  async revokeKey(userId: number, keyId: number): Promise<void> {
    if (!(await this.queries.revokeApiKey(userId, keyId, nowIso()))) throw notFound(`API key ${keyId}`);
  }

  /**
   * Changes the password of the principal's user, who must give the current one; every other session of the user
   * ends (its API keys stay: they are not tied to the password).
   */
  async changePassword(principal: Principal, input: { currentPassword: string; password: string; passwordConfirmation: string }): Promise<void> {
    const user = await this.queries.findUser(principal.userId);
    if (!user) throw notFound(`User ${principal.userId}`);
    if (user.password_hash === null || !(await verifyPassword(user.password_hash, input.currentPassword))) {
      throw invalidField('/current_password', 'is not your current password');
    }
    checkPassword(input.password, user.email);
    if (input.passwordConfirmation !== input.password) throw invalidField('/password_confirmation', 'must match the new password');
    const passwordHash = await hashPassword(input.password);
    const now = nowIso();
    await this.queries.transaction(async (queries) => {
      await queries.updatePassword(user.id, passwordHash, now);
      await queries.revokeSessions(user.id, now, principal.keyId);
    });
  }

  /**
   * Who signs the account's outreach emails and what it offers (the lead generator and `{{senderName}}` read them).
   * Trimmed; an empty value clears the setting, so that the generator falls back to the owner's name or no offer.
   */
  async updateSender(accountId: number, input: SenderSettings): Promise<SenderSettings> {
    const senderName = input.senderName.trim();
    const senderOffer = input.senderOffer.replace(/\r\n?/g, '\n').trim();
    const problems: FieldProblem[] = [];
    if ([...senderName].length > MAX_SENDER_NAME_LENGTH) {
      problems.push({ path: '/sender_name', message: `must be at most ${MAX_SENDER_NAME_LENGTH} characters` });
    } else if (/[\u0000-\u001f\u007f]/.test(senderName)) {
      problems.push({ path: '/sender_name', message: 'must be a single line of text' });
    }
    if ([...senderOffer].length > MAX_SENDER_OFFER_LENGTH) {
      problems.push({ path: '/sender_offer', message: `must be at most ${MAX_SENDER_OFFER_LENGTH} characters` });
    } else if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(senderOffer)) {
      problems.push({ path: '/sender_offer', message: 'must be plain text' });
    }
    if (problems.length > 0) throw validationError(problems);
    const updated = await this.queries.updateAccountSender(
      accountId,
      { sender_name: senderName || null, sender_offer: senderOffer || null },
      nowIso(),
    );
    if (!updated) throw notFound(`Account ${accountId}`);
    return { senderName, senderOffer };
  }
}

export interface SenderSettings {
  senderName: string;
  senderOffer: string;
}

export interface SessionProfile {
  principal: Principal;
  email: string;
  accountName: string;
  plan: string;
}

export interface KeySummary {
  id: number;
  name: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
}

function publicAccount(account: Account) {
  return { id: account.id, name: account.name, plan: account.plan };
}

export function normalizeEmail(email: string): string {
  const normalized = email.trim().toLowerCase();
  if (!EMAIL.test(normalized) || !normalized.split('@')[1]!.includes('.')) {
    throw invalidField('/email', 'must be a valid email address');
  }
  return normalized;
}

export function checkPassword(password: string, email: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw invalidField('/password', `must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  if (password.length > 1024) throw invalidField('/password', 'must be at most 1024 characters');
  if (password.trim().toLowerCase() === email) throw invalidField('/password', 'must not be the email address');
}
