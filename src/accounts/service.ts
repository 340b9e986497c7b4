import type { Kysely } from 'kysely';
import type { Account, ApiKeyKind, Database } from '../db/types.js';
import { conflict, invalidField, notFound } from '../errors.js';
import { nowIso } from '../time.js';
import { generateApiKey, hashApiKey, looksLikeApiKey } from './keys.js';
import { hashPassword } from './passwords.js';
import { findKeyOwnerQuery, findUser, findUserByEmail, touchKey } from './queries.js';

export const PLANS = ['free', 'pro', 'business'] as const;
export type Plan = (typeof PLANS)[number];

/** Who is calling: the user a key belongs to. */
export interface Principal {
  userId: number;
  accountId: number;
  kind: 'owner' | 'client';
  keyId: number;
  /** Set when the key came from "become": the owner or admin acting as this user. */
  impersonatorId: number | null;
}

/** last_used_at moves at most once a minute per key, so that reads do not each cost a write. */
const TOUCH_INTERVAL_MS = 60_000;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;
export const MIN_PASSWORD_LENGTH = 10;

export class AccountService {
  private readonly findKeyOwner: ReturnType<typeof findKeyOwnerQuery>;

  constructor(private readonly db: Kysely<Database>) {
    this.findKeyOwner = findKeyOwnerQuery(db);
  }

  async createAccount(input: { email: string; password: string; name?: string; plan?: string }) {
    const email = normalizeEmail(input.email);
    const plan = input.plan ?? 'free';
    if (!(PLANS as readonly string[]).includes(plan)) {
      throw invalidField('/plan', `must be one of ${PLANS.join(', ')}`);
    }
    checkPassword(input.password, email);
    if (await findUserByEmail(this.db, email)) throw conflict(`A user with the email ${email} already exists`);
    const passwordHash = await hashPassword(input.password);
    const now = nowIso();
    const name = input.name?.trim() || email.split('@')[1]!;
    return this.db.transaction().execute(async (trx) => {
      const account = await trx
        .insertInto('accounts')
        .values({ name, plan: plan as Plan, created_at: now, updated_at: now })
        .returningAll()
        .executeTakeFirstOrThrow();
      const user = await trx
        .insertInto('users')
        .values({
          account_id: account.id,
          email,
          firstname: '',
          lastname: '',
          password_hash: passwordHash,
          kind: 'owner',
          created_at: now,
          updated_at: now,
        })
        .returning(['id', 'email'])
        .executeTakeFirstOrThrow();
      const apiKey = await insertKey(trx, { userId: user.id, name: 'default' }, now);
      return { account: publicAccount(account), user, api_key: apiKey };
    });
  }

  async createKey(input: { userId: number; name?: string }): Promise<string> {
    if (!(await findUser(this.db, input.userId))) throw notFound(`User ${input.userId}`);
    return insertKey(this.db, { userId: input.userId, name: input.name?.trim() || 'default' });
  }

  /** The principal a key acts as, or undefined for an unknown, revoked or expired key. */
  async authenticate(key: string): Promise<Principal | undefined> {
    if (!looksLikeApiKey(key)) return undefined;
    const [row] = await this.findKeyOwner(hashApiKey(key));
    if (!row || row.revoked_at !== null) return undefined;
    const now = nowIso();
    if (row.expires_at !== null && row.expires_at <= now) return undefined;
    if (row.last_used_at === null || Date.parse(now) - Date.parse(row.last_used_at) >= TOUCH_INTERVAL_MS) {
      await touchKey(this.db, row.key_id, row.user_id, now);
    }
    return { userId: row.user_id, accountId: row.account_id, kind: row.kind, keyId: row.key_id, impersonatorId: row.impersonator_id };
  }
}

export interface NewKey {
  userId: number;
  name: string;
  kind?: ApiKeyKind;
  expiresAt?: string | null;
  impersonatorId?: number | null;
}

/** Stores a new key's hash and returns the key itself: the only time it is ever seen. */
export async function insertKey(db: Kysely<Database>, key: NewKey, now = nowIso()): Promise<string> {
  const generated = generateApiKey();
  await db
    .insertInto('api_keys')
    .values({
      user_id: key.userId,
      name: key.name,
      prefix: generated.prefix,
      key_hash: generated.hash,
      kind: key.kind ?? 'api',
      expires_at: key.expiresAt ?? null,
      impersonator_id: key.impersonatorId ?? null,
      created_at: now,
    })
    .execute();
  return generated.key;
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

