import { randomBytes } from 'node:crypto';
import { AccountQueries } from '../../src/accounts/queries.js';
import { hashPassword } from '../../src/accounts/passwords.js';
import type { Storage } from '../../src/db/connection.js';
import type { ClientAccessLevel } from '../../src/portal/permissions.js';
import { nowIso } from '../../src/time.js';

export interface ClientUser {
  userId: number;
  email: string;
  apiKey: string;
}

let counter = 0;

/**
 * A client user of the account with the given roles, written straight to the database (not through the
 * Clients API), and an API key of its own.
 */
export async function createClientUser(
  storage: Storage,
  accountId: number,
  roles: { publicationId: number; accessLevel: ClientAccessLevel }[],
  options: { password?: string } = {},
): Promise<ClientUser> {
  counter += 1;
  const now = nowIso();
  const email = `client${counter}-${randomBytes(3).toString('hex')}@example.com`;
  const user = await storage.db
    .insertInto('users')
    .values({
      account_id: accountId,
      email,
      firstname: 'Client',
      lastname: `Number ${counter}`,
      password_hash: options.password === undefined ? null : await hashPassword(options.password),
      kind: 'client',
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  for (const role of roles) {
    await storage.db
      .insertInto('roles')
      .values({ user_id: user.id, publication_id: role.publicationId, access_level: role.accessLevel, created_at: now, updated_at: now })
      .execute();
  }
  const apiKey = await new AccountQueries(storage.db).insertKey({ userId: user.id, name: 'test' }, nowIso());
  return { userId: user.id, email, apiKey };
}
