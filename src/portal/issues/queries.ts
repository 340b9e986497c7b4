import type { Insertable, Kysely, Updateable } from 'kysely';
import type { Database, IssueRow, IssueTable } from '../../db/types.js';

/** The magazine issues of publications; every read and delete is scoped to one publication. */
export class IssueQueries {
  constructor(private readonly db: Kysely<Database>) {}

  /** The publication's issues, newest first. */
  list(publicationId: number): Promise<IssueRow[]> {
    return this.db.selectFrom('issues').selectAll().where('publication_id', '=', publicationId).orderBy('id', 'desc').execute();
  }

  find(publicationId: number, id: number): Promise<IssueRow | undefined> {
    return this.db.selectFrom('issues').selectAll().where('id', '=', id).where('publication_id', '=', publicationId).executeTakeFirst();
  }

  insert(values: Insertable<IssueTable>): Promise<IssueRow> {
    return this.db.insertInto('issues').values(values).returningAll().executeTakeFirstOrThrow();
  }

  async update(id: number, changes: Updateable<IssueTable>): Promise<void> {
    await this.db.updateTable('issues').set(changes).where('id', '=', id).execute();
  }

  /** Deletes the publication's issue; false when it has none of this id. */
  async remove(publicationId: number, id: number): Promise<boolean> {
    const result = await this.db.deleteFrom('issues').where('id', '=', id).where('publication_id', '=', publicationId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
