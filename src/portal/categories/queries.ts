import type { Kysely } from 'kysely';
import type { CategoryRow, Database } from '../../db/types.js';

/** The categories of publications; every read and delete is scoped to one publication. */
export class CategoryQueries {
  constructor(private readonly db: Kysely<Database>) {}

  /** The publication's categories, by name, then id. */
  list(publicationId: number): Promise<CategoryRow[]> {
    return this.db.selectFrom('categories').selectAll().where('publication_id', '=', publicationId).orderBy('name').orderBy('id').execute();
  }

  find(publicationId: number, id: number): Promise<CategoryRow | undefined> {
    return this.db.selectFrom('categories').selectAll().where('id', '=', id).where('publication_id', '=', publicationId).executeTakeFirst();
  }

  /** Whether another category of the publication than `exceptId` has this name. */
  async nameTaken(publicationId: number, name: string, exceptId?: number): Promise<boolean> {
    const row = await this.db
      .selectFrom('categories')
      .select('id')
      .where('publication_id', '=', publicationId)
      .where('name', '=', name)
      .$if(exceptId !== undefined, (query) => query.where('id', '!=', exceptId!))
      .executeTakeFirst();
    return row !== undefined;
  }

  insert(publicationId: number, name: string, at: string): Promise<CategoryRow> {
    return this.db
      .insertInto('categories')
      .values({ publication_id: publicationId, name, created_at: at, updated_at: at })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async rename(id: number, name: string, at: string): Promise<void> {
    await this.db.updateTable('categories').set({ name, updated_at: at }).where('id', '=', id).execute();
  }

  /** Deletes the publication's category; false when it has none of this id. */
  async remove(publicationId: number, id: number): Promise<boolean> {
    const result = await this.db.deleteFrom('categories').where('id', '=', id).where('publication_id', '=', publicationId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
