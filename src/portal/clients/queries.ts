import { type Insertable, type Kysely, type SelectQueryBuilder, sql, type Updateable } from 'kysely';
import { adminManages } from '../../accounts/queries.js';
import type { Database, RoleRow, User, UserTable } from '../../db/types.js';
import type { ClientAccessLevel } from '../permissions.js';
import type { ClientOrderField } from './schemas.js';

export interface ClientFilter {
  accountId: number;
  /** Text that must occur, case-insensitively, in the first name, last name or email. */
  text?: string;
  /** Only clients holding a role on this publication. */
  publicationId?: number;
  /** Only the clients this admin manages (see adminManages); unset for the owner, who manages every client. */
  managedBy?: number;
}

export interface ClientOrder {
  field: ClientOrderField;
  direction: 'asc' | 'desc';
}

export interface RoleValue {
  publication_id: number;
  access_level: ClientAccessLevel;
}

type UserSelect = SelectQueryBuilder<Database, 'users', object>;

/** Columns that may hold NULL: those sort last either way, the same on both databases. */
const NULLABLE_ORDER_FIELDS = new Set<ClientOrderField>(['last_seen_at']);

/** The account's client with this id; with `managedBy`, only if that admin manages it. */
export function findClient(db: Kysely<Database>, accountId: number, id: number, managedBy?: number): Promise<User | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('kind', '=', 'client')
    .$if(managedBy !== undefined, (query) => query.where(adminManages({ adminId: managedBy!, accountId, user: 'users.id' })))
    .executeTakeFirst();
}

function filtered(db: Kysely<Database>, filter: ClientFilter): UserSelect {
  let query: UserSelect = db.selectFrom('users').where('users.account_id', '=', filter.accountId).where('users.kind', '=', 'client');
  if (filter.managedBy !== undefined) {
    query = query.where(adminManages({ adminId: filter.managedBy, accountId: filter.accountId, user: 'users.id' }));
  }
  if (filter.text) {
    const pattern = `%${escapeLike(filter.text.toLowerCase())}%`;
    query = query.where((eb) =>
      eb.or(
        (['firstname', 'lastname', 'email'] as const).map((column) => sql<boolean>`lower(${sql.ref(`users.${column}`)}) like ${pattern} escape '\\'`),
      ),
    );
  }
  if (filter.publicationId !== undefined) {
    const publicationId = filter.publicationId;
    query = query.where((eb) =>
      eb.exists(
        eb.selectFrom('roles').select('roles.id').whereRef('roles.user_id', '=', 'users.id').where('roles.publication_id', '=', publicationId),
      ),
    );
  }
  return query;
}

/** `%`, `_` and the escape character itself match only themselves. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}

export async function countClients(db: Kysely<Database>, filter: ClientFilter): Promise<number> {
  const row = await filtered(db, filter)
    .select((eb) => eb.fn.countAll<number>().as('total'))
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

export function clientWindow(db: Kysely<Database>, filter: ClientFilter, order: ClientOrder, limit: number, offset: number): Promise<User[]> {
  return filtered(db, filter)
    .selectAll('users')
    .$call((query) =>
      NULLABLE_ORDER_FIELDS.has(order.field)
        ? query.orderBy(`users.${order.field}`, (ob) => (order.direction === 'asc' ? ob.asc() : ob.desc()).nullsLast())
        : query.orderBy(`users.${order.field}`, order.direction),
    )
    .$if(order.field !== 'id', (query) => query.orderBy('users.id', order.direction))
    .limit(limit)
    .offset(offset)
    .execute();
}

/** The roles of these users, by user, each list in publication order. */
export async function rolesOf(db: Kysely<Database>, userIds: number[]): Promise<Map<number, RoleRow[]>> {
  const byUser = new Map<number, RoleRow[]>();
  if (userIds.length === 0) return byUser;
  const rows = await db.selectFrom('roles').selectAll().where('user_id', 'in', userIds).orderBy('publication_id').execute();
  for (const row of rows) {
    const list = byUser.get(row.user_id) ?? [];
    list.push(row);
    byUser.set(row.user_id, list);
  }
  return byUser;
}

/** The ids among `ids` that are publications of the account. */
export async function accountPublicationIds(db: Kysely<Database>, accountId: number, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('publications').select('id').where('account_id', '=', accountId).where('id', 'in', ids).execute();
  return new Set(rows.map((row) => row.id));
}

export async function insertClient(db: Kysely<Database>, values: Insertable<UserTable>): Promise<number> {
  const { id } = await db.insertInto('users').values(values).returning('id').executeTakeFirstOrThrow();
  return id;
}

export async function updateClient(db: Kysely<Database>, id: number, changes: Updateable<UserTable>): Promise<void> {
  await db.updateTable('users').set(changes).where('id', '=', id).where('kind', '=', 'client').execute();
}

/** Deletes the client; its keys and roles go with it (foreign keys cascade), its articles stay (author_id set null). */
export async function deleteClient(db: Kysely<Database>, accountId: number, id: number): Promise<boolean> {
  const result = await db
    .deleteFrom('users')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('kind', '=', 'client')
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Makes the user's roles exactly `roles`: unchanged roles keep their id and dates, changed levels are updated,
 * the rest are deleted or inserted. Runs inside the caller's transaction.
 */
export async function replaceRoles(db: Kysely<Database>, userId: number, current: RoleRow[], roles: RoleValue[], now: string): Promise<void> {
  const wanted = new Map(roles.map((role) => [role.publication_id, role.access_level]));
  const removed = current.filter((role) => !wanted.has(role.publication_id)).map((role) => role.id);
  if (removed.length > 0) await db.deleteFrom('roles').where('id', 'in', removed).execute();
  for (const role of current) {
    const level = wanted.get(role.publication_id);
    if (level !== undefined && level !== role.access_level) {
      await db.updateTable('roles').set({ access_level: level, updated_at: now }).where('id', '=', role.id).execute();
    }
  }
  const held = new Set(current.map((role) => role.publication_id));
  const added = roles.filter((role) => !held.has(role.publication_id));
  if (added.length > 0) {
    await db
      .insertInto('roles')
      .values(
        added.map((role) => ({
          user_id: userId,
          publication_id: role.publication_id,
          access_level: role.access_level,
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
  }
}
