import { createHash, randomBytes } from 'node:crypto';

const KEY_PREFIX = 'mh_live_';
const SHOWN_PREFIX_LENGTH = KEY_PREFIX.length + 8;

export interface GeneratedKey {
  /** The whole key: given to the user once, never stored. */
  key: string;
  /** What listings show so a user can tell keys apart. */
  prefix: string;
  hash: string;
}

/** 32 random bytes (256 bits) behind a readable prefix. */
export function generateApiKey(): GeneratedKey {
  const key = KEY_PREFIX + randomBytes(32).toString('base64url');
  return { key, prefix: key.slice(0, SHOWN_PREFIX_LENGTH), hash: hashApiKey(key) };
}

// A key carries 256 bits of entropy, so a fast hash is as safe as a slow one here (no dictionary to try) and
// lets every request find its key by an indexed lookup. Passwords, which people choose, use argon2id instead.
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function looksLikeApiKey(value: string): boolean {
  return value.startsWith(KEY_PREFIX) && value.length <= 128;
}
