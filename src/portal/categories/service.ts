import type { Principal } from '../../accounts/service.js';
import type { CategoryRow } from '../../db/types.js';
import { conflict, notFound } from '../../errors.js';
import { nowIso, toPortalTimestamp } from '../../time.js';
import type { PublicationService } from '../publications/service.js';
import type { CategoryQueries } from './queries.js';

export class CategoryService {
  constructor(
    private readonly queries: CategoryQueries,
    private readonly publications: PublicationService,
  ) {}

  async list(principal: Principal, appId: string): Promise<CategoryRow[]> {
    const { publication } = await this.publications.access(principal, appId);
    return this.queries.list(publication.id);
  }

  async get(principal: Principal, appId: string, id: number): Promise<CategoryRow> {
    const { publication } = await this.publications.access(principal, appId);
    return this.find(publication.id, id);
  }

  async create(principal: Principal, appId: string, input: { name: string }): Promise<CategoryRow> {
    const { publication } = await this.publications.access(principal, appId, 'manage_content');
    const name = input.name.trim();
    await this.ensureNameFree(publication.id, name);
    return this.queries.insert(publication.id, name, nowIso());
  }

  async update(principal: Principal, appId: string, id: number, input: { name?: string }): Promise<CategoryRow> {
    const { publication } = await this.publications.access(principal, appId, 'manage_content');
    await this.find(publication.id, id);
    if (input.name !== undefined) {
      const name = input.name.trim();
      await this.ensureNameFree(publication.id, name, id);
      await this.queries.rename(id, name, nowIso());
    }
    return this.find(publication.id, id);
  }

  /** Deleting a category takes it off its articles; the articles stay. */
  async remove(principal: Principal, appId: string, id: number): Promise<void> {
    const { publication } = await this.publications.access(principal, appId, 'manage_content');
    if (!(await this.queries.remove(publication.id, id))) throw notFound(`Category ${id}`);
  }

  private async find(publicationId: number, id: number): Promise<CategoryRow> {
    const row = await this.queries.find(publicationId, id);
    if (!row) throw notFound(`Category ${id}`);
    return row;
  }

  private async ensureNameFree(publicationId: number, name: string, exceptId?: number): Promise<void> {
    if (await this.queries.nameTaken(publicationId, name, exceptId)) throw conflict(`This publication already has a category named "${name}"`);
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
