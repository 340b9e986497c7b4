import type { Insertable, Kysely } from 'kysely';
import { preparedQuery } from '../../db/prepared.js';
import type { Database, Publication, PublicationTable } from '../../db/types.js';
import type { AccessLevel } from '../permissions.js';

export type PublicationWithAccess = Publication & { access_level: AccessLevel };

export class PublicationQueries {
  /** The lookup behind every portal request, prepared once. */
  private readonly findOwnedPrepared;

  constructor(private readonly db: Kysely<Database>) {
    this.findOwnedPrepared = preparedQuery(db, 2, (accountId: number, appId: string) =>
      db.selectFrom('publications').selectAll().where('account_id', '=', accountId).where('app_id', '=', appId),
    );
  }

  /** The account's publication with this app id. */
  async findOwned(accountId: number, appId: string): Promise<Publication | undefined> {
    return (await this.findOwnedPrepared(accountId, appId))[0];
  }

  /** The account's publication with this app id, with the client's role on it; undefined when it holds none. */
  findHeld(userId: number, accountId: number, appId: string): Promise<PublicationWithAccess | undefined> {
    return this.held(userId, accountId).where('publications.app_id', '=', appId).executeTakeFirst();
  }

  /** The account's publications, by id. */
  listOwned(accountId: number): Promise<Publication[]> {
    return this.db.selectFrom('publications').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  }

  /** The account's publications the client holds a role on, each with that role, by id. */
  listHeld(userId: number, accountId: number): Promise<PublicationWithAccess[]> {
    return this.held(userId, accountId).orderBy('publications.id').execute();
  }

  async accountExists(accountId: number): Promise<boolean> {
    return (await this.db.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst()) !== undefined;
  }

  /** Whether any publication, of any account, has this app id. */
  async appIdTaken(appId: string): Promise<boolean> {
    return (await this.db.selectFrom('publications').select('id').where('app_id', '=', appId).executeTakeFirst()) !== undefined;
  }

  insert(values: Insertable<PublicationTable>): Promise<Publication> {
    return this.db.insertInto('publications').values(values).returningAll().executeTakeFirstOrThrow();
  }

  /** The ids among `ids` that are categories (or issues) of the publication. */
  async idsInPublication(table: 'categories' | 'issues', publicationId: number, ids: number[]): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db.selectFrom(table).select('id').where('publication_id', '=', publicationId).where('id', 'in', ids).execute();
    return new Set(rows.map((row) => row.id));
  }

  private held(userId: number, accountId: number) {
    return this.db
      .selectFrom('publications')
      .innerJoin('roles', 'roles.publication_id', 'publications.id')
      .selectAll('publications')
      .select('roles.access_level')
      .where('roles.user_id', '=', userId)
      .where('publications.account_id', '=', accountId);
  }
}
