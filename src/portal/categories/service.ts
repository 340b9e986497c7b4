import type { Kysely } from 'kysely';
import type { Principal } from '../../accounts/service.js';
import type { CategoryRow, Database } from '../../db/types.js';
import { conflict, notFound } from '../../errors.js';
import { nowIso, toPortalTimestamp } from '../../time.js';
import type { PublicationService } from '../publications/service.js';

export class CategoryService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly publications: PublicationService,
  ) {}

  async list(principal: Principal, appId: string): Promise<CategoryRow[]> {
    const { publication } = await this.publications.access(principal, appId);
    return this.db.selectFrom('categories').selectAll().where('publication_id', '=', publication.id).orderBy('name').orderBy('id').execute();
  }

  async get(principal: Principal, appId: string, id: number): Promise<CategoryRow> {
    const { publication } = await this.publications.access(principal, appId);
    return this.find(publication.id, id);
  }

  async create(principal: Principal, appId: string, input: { name: string }): Promise<CategoryRow> {
    const { publication } = await this.publications.access(principal, appId, 'manage_content');
    const name = input.name.trim();
    await this.ensureNameFree(publication.id, name);
    const now = nowIso();
    return this.db
      .insertInto('categories')
      .values({ publication_id: publication.id, name, created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async update(principal: Principal, appId: string, id: number, input: { name?: string }): Promise<CategoryRow> {
    const { publication } = await this.publications.access(principal, appId, 'manage_content');
    await this.find(publication.id, id);
    if (input.name !== undefined) {
      const name = input.name.trim();
      await this.ensureNameFree(publication.id, name, id);
      await this.db.updateTable('categories').set({ name, updated_at: nowIso() }).where('id', '=', id).execute();
    }
    return this.find(publication.id, id);
  }

  /** Deleting a category takes it off its articles; the articles stay. */
  async remove(principal: Principal, appId: string, id: number): Promise<void> {
    const { publication } = await this.publications.access(principal, appId, 'manage_content');
    const result = await this.db.deleteFrom('categories').where('id', '=', id).where('publication_id', '=', publication.id).executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) throw notFound(`Category ${id}`);
  }

  private async find(publicationId: number, id: number): Promise<CategoryRow> {
    const row = await this.db.selectFrom('categories').selectAll().where('id', '=', id).where('publication_id', '=', publicationId).executeTakeFirst();
    if (!row) throw notFound(`Category ${id}`);
    return row;
  }

  private async ensureNameFree(publicationId: number, name: string, exceptId?: number): Promise<void> {
    let query = this.db.selectFrom('categories').select('id').where('publication_id', '=', publicationId).where('name', '=', name);
    if (exceptId !== undefined) query = query.where('id', '!=', exceptId);
    if (await query.executeTakeFirst()) throw conflict(`This publication already has a category named "${name}"`);
  }
}

export function presentCategory(row: CategoryRow) {
  return {
    id: row.id,
    publication_id: row.publication_id,
    name: row.name,
    created_at: toPortalTimestamp(row.created_at),
    updated_at: toPortalTimestamp(row.updated_at),
  };
}
