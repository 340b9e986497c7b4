import type { Principal } from '../../accounts/service.js';
import type { Publication } from '../../db/types.js';
import { conflict, invalidField, notFound } from '../../errors.js';
import { APP_ID_PATTERN } from '../../http/schemas.js';
import { type AccessLevel, type Action, requireAction } from '../permissions.js';
import { nowIso, toPortalTimestamp } from '../../time.js';
import type { PublicationQueries, PublicationWithAccess } from './queries.js';

export interface PublicationAccess {
  publication: Publication;
  level: AccessLevel;
}

const APP_ID = new RegExp(APP_ID_PATTERN);

export class PublicationService {
  constructor(private readonly queries: PublicationQueries) {}

  async create(input: { accountId: number; appId: string; name?: string }): Promise<Publication> {
    if (!APP_ID.test(input.appId)) {
      throw invalidField('/app_id', 'must be 1 to 64 letters, digits, dots, dashes or underscores');
    }
    if (!(await this.queries.accountExists(input.accountId))) throw notFound(`Account ${input.accountId}`);
    if (await this.queries.appIdTaken(input.appId)) throw conflict(`The app id ${input.appId} is already taken`);
    const now = nowIso();
    return this.queries.insert({
      account_id: input.accountId,
      app_id: input.appId,
      name: input.name?.trim() || input.appId,
      created_at: now,
      updated_at: now,
    });
  }

  /** The publications a principal may see: an owner, all of the account's; a client, those it holds a role on. */
  async listVisible(principal: Principal): Promise<PublicationWithAccess[]> {
    if (principal.kind === 'owner') {
      const publications = await this.queries.listOwned(principal.accountId);
      return publications.map((publication) => ({ ...publication, access_level: 'owner' as const }));
    }
    return this.queries.listHeld(principal.userId, principal.accountId);
  }

  /**
   * The publication with this app id and the principal's access level on it, when it may take the action:
   * not_found when the principal cannot see the publication (whoever owns it), forbidden when it may only look.
   */
  async access(principal: Principal, appId: string, action: Action = 'read'): Promise<PublicationAccess> {
    // Read with the key when the request's URL names this publication: no query of its own.
    const named = principal.named?.appId === appId ? principal.named : undefined;
    if (principal.kind === 'owner') {
      const publication = named ? named.publication : await this.queries.findOwned(principal.accountId, appId);
      if (!publication) throw notFound(`Publication ${appId}`);
      requireAction('owner', action);
      return { publication, level: 'owner' };
    }
    const found = named
      ? named.publication && named.role && { ...named.publication, access_level: named.role }
      : await this.queries.findHeld(principal.userId, principal.accountId, appId);
    if (!found) throw notFound(`Publication ${appId}`);
    const { access_level: level, ...publication } = found;
    requireAction(level, action);
    return { publication, level };
  }

  /** The ids among `ids` that are categories (or issues) of the publication: references must stay inside it. */
  idsInPublication(publication: Publication, table: 'categories' | 'issues', ids: number[]): Promise<Set<number>> {
    return this.queries.idsInPublication(table, publication.id, ids);
  }
}

export function presentPublication(publication: PublicationWithAccess) {
  return {
    id: publication.id,
    app_id: publication.app_id,
    name: publication.name,
    access_level: publication.access_level,
    created_at: toPortalTimestamp(publication.created_at),
    updated_at: toPortalTimestamp(publication.updated_at),
  };
}
