import type { Kysely } from 'kysely';
import type { Principal } from '../../accounts/service.js';
import { preparedQuery } from '../../db/prepared.js';
import type { Database, Publication } from '../../db/types.js';
import { conflict, invalidField, notFound } from '../../errors.js';
import { nowIso, toPortalTimestamp } from '../../time.js';

export const APP_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';
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

  /** The publications a principal may see: an owner, all of the account's. */
  listVisible(principal: Principal): Promise<Publication[]> {
    return this.visibleTo(principal).orderBy('id').execute();
  }

  /** The publication with this app id if the principal may see it; not_found otherwise, whoever owns it. */
  async findVisible(principal: Principal, appId: string): Promise<Publication> {
    const [publication] =
      principal.kind === 'owner'
        ? await this.findOwned(principal.accountId, appId)
        : await this.visibleTo(principal).where('app_id', '=', appId).execute();
    if (!publication) throw notFound(`Publication ${appId}`);
    return publication;
  }

  private visibleTo(principal: Principal) {
    // Clients (sub-users) see the publications they hold a role on; roles arrive with the Clients API.
    const query = this.db.selectFrom('publications').selectAll().where('account_id', '=', principal.accountId);
    return principal.kind === 'owner' ? query : query.where('id', '=', -1);
  }
}

export function presentPublication(publication: Publication) {
  return {
    id: publication.id,
    app_id: publication.app_id,
    name: publication.name,
    created_at: toPortalTimestamp(publication.created_at),
    updated_at: toPortalTimestamp(publication.updated_at),
  };
}
