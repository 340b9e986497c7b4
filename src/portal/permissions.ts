import { forbidden } from '../errors.js';

/** What a user may do on one publication: the account's owner holds every publication; clients hold roles. */
export const CLIENT_ACCESS_LEVELS = ['admin', 'editor', 'author', 'viewer'] as const;
export type ClientAccessLevel = (typeof CLIENT_ACCESS_LEVELS)[number];
export type AccessLevel = 'owner' | ClientAccessLevel;

const RANK: Record<AccessLevel, number> = { viewer: 0, author: 1, editor: 2, admin: 3, owner: 4 };

/** The least access level each action needs on a publication (the role table of the README); clients are managed
 * by the owner and admins, as the clients service decides. */
export const REQUIRED_LEVEL = {
  read: 'viewer',
  /** Create articles, import them, and change or delete one's own. */
  write_articles: 'author',
  /** Change or delete anyone's articles. */
  edit_all: 'editor',
  /** Create, change and delete feeds, categories and issues. */
  manage_content: 'editor',
} as const satisfies Record<string, AccessLevel>;
export type Action = keyof typeof REQUIRED_LEVEL;

const ACTION_TEXT: Record<Action, string> = {
  read: 'read this publication',
  write_articles: 'create articles',
  edit_all: 'change or delete articles others wrote',
  manage_content: 'manage feeds, categories and issues',
};

export function allows(level: AccessLevel, action: Action): boolean {
  return RANK[level] >= RANK[REQUIRED_LEVEL[action]];
}

export function requireAction(level: AccessLevel, action: Action): void {
  if (!allows(level, action)) throw forbidden(`Your access level (${level}) does not allow you to ${ACTION_TEXT[action]}`);
}
