import { type Insertable, type Kysely, type SelectQueryBuilder, sql, type Updateable } from 'kysely';
import { AccountQueries, adminManages } from '../../accounts/queries.js';
import type { Database, RoleRow, User, UserTable } from '../../db/types.js';
import { AuditQueries } from '../audit/queries.js';
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

/** The handles a change of clients writes through, all on one transaction. */
export interface ClientWrites {
  clients: ClientQueries;
  accounts: AccountQueries;
  audit: AuditQueries;
}

/**
 * Clients (the account's sub-users) and their roles. Built on the database or on a transaction's handle: `transaction`
 * hands the work the client, account and audit queries of one transaction, so a change and its audit entry are kept
 * together or not at all.
 */
export class ClientQueries {
  constructor(private readonly db: Kysely<Database>) {}

  transaction<T>(work: (writes: ClientWrites) => Promise<T>): Promise<T> {
    return this.db
      .transaction()
      .execute((trx) => work({ clients: new ClientQueries(trx), accounts: new AccountQueries(trx), audit: new AuditQueries(trx) }));
  }

  /** The account's client with this id; with `managedBy`, only if that admin manages it. */
  find(accountId: number, id: number, managedBy?: number): Promise<User | undefined> {
    return this.db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('kind', '=', 'client')
      .$if(managedBy !== undefined, (query) => query.where(adminManages({ adminId: managedBy!, accountId, user: 'users.id' })))
      .executeTakeFirst();
  }

  /** Whether any user, of any account, has this email. */
  async emailTaken(email: string): Promise<boolean> {
    return (await new AccountQueries(this.db).findUserByEmail(email)) !== undefined;
  }

  async count(filter: ClientFilter): Promise<number> {
    const row = await filtered(this.db, filter)
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

  window(filter: ClientFilter, order: ClientOrder, limit: number, offset: number): Promise<User[]> {
    return filtered(this.db, filter)
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
  async rolesOf(userIds: number[]): Promise<Map<number, RoleRow[]>> {
    const byUser = new Map<number, RoleRow[]>();
    if (userIds.length === 0) return byUser;
    const rows = await this.db.selectFrom('roles').selectAll().where('user_id', 'in', userIds).orderBy('publication_id').execute();
    for (const row of rows) {
      const list = byUser.get(row.user_id) ?? [];
      list.push(row);
      byUser.set(row.user_id, list);
    }
    return byUser;
  }

  /** The publications of the account on which the user is an admin. */
  async adminPublicationIds(userId: number, accountId: number): Promise<number[]> {
    const rows = await this.db
      .selectFrom('roles')
      .innerJoin('publications', 'publications.id', 'roles.publication_id')
      .select('roles.publication_id')
      .where('roles.user_id', '=', userId)
      .where('roles.access_level', '=', 'admin')
      .where('publications.account_id', '=', accountId)
      .execute();
    return rows.map((row) => row.publication_id);
  }

  /** The ids among `ids` that are publications of the account. */
  async accountPublicationIds(accountId: number, ids: number[]): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db.selectFrom('publications').select('id').where('account_id', '=', accountId).where('id', 'in', ids).execute();
    return new Set(rows.map((row) => row.id));
  }

  async insert(values: Insertable<UserTable>): Promise<number> {
    const { id } = await this.db.insertInto('users').values(values).returning('id').executeTakeFirstOrThrow();
    return id;
  }

  async update(id: number, changes: Updateable<UserTable>): Promise<void> {
    await this.db.updateTable('users').set(changes).where('id', '=', id).where('kind', '=', 'client').execute();
  }

  /** Deletes the client; its keys and roles go with it (foreign keys cascade), its articles stay (author_id set null). */
  async delete(accountId: number, id: number): Promise<boolean> {
    const result = await this.db
      .deleteFrom('users')
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('kind', '=', 'client')
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /**
   * Makes the user's roles exactly `roles`: unchanged roles keep their id and dates, changed levels are updated,
   * the rest are deleted or inserted. Run it in the transaction of the change.
   */
  async replaceRoles(userId: number, current: RoleRow[], roles: RoleValue[], now: string): Promise<void> {
    const wanted = new Map(roles.map((role) => [role.publication_id, role.access_level]));
    const removed = current.filter((role) => !wanted.has(role.publication_id)).map((role) => role.id);
    if (removed.length > 0) await this.db.deleteFrom('roles').where('id', 'in', removed).execute();
    for (const role of current) {
      const level = wanted.get(role.publication_id);
      if (level !== undefined && level !== role.access_level) {
        await this.db.updateTable('roles').set({ access_level: level, updated_at: now }).where('id', '=', role.id).execute();
      }
    }
    const held = new Set(current.map((role) => role.publication_id));
    const added = roles.filter((role) => !held.has(role.publication_id));
    if (added.length > 0) {
      await this.db
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
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}
