import type { Kysely } from 'kysely';
import type { Principal } from '../../accounts/service.js';
import { preparedQuery } from '../../db/prepared.js';
import type { Database, Publication } from '../../db/types.js';
import { conflict, invalidField, notFound } from '../../errors.js';
import { APP_ID_PATTERN } from '../../http/schemas.js';
import { type AccessLevel, type Action, requireAction } from '../permissions.js';
import { nowIso, toPortalTimestamp } from '../../time.js';

export interface PublicationAccess {
  publication: Publication;
  level: AccessLevel;
}

const APP_ID = new RegExp(APP_ID_PATTERN);

export class PublicationService {
  /** The lookup behind every portal request, prepared once. */
  private readonly findOwned;

  constructor(private readonly db: Kysely<Database>) {
    this.findOwned = preparedQuery(db, 2, (accountId: number, appId: string) =>
      db.selectFrom('publications').selectAll().where('account_id', '=', accountId).where('app_id', '=', appId),
    );
  }

  async create(input: { accountId: number; appId: string; name?: string }): Promise<Publication> {
    if (!APP_ID.test(input.appId)) {
      throw invalidField('/app_id', 'must be 1 to 64 letters, digits, dots, dashes or underscores');
    }
    const account = await this.db.selectFrom('accounts').select('id').where('id', '=', input.accountId).executeTakeFirst();
    if (!account) throw notFound(`Account ${input.accountId}`);
    const taken = await this.db.selectFrom('publications').select('id').where('app_id', '=', input.appId).executeTakeFirst();
    if (taken) throw conflict(`The app id ${input.appId} is already taken`);
    const now = nowIso();
    return this.db
      .insertInto('publications')
      .values({ account_id: input.accountId, app_id: input.appId, name: input.name?.trim() || input.appId, created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** The publications a principal may see: an owner, all of the account's; a client, those it holds a role on. */
  async listVisible(principal: Principal): Promise<(Publication & { access_level: AccessLevel })[]> {
    if (principal.kind === 'owner') {
      const publications = await this.db.selectFrom('publications').selectAll().where('account_id', '=', principal.accountId).orderBy('id').execute();
      return publications.map((publication) => ({ ...publication, access_level: 'owner' as const }));
    }
    return this.clientPublications(principal).orderBy('publications.id').execute();
  }

  /**
   * The publication with this app id and the principal's access level on it, when it may take the action:
   * not_found when the principal cannot see the publication (whoever owns it), forbidden when it may only look.
   */
  async access(principal: Principal, appId: string, action: Action = 'read'): Promise<PublicationAccess> {
    const found =
      principal.kind === 'owner'
        ? (await this.findOwned(principal.accountId, appId)).map((publication) => ({ ...publication, access_level: 'owner' as const }))[0]
        : await this.clientPublications(principal).where('publications.app_id', '=', appId).executeTakeFirst();
    if (!found) throw notFound(`Publication ${appId}`);
    const { access_level: level, ...publication } = found;
    requireAction(level, action);
    return { publication, level };
  }

  private clientPublications(principal: Principal) {
    return this.db
      .selectFrom('publications')
      .innerJoin('roles', 'roles.publication_id', 'publications.id')
      .selectAll('publications')
      .select('roles.access_level')
      .where('roles.user_id', '=', principal.userId)
      .where('publications.account_id', '=', principal.accountId);
  }
}

export function presentPublication(publication: Publication & { access_level: AccessLevel }) {
  return {
    id: publication.id,
    app_id: publication.app_id,
    name: publication.name,
    access_level: publication.access_level,
    created_at: toPortalTimestamp(publication.created_at),
    updated_at: toPortalTimestamp(publication.updated_at),
  };
}
