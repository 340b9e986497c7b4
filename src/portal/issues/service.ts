import type { Principal } from '../../accounts/service.js';
import type { IssueRow } from '../../db/types.js';
import { notFound } from '../../errors.js';
import { dateField, nowIso, toPortalTimestamp } from '../../time.js';
import type { PublicationService } from '../publications/service.js';
import type { IssueQueries } from './queries.js';

export interface IssueInput {
  name?: string;
  date?: string | null;
}

/** Magazine issues of a publication; articles may belong to one. */
export class IssueService {
  constructor(
    private readonly queries: IssueQueries,
    private readonly publications: PublicationService,
  ) {}

  async list(principal: Principal, appId: string): Promise<IssueRow[]> {
    const { publication } = await this.publications.access(principal, appId);
    return this.queries.list(publication.id);
  }

  async get(principal: Principal, appId: string, id: number): Promise<IssueRow> {
    const { publication } = await this.publications.access(principal, appId);
    return this.find(publication.id, id);
  }

  async create(principal: Principal, appId: string, input: IssueInput & { name: string }): Promise<IssueRow> {
    const { publication } = await this.publications.access(principal, appId, 'manage_content');
    const now = nowIso();
    return this.queries.insert({
      publication_id: publication.id,
      name: input.name.trim(),
      date: dateField(input.date ?? null, '/date'),
      created_at: now,
      updated_at: now,
    });
  }

  async update(principal: Principal, appId: string, id: number, input: IssueInput): Promise<IssueRow> {
    const { publication } = await this.publications.access(principal, appId, 'manage_content');
    await this.find(publication.id, id);
    const changes: { name?: string; date?: string | null; updated_at: string } = { updated_at: nowIso() };
    if (input.name !== undefined) changes.name = input.name.trim();
    if (input.date !== undefined) changes.date = dateField(input.date, '/date');
    await this.queries.update(id, changes);
    return this.find(publication.id, id);
  }

  /** Deleting an issue leaves its articles in place, outside any issue. */
  async remove(principal: Principal, appId: string, id: number): Promise<void> {
    const { publication } = await this.publications.access(principal, appId, 'manage_content');
    if (!(await this.queries.remove(publication.id, id))) throw notFound(`Issue ${id}`);
  }

  private async find(publicationId: number, id: number): Promise<IssueRow> {
    const row = await this.queries.find(publicationId, id);
    if (!row) throw notFound(`Issue ${id}`);
    return row;
  }
}

export function presentIssue(row: IssueRow) {
  return {
    id: row.id,
    publication_id: row.publication_id,
    name: row.name,
    date: toPortalTimestamp(row.date),
    created_at: toPortalTimestamp(row.created_at),
    updated_at: toPortalTimestamp(row.updated_at),
  };
}
